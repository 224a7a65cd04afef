//! Checking inputs of any form: deciding what an input is, validating every shape in
//! it, walking directories, many files in parallel. The command line's `validate` and
//! the Python binding both run this; the result is a `report::Document`.
//!
//! # Deciding the form (`--from auto`)
//!
//! Content decides, in this order; the name is only used in messages:
//! 1. No bytes: `empty_input`.
//! 2. Not text (invalid UTF-8, a NUL or another control byte other than tab, CR and LF
//!    in the first 64 KiB): protobuf bytes. An `HloModuleProto`, or an `HloProto` /
//!    `HloSnapshot` around one ([`module::probe_proto`]), is
//!    [`Form::HloModuleProto`]; anything else is one message, [`Form::Binary`].
//! 3. Text whose first token (after whitespace and `//`, `/* */` comments) is `{`
//!    followed by `"` or `}`: [`Form::Json`].
//! 4. Text with a line starting with `HloModule` or `ENTRY`, or with an instruction
//!    (`name = ...(`) inside braces: [`Form::HloModule`].
//! 5. Text whose every line (blank and `//` lines aside) starts like a shape, layout
//!    or program shape (a type word, `(`, `b(`, `{`): [`Form::Hlo`].
//! 6. Anything else: `unknown_form`, saying which `--from` to give.
//!
//! Text is judged by its lines in its first MiB, the same in memory, from a file and
//! from standard input (read until a MiB or its end, whatever sizes its reads come in):
//! the last of those lines counts when the input ends with it, and is left out when
//! more follows, as it may be cut ([`Head`]).
//!
//! For one binary message without `--message`, the kind is the first of shape,
//! program shape and layout that decodes with no unknown field (a shape if none does).
//! With `--message` (or `--from`) given, content that is clearly something else is
//! reported with the option to give instead.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::codec;
use crate::error::Severity;
use crate::message::MessageKind;
use crate::path::Segment;
use crate::report::{repeated_text, Document, FileReport, Finding, Findings, Form, Texted};
use crate::text::{self, module, HloStyle};
use crate::validate::{each_decoded_issue, each_issue, Options as GateOptions, TupleIssues};

/// How to check inputs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The form of every input; `None` decides per input (`--from auto`).
    pub from: Option<Form>,
    /// Which message one-message inputs hold; `None` decides from the content.
    pub message: Option<MessageKind>,
    /// Codes of findings to drop (`--allow`).
    pub allow: Vec<String>,
    /// How a finding's `shape` is printed for inputs that are not text (binary and
    /// JSON messages, module protos); text inputs give the shape as written.
    pub hlo_style: HloStyle,
    /// A layout policy to check every readable input against (`--policy`): its
    /// violations are added to the input's findings (`policy.<rule>` codes).
    pub policy: Option<std::sync::Arc<crate::guard::Policy>>,
}

/// How far detection looks into an input.
const HEAD: usize = 64 * 1024;

/// Whether `bytes` read as text: UTF-8 (a sequence cut at the end is fine) without
/// NUL or other control bytes than tab, CR, LF and form feed.
pub(crate) fn is_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(HEAD)];
    let valid = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() == HEAD,
    };
    valid
        && !head
            .iter()
            .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c))
}

/// The first significant byte of text and what follows it: skips whitespace and
/// comments.
fn first_token(text: &str) -> &str {
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("//") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return trimmed;
        }
    }
}

fn looks_like_module_text(text: &str) -> bool {
    let mut depth_hint = false;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("HloModule ") || line.starts_with("ENTRY ") || line == "HloModule" {
            return true;
        }
        if line.ends_with('{') && !line.starts_with('{') {
            depth_hint = true;
        } else if depth_hint && line.contains(" = ") && line.contains('(') {
            return true;
        }
    }
    false
}

fn looks_like_shape_lines(text: &str) -> bool {
    let mut any = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let word: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let starts = line.starts_with('(')
            || line.starts_with('{')
            || line.starts_with("b(")
            || (text::types::type_from_name(&word).is_some()
                && line[word.len()..].starts_with('['));
        if !starts {
            return false;
        }
        any = true;
    }
    any
}

/// Decides the form of an input from its first bytes (see the module docs). Text is
/// judged by its lines in the first MiB, as a stream's first buffer is
/// (when there is more, by the whole lines there, as [`detect_prefix`] judges them).
pub fn detect(bytes: &[u8]) -> Result<Form, String> {
    if bytes.len() > FORM_HEAD && is_text(bytes) {
        return detect_prefix(&bytes[..FORM_HEAD]);
    }
    detect_whole(bytes)
}

/// [`detect`] of all of `head`.
fn detect_whole(head: &[u8]) -> Result<Form, String> {
    if head.is_empty() {
        return Err("the input is empty".to_string());
    }
    if !is_text(head) {
        return Ok(if module::probe_proto(head).is_ok() {
            Form::HloModuleProto
        } else {
            Form::Binary
        });
    }
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let first = first_token(text);
    if first.starts_with('{') && matches!(first[1..].trim_start().bytes().next(), Some(b'"' | b'}'))
    {
        return Ok(Form::Json);
    }
    if looks_like_module_text(text) {
        return Ok(Form::HloModule);
    }
    if looks_like_shape_lines(text) {
        return Ok(Form::Hlo);
    }
    if first.is_empty() {
        return Err("the input holds only whitespace and comments".to_string());
    }
    Err("it is text, but not an HLO module, one shape per line, or JSON".to_string())
}

/// [`detect`] on the first bytes of an input that may go on (a reader's buffer): text is
/// judged by its whole lines, since the last may be cut.
pub fn detect_prefix(head: &[u8]) -> Result<Form, String> {
    match head.iter().rposition(|&b| b == b'\n') {
        Some(end) if end + 1 < head.len() && is_text(head) => detect_whole(&head[..=end]),
        _ => detect_whole(head),
    }
}

/// How many bytes of text its form is told from: a stream's first buffer.
const FORM_HEAD: usize = 1 << 20;

/// The first bytes of a stream, read to tell its form as the same bytes in memory
/// would be told: up to a MiB of them, and whether they are the whole stream (then
/// its last line counts, as [`detect`] counts it; otherwise it may be cut, and
/// [`detect_prefix`] leaves it out). The stream is read on from its first byte.
///
/// ```
/// # use xla_shape::{check::Head, report::Form};
/// let head = Head::read(&b"f32[2]{0}\nbf16[3]"[..]).unwrap();
/// assert_eq!(head.form(), Ok(Form::Hlo));
/// let mut all = String::new();
/// std::io::Read::read_to_string(&mut head.into_reader(), &mut all).unwrap();
/// assert_eq!(all, "f32[2]{0}\nbf16[3]");
/// ```
#[derive(Debug)]
pub struct Head<R> {
    reader: std::io::Chain<std::io::Cursor<Vec<u8>>, R>,
    whole: bool,
}

impl<R: BufRead> Head<R> {
    /// Reads the head of `reader`: until a MiB or its end, whatever sizes its
    /// reads come in (a pipe's may be small), then looks whether anything follows.
    ///
    /// # Errors
    /// The reader's error.
    pub fn read(mut reader: R) -> std::io::Result<Self> {
        let mut head = Vec::new();
        (&mut reader)
            .take(FORM_HEAD as u64)
            .read_to_end(&mut head)?;
        let whole = head.len() < FORM_HEAD || reader.fill_buf()?.is_empty();
        Ok(Head {
            reader: std::io::Cursor::new(head).chain(reader),
            whole,
        })
    }

    /// Whether the bytes read are the whole stream.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The bytes read.
    pub fn bytes(&self) -> &[u8] {
        self.reader.get_ref().0.get_ref()
    }

    /// The form [`detect`] tells of the bytes read, when they are the whole stream, else
    /// [`detect_prefix`]'s.
    ///
    /// # Errors
    /// Why no form fits, as [`detect`] says it.
    pub fn form(&self) -> Result<Form, String> {
        if self.whole {
            detect(self.bytes())
        } else {
            detect_prefix(self.bytes())
        }
    }

    /// The stream from its first byte.
    pub fn into_reader(self) -> std::io::Chain<std::io::Cursor<Vec<u8>>, R> {
        self.reader
    }
}

/// The message kind binary bytes decode as with no unknown field (and plausibly):
/// shape, program shape or layout, in that order.
fn clean_kind(bytes: &[u8], try_shape: bool) -> Option<MessageKind> {
    [
        MessageKind::Shape,
        MessageKind::ProgramShape,
        MessageKind::Layout,
    ]
    .into_iter()
    .filter(|&kind| try_shape || kind != MessageKind::Shape)
    .find(|&kind| decodes_clean(kind, bytes, true))
}

/// Whether binary bytes decode as `kind` with no unknown field (and, when `plausible`,
/// look like one: see [`plausible`]). Shapes and program shapes are decoded a shape at
/// a time (each of their plain tuples opened), so that telling bytes of some other
/// message costs the memory of one shape, not twenty times the bytes.
fn decodes_clean(kind: MessageKind, bytes: &[u8], plausible: bool) -> bool {
    match kind {
        MessageKind::Shape => {
            let mut clean = true;
            let streamed = codec::decode_shape_leaves(bytes, &mut |_, _, leaf| {
                clean &= !leaf.has_unknown_fields();
            });
            // Plausible: a shape has an element type.
            streamed.is_ok_and(|s| {
                clean
                    && !s.shell.has_unknown_fields()
                    && (!plausible || s.shell.message.element_type != 0)
            })
        }
        MessageKind::ProgramShape => {
            // Stops at the first unknown field, every tuple opened; plausible: a program
            // shape has a result.
            let streamed = codec::decode_clean_program_shape_tree(
                bytes,
                &mut |_, _, _, _| {},
                &mut |_| {},
                &mut |_, _| {},
            );
            matches!(streamed, Ok(Some(p)) if !p.shell.has_unknown_fields()
                && (!plausible || p.has_result()))
        }
        MessageKind::Layout => codec::decode_any(kind, bytes)
            .is_ok_and(|d| !d.has_unknown_fields() && (!plausible || self::plausible(&d.message))),
    }
}

/// Whether a cleanly decoded message is plausibly what it decoded as (any bytes of
/// packed varints decode as some layout): a shape has an element type, a program
/// shape a result, a layout a `minor_to_major` that is a permutation.
fn plausible(message: &crate::AnyMessage) -> bool {
    match message {
        crate::AnyMessage::Shape(s) => s.element_type != 0,
        crate::AnyMessage::ProgramShape(p) => p.result.is_some(),
        crate::AnyMessage::Layout(l) => {
            let n = l.minor_to_major.len();
            let mut seen = vec![false; n];
            n <= 64
                && l.minor_to_major.iter().all(|&d| {
                    usize::try_from(d)
                        .is_ok_and(|d| d < n && !std::mem::replace(&mut seen[d], true))
                })
        }
    }
}

/// What the bytes look like, for messages about a wrong `--from`.
fn describe(bytes: &[u8]) -> &'static str {
    match detect(bytes) {
        Ok(Form::HloModuleProto) => "an HloModuleProto (give --from hlo-module-proto)",
        Ok(Form::Binary) => match clean_kind(bytes, true) {
            Some(MessageKind::Shape) => "a ShapeProto (give --from binary)",
            Some(MessageKind::ProgramShape) => {
                "a ProgramShapeProto (give --from binary --message program-shape)"
            }
            Some(MessageKind::Layout) => "a LayoutProto (give --from binary --message layout)",
            None if crate::input::breaks_wire(bytes) => "bytes that are neither text nor protobuf",
            None => "protobuf bytes of some other message",
        },
        Ok(Form::HloModule) => "HLO module text (give --from hlo-module)",
        Ok(Form::Hlo) => "HLO text, one shape per line (give --from hlo)",
        Ok(Form::Json) => "JSON (give --from json)",
        Err(_) if is_text(bytes) => "text that is no form xla-shape reads",
        Err(_) => "empty",
    }
}

/// Checks one input held in memory.
pub fn check_bytes(name: &str, bytes: &[u8], options: &Options) -> FileReport {
    let form = match options.from {
        Some(form) => form,
        None => match detect(bytes) {
            Ok(form) => form,
            Err(reason) => {
                let code = if bytes.is_empty() {
                    "empty_input"
                } else {
                    "unknown_form"
                };
                return finish(
                    FileReport::unreadable(
                        name,
                        None,
                        code,
                        format!("cannot tell what this is: {reason}; give --from binary|json|hlo|hlo-module|hlo-module-proto"),
                    ),
                    options,
                );
            }
        },
    };
    let report = match form {
        Form::Binary => check_binary(name, bytes, options),
        Form::Json => check_json(name, bytes, options),
        Form::Hlo => check_hlo_lines(name, bytes, options, STREAMED_LINE),
        Form::HloModule => {
            if bytes.is_empty() {
                FileReport::unreadable(name, Some(form), "empty_input", "the input is empty")
            } else if !is_text(bytes) {
                FileReport::unreadable(
                    name,
                    Some(form),
                    "wrong_form",
                    format!(
                        "not module text: the bytes are binary; it looks like {}",
                        describe(bytes)
                    ),
                )
            } else {
                check_module_text(name, bytes, options)
            }
        }
        Form::HloModuleProto => check_module_proto(name, bytes, options),
    };
    let report = with_policy(report, form, options, |source, sink| {
        crate::guard::listing::stream_bytes(name, bytes, source, sink)
    });
    finish(report, options)
}

/// Adds the policy's findings to a readable report: the input is listed again (as
/// `form`) and every listing checked.
fn with_policy(
    mut report: FileReport,
    form: Form,
    options: &Options,
    list: impl FnOnce(
        &crate::guard::ReadOptions,
        &mut EntrySink<'_>,
    ) -> Result<(), crate::guard::listing::ReadError>,
) -> FileReport {
    let Some(policy) = &options.policy else {
        return report;
    };
    if report.unreadable.is_some() {
        return report;
    }
    let read = crate::guard::ReadOptions {
        source: crate::guard::Source::Form(form),
        message: options.message,
        style: crate::text::HloStyle::Xla,
    };
    // The input listed a shape at a time, each listing (file) checked on its own.
    let mut findings = Findings::new();
    let mut current: Option<(String, crate::guard::policy::PolicyCheck<'_>)> = None;
    let listed = list(&read, &mut |listing, entry| match &mut current {
        Some((file, check)) if *file == listing.file => check.entry(&entry),
        _ => {
            if let Some((_, check)) = current.take() {
                findings.append(check.finish());
            }
            let mut check = policy.checker();
            check.entry(&entry);
            current = Some((listing.file.clone(), check));
        }
    });
    if let Some((_, check)) = current {
        findings.append(check.finish());
    }
    if listed.is_ok() {
        report.findings.append(findings);
    }
    report
}

/// Where a listing streamed for a policy hands each shape.
type EntrySink<'a> = dyn FnMut(&crate::guard::Listing, crate::guard::listing::Entry) + 'a;

/// Checks one file, streaming module text and shape lines (memory stays flat for any
/// number of lines).
pub fn check_path(path: &Path, name: &str, options: &Options) -> FileReport {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) => return FileReport::unreadable(name, options.from, "io_error", e.to_string()),
    };
    // An input read whole is read into a buffer of its size, not one grown by doubling.
    let size = file.metadata().map_or(0, |m| m.len());
    let reader = BufReader::with_capacity(crate::guard::listing::buffer_for(size), file);
    check_reader(name, (reader, size), options, &|source, sink| {
        crate::guard::listing::stream_path(path, name, source, sink)
    })
}

/// Checks a stream that cannot be read twice (standard input): module text and shape
/// lines are checked as they are read, as in [`check_path`], unless a policy needs
/// the input listed as well; then it is read whole first.
pub fn check_stream<R: Read>(name: &str, reader: R, options: &Options) -> FileReport {
    let reader = BufReader::with_capacity(1 << 20, reader);
    if options.policy.is_some() {
        return match crate::input::read_whole(reader, 0) {
            Ok(bytes) => check_bytes(name, &bytes, options),
            Err(e) => FileReport::unreadable(name, options.from, "io_error", e.to_string()),
        };
    }
    check_reader(name, (reader, 0), options, &|_, _| Ok(()))
}

/// The listing of an input for its policy, read again by itself and handed on a shape
/// at a time.
type Relist<'a> = dyn Fn(
        &crate::guard::ReadOptions,
        &mut EntrySink<'_>,
    ) -> Result<(), crate::guard::listing::ReadError>
    + 'a;

/// Checks what `reader` gives (`size` bytes, when known: an input read whole is read
/// into a buffer of that size).
fn check_reader<R: BufRead>(
    name: &str,
    (reader, size): (R, u64),
    options: &Options,
    relist: &Relist<'_>,
) -> FileReport {
    let head = match Head::read(reader) {
        Ok(head) => head,
        Err(e) => return FileReport::unreadable(name, options.from, "io_error", e.to_string()),
    };
    let form = options.from.or_else(|| head.form().ok());
    let (empty, text) = (head.bytes().is_empty(), is_text(head.bytes()));
    // A first MiB that is no text, when JSON is asked for, is checked alone: no bytes
    // after it can make it JSON, and parsing stops where it would in the whole (bytes
    // that break the protobuf wire format are read so by `read_message`, below).
    if form == Some(Form::Json) && !text && !head.is_whole() {
        return check_bytes(name, head.bytes(), options);
    }
    let reader = head.into_reader();
    if form == Some(Form::HloModule) && !empty && text {
        let report = scan_text_report(name, reader);
        let report = with_policy(report, Form::HloModule, options, relist);
        return finish(report, options);
    }
    if form == Some(Form::Hlo) && !empty {
        let report = check_hlo_lines(name, reader, options, STREAMED_LINE);
        let report = with_policy(report, Form::Hlo, options, relist);
        return finish(report, options);
    }
    match crate::input::read_message(reader, size) {
        Ok(bytes) => check_bytes(name, &bytes, options),
        Err(e) => FileReport::unreadable(name, options.from, "io_error", e.to_string()),
    }
}

fn finish(mut report: FileReport, options: &Options) -> FileReport {
    report.allow(&options.allow);
    report
}

/// Why bytes given as one binary message are not checked as one: empty, a module
/// proto, or text of some form.
fn not_one_binary_message(name: &str, bytes: &[u8], options: &Options) -> Option<FileReport> {
    if bytes.is_empty() && options.message.is_none() {
        return Some(FileReport::unreadable(
            name,
            Some(Form::Binary),
            "empty_input",
            "the input is empty",
        ));
    }
    if module::probe_proto(bytes).is_ok() {
        return Some(FileReport::unreadable(
            name,
            Some(Form::Binary),
            "wrong_form",
            "this is an HloModuleProto, not one message: give --from hlo-module-proto (or no --from)",
        ));
    }
    if !bytes.is_empty() && is_text(bytes) && detect(bytes).is_ok() {
        return Some(FileReport::unreadable(
            name,
            Some(Form::Binary),
            "wrong_form",
            format!("this is not a binary message but {}", describe(bytes)),
        ));
    }
    None
}

fn check_binary(name: &str, bytes: &[u8], options: &Options) -> FileReport {
    let mut report = FileReport::new(name, Some(Form::Binary));
    if let Some(report) = not_one_binary_message(name, bytes, options) {
        return report;
    }
    if bytes.len() >= STREAMED_MESSAGE
        && matches!(options.message, None | Some(MessageKind::ProgramShape))
    {
        if let Some(report) = check_binary_program(name, bytes, options) {
            return report;
        }
    }
    // The error of decoding the bytes as a shape, when a streamed decode found one.
    let mut no_shape = None;
    if bytes.len() >= STREAMED_MESSAGE && matches!(options.message, None | Some(MessageKind::Shape))
    {
        match check_binary_tuple(name, bytes, options) {
            Streamed::Tuple(report) => return report,
            Streamed::NoShape(e) => no_shape = Some(e),
            Streamed::Whole => {}
        }
    }
    let clean = |kind| {
        codec::decode_any(kind, bytes)
            .ok()
            .filter(|d| !d.has_unknown_fields())
    };
    let shape = || match &no_shape {
        Some(e) => Err(e.clone()),
        None => codec::decode_shape(bytes),
    };
    let kind = match options.message.or_else(|| clean_kind(bytes, no_shape.is_none())) {
        Some(kind) => kind,
        // Auto: a shape with fields this schema does not know (a newer XLA) is still a
        // shape; bytes that are no shape at all are not checked as one.
        None => match shape() {
            Ok(d) if d.message.element_type != 0
                && !has_wrong_wire_type(&d) =>
            {
                MessageKind::Shape
            }
            // Read as a shape up to the limit on its lists: that error is the one to give.
            Err(e) if matches!(e.kind(), codec::DecodeErrorKind::TooManyEntries { .. }) => {
                MessageKind::Shape
            }
            // Bytes that break the wire format where it starts are no protobuf at all.
            Err(e) if options.from.is_none() && crate::input::breaks_wire(bytes) => {
                return FileReport::unreadable(
                    name,
                    Some(Form::Binary),
                    "unknown_form",
                    format!("bytes that are neither text nor protobuf (read as protobuf: {e})"),
                )
            }
            _ if options.from.is_none() => {
                return FileReport::unreadable(
                    name,
                    Some(Form::Binary),
                    "unknown_form",
                    "protobuf bytes, but not a ShapeProto, ProgramShapeProto, LayoutProto or HloModuleProto; give --from binary --message shape|layout|program-shape to check it as one",
                )
            }
            _ => MessageKind::Shape,
        },
    };
    let decoded = match (&no_shape, kind) {
        (Some(e), MessageKind::Shape) => Err(e.clone()),
        _ => codec::decode_any(kind, bytes),
    };
    match decoded {
        Ok(decoded) => {
            report.message = Some(kind.proto_name());
            report.shapes = count_shapes(&decoded.message);
            let mut texted = Texted::new(|| options.hlo_style.print_message(&decoded.message).ok());
            each_decoded_issue(&decoded, GateOptions::proto(), &mut |issue| {
                report.findings.push(texted.finding(&issue));
            });
            if options.message.is_some() && decoded.has_unknown_fields() {
                if let Some(other) = [
                    MessageKind::Shape,
                    MessageKind::ProgramShape,
                    MessageKind::Layout,
                ]
                .into_iter()
                .find(|&k| k != kind && clean(k).is_some())
                {
                    report.findings.push(wrong_message(kind, other));
                }
            }
            report
        }
        Err(e) => FileReport::unreadable(
            name,
            Some(Form::Binary),
            "decode_error",
            format!("cannot decode {}: {e}", kind.proto_name()),
        ),
    }
}

/// [`check_bytes`] of a binary message read a shape at a time whatever its size (the
/// streamed checks start at 64 KiB), for tests that compare the streamed reports with
/// the whole ones on small inputs: a shape that is a tuple (`options.message` not
/// given) or, with `--message program-shape`, a program shape. `None` when the streamed
/// checks leave the message to the whole check.
#[doc(hidden)]
pub fn check_binary_streamed(name: &str, bytes: &[u8], options: &Options) -> Option<FileReport> {
    if not_one_binary_message(name, bytes, options).is_some() {
        return None;
    }
    let report = match options.message {
        Some(MessageKind::ProgramShape) => check_binary_program(name, bytes, options)?,
        Some(_) => return None,
        None => match check_binary_tuple(name, bytes, options) {
            Streamed::Tuple(report) => report,
            _ => return None,
        },
    };
    Some(finish(report, options))
}

/// Whether a shape read without its elements is a tuple (whatever other fields it has:
/// they are checked apart, [`TupleFindings::around_elements`]).
fn is_tuple_type(shell: &crate::proto::ShapeProto) -> bool {
    shell.element_type == crate::proto::PrimitiveType::Tuple as i32
}

/// Whether a decoded message has a known field that arrived with a wrong wire type
/// (looked at one field at a time: a message may hold millions of unknown fields).
fn has_wrong_wire_type(decoded: &codec::Decoded<crate::proto::ShapeProto>) -> bool {
    let mut wrong = false;
    decoded.for_each_unknown_field(|info| wrong |= info.known_field.is_some());
    wrong
}

/// Binary messages at least this long are checked a top-level tuple element at a time
/// when they can be ([`check_binary_tuple`]).
const STREAMED_MESSAGE: usize = crate::LONG_INPUT;

/// Checks a binary `ShapeProto` that is a plain tuple (its element type and its
/// elements, nothing else, and no unknown field anywhere) in the memory of one
/// element: decoding a 220 MB tuple whole, then validating it, took 30 times its size.
/// Each element is validated inside a one-element tuple, so that its findings are
/// those of the whole tuple, at `tuple_shapes[i]`, each with its element's text (the
/// whole tuple's text would be as large as the input). The findings are those
/// [`check_binary`] gives, and so is a decode error (the same decoder reads the same
/// bytes). [`Streamed::Whole`] for anything else, which the caller checks whole: a
/// shell with other fields or unknown fields, an element with unknown fields (whose
/// warnings name other messages), or no elements.
fn check_binary_tuple(name: &str, bytes: &[u8], options: &Options) -> Streamed {
    let tuple = std::cell::RefCell::new(TupleFindings::new(options));
    let result = codec::decode_shape_tree(
        bytes,
        &mut |path, _, element| tuple.borrow_mut().decoded_element(path, element),
        &mut |event| tuple.borrow_mut().tree(event),
    );
    let mut tuple = tuple.into_inner();
    match result {
        Ok(streamed) if streamed.elements > 0 && is_tuple_type(&streamed.shell.message) => {
            // As the whole message's report: its issues (the tuple's own around its
            // elements'), then its unknown fields, the tuple's own first (without the
            // tuple's text, which is as large as the input), then those of its
            // elements in order, then those of its layout.
            tuple.around_elements(&streamed.shell.message);
            let elements = std::mem::take(&mut tuple.unknown);
            let root = crate::path::Path::root();
            let unknown = UnknownInOrder::of_tuple(&streamed.shell, &root, elements);
            unknown.into_findings(&mut tuple.findings);
            Streamed::Tuple(tuple.report(name, Form::Binary))
        }
        Ok(_) => Streamed::Whole,
        // What is said of bytes that are no shape depends on whether they are some
        // other message: the caller decides, without decoding them as a shape again.
        Err(e) => Streamed::NoShape(e),
    }
}

/// The findings of a top-level tuple read from bytes or JSON and checked an element at
/// a time ([`TupleIssues::each`]), each with its element's text (the whole tuple's
/// text would be as large as the input).
struct TupleFindings<'o> {
    options: &'o Options,
    findings: Findings,
    /// The issues of the elements' unknown fields (with their element's text), which
    /// come after every other finding (as in the report of the whole message): the
    /// first of each kind, as many as a report lists, and how many are not.
    unknown: UnknownInOrder,
    issues: TupleIssues,
    /// The findings, unknown fields and listing of each tuple around the one whose
    /// elements are being read ([`codec::TreeEvent`]), outermost first: a nested
    /// tuple's findings are put in place when it is left, its own around its
    /// elements'.
    outer: Vec<Level>,
}

/// What [`TupleFindings`] gathers for one tuple while its elements are read.
struct Level {
    findings: Findings,
    unknown: UnknownInOrder,
}

impl Level {
    /// A tuple entered: the findings and unknown fields gathered so far, put aside.
    fn enter(findings: &mut Findings, unknown: &mut UnknownInOrder) -> Level {
        Level {
            findings: std::mem::take(findings),
            unknown: std::mem::take(unknown),
        }
    }

    /// The tuple at `path` below `base` left, without its elements (`shell`, with its
    /// unknown fields `node`): its findings put where the whole check puts them, the
    /// issues of its own fields around its elements' ([`own_around_at`]), its unknown
    /// fields in the whole listing's order ([`UnknownInOrder::of_tuple`]), after those
    /// gathered before it (`self`). Returns whether it holds unknown fields.
    fn leave(
        self,
        (findings, unknown): (&mut Findings, &mut UnknownInOrder),
        base: &crate::path::Path,
        path: &[usize],
        (shell, node): (crate::proto::ShapeProto, codec::UnknownFields),
    ) -> bool {
        let elements = std::mem::take(findings);
        *findings = own_around_at(&shell, base, path, self.findings, elements);
        let decoded = codec::Decoded {
            message: shell,
            unknown: node,
        };
        let prefix = codec::tuple_path(path).prefixed(base);
        let elements = std::mem::replace(unknown, self.unknown);
        unknown.append(UnknownInOrder::of_tuple(&decoded, &prefix, elements));
        decoded.has_unknown_fields()
    }
}

impl<'o> TupleFindings<'o> {
    fn new(options: &'o Options) -> Self {
        Self {
            options,
            findings: Findings::new(),
            unknown: UnknownInOrder::default(),
            issues: TupleIssues::default(),
            outer: Vec::new(),
        }
    }

    /// A nested tuple entered or left ([`codec::decode_shape_tree`]). Left, its
    /// findings go where the whole check puts them: the issues of its own fields around
    /// its elements' (as [`Self::around_elements`]), and its unknown fields, its own
    /// first, then its elements', then its layout's (the order of the whole message's
    /// listing), after every other finding.
    fn tree(&mut self, event: codec::TreeEvent<'_>) {
        match event {
            codec::TreeEvent::Enter(..) => {
                let level = Level::enter(&mut self.findings, &mut self.unknown);
                self.outer.push(level);
            }
            codec::TreeEvent::Leave(path, shell, node) => {
                if let Some(parent) = self.outer.pop() {
                    let root = crate::path::Path::root();
                    let lists = (&mut self.findings, &mut self.unknown);
                    parent.leave(lists, &root, path, (shell, node));
                }
            }
        }
    }

    fn element(&mut self, path: &[usize], element: crate::proto::ShapeProto) {
        self.element_with_unknown(path, element, Vec::new());
    }

    /// An element decoded from bytes, with its unknown fields (at their whole paths).
    fn decoded_element(
        &mut self,
        path: &[usize],
        element: codec::Decoded<crate::proto::ShapeProto>,
    ) {
        let mut unknown = Vec::new();
        if !element.holds_no_unknown() {
            unknown = self.unknown.listed_of(&element, &codec::tuple_path(path));
        }
        self.element_with_unknown(path, element.message, unknown);
    }

    fn element_with_unknown(
        &mut self,
        path: &[usize],
        element: crate::proto::ShapeProto,
        unknown: Vec<crate::Issue>,
    ) {
        let style = self.options.hlo_style;
        let mut texted = Texted::new(|| style.print_shape(&element).ok());
        let findings = &mut self.findings;
        self.issues
            .each(path, &element, GateOptions::proto(), &mut |issue| {
                findings.push(texted.finding(&issue));
            });
        if !unknown.is_empty() {
            self.unknown.push_listed(unknown, texted.text());
        }
    }

    /// Puts the issues of the top-level tuple's own fields (read without its elements)
    /// where the whole check puts them around its elements' ([`own_around`]).
    fn around_elements(&mut self, shell: &crate::proto::ShapeProto) {
        let elements = std::mem::take(&mut self.findings);
        self.findings = own_around(shell, &[], Findings::new(), elements);
    }

    /// The report of the file: one shape, a tuple, with the findings of its elements.
    fn report(self, name: &str, form: Form) -> FileReport {
        let mut report = FileReport::new(name, Some(form));
        report.message = Some(MessageKind::Shape.proto_name());
        report.shapes = 1;
        report.findings = self.findings;
        report
    }
}

/// `before`, then the findings of a tuple read without its elements (`shell`, at
/// tuple indices `path`) put where the whole check puts them around the findings of
/// its `elements`: `dimensions` before them, `layout` and `is_dynamic_dimension` after.
fn own_around(
    shell: &crate::proto::ShapeProto,
    path: &[usize],
    before: Findings,
    elements: Findings,
) -> Findings {
    own_around_at(shell, &crate::path::Path::root(), path, before, elements)
}

/// [`own_around`] for a tuple at `path` inside a shape that stands at `base` in a
/// larger message (a program shape's parameter or result, at nesting depth 0 there).
fn own_around_at(
    shell: &crate::proto::ShapeProto,
    base: &crate::path::Path,
    path: &[usize],
    mut before: Findings,
    elements: Findings,
) -> Findings {
    let prefix = &codec::tuple_path(path).prefixed(base);
    let report = crate::validate::validate_nested_shape(shell, GateOptions::proto(), path.len());
    let (first, last): (Vec<_>, Vec<_>) = report
        .issues()
        .iter()
        .partition(|issue| issue.path().segments().first() == Some(&Segment::Field("dimensions")));
    let own = |issue: &crate::Issue| Finding::from_issue(&issue.clone().prefixed(prefix));
    before.extend(first.into_iter().map(own));
    before.append(elements);
    before.extend(last.into_iter().map(own));
    before
}

/// Unknown fields gathered from parts of a message read apart, in the order the whole
/// message's listing gives them: the first of each kind listed (with their shape's
/// text), the rest counted.
#[derive(Default)]
struct UnknownInOrder {
    listed: Vec<(crate::Issue, Option<String>)>,
    listing: crate::validate::UnknownListing,
}

impl UnknownInOrder {
    /// The unknown fields of a tuple read without its elements (`shell`, at `prefix`),
    /// with those of its `elements`: its own first, then its elements', then its
    /// layout's (the whole listing visits a message's children by field number).
    fn of_tuple(
        shell: &codec::Decoded<crate::proto::ShapeProto>,
        prefix: &crate::path::Path,
        elements: UnknownInOrder,
    ) -> Self {
        let (mut own, mut layout) = (Vec::new(), Vec::new());
        shell.for_each_unknown_field(|mut info| {
            let nested = !info.path.is_root();
            info.path = info.path.prefixed(prefix);
            if nested {
                layout.push(info);
            } else {
                own.push(info);
            }
        });
        let mut order = UnknownInOrder::default();
        order.fields(own, None);
        order.append(elements);
        order.fields(layout, None);
        order
    }

    /// Lists `fields` next, each with `text`.
    fn fields(&mut self, fields: Vec<codec::UnknownFieldInfo>, text: Option<String>) {
        for info in fields {
            if let Some(issue) = self.listing.field(&info) {
                self.listed.push((issue, text.clone()));
            }
        }
    }

    /// Lists what `other` listed next, and counts what it counted.
    fn append(&mut self, other: UnknownInOrder) {
        for (issue, text) in other.listed {
            if let Some(issue) = self.listing.issue(issue) {
                self.listed.push((issue, text));
            }
        }
        self.listing.merge(other.listing);
    }

    /// The issues of the unknown fields of `shape`, at `prefix`, that are listed (the
    /// rest counted); for [`UnknownInOrder::push_listed`] with the shape's text.
    fn listed_of(
        &mut self,
        shape: &codec::Decoded<crate::proto::ShapeProto>,
        prefix: &crate::path::Path,
    ) -> Vec<crate::Issue> {
        let report = crate::validate::unknown_report(|each| shape.for_each_unknown_field(each));
        report
            .issues()
            .iter()
            .filter_map(|issue| self.listing.issue(issue.clone().prefixed(prefix)))
            .collect()
    }

    /// Adds `issues` (from [`UnknownInOrder::listed_of`]) with their shape's `text`.
    fn push_listed(&mut self, issues: Vec<crate::Issue>, text: &Option<String>) {
        self.listed.extend(
            (issues.into_iter().enumerate())
                .map(|(nth, issue)| (issue, repeated_text(text.as_deref(), nth))),
        );
    }

    /// Adds the listed fields to `findings`, then the counts of the rest.
    fn into_findings(self, findings: &mut Findings) {
        for (issue, text) in self.listed {
            let mut finding = Finding::from_issue(&issue);
            finding.shape = text;
            findings.push(finding);
        }
        findings.extend(
            self.listing
                .finish()
                .map(|issue| Finding::from_issue(&issue)),
        );
    }
}

/// Checks a binary `ProgramShapeProto` a parameter at a time (decoded whole, a million
/// parameters took 60 times their 11 MB), each opened into its plain tuples: the
/// findings are those [`check_binary`] gives, at `parameters[i]...`, each with its
/// shape's text, then the result's, then the count of names, then (with `--message
/// program-shape`, which reads on past them) the unknown fields in the whole listing's
/// order. `None` for anything [`check_binary`] would not check as a program shape of
/// that kind (bytes of another message, a program shape with unknown fields when the
/// kind is not given, or without a result), which the caller checks as before; with
/// `--message program-shape`, a decode error is the report.
fn check_binary_program(name: &str, bytes: &[u8], options: &Options) -> Option<FileReport> {
    let keep_unknown = options.message == Some(MessageKind::ProgramShape);
    let read = match read_program(bytes, options, keep_unknown) {
        Ok(Some(read)) => read,
        Ok(None) => return None,
        Err(e) if options.message.is_some() => {
            return Some(FileReport::unreadable(
                name,
                Some(Form::Binary),
                "decode_error",
                format!(
                    "cannot decode {}: {e}",
                    MessageKind::ProgramShape.proto_name()
                ),
            ))
        }
        Err(_) => return None,
    };
    let streamed = read.streamed;
    let has_result = streamed.has_result();
    if options.message.is_none() && !has_result {
        return None;
    }
    let mut report = program_report(
        name,
        Form::Binary,
        read.findings,
        streamed.shell.message.result,
        (streamed.parameters, streamed.names),
        (streamed.result_streamed, options),
    );
    if let Some(unknown) = read.unknown {
        // After every other finding, as the whole check lists them.
        unknown.into_findings(&mut report.findings);
        // As for a message read whole: say which message the bytes are, if another.
        if let Some(other) = [MessageKind::Shape, MessageKind::Layout]
            .into_iter()
            .find(|&k| decodes_clean(k, bytes, false))
        {
            report
                .findings
                .push(wrong_message(MessageKind::ProgramShape, other));
        }
    }
    Some(report)
}

/// A binary program shape read by [`read_program`].
struct ProgramRead {
    /// What the read keeps: the result when it was read whole, and the counts.
    streamed: codec::StreamedProgram,
    /// The findings of the parameters, then of a result read a shape at a time.
    findings: Findings,
    /// Its unknown fields, in the whole listing's order, when it holds any.
    unknown: Option<UnknownInOrder>,
}

/// Reads a binary program shape a shape at a time, every tuple opened (its parts'
/// too, whatever fields of their own they have), checking each shape. Without
/// `keep_unknown` it stops at the first unknown field (`None`).
fn read_program(
    bytes: &[u8],
    options: &Options,
    keep_unknown: bool,
) -> Result<Option<ProgramRead>, codec::DecodeError> {
    let parts = std::cell::RefCell::new(ProgramFindings::default());
    let mut program = ProgramIssues::default();
    let mut leaf = |part: text::ProgramPart,
                    path: &[usize],
                    _,
                    shape: codec::Decoded<crate::proto::ShapeProto>| {
        let parts = &mut *parts.borrow_mut();
        if shape.has_unknown_fields() {
            parts.any_unknown = true;
            let base = part.path();
            let at = parts.unknown_of(part);
            let listed = at.listed_of(&shape, &codec::tuple_path(path).prefixed(&base));
            if !listed.is_empty() {
                let text = options
                    .hlo_style
                    .print_message(&crate::AnyMessage::Shape(shape.message.clone()))
                    .ok();
                at.push_listed(listed, &text);
            }
        }
        let found = (&mut parts.findings, &mut parts.result);
        program.proto_leaf(part, path, shape.message, options, found);
    };
    let mut tree = |event: codec::TreeEvent<'_>| parts.borrow_mut().tree(event);
    let decoded = if keep_unknown {
        codec::decode_program_shape_tree(bytes, &mut leaf, &mut tree, &mut |_, _| {}).map(Some)
    } else {
        codec::decode_clean_program_shape_tree(bytes, &mut leaf, &mut tree, &mut |_, _| {})
    };
    let ProgramFindings {
        mut findings,
        result: result_findings,
        unknown: [parameters, result_part],
        any_unknown,
        ..
    } = parts.into_inner();
    let Some(streamed) = decoded? else {
        return Ok(None);
    };
    findings.append(result_findings);
    if !(streamed.shell.has_unknown_fields() || any_unknown) {
        let unknown = None;
        return Ok(Some(ProgramRead {
            streamed,
            findings,
            unknown,
        }));
    }
    if !keep_unknown {
        return Ok(None);
    }
    // The unknown fields of the top level, and of a result read whole (with its text,
    // printed only when there are some).
    let (mut own, mut in_result) = (Vec::new(), Vec::new());
    streamed
        .shell
        .for_each_unknown_field(|info| match info.path.is_root() {
            true => own.push(info),
            false => in_result.push(info),
        });
    let result_text = match (&streamed.shell.message.result, in_result.is_empty()) {
        (Some(result), false) => options.hlo_style.print_shape(result).ok(),
        _ => None,
    };
    // The top level's own, the parameters', then the result's (its shapes', or those
    // of a result read whole, with its text).
    let mut order = UnknownInOrder::default();
    order.fields(own, None);
    order.append(parameters);
    order.append(result_part);
    order.fields(in_result, result_text);
    Ok(Some(ProgramRead {
        streamed,
        findings,
        unknown: Some(order),
    }))
}

/// A program shape inside a module proto read a shape at a time ([`read_program`]),
/// its findings handed to `found` as the module's whole check gives them: each
/// parameter's, the result's, then the unknown fields (a module does not count
/// parameter names).
fn check_module_program(
    bytes: &[u8],
    options: &Options,
    found: &mut dyn FnMut(Finding),
) -> module::LongChecked {
    let read = match read_program(bytes, options, true) {
        Ok(Some(read)) => read,
        Ok(None) => return module::LongChecked::Declined,
        Err(e) => return module::LongChecked::Undecodable(e),
    };
    let streamed = read.streamed;
    let has_result = streamed.has_result();
    let mut findings = read.findings;
    if let Some(result) = streamed.shell.message.result {
        // A result read whole: checked whole, with its text.
        let result = crate::AnyMessage::Shape(result);
        let at = crate::path::Path::root().field("result");
        let mut texted = Texted::new(|| options.hlo_style.print_message(&result).ok());
        each_issue(&result, GateOptions::proto(), &mut |issue| {
            findings.push(texted.finding(&issue.prefixed(&at)));
        });
    }
    if let Some(unknown) = read.unknown {
        unknown.into_findings(&mut findings);
    }
    hand_on(findings, found);
    module::LongChecked::Checked(streamed.parameters + usize::from(has_result))
}

/// Hands each of `findings` to `found`; one that cannot be read back from its
/// temporary file becomes an `io_error` finding, never a silent pass.
fn hand_on(findings: Findings, found: &mut dyn FnMut(Finding)) {
    let read = findings.try_for_each(
        |e| e,
        |finding| {
            found(finding.clone());
            Ok(())
        },
    );
    if let Err(e) = read {
        found(Finding::new("io_error", Severity::Error, e.to_string()));
    }
}

/// The findings of a program shape's parts read a shape at a time
/// ([`check_binary_program`]): the parameters' and the result's apart (the whole check
/// gives the result's after every parameter's), and so their unknown fields.
#[derive(Default)]
struct ProgramFindings {
    findings: Findings,
    result: Findings,
    /// The parameters' unknown fields, then the result's.
    unknown: [UnknownInOrder; 2],
    any_unknown: bool,
    /// The findings and unknown fields of each tuple around the one being read (of
    /// the part being read), outermost first, as [`TupleFindings`] keeps them.
    outer: Vec<Level>,
}

impl ProgramFindings {
    /// The findings and unknown fields of `part`'s kind: the parameters' or the
    /// result's.
    fn lists_of(&mut self, part: text::ProgramPart) -> (&mut Findings, &mut UnknownInOrder) {
        let [parameters, result] = &mut self.unknown;
        match part {
            text::ProgramPart::Parameter(_) => (&mut self.findings, parameters),
            text::ProgramPart::Result => (&mut self.result, result),
        }
    }

    /// The unknown fields of `part`'s kind.
    fn unknown_of(&mut self, part: text::ProgramPart) -> &mut UnknownInOrder {
        self.lists_of(part).1
    }

    /// A tuple of a part (the part itself, or one inside it) entered or left
    /// ([`codec::decode_program_shape_tree`]): left, its findings go where the whole
    /// check puts them, as [`TupleFindings::tree`] puts a nested tuple's.
    fn tree(&mut self, event: codec::TreeEvent<'_>) {
        match event {
            codec::TreeEvent::Enter(path, _) => self.enter(codec::program_part(path).0),
            codec::TreeEvent::Leave(path, shell, node) => {
                let (part, inner) = codec::program_part(path);
                self.leave(part, inner, shell, node);
            }
        }
    }

    /// A tuple of `part` entered.
    fn enter(&mut self, part: text::ProgramPart) {
        let (findings, unknown) = self.lists_of(part);
        let level = Level::enter(findings, unknown);
        self.outer.push(level);
    }

    /// The tuple of `part` at `inner` (`[]`: the part itself) left, without its
    /// elements (`shell`, with its unknown fields `node`).
    fn leave(
        &mut self,
        part: text::ProgramPart,
        inner: &[usize],
        shell: crate::proto::ShapeProto,
        node: codec::UnknownFields,
    ) {
        if let Some(parent) = self.outer.pop() {
            let base = part.path();
            self.any_unknown |= parent.leave(self.lists_of(part), &base, inner, (shell, node));
        }
    }
}

/// The warning that bytes read as `kind` decode cleanly as `other`.
fn wrong_message(kind: MessageKind, other: MessageKind) -> Finding {
    Finding::new(
        "wrong_message",
        Severity::Warning,
        format!(
            "read as {}, this has fields that message does not know; it decodes cleanly as {}: give --message {}",
            kind.proto_name(),
            other.proto_name(),
            other.cli_name()
        ),
    )
}

/// The report of a program shape checked a parameter at a time, with the findings of
/// its parameters (and of its result, when it was `streamed` a shape at a time too):
/// what the whole check says after them, that is the findings of a `result` read whole
/// (with its text) and the count of names, with the parameters left out.
fn program_report(
    name: &str,
    form: Form,
    mut findings: Findings,
    result: Option<crate::proto::ShapeProto>,
    (parameters, names): (usize, usize),
    (streamed, options): (bool, &Options),
) -> FileReport {
    let has_result = result.is_some();
    let rest = crate::proto::ProgramShapeProto {
        parameters: Vec::new(),
        result,
        parameter_names: Vec::new(),
    };
    // A streamed result's findings are among `findings`: nothing is left to check.
    let rest = (!streamed).then_some(crate::AnyMessage::ProgramShape(rest));
    if let Some(rest) = &rest {
        let result = match rest {
            crate::AnyMessage::ProgramShape(p) => p.result.as_ref(),
            _ => None,
        };
        // The result's text, printed once (it may be as large as the input).
        let mut texted = Texted::new(|| options.hlo_style.print_shape(result?).ok());
        each_issue(rest, GateOptions::proto(), &mut |issue| {
            let in_result = issue.path().segments().first() == Some(&Segment::Field("result"));
            findings.push(match in_result {
                true => texted.finding(&issue),
                false => Finding::from_issue(&issue),
            });
        });
    }
    if names != parameters {
        let issue = crate::Issue::new(
            crate::path::Path::root().field("parameter_names"),
            crate::IssueKind::ParameterNamesCount { names, parameters },
        );
        findings.push(Finding::from_issue(&issue));
    }
    let mut report = FileReport::new(name, Some(form));
    report.message = Some(MessageKind::ProgramShape.proto_name());
    report.shapes = parameters + usize::from(has_result || streamed);
    report.findings = findings;
    report
}

/// What [`check_binary_tuple`] made of the bytes.
enum Streamed {
    /// A plain tuple, checked.
    Tuple(FileReport),
    /// Not a shape: the error of decoding it as one.
    NoShape(codec::DecodeError),
    /// Something to check whole.
    Whole,
}

fn count_shapes(message: &crate::AnyMessage) -> usize {
    match message {
        crate::AnyMessage::ProgramShape(p) => p.parameters.len() + usize::from(p.result.is_some()),
        _ => 1,
    }
}

fn check_json(name: &str, bytes: &[u8], options: &Options) -> FileReport {
    // The error of reading the bytes as a shape, when a streamed read found one.
    let mut no_shape = None;
    if bytes.len() >= STREAMED_MESSAGE && matches!(options.message, None | Some(MessageKind::Shape))
    {
        // A top-level tuple is checked a shape at a time (every tuple inside it
        // opened, its own fields checked when it is left), never held whole.
        let tuple = std::cell::RefCell::new(TupleFindings::new(options));
        let mut count = 0;
        let json_options = crate::json::ParseOptions::new();
        let entered = crate::proto::ShapeProto::default();
        let read = crate::json::shape_from_json_tree(
            bytes,
            &json_options,
            &mut |path, leaf| {
                count = count.max(path.first().map_or(0, |&i| i + 1));
                tuple.borrow_mut().element(path, leaf);
            },
            &mut |path, shell| {
                // JSON keeps no unknown field; the own fields are checked when left.
                let event = match shell {
                    None => codec::TreeEvent::Enter(path, &entered),
                    Some(shell) => {
                        codec::TreeEvent::Leave(path, shell, codec::UnknownFields::new())
                    }
                };
                tuple.borrow_mut().tree(event);
            },
        );
        let mut tuple = tuple.into_inner();
        match read {
            Ok(shell) if count > 0 && is_tuple_type(&shell) => {
                tuple.around_elements(&shell);
                return tuple.report(name, Form::Json);
            }
            Ok(_) => {}
            Err(e) => no_shape = Some(e),
        }
    }
    // The error of reading the bytes as a program shape, when a streamed read found one.
    let mut no_program = None;
    let not_a_shape = no_shape.is_some() || options.message == Some(MessageKind::ProgramShape);
    if bytes.len() >= STREAMED_MESSAGE
        && not_a_shape
        && options.message != Some(MessageKind::Layout)
    {
        // A program shape is checked a parameter at a time, every tuple in its parts
        // opened (its own fields checked when it is left).
        let parts = std::cell::RefCell::new(ProgramFindings::default());
        let mut program = ProgramIssues::default();
        let json_options = crate::json::ParseOptions::new();
        let read = crate::json::program_shape_from_json_tree(
            bytes,
            &json_options,
            &mut |part, path, shape| {
                let parts = &mut *parts.borrow_mut();
                let found = (&mut parts.findings, &mut parts.result);
                program.proto_leaf(part, path, shape, options, found);
            },
            &mut |part, path, shell| {
                let mut parts = parts.borrow_mut();
                match shell {
                    None => parts.enter(part),
                    // JSON keeps no unknown field.
                    Some(shell) => parts.leave(part, path, shell, codec::UnknownFields::new()),
                }
            },
            &mut |_, _| {},
        );
        let ProgramFindings {
            mut findings,
            result: result_findings,
            ..
        } = parts.into_inner();
        match read {
            Ok(program) => {
                findings.append(result_findings);
                return program_report(
                    name,
                    Form::Json,
                    findings,
                    program.result,
                    (program.parameters, program.names),
                    (program.result_streamed, options),
                );
            }
            Err(e) => no_program = Some(e),
        }
    }
    let parse = |kind| match (&no_shape, &no_program, kind) {
        (Some(e), _, MessageKind::Shape) | (_, Some(e), MessageKind::ProgramShape) => {
            Err(e.clone())
        }
        _ => crate::json::from_json(kind, bytes, &crate::json::ParseOptions::new()),
    };
    // Without --message: the first of shape, program shape, layout that reads (the JSON
    // parser refuses keys a message does not have, so at most one fits a real message);
    // the error is the shape's.
    let kind = options.message.unwrap_or_else(|| {
        [MessageKind::ProgramShape, MessageKind::Layout]
            .into_iter()
            .find(|&kind| parse(MessageKind::Shape).is_err() && parse(kind).is_ok())
            .unwrap_or(MessageKind::Shape)
    });
    match parse(kind) {
        Ok(message) => {
            let mut report = FileReport::new(name, Some(Form::Json));
            report.message = Some(kind.proto_name());
            report.shapes = count_shapes(&message);
            let mut texted = Texted::new(|| options.hlo_style.print_message(&message).ok());
            each_issue(&message, GateOptions::proto(), &mut |issue| {
                report.findings.push(texted.finding(&issue));
            });
            report
        }
        Err(e) => FileReport::unreadable(
            name,
            Some(Form::Json),
            "decode_error",
            format!("cannot read {} from JSON: {e}", kind.proto_name()),
        ),
    }
}

/// [`check_bytes`] of lines of HLO text (`options.from` is taken as `Hlo`) whose
/// shape and program-shape lines of `long_at` bytes or more are checked a tuple
/// element (or a part) at a time, where [`check_bytes`] starts at
/// [`LONG_INPUT`](crate::LONG_INPUT): for tests that compare those checks with the
/// whole ones on short lines. Its findings are the whole check's but for the shape
/// text of a tuple element's, which is the element's.
#[doc(hidden)]
pub fn check_hlo_lines_from(
    name: &str,
    bytes: &[u8],
    options: &Options,
    long_at: usize,
) -> FileReport {
    finish(check_hlo_lines(name, bytes, options, long_at), options)
}

/// One message per line: every bad line is a finding at `LINE:COLUMN`; blank lines
/// and `//` comment lines are skipped. Read a line at a time: memory holds one line
/// (and the findings), whatever the number of lines. Shape and program-shape lines of
/// `long_at` bytes or more are checked a tuple element (or a part) at a time.
fn check_hlo_lines<R: BufRead>(
    name: &str,
    mut reader: R,
    options: &Options,
    long_at: usize,
) -> FileReport {
    let form = Some(Form::Hlo);
    let not_utf8 = |bytes: &[u8]| {
        FileReport::unreadable(
            name,
            form,
            "wrong_form",
            format!("not UTF-8 text; it looks like {}", describe(bytes)),
        )
    };
    let head = match reader.fill_buf() {
        Ok(head) => head,
        Err(e) => return FileReport::unreadable(name, form, "io_error", e.to_string()),
    };
    // A whole module given as shape lines is told by its first lines.
    let head_text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return not_utf8(head),
    };
    if options.from.is_some() && looks_like_module_text(head_text) {
        return FileReport::unreadable(
            name,
            form,
            "wrong_form",
            "this is a whole HLO module, not one shape per line: give --from hlo-module (or no --from)",
        );
    }
    let mut report = FileReport::new(name, form);
    let mut messages = 0;
    let mut kinds = Vec::new();
    let mut buffer = Vec::new();
    for index in 0.. {
        buffer.clear();
        match crate::input::read_line(&mut reader, &mut buffer) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return FileReport::unreadable(name, form, "io_error", e.to_string()),
        }
        let mut bytes = &buffer[..];
        if let Some(rest) = bytes.strip_suffix(b"\n") {
            bytes = rest.strip_suffix(b"\r").unwrap_or(rest);
        }
        let Ok(line) = std::str::from_utf8(bytes) else {
            return not_utf8(&buffer);
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        messages += 1;
        let column_of = |pos: usize| line.get(..pos).map_or(pos, |s| s.chars().count()) + 1;
        let start = line.len() - line.trim_start().len();
        let kind = options.message.unwrap_or_else(|| line_kind(trimmed));
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
        let long = match kind {
            _ if line.len() < long_at => None,
            MessageKind::Shape => Some(check_long_shape_line as LongLineCheck),
            MessageKind::ProgramShape => Some(check_long_program_line as LongLineCheck),
            MessageKind::Layout => None,
        };
        if let Some(check) = long {
            let locate = |finding: Finding| {
                let column = column_of(finding.column.unwrap_or(start));
                finding.at(index + 1, column)
            };
            // A line that does not parse has its syntax error as its one finding, as
            // when it is parsed whole: the findings of the shapes before the error are
            // held until the line has parsed.
            let mut held = Findings::new();
            match check(line, &mut |finding| held.push(locate(finding))) {
                Ok(shapes) => {
                    report.shapes += shapes;
                    report.findings.append(held);
                }
                Err(error) => report.findings.push(locate(*error)),
            }
            continue;
        }
        match text::parse_message(kind, line) {
            Ok(message) => {
                report.shapes += count_shapes(&message);
                let mut texted = Texted::new(|| Some(trimmed.to_string()));
                each_issue(&message, GateOptions::hlo_text(), &mut |issue| {
                    let finding = texted.finding(&issue).at(index + 1, column_of(start));
                    report.findings.push(finding);
                });
            }
            Err(e) => {
                let finding = Finding::new("hlo_syntax", Severity::Error, e.message())
                    .at(index + 1, column_of(e.span().start.min(line.len())));
                report.findings.push(finding);
            }
        }
    }
    if messages == 0 {
        return FileReport::unreadable(
            name,
            form,
            "no_shapes",
            "no shape in the input (only blank and comment lines)",
        );
    }
    if let [kind] = kinds[..] {
        report.message = Some(kind.proto_name());
    }
    report
}

/// Lines of shape text at least this long are checked a top-level tuple element at a
/// time ([`check_long_shape_line`]).
const STREAMED_LINE: usize = crate::LONG_INPUT;

/// Checks one long line of shape text in the memory of one shape of a tuple, however
/// the tuples nest (building a 200 MB one-line tuple whole took 25 times its size):
/// each shape that is no non-empty tuple is validated inside as many one-element tuples
/// as it is deep ([`TupleIssues::each`]), so that its findings are those of the whole
/// tuple, at `tuple_shapes[i]...`. A finding's shape text is that shape's (the line's
/// for a shape that is no tuple); `column` carries the byte offset of the finding in
/// the line, for the caller to turn into a column.
///
/// Gives the number of shapes the line holds (one), or the line's syntax error, in
/// which case the findings already handed on are not the line's: XLA would not have
/// read it, and the whole parse gives the error alone.
fn check_long_shape_line(
    line: &str,
    found: &mut dyn FnMut(Finding),
) -> Result<usize, Box<Finding>> {
    let trimmed = line.trim();
    let mut tuple = TupleIssues::default();
    let result = text::parse_shape_leaves(
        line,
        text::ParseOptions::default(),
        &mut |path, span, element| {
            let element_text = line.get(span).unwrap_or_default();
            let mut nth = 0;
            tuple.each(path, &element, GateOptions::hlo_text(), &mut |issue| {
                found(line_finding(&issue, line, element_text, nth));
                nth += 1;
            });
        },
    );
    match result {
        Ok(text::Streamed::Tuple { .. }) => Ok(1),
        Ok(text::Streamed::Shape(shape)) => {
            let mut nth = 0;
            let shape = crate::AnyMessage::Shape(shape);
            each_issue(&shape, GateOptions::hlo_text(), &mut |issue| {
                found(line_finding(&issue, line, trimmed, nth));
                nth += 1;
            });
            Ok(1)
        }
        Err(e) => Err(Box::new(line_syntax_error(&e, line))),
    }
}

/// [`check_long_shape_line`] or [`check_long_program_line`].
type LongLineCheck = fn(&str, &mut dyn FnMut(Finding)) -> Result<usize, Box<Finding>>;

/// The `nth` finding (from 0) of `issue` in a shape of a long line, with that shape's
/// text as [`repeated_text`] gives it; `column` carries the byte offset of the line's
/// text.
fn line_finding(issue: &crate::Issue, line: &str, text: &str, nth: usize) -> Finding {
    let mut finding = Finding::from_issue(issue);
    finding.column = Some(line.len() - line.trim_start().len());
    finding.shape = repeated_text(Some(text), nth);
    finding
}

/// The finding of a long line that does not parse; `column` carries the byte offset
/// of the error.
fn line_syntax_error(e: &text::ParseError, line: &str) -> Finding {
    let mut finding = Finding::new("hlo_syntax", Severity::Error, e.message());
    finding.column = Some(e.span().start.min(line.len()));
    finding
}

/// The issues of a program shape's shapes checked one at a time, a part (parameter or
/// result) after another: each part is a tuple of its own, at `parameters[i]` or
/// `result`, checked as [`TupleIssues::each_in`] checks it.
#[derive(Default)]
struct ProgramIssues {
    part: Option<text::ProgramPart>,
    tuple: TupleIssues,
}

impl ProgramIssues {
    /// Hands `each` the issues of the shape at `path` in `part`, as the whole program
    /// shape's, as they are found.
    fn leaf(
        &mut self,
        part: text::ProgramPart,
        path: &[usize],
        shape: &crate::proto::ShapeProto,
        gate: GateOptions,
        each: &mut dyn FnMut(crate::Issue),
    ) {
        if self.part != Some(part) {
            *self = Self {
                part: Some(part),
                tuple: TupleIssues::default(),
            };
        }
        let base = match part {
            text::ProgramPart::Parameter(i) => {
                crate::path::Path::root().field("parameters").index(i)
            }
            text::ProgramPart::Result => crate::path::Path::root().field("result"),
        };
        self.tuple.each_in(&base, path, shape, gate, each);
    }

    /// The findings of the shape at `path` in `part`, read from bytes or JSON (proto
    /// rules), each with the shape's text: a parameter's added to `findings`, the
    /// result's to `result` (the whole check gives them after every parameter's, and
    /// binary input may hold the result first).
    fn proto_leaf(
        &mut self,
        part: text::ProgramPart,
        path: &[usize],
        shape: crate::proto::ShapeProto,
        options: &Options,
        (findings, result): (&mut Findings, &mut Findings),
    ) {
        let to = match part {
            text::ProgramPart::Result => result,
            text::ProgramPart::Parameter(_) => findings,
        };
        let mut texted = Texted::new(|| options.hlo_style.print_shape(&shape).ok());
        self.leaf(part, path, &shape, GateOptions::proto(), &mut |issue| {
            to.push(texted.finding(&issue));
        });
    }
}

/// [`check_long_shape_line`] for a program shape: each parameter and the result is
/// checked on its own, opened into its tuples, with the findings of the whole program
/// shape at `parameters[i]...` and `result...` (text gives every parameter a name, so
/// the count of names is never at fault). Returns the number of shapes it counts
/// (parameters and result) as the whole check does, or the line's syntax error.
fn check_long_program_line(
    line: &str,
    found: &mut dyn FnMut(Finding),
) -> Result<usize, Box<Finding>> {
    let mut program = ProgramIssues::default();
    let result = text::parse_program_shape_leaves(
        line,
        text::ParseOptions::default(),
        &mut |part, path, span, shape| {
            let shape_text = line.get(span).unwrap_or_default();
            let mut nth = 0;
            program.leaf(part, path, &shape, GateOptions::hlo_text(), &mut |issue| {
                found(line_finding(&issue, line, shape_text, nth));
                nth += 1;
            });
        },
    );
    match result {
        Ok(parameters) => Ok(parameters + 1),
        Err(e) => Err(Box::new(line_syntax_error(&e, line))),
    }
}

/// The kind of message on one line of HLO text, without `--message`: a layout starts
/// with `{`; a program shape starts with `(` and has an `->` (shape text never has
/// one); anything else is a shape.
pub(crate) fn line_kind(line: &str) -> MessageKind {
    if line.starts_with('{') {
        MessageKind::Layout
    } else if line.starts_with('(') && line.contains("->") {
        MessageKind::ProgramShape
    } else {
        MessageKind::Shape
    }
}

fn check_module_text(name: &str, bytes: &[u8], _options: &Options) -> FileReport {
    scan_text_report(name, bytes)
}

fn scan_text_report<R: BufRead>(name: &str, reader: R) -> FileReport {
    let form = Some(Form::HloModule);
    let mut report = FileReport::new(name, form);
    let mut findings = Findings::new();
    let result = module::scan_text_validated(reader, &mut |f| findings.push(f));
    match result {
        Err(e) => FileReport::unreadable(name, form, "io_error", e.to_string()),
        Ok(summary) if summary.structures == 0 => FileReport::unreadable(
            name,
            form,
            "not_a_module",
            "not an HLO module: no HloModule header, computation or instruction found",
        ),
        Ok(summary) if summary.shapes == 0 && findings.is_empty() => {
            FileReport::unreadable(name, form, "no_shapes", "no shape in the module")
        }
        Ok(summary) => {
            report.shapes = summary.shapes;
            report.findings = findings;
            report
        }
    }
}

fn check_module_proto(name: &str, bytes: &[u8], options: &Options) -> FileReport {
    check_module_proto_from(name, bytes, options, module::LONG_SHAPE)
}

/// The check of a module proto whose shapes and program shapes of `long_at` bytes or
/// more are read a shape at a time where they can be (64 KiB or more in
/// [`check_bytes`]), so that tests can compare those reads with the whole ones on small
/// modules.
#[doc(hidden)]
pub fn check_module_proto_from(
    name: &str,
    bytes: &[u8],
    options: &Options,
    long_at: usize,
) -> FileReport {
    let form = Some(Form::HloModuleProto);
    if bytes.is_empty() {
        return FileReport::unreadable(name, form, "empty_input", "the input is empty");
    }
    let wrapper = match module::probe_proto(bytes) {
        Ok((_, root)) => match root.to_string().as_str() {
            "" => "xla.HloModuleProto",
            "hlo_module" => "xla.HloProto",
            _ => "xla.HloSnapshot",
        },
        Err(reason) => {
            return FileReport::unreadable(
                name,
                form,
                "not_a_module",
                format!(
                    "not an HloModuleProto, HloProto or HloSnapshot ({reason}); it looks like {}",
                    describe(bytes)
                ),
            )
        }
    };
    let mut report = FileReport::new(name, form);
    report.message = Some(wrapper);
    let mut findings = Findings::new();
    let mut collect = |f| findings.push(f);
    // A long shape that is no plain tuple with no unknown field (a tuple with fields
    // of its own, unknown fields in it) is checked a shape at a time, as a binary
    // shape file is; so is a long program shape with unknown fields or a result given
    // more than once.
    let mut long = |kind, message: &[u8], found: &mut dyn FnMut(Finding)| match kind {
        MessageKind::Shape => {
            let Streamed::Tuple(tuple) = check_binary_tuple("", message, options) else {
                return module::LongChecked::Declined;
            };
            hand_on(tuple.findings, found);
            module::LongChecked::Checked(1)
        }
        MessageKind::ProgramShape => check_module_program(message, options, found),
        MessageKind::Layout => module::LongChecked::Declined,
    };
    let scan = module::scan_proto_validated_from(
        bytes,
        &mut collect,
        options.hlo_style,
        &mut long,
        long_at,
    );
    match scan {
        Ok(summary) if summary.shapes == 0 => {
            FileReport::unreadable(name, form, "no_shapes", "no shape in the module")
        }
        Ok(summary) => {
            report.shapes = summary.shapes;
            report.findings = findings;
            report
        }
        Err(e) => FileReport::unreadable(name, form, "decode_error", e.to_string()),
    }
}

/// Which files a directory walk picks.
#[derive(Clone, Debug)]
pub struct Walk {
    include: globset::GlobSet,
    exclude: globset::GlobSet,
}

/// The files a directory walk picks by default: what `--xla_dump_to` and common tools
/// write for HLO.
pub const DEFAULT_INCLUDE: &[&str] = &["*.txt", "*.hlo", "*.pb", "*.binpb", "*.json"];

/// Files a directory walk leaves out by default: the reports `--xla_dump_to` writes
/// beside modules, which hold no module (buffer assignment, live ranges, memory usage,
/// thunk sequences, compile options, topology).
pub const DEFAULT_EXCLUDE: &[&str] = &[
    "*buffer-assignment*",
    "*live-range*",
    "*memory-usage-report*",
    "*thunk_sequence*",
    "compile_options.pb",
    "topology.pb",
];

impl Walk {
    /// `include` replaces [`DEFAULT_INCLUDE`] when not empty; `exclude` adds to
    /// [`DEFAULT_EXCLUDE`]. A glob without `/` matches file names, one with `/` the
    /// path below the walked directory.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, String> {
        let build = |patterns: &mut dyn Iterator<Item = &str>| {
            let mut set = globset::GlobSetBuilder::new();
            for pattern in patterns {
                let glob = globset::GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("bad glob '{pattern}': {e}"))?;
                set.add(glob);
            }
            set.build().map_err(|e| e.to_string())
        };
        let include = if include.is_empty() {
            build(&mut DEFAULT_INCLUDE.iter().copied())?
        } else {
            build(&mut include.iter().map(String::as_str))?
        };
        let exclude = build(
            &mut DEFAULT_EXCLUDE
                .iter()
                .copied()
                .chain(exclude.iter().map(String::as_str)),
        )?;
        Ok(Walk { include, exclude })
    }

    /// Whether the walk picks the file at `relative` (below the walked directory).
    fn picks(&self, relative: &Path) -> bool {
        // Each form made once for both sets (a candidate normalizes its path).
        let path = globset::Candidate::new(relative);
        let name = relative.file_name().map(globset::Candidate::new);
        let matches = |set: &globset::GlobSet| {
            set.is_match_candidate(&path)
                || name.as_ref().is_some_and(|n| set.is_match_candidate(n))
        };
        matches(&self.include) && !matches(&self.exclude)
    }

    /// Every file below `dir` the walk picks, in sorted order (by path, directories
    /// walked depth first): [`Walk::stream`] collected, up to its first error.
    /// Symbolic links to directories are not followed; named pipes, sockets and
    /// devices, and links to them, are left out. Directories are listed one after the
    /// other, whatever their depth (listed side by side, one stack frame a level, a
    /// tree 1,900 directories deep overflowed a worker thread's stack).
    pub fn files(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        self.stream(dir)
            .map(|found| found.map_err(|(_, e)| e))
            .collect()
    }

    /// The files of [`Walk::files`], in the same order, found as they are asked for:
    /// only the listings of the directories open on the way down are kept (a
    /// directory's names, sorted: past a MiB, in runs in a temporary file, merged as
    /// they are walked), not every path of the tree (some 270 bytes a file held until
    /// the walk ended: 60 MB for 200,000 files). A directory that cannot be listed
    /// (or whose sorted names do not read back) is an error in its place (its path and
    /// why), and the walk goes on past it.
    pub fn stream(&self, dir: &Path) -> WalkFiles<'_> {
        WalkFiles {
            walk: self,
            root: Some(dir.to_path_buf()),
            open: Vec::new(),
        }
    }

    /// The files a path names as they are found: a directory's as [`Walk::stream`]
    /// finds them, a file itself; a path that cannot be read, or a directory below it
    /// that cannot be listed, is an error in its place (its path and why). A directory
    /// the walk finds nothing in is an error too ([`NOTHING_PICKED`]): a gate named a
    /// directory to check, and a dump that went elsewhere, or an `--include` that
    /// picks none of its files, would otherwise pass with nothing checked.
    pub fn stream_path<'w>(
        &'w self,
        path: &Path,
    ) -> Box<dyn Iterator<Item = Result<PathBuf, (PathBuf, std::io::Error)>> + Send + 'w> {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let mut found = self.stream(path).peekable();
                let empty = found.peek().is_none();
                let nothing = empty.then(|| {
                    let e = std::io::Error::new(std::io::ErrorKind::NotFound, NOTHING_PICKED);
                    Err((path.to_path_buf(), e))
                });
                Box::new(found.chain(nothing))
            }
            Ok(_) => Box::new(std::iter::once(Ok(path.to_path_buf()))),
            Err(e) => Box::new(std::iter::once(Err((path.to_path_buf(), e)))),
        }
    }
}

/// Why a directory [`Walk::stream_path`] finds no file in is an error.
pub const NOTHING_PICKED: &str =
    "no file to read: the directory holds no file the walk picks (see --include and --exclude)";

/// A directory's entries as the directory listing gives them, unsorted (each type from
/// the listing where the file system gives it, without a `stat` a file): its
/// directories and the files a walk may read. Named pipes, sockets and devices are left
/// out (opened, a pipe waits for a writer that never comes, so a walk of a directory
/// that held one never ended), and so are links to them and to directories; a link to
/// a file is that file, and a link to nothing stays in, to be reported where it is
/// read.
fn entries_of(dir: &Path) -> std::io::Result<impl Iterator<Item = std::io::Result<Entry>>> {
    let entry = |entry: std::io::Result<std::fs::DirEntry>| {
        let entry = entry?;
        let kind = entry.file_type()?;
        let walked = if kind.is_dir() {
            Some(true)
        } else if kind.is_file() {
            Some(false)
        } else if kind.is_symlink() {
            match std::fs::metadata(entry.path()) {
                Ok(target) => target.is_file().then_some(false),
                Err(_) => Some(false),
            }
        } else {
            None
        };
        Ok(walked.map(|is_dir| Entry(entry.file_name(), is_dir)))
    };
    Ok(std::fs::read_dir(dir)?
        .map(entry)
        .filter_map(Result::transpose))
}

/// The files of a walk as they are found ([`Walk::stream`]).
#[derive(Debug)]
pub struct WalkFiles<'w> {
    walk: &'w Walk,
    /// The walked directory, until it is listed.
    root: Option<PathBuf>,
    /// The directories open, outermost first.
    open: Vec<OpenDir>,
}

/// A directory open in a walk: its path, its path below the walked directory, and the
/// entries not yet walked.
struct OpenDir {
    path: PathBuf,
    relative: PathBuf,
    entries: crate::spool::Merged<Entry>,
}

impl std::fmt::Debug for OpenDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenDir")
            .field("path", &self.path)
            .field("relative", &self.relative)
            .finish_non_exhaustive()
    }
}

/// A directory's entry: its name, and whether it is a directory (its own type, not a
/// link's target); sorted by name.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry(std::ffi::OsString, bool);

impl crate::spool::Sortable for Entry {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.1));
        out.extend_from_slice(&crate::spool::os_bytes(&self.0));
    }

    fn take(bytes: &[u8]) -> Option<Self> {
        let (&is_dir, name) = bytes.split_first()?;
        Some(Entry(crate::spool::os_string(name.to_vec()), is_dir != 0))
    }

    fn held_size(&self) -> usize {
        self.0.capacity()
    }
}

/// A directory's entries as [`entries_of`] gives them, sorted by name (within one
/// directory, the order of the whole paths) through a
/// [`Sorter`](crate::spool::Sorter): a directory of many files is sorted in temporary
/// files, not held (some 60 bytes a name).
fn sorted_listing_of(dir: &Path) -> std::io::Result<crate::spool::Merged<Entry>> {
    let mut sorter = crate::spool::Sorter::default();
    for entry in entries_of(dir)? {
        sorter.push(entry?);
    }
    sorter.sorted()
}

impl Iterator for WalkFiles<'_> {
    /// A file the walk picks, or a directory that cannot be listed: its path and why.
    type Item = Result<PathBuf, (PathBuf, std::io::Error)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(root) = self.root.take() {
            match sorted_listing_of(&root) {
                Ok(entries) => self.open.push(OpenDir {
                    path: root,
                    relative: PathBuf::new(),
                    entries,
                }),
                Err(e) => return Some(Err((root, e))),
            }
        }
        loop {
            let top = self.open.last_mut()?;
            let Entry(name, is_dir) = match top.entries.next_record() {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    self.open.pop();
                    continue;
                }
                // Its entries' sorted runs did not read back: the directory is not
                // walked on.
                Err(e) => {
                    let path = top.path.clone();
                    self.open.pop();
                    return Some(Err((path, e)));
                }
            };
            let (path, below) = (top.path.join(&name), top.relative.join(&name));
            if !is_dir {
                if self.walk.picks(&below) {
                    return Some(Ok(path));
                }
                continue;
            }
            match sorted_listing_of(&path) {
                Ok(entries) => self.open.push(OpenDir {
                    path,
                    relative: below,
                    entries,
                }),
                Err(e) => return Some(Err((path, e))),
            }
        }
    }
}

/// One input of a run: a file, or standard input's bytes.
#[derive(Clone, Debug)]
pub enum Input {
    /// A file, with the name to report it under.
    File(PathBuf),
    /// Bytes already read, with their name.
    Bytes(String, Vec<u8>),
    /// Standard input (`<stdin>`), read as it is checked ([`check_stream`]).
    Stdin,
    /// A path that could not be walked or does not exist, with the reason.
    Missing(String, String),
}

/// [`expand`], on a pool of `jobs` threads (0: the current one), as [`check_all`]
/// checks; the walk itself lists directories one after the other.
pub fn expand_on(paths: &[PathBuf], walk: &Walk, jobs: usize) -> Vec<Input> {
    match crate::threads::pool(jobs) {
        Some(pool) => pool.install(|| expand(paths, walk)),
        None => expand(paths, walk),
    }
}

/// Expands paths (directories walked with `walk`) into inputs, in order; a directory
/// the walk finds no file in is an [`Input::Missing`] saying so ([`NOTHING_PICKED`]).
pub fn expand(paths: &[PathBuf], walk: &Walk) -> Vec<Input> {
    let mut inputs = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => match walk.files(path) {
                // A directory of no file to read is an input that cannot be read, as
                // [`Walk::stream_path`] gives it.
                Ok(files) if files.is_empty() => inputs.push(Input::Missing(
                    path.display().to_string(),
                    NOTHING_PICKED.to_string(),
                )),
                Ok(files) => inputs.extend(files.into_iter().map(Input::File)),
                Err(e) => inputs.push(Input::Missing(path.display().to_string(), e.to_string())),
            },
            Ok(_) => inputs.push(Input::File(path.clone())),
            Err(e) => inputs.push(Input::Missing(path.display().to_string(), e.to_string())),
        }
    }
    inputs
}

/// [`expand`] as the inputs are asked for: each directory walked as its files are
/// checked ([`Walk::stream`]), so that a walk of any number of files holds only the
/// listings of the directories open on the way down. The inputs and their order are
/// [`expand`]'s; a directory below a path that cannot be listed is an input of its
/// own that cannot be read (its path and why), where [`expand`] makes the whole path
/// one, and the walk goes on past it.
pub fn expand_iter<'w>(
    paths: &'w [PathBuf],
    walk: &'w Walk,
) -> impl Iterator<Item = Input> + Send + 'w {
    paths.iter().flat_map(move |path| {
        walk.stream_path(path).map(|found| match found {
            Ok(file) => Input::File(file),
            Err((path, e)) => Input::Missing(path.display().to_string(), e.to_string()),
        })
    })
}

/// Checks one input.
pub fn check_input(input: &Input, options: &Options) -> FileReport {
    match input {
        Input::File(path) => check_path(path, &path.display().to_string(), options),
        Input::Bytes(name, bytes) => check_bytes(name, bytes, options),
        Input::Stdin => check_stream("<stdin>", std::io::stdin().lock(), options),
        Input::Missing(name, reason) => {
            FileReport::unreadable(name.clone(), options.from, "io_error", reason.clone())
        }
    }
}

/// Checks every input on `jobs` threads (0: every core); reports come back in input
/// order whatever order the threads finish in.
pub fn check_all(inputs: &[Input], options: &Options, jobs: usize) -> Document {
    let mut files = Vec::with_capacity(inputs.len());
    let collected: Result<(), std::convert::Infallible> =
        check_each(inputs, options, jobs, |file| {
            files.push(file);
            Ok(())
        });
    match collected {
        Ok(()) => {}
        Err(never) => match never {},
    }
    Document {
        files,
        strict: false,
    }
}

/// [`check_each`] over inputs found as they are asked for ([`expand_iter`]): the next
/// few are found while those before them are checked, so that a directory walk of any
/// number of files costs the memory of a few and runs beside the checking.
///
/// # Errors
/// The first error of `each`, after which no more inputs are checked.
pub fn check_each_of<E, I>(
    inputs: impl Iterator<Item = I> + Send,
    options: &Options,
    jobs: usize,
    mut each: impl FnMut(FileReport) -> Result<(), E>,
) -> Result<(), E>
where
    I: std::borrow::Borrow<Input> + Send + Sync,
{
    use rayon::prelude::*;
    let pool = crate::threads::pool(jobs);
    let threads = pool
        .as_ref()
        .map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let size = threads.max(1) * 8;
    let mut inputs = inputs;
    let mut chunk: Vec<I> = inputs.by_ref().take(size).collect();
    while !chunk.is_empty() {
        let mut work = || {
            rayon::join(
                || {
                    chunk
                        .par_iter()
                        .map(|input| check_input(input.borrow(), options))
                        .collect::<Vec<FileReport>>()
                },
                || inputs.by_ref().take(size).collect::<Vec<I>>(),
            )
        };
        let (reports, next) = match &pool {
            Some(pool) => pool.install(work),
            None => work(),
        };
        for report in reports {
            each(report)?;
        }
        chunk = next;
    }
    Ok(())
}

/// Checks every input on `jobs` threads (0: every core), handing each report to
/// `each` in input order as soon as it and those before it are done. A few reports
/// per thread are held at a time (and each holds at most
/// [`crate::report::findings::HELD`] findings in memory), so that a run over any number
/// of inputs is written as it goes in a fixed amount of memory.
///
/// # Errors
/// The first error of `each`, after which no more inputs are checked.
pub fn check_each<E>(
    inputs: &[Input],
    options: &Options,
    jobs: usize,
    each: impl FnMut(FileReport) -> Result<(), E>,
) -> Result<(), E> {
    check_each_of(inputs.iter(), options, jobs, each)
}

#[cfg(test)]
mod tests {
    use super::Walk;

    /// A walk found as its files are asked for gives the whole walk's files in its
    /// order, each directory's names sorted through the sorter's runs (tiny in the
    /// crate's tests: a few names a run, merged in several passes).
    #[test]
    fn a_walk_streamed_through_sorted_runs_is_the_whole_walk() {
        let dir = tempfile::tempdir().unwrap();
        let mut draw = crate::guard::draws(5);
        for sub in ["", "b", "a", "a/z", "c"] {
            if !sub.is_empty() {
                std::fs::create_dir(dir.path().join(sub)).unwrap();
            }
            for _ in 0..60 {
                let name = format!("{}.hlo", draw(100_000));
                std::fs::write(dir.path().join(sub).join(name), "f32[8]{0}\n").unwrap();
            }
            std::fs::write(dir.path().join(sub).join("skip.md"), "").unwrap();
        }
        let walk = Walk::new(&[], &[]).unwrap();
        let whole = walk.files(dir.path()).unwrap();
        let streamed: Vec<_> = walk.stream(dir.path()).map(Result::unwrap).collect();
        assert!(whole.len() > 250, "{}", whole.len());
        assert_eq!(streamed, whole);
    }

    /// A directory the walk finds no file in is an input that cannot be read, in its
    /// place, whether the paths are expanded whole or as they are walked.
    #[test]
    fn a_directory_of_no_file_to_read_is_an_input_that_cannot_be_read() {
        use super::{expand, expand_iter, Input, NOTHING_PICKED};
        let dir = tempfile::tempdir().unwrap();
        let (empty, notes, files) = (
            dir.path().join("empty"),
            dir.path().join("notes"),
            dir.path().join("files"),
        );
        for d in [&empty, &notes, &files] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(notes.join("README.md"), "").unwrap();
        std::fs::write(files.join("a.txt"), "f32[2]{0}\n").unwrap();
        let walk = Walk::new(&[], &[]).unwrap();
        let paths = [empty.clone(), files.clone(), notes.clone()];
        let said = |input: &Input| match input {
            Input::File(path) => format!("file {}", path.display()),
            Input::Missing(name, why) => format!("missing {name}: {why}"),
            _ => "other".to_string(),
        };
        let whole: Vec<String> = expand(&paths, &walk).iter().map(said).collect();
        let walked: Vec<String> = expand_iter(&paths, &walk).map(|i| said(&i)).collect();
        let expected = [
            format!("missing {}: {NOTHING_PICKED}", empty.display()),
            format!("file {}", files.join("a.txt").display()),
            format!("missing {}: {NOTHING_PICKED}", notes.display()),
        ];
        assert_eq!(whole, expected);
        assert_eq!(walked, expected);
    }

    /// A walk reads files and links to files: a named pipe (which, opened, waits for a
    /// writer: `validate DIR` never ended), a socket, and links to them or to a
    /// directory are left out; a link to nothing stays, to be reported where it is read.
    /// A tree as deep as paths allow is walked without a stack frame a level.
    #[test]
    fn a_deep_tree_is_walked() {
        let dir = tempfile::tempdir().unwrap();
        let mut path = dir.path().to_path_buf();
        for _ in 0..1900 {
            path.push("d");
        }
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("x.txt"), "f32[2]{0}\n").unwrap();
        let walk = Walk::new(&[], &[]).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(
            pool.install(|| walk.files(dir.path())).unwrap(),
            [path.join("x.txt")]
        );
        let inputs = super::expand_on(&[dir.path().to_path_buf()], &walk, 2);
        assert!(matches!(inputs.as_slice(), [super::Input::File(f)] if *f == path.join("x.txt")));
    }

    #[cfg(unix)]
    #[test]
    fn a_walk_leaves_out_pipes_sockets_and_links_to_them() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("a.txt"), "f32[8]{0}\n").unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(at("socket.txt")).unwrap();
        let piped = std::process::Command::new("mkfifo")
            .arg(at("pipe.txt"))
            .status()
            .is_ok_and(|s| s.success());
        symlink("a.txt", at("link.txt")).unwrap();
        symlink("pipe.txt", at("link-to-pipe.txt")).unwrap();
        symlink("socket.txt", at("link-to-socket.txt")).unwrap();
        symlink(".", at("link-to-dir.txt")).unwrap();
        symlink("nowhere", at("dangling.txt")).unwrap();
        let walk = Walk::new(&[], &[]).unwrap();
        let names = |files: Vec<std::path::PathBuf>| -> Vec<String> {
            files
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        let expected = ["a.txt", "dangling.txt", "link.txt"];
        assert_eq!(names(walk.files(dir.path()).unwrap()), expected);
        let streamed = walk.stream(dir.path()).map(Result::unwrap).collect();
        assert_eq!(names(streamed), expected);
        assert!(piped || !at("pipe.txt").exists());
    }
}
