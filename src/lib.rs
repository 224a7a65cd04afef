#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod json;
pub mod message;
pub mod path;
pub mod proto;

pub use message::{AnyMessage, MessageKind};
pub use path::{Path, Segment};
