//! SARIF 2.1.0, as GitHub code scanning reads it.
//!
//! One run; `tool.driver.rules` has one rule per code the tool has (sorted by id),
//! with its description and default level, so that the results can be written as the
//! inputs are checked; each finding is a result with `ruleId`,
//! `ruleIndex`, `level`, `message.text`, one physical location (the file as a
//! relative URI, with a region where the line and column are known) and, for a field
//! inside a message, a logical location holding the proto path. Inputs that could not
//! be checked are results too (their code is the rule). `partialFingerprints` come from
//! the code, the file, the path and the instruction, not from line numbers, so a
//! finding keeps its identity when lines move. The shape a finding is about, when
//! known, is the result's `properties.shape`.
//!
//! The run has one `invocations` entry, so that a consumer can tell a complete set
//! of results from a partial one (SARIF 2.1.0, appendix I):
//! `executionSuccessful` is false when some input could not be checked (the exit
//! status 2, which `exitCode` gives), and `toolExecutionNotifications` holds one
//! error-level notification for each such input, with its file and its code as the
//! `associatedRule`. It is written after the results, as it is known only once
//! every input has been read; the notifications are kept as they come, past
//! [`Spool::HELD`] bytes in a temporary file.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Value};

use super::codes::{lookup, CODES};
use super::{end_array, next_item, pretty_at, Document, FileReport, Finding};
use crate::error::Severity;
use crate::spool::Spool;

/// The `$schema` written at the top of the log.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// A path as a relative URI reference: `/` separators, no `./`, and the characters
/// URIs reserve percent-encoded.
pub fn uri(path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./");
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// FNV-1a over the parts, as 16 hex digits: stable across runs and platforms.
fn fingerprint(parts: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in part.as_bytes().iter().chain(&[0u8]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// One result, its keys in the order a JSON value prints them (sorted), so that writing
/// it directly gives the bytes of its value (and costs no map of strings).
#[derive(Serialize)]
struct ResultOut<'a> {
    level: &'static str,
    locations: [LocationOut<'a>; 1],
    message: TextOut,
    #[serde(rename = "partialFingerprints")]
    partial_fingerprints: FingerprintOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<PropertiesOut<'a>>,
    #[serde(rename = "ruleId")]
    rule_id: &'a str,
    #[serde(rename = "ruleIndex", skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
}

#[derive(Serialize)]
struct TextOut {
    text: String,
}

#[derive(Serialize)]
struct FingerprintOut {
    #[serde(rename = "xlaShapeFinding/v1")]
    v1: String,
}

#[derive(Serialize)]
struct PropertiesOut<'a> {
    shape: &'a str,
}

/// One notification of the invocation, its keys sorted like [`ResultOut`]'s.
#[derive(Serialize)]
struct NotificationOut<'a> {
    #[serde(rename = "associatedRule", skip_serializing_if = "Option::is_none")]
    associated_rule: Option<RuleRefOut<'a>>,
    level: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<LocationOut<'a>>,
    message: TextOut,
}

#[derive(Serialize)]
struct RuleRefOut<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<usize>,
}

#[derive(Serialize)]
struct LocationOut<'a> {
    #[serde(rename = "logicalLocations", skip_serializing_if = "Vec::is_empty")]
    logical: Vec<LogicalOut<'a>>,
    #[serde(rename = "physicalLocation")]
    physical: PhysicalOut<'a>,
}

#[derive(Serialize)]
struct LogicalOut<'a> {
    #[serde(rename = "fullyQualifiedName")]
    fully_qualified_name: std::borrow::Cow<'a, str>,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Serialize)]
struct PhysicalOut<'a> {
    #[serde(rename = "artifactLocation")]
    artifact: ArtifactOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<RegionOut>,
}

#[derive(Serialize)]
struct ArtifactOut<'a> {
    uri: &'a str,
}

#[derive(Serialize)]
struct RegionOut {
    #[serde(rename = "startColumn", skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
    #[serde(rename = "startLine")]
    start_line: usize,
}

/// Where a finding stands: the file (`uri`), its line and column when known, and, for
/// a field inside a message or an instruction, logical locations.
fn location<'a>(uri: &'a str, finding: Option<&'a Finding>) -> LocationOut<'a> {
    let region = finding.and_then(|f| {
        f.line.map(|line| RegionOut {
            start_column: f.column,
            start_line: line,
        })
    });
    let mut logical = Vec::new();
    if let Some(f) = finding {
        if !f.path.is_empty() {
            logical.push(LogicalOut {
                fully_qualified_name: f.path.as_str().into(),
                kind: "member",
                name: None,
            });
        }
        if let Some(instruction) = &f.instruction {
            let name = match &f.computation {
                Some(c) => format!("{c}/{instruction}").into(),
                None => instruction.as_str().into(),
            };
            logical.push(LogicalOut {
                fully_qualified_name: name,
                kind: "function",
                name: Some(instruction),
            });
        }
    }
    LocationOut {
        logical,
        physical: PhysicalOut {
            artifact: ArtifactOut { uri },
            region,
        },
    }
}

/// The rules: one per code the tool has ([`CODES`]), sorted by id, so that a result's
/// `ruleIndex` is known before the run ends.
fn rule_ids() -> &'static [&'static str] {
    static IDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let mut ids: Vec<&'static str> = CODES.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids
    })
}

/// `tool`, with every rule.
fn tool() -> Value {
    let rules: Vec<Value> = rule_ids()
        .iter()
        .map(|&id| {
            let (description, severity) = match lookup(id) {
                Some(info) => (info.description, info.severity),
                None => ("", Severity::Error),
            };
            json!({
                "id": id,
                "name": id,
                "shortDescription": { "text": description },
                "fullDescription": { "text": description },
                "defaultConfiguration": { "level": level(severity) },
            })
        })
        .collect();
    json!({
        "driver": {
            "name": "xla-shape",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }
    })
}

/// The rule's place in [`tool`]'s rules, when the code is one of the tool's.
fn rule_index(id: &str) -> Option<usize> {
    rule_ids().binary_search(&id).ok()
}

/// The results of one input: why it could not be checked, then its findings.
fn results(
    file: &FileReport,
    each: &mut dyn FnMut(&ResultOut<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let uri = uri(&file.path);
    if let Some(u) = &file.unreadable {
        each(&ResultOut {
            level: "error",
            locations: [location(&uri, None)],
            message: TextOut {
                text: u.message.clone(),
            },
            partial_fingerprints: FingerprintOut {
                v1: fingerprint(&[u.code, &file.path]),
            },
            properties: None,
            rule_id: u.code,
            rule_index: rule_index(u.code),
        })?;
    }
    file.findings.try_for_each(
        |e| e,
        |f| {
            each(&ResultOut {
                level: level(f.severity),
                locations: [location(&uri, Some(f))],
                message: TextOut {
                    text: format!("{}{}", f.path_and_message(), f.context()),
                },
                partial_fingerprints: FingerprintOut {
                    v1: fingerprint(&[
                        f.code,
                        &file.path,
                        &f.path,
                        f.computation.as_deref().unwrap_or(""),
                        f.instruction.as_deref().unwrap_or(""),
                        &f.message,
                    ]),
                },
                properties: f.shape.as_deref().map(|shape| PropertiesOut { shape }),
                rule_id: f.code,
                rule_index: rule_index(f.code),
            })
        },
    )
}

/// The SARIF log as a JSON value.
///
/// # Errors
/// When findings kept in a temporary file cannot be read back.
pub fn to_value(document: &Document) -> io::Result<Value> {
    let mut all = Vec::new();
    let mut notes = Vec::new();
    let mut summary = super::Summary::default();
    for file in &document.files {
        results(file, &mut |result| {
            all.push(serde_json::to_value(result).map_err(io::Error::from)?);
            Ok(())
        })?;
        if let Some(u) = &file.unreadable {
            let uri = uri(&file.path);
            let note = unreadable_note(&uri, u.code, &u.message);
            notes.push(serde_json::to_value(note).map_err(io::Error::from)?);
        }
        summary.add(file, document.strict);
    }
    let exit_code = summary.exit_code();
    let mut invocation = json!({
        "executionSuccessful": succeeded(exit_code),
        "exitCode": exit_code,
    });
    if !notes.is_empty() {
        invocation["toolExecutionNotifications"] = Value::Array(notes);
    }
    Ok(json!({
        "version": "2.1.0",
        "$schema": SCHEMA_URI,
        "runs": [{
            "tool": tool(),
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation],
            "results": all,
        }],
    }))
}

/// Whether a run that ended with `exit_code` succeeded, as SARIF's
/// `executionSuccessful` says it: every input was checked (the status is not
/// [`EXIT_UNREADABLE`](super::EXIT_UNREADABLE)), whatever it found.
fn succeeded(exit_code: u8) -> bool {
    exit_code != super::EXIT_UNREADABLE
}

/// The notification of an input that could not be checked.
fn unreadable_note<'a>(uri: &'a str, code: &'a str, message: &str) -> NotificationOut<'a> {
    NotificationOut {
        associated_rule: Some(RuleRefOut {
            id: code,
            index: rule_index(code),
        }),
        level: "error",
        locations: vec![location(uri, None)],
        message: TextOut {
            text: message.to_string(),
        },
    }
}

/// The run's one invocation, gathered as the inputs are written: a notification for
/// each input that could not be checked (kept in a [`Spool`]), and any said of the
/// run as a whole ([`Invocation::note`]).
#[derive(Debug, Default)]
pub(crate) struct Invocation {
    notes: Spool,
    count: usize,
}

/// The depth of a notification in the log.
const NOTE_INDENT: &str = "            ";

impl Invocation {
    /// Keeps a notification for `report`'s input, when it could not be checked.
    pub(crate) fn file(&mut self, report: &FileReport) -> io::Result<()> {
        match &report.unreadable {
            Some(u) => self.push(&unreadable_note(&uri(&report.path), u.code, &u.message)),
            None => Ok(()),
        }
    }

    /// Keeps an error-level notification about the run as a whole (no file, no rule).
    pub(crate) fn note(&mut self, message: &str) -> io::Result<()> {
        self.push(&NotificationOut {
            associated_rule: None,
            level: "error",
            locations: Vec::new(),
            message: TextOut {
                text: message.to_string(),
            },
        })
    }

    /// Keeps `note`, pretty-printed where it stands in the log.
    fn push(&mut self, note: &NotificationOut<'_>) -> io::Result<()> {
        next_item(&mut self.notes, &mut self.count, NOTE_INDENT)?;
        pretty_at(&mut self.notes, NOTE_INDENT, note)
    }

    /// Writes `"invocations"` (after the results): the run ended with `exit_code`
    /// ([`succeeded`] or not).
    fn write(self, exit_code: u8, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            ",\n      \"invocations\": [\n        {{\n          \"executionSuccessful\": {},\n          \"exitCode\": {exit_code}",
            succeeded(exit_code)
        )?;
        if self.count > 0 {
            out.write_all(b",\n          \"toolExecutionNotifications\": [")?;
            self.notes.write_to(out)?;
            end_array(out, self.count, "          ")?;
        }
        out.write_all(b"\n        }\n      ]")
    }
}

/// Writes the SARIF log, pretty-printed, with a final newline.
pub fn render(document: &Document, out: &mut dyn Write) -> io::Result<()> {
    super::render(super::Format::Sarif, document, out, &mut io::sink())
}

/// Writes what comes before the first result. With [`file`] and [`end`], this is the
/// document [`to_value`] gives, pretty-printed, its keys in the same order but for the
/// invocation, which comes after the results (it is known only at the end).
pub(crate) fn start(out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"$schema\": {},\n  \"runs\": [\n    {{\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [",
        Value::from(SCHEMA_URI)
    )
}

/// Writes the results of one input, after the `written` before them.
pub(crate) fn file(
    report: &FileReport,
    written: &mut usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    results(report, &mut |result| {
        next_item(out, written, "        ")?;
        pretty_at(out, "        ", &result)
    })
}

/// Writes what comes after the last of `written` results: the invocation (the run
/// ended with `exit_code`) and the tool with its rules.
pub(crate) fn end(
    written: usize,
    invocation: Invocation,
    exit_code: u8,
    out: &mut dyn Write,
) -> io::Result<()> {
    end_array(out, written, "      ")?;
    invocation.write(exit_code, out)?;
    write!(out, ",\n      \"tool\": ")?;
    pretty_at(out, "      ", &tool())?;
    writeln!(out, "\n    }}\n  ],\n  \"version\": \"2.1.0\"\n}}")
}
