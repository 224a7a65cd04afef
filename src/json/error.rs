//! Errors of the JSON reader: what went wrong, at which field and where in the text.

use std::fmt;

use crate::error::Shown;

use crate::path::Path;

/// Why a JSON text could not be read as a message, with where: the field path (proto
/// field names, e.g. `tuple_shapes[1].layout.minor_to_major[0]`) and the line and
/// column (both from 1; columns count characters) of the offending key or value.
///
/// Displays as `PATH: WHAT at line L column C`, without the path when the problem is
/// in the JSON syntax itself or at the top level.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonError {
    path: Path,
    line: usize,
    column: usize,
    kind: JsonErrorKind,
}

/// What went wrong in a [`JsonError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The input is not UTF-8.
    NotUtf8,
    /// The text is not JSON; the message says what was expected.
    Syntax(&'static str),
    /// An object has the same key twice.
    DuplicateKey {
        /// The repeated key.
        key: String,
    },
    /// Arrays and objects nest deeper than the parser allows.
    NestingTooDeep {
        /// The most levels allowed.
        limit: usize,
    },
    /// Messages nest deeper than the reader allows (Google's parsers stop at 100 too).
    MessageTooDeep {
        /// The most message levels allowed.
        limit: usize,
    },
    /// A shape's lists hold more entries in all than [`crate::MAX_LIST_ENTRIES`].
    TooManyEntries {
        /// The most entries allowed.
        limit: usize,
    },
    /// A key that names no field of the message.
    UnknownField {
        /// The message, e.g. `xla.LayoutProto`.
        message: &'static str,
        /// The key as written.
        key: String,
    },
    /// One field given twice, under its JSON name and under its proto name.
    DuplicateField {
        /// The key seen second.
        key: String,
        /// The key seen first.
        first: String,
    },
    /// A value of the wrong JSON type for the field.
    WrongType {
        /// What the field needs, e.g. `an array`.
        expected: &'static str,
        /// The JSON type found, e.g. `string`.
        found: &'static str,
    },
    /// `null` as an element of a list.
    NullInList,
    /// A number or numeric string that is not an integer, as written.
    NotAnInteger {
        /// The value as written (strings with their quotes).
        text: String,
    },
    /// An integer that does not fit the field's type.
    OutOfRange {
        /// The value as written (strings with their quotes).
        text: String,
        /// The field's type, `int64` or `int32`.
        ty: &'static str,
    },
    /// A string that is neither a name of the enum nor an integer.
    UnknownEnumName {
        /// The enum, e.g. `xla.PrimitiveType`.
        enum_name: &'static str,
        /// The string as written.
        name: String,
    },
    /// A string holding an unpaired UTF-16 surrogate (`\ud800`), which no protobuf
    /// string can hold.
    UnpairedSurrogate,
}

impl JsonError {
    pub(crate) fn new(path: Path, line: usize, column: usize, kind: JsonErrorKind) -> Self {
        Self {
            path,
            line,
            column,
            kind,
        }
    }

    /// An error at byte `offset` of `text`, with no path.
    #[cold]
    pub(crate) fn at_offset(text: &str, offset: usize, kind: JsonErrorKind) -> Self {
        let (line, column) = line_column(text, offset);
        Self::new(Path::root(), line, column, kind)
    }

    /// The field the error is about, in proto field names; the root when the JSON
    /// itself is malformed or the problem is with the whole message.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line of the offending key or value, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column of the offending key or value, from 1, in characters.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What went wrong.
    pub fn kind(&self) -> &JsonErrorKind {
        &self.kind
    }
}

/// The line and column (from 1; the column in characters) of byte `offset` of `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.as_bytes().get(..offset).unwrap_or_default();
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    // Count characters, not bytes: UTF-8 continuation bytes do not start one.
    let column = before[line_start..]
        .iter()
        .filter(|&&b| b & 0xc0 != 0x80)
        .count()
        + 1;
    (line, column)
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::NotUtf8 => f.write_str("input is not valid utf-8"),
            JsonErrorKind::Syntax(what) => f.write_str(what),
            JsonErrorKind::DuplicateKey { key } => {
                write!(f, "duplicate key {}", Shown::quoted(key))
            }
            JsonErrorKind::NestingTooDeep { limit } => {
                write!(f, "arrays and objects nest deeper than {limit} levels")
            }
            JsonErrorKind::MessageTooDeep { limit } => {
                write!(f, "messages nest deeper than {limit} levels")
            }
            JsonErrorKind::TooManyEntries { limit } => write!(
                f,
                "the shape's lists hold more than {limit} entries in all (xla-shape's limit)"
            ),
            JsonErrorKind::UnknownField { message, key } => {
                write!(f, "{message} has no field named {}", Shown::quoted(key))
            }
            JsonErrorKind::DuplicateField { key, first } => {
                write!(
                    f,
                    "{} sets the same field as {} again",
                    Shown::quoted(key),
                    Shown::quoted(first)
                )
            }
            JsonErrorKind::WrongType { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            JsonErrorKind::NullInList => f.write_str("null is not allowed in a list"),
            JsonErrorKind::NotAnInteger { text } => {
                write!(f, "{} is not an integer", Shown::plain(text))
            }
            JsonErrorKind::OutOfRange { text, ty } => {
                write!(f, "{} is out of range for {ty}", Shown::plain(text))
            }
            JsonErrorKind::UnknownEnumName { enum_name, name } => {
                write!(f, "{} is not a value of {enum_name}", Shown::quoted(name))
            }
            JsonErrorKind::UnpairedSurrogate => f.write_str("string holds an unpaired surrogate"),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
        }
        write!(
            f,
            "{} at line {} column {}",
            self.kind, self.line, self.column
        )
    }
}

impl fmt::Debug for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonError({self})")
    }
}

impl std::error::Error for JsonError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let text = "ab\né\u{1F600}x\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        // 'x' follows a 2-byte and a 4-byte character.
        assert_eq!(line_column(text, 9), (2, 3));
        assert_eq!(line_column(text, 100), (3, 1));
    }

    #[test]
    fn long_keys_and_values_are_cut_in_messages() {
        let enum_error = |name: String| JsonErrorKind::UnknownEnumName {
            enum_name: "xla.PrimitiveType",
            name,
        };
        // Short ones whole, as before.
        let short = "F".repeat(crate::error::SHOWN_LONG);
        assert_eq!(
            enum_error(short.clone()).to_string(),
            format!("{short:?} is not a value of xla.PrimitiveType")
        );
        let long = format!("{}\"{}", "é".repeat(100), "F".repeat(10_000_000));
        let message = enum_error(long.clone()).to_string();
        assert_eq!(
            message,
            format!(
                "{:?}... ({} bytes in all) is not a value of xla.PrimitiveType",
                "é".repeat(crate::error::SHOWN_KEPT),
                long.len()
            )
        );
        let number = JsonErrorKind::NotAnInteger {
            text: "9".repeat(1000),
        };
        assert_eq!(
            number.to_string(),
            format!(
                "{}... (1000 bytes in all) is not an integer",
                "9".repeat(64)
            )
        );
    }
}
