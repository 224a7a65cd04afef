#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod check;
pub mod codec;
pub mod convert;
pub mod describe;
mod digits;
pub mod error;
pub mod guard;
pub mod index;
pub mod input;
pub mod json;
pub mod layout;
pub mod message;
pub mod path;
pub mod primitive;
pub mod proto;
pub mod relayout;
pub mod report;
pub mod shape;
mod sorted;
pub mod spool;
pub mod text;
pub mod threads;
pub mod validate;

pub use error::{Issue, IssueKind, Report, Severity, ValidationError};
pub use index::{IndexError, LayoutPlan, PlanError};
pub use layout::{Layout, PaddingValue, SplitConfig, Tile, TileDim};
pub use message::{AnyMessage, MessageKind};
pub use path::{Path, Segment};
pub use primitive::PrimitiveType;
pub use shape::{ArrayShape, DimSize, ProgramShape, Shape};
pub use validate::Validated;

/// The most list entries one shape may hold in all, in every form the crate reads
/// (binary, JSON, HLO text): 1,048,576.
///
/// The entries are those of the shape's own lists and its layout's, counted as the
/// message holds them: `dimensions` and `is_dynamic_dimension`; `minor_to_major`,
/// `padded_dimensions`, `dim_level_types`, `dim_unique` and `dim_ordered`; each tile
/// and each of its dimensions; each split config and each of its indices; and the same
/// lists of a physical shape. A tuple's elements and a program shape's parameters are
/// not entries: each counts its own (a tuple or a program may have millions of them,
/// and they are read one at a time). A shape over the limit is refused as unreadable,
/// as a message nested deeper than the decoders' depth limits is, before its lists
/// are built. Every list is as long as the rank in a valid shape, so the limit allows
/// any rank up to about 150,000 (349,525 for dimensions, dynamic flags and
/// `minor_to_major` alone): XLA sets no rank limit, but TensorFlow stops at 254 and
/// NumPy at 64. What the limit buys is a fixed bound on the memory one array takes
/// (a whole shape holds 8 bytes an entry, its text as little as 2), whatever the
/// input: see `docs/hardening.md`.
pub const MAX_LIST_ENTRIES: usize = 1 << 20;

/// Inputs at least this long that hold a tuple (a line or argument of shape text, a
/// binary or JSON message, a shape in a module) are read a shape at a time wherever
/// the reading can be (validated, listed, converted, compared, described), with the
/// same results as the whole read. Built whole, a tuple takes some 100 times its text
/// (a `ShapeProto` an element): at 1 MiB a 0.9 MB tuple took 86 MB to validate; at this
/// length the most a tuple built whole can take is some 6 MB.
pub const LONG_INPUT: usize = 64 << 10;
