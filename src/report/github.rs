//! GitHub Actions workflow commands: one annotation per finding,
//! `::error file=FILE,line=L,col=C,title=CODE::PATH: message`.
//!
//! Data and property values are escaped as the runner expects (`%`, CR and LF in data;
//! also `:` and `,` in properties), so a message can never end a command early.

use std::io::{self, Write};

use super::{Document, FileReport};

/// Writes one workflow command per finding and per unreadable input.
pub fn render(document: &Document, out: &mut dyn Write) -> io::Result<()> {
    for file in &document.files {
        self::file(file, out)?;
    }
    Ok(())
}

/// Writes the workflow commands of one input.
pub(crate) fn file(file: &FileReport, out: &mut dyn Write) -> io::Result<()> {
    let name = escape_property(&file.path);
    if let Some(unreadable) = &file.unreadable {
        writeln!(
            out,
            "::error file={name},title={}::{}",
            escape_property(unreadable.code),
            escape_data(&unreadable.message)
        )?;
    }
    file.findings.try_for_each(
        |e| e,
        |finding| {
            let mut properties = format!("file={name}");
            if let Some(line) = finding.line {
                properties.push_str(&format!(",line={line}"));
            }
            if let Some(column) = finding.column {
                properties.push_str(&format!(",col={column}"));
            }
            properties.push_str(&format!(",title={}", escape_property(finding.code)));
            writeln!(
                out,
                "::{} {properties}::{}",
                finding.severity,
                escape_data(&format!(
                    "{}{}",
                    finding.path_and_message(),
                    finding.context()
                ))
            )
        },
    )
}

/// Escapes workflow-command data: `%`, CR and LF.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value: as data, plus `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}
