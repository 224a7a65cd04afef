//! JSON syntax, read one token at a time: what the message reader ([`super::read`])
//! pulls straight from the text, with the byte offset of every value and key and the
//! raw text of every number, and a checker that steps over a whole value the reader
//! does not map (an ignored field, or the rest of the text after an error).
//!
//! The accepted syntax is that of Python's `json.loads`, which Google's
//! `json_format.Parse` uses: RFC 8259 plus the literals `NaN`, `Infinity` and
//! `-Infinity`, and `\u` escapes of unpaired surrogates. Strings are therefore kept
//! as WTF-8 bytes (UTF-8 that may also encode surrogate code points), which compare
//! exactly as Python's `str` does; a string that must be text is checked later. An
//! object with the same key twice is malformed, as `json_format`'s duplicate checker
//! makes it.

use std::borrow::Cow;

use super::error::{JsonError, JsonErrorKind};

/// How deeply arrays and objects may nest. Python's limit is its interpreter's
/// recursion limit (about 1000); this one bounds the checker's stack of open
/// containers while leaving room for the deepest message [`super::MAX_MESSAGE_DEPTH`]
/// allows (two levels per nested `tuple_shapes`).
pub(crate) const MAX_NESTING: usize = 512;

/// Objects with at least this many keys check duplicates with a hash set.
const HASH_KEYS_FROM: usize = 16;

/// One JSON value as [`Lexer::token`] sees it: a scalar, read whole, or the start of
/// an array or object, not consumed yet.
#[derive(Debug)]
pub(crate) enum Token<'a> {
    Null,
    Bool(bool),
    /// The number's text as written: JSON number syntax, or `NaN`, `Infinity`, `-Infinity`.
    Number(&'a str),
    /// WTF-8 bytes: UTF-8, except that unpaired `\u` surrogates are encoded too.
    String(Cow<'a, [u8]>),
    /// A `[`: enter it with [`Lexer::open`] or step over it with [`Lexer::skip_value`].
    Array,
    /// A `{`: enter it with [`Lexer::open`] or step over it with [`Lexer::skip_value`].
    Object,
}

impl Token<'_> {
    /// The JSON type's name, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Token::Null => "null",
            Token::Bool(_) => "boolean",
            Token::Number(_) => "number",
            Token::String(_) => "string",
            Token::Array => "array",
            Token::Object => "object",
        }
    }
}

/// The keys of one object so far, compared after unescaping (`"a"` and `"\u0061"` are
/// the same key), to find one given twice.
#[derive(Debug, Default)]
pub(crate) struct KeySet<'a> {
    keys: Vec<Cow<'a, [u8]>>,
    /// All the keys, once there are enough of them for hashing to pay.
    hashed: Option<HashedKeys<'a>>,
}

/// The keys of a large object, kept small: a key written without escapes (the usual
/// case) as its place in the text, 8 bytes, so that an object of millions of keys
/// costs about its own size (a set of the keys themselves cost 85 bytes a key).
struct HashedKeys<'a> {
    /// The whole text the keys are read from.
    text: &'a [u8],
    /// Each key: `(offset << 24) | len` of a key in `text`, or [`OWNED`] and its index
    /// in `owned`.
    table: hashbrown::HashTable<u64>,
    owned: Vec<Box<[u8]>>,
    hasher: foldhash::quality::RandomState,
}

/// The bit of a [`HashedKeys`] entry that marks a key kept in `owned`.
const OWNED: u64 = 1 << 63;

impl std::fmt::Debug for HashedKeys<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HashedKeys({} keys)", self.table.len())
    }
}

impl<'a> HashedKeys<'a> {
    fn key<'t>(text: &'t [u8], owned: &'t [Box<[u8]>], entry: u64) -> &'t [u8] {
        if entry & OWNED != 0 {
            let index = usize::try_from(entry & !OWNED).unwrap_or(usize::MAX);
            return owned.get(index).map_or(&[], |key| key);
        }
        let (offset, len) = (entry >> 24, entry & 0xff_ffff);
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(len).unwrap_or(0));
        text.get(start..end).unwrap_or_default()
    }

    /// Adds a key; false if it was there already.
    fn insert(&mut self, key: Cow<'a, [u8]>) -> bool {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(&*key);
        let (text, owned) = (self.text, &self.owned);
        if self
            .table
            .find(hash, |&entry| Self::key(text, owned, entry) == &*key)
            .is_some()
        {
            return false;
        }
        // A borrowed key is a slice of the text: its place there.
        let place = match &key {
            Cow::Borrowed(slice) => {
                let offset = (slice.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
                let inside = text.get(offset..offset.wrapping_add(slice.len())) == Some(*slice);
                let (offset, len) = (offset as u64, slice.len() as u64);
                (inside && offset < 1 << 39 && len < 1 << 24).then_some((offset << 24) | len)
            }
            Cow::Owned(_) => None,
        };
        let entry = place.unwrap_or_else(|| {
            self.owned.push(key.into_owned().into_boxed_slice());
            OWNED | (self.owned.len() as u64 - 1)
        });
        let (text, owned, hasher) = (self.text, &self.owned, &self.hasher);
        self.table.insert_unique(hash, entry, |&entry| {
            hasher.hash_one(Self::key(text, owned, entry))
        });
        true
    }
}

impl<'a> KeySet<'a> {
    /// Adds a key of an object in `text`; false if it was there already.
    pub(crate) fn insert(&mut self, key: Cow<'a, [u8]>, text: &'a [u8]) -> bool {
        if let Some(set) = &mut self.hashed {
            return set.insert(key);
        }
        if self.keys.contains(&key) {
            return false;
        }
        self.keys.push(key);
        if self.keys.len() >= HASH_KEYS_FROM {
            let mut set = HashedKeys {
                text,
                table: hashbrown::HashTable::new(),
                owned: Vec::new(),
                hasher: foldhash::quality::RandomState::default(),
            };
            for key in self.keys.drain(..) {
                set.insert(key);
            }
            self.hashed = Some(set);
        }
        true
    }
}

/// A position in a JSON text.
#[derive(Clone)]
pub(crate) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`. A byte order mark is an error, as it is for
    /// Python's `json.loads` given a `str`.
    pub(crate) fn new(text: &'a str) -> Result<Self, Box<JsonError>> {
        let lexer = Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        if lexer.bytes.starts_with("\u{feff}".as_bytes()) {
            return Err(lexer.error_at(0, JsonErrorKind::Syntax("unexpected byte order mark")));
        }
        Ok(lexer)
    }

    #[cold]
    fn error(&self, kind: JsonErrorKind) -> Box<JsonError> {
        self.error_at(self.pos, kind)
    }

    #[cold]
    fn error_at(&self, pos: usize, kind: JsonErrorKind) -> Box<JsonError> {
        Box::new(JsonError::at_offset(self.text, pos, kind))
    }

    /// The error for a key an object already has, at `key_pos`.
    #[cold]
    pub(crate) fn duplicate_key(&self, key: &[u8], key_pos: usize) -> Box<JsonError> {
        let key = String::from_utf8_lossy(key).into_owned();
        self.error_at(key_pos, JsonErrorKind::DuplicateKey { key })
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline]
    fn eat_literal(&mut self, literal: &str) -> bool {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    /// The next value and where it starts (after any whitespace). A scalar is read
    /// whole; an array or object is only seen.
    #[inline]
    pub(crate) fn token(&mut self) -> Result<(usize, Token<'a>), Box<JsonError>> {
        self.skip_whitespace();
        let pos = self.pos;
        let token = match self.peek() {
            None => {
                return Err(self.error(JsonErrorKind::Syntax(
                    "unexpected end of input, expected a value",
                )))
            }
            Some(b'[') => Token::Array,
            Some(b'{') => Token::Object,
            Some(b'"') => Token::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Token::Number(self.number()?),
            Some(b'n') if self.eat_literal("null") => Token::Null,
            Some(b't') if self.eat_literal("true") => Token::Bool(true),
            Some(b'f') if self.eat_literal("false") => Token::Bool(false),
            Some(b'N') if self.eat_literal("NaN") => Token::Number("NaN"),
            Some(b'I') if self.eat_literal("Infinity") => Token::Number("Infinity"),
            Some(_) => return Err(self.error(JsonErrorKind::Syntax("expected a value"))),
        };
        Ok((pos, token))
    }

    /// Enters the array or object [`Self::token`] just saw, with `nesting` arrays and
    /// objects open around it. True when it has an element, which comes next (for an
    /// object, read its key with [`Self::key`]); false when it is empty, and closed.
    #[inline]
    pub(crate) fn open(&mut self, nesting: usize) -> Result<bool, Box<JsonError>> {
        if nesting >= MAX_NESTING {
            return Err(self.error(JsonErrorKind::NestingTooDeep { limit: MAX_NESTING }));
        }
        let close = match self.peek() {
            Some(b'[') => b']',
            _ => b'}',
        };
        self.pos += 1;
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After an element of an array: true when another follows (its value comes
    /// next), false when the array ends here.
    #[inline]
    pub(crate) fn next_in_array(&mut self) -> Result<bool, Box<JsonError>> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.error(JsonErrorKind::Syntax("unexpected end of input in an array"))),
            Some(_) => Err(self.error(JsonErrorKind::Syntax("expected ',' or ']'"))),
        }
    }

    /// After a value of an object: true when another key follows (read it with
    /// [`Self::key`]), false when the object ends here.
    #[inline]
    pub(crate) fn next_in_object(&mut self) -> Result<bool, Box<JsonError>> {
        self.skip_whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                Ok(false)
            }
            None => Err(self.error(JsonErrorKind::Syntax(
                "unexpected end of input in an object",
            ))),
            Some(_) => Err(self.error(JsonErrorKind::Syntax("expected ',' or '}'"))),
        }
    }

    /// A key and the colon after it; returns the key and where it starts.
    #[inline]
    pub(crate) fn key(&mut self) -> Result<(Cow<'a, [u8]>, usize), Box<JsonError>> {
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

    /// The whole text, as bytes.
    pub(crate) fn text_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Steps over the next value, checking it as closely as a value that is read:
    /// syntax, nesting (with `nesting` arrays and objects open around it) and
    /// duplicate keys. Its containers are tracked on the heap, not the call stack.
    pub(crate) fn skip_value(&mut self, nesting: usize) -> Result<(), Box<JsonError>> {
        // The arrays (`None`) and objects (their keys so far) open inside the value.
        let mut open: Vec<Option<KeySet<'a>>> = Vec::new();
        loop {
            // A value; a non-empty array or object is entered, and its first element
            // stepped over on the next turn.
            let (_, token) = self.token()?;
            let container = matches!(token, Token::Array | Token::Object);
            if container && self.open(nesting + open.len())? {
                let keys = match token {
                    Token::Object => {
                        let mut keys = KeySet::default();
                        keys.insert(self.key()?.0, self.bytes);
                        Some(keys)
                    }
                    _ => None,
                };
                open.push(keys);
                continue;
            }
            // Close every container that ends after it, up to one with more to come.
            loop {
                let more = match open.last_mut() {
                    None => return Ok(()),
                    Some(None) => self.next_in_array()?,
                    Some(Some(keys)) => {
                        let more = self.next_in_object()?;
                        if more {
                            let (key, key_pos) = self.key()?;
                            if !keys.insert(key.clone(), self.bytes) {
                                return Err(self.duplicate_key(&key, key_pos));
                            }
                        }
                        more
                    }
                };
                if more {
                    break;
                }
                open.pop();
            }
        }
    }

    /// Steps over the array or object [`Self::token`] just saw by its brackets and
    /// strings alone, checking nothing else: a look-ahead, whose text the reader reads
    /// properly later. False when the text ends first.
    pub(crate) fn skip_container(&mut self) -> bool {
        let bytes = self.bytes;
        let mut depth = 0usize;
        let mut i = self.pos;
        while let Some(k) = bytes.get(i..).and_then(|rest| {
            rest.iter()
                .position(|b| matches!(b, b'"' | b'[' | b']' | b'{' | b'}'))
        }) {
            i += k;
            match bytes[i] {
                b'"' => loop {
                    i += 1;
                    match bytes
                        .get(i..)
                        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                    {
                        Some(k) if bytes[i + k] == b'\\' => i += k + 1,
                        Some(k) => {
                            i += k;
                            break;
                        }
                        None => return false,
                    }
                },
                b'[' | b'{' => depth += 1,
                _ => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.pos = i + 1;
                        return true;
                    }
                }
            }
            i += 1;
        }
        false
    }

    /// The end of the text: nothing but whitespace may follow the value.
    pub(crate) fn end(&mut self) -> Result<(), Box<JsonError>> {
        self.skip_whitespace();
        if self.pos < self.bytes.len() {
            return Err(self.error(JsonErrorKind::Syntax("trailing characters after the value")));
        }
        Ok(())
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, or `-Infinity`.
    fn number(&mut self) -> Result<&'a str, Box<JsonError>> {
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
    #[inline]
    fn string(&mut self) -> Result<Cow<'a, [u8]>, Box<JsonError>> {
        let open = self.pos;
        let start = open + 1; // after '"'
        self.pos = start + plain_run(&self.bytes[start..]);
        if self.peek() != Some(b'"') {
            return self.escaped_string(open);
        }
        self.pos += 1;
        Ok(Cow::Borrowed(&self.bytes[start..self.pos - 1]))
    }

    /// The rest of a string that does not end at the first stop of
    /// [`plain_run`]: a string with escapes, or no string at all.
    #[inline(never)]
    fn escaped_string(&mut self, open: usize) -> Result<Cow<'a, [u8]>, Box<JsonError>> {
        let start = open + 1;
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

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), Box<JsonError>> {
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

    fn hex4(&mut self, escape_pos: usize) -> Result<u32, Box<JsonError>> {
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

/// How many bytes at the start of `bytes` a string holds as they are: those before
/// the first `"`, `\\` or control character. Eight bytes at a time.
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of every byte of `x` below `n` (at most 0x80), and maybe of some
    // bytes above one that is: the lowest bit set is always exact.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let stops = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let mut chunks = bytes.chunks_exact(8);
    let mut run = 0;
    for chunk in &mut chunks {
        let Ok(chunk) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let x = u64::from_le_bytes(chunk);
        let found = below(x ^ (ONES * u64::from(b'"')), 1)
            | below(x ^ (ONES * u64::from(b'\\')), 1)
            | below(x, 0x20);
        if found != 0 {
            return run + (found.trailing_zeros() / 8) as usize;
        }
        run += 8;
    }
    let rest = chunks.remainder();
    run + rest.iter().position(|&b| stops(b)).unwrap_or(rest.len())
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

    /// Checks a whole document: one value, with only whitespace around it.
    fn check(text: &str) -> Result<(), String> {
        let check = || {
            let mut lexer = Lexer::new(text)?;
            lexer.skip_value(0)?;
            lexer.end()
        };
        check().map_err(|e: Box<JsonError>| e.to_string())
    }

    /// The tokens of the array of scalars that comes next, with their positions.
    fn scalars<'a>(lexer: &mut Lexer<'a>) -> Vec<(usize, Token<'a>)> {
        assert!(matches!(lexer.token().unwrap().1, Token::Array));
        assert!(lexer.open(0).unwrap());
        let mut tokens = vec![lexer.token().unwrap()];
        while lexer.next_in_array().unwrap() {
            tokens.push(lexer.token().unwrap());
        }
        tokens
    }

    #[test]
    fn keeps_raw_numbers_and_positions() {
        let mut lexer = Lexer::new(r#" {"a": [1.50, -0, 1e3, NaN, -Infinity]}"#).unwrap();
        let (pos, token) = lexer.token().unwrap();
        assert!(matches!(token, Token::Object));
        assert_eq!(pos, 1);
        assert!(lexer.open(0).unwrap());
        let (key, key_pos) = lexer.key().unwrap();
        assert_eq!(&*key, b"a");
        assert_eq!(key_pos, 2);
        let tokens = scalars(&mut lexer);
        let raw: Vec<&str> = tokens
            .iter()
            .map(|(_, token)| match token {
                Token::Number(text) => *text,
                _ => panic!(),
            })
            .collect();
        assert_eq!(raw, ["1.50", "-0", "1e3", "NaN", "-Infinity"]);
        assert_eq!(tokens[1].0, 14);
        assert!(!lexer.next_in_object().unwrap());
        lexer.end().unwrap();
    }

    #[test]
    fn decodes_escapes_and_surrogates_as_wtf8() {
        let mut lexer =
            Lexer::new(r#"["a\n\u00e9\ud83d\ude00", "\ud800x", "\udc00\ud800"]"#).unwrap();
        let strings: Vec<Vec<u8>> = scalars(&mut lexer)
            .into_iter()
            .map(|(_, token)| match token {
                Token::String(s) => s.into_owned(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(strings[0], "a\né😀".as_bytes());
        assert_eq!(strings[1], b"\xed\xa0\x80x");
        assert_eq!(strings[2], b"\xed\xb0\x80\xed\xa0\x80");
    }

    #[test]
    fn plain_runs_stop_where_a_string_needs_a_look() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .unwrap_or(bytes.len())
        };
        let mut bytes = Vec::new();
        for stop in [b'"', b'\\', 0x00, 0x1f, b' ', 0x7f, 0x80, 0xff] {
            for len in 0..20 {
                for at in 0..=len {
                    bytes.clear();
                    // Bytes next to the stops, and ones that borrow in the arithmetic.
                    bytes.extend((0..len).map(|i| [b'a', 0x21, 0x5d, 0xa0, 0x9f][i % 5]));
                    if at < len {
                        bytes[at] = stop;
                    }
                    assert_eq!(plain_run(&bytes), naive(&bytes), "{bytes:?}");
                }
            }
        }
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
            assert_eq!(check(text).unwrap_err(), message, "{text:?}");
        }
    }

    #[test]
    fn duplicate_keys_are_found_in_large_objects() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":0}");
        assert!(check(&text)
            .unwrap_err()
            .starts_with("duplicate key \"k3\""));
        // Escaped and plain spellings of one key are the same key.
        assert!(check(r#"{"a":1,"\u0061":2}"#)
            .unwrap_err()
            .starts_with("duplicate key \"a\""));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_NESTING) + &"]".repeat(MAX_NESTING);
        assert!(check(&deep).is_ok());
        let deeper = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert_eq!(
            check(&deeper).unwrap_err(),
            format!(
                "arrays and objects nest deeper than {MAX_NESTING} levels at line 1 column {}",
                MAX_NESTING + 1
            )
        );
        let hostile = "[".repeat(1_000_000);
        assert!(check(&hostile).is_err());
    }
}
