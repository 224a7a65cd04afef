//! Finding and checking every shape in a whole HLO module, as text or as a serialized
//! `HloModuleProto`, without building the module.
//!
//! - Text (`compiled.as_text()`, `--xla_dump_to` files, with or without `%` before
//!   names): read token by token, line by line, so memory stays flat however big the
//!   dump is (it grows only with the longest line). The scanner knows the structure of
//!   a module (see [`text`](self#module-text) below) and reads every place where XLA's
//!   parser expects a shape as one; anything else there is an error at its line and
//!   column (1-based, in characters).
//! - Proto: only the messages on the path to shapes are decoded:
//!   `HloModuleProto.computations` (3) → `HloComputationProto.instructions` (2) →
//!   `HloInstructionProto.shape` (3), `outfeed_shape` (29),
//!   `operand_shapes_with_layout` (57), a custom call's `literal` (8: its
//!   `LiteralProto.shape`, 1, and `tuple_literals`, 10);
//!   `HloComputationProto.program_shape` (4); `HloModuleProto.host_program_shape` (4).
//!   Field numbers are those of the `xla/service/hlo.proto` embedded in jaxlib 0.10.2.
//!   Problems are reported with their proto path, e.g.
//!   `computations[1].instructions[4].shape.layout.minor_to_major`.

use crate::message::ProgramPart;
use std::io::BufRead;

use crate::error::{Issue, Report, Severity};
use crate::path::Path;
use crate::proto::ShapeProto;
use crate::report::{repeated_text, Finding, Texted};
use crate::text::HloStyle;

mod lexer;
mod line;
mod names;
mod text;

pub use names::{Names, NamesIter};

/// A checker: the report on one shape (paths inside the shape).
pub type Check<'c> = dyn FnMut(&ShapeProto) -> Report + 'c;

/// What a shape is, where it stands in a module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Parameter `index` in the module's `entry_computation_layout`.
    EntryParameter {
        /// 0-based.
        index: usize,
    },
    /// The result in the module's `entry_computation_layout`.
    EntryResult,
    /// A parameter in a computation's signature (`name: shape`).
    Parameter {
        /// 0-based.
        index: usize,
        /// The name as written (`x.1:` without the colon... as written in the text).
        name: String,
    },
    /// The result in a computation's signature.
    ComputationResult,
    /// An instruction's result shape.
    Result,
    /// The shape written before operand `index` of an instruction.
    Operand {
        /// 0-based.
        index: usize,
    },
    /// A shape-valued attribute (`outfeed_shape`, `operand_layout_constraints`).
    Attribute {
        /// The attribute's name.
        name: String,
        /// The position in a list-valued attribute (0 otherwise).
        index: usize,
    },
}

/// A shape found in module text, and where.
#[derive(Clone, Debug)]
pub struct Site<'a> {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The computation it is in (its name without `%`), if any.
    pub computation: Option<&'a str>,
    /// Whether that computation is the module's entry computation (`ENTRY`).
    pub entry: bool,
    /// The instruction it belongs to (its name without `%`), if any.
    pub instruction: Option<&'a str>,
    /// What the shape is.
    pub role: Role,
    /// The shape as written.
    pub text: &'a str,
    /// Whether the shape handed on with the site is an empty tuple standing for the
    /// long tuple `text` holds, to be read from it (only when asked for: see
    /// [`scan_text_for_listing`]).
    pub elided: bool,
}

/// An instruction found in a module (text or proto), once its operands are read.
#[derive(Clone, Debug)]
pub struct InstructionSite<'a> {
    /// 1-based line of its opcode (text); 0 in a proto.
    pub line: usize,
    /// The computation it is in (its name without `%`).
    pub computation: Option<&'a str>,
    /// Whether that computation is the module's entry computation.
    pub entry: bool,
    /// Its name, without `%`.
    pub name: &'a str,
    /// Its opcode (`add`, `fusion`, `parameter`, ...).
    pub opcode: &'a str,
    /// The names of its operands, in order, without `%` (in a proto: the names of the
    /// instructions its `operand_ids` name; an id naming no instruction of the
    /// computation is left out).
    pub operands: &'a Names,
    /// The names of the computations it calls, without `%`, in the order of its
    /// proto's `called_computation_ids`: in text, those its attributes name (`calls`,
    /// `to_apply`, `body` before `condition`, `true_computation` before
    /// `false_computation`, `select` before `scatter`, the lists `branch_computations`
    /// and `called_computations`); in a proto, the computations its
    /// `called_computation_ids` name (an id naming no computation of the module is left
    /// out).
    pub calls: &'a Names,
    /// For a `get-tuple-element`, the tuple element it takes: its `index=` (in a proto,
    /// its `tuple_index`, field 13, which is 0 when left out); `None` for any other
    /// opcode, and for a text whose `index=` is no number.
    pub tuple_index: Option<u64>,
}

/// A shape found in a module proto, and where.
#[derive(Clone, Debug)]
pub struct ProtoSite<'a> {
    /// The proto path of the shape, e.g. `computations[1].instructions[4].shape`.
    pub path: &'a Path,
    /// The computation it is in, if any.
    pub computation: Option<&'a str>,
    /// Whether that computation is the module's entry computation.
    pub entry: bool,
    /// The instruction it belongs to, if any.
    pub instruction: Option<&'a str>,
    /// What the shape is: the module's `host_program_shape` (the entry computation
    /// layout) gives [`Role::EntryParameter`] and [`Role::EntryResult`], a
    /// computation's `program_shape` [`Role::Parameter`] and
    /// [`Role::ComputationResult`], an instruction's `shape` [`Role::Result`],
    /// `outfeed_shape`, a custom call's `literal` and `operand_shapes_with_layout`
    /// [`Role::Attribute`] (the latter named `operand_layout_constraints`, as in text).
    pub role: Role,
    /// When set, the shape handed on is the tuple these bytes encode without its
    /// elements (a `ShapeProto` of 64 KiB or more that is a tuple with elements,
    /// whatever else it holds), to be read from them a shape at a time
    /// ([`walk_proto_for_listing`]).
    pub elided: Option<&'a [u8]>,
}

impl<'a> ProtoSite<'a> {
    /// The site of a part of a program shape (a parameter or the result, `role`) at
    /// `path`, in `computation`.
    fn of_program(path: &'a Path, computation: Option<&'a str>, entry: bool, role: Role) -> Self {
        ProtoSite {
            path,
            computation,
            entry,
            instruction: None,
            role,
            elided: None,
        }
    }
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
    /// Module headers and computations found (text), or computations (protos): zero
    /// means the input is not a module at all.
    pub structures: usize,
}

/// A failure to read the module at all.
#[derive(Debug)]
pub enum ScanError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// The bytes are not a well-formed protobuf message (with the path where it broke).
    Wire(String),
    /// The bytes are a protobuf message, but not an `HloModuleProto` (nor an `HloProto`
    /// or `HloSnapshot` around one): why not.
    NotAModule(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Io(e) => write!(f, "{e}"),
            ScanError::Wire(e) => f.write_str(e),
            ScanError::NotAModule(e) => write!(f, "not an HloModuleProto: {e}"),
        }
    }
}

impl std::error::Error for ScanError {}

/// Scans an HLO module in text form, calling `on_shape` for every shape (with where it
/// stands) and `on_problem` for every structural or syntax problem.
pub fn scan_text_with<R: BufRead>(
    reader: R,
    on_shape: &mut dyn FnMut(&Site<'_>, &ShapeProto),
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    let mut on_shape = |site: &Site<'_>, shape: &ShapeProto, _: Option<&mut text::Issues<'_>>| {
        on_shape(site, shape)
    };
    text::Scanner::new(reader, &mut on_shape, on_problem).run()
}

/// Like [`scan_text_with`], also calling `on_instruction` for every instruction with
/// its opcode, operand names and called computations (after its shapes, those in its
/// attributes too).
pub fn scan_text_instructions<R: BufRead>(
    reader: R,
    on_shape: &mut dyn FnMut(&Site<'_>, &ShapeProto),
    on_instruction: &mut dyn FnMut(&InstructionSite<'_>),
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_instructions(reader, on_shape, Some(on_instruction), on_problem, false)
}

/// [`scan_text_instructions`], except that a tuple of 64 KiB or more on one line is
/// checked a shape at a time and handed on as its text alone ([`Site::elided`]): the
/// layout guard's listing reads it again from there, a shape at a time.
pub fn scan_text_for_listing<R: BufRead>(
    reader: R,
    on_shape: &mut dyn FnMut(&Site<'_>, &ShapeProto),
    on_instruction: &mut dyn FnMut(&InstructionSite<'_>),
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_instructions(reader, on_shape, Some(on_instruction), on_problem, true)
}

/// [`scan_text_for_listing`], with no instructions handed on when `on_instruction` is
/// `None`: their operands' names are then not gathered (an instruction of millions of
/// operands took some twenty times its line).
pub(crate) fn scan_text_for_listing_with<R: BufRead>(
    reader: R,
    on_shape: &mut dyn FnMut(&Site<'_>, &ShapeProto),
    on_instruction: Option<&mut dyn FnMut(&InstructionSite<'_>)>,
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_instructions(reader, on_shape, on_instruction, on_problem, true)
}

fn scan_instructions<R: BufRead>(
    reader: R,
    on_shape: &mut dyn FnMut(&Site<'_>, &ShapeProto),
    on_instruction: Option<&mut dyn FnMut(&InstructionSite<'_>)>,
    on_problem: &mut dyn FnMut(Finding),
    elide: bool,
) -> Result<Summary, ScanError> {
    let mut on_shape = |site: &Site<'_>, shape: &ShapeProto, _: Option<&mut text::Issues<'_>>| {
        on_shape(site, shape)
    };
    let mut scanner = text::Scanner::new(reader, &mut on_shape, on_problem);
    if let Some(on_instruction) = on_instruction {
        scanner = scanner.with_instructions(on_instruction);
    }
    if elide {
        scanner.eliding_long_tuples().run()
    } else {
        scanner.run()
    }
}

/// Scans an HLO module in text form, calling `report` for each problem: structure and
/// syntax errors, and whatever `check` finds in each shape (with the shape's line,
/// column, text, instruction and computation).
///
/// An index or pointer type on a dense array (`{1,0:#(u32)}`), which XLA's text parser
/// accepts and its proto loader rejects, is a warning (`text_only_layout`) here.
pub fn scan_text<R: BufRead>(
    reader: R,
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_checked(reader, Some(check), report)
}

/// [`scan_text`] with [`validate_text`] as the check, run once per distinct shape text:
/// the same findings, and a module that repeats its shapes (most do) validates each only
/// once. The reports are kept with the parsed shapes in the scanner's memo (at most
/// 4,096 texts of at most 16 KiB, 256 KiB of text in all, emptied when full).
pub fn scan_text_validated<R: BufRead>(
    reader: R,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_checked(reader, None, report)
}

/// The finding of `issue` of a shape read from module text: an index or pointer type
/// on a dense array, which XLA's text parser accepts and its proto loader rejects, is
/// a warning (`text_only_layout`).
fn text_finding(issue: &Issue) -> Finding {
    let mut finding = Finding::from_issue(issue);
    if finding.code == "sparse_only_field"
        && (finding.path.ends_with("index_primitive_type")
            || finding.path.ends_with("pointer_primitive_type"))
    {
        finding.code = "text_only_layout";
        finding.severity = Severity::Warning;
        finding.message = format!(
            "XLA's text parser accepts this layout, but its proto loader rejects it ({})",
            finding.message
        );
    }
    finding
}

/// [`scan_text`] with `check`, or with [`validate_text`] run by the scanner once per
/// distinct shape text when `check` is `None`.
fn scan_checked<R: BufRead>(
    reader: R,
    mut check: Option<&mut Check<'_>>,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    let validated = check.is_none();
    let mut warnings = 0;
    let mut extra_errors = 0;
    let report = std::cell::RefCell::new(report);
    // The findings given so far at one place (line and column): a long tuple's
    // elements each come as a shape of their own, and its names come with the first.
    let mut at_site = (0, 0, 0);
    let mut on_shape =
        |site: &Site<'_>, shape: &ShapeProto, issues: Option<&mut text::Issues<'_>>| {
            let fresh;
            let mut of_report;
            let issues: &mut text::Issues<'_> = match (issues, check.as_mut()) {
                (Some(issues), _) => issues,
                (None, check) => {
                    fresh = match check {
                        Some(check) => check(shape),
                        None => validate_text(shape),
                    };
                    of_report = |each: &mut dyn FnMut(&Issue)| fresh.issues().iter().for_each(each);
                    &mut of_report
                }
            };
            let mut nth = 0;
            issues(&mut |issue| {
                let mut finding = text_finding(issue);
                match finding.severity {
                    Severity::Error => extra_errors += 1,
                    Severity::Warning => warnings += 1,
                }
                finding.line = Some(site.line);
                finding.column = Some(site.column);
                if (at_site.0, at_site.1) != (site.line, site.column) {
                    at_site = (site.line, site.column, 0);
                }
                finding.computation = repeated_text(site.computation, at_site.2);
                finding.instruction = repeated_text(site.instruction, at_site.2);
                at_site.2 += 1;
                finding.shape = repeated_text(Some(site.text), nth);
                nth += 1;
                (report.borrow_mut())(finding);
            });
        };
    let mut on_problem = |finding: Finding| (report.borrow_mut())(finding);
    let mut scanner = text::Scanner::new(reader, &mut on_shape, &mut on_problem);
    if validated {
        scanner = scanner.validating().validating_long_tuples_by_leaf();
    }
    let mut summary = scanner.run()?;
    summary.errors += extra_errors;
    summary.warnings += warnings;
    Ok(summary)
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
    Varint(u64),
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
                0 => Value::Varint(varint(self.bytes, &mut self.pos).ok_or("invalid varint")?),
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

/// The shapes of a custom call's `literal` (`HloInstructionProto.literal`, 8), in the
/// order module text lists them (`literal=( s32[2]{0} {1, 2}, (pred[] true) )`): each
/// literal that is no tuple gives its `shape` (1); a tuple's `tuple_literals` (10) are
/// walked in order, and an empty tuple gives nothing. `each` gets a shape's bytes and
/// path. The walk holds one place a tuple deep, not the elements (nested at most
/// [`MAX_LITERAL_NESTING`] tuples deep); the wire error, or the nesting, otherwise.
fn literal_shapes(
    bytes: &[u8],
    path: &Path,
    each: &mut dyn FnMut(&[u8], &Path),
) -> Result<(), String> {
    // The tuples open: the fields still to read, the path of their elements and the
    // index of the next one.
    let mut open: Vec<(Fields<'_>, Path, usize)> = Vec::new();
    let mut next = Some((bytes, path.clone()));
    loop {
        if let Some((literal, at)) = next.take() {
            let mut tuple = false;
            for field in fields(literal) {
                let field = field.map_err(|e| format!("{at}: {e}"))?;
                tuple |= matches!(field, (10, Value::Bytes(_)));
            }
            if tuple {
                if open.len() >= MAX_LITERAL_NESTING {
                    return Err(format!(
                        "{at}: tuple literals nested deeper than {MAX_LITERAL_NESTING} levels"
                    ));
                }
                open.push((fields(literal), at.field("tuple_literals"), 0));
            } else {
                for field in fields(literal) {
                    if let Ok((1, Value::Bytes(shape))) = field {
                        if !is_tuple_shape(shape) {
                            each(shape, &at.field("shape"));
                        }
                    }
                }
            }
            continue;
        }
        let Some((rest, elements, index)) = open.last_mut() else {
            return Ok(());
        };
        // The next element of the innermost tuple, or that tuple is done. (Its fields
        // were read once without error.)
        match rest.find_map(|field| match field {
            Ok((10, Value::Bytes(element))) => Some(element),
            _ => None,
        }) {
            Some(element) => {
                next = Some((element, elements.index(*index)));
                *index += 1;
            }
            None => {
                open.pop();
            }
        }
    }
}

/// How deep tuple literals may nest ([`literal_shapes`]), as in module text.
const MAX_LITERAL_NESTING: usize = 256;

/// Whether a `ShapeProto`'s `element_type` (2, the last one written) is `TUPLE`; bytes
/// that do not read are handed on, for the shape's own decoding to say why.
fn is_tuple_shape(bytes: &[u8]) -> bool {
    let mut tuple = false;
    for field in fields(bytes) {
        match field {
            Ok((2, Value::Varint(ty))) => {
                tuple = ty == crate::proto::PrimitiveType::Tuple as u64;
            }
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    tuple
}

/// Scans a serialized `HloModuleProto` (or an `HloProto` or `HloSnapshot` around one),
/// calling `report` for each problem `check` finds and for each shape that does not
/// decode. Bytes that are not such a message are [`ScanError::NotAModule`].
///
/// Each finding's `shape` is the text of the shape it is about, as XLA prints it.
pub fn scan_proto(
    bytes: &[u8],
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    scan_proto_with_style(bytes, check, report, HloStyle::Xla)
}

/// [`scan_proto`], with the findings' shape text in `style`.
pub fn scan_proto_with_style(
    bytes: &[u8],
    check: &mut Check<'_>,
    report: &mut dyn FnMut(Finding),
    style: HloStyle,
) -> Result<Summary, ScanError> {
    scan_proto_by(bytes, check, report, style, None)
}

/// [`scan_proto_with_style`] with [`validate_proto`] for the check, where a shape of
/// 64 KiB or more that is a plain tuple (its element type and its elements, no unknown
/// field anywhere) is validated a shape at a time, as [`crate::codec::decode_shape_leaves`]
/// reads it: the findings of the whole shape's check, in the same order, each with its
/// own shape's text, in the memory of one shape.
pub fn scan_proto_validated(
    bytes: &[u8],
    report: &mut dyn FnMut(Finding),
    style: HloStyle,
) -> Result<Summary, ScanError> {
    scan_proto_validated_with(bytes, report, style, &mut |_, _, _| LongChecked::Declined)
}

/// What [`scan_proto_validated_with`] asks of a message of 64 KiB or more that the scan
/// does not read a shape at a time itself: a shape that is not a plain tuple with no
/// unknown field, or a program shape that holds an unknown field or gives its result
/// more than once. It checks the message a shape at a time, handing each finding on
/// with its path in the message (as the whole message's check in a module gives
/// them, in the same order), and says what it made of it ([`LongChecked`]).
pub type LongShapeCheck<'a> =
    dyn FnMut(crate::MessageKind, &[u8], &mut dyn FnMut(Finding)) -> LongChecked + 'a;

/// What a [`LongShapeCheck`] made of a message.
#[derive(Debug)]
pub enum LongChecked {
    /// Checked: its findings were handed on; it counts this many shapes.
    Checked(usize),
    /// The message does not decode, with the whole decode's error; nothing was handed
    /// on.
    Undecodable(crate::codec::DecodeError),
    /// Not checked, nothing handed on: the scan checks it whole.
    Declined,
}

/// [`scan_proto_validated`], a shape of 64 KiB or more that is not a plain tuple with no
/// unknown field (a tuple with fields of its own, or holding unknown fields) checked by
/// `long` when it can (the validation of binary messages a shape at a time lives
/// above this module).
pub fn scan_proto_validated_with(
    bytes: &[u8],
    report: &mut dyn FnMut(Finding),
    style: HloStyle,
    long: &mut LongShapeCheck<'_>,
) -> Result<Summary, ScanError> {
    scan_proto_validated_from(bytes, report, style, long, LONG_SHAPE)
}

/// [`scan_proto_validated_with`] reading messages of `long_at` bytes or more a shape at
/// a time (rather than 64 KiB or more), so that tests can compare the reads a shape at a
/// time with the whole ones on small modules.
#[doc(hidden)]
pub fn scan_proto_validated_from(
    bytes: &[u8],
    report: &mut dyn FnMut(Finding),
    style: HloStyle,
    long: &mut LongShapeCheck<'_>,
    long_at: usize,
) -> Result<Summary, ScanError> {
    let mut check = validate_proto;
    let gate = crate::validate::Options::proto();
    scan_proto_by(
        bytes,
        &mut check,
        report,
        style,
        Some((gate, long, long_at)),
    )
}

fn scan_proto_by<'c>(
    bytes: &[u8],
    check: &mut Check<'c>,
    report: &mut dyn FnMut(Finding),
    style: HloStyle,
    by_leaf: Option<(crate::validate::Options, &mut LongShapeCheck<'c>, usize)>,
) -> Result<Summary, ScanError> {
    let (module, root) = probe_proto(bytes).map_err(ScanError::NotAModule)?;
    let mut summary = Summary::default();
    let (by_leaf, long, long_at) = match by_leaf {
        Some((gate, long, long_at)) => (Some(gate), Some(long), long_at),
        None => (None, None, usize::MAX),
    };
    let mut scan = ProtoScan {
        check,
        report,
        summary: &mut summary,
        style,
        by_leaf,
        long,
        long_at,
    };
    let mut computation_index = 0;
    for field in fields(module) {
        let (number, value) = field.map_err(ScanError::Wire)?;
        let Value::Bytes(value) = value else { continue };
        match number {
            3 => {
                let path = root.field("computations").index(computation_index);
                computation_index += 1;
                scan.summary.structures += 1;
                scan.computation(value, &path)?;
            }
            4 => scan.program_shape(value, &root.field("host_program_shape"), None),
            _ => {}
        }
    }
    Ok(summary)
}

/// Whether `bytes` hold an `HloModuleProto` (or an `HloProto` or `HloSnapshot` around
/// one): the module, and the path to it, or why not.
///
/// The test is structural: every field the module, its computations and their
/// instructions declare (names, ids, computations, instructions, opcodes, shapes) has
/// the wire type of its declared type and strings are UTF-8; at least one computation
/// holds at least one instruction with a name, an opcode or a shape.
pub fn probe_proto(bytes: &[u8]) -> Result<(&[u8], Path), String> {
    if bytes.is_empty() {
        return Err("the input is empty".to_string());
    }
    let (module, root) = unwrap_module(bytes).map_err(|e| e.to_string())?;
    let mut instructions = 0;
    for field in fields(module) {
        let (number, value) = field?;
        match (number, &value) {
            (1 | 2, Value::Bytes(text)) if std::str::from_utf8(text).is_ok() => {}
            (3, Value::Bytes(computation)) => instructions += probe_computation(computation)?,
            (4, Value::Bytes(_)) | (5 | 6, Value::Varint(_)) => {}
            (1..=6, _) => return Err(format!("field {number} of the module has the wrong type")),
            _ => {}
        }
    }
    if instructions == 0 {
        return Err("no computation with instructions".to_string());
    }
    Ok((module, root))
}

/// The number of instructions (with a name, opcode or shape) in a computation, or why
/// it is not one.
fn probe_computation(bytes: &[u8]) -> Result<usize, String> {
    let mut count = 0;
    for field in fields(bytes) {
        let (number, value) = field?;
        match (number, &value) {
            (1, Value::Bytes(text)) if std::str::from_utf8(text).is_ok() => {}
            (2, Value::Bytes(instruction)) => {
                let mut known = false;
                for field in fields(instruction) {
                    let (number, value) = field?;
                    match (number, &value) {
                        (1 | 2, Value::Bytes(text)) if std::str::from_utf8(text).is_ok() => {
                            known |= !text.is_empty();
                        }
                        (3, Value::Bytes(_)) => known = true,
                        (35, Value::Varint(_)) => {}
                        (1 | 2 | 3 | 35, _) => {
                            return Err(format!(
                                "field {number} of an instruction has the wrong type"
                            ))
                        }
                        _ => {}
                    }
                }
                count += usize::from(known);
            }
            (4, Value::Bytes(_)) | (5 | 6, Value::Varint(_)) => {}
            (1..=6, _) => {
                return Err(format!(
                    "field {number} of a computation has the wrong type"
                ))
            }
            _ => {}
        }
    }
    Ok(count)
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

/// Walks a serialized `HloModuleProto` (or an `HloProto` or `HloSnapshot` around one)
/// as [`scan_text_instructions`] walks text: `on_shape` for every shape that decodes
/// (with its place), `on_instruction` for every instruction (after the computation
/// holding it is read), `on_problem` for every shape that does not decode.
///
/// Field numbers (`xla/service/hlo.proto`): module `entry_computation_name` (2),
/// `computations` (3), `host_program_shape` (4); computation `name` (1),
/// `instructions` (2), `program_shape` (4); instruction `name` (1), `opcode` (2),
/// `shape` (3), `outfeed_shape` (29), `id` (35), `operand_ids` (36),
/// `called_computation_ids` (38), `operand_shapes_with_layout` (57); computation `id`
/// (5).
pub fn walk_proto(
    bytes: &[u8],
    on_shape: &mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: &mut dyn FnMut(&InstructionSite<'_>),
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    walk_proto_by(
        bytes,
        on_shape,
        Some(on_instruction),
        on_problem,
        usize::MAX,
    )
}

/// [`walk_proto`], except that a shape of 64 KiB or more that is a tuple with elements
/// (whatever fields of its own it or the tuples in it have, unknown fields too) is
/// checked to decode, a shape at a time, and handed on as its bytes alone
/// ([`ProtoSite::elided`]): the layout guard's listing reads it again from there, a
/// shape at a time.
pub fn walk_proto_for_listing(
    bytes: &[u8],
    on_shape: &mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: &mut dyn FnMut(&InstructionSite<'_>),
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    walk_proto_by(
        bytes,
        on_shape,
        Some(on_instruction),
        on_problem,
        LONG_SHAPE,
    )
}

/// [`walk_proto_for_listing`], with no instructions handed on when `on_instruction` is
/// `None`: their operand ids are then not gathered, nor named (an instruction of
/// millions of packed operand ids took some sixty times its bytes).
pub(crate) fn walk_proto_for_listing_with(
    bytes: &[u8],
    on_shape: &mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: Option<&mut dyn FnMut(&InstructionSite<'_>)>,
    on_problem: &mut dyn FnMut(Finding),
) -> Result<Summary, ScanError> {
    walk_proto_by(bytes, on_shape, on_instruction, on_problem, LONG_SHAPE)
}

/// [`walk_proto_for_listing`] handing on shapes of `long_at` bytes or more as their
/// bytes (rather than 64 KiB or more), so that tests can compare the reads a shape at a
/// time with the whole ones on small modules.
#[doc(hidden)]
pub fn walk_proto_for_listing_from(
    bytes: &[u8],
    on_shape: &mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: &mut dyn FnMut(&InstructionSite<'_>),
    on_problem: &mut dyn FnMut(Finding),
    long_at: usize,
) -> Result<Summary, ScanError> {
    walk_proto_by(bytes, on_shape, Some(on_instruction), on_problem, long_at)
}

/// Walks the module, shapes of `long_at` bytes or more read as [`walk_proto_for_listing`]
/// reads them (`usize::MAX`: none).
fn walk_proto_by(
    bytes: &[u8],
    on_shape: &mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: Option<&mut dyn FnMut(&InstructionSite<'_>)>,
    on_problem: &mut dyn FnMut(Finding),
    long_at: usize,
) -> Result<Summary, ScanError> {
    let (module, root) = probe_proto(bytes).map_err(ScanError::NotAModule)?;
    let mut entry_name = None;
    for field in fields(module) {
        if let (2, Value::Bytes(name)) = field.map_err(ScanError::Wire)? {
            entry_name = Some(String::from_utf8_lossy(name).into_owned());
        }
    }
    let mut walk = ProtoWalk {
        on_shape,
        // Unwrapped and wrapped again so that the reference shortens to the walk's
        // lifetime (`Option<&mut dyn ..>` does not, as a whole).
        on_instruction: match on_instruction {
            Some(on_instruction) => Some(on_instruction),
            None => None,
        },
        on_problem,
        summary: Summary::default(),
        long_at,
        computations: IdNames::default(),
    };
    if walk.on_instruction.is_some() {
        walk.computations = computation_names(module);
    }
    let mut computation_index = 0;
    for field in fields(module) {
        let (number, value) = field.map_err(ScanError::Wire)?;
        let Value::Bytes(value) = value else { continue };
        match number {
            3 => {
                let path = root.field("computations").index(computation_index);
                computation_index += 1;
                walk.summary.structures += 1;
                walk.computation(value, &path, entry_name.as_deref())?;
            }
            4 => {
                let path = root.field("host_program_shape");
                walk.program_shape(value, &path, None, false, true);
            }
            _ => {}
        }
    }
    Ok(walk.summary)
}

struct ProtoWalk<'s> {
    on_shape: &'s mut dyn FnMut(&ProtoSite<'_>, &ShapeProto),
    on_instruction: Option<&'s mut dyn FnMut(&InstructionSite<'_>)>,
    on_problem: &'s mut dyn FnMut(Finding),
    summary: Summary,
    /// Shapes and program shapes of this many bytes or more are read a shape at a
    /// time, tuples with elements handed on as their bytes ([`walk_proto_for_listing`]);
    /// `usize::MAX` for none.
    long_at: usize,
    /// Each computation's name (its bytes) by id, to name the computations
    /// instructions call (only with `on_instruction`).
    computations: IdNames<'s>,
}

/// Names ids as one instruction's ids are read: each id's name (its bytes), and where
/// the instruction last gave it, so that an id given again is held as which name it
/// repeats ([`Names::push_again`]): a byte or a few, where an instruction of millions
/// of repeats of a one-byte id took the name's bytes and four more for each.
///
/// The ids are a list sorted once all are in ([`IdNames::finish`]), 32 bytes an id: a
/// map of ids to names took some 50 at the size it had grown to (a computation of a
/// million instructions, 50 MB a side in `diff`).
#[derive(Default)]
struct IdNames<'b> {
    named: Vec<Named<'b>>,
    /// The instruction being named, counted from 1 ([`IdNames::next`]); [`IdNames::OUT`]
    /// once the count runs out, when no name is given again.
    instruction: u32,
}

/// An id, its name, and where it was last given.
#[derive(Clone, Copy)]
struct Named<'b> {
    id: u64,
    name: &'b [u8],
    /// The instruction ([`IdNames::instruction`]) that last gave it (0: none).
    instruction: u32,
    /// Where in that instruction's names.
    at: u32,
}

impl<'b> IdNames<'b> {
    /// The count of instructions once it runs out (no input under 8 GiB has so many).
    const OUT: u32 = u32::MAX;

    /// Names id `id` `name`.
    fn insert(&mut self, id: u64, name: &'b [u8]) {
        self.named.push(Named {
            id,
            name,
            instruction: 0,
            at: 0,
        });
    }

    /// Sorts the ids once all are in, the last name given of an id kept (as protobuf
    /// reads them, and a map's insert keeps).
    fn finish(&mut self) {
        crate::sorted::last_of_each(&mut self.named, |named| named.id);
        self.named.shrink_to_fit();
    }

    /// Starts on the next instruction's ids.
    fn next(&mut self) {
        self.instruction = self.instruction.saturating_add(1);
    }

    /// Adds the name of `id` to `names`, the current instruction's (none for an id
    /// that names nothing), once [`IdNames::finish`]ed.
    fn name(&mut self, id: u64, names: &mut Names) {
        let Ok(k) = self.named.binary_search_by_key(&id, |named| named.id) else {
            return;
        };
        let named = &mut self.named[k];
        let current = self.instruction;
        if current != Self::OUT
            && named.instruction == current
            && names.push_again(named.at as usize)
        {
            return;
        }
        let at = names.len();
        if names.push(&String::from_utf8_lossy(named.name)) {
            if let Ok(at) = u32::try_from(at) {
                (named.instruction, named.at) = (current, at);
            }
        }
    }
}

/// Each computation's name (its bytes) by its id, of the computations of `module`
/// that have a name (the last given of each, as protobuf reads them; an id not given
/// is 0); a computation whose fields do not read is left out (the walk reports it).
fn computation_names(module: &[u8]) -> IdNames<'_> {
    let mut names = IdNames::default();
    for field in fields(module) {
        let Ok((3, Value::Bytes(computation))) = field else {
            continue;
        };
        let (mut name, mut id) = (None, None);
        for field in fields(computation) {
            match field {
                Ok((1, Value::Bytes(value))) => name = Some(value),
                Ok((5, Value::Varint(value))) => id = Some(value),
                Ok(_) => {}
                Err(_) => {
                    (name, id) = (None, None);
                    break;
                }
            }
        }
        // An id not given is 0, as protobuf reads it (XLA leaves out the first
        // computation's).
        if let Some(name) = name {
            names.insert(id.unwrap_or(0), name);
        }
    }
    names.finish();
    names
}

impl ProtoWalk<'_> {
    fn problem(&mut self, path: &Path, computation: Option<&str>, message: String) {
        self.summary.errors += 1;
        let mut finding = Finding::new("undecodable_shape", Severity::Error, message);
        finding.path = path.to_string();
        finding.computation = computation.map(str::to_string);
        (self.on_problem)(finding);
    }

    fn shape(&mut self, bytes: &[u8], site: &ProtoSite<'_>) {
        if bytes.len() >= self.long_at {
            // Every tuple opened, whatever fields of its own it has: the listing reads
            // any tuple with elements a shape at a time.
            let decoded = crate::codec::decode_shape_tree(bytes, &mut |_, _, _| {}, &mut |_| {});
            match decoded {
                Ok(streamed) if streamed.is_tuple_with_elements() => {
                    self.summary.shapes += 1;
                    let elided = ProtoSite {
                        elided: Some(bytes),
                        role: site.role.clone(),
                        ..*site
                    };
                    (self.on_shape)(&elided, &streamed.shell.message);
                    return;
                }
                Ok(_) => {}
                Err(e) => {
                    return self.problem(
                        site.path,
                        site.computation,
                        format!("cannot decode the shape: {e}"),
                    )
                }
            }
        }
        match crate::codec::decode_shape(bytes) {
            Ok(decoded) => {
                self.summary.shapes += 1;
                (self.on_shape)(site, &decoded.message);
            }
            Err(e) => self.problem(
                site.path,
                site.computation,
                format!("cannot decode the shape: {e}"),
            ),
        }
    }

    fn program_shape(
        &mut self,
        bytes: &[u8],
        path: &Path,
        computation: Option<&str>,
        entry: bool,
        module_layout: bool,
    ) {
        let site = |part, name: &str| {
            let (at, role) = match part {
                ProgramPart::Parameter(index) if module_layout => (
                    path.field("parameters").index(index),
                    Role::EntryParameter { index },
                ),
                ProgramPart::Parameter(index) => (
                    path.field("parameters").index(index),
                    Role::Parameter {
                        index,
                        name: name.to_string(),
                    },
                ),
                ProgramPart::Result if module_layout => (path.field("result"), Role::EntryResult),
                ProgramPart::Result => (path.field("result"), Role::ComputationResult),
            };
            (at, role)
        };
        if bytes.len() >= self.long_at {
            // A part at a time, long tuples handed on as their bytes, once the whole
            // message is known to decode (its error is the whole decode's). A result
            // given more than once is their merge: its occurrences one after the other.
            if let Err(e) = crate::codec::check_program_shape(bytes) {
                let message = format!("cannot decode the program shape: {e}");
                return self.problem(path, computation, message);
            }
            let once = (crate::codec::count_top_level_fields(bytes, 2) > 1)
                .then(|| crate::codec::result_given_once(bytes));
            for (part, value, name) in program_parts(once.as_deref().unwrap_or(bytes)) {
                let (at, role) = site(part, name);
                self.shape(value, &ProtoSite::of_program(&at, computation, entry, role));
            }
            return;
        }
        let program = match crate::codec::decode_program_shape(bytes) {
            Ok(decoded) => decoded.message,
            Err(e) => {
                let message = format!("cannot decode the program shape: {e}");
                return self.problem(path, computation, message);
            }
        };
        let names = |i: usize| program.parameter_names.get(i).map_or("", String::as_str);
        let parts = (program.parameters.iter().enumerate())
            .map(|(i, shape)| (ProgramPart::Parameter(i), shape, names(i)))
            .chain(program.result.iter().map(|r| (ProgramPart::Result, r, "")));
        for (part, shape, name) in parts {
            let (at, role) = site(part, name);
            self.summary.shapes += 1;
            (self.on_shape)(&ProtoSite::of_program(&at, computation, entry, role), shape);
        }
    }

    fn computation(
        &mut self,
        bytes: &[u8],
        path: &Path,
        entry_name: Option<&str>,
    ) -> Result<(), ScanError> {
        let wire = |e| ScanError::Wire(format!("{path}: {e}"));
        let mut name = String::new();
        for field in fields(bytes) {
            if let (1, Value::Bytes(value)) = field.map_err(wire)? {
                name = String::from_utf8_lossy(value).into_owned();
            }
        }
        let entry = entry_name == Some(name.as_str());
        let computation = Some(name.as_str()).filter(|n| !n.is_empty());
        // Each id's instruction name (its bytes in the message), to name operands once
        // all are read; the instructions are read again then, so that a computation of
        // many instructions is not held decoded.
        let mut names = IdNames::default();
        let mut instruction_index = 0;
        for field in fields(bytes) {
            let (number, value) = field.map_err(wire)?;
            let Value::Bytes(value) = value else { continue };
            match number {
                2 => {
                    let at = path.field("instructions").index(instruction_index);
                    instruction_index += 1;
                    let (name, id) = self.instruction(value, &at, computation, entry)?;
                    if self.on_instruction.is_some() {
                        // An id not given is 0, as protobuf reads it (XLA leaves out
                        // the first instruction's).
                        names.insert(id.unwrap_or(0), name);
                    }
                }
                4 => self.program_shape(
                    value,
                    &path.field("program_shape"),
                    computation,
                    entry,
                    false,
                ),
                _ => {}
            }
        }
        let Some(on_instruction) = self.on_instruction.as_mut() else {
            return Ok(());
        };
        names.finish();
        let (mut operands, mut calls) = (Names::new(), Names::new());
        let mut instruction_index = 0;
        for field in fields(bytes) {
            let (number, value) = field.map_err(wire)?;
            let (2, Value::Bytes(value)) = (number, value) else {
                continue;
            };
            // Each id named as it is read (an id naming no instruction of the
            // computation, or no computation, is left out).
            operands.clear();
            calls.clear();
            names.next();
            self.computations.next();
            let mut tuple_index = 0;
            let mut name_id = |field: u64, id: u64| match field {
                13 => tuple_index = id,
                36 => names.name(id, &mut operands),
                _ => self.computations.name(id, &mut calls),
            };
            // Read once already, without error; its path is made only for one.
            let (name, opcode, _) = instruction_fields(value, Some(&mut name_id)).map_err(|e| {
                let at = path.field("instructions").index(instruction_index);
                ScanError::Wire(format!("{at}: {e}"))
            })?;
            instruction_index += 1;
            let site = InstructionSite {
                line: 0,
                computation,
                entry,
                name: &String::from_utf8_lossy(name),
                opcode: &String::from_utf8_lossy(opcode),
                operands: &operands,
                calls: &calls,
                tuple_index: (opcode == b"get-tuple-element").then_some(tuple_index),
            };
            on_instruction(&site);
        }
        Ok(())
    }

    /// The instruction's name (its bytes) and id, after its shapes are walked.
    fn instruction<'b>(
        &mut self,
        bytes: &'b [u8],
        path: &Path,
        computation: Option<&str>,
        entry: bool,
    ) -> Result<(&'b [u8], Option<u64>), ScanError> {
        let wire = |e| ScanError::Wire(format!("{path}: {e}"));
        let (name_bytes, opcode, id) = instruction_fields(bytes, None).map_err(wire)?;
        let name = String::from_utf8_lossy(name_bytes);
        let mut operand_index = 0;
        let mut literal_index = 0;
        for field in fields(bytes) {
            let (number, value) = field.map_err(wire)?;
            let Value::Bytes(value) = value else { continue };
            let (at, role) = match number {
                3 => (path.field("shape"), Role::Result),
                8 if opcode == b"custom-call" => {
                    let mut each = |shape: &[u8], at: &Path| {
                        let site = ProtoSite {
                            path: at,
                            computation,
                            entry,
                            instruction: Some(&*name).filter(|n| !n.is_empty()),
                            role: Role::Attribute {
                                name: "literal".to_string(),
                                index: literal_index,
                            },
                            elided: None,
                        };
                        literal_index += 1;
                        self.shape(shape, &site);
                    };
                    literal_shapes(value, &path.field("literal"), &mut each)
                        .map_err(ScanError::Wire)?;
                    continue;
                }
                29 => (
                    path.field("outfeed_shape"),
                    Role::Attribute {
                        name: "outfeed_shape".to_string(),
                        index: 0,
                    },
                ),
                57 => {
                    let at = path
                        .field("operand_shapes_with_layout")
                        .index(operand_index);
                    let role = Role::Attribute {
                        name: "operand_layout_constraints".to_string(),
                        index: operand_index,
                    };
                    operand_index += 1;
                    (at, role)
                }
                _ => continue,
            };
            let site = ProtoSite {
                path: &at,
                computation,
                entry,
                instruction: Some(&*name).filter(|n| !n.is_empty()),
                role,
                elided: None,
            };
            self.shape(value, &site);
        }
        Ok((name_bytes, id))
    }
}

/// An instruction's name and opcode (their bytes) and its id.
type InstructionFields<'b> = (&'b [u8], &'b [u8], Option<u64>);

/// An instruction's name and opcode (their bytes; the last of each given, as protobuf
/// reads them), its id, and each of its operand ids (field 36), called computation ids
/// (38) and `tuple_index` (13, a varint) handed to `ids` with its field number, in
/// order, when given (they are read all the same); the wire error, without its path,
/// when its fields do not read.
fn instruction_fields<'b>(
    bytes: &'b [u8],
    mut ids: Option<&mut dyn FnMut(u64, u64)>,
) -> Result<InstructionFields<'b>, String> {
    let (mut name, mut opcode, mut id): (&[u8], &[u8], _) = (&[], &[], None);
    let collecting = ids.is_some();
    let mut push = |field: u64, v| {
        if let Some(ids) = ids.as_mut() {
            ids(field, v);
        }
    };
    for field in fields(bytes) {
        match field? {
            (1, Value::Bytes(v)) => name = v,
            (2, Value::Bytes(v)) => opcode = v,
            (35, Value::Varint(v)) => id = Some(v),
            (13, Value::Varint(v)) => push(13, v),
            (number @ (36 | 38), Value::Varint(v)) => push(number, v),
            (36, Value::Bytes(packed)) => {
                let mut pos = 0;
                while pos < packed.len() {
                    let v = varint(packed, &mut pos)
                        .ok_or_else(|| format!("bad packed operand_ids at byte {pos}"))?;
                    push(36, v);
                }
            }
            // Read only for the matching of `diff`, which does without them: those
            // before a varint that does not read are kept, and it is no error (the
            // walk found none in this field before it read it).
            (38, Value::Bytes(packed)) if collecting => {
                let mut pos = 0;
                while let Some(v) = varint(packed, &mut pos) {
                    push(38, v);
                }
            }
            _ => {}
        }
    }
    Ok((name, opcode, id))
}

/// The names a finding in a module proto belongs to.
#[derive(Clone, Copy)]
struct Context<'a> {
    computation: Option<&'a str>,
    instruction: Option<&'a str>,
}

struct ProtoScan<'s, 'c> {
    check: &'s mut Check<'c>,
    report: &'s mut dyn FnMut(Finding),
    summary: &'s mut Summary,
    style: HloStyle,
    /// The gate `check` is, when it is the validation gate: shapes of `long_at` bytes
    /// or more that are plain tuples are then validated a shape at a time.
    by_leaf: Option<crate::validate::Options>,
    /// With `by_leaf`, the check of the other messages of `long_at` bytes or more.
    long: Option<&'s mut LongShapeCheck<'c>>,
    /// [`LONG_SHAPE`], but for tests.
    long_at: usize,
}

/// Shape and program shape messages inside a module proto this long or longer are read
/// a shape at a time where they can be: validated ([`scan_proto_validated`],
/// [`scan_proto_validated_with`]) and walked for a listing ([`walk_proto_for_listing`]).
pub(crate) const LONG_SHAPE: usize = crate::LONG_INPUT;

/// Whether a serialized `ProgramShapeProto` of [`LONG_SHAPE`] bytes or more can be read
/// a part at a time, each parameter and the result as a shape of its own (so that a
/// long plain tuple among them is read a shape at a time): it decodes with no unknown
/// field anywhere and gives its result at most once (protobuf merges a result given
/// twice). Anything else goes to the long-message check ([`LongShapeCheck`]), or is
/// decoded whole when that declines it.
fn program_by_parts(bytes: &[u8], long_at: usize) -> bool {
    if bytes.len() < long_at {
        return false;
    }
    if crate::codec::count_top_level_fields(bytes, 2) > 1 {
        return false;
    }
    let clean = crate::codec::decode_clean_program_shape_leaves(bytes, &mut |_, _, _, _| {});
    matches!(clean, Ok(Some(program)) if !program.shell.has_unknown_fields())
}

/// The parts of a program shape whose result is given at most once: each parameter's
/// bytes with its index and name, in order, then the result's.
fn program_parts(bytes: &[u8]) -> impl Iterator<Item = (ProgramPart, &[u8], &str)> {
    // Read as the codec reads the message: a field of another wire type (a group too,
    // which `fields` does not read) is an unknown field.
    let values = |number| {
        use crate::codec::wire::{Reader, WireType};
        let mut reader = Reader::new(bytes);
        std::iter::from_fn(move || {
            while !reader.is_at_end() {
                let (n, wire_type) = reader.read_tag().ok()?;
                let value = reader.skip_value(n, wire_type, 0).ok()?;
                if n == number && wire_type == WireType::LengthDelimited {
                    return Some(value);
                }
            }
            None
        })
    };
    let mut names = values(3).map(|name| std::str::from_utf8(name).unwrap_or_default());
    let parameters = values(1).enumerate().map(move |(i, value)| {
        (
            ProgramPart::Parameter(i),
            value,
            names.next().unwrap_or_default(),
        )
    });
    parameters.chain(values(2).map(|value| (ProgramPart::Result, value, "")))
}

impl ProtoScan<'_, '_> {
    /// The finding, the `nth` (from 0) of its shape: names as [`repeated_text`] gives
    /// them.
    fn finding(
        &mut self,
        path: &Path,
        context: Option<Context<'_>>,
        code: &'static str,
        severity: Severity,
        message: String,
        nth: usize,
    ) -> Finding {
        count(self.summary, severity);
        let mut finding = Finding::new(code, severity, message);
        finding.path = path.to_string();
        if let Some(context) = context {
            finding.computation = repeated_text(context.computation, nth);
            finding.instruction = repeated_text(context.instruction, nth);
        }
        finding
    }

    fn problem(
        &mut self,
        path: &Path,
        context: Option<Context<'_>>,
        code: &'static str,
        severity: Severity,
        message: String,
    ) {
        let finding = self.finding(path, context, code, severity, message, 0);
        (self.report)(finding);
    }

    /// Reports the issues `check` finds in `shape` (at `path`) and `unknown`, with
    /// the shape's text (printed only when there is something to report).
    fn issues(
        &mut self,
        shape: Option<&ShapeProto>,
        found: impl FnOnce(&mut dyn FnMut(crate::Issue)),
        path: &Path,
        context: Option<Context<'_>>,
    ) {
        let style = self.style;
        let mut texted = Texted::new(|| style.print_shape(shape?).ok());
        found(&mut |issue| {
            let (nth, shown) = texted.next();
            self.issue(issue, path, context, shown, nth);
        });
    }

    /// Reports `issue` of the shape at `path`, the shape's `nth` (from 0), with `text`
    /// for the shape's text.
    fn issue(
        &mut self,
        issue: crate::Issue,
        path: &Path,
        context: Option<Context<'_>>,
        text: Option<String>,
        nth: usize,
    ) {
        let issue = issue.prefixed(path);
        let message = issue.kind().to_string();
        let (code, severity) = (issue.kind().code(), issue.severity());
        let mut finding = self.finding(issue.path(), context, code, severity, message, nth);
        finding.shape = text;
        (self.report)(finding);
    }

    /// Checks one shape (with `unknown`, its unknown fields, when it was decoded
    /// alone) and reports what is found.
    fn check_shape(
        &mut self,
        shape: &ShapeProto,
        unknown: Report,
        path: &Path,
        context: Option<Context<'_>>,
    ) {
        self.summary.shapes += 1;
        // The gate's issues are handed on as they are found, never held together.
        let (gate, check) = (self.by_leaf, &mut self.check);
        let report = gate.is_none().then(|| check(shape));
        let found = |each: &mut dyn FnMut(crate::Issue)| {
            match (gate, report) {
                (Some(gate), _) => crate::validate::each_nested_issue(shape, gate, 0, each),
                (None, report) => report.into_iter().flatten().for_each(&mut *each),
            }
            unknown.into_iter().for_each(each);
        };
        self.issues(Some(shape), found, path, context);
    }

    fn shape(&mut self, bytes: &[u8], path: &Path, context: Option<Context<'_>>) {
        if let Some(gate) = self.by_leaf.filter(|_| bytes.len() >= self.long_at) {
            if self.plain_tuple_by_leaf(bytes, gate, path, context) {
                return;
            }
            if self.long_shape(bytes, path, context) {
                return;
            }
        }
        match crate::codec::decode_shape(bytes) {
            Ok(decoded) => {
                let unknown =
                    crate::validate::unknown_report(|each| decoded.for_each_unknown_field(each));
                self.check_shape(&decoded.message, unknown, path, context);
            }
            Err(e) => {
                self.summary.shapes += 1;
                self.problem(
                    path,
                    context,
                    "undecodable_shape",
                    Severity::Error,
                    format!("cannot decode the shape: {e}"),
                );
            }
        }
    }

    /// Validates the shape `bytes` a shape at a time if it is a plain tuple with no
    /// unknown field, and reports its findings; `false`, having reported nothing, for
    /// anything else (which is then checked whole).
    fn plain_tuple_by_leaf(
        &mut self,
        bytes: &[u8],
        gate: crate::validate::Options,
        path: &Path,
        context: Option<Context<'_>>,
    ) -> bool {
        let mut clean = true;
        let decoded = crate::codec::decode_shape_leaves(bytes, &mut |_, _, leaf| {
            clean &= leaf.holds_no_unknown();
        });
        let plain = decoded.is_ok_and(|s| s.is_tuple() && s.shell.holds_no_unknown());
        if !(clean && plain) {
            return false;
        }
        self.summary.shapes += 1;
        // Decoded again, now that it is known to be plain, each shape's issues handed on
        // as they are found (rather than held until the end: some 150 bytes an issue).
        // Each element's text with its first finding; the names with the tuple's.
        let mut tuple = crate::validate::TupleIssues::default();
        let mut nth_of_tuple = 0;
        let style = self.style;
        // The same bytes decode the same again.
        let _ = crate::codec::decode_shape_leaves(bytes, &mut |at, _, leaf| {
            let mut texted = Texted::new(|| style.print_shape(&leaf.message).ok());
            tuple.each(at, &leaf.message, gate, &mut |issue| {
                self.issue(issue, path, context, texted.next().1, nth_of_tuple);
                nth_of_tuple += 1;
            });
        });
        true
    }

    /// Checks the shape `bytes` (at `path`) with `long` ([`LongShapeCheck`]), its
    /// findings put at their place in the module; `false`, having reported nothing,
    /// when it cannot.
    fn long_shape(&mut self, bytes: &[u8], path: &Path, context: Option<Context<'_>>) -> bool {
        match self.long_message(crate::MessageKind::Shape, bytes, path, context) {
            LongChecked::Checked(_) => true,
            // The whole decode gives the error, as for any shape.
            LongChecked::Undecodable(_) | LongChecked::Declined => false,
        }
    }

    /// Checks the message `bytes` of `kind` (at `path`) with `long`, its findings put
    /// at their place in the module and its shapes counted.
    fn long_message(
        &mut self,
        kind: crate::MessageKind,
        bytes: &[u8],
        path: &Path,
        context: Option<Context<'_>>,
    ) -> LongChecked {
        let Some(long) = self.long.as_mut() else {
            return LongChecked::Declined;
        };
        let (report, summary) = (&mut self.report, &mut *self.summary);
        let checked = long(kind, bytes, &mut |mut finding| {
            finding.path = match finding.path.as_str() {
                "" => path.to_string(),
                within if within.starts_with('[') => format!("{path}{within}"),
                within => format!("{path}.{within}"),
            };
            if let Some(context) = context {
                finding.computation = context.computation.map(str::to_string);
                finding.instruction = context.instruction.map(str::to_string);
            }
            count(summary, finding.severity);
            report(finding);
        });
        if let LongChecked::Checked(shapes) = checked {
            self.summary.shapes += shapes;
        }
        checked
    }

    fn program_shape(&mut self, bytes: &[u8], path: &Path, context: Option<Context<'_>>) {
        if self.by_leaf.is_some() && program_by_parts(bytes, self.long_at) {
            // A part at a time, as the whole check reads them (no unknown field).
            for (part, value, _) in program_parts(bytes) {
                let at = match part {
                    ProgramPart::Parameter(i) => path.field("parameters").index(i),
                    ProgramPart::Result => path.field("result"),
                };
                self.shape(value, &at, context);
            }
            return;
        }
        if self.by_leaf.is_some() && bytes.len() >= self.long_at {
            // Unknown fields, or a result given more than once: a shape at a time too.
            let kind = crate::MessageKind::ProgramShape;
            match self.long_message(kind, bytes, path, context) {
                LongChecked::Checked(_) => return,
                LongChecked::Undecodable(e) => {
                    return self.undecodable_program(path, context, &e);
                }
                LongChecked::Declined => {}
            }
        }
        match crate::codec::decode_program_shape(bytes) {
            Ok(decoded) => {
                let program = &decoded.message;
                let parameters = path.field("parameters");
                for (i, parameter) in program.parameters.iter().enumerate() {
                    let at = parameters.index(i);
                    self.check_shape(parameter, Report::default(), &at, context);
                }
                if let Some(result) = &program.result {
                    self.check_shape(result, Report::default(), &path.field("result"), context);
                }
                let unknown =
                    crate::validate::unknown_report(|each| decoded.for_each_unknown_field(each));
                self.issues(
                    None,
                    |each| unknown.into_iter().for_each(each),
                    path,
                    context,
                );
            }
            Err(e) => self.undecodable_program(path, context, &e),
        }
    }

    /// Reports that the program shape at `path` does not decode.
    fn undecodable_program(
        &mut self,
        path: &Path,
        context: Option<Context<'_>>,
        e: &crate::codec::DecodeError,
    ) {
        let message = format!("cannot decode the program shape: {e}");
        self.problem(path, context, "undecodable_shape", Severity::Error, message);
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
                    let context = Context {
                        computation: Some(&name),
                        instruction: None,
                    };
                    self.program_shape(value, &path.field("program_shape"), Some(context));
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
        // The name is field 1, written first; shapes come after it.
        let mut name = String::new();
        let mut operand_index = 0;
        // Whether the instruction is a custom call, read when a literal (8) is met.
        let mut custom_call = None;
        for field in fields(bytes) {
            let (number, value) = field.map_err(|e| ScanError::Wire(format!("{path}: {e}")))?;
            let Value::Bytes(value) = value else { continue };
            if number == 1 {
                name = String::from_utf8_lossy(value).into_owned();
                continue;
            }
            let context = Some(Context {
                computation: Some(computation).filter(|c| !c.is_empty()),
                instruction: Some(name.as_str()).filter(|n| !n.is_empty()),
            });
            match number {
                3 => self.shape(value, &path.field("shape"), context),
                29 => self.shape(value, &path.field("outfeed_shape"), context),
                57 => {
                    let at = path
                        .field("operand_shapes_with_layout")
                        .index(operand_index);
                    operand_index += 1;
                    self.shape(value, &at, context);
                }
                8 => {
                    let custom_call = match custom_call {
                        Some(known) => known,
                        None => {
                            let (_, opcode, _) = instruction_fields(bytes, None)
                                .map_err(|e| ScanError::Wire(format!("{path}: {e}")))?;
                            *custom_call.insert(opcode == b"custom-call")
                        }
                    };
                    if custom_call {
                        let mut each = |shape: &[u8], at: &Path| self.shape(shape, at, context);
                        literal_shapes(value, &path.field("literal"), &mut each)
                            .map_err(ScanError::Wire)?;
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids given in any order are found once sorted, the last name given of an id
    /// kept; an id given again in one instruction is held as a repeat, and in the next
    /// instruction named afresh; an id that names nothing is left out.
    #[test]
    fn ids_are_named_the_last_name_given_and_repeats_held_as_repeats() {
        let mut ids = IdNames::default();
        for (id, name) in [(5, "a"), (3, "b"), (5, "c"), (1, "d"), (3, "e")] {
            ids.insert(id, name.as_bytes());
        }
        ids.finish();
        let mut names = Names::new();
        ids.next();
        for id in [5, 3, 5, 9, 1, 3, 5] {
            ids.name(id, &mut names);
        }
        assert_eq!(names.to_vec(), ["c", "e", "c", "d", "e", "c"]);
        // Held as repeats: three stored names, whatever their count.
        assert_eq!(names.stored_len(), 3);
        let mut next = Names::new();
        ids.next();
        for id in [1, 1, 5] {
            ids.name(id, &mut next);
        }
        assert_eq!(next.to_vec(), ["d", "d", "c"]);
        // Past the count, every name is pushed in full.
        ids.instruction = IdNames::OUT - 1;
        ids.next();
        let mut out = Names::new();
        for id in [3, 3] {
            ids.name(id, &mut out);
        }
        assert_eq!(
            (out.to_vec(), out.stored_len()),
            (vec!["e".into(), "e".into()], 2)
        );
    }
}
