//! The JSON report: one document per run.
//!
//! ```json
//! {
//!   "version": 1,
//!   "tool": {"name": "xla-shape", "version": "0.1.0"},
//!   "files": [
//!     {"path": "m.hlo.txt", "form": "hlo-module", "message": null, "status": "invalid", "shapes": 12,
//!      "errors": 1, "warnings": 0, "error": null,
//!      "findings": [{"code": "duplicate_dimension", "severity": "error",
//!                    "message": "dimension 1 is listed twice (first at minor_to_major[0])",
//!                    "path": "layout.minor_to_major[1]", "line": 7, "column": 23,
//!                    "instruction": "add.3", "computation": "main",
//!                    "shape": "f32[2,3]{1,1}"}]}
//!   ],
//!   "summary": {"files": 1, "shapes": 12, "errors": 1, "warnings": 0,
//!               "unreadable": 0, "invalid": 1, "valid": false}
//! }
//! ```
//!
//! Every key is always present; what is not known is `null` (`path` is `""` for the
//! message itself). `error` is `{"code", "message"}` for an input that could not be
//! checked. Adding keys keeps [`SCHEMA_VERSION`]; renaming or removing one bumps it.

use std::io::{self, Write};

use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};

use super::{end_array, next_item, pretty_at, Document, FileReport, Finding, Findings, Summary};

/// The version of the report schema, the document's top-level `version`.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct Out<'a> {
    version: u32,
    tool: Tool,
    files: Vec<FileOut<'a>>,
    summary: SummaryOut,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct FileOut<'a> {
    path: &'a str,
    form: Option<&'static str>,
    message: Option<&'static str>,
    status: &'static str,
    shapes: usize,
    errors: usize,
    warnings: usize,
    error: Option<ErrorOut<'a>>,
    findings: FindingsOut<'a>,
}

/// A file's findings, serialized a finding at a time (read back from their temporary
/// file when they were spilled).
struct FindingsOut<'a>(&'a Findings);

impl Serialize for FindingsOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        self.0
            .try_for_each(S::Error::custom, |f| seq.serialize_element(&finding(f)))?;
        seq.end()
    }
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    code: &'static str,
    message: &'a str,
}

#[derive(Serialize)]
struct FindingOut<'a> {
    code: &'static str,
    severity: &'static str,
    message: &'a str,
    path: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    instruction: Option<&'a str>,
    computation: Option<&'a str>,
    shape: Option<&'a str>,
}

#[derive(Serialize)]
struct SummaryOut {
    files: usize,
    shapes: usize,
    errors: usize,
    warnings: usize,
    unreadable: usize,
    invalid: usize,
    valid: bool,
}

impl From<Summary> for SummaryOut {
    fn from(s: Summary) -> Self {
        SummaryOut {
            files: s.files,
            shapes: s.shapes,
            errors: s.errors,
            warnings: s.warnings,
            unreadable: s.unreadable,
            invalid: s.invalid,
            valid: s.unreadable == 0 && s.invalid == 0,
        }
    }
}

fn finding(f: &Finding) -> FindingOut<'_> {
    FindingOut {
        code: f.code,
        severity: f.severity.as_str(),
        message: &f.message,
        path: &f.path,
        line: f.line,
        column: f.column,
        instruction: f.instruction.as_deref(),
        computation: f.computation.as_deref(),
        shape: f.shape.as_deref(),
    }
}

fn file_out(f: &FileReport, strict: bool) -> FileOut<'_> {
    FileOut {
        path: &f.path,
        form: f.form.map(|form| form.name()),
        message: f.message,
        status: f.status(strict).as_str(),
        shapes: f.shapes,
        errors: f.errors(),
        warnings: f.warnings(),
        error: f.unreadable.as_ref().map(|u| ErrorOut {
            code: u.code,
            message: &u.message,
        }),
        findings: FindingsOut(&f.findings),
    }
}

/// The report as a JSON value.
pub fn to_value(document: &Document) -> serde_json::Value {
    serde_json::to_value(out(document)).unwrap_or(serde_json::Value::Null)
}

const TOOL: Tool = Tool {
    name: "xla-shape",
    version: env!("CARGO_PKG_VERSION"),
};

pub(super) fn out(document: &Document) -> impl Serialize + '_ {
    Out {
        version: SCHEMA_VERSION,
        tool: TOOL,
        files: document
            .files
            .iter()
            .map(|f| file_out(f, document.strict))
            .collect(),
        summary: document.summary().into(),
    }
}

/// Writes the report, pretty-printed, with a final newline.
pub fn render(document: &Document, out: &mut dyn Write) -> io::Result<()> {
    super::render(super::Format::Json, document, out, &mut io::sink())
}

/// Writes what comes before the first file: the same bytes as the whole document
/// pretty-printed (its keys in the order of [`Out`]).
pub(crate) fn start(out: &mut dyn Write) -> io::Result<()> {
    write!(out, "{{\n  \"version\": {SCHEMA_VERSION},\n  \"tool\": ")?;
    pretty_at(out, "  ", &TOOL)?;
    write!(out, ",\n  \"files\": [")
}

/// Writes one file's object, after the `written` before it.
pub(crate) fn file(
    report: &FileReport,
    strict: bool,
    written: &mut usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    next_item(out, written, "    ")?;
    pretty_at(out, "    ", &file_out(report, strict))
}

/// Writes what comes after the last of `written` files: the summary.
pub(crate) fn end(summary: Summary, written: usize, out: &mut dyn Write) -> io::Result<()> {
    end_array(out, written, "  ")?;
    write!(out, ",\n  \"summary\": ")?;
    pretty_at(out, "  ", &SummaryOut::from(summary))?;
    writeln!(out, "\n}}")
}
