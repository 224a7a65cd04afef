//! The layout indexing engine: where each element of an array lives in linear memory,
//! and how big the buffer is.
//!
//! A [`LayoutPlan`] is compiled once per validated array shape and then answers, with
//! plain integer arithmetic that cannot overflow:
//!
//! - multi-dimensional index ↔ linear index ([`LayoutPlan::linear_index`],
//!   [`LayoutPlan::multi_index`]), with bit offsets for sub-byte elements;
//! - sizes: [`element_count`](LayoutPlan::element_count),
//!   [`allocated_bytes`](LayoutPlan::allocated_bytes), [`data_bytes`](LayoutPlan::data_bytes),
//!   and XLA's own [`xla_byte_size_of`](LayoutPlan::xla_byte_size_of),
//!   [`xla_array_size`](LayoutPlan::xla_array_size),
//!   [`xla_array_data_size`](LayoutPlan::xla_array_data_size);
//! - strides for layouts that have them, and the reverse ([`layout_for_strides`]);
//! - iteration in logical order ([`LayoutPlan::logical_order`]) and in memory order
//!   ([`LayoutPlan::physical_order`]), stepping incrementally;
//! - XLA's `IndexUtil` helpers ([`LayoutPlan::bump_indices`],
//!   [`LayoutPlan::index_in_bounds`], [`compare_indices`]).
//!
//! # What a linear index means
//!
//! Linear indices count *slots* of one element each, from the start of the buffer. The
//! physical shape is the logical shape in `minor_to_major` order, most major first, each
//! dimension at its legacy padded size if the layout has `padded_dimensions`. The tiles
//! are then applied one after the other, each to a suffix of the already tiled shape, as
//! `docs/tiled_layout.md` describes and XLA's `LayoutUtil::LinearIndexForNestedTiling`
//! implements:
//!
//! - a dimension of size `d` under tile entry `t` becomes `⌈d/t⌉` tiles (index `e / t`)
//!   and `t` positions in the tile (index `e mod t`); tile indices come before the
//!   positions in the tile, both row-major; partial edge tiles are padded;
//! - a `*` entry merges its dimension into the next more minor one (sizes multiply);
//!   a `*` as a tile's most minor entry has nothing to merge into and leaves its
//!   dimension untiled;
//! - a tile with more entries than the shape has dimensions sees leading dimensions of
//!   size 1 (as XLA's `ShapeUtil::ArraySize` does).
//!
//! The final shape is laid out row-major. With tiles, the slot count is then rounded up
//! to `tail_padding_alignment_in_elements`. Without tiles that alignment is ignored, as
//! in `ShapeUtil::ArraySize`.
//!
//! ```
//! # use xla_shape::{index::LayoutPlan, Shape};
//! // tiled_layout.md, figure 1: f32[3,5]{1,0:T(2,2)}; element (2,3) is at 17.
//! let shape: Shape = "f32[3,5]{1,0:T(2,2)}".parse().unwrap();
//! let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
//! assert_eq!(plan.linear_index(&[2, 3]).unwrap(), 17);
//! assert_eq!(plan.allocated_bytes(), 96);
//! ```
//!
//! # Where XLA's own functions disagree
//!
//! XLA has three index functions that differ on tiled layouts: `IndexUtil` ignores
//! tiles, `LayoutUtil::LinearIndex` uses only the first tile (and returns `index[0]` for
//! rank 1 whatever the tiling), and the nested-tiling functions use all tiles. This
//! engine follows the nested tiling everywhere. The sizes that XLA computes from the
//! first tile only are available under their XLA names, [`LayoutPlan::xla_array_size`]
//! and [`LayoutPlan::xla_array_data_size`]; they differ from
//! [`allocated_bytes`](LayoutPlan::allocated_bytes) and [`data_bytes`](LayoutPlan::data_bytes)
//! only when a later tile adds padding (e.g. `T(3)(2)`).
//!
//! # Sub-byte elements
//!
//! An element takes `element_size_in_bits` bits when the layout sets `E(n)`, and the
//! type's byte width × 8 otherwise (so `s4` without `E(4)` takes a whole byte, as in
//! XLA). Element `i` occupies bits `[i·n, (i+1)·n)` of the buffer, counting each byte's
//! bits from the least significant (XLA's `PackIntN` order): with `E(4)`, slot 0 is the
//! low nibble of byte 0. See [`LayoutPlan::bit_offset`].
//!
//! # Dynamic and unbounded dimensions
//!
//! A bounded dynamic dimension is indexed and allocated at its bound, as XLA allocates
//! it. An unbounded dimension (`?`) has no size: building a plan for it fails with
//! [`PlanError::Unbounded`].
//!
//! # How it works
//!
//! The plan compiles the layout into flat *digits*, each a `(divisor, modulus, stride)`
//! read of one logical index (or of a combination of indices merged by `*`), so that a
//! linear index is a sum of digit × stride; powers of two become shifts and masks. The
//! few layouts that are not sums of digits (a tile that neither divides nor covers the
//! previous one, as in `T(4)(3)`, or a `*` over an already cut dimension) run the tile
//! stages one by one instead. Both are checked against an independent, literal
//! transcription of XLA's staged algorithm (`tests/reference/`).

mod compile;
mod digits;
mod iter;
pub(crate) mod spec;
mod squeeze;
mod strides;

use std::cmp::Ordering;
use std::fmt;

use compile::{compile_staged, Staged};
use digits::{compile_digits, AxisKind, Digits};
use spec::Spec;
use squeeze::Squeeze;

use crate::shape::ArrayShape;

pub use iter::{LogicalOrder, PhysicalOrder};
pub use strides::{layout_for_byte_strides, layout_for_strides, StrideError, StridedLayout};

/// Why a plan cannot be built for a (validated) shape.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// Dimension `dim` is unbounded (`?`): it has no size to index or allocate.
    Unbounded {
        /// The logical dimension.
        dim: usize,
    },
    /// The tiled buffer has more than 2^64 bits (only tile sizes far beyond the shape
    /// can do this: validation already bounds the shape itself).
    Overflow,
    /// The layout's tiles would make a plan of more than 2,097,152 sizes in all: each
    /// tile keeps the shape before it, which grows with each tile that cuts it further
    /// (thousands of tiles; XLA writes one to three).
    TooLarge {
        /// How many tiles the layout has.
        tiles: usize,
    },
    /// The shape breaks an invariant that validation guarantees; cannot happen for a
    /// validated shape.
    Malformed(&'static str),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Unbounded { dim } => write!(
                f,
                "dimensions[{dim}]: dimension is unbounded ('?'): it has no size to index or allocate"
            ),
            PlanError::Overflow => write!(f, "layout.tiles: the tiled buffer would hold more than 2^64 bits"),
            PlanError::TooLarge { tiles } => write!(
                f,
                "layout.tiles: {tiles} tiles would make a layout plan of more than 2097152 sizes"
            ),
            PlanError::Malformed(what) => write!(f, "shape is not validated: {what}"),
        }
    }
}

impl std::error::Error for PlanError {}

/// A caller-supplied index that does not fit the shape.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IndexError {
    /// The index has `got` coordinates, the shape `rank` dimensions.
    WrongRank {
        /// Coordinates given.
        got: usize,
        /// Dimensions of the shape.
        rank: usize,
    },
    /// Coordinate `index` of dimension `dim` is not below the dimension's `size`.
    OutOfBounds {
        /// The logical dimension.
        dim: usize,
        /// The coordinate given.
        index: u64,
        /// The dimension's size (its bound, if dynamic).
        size: u64,
    },
    /// Linear index `linear` is not below the buffer's `size` in elements.
    LinearOutOfRange {
        /// The linear index given.
        linear: u64,
        /// Slots in the buffer.
        size: u64,
    },
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::WrongRank { got, rank } => write!(
                f,
                "index has {got} coordinates, but the shape has {rank} dimensions"
            ),
            IndexError::OutOfBounds { dim, index, size } => write!(
                f,
                "index {index} is out of bounds for dimension {dim} of size {size}"
            ),
            IndexError::LinearOutOfRange { linear, size } => write!(
                f,
                "linear index {linear} is beyond the buffer of {size} elements"
            ),
        }
    }
}

impl std::error::Error for IndexError {}

/// One digit of the fast path: `((index[source] >> shift) & mask) * stride` when
/// `pow2`, else `((index[source] / div) % modulus) * stride`.
#[derive(Clone, Copy, Debug)]
struct FastDigit {
    source: usize,
    shift: u32,
    mask: u64,
    div: u64,
    modulus: u64,
    stride: u64,
    pow2: bool,
}

impl FastDigit {
    #[inline]
    fn eval(&self, v: u64) -> u64 {
        let digit = if self.pow2 {
            (v >> self.shift) & self.mask
        } else {
            (v / self.div) % self.modulus
        };
        digit * self.stride
    }
}

/// The compiled indexing plan of one array shape and its layout.
///
/// Build it once per shape, then index, size, iterate. Every method on a built plan is
/// free of overflow and panics; caller-supplied indices are checked and refused with an
/// [`IndexError`].
#[derive(Clone, Debug)]
pub struct LayoutPlan {
    spec: Spec,
    staged: Staged,
    digits: Option<Digits>,
    /// The digit axes ready to evaluate; empty when `strided` indexes.
    fast: Vec<FastDigit>,
    all_pow2: bool,
    /// Per logical dimension, its stride, when every dimension is one plain digit.
    strided: Option<Vec<u64>>,
    element_count: u64,
    element_bits: u64,
    allocated: u64,
    /// At ranks past any real shape's, the plan is built over the dimensions that take
    /// part in it (see `squeeze.rs`): every dimension's size and order are kept here.
    squeeze: Option<Box<Squeeze>>,
}

/// The product of `dims`, or [`PlanError::Overflow`]; 0 when one is 0, in whatever
/// order (`f32[4294967296,4294967296,0]` has no elements, not too many).
fn element_count(dims: &[u64]) -> Result<u64, PlanError> {
    if dims.contains(&0) {
        return Ok(0);
    }
    dims.iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .ok_or(PlanError::Overflow)
}

/// Each logical dimension's stride when every digit axis of a plan of plain logical
/// indices is one whole dimension (`None` when a dimension is cut into digits or has
/// two); a dimension without an axis (of size 1 or 0) gets 0.
fn plain_strides(digits: &Digits, rank: usize) -> Option<Vec<u64>> {
    let mut strides = vec![0u64; rank];
    let mut seen = vec![false; rank];
    for axis in &digits.axes {
        if let AxisKind::Digit {
            source,
            div,
            modulus,
        } = axis.kind
        {
            match (strides.get_mut(source), seen.get_mut(source)) {
                (Some(s), Some(seen)) if !*seen && div == 1 && modulus.is_none() => {
                    *s = axis.stride;
                    *seen = true;
                }
                _ => return None,
            }
        }
    }
    Some(strides)
}

impl LayoutPlan {
    /// Compiles the plan of a validated array shape. A shape without a layout gets XLA's
    /// default layout (`minor_to_major` = `{rank-1, …, 0}`).
    ///
    /// ```
    /// # use xla_shape::{index::LayoutPlan, proto, ArrayShape};
    /// let proto = proto::ShapeProto {
    ///     element_type: proto::PrimitiveType::F32 as i32,
    ///     dimensions: vec![10, 20],
    ///     layout: Some(Box::new(proto::LayoutProto { minor_to_major: vec![0, 1], ..Default::default() })),
    ///     ..Default::default()
    /// };
    /// let shape = ArrayShape::try_from(&proto).unwrap();
    /// let plan = LayoutPlan::new(&shape).unwrap();
    /// // index_util_test: f32[10,20]{0,1}, [3,5] is at 3 + 5·10.
    /// assert_eq!(plan.linear_index(&[3, 5]).unwrap(), 53);
    /// assert_eq!(plan.multi_index(53).unwrap(), Some(vec![3, 5]));
    /// ```
    ///
    /// # Errors
    /// [`PlanError::Unbounded`] when a dimension is unbounded (`?`).
    pub fn new(shape: &ArrayShape) -> Result<Self, PlanError> {
        Self::new_keeping(shape, squeeze::KEEP_ALL_UP_TO)
    }

    /// [`LayoutPlan::new`], leaving dimensions out only above rank `keep_all_up_to`.
    pub(crate) fn new_keeping(
        shape: &ArrayShape,
        keep_all_up_to: usize,
    ) -> Result<Self, PlanError> {
        let (spec, squeeze) = squeeze::spec_of(shape, keep_all_up_to);
        LayoutPlan::from_parts(spec, squeeze)
    }

    /// [`LayoutPlan::allocated_bytes`] of `shape`'s plan, without the plan: only the
    /// shapes its tiles make are computed, not the digits and strides that index and
    /// iterate (a listing asks the bytes of every array, and at the largest rank the
    /// whole plan took 80 MB).
    ///
    /// # Errors
    /// Those of [`LayoutPlan::new`].
    pub fn allocated_bytes_of(shape: &ArrayShape) -> Result<u64, PlanError> {
        let (spec, squeeze) = squeeze::spec_of(shape, squeeze::KEEP_ALL_UP_TO);
        let staged = compile_staged(&spec).map_err(|e| unsqueezed(e, squeeze.as_deref()))?;
        element_count(&staged.dims)?;
        let (allocated, element_bits) = Self::allocated(&spec, &staged)?;
        Ok(bits_to_bytes(allocated, element_bits))
    }

    /// The slots allocated (tail padding included) and the bits of an element.
    fn allocated(spec: &Spec, staged: &Staged) -> Result<(u64, u64), PlanError> {
        let element_bits = spec.element_bits();
        let allocated = if spec.tiles.is_empty() {
            staged.grid
        } else {
            staged
                .grid
                .checked_next_multiple_of(spec.tail_padding)
                .ok_or(PlanError::Overflow)?
        };
        // The byte size fits in a u64 (validation proves it fits in an i64); bit
        // offsets may not (8 × i64::MAX > u64::MAX), so they are u128.
        if u64::try_from((u128::from(allocated) * u128::from(element_bits)).div_ceil(8)).is_err() {
            return Err(PlanError::Overflow);
        }
        Ok((allocated, element_bits))
    }

    /// Compiles a plan from the engine's input facts.
    #[cfg(test)]
    pub(crate) fn from_spec(spec: Spec) -> Result<Self, PlanError> {
        Self::from_parts(spec, None)
    }

    /// Compiles a plan from the engine's input facts, over the dimensions `squeeze`
    /// keeps when there is one.
    fn from_parts(spec: Spec, squeeze: Option<Box<Squeeze>>) -> Result<Self, PlanError> {
        let staged = compile_staged(&spec).map_err(|e| unsqueezed(e, squeeze.as_deref()))?;
        let element_count = element_count(&staged.dims)?;
        let (allocated, element_bits) = Self::allocated(&spec, &staged)?;
        let digits = compile_digits(&staged);
        // Per logical dimension, its stride, when every axis is one whole logical
        // dimension (every untiled layout): indexing needs nothing else then.
        // (Not for a plan that leaves dimensions out: the inline path of
        // `linear_index` takes whole indices.)
        let strided = digits
            .as_ref()
            .filter(|d| d.trivial && squeeze.is_none())
            .and_then(|d| plain_strides(d, staged.dims.len()));
        // Otherwise, each digit axis ready to evaluate.
        let mut fast = Vec::new();
        if let (Some(d), None) = (&digits, &strided) {
            fast.reserve_exact(d.axes.len());
            for axis in &d.axes {
                if let AxisKind::Digit {
                    source,
                    div,
                    modulus,
                } = axis.kind
                {
                    let modulus = modulus.unwrap_or(u64::MAX);
                    let pow2 =
                        div.is_power_of_two() && (modulus == u64::MAX || modulus.is_power_of_two());
                    fast.push(FastDigit {
                        source,
                        shift: div.trailing_zeros(),
                        mask: if modulus == u64::MAX {
                            u64::MAX
                        } else {
                            modulus.wrapping_sub(1)
                        },
                        div,
                        modulus,
                        stride: axis.stride,
                        pow2,
                    });
                }
            }
        }
        let all_pow2 = fast.iter().all(|d| d.pow2);
        Ok(LayoutPlan {
            spec,
            staged,
            digits,
            fast,
            all_pow2,
            strided,
            element_count,
            element_bits,
            allocated,
            squeeze,
        })
    }

    /// The logical dimension sizes (bounds for dynamic dimensions).
    pub fn dimensions(&self) -> &[u64] {
        match &self.squeeze {
            Some(s) => &s.dims,
            None => &self.staged.dims,
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dimensions().len()
    }

    /// The sizes of the dimensions the plan is built over (all of them unless it
    /// leaves some out); internal indices have one coordinate each.
    pub(crate) fn inner_dims(&self) -> &[u64] {
        &self.staged.dims
    }

    /// The logical dimension of each of the plan's own, when it leaves some out.
    pub(crate) fn squeeze(&self) -> Option<&Squeeze> {
        self.squeeze.as_deref()
    }

    /// Every logical dimension, most minor first.
    fn full_minor_to_major(&self) -> impl Iterator<Item = usize> + '_ {
        match &self.squeeze {
            Some(s) => OneOf::Part(s.minor_to_major()),
            None => OneOf::Whole(self.spec.minor_to_major.iter().copied()),
        }
    }

    /// The plan's own dimension for logical dimension `k`, if it has it.
    fn inner_of(&self, k: usize) -> Option<usize> {
        match &self.squeeze {
            Some(s) => s.inner(k),
            None => Some(k),
        }
    }

    /// Whether the plan runs on flat digits (the fast path). Layouts that are not sums
    /// of digits (e.g. `T(4)(3)`) run the tile stages one by one.
    pub fn is_digit_plan(&self) -> bool {
        self.digits.is_some()
    }

    // ---------------------------------------------------------------- indices

    /// Checks a multi-dimensional index against the shape.
    ///
    /// # Errors
    /// [`IndexError::WrongRank`] or [`IndexError::OutOfBounds`].
    pub fn check_index(&self, index: &[u64]) -> Result<(), IndexError> {
        let dims = self.dimensions();
        if index.len() != dims.len() {
            return Err(IndexError::WrongRank {
                got: index.len(),
                rank: dims.len(),
            });
        }
        for (dim, (&i, &size)) in index.iter().zip(dims).enumerate() {
            if i >= size {
                return Err(IndexError::OutOfBounds {
                    dim,
                    index: i,
                    size,
                });
            }
        }
        Ok(())
    }

    /// The linear index (in elements, from the start of the buffer) of an element.
    ///
    /// # Post-conditions
    /// For every in-bounds index: the result is below
    /// [`allocated_elements`](Self::allocated_elements), distinct indices give distinct
    /// results, and [`multi_index`](Self::multi_index) of the result is the index.
    ///
    /// ```
    /// # use xla_shape::{index::LayoutPlan, Shape};
    /// // tiled_layout.md, figure 2: 4x8 with T(2,4)(2,1).
    /// let shape: Shape = "bf16[4,8]{1,0:T(2,4)(2,1)}".parse().unwrap();
    /// let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
    /// let row = |i| (0..8).map(|j| plan.linear_index(&[i, j]).unwrap()).collect::<Vec<_>>();
    /// assert_eq!(row(0), [0, 2, 4, 6, 8, 10, 12, 14]);
    /// assert_eq!(row(1), [1, 3, 5, 7, 9, 11, 13, 15]);
    /// assert_eq!(row(2), [16, 18, 20, 22, 24, 26, 28, 30]);
    /// assert_eq!(row(3), [17, 19, 21, 23, 25, 27, 29, 31]);
    /// ```
    ///
    /// # Errors
    /// [`IndexError::WrongRank`] or [`IndexError::OutOfBounds`].
    #[inline(always)]
    pub fn linear_index(&self, index: &[u64]) -> Result<u64, IndexError> {
        // Untiled layouts (one stride per dimension) inline at the caller: one pass of
        // bounds checks and multiply-adds. Everything else is out of line.
        if let Some(strides) = &self.strided {
            if index.len() == self.staged.dims.len() {
                // Wrapping only matters when out of bounds, and then the sum is discarded.
                let mut outside = false;
                let mut slot: u64 = 0;
                for ((&i, &d), &s) in index.iter().zip(&self.staged.dims).zip(strides) {
                    outside |= i >= d;
                    slot = slot.wrapping_add(i.wrapping_mul(s));
                }
                if !outside {
                    return Ok(slot);
                }
            }
        }
        self.linear_index_general(index)
    }

    /// [`LayoutPlan::linear_index`] past its untiled in-bounds case.
    #[inline(never)]
    fn linear_index_general(&self, index: &[u64]) -> Result<u64, IndexError> {
        if let Some(s) = &self.squeeze {
            return self.linear_index_of(s, index);
        }
        if index.len() != self.staged.dims.len() {
            return Err(self.out_of_bounds(index));
        }
        let outside = index.iter().zip(&self.staged.dims).any(|(&i, &d)| i >= d);
        if outside {
            return Err(self.out_of_bounds(index));
        }
        // In bounds: a strided plan never gets here (the inline case took it).
        Ok(self.linear_checked(index))
    }

    /// [`LayoutPlan::linear_index`] of a plan that leaves dimensions out.
    #[cold]
    #[inline(never)]
    fn linear_index_of(&self, s: &Squeeze, index: &[u64]) -> Result<u64, IndexError> {
        self.check_index(index)?;
        Ok(self.linear_checked(&s.gather(index)))
    }

    #[cold]
    fn out_of_bounds(&self, index: &[u64]) -> IndexError {
        self.check_index(index)
            .err()
            .unwrap_or(IndexError::WrongRank {
                got: index.len(),
                rank: self.rank(),
            })
    }

    /// The bit offset of an element from the start of the buffer: linear index ×
    /// element bits. Within a byte, bits count from the least significant. A `u128`,
    /// as the bit offsets of a buffer of up to `i64::MAX` bytes need 66 bits.
    ///
    /// # Errors
    /// As [`linear_index`](Self::linear_index).
    pub fn bit_offset(&self, index: &[u64]) -> Result<u128, IndexError> {
        // A u128: a validated shape's byte size fits in an i64, its bit size may not
        // fit in a u64.
        Ok(u128::from(self.linear_index(index)?) * u128::from(self.element_bits))
    }

    /// The byte offset of an element, when elements are whole bytes (`None` for
    /// sub-byte or odd-width elements: use [`bit_offset`](Self::bit_offset)).
    ///
    /// # Errors
    /// As [`linear_index`](Self::linear_index).
    pub fn byte_offset(&self, index: &[u64]) -> Result<Option<u64>, IndexError> {
        let slot = self.linear_index(index)?;
        Ok((self.element_bits % 8 == 0).then(|| slot * (self.element_bits / 8)))
    }

    /// Linear index of an index already checked to be in bounds, with one coordinate
    /// for each of [`inner_dims`](Self::inner_dims).
    #[inline]
    pub(crate) fn linear_checked(&self, index: &[u64]) -> u64 {
        if let Some(strides) = &self.strided {
            return index.iter().zip(strides).map(|(&i, &s)| i * s).sum();
        }
        match &self.digits {
            Some(d) if d.trivial => {
                let mut slot = 0;
                if self.all_pow2 {
                    for digit in &self.fast {
                        let v = index.get(digit.source).copied().unwrap_or(0);
                        slot += ((v >> digit.shift) & digit.mask) * digit.stride;
                    }
                } else {
                    for digit in &self.fast {
                        slot += digit.eval(index.get(digit.source).copied().unwrap_or(0));
                    }
                }
                slot
            }
            Some(d) => {
                let values: Vec<u64> = (0..d.sources.len())
                    .map(|s| d.sources.value(s, index))
                    .collect();
                self.fast
                    .iter()
                    .map(|digit| digit.eval(values.get(digit.source).copied().unwrap_or(0)))
                    .sum()
            }
            None => self.staged.linear(index),
        }
    }

    /// The element stored in slot `linear`, or `None` when that slot is padding.
    ///
    /// # Errors
    /// [`IndexError::LinearOutOfRange`] when `linear` is not below
    /// [`allocated_elements`](Self::allocated_elements).
    pub fn multi_index(&self, linear: u64) -> Result<Option<Vec<u64>>, IndexError> {
        let mut out = vec![0; self.rank()];
        Ok(self.multi_index_into(linear, &mut out)?.then_some(out))
    }

    /// As [`multi_index`](Self::multi_index), writing into `out` (which must have one
    /// entry per dimension); returns whether the slot holds an element.
    ///
    /// # Errors
    /// [`IndexError::LinearOutOfRange`], or [`IndexError::WrongRank`] for a wrong `out`.
    pub fn multi_index_into(&self, linear: u64, out: &mut [u64]) -> Result<bool, IndexError> {
        if out.len() != self.rank() {
            return Err(IndexError::WrongRank {
                got: out.len(),
                rank: self.rank(),
            });
        }
        if linear >= self.allocated {
            return Err(IndexError::LinearOutOfRange {
                linear,
                size: self.allocated,
            });
        }
        if linear >= self.staged.grid || self.element_count == 0 {
            return Ok(false);
        }
        let Some(s) = &self.squeeze else {
            return Ok(self.delinear(linear, out));
        };
        let mut inner = vec![0; self.staged.dims.len()];
        let found = self.delinear(linear, &mut inner);
        s.scatter(&inner, out);
        Ok(found)
    }

    /// The plan's own coordinates of slot `linear` (below the grid), into `out`;
    /// whether the slot holds an element.
    fn delinear(&self, linear: u64, out: &mut [u64]) -> bool {
        match &self.digits {
            Some(d) => delinearize_digits(d, &self.staged.dims, linear, out),
            None => self.staged.delinear(linear, out).is_some(),
        }
    }

    /// Whether an index is in bounds (XLA's `IndexUtil::IndexInBounds`: the rank
    /// matches and every coordinate is below its dimension's size).
    pub fn index_in_bounds(&self, index: &[u64]) -> bool {
        self.check_index(index).is_ok()
    }

    /// Steps an index to the next one in logical order (the last dimension fastest,
    /// whatever the layout), as XLA's `IndexUtil::BumpIndices`. Returns `false`, leaving
    /// the index unchanged, when it is the last index (or is not a valid index).
    pub fn bump_indices(&self, index: &mut [u64]) -> bool {
        if self.check_index(index).is_err() {
            return false;
        }
        let dims = self.dimensions();
        for k in (0..index.len()).rev() {
            if index[k] + 1 < dims[k] {
                index[k] += 1;
                for later in &mut index[k + 1..] {
                    *later = 0;
                }
                return true;
            }
        }
        false
    }

    /// Every element's linear index, in logical order (the order of
    /// [`bump_indices`](Self::bump_indices)). Steps incrementally: no division per
    /// element on digit plans.
    pub fn logical_order(&self) -> LogicalOrder<'_> {
        LogicalOrder::new(self)
    }

    /// Every element in memory order: yields `(linear index, logical position)` where the
    /// logical position counts elements in logical order (what
    /// [`logical_order`](Self::logical_order) enumerates); padding slots are skipped.
    /// [`PhysicalOrder::index`] gives the multi-dimensional index of the last element
    /// returned.
    ///
    /// Internal iteration (`for_each`, `fold` and what builds on them) walks each run of
    /// consecutive slots in a tight loop, within 1.5× of a plain sequential pass over the
    /// buffer in `benches/index.rs`; a `for` loop over `next()` costs a few nanoseconds
    /// per element more.
    pub fn physical_order(&self) -> PhysicalOrder<'_> {
        PhysicalOrder::new(self)
    }

    // ---------------------------------------------------------------- sizes

    /// Number of elements (XLA's `ShapeUtil::ElementsIn`; dynamic dimensions count at
    /// their bound).
    pub fn element_count(&self) -> u64 {
        self.element_count
    }

    /// Bits one element takes in memory: `E(n)` if the layout sets it, else the type's
    /// byte width × 8.
    pub fn element_bits(&self) -> u64 {
        self.element_bits
    }

    /// Slots in the buffer, padding included: legacy padding, every tile level's
    /// padding, and the tail padding alignment (which applies only to tiled layouts).
    pub fn allocated_elements(&self) -> u64 {
        self.allocated
    }

    /// Bytes of the buffer, padding included: ⌈[`allocated_elements`](Self::allocated_elements)
    /// × bits / 8⌉.
    pub fn allocated_bytes(&self) -> u64 {
        bits_to_bytes(self.allocated, self.element_bits)
    }

    /// Slots up to and including the last slot that holds an element (0 for an array
    /// without elements).
    ///
    /// With nested tiles the last element in memory is not always the last one in
    /// logical order (`f32[3]{0:T(2)(2,1)}` stores element 1 after element 2), so this
    /// is the largest linear index of any element, plus one.
    ///
    /// Cost: one pass over the digits for plans of plain logical indices (every untiled
    /// layout and the usual tiled ones). Otherwise two searches by branch and bound,
    /// each of at most 2^16 steps (a few hundred on real layouts): over boxes of
    /// coordinates carried exactly through the tiles, then, should that run out, over
    /// boxes of logical indices; past both, a walk over the elements in logical order.
    pub fn data_elements(&self) -> u64 {
        if self.element_count == 0 {
            return 0;
        }
        let largest = match &self.digits {
            Some(d) if d.trivial => largest_slot_digits(d, &self.staged.dims),
            _ => self
                .staged
                .largest_slot(&mut { LARGEST_SLOT_BUDGET })
                .ok()
                .or_else(|| largest_slot_searched(&self.staged, &self.staged.dims).map(Some))
                .unwrap_or_else(|| {
                    // Every element's slot, in logical order: one pass, where the
                    // physical order would sort window after window.
                    self.logical_order().max()
                })
                .unwrap_or(0),
        };
        largest + 1
    }

    /// Bytes up to the end of the last element in memory:
    /// ⌈[`data_elements`](Self::data_elements) × bits / 8⌉.
    pub fn data_bytes(&self) -> u64 {
        bits_to_bytes(self.data_elements(), self.element_bits)
    }

    /// XLA's `ShapeUtil::ByteSizeOf` for an array: element count × byte width, or
    /// ⌈count × `E(n)` / 8⌉; tiles and tail padding are ignored. With legacy
    /// `padded_dimensions` it counts the padded sizes, as the 2017–2018 XLA did.
    pub fn xla_byte_size_of(&self) -> u64 {
        let count = match &self.spec.padded {
            Some(_) => self.staged.physical.iter().product(),
            None => self.element_count,
        };
        bits_to_bytes(count, self.element_bits)
    }

    /// XLA's `ShapeUtil::ArraySize`: the padded size from the **first tile only** (XLA
    /// assumes later tiles add no padding), each dimension at its largest split
    /// (`LayoutUtil::MaxSplitSize`), rounded up to the tail padding alignment when the
    /// layout has tiles. A `*` entry merges dimensions as in the nested tiling (XLA's
    /// own arithmetic does not handle `*`).
    pub fn xla_array_size(&self) -> u64 {
        if self.spec.tiles.len() <= 1 && self.spec.split_configs.is_empty() {
            // The first tile is every tile, and no split: this plan's own slots.
            return bits_to_bytes(self.allocated, self.element_bits);
        }
        let mut spec = self.spec.clone();
        let rank = spec.dims.len();
        for (physical, splits) in &self.spec.split_configs {
            let Some(&k) = rank
                .checked_sub(1)
                .and_then(|last| last.checked_sub(*physical))
                .and_then(|i| self.spec.minor_to_major.get(i))
            else {
                continue;
            };
            let size = self.staged.dims.get(k).copied().unwrap_or(0);
            let mut largest = 0;
            let mut last = 0;
            for &s in splits {
                largest = largest.max(s.saturating_sub(last));
                last = s;
            }
            largest = largest.max(size.saturating_sub(last));
            if let Some(d) = spec.dims.get_mut(k) {
                *d = Some(largest.min(size));
            }
            if let Some(p) = spec.padded.as_mut().and_then(|p| p.get_mut(k)) {
                *p = largest.min(size);
            }
        }
        spec.tiles.truncate(1);
        // Fewer tiles and smaller dimensions: never larger than this plan's grid.
        let grid = compile_staged(&spec).map_or(self.staged.grid, |s| s.grid);
        let slots = if spec.tiles.is_empty() {
            grid
        } else {
            grid.next_multiple_of(spec.tail_padding)
        };
        bits_to_bytes(slots, self.element_bits)
    }

    /// XLA's `ShapeUtil::ArrayDataSize`: bytes up to the end of the last element in
    /// logical order, placed by `LayoutUtil::LinearIndex`, which uses the **first tile
    /// only** and returns `index[0]` for rank-1 shapes whatever the tiling. 0 for an
    /// array without elements. Legacy padded sizes count, as in
    /// [`xla_byte_size_of`](Self::xla_byte_size_of).
    pub fn xla_array_data_size(&self) -> u64 {
        if self.element_count == 0 {
            return 0;
        }
        // The plan's own coordinates (a dimension left out has size 1); the case of
        // rank 1 is the shape's.
        let last: Vec<u64> = self.staged.dims.iter().map(|d| d - 1).collect();
        let slot = match self.rank() {
            0 => 0,
            1 => last.first().copied().unwrap_or(0),
            // The first tile is every tile: this plan's own.
            _ if self.spec.tiles.len() <= 1 => self.linear_checked(&last),
            _ => {
                let mut spec = self.spec.clone();
                spec.tiles.truncate(1);
                match compile_staged(&spec) {
                    Ok(staged) => staged.linear(&last),
                    Err(_) => self.linear_checked(&last),
                }
            }
        };
        bits_to_bytes(slot + 1, self.element_bits)
    }

    // ---------------------------------------------------------------- strides

    /// XLA's `IndexUtil::GetDimensionStride`: the product of the (padded) sizes of the
    /// dimensions more minor than `dim` in `minor_to_major`, ignoring tiles. `None` if
    /// `dim` is not a dimension.
    pub fn xla_dimension_stride(&self, dim: usize) -> Option<u64> {
        fn find(dim: usize, sizes: impl Iterator<Item = (usize, u64)>) -> Option<u64> {
            minor_first_strides(sizes)
                .find(|&(k, _)| k == dim)
                .map(|(_, stride)| stride)
        }
        match &self.squeeze {
            None => find(dim, self.minor_first_sizes()),
            Some(s) => find(dim, self.minor_first_sizes_of(s)),
        }
    }

    /// Each dimension of the layout from the most minor, with its (padded) size.
    fn minor_first_sizes(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let order = self.staged.major_to_minor.iter().rev().copied();
        order.zip(self.staged.physical.iter().rev().copied())
    }

    /// [`minor_first_sizes`](Self::minor_first_sizes) of every dimension of a plan that
    /// leaves some out (a dimension left out is never padded).
    fn minor_first_sizes_of<'a>(
        &'a self,
        s: &'a Squeeze,
    ) -> impl Iterator<Item = (usize, u64)> + 'a {
        let padded = self.spec.padded.as_ref();
        s.minor_to_major().map(move |k| {
            let unpadded = s.dims.get(k).copied().unwrap_or(1);
            // A padded size is looked up only when the layout pads.
            let size = match padded {
                Some(padded) => s.inner(k).and_then(|j| padded.get(j).copied()),
                None => None,
            };
            (k, size.unwrap_or(unpadded))
        })
    }

    /// [`xla_dimension_stride`](Self::xla_dimension_stride) of every dimension, in one
    /// pass over the layout (linear in the rank). The layout names each dimension
    /// once (the plan checks that its order is a permutation).
    fn xla_dimension_strides(&self) -> Vec<u64> {
        fn fill(strides: &mut [u64], sizes: impl Iterator<Item = (usize, u64)>) {
            for (k, stride) in minor_first_strides(sizes) {
                if let Some(slot) = strides.get_mut(k) {
                    *slot = stride;
                }
            }
        }
        let mut strides = vec![0; self.rank()];
        match &self.squeeze {
            None => fill(&mut strides, self.minor_first_sizes()),
            Some(s) => fill(&mut strides, self.minor_first_sizes_of(s)),
        }
        strides
    }

    /// Strides in elements, one per logical dimension, when the layout has them: every
    /// untiled layout (with legacy padding, the padded sizes), and tiled layouts whose
    /// tiles do not reorder elements (e.g. `f32[24,128]{1,0:T(8,128)}`). `None` for
    /// every other tiled layout.
    ///
    /// Dimensions of size 1 get the stride they would have without tiles (numpy and
    /// DLPack accept any stride there).
    pub fn element_strides(&self) -> Option<Vec<u64>> {
        if self.spec.tiles.is_empty() {
            return Some(self.xla_dimension_strides());
        }
        let d = self.digits.as_ref()?;
        if !d.trivial {
            return None;
        }
        // By the plan's own dimensions.
        let mut strides: Vec<Option<u64>> = vec![None; self.staged.dims.len()];
        for axis in &d.axes {
            if let AxisKind::Digit {
                source,
                div,
                modulus,
            } = axis.kind
            {
                let slot = strides.get_mut(source)?;
                if div != 1 || modulus.is_some() || slot.is_some() {
                    return None;
                }
                *slot = Some(axis.stride);
            }
        }
        // Digitless dimensions (size ≤ 1): the stride after the next more minor one.
        let dims = self.dimensions();
        let mut next: u64 = 1;
        let mut out = vec![0; dims.len()];
        for k in self.full_minor_to_major() {
            let size = dims.get(k).copied().unwrap_or(0);
            let stride = self
                .inner_of(k)
                .and_then(|j| strides.get(j).copied().flatten())
                .unwrap_or(next);
            *out.get_mut(k)? = stride;
            next = stride.saturating_mul(size.max(1));
        }
        Some(out)
    }

    /// Whether every element sits where it would without tiles and padding (the linear
    /// index is `IndexUtil`'s): e.g. `f32[24,128]{1,0:T(8,128)}` and
    /// `f32[4,256]{1,0:T(1,128)}`, but not `f32[2,3,4]{2,1,0:T(8,128)}`, which pads.
    pub fn is_untiled_equivalent(&self) -> bool {
        let Some(strides) = self.element_strides() else {
            return false;
        };
        let dims = self.dimensions();
        let mut plain: u64 = 1;
        for k in self.full_minor_to_major() {
            let size = dims.get(k).copied().unwrap_or(0);
            if size > 1 && strides.get(k) != Some(&plain) {
                return false;
            }
            plain = plain.saturating_mul(size);
        }
        true
    }

    /// Strides in bytes (numpy's convention), when the layout has strides and elements
    /// are whole bytes; `None` otherwise (XLA's `ShapeUtil::ByteStrides` also refuses
    /// `E(n)` not a multiple of 8).
    pub fn byte_strides(&self) -> Option<Vec<u64>> {
        if self.element_bits % 8 != 0 {
            return None;
        }
        self.byte_strides_of(&self.element_strides()?)
    }

    /// Strides in elements (of [`element_strides`](Self::element_strides)) as strides in
    /// bytes; `None` when elements are not whole bytes.
    pub(crate) fn byte_strides_of(&self, elements: &[u64]) -> Option<Vec<u64>> {
        let bytes = self.element_bits / 8;
        (self.element_bits % 8 == 0)
            .then(|| elements.iter().map(|&x| x.saturating_mul(bytes)).collect())
    }

    /// XLA's `ShapeUtil::UnpackedByteStrides`: [`xla_dimension_stride`](Self::xla_dimension_stride)
    /// × the type's byte width, ignoring tiles and `E(n)` (so `s4[2,4]{1,0:E(4)}` gives
    /// `[4, 1]`).
    pub fn xla_unpacked_byte_strides(&self) -> Vec<u64> {
        let mut strides = self.xla_dimension_strides();
        for stride in &mut strides {
            *stride = stride.saturating_mul(self.spec.byte_width);
        }
        strides
    }

    /// The grid the plan lays elements on, for pictures: final shape of the tiling.
    pub(crate) fn digits(&self) -> Option<&Digits> {
        self.digits.as_ref()
    }

    pub(crate) fn staged(&self) -> &Staged {
        &self.staged
    }

    /// Per logical dimension, its digits `(div, modulus, stride)` by increasing divisor,
    /// when the plan is a digit plan of plain logical indices (the linear index is then
    /// `Σ ((index[k] / div) mod modulus) × stride`, no modulus meaning none); `None` for
    /// other plans. Used by the relayout fast path.
    pub(crate) fn dimension_digits(&self) -> Option<Vec<Vec<DimDigit>>> {
        let d = self.digits.as_ref().filter(|d| d.trivial)?;
        let mut per_dim: Vec<Vec<DimDigit>> = vec![Vec::new(); self.rank()];
        for axis in &d.axes {
            if let AxisKind::Digit {
                source,
                div,
                modulus,
            } = axis.kind
            {
                let k = match &self.squeeze {
                    Some(s) => *s.kept.get(source)?,
                    None => source,
                };
                per_dim.get_mut(k)?.push((div, modulus, axis.stride));
            }
        }
        for list in &mut per_dim {
            list.sort_unstable();
        }
        Some(per_dim)
    }

    /// Whether the layout has legacy `padded_dimensions` (then every padding slot is
    /// legacy padding: validation never lets them meet tiles).
    pub(crate) fn has_legacy_padding(&self) -> bool {
        self.spec.padded.is_some()
    }
}

/// Each dimension of `sizes` (from the most minor, with its physical size) and the
/// product of the sizes of those before it.
fn minor_first_strides(
    sizes: impl Iterator<Item = (usize, u64)>,
) -> impl Iterator<Item = (usize, u64)> {
    sizes.scan(1u64, |stride, (k, size)| {
        let this = *stride;
        *stride = stride.saturating_mul(size);
        Some((k, this))
    })
}

/// One of two iterators of the same items: over every dimension, or over those of a
/// plan that leaves some out.
enum OneOf<A, B> {
    Whole(A),
    Part(B),
}

impl<A: Iterator, B: Iterator<Item = A::Item>> Iterator for OneOf<A, B> {
    type Item = A::Item;

    fn next(&mut self) -> Option<A::Item> {
        match self {
            OneOf::Whole(a) => a.next(),
            OneOf::Part(b) => b.next(),
        }
    }
}

/// A plan error of the plan's own dimensions, told by the shape's.
fn unsqueezed(error: PlanError, squeeze: Option<&Squeeze>) -> PlanError {
    match (error, squeeze) {
        (PlanError::Unbounded { dim }, Some(s)) => PlanError::Unbounded {
            dim: s.kept.get(dim).copied().unwrap_or(dim),
        },
        (error, _) => error,
    }
}

/// One digit of one logical dimension: `(div, modulus, stride)`.
pub(crate) type DimDigit = (u64, Option<u64>, u64);

/// XLA's `IndexUtil::CompareIndices`: lexicographic order from dimension 0.
///
/// # Errors
/// [`IndexError::WrongRank`] when the lengths differ (XLA aborts).
pub fn compare_indices(lhs: &[u64], rhs: &[u64]) -> Result<Ordering, IndexError> {
    if lhs.len() != rhs.len() {
        return Err(IndexError::WrongRank {
            got: rhs.len(),
            rank: lhs.len(),
        });
    }
    Ok(lhs.cmp(rhs))
}

fn bits_to_bytes(slots: u64, bits: u64) -> u64 {
    // Fits: slots ≤ allocated, whose byte size was checked to fit at build.
    let bytes = (u128::from(slots) * u128::from(bits)).div_ceil(8);
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

/// Digit-form delinearization (invariants 1–3 of `digits`).
fn delinearize_digits(d: &Digits, dims: &[u64], slot: u64, out: &mut [u64]) -> bool {
    let mut values = vec![0u64; d.sources.len()];
    for axis in &d.axes {
        let c = (slot / axis.stride) % axis.radix;
        match axis.kind {
            AxisKind::Const => {
                if c != 0 {
                    return false;
                }
            }
            AxisKind::Digit {
                source,
                div,
                modulus,
            } => {
                if modulus.is_some_and(|m| c >= m) {
                    return false;
                }
                if let Some(v) = values.get_mut(source) {
                    *v += c * div;
                }
            }
        }
    }
    values
        .iter()
        .enumerate()
        .all(|(s, &value)| d.sources.decompose(s, value, dims, out))
}

/// Steps (boxes bounded) [`Staged::largest_slot`] and [`largest_slot_searched`] may each
/// take before they give up.
const LARGEST_SLOT_BUDGET: u64 = 1 << 16;

/// The largest slot of any element of a plan without elements-free dimensions, by
/// branch and bound: the box of every logical index is halved
/// ([`Staged::halve`]), the half with the higher slot bound first, until single indices (whose
/// bounds are their slot); a box whose upper bound is at most the largest slot found
/// so far is skipped. `None` when the budget runs out (bounds too loose to prune, as on
/// deep plans of tiles that do not nest).
fn largest_slot_searched(staged: &Staged, dims: &[u64]) -> Option<u64> {
    fn visit(
        staged: &Staged,
        lo: &mut [u64],
        hi: &mut [u64],
        upper: u64,
        best: &mut Option<u64>,
        budget: &mut u64,
    ) -> Option<()> {
        if best.is_some_and(|b| upper <= b) {
            return Some(());
        }
        let Some((k, halves)) = staged.halve(lo, hi) else {
            // One index: its upper bound is its slot.
            *best = Some(upper);
            return Some(());
        };
        *budget = budget.checked_sub(2)?;
        // The half with the higher slot bound first.
        let [(_, first), (_, second)] = halves;
        let order = if second.1 > first.1 { [1, 0] } else { [0, 1] };
        let saved = (lo[k], hi[k]);
        for i in order {
            let ((a, b), (_, upper)) = halves[i];
            (lo[k], hi[k]) = (a, b);
            let done = visit(staged, lo, hi, upper, best, budget);
            (lo[k], hi[k]) = saved;
            done?;
        }
        Some(())
    }
    if dims.contains(&0) {
        return None;
    }
    let mut lo = vec![0; dims.len()];
    let mut hi: Vec<u64> = dims.iter().map(|&d| d - 1).collect();
    let upper = staged.slot_bounds(&lo, &hi).1;
    let mut best = None;
    let mut budget = LARGEST_SLOT_BUDGET;
    visit(staged, &mut lo, &mut hi, upper, &mut best, &mut budget)?;
    best
}

/// The largest slot of any element, for a plan of plain sources: greedy over the axes,
/// most major first, each as large as some element allows.
fn largest_slot_digits(d: &Digits, dims: &[u64]) -> u64 {
    let mut taken = vec![0u64; d.sources.len()];
    let mut slot = 0;
    for axis in &d.axes {
        if let AxisKind::Digit {
            source,
            div,
            modulus,
        } = axis.kind
        {
            let size = dims.get(source).copied().unwrap_or(0);
            let t = taken.get(source).copied().unwrap_or(0);
            // Largest c with t + c·div ≤ size − 1, below the radix and modulus.
            let mut c = (size - 1 - t) / div;
            c = c.min(axis.radix - 1);
            if let Some(m) = modulus {
                c = c.min(m - 1);
            }
            if let Some(x) = taken.get_mut(source) {
                *x += c * div;
            }
            slot += c * axis.stride;
        }
    }
    slot
}

#[cfg(test)]
mod tests;
