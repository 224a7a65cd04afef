//! Listing every shape of an input with where it stands: the `shapes` command, and
//! what [`diff`](super::diff) and [`policy`](super::policy) work on.
//!
//! # The listing text (a "layout lock file")
//!
//! One shape per line, in the order the input holds them (files in the order given,
//! directories in sorted order):
//!
//! ```text
//! FILE: LOCATION: SHAPE        a shape inside a module (text or proto)
//! FILE: SHAPE                  a single shape (one message, or one line of HLO text)
//! FILE: parameter N: SHAPE     a parameter of a single program shape (and `result`)
//! ```
//!
//! `LOCATION` is one of (`ENTRY ` in front marks the entry computation):
//!
//! | location | the shape |
//! | --- | --- |
//! | `entry_computation_layout/parameter N` | parameter N of the module's entry computation layout |
//! | `entry_computation_layout/result` | the result of the entry computation layout |
//! | `[ENTRY ]C/signature parameter N (NAME)` | parameter N in computation C's signature |
//! | `[ENTRY ]C/signature result` | the result in C's signature |
//! | `[ENTRY ]C/I` | the result shape of instruction I |
//! | `[ENTRY ]C/I operand N` | the shape written before operand N of I |
//! | `[ENTRY ]C/I ATTRIBUTE [N]` | a shape-valued attribute (`outfeed_shape`, `literal`, `operand_layout_constraints N`) |
//!
//! Shapes are printed in XLA's text ([`HloStyle::Xla`]) unless another style is asked
//! for. HLO names hold no space, `/` or `: `, and shapes hold no `: `, so a line reads
//! back unambiguously ([`parse_listing`]) as long as the file name holds no `: `.

use std::io::BufRead;
use std::path::Path as FsPath;

use serde::Serialize;

use crate::check;
use crate::message::{AnyMessage, MessageKind};
use crate::proto::ShapeProto;
use crate::report::{Finding, Form};
use crate::shape::Shape;
use crate::text::module::{self, InstructionSite, ProtoSite, Role, Site};
use crate::text::HloStyle;
use crate::validate::{validate_shape_with, Options as GateOptions};

/// The location word of the module's entry computation layout.
pub const ENTRY_LAYOUT: &str = "entry_computation_layout";

/// One shape of a listing, and where it stands.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The computation it is in (`None` for the entry computation layout and for
    /// single messages).
    pub computation: Option<String>,
    /// Whether that computation is the entry computation.
    pub entry: bool,
    /// The instruction it belongs to, if any.
    pub instruction: Option<String>,
    /// What the shape is there.
    pub role: Role,
    /// The shape.
    pub shape: ShapeProto,
    /// The shape's text in the listing's style (as written, when it does not print).
    pub text: String,
    /// 1-based line in module text (or in HLO text, or in a listing read back).
    pub line: Option<usize>,
    /// 1-based column in module text.
    pub column: Option<usize>,
    /// The proto path in a module proto (e.g. `computations[1].instructions[4].shape`).
    pub path: Option<String>,
}

impl Entry {
    /// The location as the listing text writes it (see the module docs); `None` for a
    /// single shape.
    pub fn location(&self, module: bool) -> Option<String> {
        let prefix = || {
            let computation = self.computation.as_deref().unwrap_or("?");
            if self.entry {
                format!("ENTRY {computation}/")
            } else {
                format!("{computation}/")
            }
        };
        let instruction = || self.instruction.as_deref().unwrap_or("?");
        Some(match &self.role {
            Role::EntryParameter { index } if module => {
                format!("{ENTRY_LAYOUT}/parameter {index}")
            }
            Role::EntryParameter { index } => format!("parameter {index}"),
            Role::EntryResult if module => format!("{ENTRY_LAYOUT}/result"),
            Role::EntryResult => "result".to_string(),
            Role::Parameter { index, name } => {
                format!(
                    "{}signature parameter {index} ({})",
                    prefix(),
                    clean_name(name)
                )
            }
            Role::ComputationResult => format!("{}signature result", prefix()),
            Role::Result if !module => return None,
            Role::Result => format!("{}{}", prefix(), instruction()),
            Role::Operand { index } => format!("{}{} operand {index}", prefix(), instruction()),
            Role::Attribute { name, index } => {
                if *index > 0 || name == "operand_layout_constraints" {
                    format!("{}{} {name} {index}", prefix(), instruction())
                } else {
                    format!("{}{} {name}", prefix(), instruction())
                }
            }
        })
    }

    /// The validated shape (with the rules of the form it was read from), if valid.
    pub fn validated(&self) -> Option<Shape> {
        validate_shape_with(&self.shape, GateOptions::hlo_text())
            .into_parts()
            .0
    }

    /// Allocated bytes ([`allocated_bytes`]).
    pub fn bytes(&self) -> Option<u64> {
        allocated_bytes(&self.validated()?)
    }
}

/// Allocated bytes of a shape: an array's buffer with tiling and padding
/// ([`crate::LayoutPlan::allocated_bytes`]; XLA's default layout when it has none), the
/// sum of its arrays' for a tuple, 0 for a token or opaque shape; `None` when a
/// dimension is unbounded or the sum overflows.
pub fn allocated_bytes(shape: &Shape) -> Option<u64> {
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => crate::LayoutPlan::new(array)
            .ok()
            .map(|plan| plan.allocated_bytes()),
        Shape::Tuple(elements) => elements
            .iter()
            .try_fold(0u64, |sum, e| sum.checked_add(allocated_bytes(e)?)),
        Shape::Token | Shape::Opaque => Some(0),
    }
}

/// A parameter name without `%` or a trailing `:`.
pub fn clean_name(name: &str) -> &str {
    name.trim_start_matches('%').trim_end_matches(':')
}

/// An instruction of a module: what the matching of renumbered names uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its computation.
    pub computation: String,
    /// Its name.
    pub name: String,
    /// Its opcode.
    pub opcode: String,
    /// Its operands' names.
    pub operands: Vec<String>,
}

/// What kind of input a listing is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An HLO module (text or proto).
    Module,
    /// Single messages (a shape or program shape; HLO text holds one per line).
    Messages,
}

/// Every shape of one file.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The file's name as given.
    pub file: String,
    /// Module or messages.
    pub kind: Kind,
    /// The form it was read from (`None` for a listing read back).
    pub form: Option<Form>,
    /// The shapes, in order.
    pub entries: Vec<Entry>,
    /// The instructions with opcodes and operands (empty for a listing read back).
    pub instructions: Vec<Instruction>,
}

impl Listing {
    fn new(file: &str, kind: Kind, form: Option<Form>) -> Self {
        Listing {
            file: file.to_string(),
            kind,
            form,
            entries: Vec::new(),
            instructions: Vec::new(),
        }
    }

    /// Writes the listing text (see the module docs), one line per shape.
    pub fn write_text(&self, out: &mut String) {
        for entry in &self.entries {
            out.push_str(&self.file);
            out.push_str(": ");
            if let Some(location) = entry.location(self.kind == Kind::Module) {
                out.push_str(&location);
                out.push_str(": ");
            }
            out.push_str(&entry.text);
            out.push('\n');
        }
    }

    /// Writes one JSON line per shape ([`JsonLine`]).
    pub fn write_json_lines(&self, out: &mut String) {
        for entry in &self.entries {
            let line = JsonLine::new(self, entry);
            if let Ok(text) = serde_json::to_string(&line) {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
}

/// One line of `shapes --format json`: the fields of the text line, and more.
#[derive(Clone, Debug, Serialize)]
pub struct JsonLine<'a> {
    /// The file.
    pub file: &'a str,
    /// The location, as in the text (`null` for a single shape).
    pub location: Option<String>,
    /// The computation, if any.
    pub computation: Option<&'a str>,
    /// Whether the computation is the entry computation.
    pub entry: bool,
    /// The instruction, if any.
    pub instruction: Option<&'a str>,
    /// `entry_parameter`, `entry_result`, `parameter`, `computation_result`, `result`,
    /// `operand` or `attribute`.
    pub role: &'static str,
    /// The parameter, operand or list position, if any.
    pub index: Option<usize>,
    /// The parameter or attribute name, if any.
    pub name: Option<&'a str>,
    /// The shape's text.
    pub shape: &'a str,
    /// Allocated bytes ([`allocated_bytes`]); `null` when unknown.
    pub bytes: Option<u64>,
    /// Line in the input, when it is text.
    pub line: Option<usize>,
    /// Proto path, when it is a module proto.
    pub path: Option<&'a str>,
}

impl<'a> JsonLine<'a> {
    /// The JSON line of `entry` in `listing`.
    pub fn new(listing: &'a Listing, entry: &'a Entry) -> Self {
        let (role, index, name) = match &entry.role {
            Role::EntryParameter { index } => ("entry_parameter", Some(*index), None),
            Role::EntryResult => ("entry_result", None, None),
            Role::Parameter { index, name } => ("parameter", Some(*index), Some(clean_name(name))),
            Role::ComputationResult => ("computation_result", None, None),
            Role::Result => ("result", None, None),
            Role::Operand { index } => ("operand", Some(*index), None),
            Role::Attribute { name, index } => ("attribute", Some(*index), Some(name.as_str())),
        };
        JsonLine {
            file: &listing.file,
            location: entry.location(listing.kind == Kind::Module),
            computation: entry.computation.as_deref(),
            entry: entry.entry,
            instruction: entry.instruction.as_deref(),
            role,
            index,
            name,
            shape: &entry.text,
            bytes: entry.bytes(),
            line: entry.line,
            path: entry.path.as_deref(),
        }
    }
}

/// Why an input cannot be listed (exit status 2): a report code and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The file.
    pub file: String,
    /// A code of [`crate::report::CODES`] (`io_error`, `unknown_form`, `hlo_syntax`, ...).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ReadError {}

/// The form to read an input as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Decided from the content ([`check::detect`], then a listing).
    #[default]
    Auto,
    /// One of the forms `validate` reads.
    Form(Form),
    /// A listing written by `shapes` (text).
    Listing,
}

/// How to read inputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// The form.
    pub source: Source,
    /// Which message single-message inputs hold; decided from the content if `None`.
    pub message: Option<MessageKind>,
    /// The text style of shapes.
    pub style: HloStyle,
}

fn error(file: &str, code: &'static str, message: impl Into<String>) -> ReadError {
    ReadError {
        file: file.to_string(),
        code,
        message: message.into(),
    }
}

/// Lists one file. A listing file read back may hold several files: one [`Listing`]
/// each. Module text is read as a stream (the scanner's memory stays flat; the
/// listing holds every shape).
pub fn read_path(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
) -> Result<Vec<Listing>, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| error(name, "io_error", e.to_string()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let head = reader
        .fill_buf()
        .map_err(|e| error(name, "io_error", e.to_string()))?
        .to_vec();
    let module_text = match options.source {
        Source::Form(Form::HloModule) => true,
        Source::Auto => check::detect(&head) == Ok(Form::HloModule),
        _ => false,
    };
    if module_text && std::str::from_utf8(&head).is_ok_and(|t| !t.contains('\0')) {
        return module_text_listing(name, reader, options.style).map(|l| vec![l]);
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut bytes)
        .map_err(|e| error(name, "io_error", e.to_string()))?;
    read_bytes(name, &bytes, options)
}

/// Lists one input held in memory (see [`read_path`]).
pub fn read_bytes(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Vec<Listing>, ReadError> {
    if bytes.is_empty() {
        return Err(error(name, "empty_input", "the input is empty"));
    }
    let form = match options.source {
        Source::Listing => return parse_listing(name, bytes),
        Source::Form(form) => form,
        Source::Auto => match check::detect(bytes) {
            Ok(form) => form,
            Err(reason) => {
                if let Ok(listings) = parse_listing(name, bytes) {
                    return Ok(listings);
                }
                return Err(error(
                    name,
                    "unknown_form",
                    format!("cannot tell what this is: {reason}; give --from binary|json|hlo|hlo-module|hlo-module-proto|listing"),
                ));
            }
        },
    };
    let listing = match form {
        Form::HloModule => module_text_listing(name, bytes, options.style)?,
        Form::HloModuleProto => module_proto_listing(name, bytes, options.style)?,
        Form::Binary => {
            let kind = options
                .message
                .or_else(|| binary_kind(bytes))
                .unwrap_or_default();
            let decoded = crate::codec::decode_any(kind, bytes).map_err(|e| {
                error(
                    name,
                    "decode_error",
                    format!("cannot decode {}: {e}", kind.proto_name()),
                )
            })?;
            message_listing(name, Form::Binary, [(decoded.message, None)], options.style)?
        }
        Form::Json => {
            let kind = options.message.unwrap_or_default();
            let message = crate::json::from_json(kind, bytes, &crate::json::ParseOptions::new())
                .map_err(|e| {
                    error(
                        name,
                        "decode_error",
                        format!("cannot read {} from JSON: {e}", kind.proto_name()),
                    )
                })?;
            message_listing(name, Form::Json, [(message, None)], options.style)?
        }
        Form::Hlo => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| error(name, "wrong_form", "not UTF-8 text"))?;
            let kind = options.message.unwrap_or_default();
            let mut messages = Vec::new();
            for (index, line) in text.lines().enumerate() {
                let trimmed = line.trim();
                if trimmed.is_empty() || trimmed.starts_with("//") {
                    continue;
                }
                let message = crate::text::parse_message(kind, trimmed).map_err(|e| {
                    error(
                        name,
                        "hlo_syntax",
                        format!("line {}: {}", index + 1, e.message()),
                    )
                })?;
                messages.push((message, Some(index + 1)));
            }
            message_listing(name, Form::Hlo, messages, options.style)?
        }
    };
    Ok(vec![listing])
}

/// The message kind of binary bytes without `--message`: the first of shape, program
/// shape that decodes with no unknown field.
fn binary_kind(bytes: &[u8]) -> Option<MessageKind> {
    [MessageKind::Shape, MessageKind::ProgramShape]
        .into_iter()
        .find(|&kind| {
            crate::codec::decode_any(kind, bytes).is_ok_and(|d| {
                !d.has_unknown_fields()
                    && match &d.message {
                        AnyMessage::Shape(s) => s.element_type != 0,
                        AnyMessage::ProgramShape(p) => p.result.is_some(),
                        AnyMessage::Layout(_) => false,
                    }
            })
        })
}

fn print(shape: &ShapeProto, style: HloStyle, written: Option<&str>) -> String {
    match style.print_shape(shape) {
        Ok(text) => text,
        Err(_) => match written {
            Some(text) => text.to_string(),
            None => crate::text::print_shape(shape).unwrap_or_else(|_| format!("{shape:?}")),
        },
    }
}

fn message_listing(
    name: &str,
    form: Form,
    messages: impl IntoIterator<Item = (AnyMessage, Option<usize>)>,
    style: HloStyle,
) -> Result<Listing, ReadError> {
    let mut listing = Listing::new(name, Kind::Messages, Some(form));
    for (message, line) in messages {
        let mut push = |role: Role, shape: &ShapeProto| {
            listing.entries.push(Entry {
                computation: None,
                entry: false,
                instruction: None,
                role,
                text: print(shape, style, None),
                shape: shape.clone(),
                line,
                column: None,
                path: None,
            });
        };
        match &message {
            AnyMessage::Shape(shape) => push(Role::Result, shape),
            AnyMessage::ProgramShape(program) => {
                for (index, parameter) in program.parameters.iter().enumerate() {
                    push(Role::EntryParameter { index }, parameter);
                }
                if let Some(result) = &program.result {
                    push(Role::EntryResult, result);
                }
            }
            AnyMessage::Layout(_) => {
                return Err(error(
                    name,
                    "wrong_message",
                    "a LayoutProto alone holds no shape to list or compare; give --message shape or program-shape",
                ))
            }
        }
    }
    if listing.entries.is_empty() {
        return Err(error(name, "no_shapes", "no shape in the input"));
    }
    Ok(listing)
}

fn first_problem(name: &str, problems: Vec<Finding>) -> Result<(), ReadError> {
    match problems
        .into_iter()
        .find(|f| f.severity == crate::Severity::Error)
    {
        None => Ok(()),
        Some(f) => {
            let at = match (f.line, f.column) {
                (Some(line), Some(column)) => format!("{line}:{column}: "),
                _ if !f.path.is_empty() => format!("{}: ", f.path),
                _ => String::new(),
            };
            Err(error(name, f.code, format!("{at}{}", f.message)))
        }
    }
}

/// Lists module text, streamed.
pub fn module_text_listing<R: BufRead>(
    name: &str,
    reader: R,
    style: HloStyle,
) -> Result<Listing, ReadError> {
    let mut listing = Listing::new(name, Kind::Module, Some(Form::HloModule));
    let mut problems = Vec::new();
    let mut entry_computation: Option<String> = None;
    let entries = &mut listing.entries;
    let instructions = &mut listing.instructions;
    let mut on_shape = |site: &Site<'_>, shape: &ShapeProto| {
        let computation = match site.role {
            Role::EntryParameter { .. } | Role::EntryResult => None,
            _ => site.computation.map(str::to_string),
        };
        entries.push(Entry {
            computation,
            entry: false,
            instruction: site.instruction.map(str::to_string),
            role: site.role.clone(),
            text: print(shape, style, Some(site.text)),
            shape: shape.clone(),
            line: Some(site.line),
            column: Some(site.column),
            path: None,
        });
    };
    let mut on_instruction = |site: &InstructionSite<'_>| {
        let computation = site.computation.unwrap_or_default().to_string();
        if site.entry {
            entry_computation.get_or_insert_with(|| computation.clone());
        }
        instructions.push(Instruction {
            computation,
            name: site.name.to_string(),
            opcode: site.opcode.to_string(),
            operands: site.operands.to_vec(),
        });
    };
    let mut on_problem = |finding: Finding| problems.push(finding);
    let summary =
        module::scan_text_instructions(reader, &mut on_shape, &mut on_instruction, &mut on_problem)
            .map_err(|e| error(name, "io_error", e.to_string()))?;
    first_problem(name, problems)?;
    if summary.structures == 0 {
        return Err(error(
            name,
            "not_a_module",
            "not an HLO module: no HloModule header, computation or instruction found",
        ));
    }
    mark_entry(&mut listing, entry_computation.as_deref());
    Ok(listing)
}

fn mark_entry(listing: &mut Listing, entry: Option<&str>) {
    if let Some(entry) = entry {
        for e in &mut listing.entries {
            e.entry = e.computation.as_deref() == Some(entry);
        }
    }
}

/// Lists a module proto (`HloModuleProto`, or an `HloProto` / `HloSnapshot` around one).
pub fn module_proto_listing(
    name: &str,
    bytes: &[u8],
    style: HloStyle,
) -> Result<Listing, ReadError> {
    let mut listing = Listing::new(name, Kind::Module, Some(Form::HloModuleProto));
    let mut problems = Vec::new();
    let entries = &mut listing.entries;
    let instructions = &mut listing.instructions;
    let mut on_shape = |site: &ProtoSite<'_>, shape: &ShapeProto| {
        entries.push(Entry {
            computation: site.computation.map(str::to_string),
            entry: site.entry,
            instruction: site.instruction.map(str::to_string),
            role: site.role.clone(),
            text: print(shape, style, None),
            shape: shape.clone(),
            line: None,
            column: None,
            path: Some(site.path.to_string()),
        });
    };
    let mut on_instruction = |site: &InstructionSite<'_>| {
        instructions.push(Instruction {
            computation: site.computation.unwrap_or_default().to_string(),
            name: site.name.to_string(),
            opcode: site.opcode.to_string(),
            operands: site.operands.to_vec(),
        });
    };
    let mut on_problem = |finding: Finding| problems.push(finding);
    module::walk_proto(bytes, &mut on_shape, &mut on_instruction, &mut on_problem).map_err(
        |e| {
            let code = match e {
                module::ScanError::NotAModule(_) => "not_a_module",
                _ => "decode_error",
            };
            error(name, code, e.to_string())
        },
    )?;
    first_problem(name, problems)?;
    if listing.entries.is_empty() {
        return Err(error(name, "no_shapes", "no shape in the module"));
    }
    Ok(listing)
}

/// Reads a listing written by `shapes` (text) back: one [`Listing`] per file named in
/// it, in the order they first appear. Blank lines and `//` or `#` comment lines are
/// skipped.
pub fn parse_listing(name: &str, bytes: &[u8]) -> Result<Vec<Listing>, ReadError> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        error(
            name,
            "wrong_form",
            "a listing is text, and this is not UTF-8",
        )
    })?;
    let mut listings: Vec<Listing> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") || trimmed.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            error(
                name,
                "decode_error",
                format!("line {number}: not a listing line ({why}): {trimmed}"),
            )
        };
        let (head, shape_text) = trimmed.rsplit_once(": ").ok_or_else(|| bad("no ': '"))?;
        let shape = crate::text::parse_shape_with(
            shape_text,
            crate::text::ParseOptions {
                fill_missing_layouts: false,
            },
        )
        .map_err(|e| bad(&format!("the shape does not parse: {}", e.message())))?;
        let (file, location) = match head.rsplit_once(": ") {
            Some((file, location)) => (file, Some(location)),
            None => (head, None),
        };
        let (kind, mut entry) = match location {
            None => (Kind::Messages, bare_entry(Role::Result)),
            Some(location) => parse_location(location).ok_or_else(|| bad("unknown location"))?,
        };
        entry.text = shape_text.to_string();
        entry.shape = shape;
        entry.line = Some(number);
        let at = match listings.iter().position(|l| l.file == file) {
            Some(at) => at,
            None => {
                listings.push(Listing::new(file, kind, None));
                listings.len() - 1
            }
        };
        let listing = &mut listings[at];
        if kind == Kind::Module {
            listing.kind = Kind::Module;
        }
        listing.entries.push(entry);
    }
    if listings.is_empty() {
        return Err(error(name, "no_shapes", "no listing line in the input"));
    }
    Ok(listings)
}

fn bare_entry(role: Role) -> Entry {
    Entry {
        computation: None,
        entry: false,
        instruction: None,
        role,
        shape: ShapeProto::default(),
        text: String::new(),
        line: None,
        column: None,
        path: None,
    }
}

fn parse_location(location: &str) -> Option<(Kind, Entry)> {
    let number = |s: &str| s.parse::<usize>().ok();
    if let Some(rest) = location.strip_prefix(&format!("{ENTRY_LAYOUT}/")) {
        let role = match rest {
            "result" => Role::EntryResult,
            _ => Role::EntryParameter {
                index: number(rest.strip_prefix("parameter ")?)?,
            },
        };
        return Some((Kind::Module, bare_entry(role)));
    }
    if location == "result" {
        return Some((Kind::Messages, bare_entry(Role::EntryResult)));
    }
    if let Some(index) = location.strip_prefix("parameter ") {
        let role = Role::EntryParameter {
            index: number(index)?,
        };
        return Some((Kind::Messages, bare_entry(role)));
    }
    let (entry, location) = match location.strip_prefix("ENTRY ") {
        Some(rest) => (true, rest),
        None => (false, location),
    };
    let (computation, rest) = location.split_once('/')?;
    let words: Vec<&str> = rest.split(' ').collect();
    let mut result = bare_entry(Role::Result);
    result.computation = Some(computation.to_string());
    result.entry = entry;
    result.role = match words.as_slice() {
        ["signature", "result"] => Role::ComputationResult,
        ["signature", "parameter", index, name] => Role::Parameter {
            index: number(index)?,
            name: name.strip_prefix('(')?.strip_suffix(')')?.to_string(),
        },
        [instruction, rest @ ..] => {
            result.instruction = Some((*instruction).to_string());
            match rest {
                [] => Role::Result,
                ["operand", index] => Role::Operand {
                    index: number(index)?,
                },
                [name] => Role::Attribute {
                    name: (*name).to_string(),
                    index: 0,
                },
                [name, index] => Role::Attribute {
                    name: (*name).to_string(),
                    index: number(index)?,
                },
                _ => return None,
            }
        }
        [] => return None,
    };
    Some((Kind::Module, result))
}
