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
pub mod json;
pub mod layout;
pub mod message;
pub mod path;
pub mod primitive;
pub mod proto;
pub mod relayout;
pub mod report;
pub mod shape;
pub mod text;
pub mod validate;

pub use error::{Issue, IssueKind, Report, Severity, ValidationError};
pub use index::{IndexError, LayoutPlan, PlanError};
pub use layout::{Layout, PaddingValue, SplitConfig, Tile, TileDim};
pub use message::{AnyMessage, MessageKind};
pub use path::{Path, Segment};
pub use primitive::PrimitiveType;
pub use shape::{ArrayShape, DimSize, ProgramShape, Shape};
pub use validate::Validated;
