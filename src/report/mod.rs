//! The report of a validation run: one model, four renderers.
//!
//! [`Document`] holds what was checked, file by file ([`FileReport`]), each with the
//! [`Finding`]s made in it. Every finding has a stable [`code`](Finding::code) (one
//! per kind of problem, listed with its meaning in [`codes`]), a [`Severity`], a
//! message, and where it is known: the line and column (text inputs), the proto
//! `path` inside the shape (`tuple_shapes[1].layout.minor_to_major`), and the
//! `instruction` and `computation` it belongs to (whole modules).
//!
//! The same document renders as
//! - [`Format::Text`]: one line per finding, `FILE:LINE:COLUMN: error[CODE]: PATH: message`
//!   (see [`text`]);
//! - [`Format::Json`]: one versioned JSON document ([`json::SCHEMA_VERSION`]);
//! - [`Format::Github`]: GitHub Actions workflow commands (`::error file=...`);
//! - [`Format::Sarif`]: SARIF 2.1.0, as GitHub code scanning reads it.
//!
//! `docs/report.md` documents the JSON schema, every code and the exit codes.

use std::io::{self, Write};

use crate::error::{Issue, Severity};

pub mod codes;
pub mod findings;
pub mod github;
pub mod json;
pub mod sarif;
pub mod text;

pub use codes::{CodeInfo, CODES};
pub use findings::Findings;

/// Exit status when every input was checked and nothing failed.
pub const EXIT_OK: u8 = 0;
/// Exit status when some input is invalid (or has warnings, under `--strict`).
pub const EXIT_INVALID: u8 = 1;
/// Exit status when some input cannot be read or decoded at all, or the command line
/// is wrong. It wins over [`EXIT_INVALID`].
pub const EXIT_UNREADABLE: u8 = 2;

/// One problem found in an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The stable identifier of the kind of problem (see [`codes`]).
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in words (without the path).
    pub message: String,
    /// The proto path inside the message, e.g. `tuple_shapes[1].layout.minor_to_major`;
    /// for a module proto, from the module's root
    /// (`computations[1].instructions[4].shape.layout`). Empty for the message itself.
    pub path: String,
    /// 1-based line (text inputs).
    pub line: Option<usize>,
    /// 1-based column, in characters (text inputs).
    pub column: Option<usize>,
    /// The instruction the shape belongs to (whole modules).
    pub instruction: Option<String>,
    /// The computation the shape belongs to (whole modules).
    pub computation: Option<String>,
    /// The shape as written (text inputs), when it parsed.
    pub shape: Option<String>,
}

impl Finding {
    /// A finding with a code, severity and message, and nothing known of where.
    pub fn new(code: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            code,
            severity,
            message: message.into(),
            path: String::new(),
            line: None,
            column: None,
            instruction: None,
            computation: None,
            shape: None,
        }
    }

    /// A finding from a validation issue: its code, severity, message and path.
    pub fn from_issue(issue: &Issue) -> Self {
        let mut finding = Finding::new(
            issue.kind().code(),
            issue.severity(),
            issue.kind().to_string(),
        );
        finding.path = issue.path().to_string();
        finding
    }

    /// The same finding at a line and column.
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// `PATH: message`, or the message alone when there is no path.
    pub fn path_and_message(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }

    /// ` (instruction X, computation Y)`, or what of it is known, or nothing.
    pub fn context(&self) -> String {
        match (&self.instruction, &self.computation) {
            (Some(i), Some(c)) => format!(" (instruction {i}, computation {c})"),
            (Some(i), None) => format!(" (instruction {i})"),
            (None, Some(c)) => format!(" (computation {c})"),
            (None, None) => String::new(),
        }
    }
}

/// The form an input was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// One serialized message (`ShapeProto`, `LayoutProto` or `ProgramShapeProto`).
    Binary,
    /// One message in the proto3 JSON mapping.
    Json,
    /// HLO text, one shape (layout, program shape) per line.
    Hlo,
    /// A whole HLO module in text form.
    HloModule,
    /// A serialized `HloModuleProto` (or an `HloProto` or `HloSnapshot` around one).
    HloModuleProto,
}

impl Form {
    /// The name used on the command line and in reports (`hlo-module`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Form::Binary => "binary",
            Form::Json => "json",
            Form::Hlo => "hlo",
            Form::HloModule => "hlo-module",
            Form::HloModuleProto => "hlo-module-proto",
        }
    }
}

/// Why an input could not be checked at all (exit status 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// The stable identifier of the reason (see [`codes`]).
    pub code: &'static str,
    /// The reason, in words.
    pub message: String,
}

/// What checking one input gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    /// The input's name: its path as given (or found in a directory), or `<stdin>`.
    pub path: String,
    /// The form it was read in; `None` when that could not be decided.
    pub form: Option<Form>,
    /// The protobuf message it held, when it is one message or a module proto
    /// (`xla.ShapeProto`, `xla.LayoutProto`, `xla.ProgramShapeProto`,
    /// `xla.HloModuleProto`, `xla.HloProto`, `xla.HloSnapshot`); `None` for module
    /// text and for text with several kinds of message.
    pub message: Option<&'static str>,
    /// Shapes checked (a program shape counts its parameters and result; a layout
    /// counts as one).
    pub shapes: usize,
    /// What was found, in input order (past [`findings::HELD`] of them, in a
    /// temporary file).
    pub findings: Findings,
    /// Set when the input could not be checked at all.
    pub unreadable: Option<Unreadable>,
}

/// The outcome of one input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Checked, and nothing failed.
    Valid,
    /// Checked, with errors (or warnings, under `--strict`).
    Invalid,
    /// Not checked: it could not be read or decoded.
    Unreadable,
}

impl Status {
    /// `valid`, `invalid` or `unreadable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::Invalid => "invalid",
            Status::Unreadable => "unreadable",
        }
    }
}

impl FileReport {
    /// A report for `path`, nothing found yet.
    pub fn new(path: impl Into<String>, form: Option<Form>) -> Self {
        FileReport {
            path: path.into(),
            form,
            message: None,
            shapes: 0,
            findings: Findings::new(),
            unreadable: None,
        }
    }

    /// A report for an input that could not be checked.
    pub fn unreadable(
        path: impl Into<String>,
        form: Option<Form>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        let mut report = FileReport::new(path, form);
        report.unreadable = Some(Unreadable {
            code,
            message: message.into(),
        });
        report
    }

    /// Errors found.
    pub fn errors(&self) -> usize {
        self.findings.errors()
    }

    /// Warnings found.
    pub fn warnings(&self) -> usize {
        self.findings.warnings()
    }

    /// The outcome: unreadable, invalid (errors, or warnings when `strict`), or valid.
    pub fn status(&self, strict: bool) -> Status {
        if self.unreadable.is_some() {
            Status::Unreadable
        } else if self.errors() > 0 || (strict && self.warnings() > 0) {
            Status::Invalid
        } else {
            Status::Valid
        }
    }

    /// Drops the findings whose code is in `allowed`.
    pub fn allow(&mut self, allowed: &[String]) {
        if !allowed.is_empty() && !self.findings.is_empty() {
            self.findings = self
                .findings
                .filtered(|f| !allowed.iter().any(|a| a == f.code));
        }
    }
}

/// Counts over a whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Inputs checked or attempted.
    pub files: usize,
    /// Shapes checked.
    pub shapes: usize,
    /// Errors found.
    pub errors: usize,
    /// Warnings found.
    pub warnings: usize,
    /// Inputs that could not be read or decoded.
    pub unreadable: usize,
    /// Inputs that failed (invalid, under the run's strictness).
    pub invalid: usize,
}

impl Summary {
    /// Counts one more input, checked under `strict` or not.
    pub fn add(&mut self, file: &FileReport, strict: bool) {
        self.files += 1;
        self.shapes += file.shapes;
        self.errors += file.errors();
        self.warnings += file.warnings();
        match file.status(strict) {
            Status::Unreadable => self.unreadable += 1,
            Status::Invalid => self.invalid += 1,
            Status::Valid => {}
        }
    }

    /// The exit status the run maps to: 2 if some input is unreadable, else 1 if some
    /// input failed, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.unreadable > 0 {
            EXIT_UNREADABLE
        } else if self.invalid > 0 {
            EXIT_INVALID
        } else {
            EXIT_OK
        }
    }
}

impl std::fmt::Display for Summary {
    /// `checked 3 files, 1,234 shapes: 2 errors, 1 warning` (and `, 1 unreadable`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checked {}, {}: {}, {}",
            counted(self.files, "file", "files"),
            counted(self.shapes, "shape", "shapes"),
            counted(self.errors, "error", "errors"),
            counted(self.warnings, "warning", "warnings"),
        )?;
        if self.unreadable > 0 {
            write!(f, ", {} unreadable", grouped(self.unreadable))?;
        }
        Ok(())
    }
}

/// `1 file`, `1,234 shapes`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// A number with `,` between groups of three digits.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A whole run: every input's report, in input order, and how strict the run was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// The inputs, in the order they were given (directories walked in sorted order).
    pub files: Vec<FileReport>,
    /// Whether warnings fail an input (`--strict`).
    pub strict: bool,
}

impl Document {
    /// The counts over every input.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for file in &self.files {
            summary.add(file, self.strict);
        }
        summary
    }
}

/// How a report is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One line per finding (see [`text`]).
    Text,
    /// One JSON document (see [`json`]).
    Json,
    /// GitHub Actions workflow commands
    /// (<https://docs.github.com/actions/reference/workflow-commands-for-github-actions>).
    Github,
    /// SARIF 2.1.0 (<https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html>).
    Sarif,
}

/// Writes the report of `document` in `format`. Text writes the unreadable inputs'
/// reasons to `errors` (standard error on the command line); the other formats carry
/// them in the document itself.
pub fn render(
    format: Format,
    document: &Document,
    out: &mut dyn Write,
    errors: &mut dyn Write,
) -> io::Result<()> {
    let mut writer = Writer::new(format, document.strict, out, errors);
    for file in &document.files {
        writer.file(file)?;
    }
    writer.finish().map(drop)
}

/// Writes a report an input at a time, as each is checked: the same bytes as
/// [`render`] of the document that holds the same reports, with only one input's
/// report in memory at a time.
pub struct Writer<'a> {
    format: Format,
    strict: bool,
    out: &'a mut dyn Write,
    errors: &'a mut dyn Write,
    summary: Summary,
    started: bool,
    /// Entries written so far in the array the document streams (JSON's files,
    /// SARIF's results).
    items: usize,
    /// SARIF's invocation, written at the end.
    invocation: sarif::Invocation,
}

impl std::fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("format", &self.format)
            .field("strict", &self.strict)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl<'a> Writer<'a> {
    /// A report in `format`, for a run that is `strict` or not. Text writes the
    /// unreadable inputs' reasons to `errors`; nothing is written before the first
    /// input or [`finish`](Writer::finish).
    pub fn new(
        format: Format,
        strict: bool,
        out: &'a mut dyn Write,
        errors: &'a mut dyn Write,
    ) -> Self {
        Writer {
            format,
            strict,
            out,
            errors,
            summary: Summary::default(),
            started: false,
            items: 0,
            invocation: sarif::Invocation::default(),
        }
    }

    fn start(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            match self.format {
                Format::Json => json::start(self.out)?,
                Format::Sarif => sarif::start(self.out)?,
                Format::Text | Format::Github => {}
            }
        }
        Ok(())
    }

    /// Writes the report of the next input.
    ///
    /// # Errors
    /// Writing fails, or findings kept in a temporary file cannot be read back.
    pub fn file(&mut self, file: &FileReport) -> io::Result<()> {
        self.start()?;
        match self.format {
            Format::Text => text::file(file, self.out, self.errors)?,
            Format::Json => json::file(file, self.strict, &mut self.items, self.out)?,
            Format::Github => github::file(file, self.out)?,
            Format::Sarif => {
                sarif::file(file, &mut self.items, self.out)?;
                self.invocation.file(file)?;
            }
        }
        self.summary.add(file, self.strict);
        Ok(())
    }

    /// The counts so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Ends the report, and gives the counts over every input.
    ///
    /// # Errors
    /// Writing fails.
    pub fn finish(mut self) -> io::Result<Summary> {
        self.start()?;
        match self.format {
            Format::Json => json::end(self.summary, self.items, self.out)?,
            Format::Sarif => {
                let invocation = std::mem::take(&mut self.invocation);
                sarif::end(self.items, invocation, self.summary.exit_code(), self.out)?
            }
            Format::Text | Format::Github => {}
        }
        Ok(self.summary)
    }
}

/// A writer that puts `indent` after every newline, so that a value pretty-printed on
/// its own lines up where it stands inside a larger document (JSON strings never hold
/// a raw newline).
pub(crate) struct Indented<'a> {
    out: &'a mut dyn Write,
    indent: &'static str,
}

impl<'a> Indented<'a> {
    pub(crate) fn new(out: &'a mut dyn Write, indent: &'static str) -> Self {
        Indented { out, indent }
    }
}

impl Write for Indented<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.out.write_all(&rest[..=i])?;
            self.out.write_all(self.indent.as_bytes())?;
            rest = &rest[i + 1..];
        }
        self.out.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Starts the next item of a pretty-printed JSON array written an item at a time
/// (`written` items before it): a comma after those, a newline, the item's `indent`.
pub(crate) fn next_item(out: &mut dyn Write, written: &mut usize, indent: &str) -> io::Result<()> {
    let comma = if *written == 0 { "" } else { "," };
    *written += 1;
    write!(out, "{comma}\n{indent}")
}

/// Ends a pretty-printed JSON array of `written` items ([`next_item`]) whose brackets
/// stand at `indent`: as a JSON value prints it, `[]` when empty.
pub(crate) fn end_array(out: &mut dyn Write, written: usize, indent: &str) -> io::Result<()> {
    if written == 0 {
        out.write_all(b"]")
    } else {
        write!(out, "\n{indent}]")
    }
}

/// Writes `value` pretty-printed at a depth of `indent`, through a buffer (the
/// printer's many small writes cost more than the copy).
pub(crate) fn pretty_at(
    out: &mut dyn Write,
    indent: &'static str,
    value: &impl serde::Serialize,
) -> io::Result<()> {
    let mut buffered = io::BufWriter::with_capacity(16 * 1024, Indented::new(out, indent));
    serde_json::to_writer_pretty(&mut buffered, value).map_err(io::Error::from)?;
    buffered.flush()
}

/// The longest text (a shape's, or the name of its instruction or computation) that
/// each finding of one shape repeats in [`Finding::shape`], [`Finding::instruction`]
/// and [`Finding::computation`] (1 KiB, a tuple of some thirty arrays); a longer one is
/// given with the shape's first finding only.
pub const REPEATED_TEXT: usize = 1024;

/// What the `nth` finding (from 0) of one shape gives of `text` (the shape's text, or
/// the name of its instruction or computation): the text for the first, and for
/// every other while it is at most [`REPEATED_TEXT`] bytes. Every finding carrying a
/// long text made the findings of one shape grow with the square of its length: one
/// JSON shape of 20,000 negative dimensions (200 KB) took 1.2 GB and made a report of
/// as much, and 4,000 findings in an instruction named by 200 KB made 1.6 GB.
pub fn repeated_text(text: Option<&str>, nth: usize) -> Option<String> {
    text.filter(|t| nth == 0 || t.len() <= REPEATED_TEXT)
        .map(str::to_string)
}

/// The findings of one shape's (or message's) issues as they come, each with its
/// text from `print`, printed at the first finding (only when there is one) and given
/// as [`repeated_text`] gives it. With the validator handing each issue on as it is
/// found (`validate::validate_shape_each`), a shape of many problems is checked in the
/// memory of the shape, not of its problems.
pub(crate) struct Texted<P> {
    print: Option<P>,
    text: Option<String>,
    nth: usize,
}

impl<P: FnOnce() -> Option<String>> Texted<P> {
    pub(crate) fn new(print: P) -> Self {
        Texted {
            print: Some(print),
            text: None,
            nth: 0,
        }
    }

    /// The text, printed now if it was not yet.
    pub(crate) fn text(&mut self) -> &Option<String> {
        if let Some(print) = self.print.take() {
            self.text = print();
        }
        &self.text
    }

    /// The next finding's place among its shape's (from 0), and the text it gives.
    pub(crate) fn next(&mut self) -> (usize, Option<String>) {
        let nth = self.nth;
        self.nth += 1;
        (nth, repeated_text(self.text().as_deref(), nth))
    }

    /// The finding of the next issue, with the text it gives.
    pub(crate) fn finding(&mut self, issue: &crate::Issue) -> Finding {
        let mut finding = Finding::from_issue(issue);
        finding.shape = self.next().1;
        finding
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs of every kind: valid, invalid with findings past those held in memory,
    /// unreadable, and warnings only.
    fn document(strict: bool) -> Document {
        let mut many = FileReport::new("dir/many lines.txt", Some(Form::Hlo));
        many.shapes = findings::HELD + 10;
        for i in 0..findings::HELD + 10 {
            let mut f = Finding::new(
                "duplicate_dimension",
                Severity::Error,
                format!("dimension {i} is \"listed\" twice"),
            )
            .at(i + 1, 3);
            f.path = "layout.minor_to_major[1]".into();
            f.shape = Some("f32[2,2]{1,1}".into());
            if i % 2 == 0 {
                f.instruction = Some(format!("p.{i}"));
                f.computation = Some("main".into());
            }
            many.findings.push(f);
        }
        let mut warned = FileReport::new("w.binpb", Some(Form::Binary));
        warned.message = Some("xla.ShapeProto");
        warned.shapes = 1;
        warned
            .findings
            .push(Finding::new("unknown_field", Severity::Warning, "field 99"));
        Document {
            files: vec![
                FileReport::new("ok.txt", Some(Form::Hlo)),
                many,
                FileReport::unreadable("bad.pb", None, "unknown_form", "cannot tell"),
                warned,
            ],
            strict,
        }
    }

    fn rendered(format: Format, document: &Document) -> String {
        let mut out = Vec::new();
        render(format, document, &mut out, &mut io::sink()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn reports_written_a_file_at_a_time_are_the_whole_documents_pretty_printed() {
        for document in [document(false), document(true), Document::default()] {
            assert_eq!(
                rendered(Format::Json, &document),
                serde_json::to_string_pretty(&json::out(&document)).unwrap() + "\n"
            );
            // The same document; the invocation comes after the results, known only
            // at the end.
            let sarif = rendered(Format::Sarif, &document);
            assert!(sarif.ends_with("}\n"));
            let streamed: serde_json::Value = serde_json::from_str(&sarif).unwrap();
            assert_eq!(streamed, sarif::to_value(&document).unwrap());
            let summary = document.summary();
            let invocation = &streamed["runs"][0]["invocations"][0];
            assert_eq!(invocation["exitCode"], summary.exit_code());
            assert_eq!(
                invocation["executionSuccessful"],
                summary.unreadable == 0,
                "{invocation}"
            );
            let notes = invocation["toolExecutionNotifications"].as_array();
            assert_eq!(notes.map_or(0, Vec::len), summary.unreadable);
        }
        let whole = json::to_value(&document(true));
        assert_eq!(
            whole["files"][1]["findings"].as_array().unwrap().len(),
            findings::HELD + 10
        );
        assert_eq!(whole["summary"]["invalid"], 2);
        assert_eq!(whole["summary"]["unreadable"], 1);
    }

    #[test]
    fn the_text_report_has_every_finding_in_order() {
        let document = document(false);
        let text = rendered(Format::Text, &document);
        assert_eq!(text.lines().count(), findings::HELD + 11);
        let last = text.lines().nth(findings::HELD + 9).unwrap();
        assert!(last.starts_with(&format!("dir/many lines.txt:{}:3: ", findings::HELD + 10)));
        let github = rendered(Format::Github, &document);
        assert_eq!(github.lines().count(), findings::HELD + 12);
    }
}
