//! The text report: one line per finding, the same in every input form.
//!
//! ```text
//! FILE:LINE:COLUMN: error[CODE]: PATH: message (instruction I, computation C)
//! FILE: warning[CODE]: PATH: message
//! ```
//!
//! `:LINE:COLUMN` is there for text inputs, `PATH: ` when the finding is about a field
//! inside a message, the parenthesis for shapes inside a module. A valid input prints
//! nothing. An input that cannot be checked goes to standard error as
//! `xla-shape: FILE: message`.

use std::io::{self, Write};

use super::{Document, FileReport, Finding};

/// Writes every finding of `document` to `out`, and the unreadable inputs to `errors`.
pub fn render(document: &Document, out: &mut dyn Write, errors: &mut dyn Write) -> io::Result<()> {
    for file in &document.files {
        self::file(file, out, errors)?;
    }
    Ok(())
}

/// Writes the findings of one input to `out`, and why it is unreadable to `errors`.
pub(crate) fn file(
    file: &FileReport,
    out: &mut dyn Write,
    errors: &mut dyn Write,
) -> io::Result<()> {
    if let Some(unreadable) = &file.unreadable {
        writeln!(errors, "xla-shape: {}: {}", file.path, unreadable.message)?;
    }
    file.findings.try_for_each(
        |e| e,
        |finding| writeln!(out, "{}", line(&file.path, finding)),
    )
}

/// One finding as a line of the text report (without the newline).
pub fn line(file: &str, finding: &Finding) -> String {
    let mut line = file.to_string();
    if let (Some(l), Some(c)) = (finding.line, finding.column) {
        line.push_str(&format!(":{l}:{c}"));
    }
    format!(
        "{line}: {}[{}]: {}{}",
        finding.severity,
        finding.code,
        finding.path_and_message(),
        finding.context()
    )
}
