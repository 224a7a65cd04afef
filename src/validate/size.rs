//! Checked size arithmetic behind the [`ArrayShape`](crate::ArrayShape) guarantees.
//!
//! Every function returns `None` when a value would exceed `i64::MAX`.

use crate::layout::{Tile, TileDim};
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
pub(crate) fn tiled_extents(physical: &[u64], tiles: &[Tile]) -> Option<Vec<u64>> {
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
    fn overflow_is_detected() {
        assert_eq!(tiled_extents(&[LIMIT], &[tile(&[2])]), None);
        assert_eq!(round_up(LIMIT, 2), None);
        assert_eq!(nonzero_product([0, 1 << 40, 1 << 40]), None);
        assert_eq!(nonzero_product([0, 1 << 31, 1 << 31]), Some(1 << 62));
    }
}
