//! The tokens of HLO module text, read line by line.
//!
//! The lexer follows XLA's `hlo_lexer.cc` as far as module structure needs: words
//! (`[A-Za-z_][A-Za-z0-9_.-]*`), `%names`, `name:` labels, `attr=` attribute names,
//! numbers and patterns (`1_2x3_4`, `b01f_01io->b01f`), strings (which may span lines),
//! `->`, `<=` and single punctuation, with `/* */` (spanning lines) and `//` comments
//! skipped. It holds one line at a time, so memory stays flat whatever the module's
//! size; a token's text can be read while its line is the current one.

use std::io::BufRead;

use crate::text::cursor::{is_ident_byte, is_ident_start};

use super::line::{call_value_end, CallSink, CallSlot};

/// What kind of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The end of the input.
    Eof,
    /// An identifier that is none of the kinds below (keywords, opcodes, type words).
    Word,
    /// `%name`.
    Name,
    /// `name:` (XLA lexes an identifier followed by `:` as a name).
    Label,
    /// `name=` (an attribute name).
    Attr,
    /// A number or a numeric pattern.
    Number,
    /// A string literal.
    Str,
    /// `->`.
    Arrow,
    /// `<=`.
    Leq,
    /// Any other single byte.
    Punct(u8),
}

/// A token: its kind and where it is (1-based line, byte range in that line).
#[derive(Clone, Copy, Debug)]
pub(super) struct Token {
    pub kind: Kind,
    pub line: usize,
    pub start: usize,
    pub end: usize,
    /// Whether it is the first token of its line.
    pub first_on_line: bool,
}

/// A plain token [`Lexer::peek_plain`] read: the line number and read position it was
/// read at, and the token (but whether it is the first on its line, which changes as
/// the line is read).
#[derive(Clone, Copy)]
struct PlainSeen {
    at: (usize, usize),
    kind: Kind,
    line: usize,
    start: usize,
    end: usize,
}

/// A line that is not UTF-8: its number and the column where it breaks.
#[derive(Clone, Copy, Debug)]
pub(super) struct BadLine {
    pub line: usize,
    pub column: usize,
}

pub(super) struct Lexer<R> {
    reader: R,
    /// Whether the reader has given all it has.
    reader_done: bool,
    /// The bytes of the next chunk, as read.
    raw: Vec<u8>,
    /// How many bytes of lines to read at a time ([`CHUNK`]; smaller in tests).
    pub chunk: usize,
    /// Whether [`Self::skip_plain_value`] reads values at byte level (tests turn it
    /// off to hold it to the token path).
    #[cfg(test)]
    pub plain_values: bool,
    /// Whole lines read from the reader (at least [`CHUNK`] bytes of them at a time,
    /// or one longer line), UTF-8 checked at once; a line that is not UTF-8 is held as
    /// an empty line (`\n`) and noted in `bad`.
    buf: String,
    /// The current line in `buf`, or several lines joined (with their breaks) while a
    /// shape that spans lines is read.
    line_start: usize,
    line_end: usize,
    /// Whether `buf` is all ASCII (then a column is a byte count).
    ascii: bool,
    /// Where the next line starts in `buf`.
    next: usize,
    /// Where lines that were not UTF-8 start in `buf`, with the column where each
    /// breaks, in order; reported as they are read.
    bad: std::collections::VecDeque<(usize, usize)>,
    /// The number of the first line in the current line.
    first_line_no: usize,
    /// The number of the last line read.
    line_no: usize,
    pos: usize,
    eof: bool,
    /// Inside a `/* */` comment or a string that started on an earlier line.
    open: Option<Open>,
    peeked: Option<Token>,
    /// Whether a token has been read from the current line.
    line_has_token: bool,
    /// The last token [`Self::peek_plain`] read, by the line number and position it was
    /// read at (a line's bytes at a position do not change while its number stays,
    /// except at the end of the input, where the memo is dropped).
    plain_memo: std::cell::Cell<Option<PlainSeen>>,
    /// The last [`Self::line_of`] answer, as (the first line's number, byte, line), to
    /// count on from: each token of lines joined for a long shape looked up its line
    /// from the first one's start, the square of the joined length.
    line_memo: std::cell::Cell<(usize, usize, usize)>,
    /// Lines that were not UTF-8 (read as empty), for the caller to report.
    pub bad_lines: Vec<BadLine>,
    /// Where an unterminated comment or string started, if the input ended inside one.
    pub unterminated: Option<(usize, usize, &'static str)>,
}

#[derive(Clone, Copy)]
enum Open {
    Comment {
        line: usize,
        column: usize,
    },
    Str {
        quote: u8,
        line: usize,
        column: usize,
    },
}

impl<R: BufRead> Lexer<R> {
    pub fn new(reader: R) -> Self {
        Lexer {
            reader,
            reader_done: false,
            raw: Vec::new(),
            chunk: CHUNK,
            #[cfg(test)]
            plain_values: true,
            buf: String::new(),
            line_start: 0,
            line_end: 0,
            ascii: true,
            next: 0,
            bad: std::collections::VecDeque::new(),
            first_line_no: 0,
            line_no: 0,
            pos: 0,
            eof: false,
            open: None,
            peeked: None,
            line_has_token: false,
            plain_memo: std::cell::Cell::new(None),
            line_memo: std::cell::Cell::new((0, 0, 0)),
            bad_lines: Vec::new(),
            unterminated: None,
        }
    }

    /// The current line (with its line break, if any).
    pub fn line(&self) -> &str {
        &self.buf[self.line_start..self.line_end]
    }

    /// The current line's bytes, borrowing only the buffer (so the position may be
    /// set while they are in use).
    fn bytes(&self) -> &[u8] {
        &self.buf.as_bytes()[self.line_start..self.line_end]
    }

    /// The number of the last line read (1-based; 0 before the first).
    pub fn line_no(&self) -> usize {
        self.line_no
    }

    /// Whether the buffer holds one line only (no lines joined for a long shape).
    pub fn single_line(&self) -> bool {
        self.first_line_no == self.line_no
    }

    /// The text of `token`, if its line is still in the buffer.
    pub fn text(&self, token: &Token) -> &str {
        if token.line >= self.first_line_no && token.line <= self.line_no {
            self.line().get(token.start..token.end).unwrap_or("")
        } else {
            ""
        }
    }

    /// The 1-based line of byte `pos` of the buffer.
    pub fn line_of(&self, pos: usize) -> usize {
        if self.first_line_no == self.line_no {
            return self.line_no;
        }
        let line = self.bytes();
        let pos = pos.min(line.len());
        let (first, from, mut line_no) = self.line_memo.get();
        let from = if first == self.first_line_no && from <= pos {
            from
        } else {
            line_no = self.first_line_no;
            0
        };
        line_no += memchr::memchr_iter(b'\n', &line[from..pos]).count();
        self.line_memo.set((self.first_line_no, pos, line_no));
        line_no
    }

    /// 1-based column, in characters, of byte `pos` of the buffer (counted from the
    /// start of its own line).
    pub fn column(&self, pos: usize) -> usize {
        let line = self.bytes();
        let pos = pos.min(line.len());
        let before = &line[..pos];
        // A single line holds a line break only at its end.
        let line_start = if self.first_line_no == self.line_no && !before.ends_with(b"\n") {
            0
        } else {
            memchr::memrchr(b'\n', before).map_or(0, |i| i + 1)
        };
        let before = &before[line_start..];
        if self.ascii || before.is_ascii() {
            return before.len() + 1;
        }
        self.line()
            .get(line_start..pos)
            .map_or(before.len(), |s| s.chars().count())
            + 1
    }

    /// Appends the next line to the buffer (for a shape that goes on past the end of
    /// its line); false at the end of the input or past `max_bytes`.
    pub fn extend_line(&mut self, max_bytes: usize) -> std::io::Result<bool> {
        if self.eof || self.line_end - self.line_start > max_bytes || self.open.is_some() {
            return Ok(false);
        }
        if self.next >= self.buf.len() && !self.fill(Some(self.line_start))? {
            return Ok(false);
        }
        // The next line follows the current one in the buffer.
        self.line_end = self.take_next_line();
        self.line_has_token = true;
        Ok(true)
    }

    /// The first byte after spaces and tabs of the line after the current one (`\n`
    /// for a blank line), read into the buffer behind the current line, which stays
    /// whole; `None` at the end of the input or inside a comment or string the lexer
    /// has open.
    pub fn next_line_head(&mut self) -> std::io::Result<Option<u8>> {
        if self.eof || self.open.is_some() {
            return Ok(None);
        }
        if self.next >= self.buf.len() && !self.fill(Some(self.line_start))? {
            return Ok(None);
        }
        let rest = &self.buf.as_bytes()[self.next..];
        Ok(rest
            .iter()
            .copied()
            .find(|b| *b != b' ' && *b != b'\t')
            .or(Some(b'\n')))
    }

    /// Skips the rest of a JSON dictionary whose `{` was the last token taken, as XLA's
    /// `HloLexer::LexJsonDict` reads `backend_config` and frontend attribute values:
    /// byte by byte across lines, counting only `{` and `}`, and skipping strings in
    /// double quotes (with backslash escapes); other brackets, single quotes and
    /// comments are plain bytes there. False when the input ends first.
    pub fn skip_json_dict(&mut self) -> std::io::Result<bool> {
        self.peeked = None;
        let mut dict = JsonDict::default();
        loop {
            if let Some(end) = dict.read(self.bytes(), self.pos) {
                self.pos = end;
                self.line_has_token = true;
                return Ok(true);
            }
            if !self.read_line()? {
                return Ok(false);
            }
        }
    }

    /// The next byte after spaces and tabs on the current line, after byte `pos`.
    pub fn next_byte_after(&self, pos: usize) -> Option<u8> {
        let line = self.bytes();
        line[pos.min(line.len())..]
            .iter()
            .copied()
            .find(|b| *b != b' ' && *b != b'\t')
    }

    /// Moves the read position of the current line to `pos` (after a shape parsed
    /// from the line), dropping a peeked token.
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.line_end - self.line_start);
        self.peeked = None;
        self.line_has_token = true;
    }

    pub fn peek(&mut self) -> std::io::Result<Token> {
        if let Some(token) = self.peeked {
            return Ok(token);
        }
        let token = self.lex()?;
        self.peeked = Some(token);
        Ok(token)
    }

    pub fn next(&mut self) -> std::io::Result<Token> {
        let token = self.peek()?;
        self.peeked = None;
        Ok(token)
    }

    /// Whether the byte-level paths may read on from the current position: no token is
    /// peeked and no comment or string from an earlier line is still open (else only
    /// the token-by-token path knows what comes next).
    fn at_plain(&self) -> bool {
        self.peeked.is_none() && self.open.is_none()
    }

    /// Where the byte-level paths start reading: the current position after spaces and
    /// tabs, or `None` when they may not ([`Self::at_plain`]).
    pub fn plain_start(&self) -> Option<usize> {
        if !self.at_plain() {
            return None;
        }
        Some(blanks(self.bytes(), self.pos))
    }

    /// Consumes the token `Punct(byte)` if it is the next one on this line, read at
    /// byte level (spaces and tabs skipped); false, with nothing consumed, when the
    /// next byte is anything else (which may still lex as that token after a line
    /// break or comment: the caller then reads tokens). A peeked token is used as is.
    pub fn eat(&mut self, byte: u8) -> bool {
        if let Some(token) = self.peeked {
            let hit = token.kind == Kind::Punct(byte);
            if hit {
                self.peeked = None;
            }
            return hit;
        }
        let Some(pos) = self.plain_start() else {
            return false;
        };
        if self.bytes().get(pos) != Some(&byte) {
            return false;
        }
        self.pos = pos + 1;
        self.line_has_token = true;
        true
    }

    /// The next token, as [`Self::peek`] would read it, when it is a `%name`, a word,
    /// a `label:` or an `attr=` on this line after spaces and tabs; `None` (nothing read) for
    /// anything else, or when a token is already peeked. It is not taken: see
    /// [`Self::take`].
    pub fn peek_plain(&self) -> Option<Token> {
        if !self.at_plain() {
            return None;
        }
        // The first token of a line is looked at three times (after the last line's
        // attributes, by the scanner's loop, by the whole-line path): read once.
        let at = (self.line_no, self.pos);
        let seen = match self.plain_memo.get() {
            Some(seen) if seen.at == at => seen,
            _ => {
                let start = blanks(self.bytes(), self.pos);
                let (kind, end) = plain_token(self.bytes(), start)?;
                let seen = PlainSeen {
                    at,
                    kind,
                    line: self.line_of(start),
                    start,
                    end,
                };
                self.plain_memo.set(Some(seen));
                seen
            }
        };
        Some(Token {
            kind: seen.kind,
            line: seen.line,
            start: seen.start,
            end: seen.end,
            first_on_line: !self.line_has_token,
        })
    }

    /// The next token when it is a `%name`, a word, a `label:` or an `attr=` on the
    /// current (single) line: the peeked token, or [`Self::peek_plain`]'s. For the
    /// whole-line paths, which then read the rest of the line at byte level from its
    /// end and [`Self::seek`] past what they read.
    pub fn plain_first(&self) -> Option<Token> {
        match self.peeked {
            Some(token) => {
                let plain = matches!(
                    token.kind,
                    Kind::Word | Kind::Name | Kind::Label | Kind::Attr
                );
                (plain && token.line == self.line_no && self.single_line()).then_some(token)
            }
            None => self.peek_plain(),
        }
    }

    /// [`Self::peek_plain`] at the start of the next line when the rest of this one is
    /// blank (which [`Self::peek`] would skip the same way).
    pub fn peek_plain_line(&mut self) -> std::io::Result<Option<Token>> {
        if self.at_plain() && self.rest_is_blank() {
            self.read_line()?;
        }
        Ok(self.peek_plain())
    }

    /// Takes `token`: the peeked token, or one [`Self::peek_plain`] read.
    pub fn take(&mut self, token: &Token) {
        if self.peeked.take().is_none() {
            // The ':' or '=' after a label or an attribute name is part of its token.
            let glued = matches!(token.kind, Kind::Label | Kind::Attr);
            self.pos = token.end + usize::from(glued);
            self.line_has_token = true;
        }
    }

    /// Whether the next token is certainly `Punct(b)` with `b` in `bytes`: nothing is
    /// peeked and the next byte on this line after spaces and tabs is `b`. Nothing is
    /// consumed.
    pub fn next_is_punct(&self, bytes: &[u8]) -> bool {
        self.plain_start()
            .and_then(|pos| self.bytes().get(pos))
            .is_some_and(|b| bytes.contains(b))
    }

    /// Skips a `{...}` group that opens at the next byte (after spaces and tabs) and
    /// closes on this line with its brackets paired; false, with nothing consumed,
    /// otherwise.
    pub fn skip_group(&mut self) -> bool {
        let Some(pos) = self.plain_start() else {
            return false;
        };
        let bytes = self.bytes();
        if bytes.get(pos) != Some(&b'{') {
            return false;
        }
        match balanced_group_end(bytes, pos) {
            Some(end) => {
                self.pos = end;
                self.line_has_token = true;
                true
            }
            None => false,
        }
    }

    /// Skips an attribute value that is plainly well formed, at byte level: one
    /// balanced `{...}` group, one string, one run of identifier, number and
    /// dim-label bytes (`kLoop`, `%fused.1`, `b01f_01io->b01f`), or an iota list
    /// (`[2,8]<=[16]`), ending on this line at a `,`, a closing bracket or (but for an
    /// iota list) the end of the line. Anything else (an empty value, a group left
    /// open at the end of the line, a comment, an iota list at the end of its line,
    /// mismatched brackets) returns false with nothing consumed: the token-by-token
    /// path reads it and reports what is wrong. Both paths accept the
    /// same values; this one is the fast path for metadata, shardings and the like,
    /// most of the bytes of a real dump.
    pub fn skip_plain_value(&mut self) -> bool {
        #[cfg(test)]
        if !self.plain_values {
            return false;
        }
        let Some(pos) = self.plain_start() else {
            return false;
        };
        match plain_value_end(self.bytes(), pos) {
            Some(end) => {
                self.pos = end;
                self.line_has_token = true;
                true
            }
            None => false,
        }
    }

    /// Skips the value of an attribute that names called computations (`slot`) when it
    /// is plainly well formed, at byte level, as [`call_value_end`] reads it, adding
    /// the names to `calls`; false, with nothing
    /// consumed or added, when the token-by-token path must read it.
    pub fn skip_plain_call_value(&mut self, slot: CallSlot, calls: &mut dyn CallSink) -> bool {
        #[cfg(test)]
        if !self.plain_values {
            return false;
        }
        let Some(pos) = self.plain_start() else {
            return false;
        };
        match call_value_end(self.bytes(), pos, slot, calls, usize::MAX) {
            Some(end) => {
                self.pos = end;
                self.line_has_token = true;
                true
            }
            None => false,
        }
    }

    /// Skips the next line whole when it is a plain entry of the stack frame index
    /// (`12 {file_location_id=3 parent_frame_id=1}`, `1 "main.py"`): a number, then
    /// one `{...}` group or one string, and nothing else. Only when the rest of the
    /// current line is blank and nothing is peeked or open; false when the line is
    /// anything else, which is then read (the token path starts at its first byte,
    /// where [`Self::peek`] would too).
    pub fn skip_plain_frame_line(&mut self) -> std::io::Result<bool> {
        if !self.at_plain() {
            return Ok(false);
        }
        if !self.rest_is_blank() || !self.read_line()? {
            return Ok(false);
        }
        let bytes = self.bytes();
        let mut pos = blanks(bytes, 0);
        let digits = bytes[pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || !matches!(bytes.get(pos + digits), Some(b' ' | b'\t')) {
            return Ok(false);
        }
        pos = blanks(bytes, pos + digits);
        let end = match bytes.get(pos) {
            Some(b'{') => flat_group_end(bytes, pos).or_else(|| balanced_group_end(bytes, pos)),
            Some(&quote @ (b'"' | b'\'')) => string_end(bytes, pos + 1, quote),
            _ => None,
        };
        let plain = end.is_some_and(|end| only_blanks(&bytes[end..]));
        if plain {
            self.pos = bytes.len();
            self.line_has_token = true;
        }
        Ok(plain)
    }

    /// Whether the rest of the current line is spaces, tabs and its line break.
    fn rest_is_blank(&self) -> bool {
        let line = self.bytes();
        only_blanks(&line[self.pos.min(line.len())..])
    }

    /// Drops the rest of the current line.
    pub fn skip_line(&mut self) {
        self.pos = self.line_end - self.line_start;
        self.peeked = None;
        self.open = None;
    }

    /// Makes the next line the current one; false at the end of the input.
    fn read_line(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        // The line's bytes change (at the end, to none) under the same number.
        self.plain_memo.set(None);
        if self.next >= self.buf.len() && !self.fill(None)? {
            self.eof = true;
            self.line_start = self.buf.len();
            self.line_end = self.buf.len();
            self.pos = 0;
            return Ok(false);
        }
        self.line_start = self.next;
        self.line_end = self.take_next_line();
        self.first_line_no = self.line_no;
        self.pos = 0;
        self.line_has_token = false;
        Ok(true)
    }

    /// Counts the line at `next` (which must be in the buffer) as read, noting it if it
    /// was not UTF-8, and returns its end (where the next one starts).
    fn take_next_line(&mut self) -> usize {
        let rest = &self.buf.as_bytes()[self.next..];
        let end = self.next + memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        self.line_no += 1;
        if self.bad.front().is_some_and(|&(at, _)| at == self.next) {
            if let Some((_, column)) = self.bad.pop_front() {
                self.bad_lines.push(BadLine {
                    line: self.line_no,
                    column,
                });
            }
        }
        self.next = end;
        end
    }

    /// Reads the next chunk of whole lines into the buffer, after the lines from
    /// `keep` on (the current line, while a shape is read over lines) or in place of
    /// everything read; false when the input has ended.
    fn fill(&mut self, keep: Option<usize>) -> std::io::Result<bool> {
        if self.reader_done {
            return Ok(false);
        }
        self.raw.clear();
        self.reader_done = read_lines_into(&mut self.reader, &mut self.raw, self.chunk)?;
        if self.raw.is_empty() {
            return Ok(false);
        }
        match keep {
            Some(from) => {
                self.buf.drain(..from);
                self.line_start -= from;
                self.line_end -= from;
                self.next -= from;
                for (at, _) in &mut self.bad {
                    *at -= from;
                }
            }
            None => {
                self.buf.clear();
                self.line_start = 0;
                self.line_end = 0;
                self.next = 0;
                self.bad.clear();
            }
        }
        self.append_chunk();
        self.ascii = self.buf.is_ascii();
        Ok(true)
    }

    /// Appends the chunk read into `raw` to the buffer, UTF-8 checked.
    fn append_chunk(&mut self) {
        if self.buf.is_empty() {
            // The chunk becomes the buffer without a copy; the old buffer is reused
            // for the next chunk.
            let spare = std::mem::take(&mut self.buf).into_bytes();
            match String::from_utf8(std::mem::replace(&mut self.raw, spare)) {
                Ok(text) => {
                    self.buf = text;
                    return;
                }
                Err(e) => self.raw = e.into_bytes(),
            }
        } else if let Ok(text) = std::str::from_utf8(&self.raw) {
            self.buf.push_str(text);
            return;
        }
        // Some line is not UTF-8: line by line, each bad one held as an empty line.
        for line in self.raw.split_inclusive(|&b| b == b'\n') {
            match std::str::from_utf8(line) {
                Ok(text) => self.buf.push_str(text),
                Err(e) => {
                    let valid = std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or("");
                    self.bad
                        .push_back((self.buf.len(), valid.chars().count() + 1));
                    self.buf.push('\n');
                }
            }
        }
    }

    fn token(&mut self, kind: Kind, start: usize) -> Token {
        let first_on_line = !self.line_has_token;
        self.line_has_token = true;
        Token {
            kind,
            line: self.line_of(start),
            start,
            end: self.pos,
            first_on_line,
        }
    }

    fn lex(&mut self) -> std::io::Result<Token> {
        loop {
            if self.pos >= self.line_end - self.line_start {
                if !self.read_line()? {
                    if let Some(open) = self.open.take() {
                        self.unterminated = Some(match open {
                            Open::Comment { line, column } => (line, column, "'/*' comment"),
                            Open::Str { line, column, .. } => (line, column, "string"),
                        });
                    }
                    return Ok(Token {
                        kind: Kind::Eof,
                        line: self.line_no + 1,
                        start: 0,
                        end: 0,
                        first_on_line: true,
                    });
                }
                continue;
            }
            // The buffer's bytes alone, so the position can be set while they are read.
            let bytes = &self.buf.as_bytes()[self.line_start..self.line_end];
            match self.open {
                Some(Open::Comment { .. }) => {
                    match memchr::memmem::find(&bytes[self.pos..], b"*/") {
                        Some(i) => {
                            self.pos += i + 2;
                            self.open = None;
                        }
                        None => self.pos = bytes.len(),
                    }
                    continue;
                }
                Some(Open::Str { quote, .. }) => {
                    match string_end(bytes, self.pos, quote) {
                        Some(end) => {
                            self.pos = end;
                            self.open = None;
                        }
                        None => self.pos = bytes.len(),
                    }
                    continue;
                }
                None => {}
            }
            // Blanks and line breaks, in one step.
            let blanks = bytes[self.pos..]
                .iter()
                .take_while(|&&c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
                .count();
            if blanks > 0 {
                self.pos += blanks;
                continue;
            }
            let start = self.pos;
            let b = bytes[start];
            match b {
                b'/' if bytes.get(start + 1) == Some(&b'*') => {
                    match memchr::memmem::find(&bytes[start + 2..], b"*/") {
                        Some(i) => self.pos = start + 2 + i + 2,
                        None => {
                            self.open = Some(Open::Comment {
                                line: self.line_no,
                                column: self.column(start),
                            });
                            self.pos = bytes.len();
                        }
                    }
                }
                b'/' if bytes.get(start + 1) == Some(&b'/') => {
                    // To the end of this line (the buffer may hold several).
                    self.pos =
                        memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
                }
                b'"' | b'\'' => {
                    match string_end(bytes, start + 1, b) {
                        Some(end) => self.pos = end,
                        None => {
                            self.open = Some(Open::Str {
                                quote: b,
                                line: self.line_no,
                                column: self.column(start),
                            });
                            self.pos = bytes.len();
                        }
                    }
                    return Ok(self.token(Kind::Str, start));
                }
                b'%' => {
                    if bytes.get(start + 1).is_some_and(|&c| is_ident_start(c)) {
                        self.pos = ident_end(bytes, start + 1);
                        return Ok(self.token(Kind::Name, start));
                    }
                    self.pos += 1;
                    return Ok(self.token(Kind::Punct(b'%'), start));
                }
                b'-' if bytes.get(start + 1) == Some(&b'>') => {
                    self.pos += 2;
                    return Ok(self.token(Kind::Arrow, start));
                }
                b'<' if bytes.get(start + 1) == Some(&b'=') => {
                    self.pos += 2;
                    return Ok(self.token(Kind::Leq, start));
                }
                _ if is_ident_start(b) || b.is_ascii_digit() || b == b'-' || b == b'?' => {
                    if let Some(end) = dim_labels_end(bytes, start) {
                        self.pos = end;
                        return Ok(self.token(Kind::Number, start));
                    }
                    if is_ident_start(b) {
                        self.pos = ident_end(bytes, start);
                        let kind = match bytes.get(self.pos) {
                            Some(b':') => Kind::Label,
                            Some(b'=') => Kind::Attr,
                            _ => Kind::Word,
                        };
                        if kind != Kind::Word {
                            let token = self.token(kind, start);
                            self.pos += 1;
                            return Ok(token);
                        }
                        return Ok(self.token(Kind::Word, start));
                    }
                    self.pos = number_end(bytes, start);
                    return Ok(self.token(Kind::Number, start));
                }
                _ => {
                    // One character (a whole UTF-8 sequence for non-ASCII).
                    let width = self.line()[start..]
                        .chars()
                        .next()
                        .map_or(1, char::len_utf8);
                    self.pos += width;
                    return Ok(self.token(Kind::Punct(b), start));
                }
            }
        }
    }
}

/// The token at `start` when it is a `%name`, a word, a `label:` or an `attr=`: its
/// kind and end (before the `:` or `=`); `None` for anything else. What
/// [`Lexer::peek`] reads there too.
pub(super) fn plain_token(bytes: &[u8], start: usize) -> Option<(Kind, usize)> {
    let b = *bytes.get(start)?;
    if b == b'%' {
        if !bytes.get(start + 1).is_some_and(|&c| is_ident_start(c)) {
            return None;
        }
        return Some((Kind::Name, ident_end(bytes, start + 1)));
    }
    if !is_ident_start(b) || dim_labels_end(bytes, start).is_some() {
        return None;
    }
    let end = ident_end(bytes, start);
    let kind = match bytes.get(end) {
        Some(b':') => Kind::Label,
        Some(b'=') => Kind::Attr,
        _ => Kind::Word,
    };
    Some((kind, end))
}

/// Past spaces and tabs from `pos`: what the byte-level steps skip between tokens.
pub(super) fn blanks(bytes: &[u8], mut pos: usize) -> usize {
    while matches!(bytes.get(pos), Some(b' ' | b'\t')) {
        pos += 1;
    }
    pos
}

/// Whether `bytes` are only spaces, tabs and line breaks.
pub(super) fn only_blanks(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The end of the plain attribute value at `pos` (see [`Lexer::skip_plain_value`]).
pub(super) fn plain_value_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let end = match bytes.get(pos) {
        Some(b'{') => balanced_group_end(bytes, pos),
        Some(b'[') => return iota_list_end(bytes, pos),
        Some(&quote @ (b'"' | b'\'')) => string_end(bytes, pos + 1, quote),
        Some(&b) if is_value_byte(b) => {
            let run = bytes[pos..]
                .iter()
                .take_while(|&&c| is_value_byte(c))
                .count();
            Some(pos + run)
        }
        _ => None,
    }?;
    value_ends(bytes, end)
}

/// `end`, if what follows it (after spaces and tabs) ends an attribute value on this
/// line: a `,`, a closing bracket or the end of the line.
pub(super) fn value_ends(bytes: &[u8], end: usize) -> Option<usize> {
    match bytes.get(blanks(bytes, end)) {
        None | Some(b',' | b'}' | b')' | b']' | b'\n' | b'\r') => Some(end),
        _ => None,
    }
}

/// The end of an iota list of device or replica groups at `pos` (`[2,8]<=[16]`,
/// `[8,2]<=[2,8]T(1,0)`, as XLA prints `replica_groups`), read as the token path's
/// `skip_value` reads it: groups glued by `<=` and a transposition `T(...)`. Only when
/// a `,` or a closing bracket follows on this line: at the end of a line the token path
/// looks on into the next one, so that case is left to it.
fn iota_list_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut end = balanced_group_end(bytes, pos)?;
    loop {
        let next = blanks(bytes, end);
        end = match bytes.get(next..next + 2) {
            Some([b'<', b'=']) => {
                let group = blanks(bytes, next + 2);
                if bytes.get(group) != Some(&b'[') {
                    return None;
                }
                balanced_group_end(bytes, group)?
            }
            Some([b'T', b'(']) => balanced_group_end(bytes, next + 1)?,
            _ => match bytes.get(next) {
                Some(b'[' | b'{' | b'(') => balanced_group_end(bytes, next)?,
                Some(b',' | b'}' | b')' | b']') => return Some(end),
                _ => return None,
            },
        };
    }
}

/// How many bytes of whole lines the lexer reads at a time: a line longer than this
/// is read whole, alone.
pub(super) const CHUNK: usize = 64 * 1024;

/// Appends whole lines from `reader` to `out`: as many as fit in `chunk` bytes, or the
/// first line whole when it alone is longer (the last line of the input may lack its
/// line break), up to [`crate::input::MAX_INPUT_BYTES`] (a longer line is an error).
/// True when the reader has nothing more.
fn read_lines_into<R: BufRead>(
    reader: &mut R,
    out: &mut Vec<u8>,
    chunk: usize,
) -> std::io::Result<bool> {
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(true);
        }
        let in_line = out.last().is_some_and(|&b| b != b'\n');
        let room = chunk.saturating_sub(out.len());
        let used = match memchr::memrchr(b'\n', &available[..available.len().min(room)]) {
            Some(i) => i + 1,
            // A line longer than the room left: to its end.
            None if in_line || out.is_empty() => {
                memchr::memchr(b'\n', available).map_or(available.len(), |i| i + 1)
            }
            None => return Ok(false),
        };
        let limit = crate::input::MAX_INPUT_BYTES;
        if out.len() + used > limit {
            let start = memchr::memrchr(b'\n', out).map_or(0, |i| i + 1);
            let ended = available[..used].ends_with(b"\n");
            if out.len() - start + used - usize::from(ended) > limit {
                return Err(crate::input::too_long("a line", limit));
            }
        }
        crate::input::try_extend(out, &available[..used])?;
        reader.consume(used);
    }
}

/// [`is_ident_byte`] as a table, for the lexer's hottest loop.
const IDENT_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        table[i] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
        i += 1;
    }
    table
};

/// The end of the identifier whose first byte is at `start`.
fn ident_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start + 1;
    // Eight bytes at a time (unrolled: no bounds check per byte), then the tail.
    while let Some(chunk) = bytes.get(end..end + 8) {
        match chunk.iter().position(|&b| !IDENT_BYTE[usize::from(b)]) {
            Some(i) => return end + i,
            None => end += 8,
        }
    }
    while end < bytes.len() && IDENT_BYTE[usize::from(bytes[end])] {
        end += 1;
    }
    end
}

/// Bytes of a plain attribute value: identifier and number bytes, `%` of a name, and
/// the `-`, `>` and `?` of numbers and dim labels.
fn is_value_byte(b: u8) -> bool {
    is_ident_byte(b) || matches!(b, b'%' | b'-' | b'>' | b'?' | b'+')
}

/// The index just after the bracket that closes the `{`, `(` or `[` at `open`, on
/// this line, with strings skipped and brackets of every kind paired; `None` when the
/// group does not close on this line, a bracket is mismatched, a comment starts
/// inside, or it nests deeper than the fast path keeps track of. Where it gives an
/// end, reading tokens to the closing bracket ends there too (no token but a string
/// holds a bracket, and strings are skipped alike).
pub(super) fn balanced_group_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut want = [0u8; 64];
    let mut depth = 0;
    let mut pos = open;
    loop {
        // Most of a group (metadata, shardings) is bytes that change nothing here.
        while bytes.get(pos).is_some_and(|&b| !GROUP_BYTE[usize::from(b)]) {
            pos += 1;
        }
        let &b = bytes.get(pos)?;
        match b {
            b'{' | b'(' | b'[' => {
                *want.get_mut(depth)? = match b {
                    b'{' => b'}',
                    b'(' => b')',
                    _ => b']',
                };
                depth += 1;
                pos += 1;
            }
            b'}' | b')' | b']' => {
                depth -= 1;
                if want[depth] != b {
                    return None;
                }
                pos += 1;
                if depth == 0 {
                    return Some(pos);
                }
            }
            b'"' | b'\'' => pos = string_end(bytes, pos + 1, b)?,
            b'/' if matches!(bytes.get(pos + 1), Some(b'*' | b'/')) => return None,
            b'\n' => return None,
            _ => pos += 1,
        }
    }
}

/// The index just after the `}` that closes the `{` at `open` when nothing between
/// them is a byte [`balanced_group_end`] acts on (a stack frame's
/// `{file_location_id=1 parent_frame_id=2}`), where [`balanced_group_end`] would end
/// too; `None` otherwise. The bytes between are checked sixteen at a time, with
/// compares the compiler turns into SIMD.
fn flat_group_end(bytes: &[u8], open: usize) -> Option<usize> {
    let close = open + 1 + memchr::memchr(b'}', &bytes[open + 1..])?;
    let inside = &bytes[open + 1..close];
    let any_special = |chunk: &[u8; 16]| {
        chunk
            .iter()
            .fold(0u8, |any, &b| any | u8::from(group_byte_but_close(b)))
            != 0
    };
    if inside.len() < 16 {
        return (!inside.iter().any(|&b| group_byte_but_close(b))).then_some(close + 1);
    }
    let mut chunks = inside.chunks_exact(16);
    for chunk in &mut chunks {
        if any_special(chunk.try_into().ok()?) {
            return None;
        }
    }
    // The last sixteen bytes cover what is left.
    if any_special(inside[inside.len() - 16..].try_into().ok()?) {
        return None;
    }
    Some(close + 1)
}

/// [`GROUP_BYTE`] but `}`, as compares rather than a table lookup, so that a loop over
/// sixteen bytes of them vectorizes ([`flat_group_end`]).
fn group_byte_but_close(b: u8) -> bool {
    (b == b'{')
        | (b == b'(')
        | (b == b')')
        | (b == b'[')
        | (b == b']')
        | (b == b'"')
        | (b == b'\'')
        | (b == b'/')
        | (b == b'\n')
}

/// The bytes [`balanced_group_end`] acts on: brackets, quotes, `/` and line breaks.
const GROUP_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let special = b"{}()[]\"'/\n";
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
};

/// Where a JSON dictionary of XLA's `HloLexer::LexJsonDict` is in its reading: the
/// depth of braces (the opening one counted), and whether inside a string in double
/// quotes, just after its backslash.
struct JsonDict {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Default for JsonDict {
    fn default() -> Self {
        JsonDict {
            depth: 1,
            in_string: false,
            escaped: false,
        }
    }
}

impl JsonDict {
    /// Reads `bytes` from `from` on: just after the closing brace once it comes, or
    /// `None` with the state kept for the next bytes.
    fn read(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate().skip(from) {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' => self.depth += 1,
                b'}' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// The end of a JSON dictionary whose `{` is at `open`, when it closes on this line
/// ([`Lexer::skip_json_dict`] at byte level).
pub(super) fn json_dict_end(bytes: &[u8], open: usize) -> Option<usize> {
    JsonDict::default().read(bytes, open + 1)
}

/// The index just after the closing `quote` of a string whose body starts at `from`.
pub(super) fn string_end(bytes: &[u8], mut from: usize, quote: u8) -> Option<usize> {
    while from < bytes.len() {
        let i = from + memchr::memchr2(quote, b'\\', &bytes[from..])?;
        if bytes[i] == quote {
            return Some(i + 1);
        }
        from = i + 2;
    }
    None
}

/// A number or numeric pattern from `start`: `-12`, `1.5e-3`, `1_2x3_4`, `2x3`,
/// `-inf`, `0x1p-3`, `?`.
fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut pos = start + 1;
    while let Some(&c) = bytes.get(pos) {
        let sign_ok = matches!(c, b'-' | b'+')
            && matches!(bytes[pos - 1], b'e' | b'E' | b'p' | b'P' | b'_' | b'x');
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || sign_ok {
            pos += 1;
        } else {
            break;
        }
    }
    pos
}

/// XLA's dim labels pattern `[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}` at `start`.
#[inline]
fn dim_labels_end(bytes: &[u8], start: usize) -> Option<usize> {
    // Most words and numbers fail on their first two bytes: no call for them.
    let bf = |c: u8| c.is_ascii_digit() || matches!(c, b'b' | b'f' | b'?');
    match bytes.get(start..start + 2) {
        Some(&[a, b]) if bf(a) && bf(b) => dim_labels_tail(bytes, start),
        _ => None,
    }
}

#[inline(never)]
fn dim_labels_tail(bytes: &[u8], start: usize) -> Option<usize> {
    let run = |from: usize, ok: fn(u8) -> bool| {
        bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|&&c| ok(c))
            .count()
    };
    let io = |c: u8| c.is_ascii_digit() || matches!(c, b'i' | b'o' | b'?');
    let bf = |c: u8| c.is_ascii_digit() || matches!(c, b'b' | b'f' | b'?');
    let a = run(start, bf);
    if a < 2 || bytes.get(start + a) != Some(&b'_') {
        return None;
    }
    let b_start = start + a + 1;
    let b = run(b_start, io);
    if b < 2 || bytes.get(b_start + b..b_start + b + 2) != Some(b"->") {
        return None;
    }
    let c_start = b_start + b + 2;
    let c = run(c_start, bf);
    (c >= 2).then_some(c_start + c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the flat fast path gives an end, the bracket-pairing scan gives the same;
    /// it gives one for every flat group, long or short.
    #[test]
    fn a_flat_group_ends_where_the_balanced_scan_does() {
        let alphabet = b"ab1= _{}()[]\"'/\n*\\x";
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut flat = 0;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 60) as usize;
            let mut text = vec![b'{'];
            let mut bits = seed;
            for i in 0..len {
                // Mostly plain bytes, so that flat groups of every length occur.
                let pick = (bits.rotate_left(i as u32 * 5) % 97) as usize;
                text.push(if pick < 80 {
                    b'a' + (pick % 26) as u8
                } else {
                    alphabet[pick % alphabet.len()]
                });
                bits = bits.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            text.extend_from_slice(b"} tail");
            if let Some(end) = flat_group_end(&text, 0) {
                flat += 1;
                assert_eq!(
                    Some(end),
                    balanced_group_end(&text, 0),
                    "{}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
        assert!(flat > 3_000, "{flat} flat groups");
        let long = format!("{{{}}}", "file_location_id=1 ".repeat(20));
        assert_eq!(flat_group_end(long.as_bytes(), 0), Some(long.len()));
        assert_eq!(flat_group_end(b"{a=1 b=\"}\"}", 0), None);
    }

    #[test]
    fn the_flat_group_compares_are_the_group_table_but_close() {
        for b in 0..=255u8 {
            assert_eq!(
                group_byte_but_close(b),
                GROUP_BYTE[usize::from(b)] && b != b'}',
                "{b:#x}"
            );
        }
    }

    #[test]
    fn the_identifier_table_is_is_ident_byte() {
        for b in 0..=255u8 {
            assert_eq!(IDENT_BYTE[usize::from(b)], is_ident_byte(b), "byte {b}");
        }
    }
}
