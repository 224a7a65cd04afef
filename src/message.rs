//! The three top-level messages the crate reads and writes.

use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};

/// Which top-level message an input holds (`--message` on the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MessageKind {
    /// `xla.ShapeProto`, the default.
    #[default]
    Shape,
    /// `xla.LayoutProto` on its own.
    Layout,
    /// `xla.ProgramShapeProto`: parameters, result and parameter names.
    ProgramShape,
}

impl MessageKind {
    /// The fully qualified proto name, e.g. `xla.ShapeProto`.
    pub fn proto_name(self) -> &'static str {
        match self {
            MessageKind::Shape => "xla.ShapeProto",
            MessageKind::Layout => "xla.LayoutProto",
            MessageKind::ProgramShape => "xla.ProgramShapeProto",
        }
    }

    /// The command-line name: `shape`, `layout` or `program-shape`.
    pub fn cli_name(self) -> &'static str {
        match self {
            MessageKind::Shape => "shape",
            MessageKind::Layout => "layout",
            MessageKind::ProgramShape => "program-shape",
        }
    }
}

/// One raw message of any of the three kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyMessage {
    /// A shape.
    Shape(ShapeProto),
    /// A lone layout.
    Layout(LayoutProto),
    /// A program shape.
    ProgramShape(ProgramShapeProto),
}

impl AnyMessage {
    /// Which kind of message this is.
    pub fn kind(&self) -> MessageKind {
        match self {
            AnyMessage::Shape(_) => MessageKind::Shape,
            AnyMessage::Layout(_) => MessageKind::Layout,
            AnyMessage::ProgramShape(_) => MessageKind::ProgramShape,
        }
    }
}

/// Which part of a program shape a shape belongs to, as the readers that hand a
/// program shape on a shape at a time say ([`crate::text::parse_program_shape_leaves`],
/// [`crate::codec::decode_clean_program_shape_leaves`],
/// [`crate::json::program_shape_from_json_leaves`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramPart {
    /// The parameter of this index.
    Parameter(usize),
    /// The result.
    Result,
}

impl ProgramPart {
    /// Where the part stands in its `ProgramShapeProto`: `parameters[i]` or `result`.
    pub fn path(self) -> crate::path::Path {
        match self {
            ProgramPart::Parameter(i) => crate::path::Path::root().field("parameters").index(i),
            ProgramPart::Result => crate::path::Path::root().field("result"),
        }
    }
}
