//! Finding and checking every shape in a whole HLO module, as text or as a serialized
//! `HloModuleProto`, without building the module.
//!
//! - Text (`compiled.as_text()`, `--xla_dump_to` files, with or without `%` before
//!   names): the module is read line by line, so memory stays flat however big the
//!   dump is (it grows only with the longest line). Outside string literals and
//!   comments, every type word followed by `[` starts a shape: instruction results,
//!   operands, computation signatures, `entry_computation_layout`, attribute shapes.
//!   Tuples are checked through their elements. Problems are reported with a 1-based
//!   line and column (in characters).
//! - Proto: only the messages on the path to shapes are decoded:
//!   `HloModuleProto.computations` (3) → `HloComputationProto.instructions` (2) →
//!   `HloInstructionProto.shape` (3), `outfeed_shape` (29),
//!   `operand_shapes_with_layout` (57); `HloComputationProto.program_shape` (4);
//!   `HloModuleProto.host_program_shape` (4). Field numbers are those of the
//!   `xla/service/hlo.proto` embedded in jaxlib 0.10.2. Problems are reported with
//!   their proto path, e.g. `computations[1].instructions[4].shape.layout.minor_to_major`.

use std::io::BufRead;

use super::cursor::{is_ident_byte, is_ident_start};
use super::parser::ParseOptions;
use super::types;
use crate::error::{Report, Severity};
use crate::path::Path;
use crate::proto::ShapeProto;

/// A checker: the report on one shape (paths inside the shape).
pub type Check<'c> = dyn FnMut(&ShapeProto) -> Report + 'c;

/// One problem found in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line (text modules; 0 for protos).
    pub line: usize,
    /// 1-based column in characters (text modules; 0 for protos).
    pub column: usize,
    /// Where: for text, the shape as written (empty for a parse error); for protos,
    /// the path to the field.
    pub place: String,
    /// Error (parse errors, invalid shapes, undecodable shapes) or warning.
    pub severity: Severity,
    /// What is wrong, with the path inside the shape first.
    pub message: String,
}

/// What a scan saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Shapes found (a program shape counts its parameters and result).
    pub shapes: usize,
    /// Errors reported.
    pub errors: usize,
    /// Warnings reported.
    pub warnings: usize,
    /// Lines read (text modules).
    pub lines: usize,
}

/// A failure to read the module at all.
#[derive(Debug)]
pub enum ScanError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// The bytes are not a well-formed protobuf message (with the path where it broke).
    Wire(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Io(e) => write!(f, "{e}"),
            ScanError::Wire(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ScanError {}

/// Scans an HLO module in text form, line by line, calling `report` for each problem:
/// parse errors, and whatever `check` finds in each shape parsed.
pub fn scan_text<R: BufRead>(
    mut reader: R,
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    let mut summary = Summary::default();
    let mut buffer = Vec::new();
    let options = ParseOptions {
        fill_missing_layouts: false,
    };
    loop {
        buffer.clear();
        if reader
            .read_until(b'\n', &mut buffer)
            .map_err(ScanError::Io)?
            == 0
        {
            return Ok(summary);
        }
        summary.lines += 1;
        let line_number = summary.lines;
        let line = match std::str::from_utf8(&buffer) {
            Ok(line) => line,
            Err(e) => {
                summary.errors += 1;
                report(Finding {
                    line: line_number,
                    column: e.valid_up_to() + 1,
                    place: String::new(),
                    severity: Severity::Error,
                    message: "the line is not UTF-8".to_string(),
                });
                continue;
            }
        };
        scan_line(line, line_number, options, check, report, &mut summary);
    }
}

fn column_of(line: &str, pos: usize) -> usize {
    line.get(..pos).map_or(pos, |s| s.chars().count()) + 1
}

fn scan_line(
    line: &str,
    line_number: usize,
    options: ParseOptions,
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
    summary: &mut Summary,
) {
    let bytes = line.as_bytes();
    let mut i = 0;
    // Only three bytes matter: a string, a comment, or the `[` of `TYPE[`.
    while let Some(offset) = memchr::memchr3(b'[', b'"', b'/', &bytes[i..]) {
        let at = i + offset;
        match bytes[at] {
            b'"' => i = string_end(bytes, at + 1),
            b'/' => match bytes.get(at + 1) {
                Some(b'*') => {
                    i = memchr::memmem::find(&bytes[at + 2..], b"*/")
                        .map_or(bytes.len(), |end| at + 2 + end + 2);
                }
                Some(b'/') => return,
                _ => i = at + 1,
            },
            _ => {
                // The word before the `[`: a type word starts a shape, unless it is
                // the tail of a `%name`.
                let start = at
                    - bytes[..at]
                        .iter()
                        .rev()
                        .take_while(|&&b| is_ident_byte(b))
                        .count();
                let is_type = start < at
                    && is_ident_start(bytes[start])
                    && (start == 0 || bytes[start - 1] != b'%')
                    && types::type_from_name(&line[start..at]).is_some();
                i = if is_type {
                    shape_at(line, start, line_number, options, check, report, summary).max(at + 1)
                } else {
                    at + 1
                };
            }
        }
    }
}

/// The index just after the string whose body starts at `from` (after its `"`).
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(offset) = memchr::memchr2(b'"', b'\\', &bytes[from..]) {
        let at = from + offset;
        if bytes[at] == b'"' {
            return at + 1;
        }
        from = at + 2;
        if from >= bytes.len() {
            break;
        }
    }
    bytes.len()
}

/// Parses and checks the shape starting at `start`; returns where scanning goes on.
fn shape_at(
    line: &str,
    start: usize,
    line_number: usize,
    options: ParseOptions,
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
    summary: &mut Summary,
) -> usize {
    summary.shapes += 1;
    match super::parse_shape_at(line, start, options) {
        Ok((shape, after)) => {
            for issue in check(&shape) {
                count(summary, issue.severity());
                report(Finding {
                    line: line_number,
                    column: column_of(line, start),
                    place: line[start..after].trim_end().to_string(),
                    severity: issue.severity(),
                    message: issue.to_string(),
                });
            }
            after
        }
        Err(e) => {
            summary.errors += 1;
            let at = e.span().start.min(line.len());
            report(Finding {
                line: line_number,
                column: column_of(line, at),
                place: String::new(),
                severity: Severity::Error,
                message: e.message().to_string(),
            });
            0
        }
    }
}

fn count(summary: &mut Summary, severity: Severity) {
    match severity {
        Severity::Error => summary.errors += 1,
        Severity::Warning => summary.warnings += 1,
    }
}

/// A minimal protobuf wire walker: the fields of one message, in order.
struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

enum Value<'a> {
    Varint,
    Bytes(&'a [u8]),
    Fixed,
}

fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let at = self.pos;
        let result = (|| {
            let key = varint(self.bytes, &mut self.pos).ok_or("invalid varint key")?;
            let number = key >> 3;
            if number == 0 {
                return Err("field number 0".to_string());
            }
            let value = match key & 7 {
                0 => {
                    varint(self.bytes, &mut self.pos).ok_or("invalid varint")?;
                    Value::Varint
                }
                1 | 5 => {
                    let width = if key & 7 == 1 { 8 } else { 4 };
                    if self.bytes.len() - self.pos < width {
                        return Err("truncated fixed-width field".to_string());
                    }
                    self.pos += width;
                    Value::Fixed
                }
                2 => {
                    let len = varint(self.bytes, &mut self.pos).ok_or("invalid length")?;
                    let len = usize::try_from(len).map_err(|_| "length too large")?;
                    if self.bytes.len() - self.pos < len {
                        return Err(format!("field {number} runs past the end of the message"));
                    }
                    let value = &self.bytes[self.pos..self.pos + len];
                    self.pos += len;
                    Value::Bytes(value)
                }
                wire => return Err(format!("field {number} has unsupported wire type {wire}")),
            };
            Ok((number, value))
        })();
        if result.is_err() {
            self.pos = self.bytes.len();
        }
        Some(result.map_err(|e: String| format!("{e} at byte {at}")))
    }
}

fn fields(bytes: &[u8]) -> Fields<'_> {
    Fields { bytes, pos: 0 }
}

/// Scans a serialized `HloModuleProto`, calling `report` for each problem `check` finds
/// and for each shape that does not decode.
pub fn scan_proto(
    bytes: &[u8],
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    let mut summary = Summary::default();
    let mut scan = ProtoScan {
        check,
        report,
        summary: &mut summary,
    };
    let (module, root) = unwrap_module(bytes)?;
    let mut computation_index = 0;
    for field in fields(module) {
        let (number, value) = field.map_err(ScanError::Wire)?;
        let Value::Bytes(value) = value else { continue };
        match number {
            3 => {
                let path = root.field("computations").index(computation_index);
                computation_index += 1;
                scan.computation(value, &path)?;
            }
            4 => scan.program_shape(value, &root.field("host_program_shape"), ""),
            _ => {}
        }
    }
    Ok(summary)
}

/// The `HloModuleProto` inside `bytes`: the message itself, or the one wrapped in an
/// `HloProto` (`hlo_module` = 1, what `--xla_dump_hlo_as_proto` writes) or in an
/// `HloSnapshot` (`hlo` = 1, an `HloProto`), with the path to it.
///
/// A module's field 1 is its name, a string, which never starts with a newline; a
/// wrapper's field 1 is a message whose own first field is field 1 (the module's name,
/// or the HloProto's module), so its first byte is `0x0a`.
fn unwrap_module(bytes: &[u8]) -> Result<(&[u8], Path), ScanError> {
    let mut current = bytes;
    let mut depth = 0;
    while depth < 2 {
        let mut first = None;
        for field in fields(current) {
            if let (1, Value::Bytes(inner)) = field.map_err(ScanError::Wire)? {
                first.get_or_insert(inner);
            }
        }
        match first {
            Some(inner) if inner.first() == Some(&0x0a) && fields(inner).all(|f| f.is_ok()) => {
                current = inner;
                depth += 1;
            }
            _ => break,
        }
    }
    let path = match depth {
        0 => Path::root(),
        1 => Path::root().field("hlo_module"),
        _ => Path::root().field("hlo").field("hlo_module"),
    };
    Ok((current, path))
}

struct ProtoScan<'s, 'c> {
    check: &'s mut Check<'c>,
    report: &'s mut dyn FnMut(Finding),
    summary: &'s mut Summary,
}

impl ProtoScan<'_, '_> {
    fn problem(&mut self, path: &Path, context: &str, severity: Severity, message: String) {
        count(self.summary, severity);
        (self.report)(Finding {
            line: 0,
            column: 0,
            place: path.to_string(),
            severity,
            message: if context.is_empty() {
                message
            } else {
                format!("{message} ({context})")
            },
        });
    }

    fn issues(&mut self, shape: &ShapeProto, path: &Path, context: &str) {
        for issue in (self.check)(shape) {
            let issue = issue.prefixed(path);
            let message = issue.kind().to_string();
            self.problem(issue.path(), context, issue.severity(), message);
        }
    }

    fn shape(&mut self, bytes: &[u8], path: &Path, context: &str) {
        self.summary.shapes += 1;
        match crate::codec::decode_shape(bytes) {
            Ok(decoded) => {
                self.issues(&decoded.message, path, context);
                self.unknown_fields(&decoded.unknown_fields(), path, context);
            }
            Err(e) => self.problem(
                path,
                context,
                Severity::Error,
                format!("cannot decode the shape: {e}"),
            ),
        }
    }

    /// Fields of a shape message the schema does not know: warnings (errors for a
    /// known field with the wrong wire type), as for a lone message.
    fn unknown_fields(
        &mut self,
        unknown: &[crate::codec::UnknownFieldInfo],
        path: &Path,
        context: &str,
    ) {
        for issue in crate::validate::unknown_fields_report(unknown) {
            let issue = issue.prefixed(path);
            let message = issue.kind().to_string();
            self.problem(issue.path(), context, issue.severity(), message);
        }
    }

    fn program_shape(&mut self, bytes: &[u8], path: &Path, context: &str) {
        match crate::codec::decode_program_shape(bytes) {
            Ok(decoded) => {
                let program = &decoded.message;
                let parameters = path.field("parameters");
                for (i, parameter) in program.parameters.iter().enumerate() {
                    self.summary.shapes += 1;
                    self.issues(parameter, &parameters.index(i), context);
                }
                if let Some(result) = &program.result {
                    self.summary.shapes += 1;
                    self.issues(result, &path.field("result"), context);
                }
                self.unknown_fields(&decoded.unknown_fields(), path, context);
            }
            Err(e) => self.problem(
                path,
                context,
                Severity::Error,
                format!("cannot decode the program shape: {e}"),
            ),
        }
    }

    fn computation(&mut self, bytes: &[u8], path: &Path) -> Result<(), ScanError> {
        let mut name = String::new();
        let mut instruction_index = 0;
        for field in fields(bytes) {
            let (number, value) = field.map_err(|e| ScanError::Wire(format!("{path}: {e}")))?;
            let Value::Bytes(value) = value else { continue };
            match number {
                1 => name = String::from_utf8_lossy(value).into_owned(),
                2 => {
                    let at = path.field("instructions").index(instruction_index);
                    instruction_index += 1;
                    self.instruction(value, &at, &name)?;
                }
                4 => {
                    let context = format!("computation {name}");
                    self.program_shape(value, &path.field("program_shape"), &context);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn instruction(
        &mut self,
        bytes: &[u8],
        path: &Path,
        computation: &str,
    ) -> Result<(), ScanError> {
        let mut name = String::new();
        let mut operand_index = 0;
        for field in fields(bytes) {
            let (number, value) = field.map_err(|e| ScanError::Wire(format!("{path}: {e}")))?;
            let Value::Bytes(value) = value else { continue };
            let context = || format!("instruction {name} in computation {computation}");
            match number {
                1 => name = String::from_utf8_lossy(value).into_owned(),
                3 => self.shape(value, &path.field("shape"), &context()),
                29 => self.shape(value, &path.field("outfeed_shape"), &context()),
                57 => {
                    let at = path
                        .field("operand_shapes_with_layout")
                        .index(operand_index);
                    operand_index += 1;
                    self.shape(value, &at, &context());
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The checker for shapes read from module text: the crate's validation gate with the
/// HLO text rules ([`crate::validate::Options::hlo_text`]: `*` tiles accepted, as
/// XLA's parser does; missing layouts are fine, as in XLA's
/// `ValidateShapeWithOptionalLayout`).
pub fn validate_text(shape: &ShapeProto) -> Report {
    crate::validate::validate_shape_with(shape, crate::validate::Options::hlo_text())
        .into_parts()
        .1
}

/// The checker for shapes read from a serialized module: the validation gate with the
/// proto rules ([`crate::validate::Options::proto`], XLA's `FromProto`).
pub fn validate_proto(shape: &ShapeProto) -> Report {
    crate::validate::validate_shape_with(shape, crate::validate::Options::proto())
        .into_parts()
        .1
}
