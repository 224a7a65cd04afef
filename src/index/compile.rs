//! Compiling a [`Spec`] into a plan: the staged description of the tiling (shapes
//! only), and from it, when possible, the flat digit form.
//!
//! # The staged description
//!
//! Start from the physical shape, most major dimension first (the reverse of
//! `minor_to_major`), each dimension at its legacy padded size if there is one. Each
//! tile then rewrites a suffix of the current shape:
//!
//! 1. If the tile has more entries than the current shape has dimensions, leading
//!    dimensions of size 1 are added first (as `ShapeUtil::ArraySize` does).
//! 2. Each `*` entry merges its dimension into the next more minor one: sizes multiply
//!    and the index becomes `major · size_minor + minor`. A `*` as the most minor entry
//!    has nothing to merge into and leaves its dimension untiled: it stays one outer
//!    dimension, with no inner part (as the validation's size guarantee counts it).
//! 3. Each remaining dimension of size `d` with tile entry `t` becomes an outer
//!    dimension `⌈d/t⌉` (index `e / t`) and an inner dimension `t` (index `e mod t`);
//!    all outer dimensions come first, then all inner ones, each group in order.
//!
//! The final shape is laid out without tiling, most major first; its element count,
//! rounded up to `tail_padding_alignment_in_elements` when the layout has tiles, is the
//! allocated size.
//!
//! # The digit form
//!
//! Most layouts are a sum of independent digits: every final dimension reads one digit
//! `(value / div) mod modulus` of one "source" (a logical index, or a linear
//! combination of logical indices made by `*`), and the linear index is the sum of
//! digit × stride. [`compile_digits`] tracks that form through the stages and gives up
//! (returning `None`) where it stops holding: a tile that neither divides nor covers
//! the digit it cuts (e.g. `T(4)(3)`), or a `*` over a dimension that was already cut.
//! Those layouts run on the staged description instead.

use smallvec::SmallVec;

use super::spec::{Spec, TileEntry};
use super::PlanError;

/// One tile applied to the current (already expanded) shape.
#[derive(Clone, Debug)]
pub(crate) struct Stage {
    /// Leading size-1 dimensions added before the tile (tile longer than the shape).
    pub prepend: usize,
    /// Index of the first dimension the tile covers, after prepending.
    pub start: usize,
    /// The tile, most major entry first.
    pub entries: Vec<TileEntry>,
    /// The shape before the tile, after prepending.
    pub before: Vec<u64>,
    /// Sizes of the merged dimensions (after `*`), with their tile entry; `None` for
    /// a most minor `*`, whose dimension stays untiled (outer only, no inner part).
    pub merged: Vec<(u64, Option<u64>)>,
}

/// The staged description of a layout: physical shape, stages, final shape.
#[derive(Clone, Debug)]
pub(crate) struct Staged {
    /// Logical dimension sizes.
    pub dims: Vec<u64>,
    /// Logical dimension of each physical position, most major first.
    pub major_to_minor: Vec<usize>,
    /// Physical sizes (legacy padding applied), most major first.
    pub physical: Vec<u64>,
    /// The tiles, in application order.
    pub stages: Vec<Stage>,
    /// The final shape, most major first.
    pub final_shape: Vec<u64>,
    /// Row-major strides of the final shape.
    pub final_strides: Vec<u64>,
    /// Element count of the final shape (before tail padding).
    pub grid: u64,
    /// What one step of a search ([`Staged::next_element_within`]) takes from its
    /// budget: 1 for every [`STEP_SIZES`] sizes the stages and the final shape hold
    /// (at least 1), since a step runs through them all.
    pub step_cost: u64,
}

/// Sizes one step of a search runs through for each unit of its budget (see
/// [`Staged::step_cost`]): every shape XLA writes holds fewer, so its steps cost 1 as
/// they always did; a plan of 294 tiles over 65 dimensions held 4,262 (so a step of it
/// costs 16), and its search spent 160 ms (10 µs a step) before it gave way to sorted
/// windows.
const STEP_SIZES: usize = 256;

/// How many sizes a plan's stages may hold in all (the shapes before each tile): a
/// shape of the largest rank its lists allow, under several tiles, and any layout XLA
/// writes, fit well within it.
pub(crate) const PLAN_ENTRIES: usize = 1 << 21;

/// Checks a `Spec`'s invariants and builds its staged description.
pub(crate) fn compile_staged(spec: &Spec) -> Result<Staged, PlanError> {
    let rank = spec.dims.len();
    let mut dims = Vec::with_capacity(rank);
    for (dim, size) in spec.dims.iter().enumerate() {
        match size {
            Some(size) => dims.push(*size),
            None => return Err(PlanError::Unbounded { dim }),
        }
    }
    // The validated shape guarantees a permutation; re-check rather than index blindly.
    let mut seen = vec![false; rank];
    if spec.minor_to_major.len() != rank {
        return Err(PlanError::Malformed("minor_to_major is not a permutation"));
    }
    for &d in &spec.minor_to_major {
        match seen.get_mut(d) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err(PlanError::Malformed("minor_to_major is not a permutation")),
        }
    }
    if let Some(padded) = &spec.padded {
        if padded.len() != rank || padded.iter().zip(&dims).any(|(p, d)| p < d) {
            return Err(PlanError::Malformed(
                "padded_dimensions smaller than the shape",
            ));
        }
    }
    if spec.tail_padding == 0 {
        return Err(PlanError::Malformed("tail padding alignment of 0"));
    }
    let major_to_minor: Vec<usize> = spec.minor_to_major.iter().rev().copied().collect();
    let physical: Vec<u64> = major_to_minor
        .iter()
        .map(|&k| match &spec.padded {
            Some(p) => p.get(k).copied().unwrap_or(0),
            None => dims.get(k).copied().unwrap_or(0),
        })
        .collect();

    let mut current = physical.clone();
    let mut stages = Vec::with_capacity(spec.tiles.len());
    // Each stage keeps the shape before its tile, which grows with every tile: the
    // stages of many tiles over a shape they cut further each time hold a number of
    // sizes that grows with the square of the tiles.
    let mut held = 0usize;
    for tile in &spec.tiles {
        if tile.is_empty() {
            return Err(PlanError::Malformed("empty tile"));
        }
        held = held.saturating_add(current.len().max(tile.len()));
        if held > PLAN_ENTRIES {
            return Err(PlanError::TooLarge {
                tiles: spec.tiles.len(),
            });
        }
        let tile = tile.clone();
        if tile.contains(&TileEntry::Size(0)) {
            return Err(PlanError::Malformed("tile entry of 0"));
        }
        let prepend = tile.len().saturating_sub(current.len());
        let mut before = vec![1; prepend];
        before.extend_from_slice(&current);
        let start = before.len() - tile.len();
        let mut merged = Vec::new();
        let mut carry: Option<u64> = None;
        let last = tile.len() - 1;
        for (i, (entry, &size)) in tile.iter().zip(&before[start..]).enumerate() {
            let size = match carry.take() {
                Some(major) => major.checked_mul(size).ok_or(PlanError::Overflow)?,
                None => size,
            };
            match entry {
                // A most minor `*` has nothing to merge into: the dimension stays
                // untiled, as one outer dimension.
                TileEntry::Combine if i == last => merged.push((size, None)),
                TileEntry::Combine => carry = Some(size),
                TileEntry::Size(t) => merged.push((size, Some(*t))),
            }
        }
        let mut next = before[..start].to_vec();
        next.extend(merged.iter().map(|&(d, t)| t.map_or(d, |t| d.div_ceil(t))));
        next.extend(merged.iter().filter_map(|&(_, t)| t));
        stages.push(Stage {
            prepend,
            start,
            entries: tile,
            before,
            merged,
        });
        current = next;
    }
    let mut final_strides = vec![0; current.len()];
    let mut grid: u64 = 1;
    for (stride, &size) in final_strides.iter_mut().zip(&current).rev() {
        *stride = grid;
        grid = grid.checked_mul(size).ok_or(PlanError::Overflow)?;
    }
    let step_cost = (held.saturating_add(current.len()) / STEP_SIZES).max(1) as u64;
    Ok(Staged {
        dims,
        major_to_minor,
        physical,
        stages,
        final_shape: current,
        final_strides,
        grid,
        step_cost,
    })
}

/// Coordinates of one stage's shape, inline for the usual depths (a stage adds at most
/// its tile's length; deeper plans spill to the heap).
type Coords = SmallVec<[u64; 24]>;

impl Staged {
    /// The position of an in-bounds logical index in the final shape's row-major
    /// order.
    pub fn linear(&self, index: &[u64]) -> u64 {
        let mut current: Coords = self
            .major_to_minor
            .iter()
            .map(|&k| index.get(k).copied().unwrap_or(0))
            .collect();
        let mut next = Coords::new();
        for stage in &self.stages {
            restage(stage, &current, &mut next, &Exact);
            std::mem::swap(&mut current, &mut next);
        }
        current
            .iter()
            .zip(&self.final_strides)
            .map(|(e, s)| e * s)
            .sum()
    }

    /// Bounds on the slots of the logical indices in the box `lo[k] ..= hi[k]`:
    /// [`Staged::linear`] run on ranges. Exact for a single index (`lo == hi`).
    pub fn slot_bounds(&self, lo: &[u64], hi: &[u64]) -> (u64, u64) {
        let mut current: SmallVec<[Span; 24]> = self
            .major_to_minor
            .iter()
            .map(|&k| {
                (
                    lo.get(k).copied().unwrap_or(0),
                    hi.get(k).copied().unwrap_or(0),
                )
            })
            .collect();
        let mut next = SmallVec::new();
        for stage in &self.stages {
            restage(stage, &current, &mut next, &Ranges);
            std::mem::swap(&mut current, &mut next);
        }
        current
            .iter()
            .zip(&self.final_strides)
            .fold((0, 0), |(a, b), (e, s)| {
                (
                    a.saturating_add(e.0.saturating_mul(*s)),
                    b.saturating_add(e.1.saturating_mul(*s)),
                )
            })
    }

    /// The box `lo ..= hi` halved along its most major physical dimension that is not
    /// yet a single index: that dimension, and each half's range in it with the half's
    /// [`slot_bounds`](Self::slot_bounds); `None` for a single index. `lo` and `hi` are
    /// as they were on return.
    ///
    /// Halving the most major dimension first keeps every box a run of consecutive
    /// physical positions (its more minor dimensions whole), which is what a `*`
    /// merge or a tile reads: through deep plans of `*` and tiles that do not nest, the
    /// bounds of such boxes stay tight where those of boxes cut along their widest
    /// dimension (strided sets of positions) are loose (the box search of a window
    /// expanded 90,000 to 430,000 boxes there, and now a few thousand).
    ///
    /// The cut is the middle, or a tile boundary near it when that gives tighter
    /// bounds: the bounds of a box that straddles a tile boundary are loose (its slots
    /// are those of several tiles, and padding between them counts as possible slots),
    /// so that `f16[44432,44445]{1,0:T(34432,4)(920,2)}`, cut only in the middle, never
    /// narrowed its largest slot down (minutes); cut at 34,432 and at multiples of 920
    /// from there, it does at once. The candidates are the multiples of each tile size
    /// nearest the middle, counted from 0 and from the box's start, and the middle of
    /// every other dimension (a `*` can make a more minor dimension the major part of
    /// a merged value); the one whose halves' bounds are narrowest in sum wins, the
    /// first on a tie.
    pub fn halve(&self, lo: &mut [u64], hi: &mut [u64]) -> Option<(usize, [Half; 2])> {
        let k = self
            .major_to_minor
            .iter()
            .copied()
            .find(|&k| hi[k] > lo[k])?;
        // (dimension, cut): a cut is the first index of the second half, lo < cut <= hi.
        let mut cuts: SmallVec<[(usize, u64); 16]> = SmallVec::new();
        let middle = |k: usize| lo[k] + (hi[k] - lo[k]) / 2 + 1;
        cuts.push((k, middle(k)));
        let (low, high, mid) = (lo[k], hi[k], middle(k));
        for t in self.tile_sizes() {
            let nearest = |base: u64| {
                let steps = (mid - base + t / 2) / t;
                base.checked_add(steps.checked_mul(t)?)
            };
            for cut in [nearest(0), nearest(low)].into_iter().flatten() {
                if cut > low && cut <= high && !cuts.contains(&(k, cut)) {
                    cuts.push((k, cut));
                }
            }
        }
        // The middle of every other dimension too: a merge can read a more minor
        // dimension as the major part of its value, and a tile can make a minor
        // dimension's quotient weigh more than a major one.
        for j in (0..lo.len()).filter(|&j| j != k && hi[j] > lo[j]) {
            cuts.push((j, middle(j)));
        }
        let mut best: Option<(u64, usize, [Half; 2])> = None;
        for (k, cut) in cuts {
            let (low, high) = (lo[k], hi[k]);
            hi[k] = cut - 1;
            let first = self.slot_bounds(lo, hi);
            hi[k] = high;
            lo[k] = cut;
            let second = self.slot_bounds(lo, hi);
            lo[k] = low;
            let width = (first.1 - first.0).saturating_add(second.1 - second.0);
            if best.as_ref().is_none_or(|(w, _, _)| width < *w) {
                best = Some((width, k, [((low, cut - 1), first), ((cut, high), second)]));
            }
        }
        best.map(|(_, k, halves)| (k, halves))
    }

    /// The distinct sizes above 1 of the tiles' entries, the first four found (each
    /// adds two cuts to bound).
    fn tile_sizes(&self) -> SmallVec<[u64; 4]> {
        let mut sizes = SmallVec::new();
        let entries = self.stages.iter().flat_map(|stage| &stage.entries);
        for entry in entries {
            if let TileEntry::Size(t) = *entry {
                if t > 1 && !sizes.contains(&t) && sizes.len() < 4 {
                    sizes.push(t);
                }
            }
        }
        sizes
    }

    /// The logical index stored at `slot < grid`, or `None` for padding.
    pub fn delinear(&self, slot: u64, out: &mut [u64]) -> Option<()> {
        let mut current: Coords = self
            .final_shape
            .iter()
            .zip(&self.final_strides)
            .map(|(&size, &stride)| (slot / stride) % size.max(1))
            .collect();
        let mut next = Coords::new();
        for stage in self.stages.iter().rev() {
            unstage(stage, &current, &mut next, &Exact)?;
            std::mem::swap(&mut current, &mut next);
        }
        for (&k, &e) in self.major_to_minor.iter().zip(&current) {
            if e >= self.dims[k] {
                return None;
            }
            out[k] = e;
        }
        Some(())
    }
}

/// The arithmetic [`restage`] and [`unstage`] run on: exact values ([`Staged::linear`],
/// [`Staged::delinear`]) or ranges of them ([`Staged::slot_bounds`],
/// [`Staged::may_hold`]).
trait Domain {
    /// A coordinate: a value, or a range of values.
    type V: Copy + Default;
    /// `q · t + r`: a tiled dimension's value from its outer and inner parts, or a `*`
    /// merge of a major and a minor dimension of size `t`.
    fn join(&self, q: Self::V, t: u64, r: Self::V) -> Self::V;
    /// `Some(v)` clipped below `d` when `v` may lie below `d`; `None` when it cannot.
    fn below(&self, v: Self::V, d: u64) -> Option<Self::V>;
    /// `(v / size, v mod size)`, `size` not 0.
    fn split(&self, v: Self::V, size: u64) -> (Self::V, Self::V);
    /// Whether `v` may be 0.
    fn may_be_zero(&self, v: Self::V) -> bool;
}

/// Exact values.
struct Exact;

impl Domain for Exact {
    type V = u64;
    fn join(&self, q: u64, t: u64, r: u64) -> u64 {
        q * t + r
    }
    fn below(&self, v: u64, d: u64) -> Option<u64> {
        (v < d).then_some(v)
    }
    fn split(&self, v: u64, size: u64) -> (u64, u64) {
        (v / size, v % size)
    }
    fn may_be_zero(&self, v: u64) -> bool {
        v == 0
    }
}

/// Inclusive ranges, over-approximated: a range that may hold a value of the exact
/// computation always does.
struct Ranges;

impl Domain for Ranges {
    type V = Span;
    fn join(&self, q: Span, t: u64, r: Span) -> Span {
        (
            q.0.saturating_mul(t).saturating_add(r.0),
            q.1.saturating_mul(t).saturating_add(r.1),
        )
    }
    fn below(&self, v: Span, d: u64) -> Option<Span> {
        (v.0 < d).then(|| (v.0, v.1.min(d - 1)))
    }
    fn split(&self, v: Span, size: u64) -> (Span, Span) {
        let minor = if v.0 / size == v.1 / size {
            (v.0 % size, v.1 % size)
        } else {
            (0, size - 1)
        };
        ((v.0 / size, v.1 / size), minor)
    }
    fn may_be_zero(&self, v: Span) -> bool {
        v.0 == 0
    }
}

/// One stage applied: the coordinates of the shape before the tile (`current`, without
/// the prepended dimensions) to those after it (into `next`): the `*` groups merged,
/// then each merged value's outer parts, then its inner parts.
fn restage<D: Domain>(
    stage: &Stage,
    current: &[D::V],
    next: &mut SmallVec<[D::V; 24]>,
    domain: &D,
) {
    // The shape before the tile: `prepend` zeros, then the current one.
    let before = |k: usize| {
        k.checked_sub(stage.prepend)
            .and_then(|k| current.get(k).copied())
            .unwrap_or_default()
    };
    next.clear();
    next.extend((0..stage.start).map(before));
    let outer = next.len();
    let last = stage.entries.len() - 1;
    let mut carry = None;
    for (i, (entry, &d)) in stage
        .entries
        .iter()
        .zip(&stage.before[stage.start..])
        .enumerate()
    {
        let e = before(stage.start + i);
        let e = match carry.take() {
            Some(major) => domain.join(major, d, e),
            None => e,
        };
        match entry {
            TileEntry::Combine if i < last => carry = Some(e),
            _ => next.push(e),
        }
    }
    for (k, &(_, t)) in stage.merged.iter().enumerate() {
        if let Some(t) = t {
            let (q, r) = domain.split(next[outer + k], t);
            next[outer + k] = q;
            next.push(r);
        }
    }
}

/// One stage undone: the coordinates after the tile (`current`: outer parts, then inner
/// parts) back to the shape before it (into `next`, prepended dimensions removed).
/// `None` where the coordinates hold no element (a partial tile's padding, or a
/// prepended dimension that is not 0).
fn unstage<D: Domain>(
    stage: &Stage,
    current: &[D::V],
    next: &mut SmallVec<[D::V; 24]>,
    domain: &D,
) -> Option<()> {
    next.clear();
    next.extend_from_slice(current.get(..stage.start)?);
    let sizes = &stage.before[stage.start..];
    let last = stage.entries.len() - 1;
    let mut inner = stage.start + stage.merged.len();
    let mut group_start = 0;
    let mut group = 0;
    // Each group is a run of `*` entries closed by a size (or by the end of the tile):
    // its value is read back from the outer and inner parts, then split into the
    // dimensions the `*` merged.
    for (j, entry) in stage.entries.iter().enumerate() {
        if !(matches!(entry, TileEntry::Size(_)) || j == last) {
            continue;
        }
        let &(d, t) = stage.merged.get(group)?;
        let q = *current.get(stage.start + group)?;
        let value = match t {
            Some(t) => {
                let r = *current.get(inner)?;
                inner += 1;
                domain.join(q, t, r)
            }
            None => q,
        };
        let mut value = domain.below(value, d)?;
        group += 1;
        let at = next.len();
        next.resize(at + j + 1 - group_start, D::V::default());
        for k in (group_start + 1..=j).rev() {
            // `size` is not 0: the group's value is below the product of its sizes.
            let (major, minor) = domain.split(value, sizes[k].max(1));
            next[at + k - group_start] = minor;
            value = major;
        }
        next[at] = value;
        group_start = j + 1;
    }
    if stage.prepend > 0 {
        if !next[..stage.prepend].iter().all(|&v| domain.may_be_zero(v)) {
            return None;
        }
        next.drain(..stage.prepend);
    }
    Some(())
}

/// A search's step budget ran out ([`Staged::next_element_within`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhausted;

/// Takes one step from `budget`, or fails when none is left.
pub(super) fn spend(budget: &mut u64) -> Result<(), Exhausted> {
    spend_by(budget, 1)
}

/// Takes `cost` steps from `budget`; `Exhausted` when fewer are left.
fn spend_by(budget: &mut u64, cost: u64) -> Result<(), Exhausted> {
    *budget = budget.checked_sub(cost).ok_or(Exhausted)?;
    Ok(())
}

/// An inclusive range of values a coordinate may take, for [`Staged::next_element_within`].
type Span = (u64, u64);

/// Half of a box ([`Staged::halve`]): its range in the halved dimension and the bounds
/// of its slots.
pub type Half = (Span, (u64, u64));

impl Staged {
    /// The first slot at or after `from` that holds an element, with its logical index
    /// written into `out`; `None` when there is none before the end of the grid.
    ///
    /// A few slots are tried one by one (dense layouts find their next element there);
    /// past them, the search skips padding by whole blocks: a block of slots is a range
    /// of one final coordinate with the more major ones fixed and the more minor ones
    /// free, and [`Staged::may_hold`] rules out blocks that hold no element, so that a
    /// block found empty is skipped at once and a non-empty one is halved: the padding
    /// between elements (which nested tiles can make billions of slots long) is never
    /// walked slot by slot. The test is exact for single slots but only approximate
    /// for blocks, and on deep plans of tiles that do not nest it can pass many empty
    /// blocks, so that one element costs up to millions of steps: hence the budget.
    ///
    /// The search gives up (`Err(Exhausted)`) once it has taken `budget` steps (slots
    /// tried and blocks tested), deducting the steps it takes.
    pub fn next_element_within(
        &self,
        from: u64,
        out: &mut [u64],
        budget: &mut u64,
    ) -> Result<Option<u64>, Exhausted> {
        const DIRECT: u64 = 16;
        let end = self.grid.min(from.saturating_add(DIRECT));
        for slot in from..end {
            spend_by(budget, self.step_cost)?;
            if self.delinear(slot, out).is_some() {
                return Ok(Some(slot));
            }
        }
        if end >= self.grid {
            return Ok(None);
        }
        let shape = &self.final_shape;
        let n = shape.len();
        let coords: Vec<u64> = shape
            .iter()
            .zip(&self.final_strides)
            .map(|(&size, &stride)| (end / stride) % size.max(1))
            .collect();
        let mut spans: Vec<Span> = vec![(0, 0); n];
        for j in (0..n).rev() {
            // The coordinates before `j` fixed at the start's, the ones after it free.
            for (i, (span, (&c, &size))) in
                spans.iter_mut().zip(coords.iter().zip(shape)).enumerate()
            {
                *span = if i < j {
                    (c, c)
                } else {
                    (0, size.saturating_sub(1))
                };
            }
            let lo = if j + 1 == n { coords[j] } else { coords[j] + 1 };
            if lo < shape[j] {
                if let Some(slot) = self.first_in(&mut spans, j, lo, shape[j], out, budget)? {
                    return Ok(Some(slot));
                }
            }
        }
        Ok(None)
    }

    /// The first element in the block where final coordinate `j` is in `lo..hi`, the
    /// coordinates before it are fixed in `spans` and those after it are free. Leaves
    /// `spans[j]` free again when it finds nothing.
    fn first_in(
        &self,
        spans: &mut [Span],
        j: usize,
        lo: u64,
        hi: u64,
        out: &mut [u64],
        budget: &mut u64,
    ) -> Result<Option<u64>, Exhausted> {
        spend_by(budget, self.step_cost)?;
        let full = (0, self.final_shape[j].saturating_sub(1));
        spans[j] = (lo, hi - 1);
        let found = if !self.may_hold(spans) {
            None
        } else if hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.first_in(spans, j, lo, mid, out, budget)? {
                Some(slot) => Some(slot),
                None => self.first_in(spans, j, mid, hi, out, budget)?,
            }
        } else if j + 1 < spans.len() {
            self.first_in(spans, j + 1, 0, self.final_shape[j + 1], out, budget)?
        } else {
            let slot: u64 = spans
                .iter()
                .zip(&self.final_strides)
                .map(|(&(c, _), &stride)| c * stride)
                .sum();
            self.delinear(slot, out).map(|()| slot)
        };
        if found.is_none() {
            spans[j] = full;
        }
        Ok(found)
    }

    /// Whether the block of slots whose final coordinates lie in `spans` may hold an
    /// element: [`Staged::delinear`] run on ranges instead of values. `false` is
    /// certain; `true` may be wrong for a block (never for a single slot).
    fn may_hold(&self, spans: &[Span]) -> bool {
        let mut current: SmallVec<[Span; 24]> = SmallVec::from_slice(spans);
        let mut next = SmallVec::new();
        for stage in self.stages.iter().rev() {
            if unstage(stage, &current, &mut next, &Ranges).is_none() {
                return false;
            }
            std::mem::swap(&mut current, &mut next);
        }
        self.major_to_minor
            .iter()
            .zip(&current)
            .all(|(&k, e)| e.0 < self.dims[k])
    }
}

/// One step of the forward map, on the coordinates as a list (see [`Staged::steps`]).
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A leading dimension of size 1 (a tile longer than the shape).
    Prepend,
    /// `*`: coordinate `at` becomes `c[at] · minor + c[at + 1]`, and `at + 1` goes.
    Merge { at: usize, minor: u64 },
    /// A tile entry: coordinate `at` becomes `c[at] / tile`, and `c[at] mod tile` is
    /// appended (the inner parts follow all the outer ones, in order).
    Split { at: usize, tile: u64 },
}

impl Step {
    /// The step on a box of coordinates, over-approximated: every value the step
    /// gives the box's values is in the result (which may hold more).
    fn bound(self, c: &mut ProgBox) {
        match self {
            Step::Prepend => c.insert(0, Prog::one(0)),
            Step::Merge { at, minor } => {
                let (x, y) = (c[at], c.remove(at + 1));
                c[at] = Prog::merge_bound(x, minor, y);
            }
            Step::Split { at, tile } => {
                let v = c[at];
                let (q, r) = v.split(tile).unwrap_or_else(|| {
                    // Remainders keep the values' residue modulo the gcd.
                    let g = gcd(v.step, tile);
                    let residue = v.lo % g;
                    (
                        Prog::new(v.lo / tile, v.hi / tile, 1),
                        Prog::new(residue, residue + tile - g, g),
                    )
                });
                c[at] = q;
                c.push(r);
            }
        }
    }

    /// The step on a box of coordinates that holds exactly the values of its
    /// progressions' product: `true` when the image is again such a box (applied in
    /// place), else `false` with `pieces` set to a split of the box into up to three
    /// boxes that cover it, each closer to exact for this step.
    fn exact(self, c: &mut ProgBox, pieces: &mut SmallVec<[ProgBox; 3]>) -> bool {
        pieces.clear();
        let mut piece = |c: &ProgBox, at: usize, p: Prog| {
            let mut b = c.clone();
            b[at] = p;
            pieces.push(b);
        };
        match self {
            Step::Prepend => c.insert(0, Prog::one(0)),
            Step::Merge { at, minor } => {
                let (x, y) = (c[at], c[at + 1]);
                let Some(merged) = Prog::merge(x, minor, y) else {
                    let (low, high) = x.halves();
                    piece(c, at, low);
                    piece(c, at, high);
                    return false;
                };
                c.remove(at + 1);
                c[at] = merged;
            }
            Step::Split { at, tile } => {
                let v = c[at];
                let (qa, qb) = (v.lo / tile, v.hi / tile);
                let (q, r) = if let Some(split) = v.split(tile) {
                    split
                } else if tile % v.step == 0 {
                    // Every tile holds the same remainders once the tiles at either
                    // end are whole: the first value at its tile's first slot of the
                    // progression's residue, the last at its last.
                    let (a, b) = (v.lo % tile, v.hi % tile);
                    if a >= v.step || b < tile - v.step {
                        // The partial tiles at either end, and the whole ones between.
                        let mut whole = v;
                        if a >= v.step {
                            let head = v.last_below((qa + 1) * tile);
                            piece(c, at, Prog::new(v.lo, head, v.step));
                            whole.lo = head + v.step;
                        }
                        if b < tile - v.step {
                            let tail = v.first_from(qb * tile);
                            piece(c, at, Prog::new(tail, v.hi, v.step));
                            whole.hi = tail - v.step;
                        }
                        if whole.lo <= whole.hi {
                            piece(c, at, Prog::new(whole.lo, whole.hi, v.step));
                        }
                        return false;
                    }
                    let residue = v.lo % v.step;
                    (
                        Prog::new(qa, qb, 1),
                        Prog::new(residue, tile - v.step + residue, v.step),
                    )
                } else {
                    // Neither divides the other: the remainders shift from tile to
                    // tile and repeat every `tile / gcd` values. Each class of values
                    // that far apart has one remainder; when they are too many, halve
                    // the progression first.
                    let classes = tile / gcd(v.step, tile);
                    let n = v.count();
                    if n.min(classes) > MAX_CLASSES {
                        let (low, high) = v.halves();
                        piece(c, at, low);
                        piece(c, at, high);
                    } else {
                        for i in 0..n.min(classes) {
                            let lo = v.lo + i * v.step;
                            let hi = lo + (n - 1 - i) / classes * classes * v.step;
                            piece(c, at, Prog::new(lo, hi, classes * v.step));
                        }
                    }
                    return false;
                };
                c[at] = q;
                c.push(r);
            }
        }
        true
    }
}

/// An arithmetic progression `lo, lo + step, ..., hi` of coordinate values: `hi − lo`
/// a multiple of `step`, and `step` 1 for a single value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Prog {
    lo: u64,
    hi: u64,
    step: u64,
}

impl Prog {
    fn new(lo: u64, hi: u64, step: u64) -> Prog {
        debug_assert!(lo <= hi && step > 0 && (hi - lo) % step == 0);
        let step = if lo == hi { 1 } else { step };
        Prog { lo, hi, step }
    }

    fn one(v: u64) -> Prog {
        Prog::new(v, v, 1)
    }

    fn is_one(self) -> bool {
        self.lo == self.hi
    }

    /// `{x · minor + y}` over the values of both, when that is a progression: when
    /// `x` or `y` is one value, or when `y`'s values run on into those of `x`'s next.
    fn merge(x: Prog, minor: u64, y: Prog) -> Option<Prog> {
        let step = if x.is_one() {
            y.step
        } else if y.is_one() {
            x.step * minor
        } else if x.step * minor == y.hi - y.lo + y.step {
            y.step
        } else {
            return None;
        };
        Some(Prog::new(x.lo * minor + y.lo, x.hi * minor + y.hi, step))
    }

    /// [`Prog::merge`], or where that is no progression, one that holds every value.
    fn merge_bound(x: Prog, minor: u64, y: Prog) -> Prog {
        Prog::merge(x, minor, y).unwrap_or_else(|| {
            // Every value is x.lo · minor + y.lo plus multiples of both steps.
            Prog::new(
                x.lo * minor + y.lo,
                x.hi * minor + y.hi,
                gcd(x.step * minor, y.step),
            )
        })
    }

    /// `(v / tile, v mod tile)` over the values, when that is a product of two
    /// progressions of its own: one quotient, or one remainder.
    fn split(self, tile: u64) -> Option<(Prog, Prog)> {
        let (qa, qb) = (self.lo / tile, self.hi / tile);
        if qa == qb {
            Some((
                Prog::one(qa),
                Prog::new(self.lo % tile, self.hi % tile, self.step),
            ))
        } else if self.step % tile == 0 {
            Some((
                Prog::new(qa, qb, self.step / tile),
                Prog::one(self.lo % tile),
            ))
        } else {
            None
        }
    }

    /// How many values.
    fn count(self) -> u64 {
        (self.hi - self.lo) / self.step + 1
    }

    /// The first half of the values and the rest (two values or more).
    fn halves(self) -> (Prog, Prog) {
        let n = (self.hi - self.lo) / self.step + 1;
        let split = self.lo + (n / 2) * self.step;
        (
            Prog::new(self.lo, split - self.step, self.step),
            Prog::new(split, self.hi, self.step),
        )
    }

    /// The last value below `end` (the first value is).
    fn last_below(self, end: u64) -> u64 {
        self.lo + (end - 1 - self.lo) / self.step * self.step
    }

    /// The first value at `from` or above (the last value is).
    fn first_from(self, from: u64) -> u64 {
        self.lo + (from - self.lo).div_ceil(self.step) * self.step
    }
}

/// The most pieces one tile entry splits a progression into by remainder
/// ([`Step::exact`]); a longer one is halved first.
const MAX_CLASSES: u64 = 1 << 15;

/// The greatest common divisor.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Coordinates of a box through the steps (inline for the usual depths).
type ProgBox = SmallVec<[Prog; 24]>;

/// Applies the steps at the head of `steps` that form one run, all prepends or all
/// merges, in one pass over the box `c`, and returns how many it applied (0 when the
/// first step is a split, or a merge `merge` refuses). `merge` gives the value of a
/// merge, or `None` to stop there, leaving the box as the steps before left it.
///
/// Taken one at a time, each prepend or merge shifted every coordinate after it, so a
/// tile of hundreds of thousands of `*` (or longer than the shape by as many) took
/// minutes.
fn apply_run(
    steps: &[Step],
    c: &mut ProgBox,
    mut merge: impl FnMut(Prog, u64, Prog) -> Option<Prog>,
) -> usize {
    match steps.first() {
        Some(Step::Prepend) => {
            let n = steps
                .iter()
                .take_while(|s| matches!(s, Step::Prepend))
                .count();
            c.insert_many(0, std::iter::repeat_n(Prog::one(0), n));
            n
        }
        Some(Step::Merge { .. }) => {
            // The box is `c[..done]` (coordinates up to the one merges fold into)
            // followed by `c[read..]` (those not yet reached).
            let (mut done, mut read, mut applied) = (0, 0, 0);
            for step in steps {
                let Step::Merge { at, minor } = *step else {
                    break;
                };
                // A merge at a coordinate already passed ends the run.
                if at + 1 < done {
                    break;
                }
                while done <= at && read < c.len() {
                    c[done] = c[read];
                    done += 1;
                    read += 1;
                }
                let (Some(&x), Some(&y)) = (c.get(at), c.get(read)) else {
                    break;
                };
                if done != at + 1 {
                    break;
                }
                let Some(m) = merge(x, minor, y) else {
                    break;
                };
                c[at] = m;
                read += 1;
                applied += 1;
            }
            c.drain(done..read);
            applied
        }
        _ => 0,
    }
}

impl Staged {
    /// The stages as a list of steps on the coordinates, most major first.
    fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        for stage in &self.stages {
            steps.extend(std::iter::repeat_n(Step::Prepend, stage.prepend));
            let last = stage.entries.len() - 1;
            let mut group = 0;
            for (i, entry) in stage.entries.iter().enumerate() {
                if i > 0 && stage.entries[i - 1] == TileEntry::Combine {
                    steps.push(Step::Merge {
                        at: stage.start + group,
                        minor: stage.before[stage.start + i].max(1),
                    });
                }
                if !(*entry == TileEntry::Combine && i < last) {
                    group += 1;
                }
            }
            for (k, &(_, t)) in stage.merged.iter().enumerate() {
                if let Some(tile) = t {
                    steps.push(Step::Split {
                        at: stage.start + k,
                        tile,
                    });
                }
            }
        }
        steps
    }

    /// The largest slot that holds an element, `None` when the plan has no elements,
    /// or `Err(Exhausted)` once `budget` boxes have been bounded.
    ///
    /// Branch and bound over boxes of coordinates carried forward through the stages:
    /// a box is a product of arithmetic progressions that holds exactly the values the
    /// elements take there, so at the end its largest slot is its top corner. A `*`
    /// merge of a range with one minor value makes a progression (the merged values
    /// step by the minor size), and a tile entry keeps one exact where the tile and
    /// the step divide one another. Where a step would break that (a merge into a
    /// partial minor range, a tile entry cutting a progression inside tiles, a tile
    /// and a step that do not divide), the box is split right there, into pieces the
    /// step keeps exact or that come closer to it, and each piece is bounded by the
    /// remaining steps run on ranges ([`Step::bound`]); a piece whose bound is at
    /// most the best slot found is dropped. Splitting where the looseness arises, rather than halving
    /// the logical index, keeps the link between a tile's quotient and remainder
    /// that ranges of logical indices lose through deep plans of tiles that do not
    /// nest.
    pub fn largest_slot(&self, budget: &mut u64) -> Result<Option<u64>, Exhausted> {
        if self.dims.contains(&0) {
            return Ok(None);
        }
        let steps = self.steps();
        let top = |c: &ProgBox| -> u64 {
            c.iter()
                .zip(&self.final_strides)
                .fold(0u64, |a, (e, s)| a.saturating_add(e.hi.saturating_mul(*s)))
        };
        let bound = |from: usize, c: &ProgBox| -> u64 {
            let mut c = c.clone();
            let mut i = from;
            while let Some(step) = steps.get(i) {
                match apply_run(&steps[i..], &mut c, |x, minor, y| {
                    Some(Prog::merge_bound(x, minor, y))
                }) {
                    0 => {
                        step.bound(&mut c);
                        i += 1;
                    }
                    n => i += n,
                }
            }
            top(&c)
        };
        let start: ProgBox = self
            .major_to_minor
            .iter()
            .map(|&k| Prog::new(0, self.dims[k] - 1, 1))
            .collect();
        let mut best: Option<u64> = None;
        let mut pieces = SmallVec::new();
        // Boxes yet to visit, the highest bound last.
        let mut pending = vec![(0usize, bound(0, &start), start)];
        while let Some((mut i, upper, mut c)) = pending.pop() {
            if best.is_some_and(|b| upper <= b) {
                continue;
            }
            loop {
                let Some(step) = steps.get(i) else {
                    let slot = bound(i, &c);
                    best = Some(best.map_or(slot, |b| b.max(slot)));
                    break;
                };
                let applied = apply_run(&steps[i..], &mut c, Prog::merge);
                if applied > 0 {
                    i += applied;
                } else if step.exact(&mut c, &mut pieces) {
                    i += 1;
                } else {
                    let mut bounded: SmallVec<[(u64, ProgBox); 3]> = SmallVec::new();
                    for piece in pieces.drain(..) {
                        spend(budget)?;
                        bounded.push((bound(i, &piece), piece));
                    }
                    bounded.sort_unstable_by_key(|(upper, _)| *upper);
                    for (upper, piece) in bounded {
                        if best.is_none_or(|b| upper > b) {
                            pending.push((i, upper, piece));
                        }
                    }
                    break;
                }
            }
        }
        Ok(best)
    }
}
