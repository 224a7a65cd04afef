//! The digit form of a layout (the CuTe view): the linear index is a sum of
//! `digit × stride`, each digit `(source / div) mod modulus` of one source value.
//!
//! A *source* is a logical index, or a linear combination of logical indices that a
//! `*` tile entry made (`e_major · size_minor + e_minor`). Invariants, checked by the
//! exhaustive tests and relied on below:
//!
//! 1. The digits of one source partition it: sorted by `div`, the first has `div` 1,
//!    each next `div` is the previous `div × modulus`, and only the last has no
//!    modulus. So `source = Σ digit × div`.
//! 2. The axes, most major first, are a mixed radix of the grid: the last stride is 1
//!    and each stride is the next stride × the next radix. A digit's value is below
//!    its axis' radix for every element.
//! 3. A `Const` axis holds 0 for every element; any other value there is padding.

use smallvec::{smallvec, SmallVec};

use super::compile::Staged;
use super::spec::TileEntry;

/// One part of a source, most major first: a logical dimension (or a constant 0 from a
/// merged dimension that only ever held 0) and its radix (`None` for the top part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    pub dim: Option<usize>,
    pub radix: Option<u64>,
}

/// The parts of a source. Most sources are one logical dimension: one part, held
/// inline (a layout of the largest rank has hundreds of thousands of sources).
pub(crate) type Parts = SmallVec<[Part; 1]>;

/// A source value: `Σ part × weight`, weights being products of the radices below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    pub parts: Parts,
}

impl Source {
    /// Writes the logical indices that make up `value` into `out`; `false` when the
    /// value is no element's (a part at or beyond its dimension's size, or a constant
    /// part that is not 0).
    pub fn decompose(&self, value: u64, dims: &[u64], out: &mut [u64]) -> bool {
        let mut v = value;
        for part in self.parts.iter().rev() {
            let e = match part.radix {
                Some(r) => {
                    let e = v % r;
                    v /= r;
                    e
                }
                None => std::mem::take(&mut v),
            };
            match part.dim {
                Some(k) => match (dims.get(k), out.get_mut(k)) {
                    (Some(&size), Some(o)) if e < size => *o = e,
                    _ => return false,
                },
                None => {
                    if e != 0 {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The largest value of an element, plus one (0 when there are no elements).
    pub fn range(&self, dims: &[u64]) -> u64 {
        let mut range: u64 = 1;
        let mut weight: u64 = 1;
        for part in self.parts.iter().rev() {
            if let Some(k) = part.dim {
                let d = dims.get(k).copied().unwrap_or(0);
                if d == 0 {
                    return 0;
                }
                range = range.saturating_add((d - 1).saturating_mul(weight));
            }
            weight = weight.saturating_mul(part.radix.unwrap_or(1));
        }
        range
    }
}

/// What one axis of the grid holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AxisKind {
    /// Always 0 for an element.
    Const,
    /// `(source / div) mod modulus` (no modulus: `source / div`).
    Digit {
        source: usize,
        div: u64,
        modulus: Option<u64>,
    },
}

/// One axis of the grid (a run of final dimensions), most major first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis {
    pub stride: u64,
    pub radix: u64,
    pub kind: AxisKind,
}

/// The sources of a digit form.
#[derive(Clone, Debug)]
pub(crate) enum Sources {
    /// Source `k` is logical dimension `k`, for each `k` below the count. Nothing is
    /// listed: a layout of the largest rank has hundreds of thousands of sources, and
    /// a list of them took 40 bytes each.
    Plain(usize),
    /// Each source's parts.
    Listed(Vec<Source>),
}

impl Sources {
    /// The number of sources.
    pub fn len(&self) -> usize {
        match self {
            Sources::Plain(n) => *n,
            Sources::Listed(list) => list.len(),
        }
    }

    /// The logical dimension that source `s` is, when it is one whole dimension.
    pub fn plain_dim(&self, s: usize) -> Option<usize> {
        match self {
            Sources::Plain(n) => (s < *n).then_some(s),
            Sources::Listed(list) => match list.get(s)?.parts.as_slice() {
                [Part {
                    dim: Some(k),
                    radix: None,
                }] => Some(*k),
                _ => None,
            },
        }
    }

    /// [`Source::decompose`] of source `s` (`false` for a source there is not).
    pub fn decompose(&self, s: usize, value: u64, dims: &[u64], out: &mut [u64]) -> bool {
        match self {
            Sources::Plain(n) if s < *n => match (dims.get(s), out.get_mut(s)) {
                (Some(&size), Some(o)) if value < size => {
                    *o = value;
                    true
                }
                _ => false,
            },
            Sources::Plain(_) => false,
            Sources::Listed(list) => list
                .get(s)
                .is_some_and(|source| source.decompose(value, dims, out)),
        }
    }

    /// [`Source::range`] of source `s` (0 for a source there is not).
    pub fn range(&self, s: usize, dims: &[u64]) -> u64 {
        match self {
            Sources::Plain(n) if s < *n => dims.get(s).copied().unwrap_or(0),
            Sources::Plain(_) => 0,
            Sources::Listed(list) => list.get(s).map_or(0, |source| source.range(dims)),
        }
    }

    /// The value of source `s` at the logical index `index` (a missing index entry
    /// counts as 0).
    pub fn value(&self, s: usize, index: &[u64]) -> u64 {
        match self {
            Sources::Plain(_) => index.get(s).copied().unwrap_or(0),
            Sources::Listed(list) => list.get(s).map_or(0, |source| {
                let mut v: u64 = 0;
                for part in &source.parts {
                    let e = part.dim.and_then(|k| index.get(k).copied()).unwrap_or(0);
                    v = v.wrapping_mul(part.radix.unwrap_or(1)).wrapping_add(e);
                }
                v
            }),
        }
    }
}

/// A layout in digit form.
#[derive(Clone, Debug)]
pub(crate) struct Digits {
    /// The sources; when `trivial`, source `k` is logical dimension `k`
    /// ([`Sources::Plain`]).
    pub sources: Sources,
    /// The grid axes, most major first.
    pub axes: Vec<Axis>,
    /// Every source is one logical dimension.
    pub trivial: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Term {
    Const,
    Digit {
        source: usize,
        div: u64,
        modulus: Option<u64>,
    },
}

impl Term {
    fn whole(source: usize) -> Self {
        Term::Digit {
            source,
            div: 1,
            modulus: None,
        }
    }
}

/// Compiles the digit form, or `None` where the layout is not a sum of digits.
pub(crate) fn compile_digits(staged: &Staged) -> Option<Digits> {
    let mut sources = Building {
        rank: staged.dims.len(),
        merged: Vec::new(),
        live: vec![true; staged.dims.len()],
    };
    let mut current: Vec<(u64, Term)> = staged
        .major_to_minor
        .iter()
        .zip(&staged.physical)
        .map(|(&k, &size)| (size, Term::whole(k)))
        .collect();

    for stage in &staged.stages {
        let mut before = vec![(1, Term::Const); stage.prepend];
        before.append(&mut current);
        let suffix = before.split_off(stage.start);
        let mut merged = Vec::with_capacity(suffix.len());
        let mut carry: Option<(u64, Term)> = None;
        let last = stage.entries.len() - 1;
        for (i, (&(size, term), entry)) in suffix.iter().zip(&stage.entries).enumerate() {
            let here = match carry.take() {
                Some(major) => combine(&mut sources, major, (size, term))?,
                None => (size, term),
            };
            match entry {
                TileEntry::Combine if i == last => merged.push((here, None)),
                TileEntry::Combine => carry = Some(here),
                TileEntry::Size(t) => merged.push((here, Some(*t))),
            }
        }
        let mut inner = Vec::with_capacity(merged.len());
        for ((size, term), t) in merged {
            match t {
                Some(t) => {
                    let (q, r) = split(term, t)?;
                    before.push((size.div_ceil(t), q));
                    inner.push((t, r));
                }
                None => before.push((size, term)),
            }
        }
        before.append(&mut inner);
        current = before;
    }
    finish(staged, sources, &current)
}

/// The sources while a layout compiles: `0..rank` are the logical dimensions, not
/// listed (a layout of the largest rank has hundreds of thousands); those a `*` makes
/// are listed in `merged`, numbered from `rank` on.
struct Building {
    rank: usize,
    merged: Vec<Source>,
    /// Per source, whether no merge has taken it in yet.
    live: Vec<bool>,
}

impl Building {
    /// Takes the parts of source `s` (none when it was taken already).
    fn take(&mut self, s: usize) -> Option<Parts> {
        if s < self.rank {
            let live = self.live.get(s)?;
            Some(if *live {
                smallvec![Part {
                    dim: Some(s),
                    radix: None,
                }]
            } else {
                Parts::new()
            })
        } else {
            Some(std::mem::take(
                &mut self.merged.get_mut(s - self.rank)?.parts,
            ))
        }
    }

    /// Lists a new source of `parts`, made of the sources `consumed`.
    fn push(&mut self, consumed: &[usize], parts: Parts) -> Term {
        for &c in consumed {
            if let Some(l) = self.live.get_mut(c) {
                *l = false;
            }
        }
        self.merged.push(Source { parts });
        self.live.push(true);
        Term::whole(self.rank + self.merged.len() - 1)
    }
}

/// Merges a major dimension into the next more minor one, if both still hold whole
/// sources (or a constant). The merged sources' parts move to the new source, which
/// replaces them: copying them kept every partial merge of a long `*` run, a number of
/// parts that grows with the square of the run.
fn combine(
    sources: &mut Building,
    (major_size, major): (u64, Term),
    (minor_size, minor): (u64, Term),
) -> Option<(u64, Term)> {
    let size = major_size.checked_mul(minor_size)?;
    let whole = |t: Term| match t {
        Term::Digit {
            source,
            div: 1,
            modulus: None,
        } => Some(source),
        _ => None,
    };
    let term = match (major, minor) {
        (Term::Const, minor) => minor,
        (major, Term::Const) => {
            let a = whole(major)?;
            let mut parts = sources.take(a)?;
            parts.push(Part {
                dim: None,
                radix: Some(minor_size),
            });
            sources.push(&[a], parts)
        }
        (major, minor) => {
            let (a, b) = (whole(major)?, whole(minor)?);
            let mut parts = sources.take(a)?;
            let mut lower = sources.take(b)?;
            let below_top: u64 = lower.iter().skip(1).filter_map(|p| p.radix).product();
            if below_top == 0 || minor_size % below_top != 0 {
                return None;
            }
            lower.first_mut()?.radix = Some(minor_size / below_top);
            parts.append(&mut lower);
            sources.push(&[a, b], parts)
        }
    };
    Some((size, term))
}

/// Splits a dimension's term by a tile entry into (outer, inner).
fn split(term: Term, t: u64) -> Option<(Term, Term)> {
    match term {
        Term::Const => Some((Term::Const, Term::Const)),
        _ if t == 1 => Some((term, Term::Const)),
        Term::Digit {
            source,
            div,
            modulus,
        } => {
            let inner = Term::Digit {
                source,
                div,
                modulus: Some(t),
            };
            match modulus {
                None => Some((
                    Term::Digit {
                        source,
                        div: div.checked_mul(t)?,
                        modulus: None,
                    },
                    inner,
                )),
                Some(m) if m % t == 0 => Some((
                    Term::Digit {
                        source,
                        div: div.checked_mul(t)?,
                        modulus: Some(m / t),
                    },
                    inner,
                )),
                // The tile covers the whole digit: the outer part is always 0.
                Some(m) if m <= t => Some((Term::Const, term)),
                Some(_) => None,
            }
        }
    }
}

fn finish(staged: &Staged, mut sources: Building, current: &[(u64, Term)]) -> Option<Digits> {
    // A plan of plain logical dimensions keeps k ↦ k: no merge is left (a merged
    // source is live until a later merge takes it in, which is then live).
    let trivial = !sources.live.get(sources.rank..)?.contains(&true);
    let (new_sources, renumber) = if trivial {
        (Sources::Plain(sources.rank), None)
    } else {
        // Renumber the live sources.
        let mut renumber = vec![usize::MAX; sources.live.len()];
        let mut listed = Vec::new();
        for (s, new) in renumber.iter_mut().enumerate() {
            if sources.live.get(s) == Some(&true) {
                *new = listed.len();
                listed.push(Source {
                    parts: sources.take(s)?,
                });
            }
        }
        (Sources::Listed(listed), Some(renumber))
    };

    // Only dimensions of more than one element make axes: reserving one for each
    // entry took 48 bytes a dimension of a layout of the largest rank, whose
    // dimensions are mostly 1.
    let mut axes: Vec<Axis> =
        Vec::with_capacity(current.iter().filter(|&&(size, _)| size != 1).count());
    for (&(size, term), &stride) in current.iter().zip(&staged.final_strides) {
        if size == 1 {
            continue;
        }
        let kind = match term {
            Term::Const => AxisKind::Const,
            Term::Digit {
                source,
                div,
                modulus,
            } => {
                let source = match &renumber {
                    Some(renumber) => *renumber.get(source)?,
                    None => source,
                };
                if source >= new_sources.len() {
                    return None;
                }
                // Largest value + 1 of the source over the elements (0 when none).
                let range = new_sources.range(source, &staged.dims);
                let always_zero = modulus == Some(1) || range <= div;
                if always_zero {
                    AxisKind::Const
                } else {
                    AxisKind::Digit {
                        source,
                        div,
                        modulus,
                    }
                }
            }
        };
        axes.push(Axis {
            stride,
            radix: size,
            kind,
        });
    }
    // The most significant remaining digit of a source needs no modulus: every digit
    // above it holds 0 for every element (invariant 1 keeps holding).
    // One pass over the axes: a layout of the largest rank has hundreds of thousands
    // of sources and axes (each source looking through every axis took minutes).
    // Each source's top digit so far, by its axis (`usize::MAX`: none yet); the
    // largest `div` is the top, the later axis on a tie.
    let div_of = |axes: &[Axis], i: usize| match axes.get(i).map(|a| a.kind) {
        Some(AxisKind::Digit { div, .. }) => Some(div),
        _ => None,
    };
    let mut top = vec![
        usize::MAX;
        if axes.is_empty() {
            0
        } else {
            new_sources.len()
        }
    ];
    for (i, axis) in axes.iter().enumerate() {
        if let AxisKind::Digit { source, div, .. } = axis.kind {
            if let Some(t) = top.get_mut(source) {
                if div_of(&axes, *t).is_none_or(|d| div >= d) {
                    *t = i;
                }
            }
        }
    }
    for i in top {
        if let Some(AxisKind::Digit { modulus, .. }) = axes.get_mut(i).map(|a| &mut a.kind) {
            *modulus = None;
        }
    }
    // Coalesce neighbouring axes that continue one another, in place: the first
    // `merged` axes are done (a second list of axes was the peak of a plan's memory at
    // the largest rank).
    let mut merged = 0;
    for i in 0..axes.len() {
        axes[merged] = axes[i];
        merged += 1;
        while merged >= 2 {
            let minor = axes[merged - 1];
            let major = axes[merged - 2];
            let kind = match (major.kind, minor.kind) {
                (AxisKind::Const, AxisKind::Const) => AxisKind::Const,
                (
                    AxisKind::Digit {
                        source: a,
                        div: div_a,
                        modulus: mod_a,
                    },
                    AxisKind::Digit {
                        source: b,
                        div: div_b,
                        modulus: Some(mod_b),
                    },
                ) if a == b && mod_b == minor.radix && div_b.checked_mul(mod_b) == Some(div_a) => {
                    AxisKind::Digit {
                        source: a,
                        div: div_b,
                        modulus: match mod_a {
                            Some(m) => Some(m.checked_mul(mod_b)?),
                            None => None,
                        },
                    }
                }
                _ => break,
            };
            merged -= 1;
            axes[merged - 1] = Axis {
                stride: minor.stride,
                radix: major.radix.checked_mul(minor.radix)?,
                kind,
            };
        }
    }
    axes.truncate(merged);
    Some(Digits {
        sources: new_sources,
        axes,
        trivial,
    })
}
