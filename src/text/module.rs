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

use prost::Message;

use super::cursor::{is_ident_byte, is_ident_start};
use super::parser::ParseOptions;
use super::types;
use crate::path::Path;
use crate::proto::{PrimitiveType, ProgramShapeProto, ShapeProto};

/// A checker: the problems of one shape, each with its path inside the shape.
pub type Check<'c> = dyn FnMut(&ShapeProto) -> Vec<(Path, String)> + 'c;

/// One problem found in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line (text modules; 0 for protos).
    pub line: usize,
    /// 1-based column in characters (text modules; 0 for protos).
    pub column: usize,
    /// Where: for text, the shape as written; for protos, the path to the field.
    pub place: String,
    /// What is wrong.
    pub message: String,
}

/// What a scan saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Shapes found (a program shape counts its parameters and result).
    pub shapes: usize,
    /// Problems reported.
    pub problems: usize,
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
                summary.problems += 1;
                report(Finding {
                    line: line_number,
                    column: e.valid_up_to() + 1,
                    place: String::new(),
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
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = line[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| i + 2 + end + 2);
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => return,
            _ if is_ident_start(b)
                && (i == 0 || !(is_ident_byte(bytes[i - 1]) || bytes[i - 1] == b'%')) =>
            {
                let end = i + bytes[i..].iter().take_while(|&&b| is_ident_byte(b)).count();
                if bytes.get(end) == Some(&b'[') && types::type_from_name(&line[i..end]).is_some() {
                    summary.shapes += 1;
                    match super::parse_shape_at(line, i, options) {
                        Ok((shape, after)) => {
                            let problems = check(&shape);
                            for (path, message) in problems {
                                summary.problems += 1;
                                report(Finding {
                                    line: line_number,
                                    column: column_of(line, i),
                                    place: line[i..after].trim_end().to_string(),
                                    message: with_path(&path, &message),
                                });
                            }
                            i = after;
                        }
                        Err(e) => {
                            summary.problems += 1;
                            let at = e.span().start.min(line.len());
                            report(Finding {
                                line: line_number,
                                column: column_of(line, at),
                                place: String::new(),
                                message: e.message().to_string(),
                            });
                            i = end + 1;
                        }
                    }
                } else {
                    i = end;
                }
            }
            _ => i += 1,
        }
    }
}

fn with_path(path: &Path, message: &str) -> String {
    if path.is_root() {
        message.to_string()
    } else {
        format!("{path}: {message}")
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
    let root = Path::root();
    let mut computation_index = 0;
    for field in fields(bytes) {
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

struct ProtoScan<'s, 'c> {
    check: &'s mut Check<'c>,
    report: &'s mut dyn FnMut(Finding),
    summary: &'s mut Summary,
}

impl ProtoScan<'_, '_> {
    fn problem(&mut self, path: &Path, context: &str, message: String) {
        self.summary.problems += 1;
        (self.report)(Finding {
            line: 0,
            column: 0,
            place: path.to_string(),
            message: if context.is_empty() {
                message
            } else {
                format!("{message} ({context})")
            },
        });
    }

    fn shape(&mut self, bytes: &[u8], path: &Path, context: &str) {
        self.summary.shapes += 1;
        match ShapeProto::decode(bytes) {
            Ok(shape) => {
                for (inner, message) in (self.check)(&shape) {
                    self.problem(&inner.prefixed(path), context, message);
                }
            }
            Err(e) => self.problem(path, context, format!("cannot decode the shape: {e}")),
        }
    }

    fn program_shape(&mut self, bytes: &[u8], path: &Path, context: &str) {
        match ProgramShapeProto::decode(bytes) {
            Ok(program) => {
                let parameters = path.field("parameters");
                for (i, parameter) in program.parameters.iter().enumerate() {
                    self.summary.shapes += 1;
                    for (inner, message) in (self.check)(parameter) {
                        self.problem(&inner.prefixed(&parameters.index(i)), context, message);
                    }
                }
                if let Some(result) = &program.result {
                    self.summary.shapes += 1;
                    for (inner, message) in (self.check)(result) {
                        self.problem(&inner.prefixed(&path.field("result")), context, message);
                    }
                }
            }
            Err(e) => self.problem(
                path,
                context,
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

/// The checks applied when no other checker is given: XLA HEAD's
/// `ShapeUtil::ValidateShapeWithOptionalLayout` plus what its `Shape::FromProto`
/// refuses (missing layouts allowed when `allow_missing_layouts`).
pub fn check_shape(shape: &ShapeProto, allow_missing_layouts: bool) -> Vec<(Path, String)> {
    let mut problems = Vec::new();
    let mut stack: Vec<(&ShapeProto, Path)> = vec![(shape, Path::root())];
    while let Some((shape, path)) = stack.pop() {
        let ty = shape.element_type;
        let kind = PrimitiveType::try_from(ty).ok();
        if !types::is_array_type(ty) && shape.layout.is_some() {
            let name = types::type_name(ty).unwrap_or("invalid");
            problems.push((
                path.field("layout"),
                format!("a {name} shape should not have a layout"),
            ));
        }
        match kind {
            None | Some(PrimitiveType::Invalid) => {
                problems.push((
                    path.field("element_type"),
                    format!("invalid element type {ty}"),
                ));
            }
            Some(PrimitiveType::Tuple) => {
                for (i, element) in shape.tuple_shapes.iter().enumerate().rev() {
                    stack.push((element, path.field("tuple_shapes").index(i)));
                }
            }
            Some(PrimitiveType::Buffer) => match shape.tuple_shapes.as_slice() {
                [inner] if types::is_array_type(inner.element_type) => {
                    stack.push((inner, path.field("tuple_shapes").index(0)));
                }
                _ => problems.push((
                    path.field("tuple_shapes"),
                    "a buffer shape must hold exactly one array shape".to_string(),
                )),
            },
            Some(PrimitiveType::Token | PrimitiveType::OpaqueType) => {}
            Some(_) => check_array(shape, &path, allow_missing_layouts, &mut problems),
        }
    }
    problems
}

fn check_array(
    shape: &ShapeProto,
    path: &Path,
    allow_missing_layouts: bool,
    problems: &mut Vec<(Path, String)>,
) {
    let dims = &shape.dimensions;
    let dynamic = &shape.is_dynamic_dimension;
    if !dynamic.is_empty() && dynamic.len() != dims.len() {
        problems.push((
            path.field("is_dynamic_dimension"),
            format!(
                "{} is_dynamic_dimension entries for {} dimensions",
                dynamic.len(),
                dims.len()
            ),
        ));
    }
    let mut product: Option<i64> = Some(1);
    for (i, &size) in dims.iter().enumerate() {
        if size == i64::MIN {
            continue;
        }
        if size < 0 {
            problems.push((
                path.field("dimensions").index(i),
                format!("negative dimension at index {i}: {size}"),
            ));
            product = None;
            continue;
        }
        product = product.and_then(|p| p.checked_mul(size));
    }
    let element_bytes = crate::text::types::byte_width(shape.element_type);
    if product.is_none() && dims.iter().all(|&d| d >= 0 || d == i64::MIN) {
        problems.push((path.field("dimensions"), "dimensions overflow".to_string()));
    } else if let Some(count) = product {
        if count.checked_mul(element_bytes).is_none() {
            problems.push((
                path.field("dimensions"),
                "shape size may overflow int64".to_string(),
            ));
        }
    }
    let Some(layout) = shape.layout.as_deref() else {
        if !allow_missing_layouts {
            problems.push((path.clone(), "shape does not have a layout".to_string()));
        }
        return;
    };
    let at = path.field("layout");
    let m2m = &layout.minor_to_major;
    if m2m.len() != dims.len() {
        problems.push((
            at.field("minor_to_major"),
            format!(
                "layout minor_to_major field contains {} elements, but shape has {} dimensions",
                m2m.len(),
                dims.len()
            ),
        ));
    } else {
        let mut seen = vec![false; dims.len()];
        for (i, &dim) in m2m.iter().enumerate() {
            let index = usize::try_from(dim).ok().filter(|&d| d < dims.len());
            match index {
                None => problems.push((
                    at.field("minor_to_major").index(i),
                    format!("out-of-bounds value {dim} for {} dimensions", dims.len()),
                )),
                Some(d) if seen[d] => problems.push((
                    at.field("minor_to_major").index(i),
                    format!("duplicate value {dim}"),
                )),
                Some(d) => seen[d] = true,
            }
        }
    }
    if layout.tail_padding_alignment_in_elements < 0 {
        problems.push((
            at.field("tail_padding_alignment_in_elements"),
            format!(
                "tail padding alignment {} is <= 0",
                layout.tail_padding_alignment_in_elements
            ),
        ));
    }
    if layout.index_primitive_type != 0 {
        problems.push((
            at.field("index_primitive_type"),
            "layout has an index primitive type, but is not a sparse array".to_string(),
        ));
    }
    if layout.pointer_primitive_type != 0 {
        problems.push((
            at.field("pointer_primitive_type"),
            "layout has a pointer primitive type, but is not a sparse array".to_string(),
        ));
    }
    if layout.physical_shape.is_some() {
        problems.push((
            at.field("physical_shape"),
            "layout has a physical shape, but is not a sparse array".to_string(),
        ));
    }
    for (i, tile) in layout.tiles.iter().enumerate() {
        if tile.dimensions.is_empty() || tile.dimensions.contains(&0) {
            problems.push((
                at.field("tiles").index(i),
                "layout has invalid tiles".to_string(),
            ));
        } else if tile.dimensions.iter().any(|&d| d < 0 && d != i64::MIN) {
            problems.push((
                at.field("tiles").index(i),
                "negative tile dimension (only '*', INT64_MIN, may be negative)".to_string(),
            ));
        }
    }
    if layout.element_size_in_bits < 0 {
        problems.push((
            at.field("element_size_in_bits"),
            format!(
                "element size in bits {} is negative",
                layout.element_size_in_bits
            ),
        ));
    }
}
