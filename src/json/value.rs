//! A small JSON document parser that keeps what proto3 JSON needs and `serde_json::Value`
//! throws away: the byte offset of every value and key, the raw text of every number,
//! and every key of an object in order, so that duplicate keys are an error.
//!
//! The accepted syntax is that of Python's `json.loads`, which Google's
//! `json_format.Parse` uses: RFC 8259 plus the literals `NaN`, `Infinity` and
//! `-Infinity`, and `\u` escapes of unpaired surrogates. Strings are therefore kept
//! as WTF-8 bytes (UTF-8 that may also encode surrogate code points), which compare
//! exactly as Python's `str` does; a string that must be text is checked later.

use std::borrow::Cow;
use std::collections::HashSet;

use super::error::{JsonError, JsonErrorKind};

/// How deeply arrays and objects may nest. Python's limit is its interpreter's
/// recursion limit (about 1000); this one keeps the recursive parser's stack small
/// while leaving room for the deepest message [`super::MAX_MESSAGE_DEPTH`] allows
/// (two levels per nested `tuple_shapes`).
pub(crate) const MAX_NESTING: usize = 512;

/// Objects with at least this many keys check duplicates with a hash set.
const HASH_KEYS_FROM: usize = 16;

/// A JSON value with the byte offset where it starts.
#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub(crate) pos: usize,
    pub(crate) value: Value<'a>,
}

/// A JSON value.
#[derive(Debug)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    /// The number's text as written: JSON number syntax, or `NaN`, `Infinity`, `-Infinity`.
    Number(&'a str),
    /// WTF-8 bytes: UTF-8, except that unpaired `\u` surrogates are encoded too.
    String(Cow<'a, [u8]>),
    Array(Vec<Node<'a>>),
    Object(Vec<Member<'a>>),
}

/// One `"key": value` pair of an object.
#[derive(Debug)]
pub(crate) struct Member<'a> {
    pub(crate) key: Cow<'a, [u8]>,
    pub(crate) key_pos: usize,
    pub(crate) value: Node<'a>,
}

impl Value<'_> {
    /// The JSON type's name, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

/// Parses a whole document: one value, with only whitespace around it.
pub(crate) fn parse_document(text: &str) -> Result<Node<'_>, JsonError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    if parser.bytes.starts_with("\u{feff}".as_bytes()) {
        return Err(parser.error_at(0, JsonErrorKind::Syntax("unexpected byte order mark")));
    }
    parser.skip_whitespace();
    let node = parser.value()?;
    parser.skip_whitespace();
    if parser.pos < parser.bytes.len() {
        return Err(parser.error(JsonErrorKind::Syntax("trailing characters after the value")));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// An array or object being parsed.
enum Open<'a> {
    Array {
        pos: usize,
        items: Vec<Node<'a>>,
    },
    Object {
        pos: usize,
        members: Vec<Member<'a>>,
        /// The keys, once the object is large enough for hashing to pay.
        seen: Option<HashSet<Cow<'a, [u8]>>>,
        /// The key of the value being parsed, and where it starts.
        key: (Cow<'a, [u8]>, usize),
    },
}

impl<'a> Parser<'a> {
    fn error(&self, kind: JsonErrorKind) -> JsonError {
        self.error_at(self.pos, kind)
    }

    fn error_at(&self, pos: usize, kind: JsonErrorKind) -> JsonError {
        JsonError::at_offset(self.text, pos, kind)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat_literal(&mut self, literal: &str) -> bool {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    /// One value, arrays and objects included, parsed with an explicit stack so that
    /// nesting never deepens the call stack.
    fn value(&mut self) -> Result<Node<'a>, JsonError> {
        let mut stack: Vec<Open<'a>> = Vec::new();
        loop {
            // A value; a non-empty array or object is opened and its first element
            // parsed on the next turn.
            self.skip_whitespace();
            let pos = self.pos;
            let mut done = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if stack.len() >= MAX_NESTING {
                        return Err(
                            self.error(JsonErrorKind::NestingTooDeep { limit: MAX_NESTING })
                        );
                    }
                    self.pos += 1;
                    self.skip_whitespace();
                    match (open, self.peek()) {
                        (b'[', Some(b']')) => {
                            self.pos += 1;
                            Node {
                                pos,
                                value: Value::Array(Vec::new()),
                            }
                        }
                        (b'{', Some(b'}')) => {
                            self.pos += 1;
                            Node {
                                pos,
                                value: Value::Object(Vec::new()),
                            }
                        }
                        (b'[', _) => {
                            stack.push(Open::Array {
                                pos,
                                items: Vec::new(),
                            });
                            continue;
                        }
                        _ => {
                            let key = self.key()?;
                            stack.push(Open::Object {
                                pos,
                                members: Vec::new(),
                                seen: None,
                                key,
                            });
                            continue;
                        }
                    }
                }
                _ => self.scalar()?,
            };
            // Store the finished value in its container, and close every container
            // that ends right after it.
            loop {
                let Some(mut open) = stack.pop() else {
                    return Ok(done);
                };
                self.skip_whitespace();
                let next = self.peek();
                match &mut open {
                    Open::Array { items, .. } => {
                        items.push(done);
                        match next {
                            Some(b',') => self.pos += 1,
                            Some(b']') => self.pos += 1,
                            None => {
                                return Err(self.error(JsonErrorKind::Syntax(
                                    "unexpected end of input in an array",
                                )))
                            }
                            Some(_) => {
                                return Err(self.error(JsonErrorKind::Syntax("expected ',' or ']'")))
                            }
                        }
                    }
                    Open::Object {
                        members, seen, key, ..
                    } => {
                        let (name, key_pos) = std::mem::take(key);
                        members.push(Member {
                            key: name,
                            key_pos,
                            value: done,
                        });
                        if seen.is_none() && members.len() >= HASH_KEYS_FROM {
                            *seen = Some(members.iter().map(|m| m.key.clone()).collect());
                        }
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                let key_pos = self.skip_whitespace_then_pos();
                                let next_key = self.key()?;
                                let duplicate = match seen {
                                    Some(set) => !set.insert(next_key.0.clone()),
                                    None => members.iter().any(|m| m.key == next_key.0),
                                };
                                if duplicate {
                                    let key = String::from_utf8_lossy(&next_key.0).into_owned();
                                    return Err(
                                        self.error_at(key_pos, JsonErrorKind::DuplicateKey { key })
                                    );
                                }
                                *key = next_key;
                            }
                            Some(b'}') => self.pos += 1,
                            None => {
                                return Err(self.error(JsonErrorKind::Syntax(
                                    "unexpected end of input in an object",
                                )))
                            }
                            Some(_) => {
                                return Err(self.error(JsonErrorKind::Syntax("expected ',' or '}'")))
                            }
                        }
                    }
                }
                if next == Some(b',') {
                    stack.push(open);
                    break;
                }
                // The container closed: it is the finished value now.
                done = match open {
                    Open::Array { pos, items } => Node {
                        pos,
                        value: Value::Array(items),
                    },
                    Open::Object { pos, members, .. } => Node {
                        pos,
                        value: Value::Object(members),
                    },
                };
            }
        }
    }

    fn skip_whitespace_then_pos(&mut self) -> usize {
        self.skip_whitespace();
        self.pos
    }

    /// A scalar value: string, number or literal.
    fn scalar(&mut self) -> Result<Node<'a>, JsonError> {
        let pos = self.pos;
        let value = match self.peek() {
            None => {
                return Err(self.error(JsonErrorKind::Syntax(
                    "unexpected end of input, expected a value",
                )))
            }
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
            Some(_) if self.eat_literal("null") => Value::Null,
            Some(_) if self.eat_literal("true") => Value::Bool(true),
            Some(_) if self.eat_literal("false") => Value::Bool(false),
            Some(_) if self.eat_literal("NaN") => Value::Number("NaN"),
            Some(_) if self.eat_literal("Infinity") => Value::Number("Infinity"),
            Some(_) => return Err(self.error(JsonErrorKind::Syntax("expected a value"))),
        };
        Ok(Node { pos, value })
    }

    /// A key and the colon after it; returns the key and where it starts.
    fn key(&mut self) -> Result<(Cow<'a, [u8]>, usize), JsonError> {
        self.skip_whitespace();
        let key_pos = self.pos;
        match self.peek() {
            Some(b'"') => {}
            None => {
                return Err(self.error(JsonErrorKind::Syntax(
                    "unexpected end of input in an object",
                )))
            }
            Some(_) => {
                return Err(self.error(JsonErrorKind::Syntax("expected a key in double quotes")))
            }
        }
        let key = self.string()?;
        self.skip_whitespace();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok((key, key_pos))
            }
            None => Err(self.error(JsonErrorKind::Syntax(
                "unexpected end of input in an object",
            ))),
            Some(_) => Err(self.error(JsonErrorKind::Syntax("expected ':' after a key"))),
        }
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, or `-Infinity`.
    fn number(&mut self) -> Result<&'a str, JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
            if self.eat_literal("Infinity") {
                return Ok(&self.text[start..self.pos]);
            }
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error(JsonErrorKind::Syntax("expected a digit after '-'"))),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(JsonErrorKind::Syntax("expected a digit after '.'")));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error(JsonErrorKind::Syntax("expected a digit in the exponent")));
            }
            self.digits();
        }
        Ok(&self.text[start..self.pos])
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A string, borrowed when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, [u8]>, JsonError> {
        let open = self.pos;
        self.pos += 1; // '"'
        let start = self.pos;
        loop {
            match self.peek() {
                None => {
                    return Err(self.error_at(open, JsonErrorKind::Syntax("unterminated string")))
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Borrowed(&self.bytes[start..self.pos - 1]));
                }
                Some(b'\\') => break,
                Some(0x00..=0x1f) => {
                    return Err(self.error(JsonErrorKind::Syntax("control character in a string")))
                }
                Some(_) => self.pos += 1,
            }
        }
        let mut out = self.bytes[start..self.pos].to_vec();
        loop {
            match self.peek() {
                None => {
                    return Err(self.error_at(open, JsonErrorKind::Syntax("unterminated string")))
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(0x00..=0x1f) => {
                    return Err(self.error(JsonErrorKind::Syntax("control character in a string")))
                }
                Some(byte) => {
                    out.push(byte);
                    self.pos += 1;
                }
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let escape_pos = self.pos;
        self.pos += 1; // '\\'
        let simple = match self.peek() {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                self.pos += 1;
                let unit = self.hex4(escape_pos)?;
                let code = if (0xd800..0xdc00).contains(&unit)
                    && self.bytes[self.pos..].starts_with(b"\\u")
                {
                    // A high surrogate pairs with an immediately following low one.
                    let save = self.pos;
                    self.pos += 2;
                    let low = self.hex4(save)?;
                    if (0xdc00..0xe000).contains(&low) {
                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                    } else {
                        self.pos = save;
                        unit
                    }
                } else {
                    unit
                };
                push_wtf8(out, code);
                return Ok(());
            }
            _ => {
                return Err(self.error_at(
                    escape_pos,
                    JsonErrorKind::Syntax("invalid escape in a string"),
                ))
            }
        };
        out.push(simple);
        self.pos += 1;
        Ok(())
    }

    fn hex4(&mut self, escape_pos: usize) -> Result<u32, JsonError> {
        let mut code = 0u32;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|b| char::from(b).to_digit(16))
                .ok_or_else(|| {
                    self.error_at(
                        escape_pos,
                        JsonErrorKind::Syntax("invalid \\u escape in a string"),
                    )
                })?;
            code = code * 16 + digit;
            self.pos += 1;
        }
        Ok(code)
    }
}

/// Appends one code point (a surrogate too) in WTF-8.
fn push_wtf8(out: &mut Vec<u8>, code: u32) {
    // The shifts and masks below keep every value within a byte.
    if code < 0x80 {
        out.push(code as u8);
    } else if code < 0x800 {
        out.extend_from_slice(&[0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8]);
    } else if code < 0x10000 {
        out.extend_from_slice(&[
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xf0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Node<'_>, String> {
        parse_document(text).map_err(|e| e.to_string())
    }

    #[test]
    fn keeps_raw_numbers_and_positions() {
        let node = parse(r#" {"a": [1.50, -0, 1e3, NaN, -Infinity]}"#).unwrap();
        assert_eq!(node.pos, 1);
        let Value::Object(members) = node.value else {
            panic!()
        };
        assert_eq!(&*members[0].key, b"a");
        assert_eq!(members[0].key_pos, 2);
        let Value::Array(items) = &members[0].value.value else {
            panic!()
        };
        let raw: Vec<&str> = items
            .iter()
            .map(|n| match n.value {
                Value::Number(text) => text,
                _ => panic!(),
            })
            .collect();
        assert_eq!(raw, ["1.50", "-0", "1e3", "NaN", "-Infinity"]);
        assert_eq!(items[1].pos, 14);
    }

    #[test]
    fn decodes_escapes_and_surrogates_as_wtf8() {
        let node = parse(r#"["a\n\u00e9\ud83d\ude00", "\ud800x", "\udc00\ud800"]"#).unwrap();
        let Value::Array(items) = node.value else {
            panic!()
        };
        let strings: Vec<Vec<u8>> = items
            .into_iter()
            .map(|n| match n.value {
                Value::String(s) => s.into_owned(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(strings[0], "a\né😀".as_bytes());
        assert_eq!(strings[1], b"\xed\xa0\x80x");
        assert_eq!(strings[2], b"\xed\xb0\x80\xed\xa0\x80");
    }

    #[test]
    fn rejects_what_python_json_rejects() {
        for (text, message) in [
            (
                "",
                "unexpected end of input, expected a value at line 1 column 1",
            ),
            (
                "{\"a\":1,}",
                "expected a key in double quotes at line 1 column 8",
            ),
            ("[1,]", "expected a value at line 1 column 4"),
            (
                "01",
                "trailing characters after the value at line 1 column 2",
            ),
            ("1.", "expected a digit after '.' at line 1 column 3"),
            ("\n -", "expected a digit after '-' at line 2 column 3"),
            (
                "\"a\tb\"",
                "control character in a string at line 1 column 3",
            ),
            ("\"\\x\"", "invalid escape in a string at line 1 column 2"),
            (
                "\"\\u12g4\"",
                "invalid \\u escape in a string at line 1 column 2",
            ),
            ("\"abc", "unterminated string at line 1 column 1"),
            (
                "{\"a\":1,\"a\":2}",
                "duplicate key \"a\" at line 1 column 8",
            ),
            (
                "\u{feff}{}",
                "unexpected byte order mark at line 1 column 1",
            ),
            ("nul", "expected a value at line 1 column 1"),
            (
                "[] []",
                "trailing characters after the value at line 1 column 4",
            ),
            ("{\"é\": 1 x", "expected ',' or '}' at line 1 column 9"),
        ] {
            assert_eq!(parse(text).unwrap_err(), message, "{text:?}");
        }
    }

    #[test]
    fn duplicate_keys_are_found_in_large_objects() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":0}");
        assert!(parse(&text)
            .unwrap_err()
            .starts_with("duplicate key \"k3\""));
        // Escaped and plain spellings of one key are the same key.
        assert!(parse(r#"{"a":1,"\u0061":2}"#)
            .unwrap_err()
            .starts_with("duplicate key \"a\""));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_NESTING) + &"]".repeat(MAX_NESTING);
        assert!(parse(&deep).is_ok());
        let deeper = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert_eq!(
            parse(&deeper).unwrap_err(),
            format!(
                "arrays and objects nest deeper than {MAX_NESTING} levels at line 1 column {}",
                MAX_NESTING + 1
            )
        );
        let hostile = "[".repeat(1_000_000);
        assert!(parse(&hostile).is_err());
    }
}
