//! The engine's input facts of a validated shape, leaving out, at ranks past any real
//! shape's, the dimensions that take no part in the plan.
//!
//! A dimension of size 1 that no tile reaches (it is more major than the part of the
//! physical shape every tile covers), that is not padded and not split adds nothing to
//! any offset or size: its coordinate is always 0 and its factor always 1. A shape of a
//! few hundred thousand dimensions has at most 63 that are not of size 1 (its element
//! count fits in 64 bits), so its plan, built over the others alone, stays small; the
//! plan keeps only every dimension's size and the layout's order, to check indices and
//! to give each dimension its stride.

use crate::layout::{Layout, TileDim};
use crate::shape::ArrayShape;

use super::spec::{Spec, TileEntry};

/// Ranks up to which a plan keeps every dimension. Real shapes stay far below it (XLA's
/// own tests stop at rank 8, NumPy at 64), so their plans are built as they are.
pub(crate) const KEEP_ALL_UP_TO: usize = 64;

/// A plan's view of a shape whose plan leaves dimensions out.
#[derive(Clone, Debug)]
pub(crate) struct Squeeze {
    /// Every logical dimension's size.
    pub dims: Vec<u64>,
    /// Every logical dimension, most minor first.
    pub minor_to_major: Vec<u32>,
    /// The logical dimension of each of the plan's own, in increasing order.
    pub kept: Vec<usize>,
}

impl Squeeze {
    /// The plan's dimension for logical dimension `k`, if the plan has it.
    pub fn inner(&self, k: usize) -> Option<usize> {
        self.kept.binary_search(&k).ok()
    }

    /// The plan's own coordinates of a whole index (of the full rank).
    pub fn gather(&self, index: &[u64]) -> Vec<u64> {
        self.kept
            .iter()
            .map(|&k| index.get(k).copied().unwrap_or(0))
            .collect()
    }

    /// A whole index from the plan's own coordinates: 0 for every dimension left out.
    pub fn scatter(&self, inner: &[u64], out: &mut [u64]) {
        out.fill(0);
        for (&k, &v) in self.kept.iter().zip(inner) {
            if let Some(slot) = out.get_mut(k) {
                *slot = v;
            }
        }
    }

    /// Every logical dimension, most minor first.
    pub fn minor_to_major(&self) -> impl Iterator<Item = usize> + '_ {
        self.minor_to_major.iter().map(|&k| k as usize)
    }
}

/// How many physical dimensions, from the most major, no tile reaches: each tile covers
/// the last of the shape the tiles before it made (and all of it when it is longer).
fn untiled_prefix(rank: usize, tiles: &[crate::layout::Tile]) -> usize {
    let mut len = rank;
    let mut untouched = rank;
    for tile in tiles {
        let entries = tile.dimensions();
        let start = len.saturating_sub(entries.len());
        untouched = untouched.min(start);
        let last = entries.len().saturating_sub(1);
        // A `*` merges into the next entry, unless it is the last (then it stays, as an
        // outer dimension alone); each size makes an outer and an inner dimension.
        let outer = entries
            .iter()
            .enumerate()
            .filter(|&(i, e)| *e != TileDim::Combine || i == last)
            .count();
        let inner = entries
            .iter()
            .filter(|e| matches!(e, TileDim::Size(_)))
            .count();
        len = start + outer + inner;
    }
    untouched
}

/// The engine's input facts of `shape`, with the dimensions it can leave out left out
/// when its rank is above `keep_all_up_to`.
pub(crate) fn spec_of(shape: &ArrayShape, keep_all_up_to: usize) -> (Spec, Option<Box<Squeeze>>) {
    let layout = shape.layout_or_default();
    let dimensions = shape.dimensions();
    let rank = dimensions.len();
    let minor_to_major = layout.minor_to_major();
    let padded = layout.padded_dimensions();
    let split_configs: Vec<(usize, Vec<u64>)> = layout
        .split_configs()
        .iter()
        .filter_map(|c| {
            let dim = usize::try_from(c.dimension()).ok()?;
            let splits = c
                .split_indices()
                .iter()
                .map(|&i| u64::try_from(i).unwrap_or(0))
                .collect();
            Some((dim, splits))
        })
        .collect();
    let whole = || {
        assemble(
            shape,
            &layout,
            dimensions.iter().map(|d| d.bound()).collect(),
            minor_to_major.to_vec(),
            padded.map(<[u64]>::to_vec),
            split_configs.clone(),
        )
    };
    if rank <= keep_all_up_to || minor_to_major.len() != rank || u32::try_from(rank).is_err() {
        return (whole(), None);
    }

    // Which physical positions (most major first) the plan can leave out.
    let untouched = untiled_prefix(rank, layout.tiles());
    let mut left_out = vec![false; rank];
    for (p, out) in left_out.iter_mut().enumerate().take(untouched) {
        let k = minor_to_major[rank - 1 - p];
        let size_one = dimensions.get(k).and_then(|d| d.bound()) == Some(1);
        let unpadded = padded.is_none_or(|padded| padded.get(k) == Some(&1));
        let unsplit = split_configs.iter().all(|(dim, _)| *dim != p);
        *out = size_one && unpadded && unsplit;
    }
    if !left_out.contains(&true) {
        return (whole(), None);
    }
    let mut is_kept = vec![true; rank];
    for (p, &out) in left_out.iter().enumerate() {
        if out {
            is_kept[minor_to_major[rank - 1 - p]] = false;
        }
    }
    let kept: Vec<usize> = (0..rank).filter(|&k| is_kept[k]).collect();
    drop(is_kept);
    let squeeze = Squeeze {
        dims: dimensions.iter().map(|d| d.bound().unwrap_or(0)).collect(),
        minor_to_major: minor_to_major.iter().map(|&k| k as u32).collect(),
        kept,
    };
    let inner_minor_to_major = minor_to_major
        .iter()
        .filter_map(|&k| squeeze.inner(k))
        .collect();
    // A split names a physical dimension: it moves up by the dimensions left out
    // before it.
    let inner_splits = split_configs
        .into_iter()
        .map(|(p, splits)| {
            let before = left_out.iter().take(p).filter(|&&out| out).count();
            (p - before, splits)
        })
        .collect();
    let inner = assemble(
        shape,
        &layout,
        squeeze
            .kept
            .iter()
            .map(|&k| dimensions.get(k).and_then(|d| d.bound()))
            .collect(),
        inner_minor_to_major,
        padded.map(|padded| {
            squeeze
                .kept
                .iter()
                .map(|&k| padded.get(k).copied().unwrap_or(0))
                .collect()
        }),
        inner_splits,
    );
    (inner, Some(Box::new(squeeze)))
}

/// A [`Spec`] of `shape`'s element type and `layout`'s tiles and sizes, over the
/// dimensions given.
fn assemble(
    shape: &ArrayShape,
    layout: &Layout,
    dims: Vec<Option<u64>>,
    minor_to_major: Vec<usize>,
    padded: Option<Vec<u64>>,
    split_configs: Vec<(usize, Vec<u64>)>,
) -> Spec {
    Spec {
        dims,
        minor_to_major,
        padded,
        tiles: layout
            .tiles()
            .iter()
            .map(|tile| {
                tile.dimensions()
                    .iter()
                    .map(|d| match d {
                        TileDim::Size(n) => TileEntry::Size(n.get()),
                        TileDim::Combine => TileEntry::Combine,
                    })
                    .collect()
            })
            .collect(),
        element_size_in_bits: layout.element_size_in_bits(),
        byte_width: u64::from(shape.element_type().byte_width().unwrap_or(0)),
        tail_padding: layout.tail_padding_alignment_in_elements(),
        split_configs,
    }
}
