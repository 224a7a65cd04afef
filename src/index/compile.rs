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
}

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
    for tile in &spec.tiles {
        if tile.is_empty() {
            return Err(PlanError::Malformed("empty tile"));
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
    Ok(Staged {
        dims,
        major_to_minor,
        physical,
        stages,
        final_shape: current,
        final_strides,
        grid,
    })
}

impl Staged {
    /// The position of an in-bounds logical index in the final shape's row-major
    /// order. `scratch` is reused between calls.
    pub fn linear(&self, index: &[u64], scratch: &mut Vec<u64>) -> u64 {
        let mut current: Vec<u64> = self
            .major_to_minor
            .iter()
            .map(|&k| index.get(k).copied().unwrap_or(0))
            .collect();
        for stage in &self.stages {
            scratch.clear();
            scratch.resize(stage.prepend, 0);
            scratch.extend_from_slice(&current);
            let suffix = scratch.split_off(stage.start);
            let mut values = Vec::with_capacity(stage.merged.len());
            let mut carry: Option<u64> = None;
            let last = stage.entries.len() - 1;
            for (i, ((entry, &e), &d)) in stage
                .entries
                .iter()
                .zip(&suffix)
                .zip(&stage.before[stage.start..])
                .enumerate()
            {
                let e = match carry.take() {
                    Some(major) => major * d + e,
                    None => e,
                };
                match entry {
                    TileEntry::Combine if i < last => carry = Some(e),
                    _ => values.push(e),
                }
            }
            for (&e, &(_, t)) in values.iter().zip(&stage.merged) {
                scratch.push(t.map_or(e, |t| e / t));
            }
            for (&e, &(_, t)) in values.iter().zip(&stage.merged) {
                if let Some(t) = t {
                    scratch.push(e % t);
                }
            }
            std::mem::swap(&mut current, scratch);
        }
        current
            .iter()
            .zip(&self.final_strides)
            .map(|(e, s)| e * s)
            .sum()
    }

    /// The logical index stored at `slot < grid`, or `None` for padding.
    pub fn delinear(&self, slot: u64, out: &mut [u64]) -> Option<()> {
        let mut current: Vec<u64> = self
            .final_shape
            .iter()
            .zip(&self.final_strides)
            .map(|(&size, &stride)| (slot / stride) % size.max(1))
            .collect();
        for stage in self.stages.iter().rev() {
            let m = stage.merged.len();
            let mut previous = current[..stage.start].to_vec();
            let mut values = Vec::with_capacity(m);
            let mut inner = stage.start + m;
            for (i, &(d, t)) in stage.merged.iter().enumerate() {
                let q = current[stage.start + i];
                let e = match t {
                    Some(t) => {
                        let r = current[inner];
                        inner += 1;
                        q * t + r
                    }
                    None => q,
                };
                if e >= d {
                    return None;
                }
                values.push(e);
            }
            // Undo the merges: each group is a run of `*` entries closed by a size (or
            // by the end of the tile).
            let sizes = &stage.before[stage.start..];
            let mut suffix = Vec::with_capacity(sizes.len());
            let mut group_start = 0;
            let mut groups = values.iter();
            let last = stage.entries.len() - 1;
            for (j, entry) in stage.entries.iter().enumerate() {
                if matches!(entry, TileEntry::Size(_)) || j == last {
                    let mut v = groups.next().copied().unwrap_or(0);
                    let at = suffix.len();
                    for &size in sizes[group_start + 1..=j].iter().rev() {
                        // `size` is not 0: the group's value is below their product.
                        suffix.insert(at, v % size);
                        v /= size;
                    }
                    suffix.insert(at, v);
                    group_start = j + 1;
                }
            }
            previous.extend_from_slice(&suffix);
            // Prepended dimensions must hold 0.
            if previous[..stage.prepend].iter().any(|&e| e != 0) {
                return None;
            }
            current = previous.split_off(stage.prepend);
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
