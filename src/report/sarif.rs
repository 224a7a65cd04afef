//! SARIF 2.1.0, as GitHub code scanning reads it.
//!
//! One run; `tool.driver.rules` has one rule per code that occurs (sorted by id),
//! with its description and default level; each finding is a result with `ruleId`,
//! `ruleIndex`, `level`, `message.text`, one physical location (the file as a
//! relative URI, with a region where the line and column are known) and, for a field
//! inside a message, a logical location holding the proto path. Inputs that could not
//! be checked are results too (their code is the rule). `partialFingerprints` come from
//! the code, the file, the path and the instruction, not from line numbers, so a
//! finding keeps its identity when lines move. The shape a finding is about, when
//! known, is the result's `properties.shape`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{json, Value};

use super::codes::lookup;
use super::{Document, Finding};
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

fn location(file: &str, finding: Option<&Finding>) -> Value {
    let mut physical = json!({ "artifactLocation": { "uri": uri(file) } });
    if let Some(Finding {
        line: Some(line), ..
    }) = finding
    {
        let mut region = json!({ "startLine": line });
        if let Some(column) = finding.and_then(|f| f.column) {
            region["startColumn"] = json!(column);
        }
        physical["region"] = region;
    }
    let mut location = json!({ "physicalLocation": physical });
    if let Some(f) = finding {
        let mut logical = Vec::new();
        if !f.path.is_empty() {
            logical.push(json!({ "fullyQualifiedName": f.path, "kind": "member" }));
        }
        if let Some(instruction) = &f.instruction {
            let name = match &f.computation {
                Some(c) => format!("{c}/{instruction}"),
                None => instruction.clone(),
            };
            logical.push(
                json!({ "name": instruction, "fullyQualifiedName": name, "kind": "function" }),
            );
        }
        if !logical.is_empty() {
            location["logicalLocations"] = Value::Array(logical);
        }
    }
    location
}

/// The SARIF log as a JSON value.
pub fn to_value(document: &Document) -> Value {
    // Rules: every code that occurs, sorted, so the output is deterministic.
    let mut used: BTreeMap<&'static str, usize> = BTreeMap::new();
    for file in &document.files {
        if let Some(u) = &file.unreadable {
            used.insert(u.code, 0);
        }
        for f in &file.findings {
            used.insert(f.code, 0);
        }
    }
    let mut rules = Vec::new();
    for (index, (id, slot)) in used.iter_mut().enumerate() {
        *slot = index;
        let (description, severity) = match lookup(id) {
            Some(info) => (info.description, info.severity),
            None => ("", Severity::Error),
        };
        rules.push(json!({
            "id": id,
            "name": id,
            "shortDescription": { "text": description },
            "fullDescription": { "text": description },
            "defaultConfiguration": { "level": level(severity) },
        }));
    }
    let mut results = Vec::new();
    for file in &document.files {
        if let Some(u) = &file.unreadable {
            results.push(json!({
                "ruleId": u.code,
                "ruleIndex": used[u.code],
                "level": "error",
                "message": { "text": u.message },
                "locations": [location(&file.path, None)],
                "partialFingerprints": { "xlaShapeFinding/v1": fingerprint(&[u.code, &file.path]) },
            }));
        }
        for f in &file.findings {
            let text = format!("{}{}", f.path_and_message(), f.context());
            let mut result = json!({
                "ruleId": f.code,
                "ruleIndex": used[f.code],
                "level": level(f.severity),
                "message": { "text": text },
                "locations": [location(&file.path, Some(f))],
                "partialFingerprints": {
                    "xlaShapeFinding/v1": fingerprint(&[
                        f.code,
                        &file.path,
                        &f.path,
                        f.computation.as_deref().unwrap_or(""),
                        f.instruction.as_deref().unwrap_or(""),
                        &f.message,
                    ]),
                },
            });
            if let Some(shape) = &f.shape {
                result["properties"] = json!({ "shape": shape });
            }
            results.push(result);
        }
    }
    json!({
        "version": "2.1.0",
        "$schema": SCHEMA_URI,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "xla-shape",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Writes the SARIF log, pretty-printed, with a final newline.
pub fn render(document: &Document, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &to_value(document)).map_err(io::Error::from)?;
    writeln!(out)
}
