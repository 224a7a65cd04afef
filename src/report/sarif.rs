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

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Value};

use super::codes::{lookup, CODES};
use super::{end_array, next_item, pretty_at, Document, FileReport, Finding};
use crate::error::Severity;

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
    for file in &document.files {
        results(file, &mut |result| {
            all.push(serde_json::to_value(result).map_err(io::Error::from)?);
            Ok(())
        })?;
    }
    Ok(json!({
        "version": "2.1.0",
        "$schema": SCHEMA_URI,
        "runs": [{
            "tool": tool(),
            "columnKind": "unicodeCodePoints",
            "results": all,
        }],
    }))
}

/// Writes the SARIF log, pretty-printed, with a final newline.
pub fn render(document: &Document, out: &mut dyn Write) -> io::Result<()> {
    super::render(super::Format::Sarif, document, out, &mut io::sink())
}

/// Writes what comes before the first result: the same bytes as [`to_value`]
/// pretty-printed (whose keys are sorted: the results come before the tool).
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

/// Writes what comes after the last of `written` results: the tool and its rules.
pub(crate) fn end(written: usize, out: &mut dyn Write) -> io::Result<()> {
    end_array(out, written, "      ")?;
    write!(out, ",\n      \"tool\": ")?;
    pretty_at(out, "      ", &tool())?;
    writeln!(out, "\n    }}\n  ],\n  \"version\": \"2.1.0\"\n}}")
}
