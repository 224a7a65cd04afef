//! The engine's input facts of a validated shape, leaving out, at ranks past any real
//! shape's, the dimensions that take no part in the plan.
//!
//! A dimension of size 1 that no tile reaches (it is more major than the part of the
//! physical shape every tile covers), that is not padded and not split adds nothing to
//! any offset or size: its coordinate is always 0 and its factor always 1. Nor does such
//! a dimension of size 0 when another of size 0 stays more minor than it: the array has
//! no elements either way, and every stride that the one left out makes 0 the one kept
//! makes 0 too. A shape of a few hundred thousand dimensions has at most 63 of more than
//! one element (its element count fits in 64 bits) unless it has none, so its plan,
//! built over the others alone, stays small; the plan keeps only every dimension's size
//! and the layout's order, to check indices and to give each dimension its stride.

use crate::layout::{tile_makes, Layout, TileDim};
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
fn untiled_prefix(rank: usize, tiles: &[Vec<TileEntry>]) -> usize {
    let mut len = rank;
    let mut untouched = rank;
    for tile in tiles {
        let start = len.saturating_sub(tile.len());
        untouched = untouched.min(start);
        let (outer, inner) = made_by(tile);
        len = start + outer + inner;
    }
    untouched
}

/// How many outer and inner dimensions a tile makes ([`tile_makes`]).
fn made_by(tile: &[TileEntry]) -> (usize, usize) {
    tile_makes(tile.iter().map(|e| *e == TileEntry::Combine))
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
    let tiles = tiles_of(&layout);
    let whole = || {
        assemble(
            shape,
            &layout,
            tiles.clone(),
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
    let untouched = untiled_prefix(rank, &tiles);
    let size_at = |p: usize| {
        dimensions
            .get(minor_to_major[rank - 1 - p])
            .and_then(|d| d.bound())
    };
    let unpadded_at = |p: usize| {
        let k = minor_to_major[rank - 1 - p];
        padded.is_none_or(|padded| padded.get(k).copied() == size_at(p))
    };
    // The most minor of the untiled dimensions of size 0 (unpadded) stays, so that
    // every dimension more major than one of size 0 still is, and its stride still 0.
    let last_zero = (0..untouched)
        .rev()
        .find(|&p| size_at(p) == Some(0) && unpadded_at(p));
    let mut left_out = vec![false; rank];
    for (p, out) in left_out.iter_mut().enumerate().take(untouched) {
        let takes_no_part = match size_at(p) {
            Some(1) => true,
            Some(0) => last_zero.is_some_and(|last| p < last),
            _ => false,
        };
        let unsplit = split_configs.iter().all(|(dim, _)| *dim != p);
        *out = takes_no_part && unpadded_at(p) && unsplit;
    }
    // Under a layout's first tile: a dimension of size 1 whose entry is `*` (it
    // multiplies the next by 1), or `1` when no `*` before it merges another dimension
    // into it (then it is one tile of one, both of size 1), when the tiles after it
    // leave what it makes alone. One entry stays, so that the layout still has a tile
    // (tail padding applies to tiled layouts alone).
    let mut inner_tiles = tiles.clone();
    if let [tile, later @ ..] = &mut inner_tiles[..] {
        let start = rank.saturating_sub(tile.len());
        if start + tile.len() == rank {
            let (outer, inner) = made_by(tile);
            // The first tile makes its outer dimensions at `start`, its inner ones
            // after them; the later tiles leave those before `reach` alone.
            let reach = untiled_prefix(start + outer + inner, later);
            let (mut outer_at, mut inner_at) = (start, start + outer);
            let last = tile.len() - 1;
            let mut dropped = vec![false; tile.len()];
            // What the `*` entries before carry into the next entry: an entry `1`
            // they merge into is not a tile of one.
            let mut carry: Option<u64> = None;
            for (i, entry) in tile.iter().enumerate() {
                let p = start + i;
                let k = minor_to_major[rank - 1 - p];
                let physical = match padded {
                    Some(padded) => padded.get(k).copied(),
                    None => size_at(p),
                };
                let one = size_at(p) == Some(1) && physical == Some(1);
                let unsplit = split_configs.iter().all(|(dim, _)| *dim != p);
                let takes_no_part = match entry {
                    TileEntry::Combine => {
                        let carried = carry.unwrap_or(1);
                        carry = Some(carried.saturating_mul(physical.unwrap_or(u64::MAX)));
                        true
                    }
                    TileEntry::Size(t) => *t == 1 && carry.take().is_none_or(|c| c == 1),
                };
                let mut alone = true;
                if *entry != TileEntry::Combine || i == last {
                    alone &= outer_at < reach;
                    outer_at += 1;
                }
                if *entry != TileEntry::Combine {
                    alone &= inner_at < reach;
                    inner_at += 1;
                }
                dropped[i] = one && unsplit && takes_no_part && alone;
            }
            if dropped.iter().all(|&d| d) {
                if let Some(last) = dropped.last_mut() {
                    *last = false;
                }
            }
            let mut i = 0;
            tile.retain(|_| {
                i += 1;
                !dropped[i - 1]
            });
            for (i, &out) in dropped.iter().enumerate() {
                left_out[start + i] = out;
            }
        }
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
        inner_tiles,
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

/// The engine's tiles of `layout`.
fn tiles_of(layout: &Layout) -> Vec<Vec<TileEntry>> {
    layout
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
        .collect()
}

/// A [`Spec`] of `shape`'s element type and `layout`'s sizes, over the tiles and
/// dimensions given.
fn assemble(
    shape: &ArrayShape,
    layout: &Layout,
    tiles: Vec<Vec<TileEntry>>,
    dims: Vec<Option<u64>>,
    minor_to_major: Vec<usize>,
    padded: Option<Vec<u64>>,
    split_configs: Vec<(usize, Vec<u64>)>,
) -> Spec {
    Spec {
        dims,
        minor_to_major,
        padded,
        tiles,
        element_size_in_bits: layout.element_size_in_bits(),
        byte_width: u64::from(shape.element_type().byte_width().unwrap_or(0)),
        tail_padding: layout.tail_padding_alignment_in_elements(),
        split_configs,
    }
}
