//! Errors of the HLO text parser: a message and the byte span of the bad text.

use std::fmt;
use std::ops::Range;

/// An error from parsing HLO text, with the byte span of the text it is about.
///
/// `Display` gives the message alone; [`ParseError::render`] adds the input line with a
/// caret under the span, for people.
#[derive(Clone, PartialEq, Eq)]
pub struct ParseError(
    // Boxed: one pointer, so that the parser's many small `Result`s stay small enough
    // to be returned in registers.
    Box<Details>,
);

#[derive(Clone, PartialEq, Eq)]
struct Details {
    span: Range<usize>,
    message: String,
}

impl ParseError {
    #[cold]
    pub(crate) fn new(span: Range<usize>, message: impl Into<String>) -> Self {
        Self(Box::new(Details {
            span,
            message: message.into(),
        }))
    }

    /// The byte range of the input the error is about (empty at the end of input).
    pub fn span(&self) -> Range<usize> {
        self.0.span.clone()
    }

    /// The message, lowercase, without the location.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Moves the span by `offset` bytes, for text parsed out of a larger input.
    #[must_use]
    pub fn shifted(mut self, offset: usize) -> Self {
        let span = &mut self.0.span;
        *span = span.start.saturating_add(offset)..span.end.saturating_add(offset);
        self
    }

    /// The message, then the line of `input` holding the error with carets under the
    /// bad text, e.g.
    ///
    /// ```text
    /// expected ']' after the dimensions
    ///   f32[2,3}
    ///          ^
    /// ```
    ///
    /// `input` must be the text that was parsed; other text renders the message alone.
    pub fn render(&self, input: &str) -> String {
        let start = self.0.span.start.min(input.len());
        let Some(line_start) = input
            .get(..start)
            .map(|s| s.rfind('\n').map_or(0, |i| i + 1))
        else {
            return self.0.message.clone();
        };
        let line_end = input[start..].find('\n').map_or(input.len(), |i| start + i);
        // Show at most about 60 characters either side of the error.
        let mut line_start = line_start;
        let mut shown_start = "";
        if start - line_start > 64 {
            line_start = floor_char_boundary(input, start - 60);
            shown_start = "...";
        }
        let mut shown_end = "";
        let mut line_end = line_end;
        if line_end - start > 64 {
            line_end = floor_char_boundary(input, start + 60);
            shown_end = "...";
        }
        let line = &input[line_start..line_end];
        let column = input[line_start..start].chars().count() + shown_start.len();
        let end = self.0.span.end.clamp(start, line_end);
        let width = input[start..end].chars().count().max(1);
        let line_number = input[..line_start].matches('\n').count() + 1;
        let mut out = self.0.message.clone();
        if line_number > 1 {
            out.push_str(&format!(" (line {line_number})"));
        }
        out.push_str("\n  ");
        out.push_str(shown_start);
        out.push_str(line);
        out.push_str(shown_end);
        out.push_str("\n  ");
        out.push_str(&" ".repeat(column));
        out.push_str(&"^".repeat(width));
        out
    }
}

fn floor_char_boundary(input: &str, mut index: usize) -> usize {
    index = index.min(input.len());
    while !input.is_char_boundary(index) {
        index -= 1;
    }
    index
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {:?}", self.0.message, self.0.span)
    }
}

impl std::error::Error for ParseError {}

/// A value that has no HLO text form (the printer refuses rather than drop it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintError {
    path: crate::Path,
    message: String,
}

impl PrintError {
    #[cold]
    pub(crate) fn new(path: crate::Path, message: impl Into<String>) -> Self {
        Self {
            path,
            message: message.into(),
        }
    }

    /// Where in the message the value is.
    pub fn path(&self) -> &crate::Path {
        &self.path
    }

    /// What cannot be written.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for PrintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for PrintError {}
