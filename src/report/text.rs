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
//!
//! A line is one line whatever the input: line breaks and other control characters in
//! a file name or a message (which may quote the input, such as a string that runs
//! over a line break) are written escaped, as `\n`, `\r` and `\u{1b}` (a backslash
//! itself stays as it is). JSON, SARIF and GitHub's commands carry the words as
//! they are.

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
        writeln!(
            errors,
            "xla-shape: {}: {}",
            one_line(&file.path),
            one_line(&unreadable.message)
        )?;
    }
    file.findings.try_for_each(
        |e| e,
        |finding| writeln!(out, "{}", line(&file.path, finding)),
    )
}

/// One finding as a line of the text report (without the newline).
pub fn line(file: &str, finding: &Finding) -> String {
    let mut line = one_line(file).into_owned();
    if let (Some(l), Some(c)) = (finding.line, finding.column) {
        line.push_str(&format!(":{l}:{c}"));
    }
    let said = format!("{}{}", finding.path_and_message(), finding.context());
    format!(
        "{line}: {}[{}]: {}",
        finding.severity,
        finding.code,
        one_line(&said)
    )
}

/// `text` with every control character but the tab escaped (`\n`, `\r`, `\u{1b}`),
/// so that it stays on one line.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Severity;

    #[test]
    fn a_finding_is_one_line_whatever_it_quotes() {
        assert!(matches!(
            one_line("a\tb: c"),
            std::borrow::Cow::Borrowed("a\tb: c")
        ));
        assert_eq!(
            one_line("saw '\"}\n' \r\u{1b}\u{85}"),
            "saw '\"}\\n' \\r\\u{1b}\\u{85}"
        );
        let mut finding = Finding::new("module_syntax", Severity::Error, "saw '\"}\n'").at(9, 74);
        finding.computation = Some("b\nc".into());
        let said = line("dir/a\nb.txt", &finding);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(
            said.starts_with("dir/a\\nb.txt:9:74: error[module_syntax]: saw '\"}\\n'"),
            "{said}"
        );
    }
}
