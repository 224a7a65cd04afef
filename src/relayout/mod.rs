//! Relayout: move the bytes of one array between two layouts of the same logical shape.
//!
//! A [`Relayout`] is built once from two validated array shapes with the same element
//! type and dimensions, planned by the layout engine ([`LayoutPlan`]), and then moves any
//! number of buffers. Everything the engine indexes is handled: `minor_to_major`, legacy
//! `padded_dimensions`, nested tiles with partial edge tiles and `*`, tail padding,
//! `E(n)` sub-byte packing and any element width.
//!
//! ```
//! # use xla_shape::{relayout::Relayout, Shape};
//! // The seeds' example: a 2x3 array, column-major, padded to [3,5] (zeros).
//! let from: Shape = "u8[2,3]{1,0}".parse().unwrap();
//! let to: Shape = "u8[2,3]{0,1:PD(3,5)PV(zero)}".parse().unwrap();
//! let r = Relayout::new(from.as_array().unwrap(), to.as_array().unwrap()).unwrap();
//! let (a, b, c, d, e, f) = (b'a', b'b', b'c', b'd', b'e', b'f');
//! let out = r.to_vec(&[a, b, c, d, e, f]).unwrap();
//! assert_eq!(out, [a, d, 0, b, e, 0, c, f, 0, 0, 0, 0, 0, 0, 0]);
//! ```
//!
//! # Buffers
//!
//! A buffer holds exactly [`LayoutPlan::allocated_bytes`] bytes: every slot of the
//! layout, padding included (legacy padding, partial tiles, tail padding), and nothing
//! else (no `M(n)` dynamic-size metadata in front). A buffer of any other length is
//! refused with an error that says what the layout needs.
//!
//! # What is written
//!
//! Every byte of the destination is written. Padding slots get zeros, or the legacy
//! `padding_value` (`PV(one)`, `PV(lowest)`, `PV(highest)`) where the destination has
//! `padded_dimensions` (`PV(unknown)` writes zeros); bits after the last slot of a
//! sub-byte buffer are 0. Each element moves so: equal slot
//! widths copy the slot's bits unchanged; a narrower slot (`s4` from 8 bits to `E(4)`)
//! keeps the low bits; a wider slot gets the value's bits, then, for signed integer
//! types, its sign bit repeated (so an `E(4)` `s4` becomes the int8 value in a byte),
//! zeros otherwise.
//!
//! # Two implementations
//!
//! [`Relayout::run_reference`] is the definition: for every element in logical order, its
//! slot on each side from [`LayoutPlan::linear_index`], and one bit-level move. It is kept
//! for the tests. [`Relayout::run`] is the fast path: it splits every dimension at the
//! tile boundaries of both layouts into *atoms* (each with one stride on each side), cuts
//! partial edge tiles into a few exact boxes, merges atoms that are contiguous on both
//! sides, and copies the longest runs both sides share with one `copy_from_slice` (whole
//! tiles when the tiles match); where runs differ it transposes in cache-sized blocks
//! between the destination's and the source's contiguous atoms. Layouts the atoms cannot
//! describe (a `*` merging dimensions, tiles that do not nest such as `T(4)(3)` against
//! `T(2)`) walk both layouts' logical orders together instead. Tests check that both
//! paths write the same bytes.
//!
//! # Threads
//!
//! A transpose is bound by memory latency more than by bandwidth: each line comes from
//! another row and page, so one core keeps too few misses in flight to use the memory
//! bus (on the 2-core development machine it moves 0.3x-0.5x of what `memcpy` does).
//! [`Relayout::run`] therefore cuts a destination of [`PARALLEL_BYTES`] or more into
//! pieces of whole destination bytes, each box along its outermost destination
//! dimension, and moves them side by side on rayon's pool, as the transpose of XLA's PJRT
//! (`TransposePlan`) does with its `num_threads` option. [`Relayout::run_in_parts`] chooses the number of
//! pieces (1: the calling thread only); every choice writes the same bytes.

mod bits;
mod fast;
pub mod npy;

use std::fmt;

use crate::index::{LayoutPlan, PlanError};
use crate::layout::{Layout, PaddingValue};
use crate::primitive::PrimitiveType;
use crate::proto::ShapeProto;
use crate::shape::{ArrayShape, Shape};
use crate::validate::{validate_shape_with, Options};

pub(crate) use bits::Conv;

/// Destinations of at least this many bytes (8 MiB) are moved on several threads by
/// [`Relayout::run`]; below it the hand-offs cost more than they save.
pub const PARALLEL_BYTES: usize = 8 << 20;

/// Why a relayout cannot be planned or run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RelayoutError {
    /// The two shapes are not the same array: element types or dimensions differ.
    Mismatch {
        /// The source shape, as text.
        from: String,
        /// The destination shape, as text.
        to: String,
    },
    /// The engine cannot plan a shape (an unbounded dimension, `?`).
    Plan {
        /// The shape, as text.
        shape: String,
        /// Why.
        error: PlanError,
    },
    /// A buffer does not have the length its layout allocates.
    Length {
        /// `"input"` or `"output"`.
        which: &'static str,
        /// The shape, as text.
        shape: String,
        /// Bytes the layout allocates.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// A buffer of this size cannot be held in this process's memory.
    TooLarge {
        /// The shape, as text.
        shape: String,
        /// Bytes the layout allocates.
        bytes: u64,
    },
    /// The legacy `padding_value` has no value for the element type (`PV(lowest)` of a
    /// type born after the legacy fields were retired, such as `f8e4m3fn`).
    PaddingValue {
        /// The shape, as text.
        shape: String,
        /// `one`, `lowest` or `highest`.
        value: &'static str,
    },
}

impl fmt::Display for RelayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayoutError::Mismatch { from, to } => write!(
                f,
                "cannot relayout {from} as {to}: the element type and dimensions must be the same"
            ),
            RelayoutError::Plan { shape, error } => write!(f, "{shape}: {error}"),
            RelayoutError::Length {
                which,
                shape,
                expected,
                got,
            } => write!(
                f,
                "{which} has {got} bytes, but {shape} needs exactly {expected} bytes (every slot of the layout, padding included)"
            ),
            RelayoutError::TooLarge { shape, bytes } => write!(
                f,
                "{shape} needs a buffer of {bytes} bytes, more than this machine can address"
            ),
            RelayoutError::PaddingValue { shape, value } => write!(
                f,
                "{shape}: padding value {value} is not defined for this element type"
            ),
        }
    }
}

impl std::error::Error for RelayoutError {}

/// Text of an array shape for messages.
pub(crate) fn shape_text(shape: &ArrayShape) -> String {
    Shape::Array(shape.clone()).to_string()
}

/// The same array with another layout, validated as HLO text is (so `*` tiles are
/// accepted).
///
/// # Errors
/// The validation errors of the new shape (e.g. a layout for another number of
/// dimensions, or padding that overflows).
pub fn with_layout(
    shape: &ArrayShape,
    layout: &Layout,
) -> Result<ArrayShape, crate::ValidationError> {
    let mut proto = ShapeProto::from(shape);
    proto.layout = Some(Box::new(layout.into()));
    match validate_shape_with(&proto, Options::hlo_text()).into_result()? {
        Shape::Array(array) => Ok(array),
        // Cannot happen: a shape proto with an array element type validates to an array.
        _ => Ok(ArrayShape {
            layout: Some(Box::new(layout.clone())),
            ..shape.clone()
        }),
    }
}

/// The logical array in row-major (C, numpy's default) order: the same element type and
/// dimensions, layout `{n-1,...,0}` with no tiles, no padding and no `E(n)`, so every
/// element takes the type's byte width (sub-byte types a whole byte each, as numpy holds
/// them).
pub fn row_major(shape: &ArrayShape) -> ArrayShape {
    ArrayShape {
        element_type: shape.element_type,
        dimensions: shape.dimensions.clone(),
        layout: Some(Box::new(Layout::default_for_rank(shape.dimensions.len()))),
    }
}

/// The logical array in column-major (Fortran) order: as [`row_major`] with
/// `minor_to_major` `{0,1,...,n-1}` (dimension 0 varies fastest).
pub fn column_major(shape: &ArrayShape) -> ArrayShape {
    ArrayShape {
        element_type: shape.element_type,
        dimensions: shape.dimensions.clone(),
        layout: Some(Box::new(Layout::with_minor_to_major(
            (0..shape.dimensions.len()).collect(),
        ))),
    }
}

/// A planned move between two layouts of one array; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Relayout {
    from: ArrayShape,
    to: ArrayShape,
    src: LayoutPlan,
    dst: LayoutPlan,
    src_bytes: usize,
    dst_bytes: usize,
    conv: Conv,
    /// The destination's padding value (`value_bits` wide, little-endian, in a buffer of
    /// the type's byte width), when it is not zero.
    pad: Option<Vec<u8>>,
    program: fast::Program,
}

impl Relayout {
    /// Plans the move of an array laid out as `from` into the layout of `to`.
    ///
    /// # Errors
    /// [`RelayoutError::Mismatch`] when the element types or dimensions differ,
    /// [`RelayoutError::Plan`] for an unbounded dimension, [`RelayoutError::TooLarge`] when
    /// a buffer could not be addressed, [`RelayoutError::PaddingValue`] for a legacy
    /// padding value the type does not have.
    pub fn new(from: &ArrayShape, to: &ArrayShape) -> Result<Self, RelayoutError> {
        if from.element_type() != to.element_type() || from.dimensions() != to.dimensions() {
            return Err(RelayoutError::Mismatch {
                from: shape_text(from),
                to: shape_text(to),
            });
        }
        let plan = |shape: &ArrayShape| {
            LayoutPlan::new(shape).map_err(|error| RelayoutError::Plan {
                shape: shape_text(shape),
                error,
            })
        };
        let src = plan(from)?;
        let dst = plan(to)?;
        let bytes = |shape: &ArrayShape, plan: &LayoutPlan| {
            usize::try_from(plan.allocated_bytes())
                .ok()
                .filter(|&b| isize::try_from(b).is_ok())
                .ok_or_else(|| RelayoutError::TooLarge {
                    shape: shape_text(shape),
                    bytes: plan.allocated_bytes(),
                })
        };
        let src_bytes = bytes(from, &src)?;
        let dst_bytes = bytes(to, &dst)?;
        let element_type = from.element_type();
        let conv = Conv {
            src_bits: src.element_bits(),
            dst_bits: dst.element_bits(),
            value_bits: u64::from(element_type.bit_width().unwrap_or(8)),
            signed: element_type.is_signed_integral(),
        };
        let pad = match to.layout().and_then(Layout::padding_value) {
            Some(value) if dst.has_legacy_padding() => {
                padding_bytes(element_type, value).map_err(|value| RelayoutError::PaddingValue {
                    shape: shape_text(to),
                    value,
                })?
            }
            _ => None,
        };
        let program = fast::Program::new(&src, &dst, conv);
        Ok(Relayout {
            from: from.clone(),
            to: to.clone(),
            src,
            dst,
            src_bytes,
            dst_bytes,
            conv,
            pad,
            program,
        })
    }

    /// The source shape.
    pub fn from_shape(&self) -> &ArrayShape {
        &self.from
    }

    /// The destination shape.
    pub fn to_shape(&self) -> &ArrayShape {
        &self.to
    }

    /// The source plan.
    pub fn source_plan(&self) -> &LayoutPlan {
        &self.src
    }

    /// The destination plan.
    pub fn destination_plan(&self) -> &LayoutPlan {
        &self.dst
    }

    /// Bytes a source buffer must have.
    pub fn source_bytes(&self) -> usize {
        self.src_bytes
    }

    /// Bytes a destination buffer must have.
    pub fn destination_bytes(&self) -> usize {
        self.dst_bytes
    }

    /// A short description of how [`run`](Self::run) moves the bytes, for people: the
    /// number of boxes and the kernels, or the walk of both logical orders.
    pub fn strategy(&self) -> String {
        self.program.describe()
    }

    fn check_source(&self, src: &[u8]) -> Result<(), RelayoutError> {
        if src.len() != self.src_bytes {
            return Err(RelayoutError::Length {
                which: "input",
                shape: shape_text(&self.from),
                expected: self.src_bytes as u64,
                got: src.len() as u64,
            });
        }
        Ok(())
    }

    fn check(&self, src: &[u8], dst: &[u8]) -> Result<(), RelayoutError> {
        self.check_source(src)?;
        if dst.len() != self.dst_bytes {
            return Err(RelayoutError::Length {
                which: "output",
                shape: shape_text(&self.to),
                expected: self.dst_bytes as u64,
                got: dst.len() as u64,
            });
        }
        Ok(())
    }

    /// Moves `src` (laid out as the source shape) into `dst` (the destination layout),
    /// on the fast path. Every byte of `dst` is written.
    ///
    /// A destination of [`PARALLEL_BYTES`] or more is cut into pieces moved side by
    /// side on rayon's thread pool (all cores, or `RAYON_NUM_THREADS`; inside a pool,
    /// that pool's threads), as [`run_in_parts`](Self::run_in_parts) does; smaller ones
    /// are moved on the calling thread.
    ///
    /// # Errors
    /// [`RelayoutError::Length`] when a buffer's length is not its layout's allocated size;
    /// nothing is written then.
    pub fn run(&self, src: &[u8], dst: &mut [u8]) -> Result<(), RelayoutError> {
        // Small arrays never touch the pool (the first use starts its threads).
        if self.dst_bytes < PARALLEL_BYTES {
            return self.run_on(src, dst, 1, 0);
        }
        let threads = rayon::current_num_threads();
        if threads < 2 {
            return self.run_on(src, dst, 1, 0);
        }
        // A few pieces a thread, so that one slow piece does not hold up the rest; a
        // box smaller than a few pages is not worth a hand-off.
        let min_split = (1u64 << 20) * 8 / self.conv.dst_bits.max(1);
        self.run_on(src, dst, threads.saturating_mul(4), min_split)
    }

    /// [`run`](Self::run) with the destination cut into up to `parts` pieces moved side
    /// by side on rayon's thread pool, whatever the array's size: each box of the
    /// fast path is cut along its outermost destination dimension into ranges of
    /// whole destination bytes (a box that cannot be cut so is moved whole). `parts`
    /// of 0 or 1 moves everything on the calling thread, and more than 1,024 counts as
    /// 1,024. The bytes written are the same for every `parts`.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn run_in_parts(
        &self,
        src: &[u8],
        dst: &mut [u8],
        parts: usize,
    ) -> Result<(), RelayoutError> {
        self.run_on(src, dst, parts, 0)
    }

    fn run_on(
        &self,
        src: &[u8],
        dst: &mut [u8],
        parts: usize,
        min_split: u64,
    ) -> Result<(), RelayoutError> {
        self.check(src, dst)?;
        let count = self.dst.element_count();
        let padded = self.dst.allocated_elements() > count;
        if padded || count == 0 {
            self.fill(dst, parts);
        } else if let Some(last) = dst.last_mut() {
            // Bits after the last slot of a sub-byte buffer.
            let used = u128::from(self.dst.allocated_elements()) * u128::from(self.conv.dst_bits);
            if used % 8 != 0 {
                *last = 0;
            }
        }
        if count == 0 {
            return Ok(());
        }
        self.program
            .run_in_parts(src, dst, (&self.src, &self.dst), parts, min_split);
        Ok(())
    }

    /// The element-by-element reference: the same result as [`run`](Self::run), one
    /// [`LayoutPlan::linear_index`] per element and side.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn run_reference(&self, src: &[u8], dst: &mut [u8]) -> Result<(), RelayoutError> {
        self.check(src, dst)?;
        self.fill(dst, 1);
        if self.src.element_count() == 0 {
            return Ok(());
        }
        let mut index = vec![0u64; self.src.rank()];
        loop {
            // In bounds by construction: bump_indices only yields valid indices.
            if let (Ok(s), Ok(d)) = (self.src.linear_index(&index), self.dst.linear_index(&index)) {
                self.conv.move_element(src, s, dst, d);
            }
            if !self.src.bump_indices(&mut index) {
                return Ok(());
            }
        }
    }

    /// [`run`](Self::run) into a new buffer of [`destination_bytes`](Self::destination_bytes).
    ///
    /// # Errors
    /// As [`run`](Self::run) (the input length is checked before anything is allocated),
    /// and [`RelayoutError::TooLarge`] when the allocation fails.
    pub fn to_vec(&self, src: &[u8]) -> Result<Vec<u8>, RelayoutError> {
        self.check_source(src)?;
        let mut out = Vec::new();
        out.try_reserve_exact(self.dst_bytes)
            .map_err(|_| RelayoutError::TooLarge {
                shape: shape_text(&self.to),
                bytes: self.dst_bytes as u64,
            })?;
        out.resize(self.dst_bytes, 0);
        self.run(src, &mut out)?;
        Ok(out)
    }

    /// Writes every slot of `dst` with the padding value (zeros unless the layout's
    /// legacy `padding_value` says otherwise); bits after the last slot get 0.
    fn fill(&self, dst: &mut [u8], parts: usize) {
        if parts > 1 {
            use rayon::prelude::*;
            let chunk = dst.len().div_ceil(parts).max(1 << 16);
            dst.par_chunks_mut(chunk).for_each(|c| c.fill(0));
        } else {
            dst.fill(0);
        }
        let Some(pad) = &self.pad else { return };
        let value = Conv {
            src_bits: u64::from(self.from.element_type().byte_width().unwrap_or(1)) * 8,
            ..self.conv
        };
        if value.src_bits == value.dst_bits && value.dst_bits % 8 == 0 {
            for slot in dst.chunks_exact_mut(pad.len()) {
                slot.copy_from_slice(pad);
            }
            return;
        }
        for slot in 0..self.dst.allocated_elements() {
            value.move_element(pad, 0, dst, slot);
        }
    }
}

/// Relayouts `src` from `from`'s layout to `to`'s into a new buffer; see [`Relayout`].
///
/// # Errors
/// As [`Relayout::new`] and [`Relayout::to_vec`].
pub fn relayout(from: &ArrayShape, to: &ArrayShape, src: &[u8]) -> Result<Vec<u8>, RelayoutError> {
    Relayout::new(from, to)?.to_vec(src)
}

/// The bytes of a legacy padding value, little-endian in the type's byte width; `None`
/// for zero (and `unknown`, written as zeros); `Err(name)` when the type has no such
/// value. `lowest`/`highest` are XLA's `MinValue`/`MaxValue`: the integer limits, and
/// -inf/+inf for floating-point types.
fn padding_bytes(t: PrimitiveType, value: PaddingValue) -> Result<Option<Vec<u8>>, &'static str> {
    use PrimitiveType as P;
    let name = match value {
        PaddingValue::Zero | PaddingValue::Unknown => return Ok(None),
        PaddingValue::One => "one",
        PaddingValue::Lowest => "lowest",
        PaddingValue::Highest => "highest",
    };
    let int = |bytes: usize, signed: bool| -> Vec<u8> {
        let v: u128 = match (value, signed) {
            (PaddingValue::One, _) => 1,
            (PaddingValue::Lowest, false) => 0,
            (PaddingValue::Lowest, true) => 1u128 << (bytes * 8 - 1),
            (PaddingValue::Highest, false) => (1u128 << (bytes * 8)) - 1,
            _ => (1u128 << (bytes * 8 - 1)) - 1,
        };
        v.to_le_bytes()[..bytes].to_vec()
    };
    let float = |one: &[u8], inf: &[u8]| -> Vec<u8> {
        match value {
            PaddingValue::One => one.to_vec(),
            PaddingValue::Highest => inf.to_vec(),
            _ => {
                let mut v = inf.to_vec();
                if let Some(top) = v.last_mut() {
                    *top |= 0x80;
                }
                v
            }
        }
    };
    let bytes = match t {
        P::Pred => vec![u8::from(value != PaddingValue::Lowest)],
        P::S8 => int(1, true),
        P::S16 => int(2, true),
        P::S32 => int(4, true),
        P::S64 => int(8, true),
        P::U8 => int(1, false),
        P::U16 => int(2, false),
        P::U32 => int(4, false),
        P::U64 => int(8, false),
        P::F16 => float(&0x3C00u16.to_le_bytes(), &0x7C00u16.to_le_bytes()),
        P::Bf16 => float(&0x3F80u16.to_le_bytes(), &0x7F80u16.to_le_bytes()),
        P::F32 => float(&1f32.to_le_bytes(), &f32::INFINITY.to_le_bytes()),
        P::F64 => float(&1f64.to_le_bytes(), &f64::INFINITY.to_le_bytes()),
        P::C64 if value == PaddingValue::One => [1f32.to_le_bytes(), [0; 4]].concat(),
        P::C128 if value == PaddingValue::One => [1f64.to_le_bytes(), [0; 8]].concat(),
        _ => return Err(name),
    };
    Ok(Some(bytes))
}
