//! A slow, literal transcription of XLA's index algorithms, kept apart from the engine.
//!
//! - [`index_util_linear`] / [`index_util_multi`]: `IndexUtil`'s formulas over
//!   `minor_to_major` (no tiles).
//! - [`nested_tiling_linear`]: `LayoutUtil::LinearIndexForNestedTiling` as
//!   `docs/tiled_layout.md` describes it. Start from the physical shape and index,
//!   most major first; for each tile, replace the suffix the tile covers by
//!   `[⌈d/t⌉…, t…]` and the index by `[e/t…, e mod t…]`; at the end, linearize
//!   row-major. Extended the way the crate documents: legacy padded sizes as the
//!   physical shape, leading 1s when a tile is longer than the shape, and `*` entries
//!   merging a dimension into the next more minor one first.
//! - [`inverse_map`]: the reverse, by brute force over every element.
//!
//! It shares no code or precomputed model with `src/index/`; it allocates freely.
#![allow(dead_code)]

use std::collections::HashMap;

use proptest::prelude::*;

/// A layout in plain numbers. A tile entry `None` is `*`.
#[derive(Clone, Debug)]
pub struct RefLayout {
    pub dims: Vec<u64>,
    pub minor_to_major: Vec<usize>,
    pub padded: Option<Vec<u64>>,
    pub tiles: Vec<Vec<Option<u64>>>,
    pub tail_padding: u64,
}

/// `IndexUtil::MultidimensionalIndexToLinearIndex`:
/// `idx[m2m[0]] + d[m2m[0]]·(idx[m2m[1]] + d[m2m[1]]·(…))`.
pub fn index_util_linear(dims: &[u64], minor_to_major: &[usize], idx: &[u64]) -> u64 {
    let mut linear = 0;
    for &dim in minor_to_major.iter().rev() {
        linear = linear * dims[dim] + idx[dim];
    }
    linear
}

/// `IndexUtil::LinearIndexToMultidimensionalIndex`: walk `minor_to_major` from the minor
/// end; `idx[dim] = (L / divisor) mod d[dim]`, then `divisor ×= d[dim]`.
pub fn index_util_multi(dims: &[u64], minor_to_major: &[usize], linear: u64) -> Vec<u64> {
    let mut idx = vec![0; dims.len()];
    let mut divisor = 1;
    for &dim in minor_to_major {
        idx[dim] = (linear / divisor) % dims[dim];
        divisor *= dims[dim];
    }
    idx
}

/// Applies one tile to (shape, index), both most major first.
fn apply_tile(shape: &[u64], index: &[u64], tile: &[Option<u64>]) -> (Vec<u64>, Vec<u64>) {
    let mut shape = shape.to_vec();
    let mut index = index.to_vec();
    // A tile longer than the shape sees leading dimensions of size 1.
    while shape.len() < tile.len() {
        shape.insert(0, 1);
        index.insert(0, 0);
    }
    let start = shape.len() - tile.len();
    let mut sub_shape = shape[start..].to_vec();
    let mut sub_index = index[start..].to_vec();
    let mut sub_tile = tile.to_vec();
    // Each asterisk: remove that dimension from shape and tile, multiplying the next
    // more minor dimension's bound by its size (tiled_layout.md, "Combining
    // dimensions"). A most minor asterisk has nothing to merge into: its dimension
    // stays untiled, one outer dimension with no inner part.
    while let Some(i) = sub_tile[..sub_tile.len() - 1]
        .iter()
        .position(|t| t.is_none())
    {
        let d = sub_shape.remove(i);
        let e = sub_index.remove(i);
        sub_tile.remove(i);
        sub_index[i] += e * sub_shape[i];
        sub_shape[i] *= d;
    }
    let mut next_shape = shape[..start].to_vec();
    let mut next_index = index[..start].to_vec();
    for i in 0..sub_tile.len() {
        match sub_tile[i] {
            Some(t) => {
                next_shape.push(sub_shape[i].div_ceil(t));
                next_index.push(sub_index[i] / t);
            }
            None => {
                next_shape.push(sub_shape[i]);
                next_index.push(sub_index[i]);
            }
        }
    }
    for i in 0..sub_tile.len() {
        if let Some(t) = sub_tile[i] {
            next_shape.push(t);
            next_index.push(sub_index[i] % t);
        }
    }
    (next_shape, next_index)
}

/// Physical shape and index, most major first.
fn physical(layout: &RefLayout, idx: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let sizes = layout.padded.as_ref().unwrap_or(&layout.dims);
    let shape = layout
        .minor_to_major
        .iter()
        .rev()
        .map(|&k| sizes[k])
        .collect();
    let index = layout
        .minor_to_major
        .iter()
        .rev()
        .map(|&k| idx[k])
        .collect();
    (shape, index)
}

fn row_major(shape: &[u64], index: &[u64]) -> u64 {
    shape.iter().zip(index).fold(0, |acc, (&d, &e)| acc * d + e)
}

/// `LinearIndexForNestedTiling`, staged.
pub fn nested_tiling_linear(layout: &RefLayout, idx: &[u64]) -> u64 {
    let (mut shape, mut index) = physical(layout, idx);
    for tile in &layout.tiles {
        (shape, index) = apply_tile(&shape, &index, tile);
    }
    row_major(&shape, &index)
}

/// `LayoutUtil::LinearIndex`: the first tile only (and `idx[0]` for rank 1).
pub fn first_tile_linear(layout: &RefLayout, idx: &[u64]) -> u64 {
    if idx.len() == 1 {
        return idx[0];
    }
    let (mut shape, mut index) = physical(layout, idx);
    if let Some(tile) = layout.tiles.first() {
        (shape, index) = apply_tile(&shape, &index, tile);
    }
    row_major(&shape, &index)
}

/// The final shape's element count, rounded up to the tail padding when tiled.
pub fn allocated(layout: &RefLayout) -> u64 {
    let (mut shape, mut index) = physical(layout, &vec![0; layout.dims.len()]);
    for tile in &layout.tiles {
        (shape, index) = apply_tile(&shape, &index, tile);
    }
    let n: u64 = shape.iter().product();
    if layout.tiles.is_empty() {
        n
    } else {
        n.div_ceil(layout.tail_padding) * layout.tail_padding
    }
}

/// Every index in logical order (the last dimension fastest).
pub fn all_indices(dims: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for &d in dims {
        let mut next = Vec::new();
        for prefix in &out {
            for e in 0..d {
                let mut v = prefix.clone();
                v.push(e);
                next.push(v);
            }
        }
        out = next;
    }
    out
}

/// slot → index for every element (by brute force).
pub fn inverse_map(layout: &RefLayout) -> HashMap<u64, Vec<u64>> {
    all_indices(&layout.dims)
        .into_iter()
        .map(|idx| (nested_tiling_linear(layout, &idx), idx))
        .collect()
}

/// Tile sets for the exhaustive tests of small shapes (an entry `None` is `*`):
/// single and repeated tiles, shorter and longer than the shape, combined entries,
/// tiles that do and do not divide each other.
pub fn small_tile_sets() -> Vec<Vec<Vec<Option<u64>>>> {
    let s = Some;
    vec![
        vec![],
        vec![vec![s(2)]],
        vec![vec![s(3)]],
        vec![vec![s(2), s(2)]],
        vec![vec![s(2), s(3)]],
        vec![vec![s(4), s(1)]],
        vec![vec![s(2), s(4)], vec![s(2), s(1)]],
        vec![vec![s(3)], vec![s(2)]],
        vec![vec![s(4)], vec![s(3)]],
        vec![vec![s(2), s(2)], vec![s(2), s(1), s(1), s(1)]],
        vec![vec![s(2), s(1), s(3)]],
        vec![vec![s(1), s(2), s(2), s(2)]],
        vec![vec![None, s(3)]],
        vec![vec![None, s(2)], vec![s(2)]],
        vec![vec![s(2), None, s(2)]],
        vec![vec![None, None, s(4)]],
        vec![vec![s(2)], vec![None, s(2)]],
        vec![vec![s(2), None]],
        vec![vec![None, None]],
        vec![vec![s(3), s(2)], vec![s(2), s(1)]],
    ]
}

/// Shapes for the exhaustive tests: scalars, zero-size, size-1 and odd dimensions.
pub fn small_shapes() -> Vec<Vec<u64>> {
    vec![
        vec![],
        vec![0],
        vec![1],
        vec![5],
        vec![2, 3],
        vec![3, 5],
        vec![4, 1],
        vec![1, 4],
        vec![0, 3],
        vec![2, 3, 4],
        vec![3, 1, 5],
        vec![2, 2, 2, 3],
    ]
}

/// The layouts of the exhaustive tests: every shape of [`small_shapes`] in every
/// `minor_to_major`, with every tile set of [`small_tile_sets`] no longer than its
/// rank + 2 and tail padding 1 and 4, then untiled with legacy padding of one more
/// element per dimension.
pub fn small_layouts() -> Vec<RefLayout> {
    let tile_sets = small_tile_sets();
    let mut layouts = Vec::new();
    for dims in small_shapes() {
        for minor_to_major in permutations(dims.len()) {
            for tiles in &tile_sets {
                if tiles.iter().any(|t| t.len() > dims.len() + 2) {
                    continue;
                }
                for tail_padding in [1, 4] {
                    layouts.push(RefLayout {
                        dims: dims.clone(),
                        minor_to_major: minor_to_major.clone(),
                        padded: None,
                        tiles: tiles.clone(),
                        tail_padding,
                    });
                }
            }
            layouts.push(RefLayout {
                padded: Some(dims.iter().map(|d| d + 1).collect()),
                dims: dims.clone(),
                minor_to_major,
                tiles: vec![],
                tail_padding: 1,
            });
        }
    }
    layouts
}

/// Every permutation of `0..n` (every `minor_to_major` of rank `n`).
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Random small layouts: rank 0-4, sizes 0-5, any `minor_to_major`, 0-3 tiles of 1 to
/// rank+2 entries (a fifth of them `*`), tail padding 1-4, and legacy padding, which
/// goes with tiles only when `padding_with_tiles` (XLA never had both; the engine
/// copes).
pub fn arb_layout(padding_with_tiles: bool) -> impl Strategy<Value = RefLayout> {
    (0usize..=4)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(0u64..6, rank),
                Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec(
                    proptest::collection::vec(
                        prop_oneof![4 => (1u64..6).prop_map(Some), 1 => Just(None)],
                        1..=rank + 2,
                    ),
                    0..=3,
                ),
                proptest::option::of(proptest::collection::vec(0u64..3, rank)),
                1u64..5,
            )
        })
        .prop_map(move |(dims, minor_to_major, tiles, pad, tail_padding)| {
            let padded = pad
                .filter(|_| padding_with_tiles || tiles.is_empty())
                .map(|p| dims.iter().zip(p).map(|(d, x)| d + x).collect());
            RefLayout {
                dims,
                minor_to_major,
                padded,
                tiles,
                tail_padding,
            }
        })
}
