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

use super::{Document, Finding};

/// Writes every finding of `document` to `out`, and the unreadable inputs to `errors`.
pub fn render(document: &Document, out: &mut dyn Write, errors: &mut dyn Write) -> io::Result<()> {
    for file in &document.files {
        if let Some(unreadable) = &file.unreadable {
            writeln!(errors, "xla-shape: {}: {}", file.path, unreadable.message)?;
        }
        for finding in &file.findings {
            writeln!(out, "{}", line(&file.path, finding))?;
        }
    }
    Ok(())
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
