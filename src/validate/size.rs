//! Checked size arithmetic behind the [`ArrayShape`](crate::ArrayShape) guarantees.
//!
//! Every function returns `None` when a value would exceed `i64::MAX`.

use crate::layout::{tile_makes, Tile, TileDim};
use crate::shape::DimSize;

/// `i64::MAX` as a `u64`.
pub(crate) const LIMIT: u64 = i64::MAX as u64;

/// `a * b` if it stays within `i64::MAX`.
pub(crate) fn mul(a: u64, b: u64) -> Option<u64> {
    a.checked_mul(b).filter(|&p| p <= LIMIT)
}

/// The product of the non-zero values, if it stays within `i64::MAX` (so does every
/// partial product, hence every stride).
pub(crate) fn nonzero_product(values: impl IntoIterator<Item = u64>) -> Option<u64> {
    values.into_iter().filter(|&v| v != 0).try_fold(1u64, mul)
}

/// The product of the values in order, if no partial product exceeds `i64::MAX` (XLA's
/// rule: `[2^40, 2^40, 0]` overflows, `[0, 2^40, 2^40]` does not).
pub(crate) fn product(values: impl IntoIterator<Item = u64>) -> Option<u64> {
    values.into_iter().try_fold(1u64, mul)
}

/// The number of elements: the product of sizes and bounds; `None` when a dimension is
/// unbounded or the product exceeds `i64::MAX`.
pub(crate) fn element_count(dimensions: &[DimSize]) -> Option<u64> {
    dimensions
        .iter()
        .try_fold(1u64, |acc, d| mul(acc, d.bound()?))
}

/// Whether `n` elements fit in `i64::MAX` bytes (`byte_width` each) and, when
/// `element_size_in_bits` is set, in `i64::MAX` bits. The error names the unit.
pub(crate) fn check_storage(
    n: u64,
    byte_width: u64,
    element_size_in_bits: u64,
) -> Result<(), &'static str> {
    mul(n, byte_width).ok_or("bytes")?;
    if element_size_in_bits != 0 {
        mul(n, element_size_in_bits).ok_or("bits")?;
    }
    Ok(())
}

/// Applies every tile in turn to `physical` (dimension sizes, most major first) and
/// returns the final extents, or `None` if an extent exceeds `i64::MAX`.
///
/// A tile applies to the most minor suffix of the shape so far (leading 1s are added
/// when it has more dimensions); a dimension `d` with tile size `t` becomes
/// `ceil(d/t)` (outer, kept in place) and `t` (inner, moved to the minor end, in
/// order). A combine entry multiplies the next more minor suffix dimension by its size
/// and disappears; with nothing more minor it stays as one outer dimension.
///
/// Work and memory are linear in `physical.len()` plus the total number of tile entries.
/// The tests hold [`tiled_product`] to the product of these extents.
#[cfg(test)]
fn tiled_extents(physical: &[u64], tiles: &[Tile]) -> Option<Vec<u64>> {
    let mut shape = physical.to_vec();
    for tile in tiles {
        let dims = tile.dimensions();
        let r = dims.len();
        if r > shape.len() {
            let mut padded = vec![1u64; r - shape.len()];
            padded.extend_from_slice(&shape);
            shape = padded;
        }
        let split = shape.len() - r;
        let suffix = shape.split_off(split);
        let mut inner = Vec::with_capacity(r);
        let mut carry: u64 = 1; // product of combined (more major) dimensions
        for (j, (&d, &t)) in suffix.iter().zip(dims).enumerate() {
            let d = mul(d, carry)?;
            carry = 1;
            match t {
                TileDim::Combine if j + 1 < r => carry = d,
                TileDim::Combine => shape.push(d),
                TileDim::Size(t) => {
                    let t = t.get();
                    if t > LIMIT {
                        return None;
                    }
                    let outer = d.div_ceil(t);
                    // The padded extent outer * t must fit as well.
                    mul(outer, t)?;
                    shape.push(outer);
                    inner.push(t);
                }
            }
        }
        shape.extend(inner);
    }
    Some(shape)
}

/// The product of the extents [`tiled_extents`] gives for the physical dimensions
/// `physical(0)` (most major) to `physical(rank - 1)`, all at least 1, if it stays
/// within `i64::MAX`.
///
/// The shape is made one tile at a time as [`tiled_extents`] makes it, but of each
/// shape only the last dimensions that later tiles read are held; the others are
/// multiplied in as they are made. So an array of millions of dimensions, or under a
/// tile of millions of entries, is checked without a list of them. With every extent
/// at least 1, a product that fits means every partial product fits, so the order of
/// the multiplications does not matter.
pub(crate) fn tiled_product(
    rank: usize,
    physical: impl Fn(usize) -> u64,
    tiles: &[Tile],
) -> Option<u64> {
    // How many of the last dimensions of the shape before tile `k` the tiles from `k`
    // on read: a tile reads as many as it has entries, and the tiles after it read
    // what it makes and, past that, the dimensions before those it read.
    let mut needs = vec![0usize; tiles.len() + 1];
    for (k, tile) in tiles.iter().enumerate().rev() {
        let (outer, inner) = made_by(tile);
        needs[k] = tile.dimensions().len() + needs[k + 1].saturating_sub(outer + inner);
    }
    let mut total = 1u64;
    let mut len = rank;
    // The shape's dimensions from `held_from` on; `None` before the first tile, when
    // the shape is `physical`. Those before `held_from` are multiplied in already.
    let mut held: Option<Vec<u64>> = None;
    let mut held_from = 0;
    for (k, tile) in tiles.iter().enumerate() {
        let at = |i: usize| dimension_at(&held, held_from, &physical, i);
        let dims = tile.dimensions();
        let (outer, inner) = made_by(tile);
        // The tile covers the last `dims.len()` dimensions, with 1s put before the
        // shape when it is shorter.
        let cover = len.saturating_sub(dims.len());
        let padding = dims.len().saturating_sub(len);
        let made_len = cover + outer + inner;
        let mut next = Made {
            keep_from: made_len.saturating_sub(needs[k + 1]),
            kept: Vec::new(),
            total,
        };
        for i in held_from..cover {
            next.place(i, at(i))?;
        }
        let mut inners = Made {
            keep_from: next.keep_from,
            kept: Vec::new(),
            total: 1,
        };
        let read = std::iter::repeat_n(1, padding).chain((cover..len).map(&at));
        let (mut outer_at, mut inner_at) = (cover, cover + outer);
        let mut carry = 1u64;
        for (j, (d, &t)) in read.zip(dims).enumerate() {
            let d = mul(d, carry)?;
            carry = 1;
            match t {
                TileDim::Combine if j + 1 < dims.len() => carry = d,
                TileDim::Combine => {
                    next.place(outer_at, d)?;
                    outer_at += 1;
                }
                TileDim::Size(t) => {
                    let t = t.get();
                    if t > LIMIT {
                        return None;
                    }
                    next.place(outer_at, d.div_ceil(t))?;
                    // The padded extent outer * t must fit as well.
                    mul(d.div_ceil(t), t)?;
                    inners.place(inner_at, t)?;
                    outer_at += 1;
                    inner_at += 1;
                }
            }
        }
        total = mul(next.total, inners.total)?;
        next.kept.append(&mut inners.kept);
        held = Some(next.kept);
        held_from = next.keep_from;
        len = made_len;
    }
    for i in held_from..len {
        total = mul(total, dimension_at(&held, held_from, &physical, i))?;
    }
    Some(total)
}

/// Dimension `i` of the shape [`tiled_product`] has made so far: `held` holds it from
/// `held_from` on, or the shape is still `physical` (no list held).
fn dimension_at(
    held: &Option<Vec<u64>>,
    held_from: usize,
    physical: &impl Fn(usize) -> u64,
    i: usize,
) -> u64 {
    match held {
        None => physical(i),
        Some(held) => held[i - held_from],
    }
}

/// What [`tiled_product`] makes of one tile: the dimensions from `keep_from` on are
/// kept, in order; the others are multiplied into `total`.
struct Made {
    keep_from: usize,
    kept: Vec<u64>,
    total: u64,
}

impl Made {
    /// The made dimension at `position` is `value`; `None` when the product overflows.
    fn place(&mut self, position: usize, value: u64) -> Option<()> {
        if position >= self.keep_from {
            self.kept.push(value);
        } else {
            self.total = mul(self.total, value)?;
        }
        Some(())
    }
}

/// How many outer and inner dimensions a tile makes ([`tile_makes`]).
fn made_by(tile: &Tile) -> (usize, usize) {
    tile_makes(tile.dimensions().iter().map(|d| *d == TileDim::Combine))
}

/// `n` rounded up to a multiple of `alignment` (>= 1), if it stays within `i64::MAX`.
pub(crate) fn round_up(n: u64, alignment: u64) -> Option<u64> {
    let alignment = alignment.max(1);
    mul(n.div_ceil(alignment), alignment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU64;

    fn tile(dims: &[i64]) -> Tile {
        Tile {
            dimensions: dims
                .iter()
                .map(|&d| match NonZeroU64::new(d as u64) {
                    Some(n) if d > 0 => TileDim::Size(n),
                    _ => TileDim::Combine,
                })
                .collect(),
        }
    }

    #[test]
    fn tiled_extents_follow_the_tiling_doc() {
        // docs/tiled_layout.md: F32[3,5]{1,0:T(2,2)} allocates 24 elements.
        let e = tiled_extents(&[3, 5], &[tile(&[2, 2])]).unwrap();
        assert_eq!(e, vec![2, 3, 2, 2]);
        // bf16[3,5]{1,0:T(8,128)(2,1)}: 1024 elements (2048 bytes).
        let e = tiled_extents(&[3, 5], &[tile(&[8, 128]), tile(&[2, 1])]).unwrap();
        assert_eq!(e.iter().product::<u64>(), 1024);
        // f32[5]{0:T(8,128)}: tile rank above shape rank, 4096 bytes = 1024 elements.
        let e = tiled_extents(&[5], &[tile(&[8, 128])]).unwrap();
        assert_eq!(e.iter().product::<u64>(), 1024);
        // Draft doc: 8x8 T(2,4)(2,1,1,1) -> (2,2,2,4,2,1,1,1).
        let e = tiled_extents(&[8, 8], &[tile(&[2, 4]), tile(&[2, 1, 1, 1])]).unwrap();
        assert_eq!(e, vec![2, 2, 2, 4, 2, 1, 1, 1]);
        // Doc: F32[2,7,8,11,10] with (*,*,2,*,3) is F32[112,110] tiled by (2,3).
        let e = tiled_extents(
            &[2, 7, 8, 11, 10],
            &[tile(&[i64::MIN, i64::MIN, 2, i64::MIN, 3])],
        )
        .unwrap();
        assert_eq!(e, vec![56, 37, 2, 3]);
    }

    #[test]
    fn tiled_product_holds_only_what_the_tiles_reach() {
        // Every case is the product of `tiled_extents` over the whole shape, which
        // `tiled_product` holds only a part of: 1s and 3s put before the shape, tiles
        // longer and shorter than it, a later tile reaching past the earlier ones,
        // `*` entries last and before others.
        let cases: [(&[u64], &[&[i64]]); 10] = [
            (&[3], &[&[2], &[1, 1, 1, 1, 1]]),
            (&[4, 6], &[&[i64::MIN, i64::MIN]]),
            (&[4, 6, 5], &[&[i64::MIN, 2], &[3, i64::MIN]]),
            (&[3, 5], &[&[2, 2]]),
            (&[3, 5], &[&[8, 128], &[2, 1]]),
            (&[5], &[&[8, 128]]),
            (&[8, 8], &[&[2, 4], &[2, 1, 1, 1]]),
            (&[2, 7, 8, 11, 10], &[&[i64::MIN, i64::MIN, 2, i64::MIN, 3]]),
            (&[3, 1, 7, 9], &[&[2], &[3, 4, 5]]),
            (
                &[3, 1, 7, 9],
                &[&[i64::MIN], &[i64::MIN, 2], &[5, 1, 1, 1, 1, 1]],
            ),
        ];
        for (dims, tiles) in cases {
            let tiles: Vec<Tile> = tiles.iter().map(|t| tile(t)).collect();
            for before in [&[][..], &[1, 1, 1], &[3, 1, 3]] {
                let physical: Vec<u64> = before.iter().chain(dims).copied().collect();
                let whole = tiled_extents(&physical, &tiles).and_then(product);
                let got = tiled_product(physical.len(), |p| physical[p], &tiles);
                assert_eq!(got, whole, "{physical:?} {tiles:?}");
            }
        }
        // Shapes and tiles drawn at random: sizes 1 to 5 and some near 2^31 (tile
        // entries 2^40) so that products overflow, ranks 0 to 5, up to four tiles of
        // one to five entries each, `*` among them.
        let seed = std::cell::Cell::new(0x2545_f491_4f6c_dd1du64);
        let draw = |n: u64| {
            let mut x = seed.get();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            seed.set(x);
            x % n
        };
        for _ in 0..20_000 {
            let size = |large: u64| match draw(10) {
                0 => large + draw(3),
                _ => 1 + draw(5),
            };
            let physical: Vec<u64> = (0..draw(6)).map(|_| size(1 << 31)).collect();
            let tiles: Vec<Tile> = (0..draw(5))
                .map(|_| {
                    let entries: Vec<i64> = (0..1 + draw(5))
                        .map(|_| match draw(4) {
                            0 => i64::MIN,
                            _ => size(1 << 40) as i64,
                        })
                        .collect();
                    tile(&entries)
                })
                .collect();
            let whole = tiled_extents(&physical, &tiles).and_then(product);
            let got = tiled_product(physical.len(), |p| physical[p], &tiles);
            assert_eq!(got, whole, "{physical:?} {tiles:?}");
        }
        assert_eq!(tiled_product(2, |_| LIMIT, &[tile(&[2])]), None);
        assert_eq!(tiled_product(2, |p| [LIMIT, 2][p], &[tile(&[1])]), None);
    }

    #[test]
    fn overflow_is_detected() {
        assert_eq!(tiled_extents(&[LIMIT], &[tile(&[2])]), None);
        assert_eq!(round_up(LIMIT, 2), None);
        assert_eq!(nonzero_product([0, 1 << 40, 1 << 40]), None);
        assert_eq!(nonzero_product([0, 1 << 31, 1 << 31]), Some(1 << 62));
    }
}
