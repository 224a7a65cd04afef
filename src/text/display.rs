//! `Display` and `FromStr` for the validated domain types, through their protos.
//!
//! `Display` prints the HLO text with layouts (our legacy extension included);
//! `FromStr` parses as XLA's standalone parser does (missing layouts filled with the
//! default) and then validates with the HLO text rules ([`Options::hlo_text`]).

use std::fmt;
use std::str::FromStr;

use super::printer::{Mode, Printer};
use super::ParseError;
use crate::error::ValidationError;
use crate::layout::Layout;
use crate::path::Path;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use crate::shape::{ProgramShape, Shape};
use crate::validate::{
    validate_layout_with, validate_program_shape_with, validate_shape_with, Options,
};

/// Why a string is not a valid shape, layout or program shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromTextError {
    /// The text does not parse.
    Parse(ParseError),
    /// It parses, but the value is invalid.
    Invalid(ValidationError),
}

impl fmt::Display for FromTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FromTextError::Parse(e) => e.fmt(f),
            FromTextError::Invalid(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FromTextError {}

fn write_with(
    f: &mut fmt::Formatter<'_>,
    print: impl FnOnce(&Printer<'_>, &mut String) -> Result<(), super::PrintError>,
) -> fmt::Result {
    let root = Path::root();
    let mut out = String::new();
    // Validated values always print; a failure here would be a bug, reported as a
    // formatting error rather than a panic.
    print(&Printer::new(Mode::Display, true, &root), &mut out).map_err(|_| fmt::Error)?;
    f.write_str(&out)
}

impl fmt::Display for Shape {
    /// `bf16[32,4096]{1,0:T(8,128)(2,1)}`, as XLA prints it with layouts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = ShapeProto::from(self);
        write_with(f, |p, out| p.shape(&proto, out))
    }
}

impl fmt::Display for Layout {
    /// `{1,0:T(8,128)}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = LayoutProto::from(self);
        write_with(f, |p, out| p.layout(&proto, out))
    }
}

impl fmt::Display for ProgramShape {
    /// `(f32[2]{0}, s32[])->f32[]`, with `name: ` before each parameter when named.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = ProgramShapeProto::from(self);
        write_with(f, |p, out| p.program_shape(&proto, out))
    }
}

impl FromStr for Shape {
    type Err = FromTextError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let proto = super::parse_shape(s).map_err(FromTextError::Parse)?;
        validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .map_err(FromTextError::Invalid)
    }
}

impl FromStr for Layout {
    type Err = FromTextError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let proto = super::parse_layout(s).map_err(FromTextError::Parse)?;
        validate_layout_with(&proto, Options::hlo_text())
            .into_result()
            .map_err(FromTextError::Invalid)
    }
}

impl FromStr for ProgramShape {
    type Err = FromTextError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let proto = super::parse_program_shape(s).map_err(FromTextError::Parse)?;
        validate_program_shape_with(&proto, Options::hlo_text())
            .into_result()
            .map_err(FromTextError::Invalid)
    }
}
