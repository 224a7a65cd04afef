//! A byte cursor over HLO text: skips whitespace and comments between tokens and reads
//! the few token kinds shape text uses (integers, words, punctuation).

use super::error::ParseError;

/// Whether `b` can continue an identifier (XLA's lexer: `[A-Za-z0-9_.-]`).
pub(crate) fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Whether `b` can start an identifier.
pub(crate) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// A position in the input plus the token readers.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Self { input, pos: 0 }
    }

    pub(crate) fn at(input: &'a str, pos: usize) -> Self {
        Self { input, pos }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    fn bytes(&self) -> &'a [u8] {
        self.input.as_bytes()
    }

    /// Skips whitespace, `/* ... */` and `// ...` comments.
    #[inline(always)]
    pub(crate) fn skip_trivia(&mut self) -> Result<(), ParseError> {
        // Most tokens follow the last one directly, or after one space (`, `): one
        // or two bytes tell.
        let is_token = |b: u8| b > b' ' && b != b'/';
        match self.peek_raw() {
            Some(b) if is_token(b) => Ok(()),
            None => Ok(()),
            Some(b' ') if self.peek_raw_at(1).is_some_and(is_token) => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => self.skip_trivia_slow(),
        }
    }

    fn skip_trivia_slow(&mut self) -> Result<(), ParseError> {
        let bytes = self.bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b) if b.is_ascii_whitespace() => self.pos += 1,
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.pos;
                    match self.input[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => {
                            return Err(ParseError::new(
                                start..self.input.len(),
                                "unterminated '/*' comment",
                            ))
                        }
                    }
                }
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'/') => {
                    match self.input[self.pos..].find('\n') {
                        Some(i) => self.pos += i + 1,
                        None => self.pos = self.input.len(),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// The next byte after trivia, without consuming it.
    #[inline(always)]
    pub(crate) fn peek(&mut self) -> Result<Option<u8>, ParseError> {
        self.skip_trivia()?;
        Ok(self.bytes().get(self.pos).copied())
    }

    /// The byte at the cursor, with no trivia skipped.
    #[inline]
    pub(crate) fn peek_raw(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    pub(crate) fn peek_raw_at(&self, offset: usize) -> Option<u8> {
        self.bytes().get(self.pos + offset).copied()
    }

    /// Consumes `byte` if it comes next (after trivia).
    #[inline(always)]
    pub(crate) fn eat(&mut self, byte: u8) -> Result<bool, ParseError> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `text` if it comes next (after trivia).
    #[inline]
    pub(crate) fn eat_str(&mut self, text: &str) -> Result<bool, ParseError> {
        self.skip_trivia()?;
        if self.bytes()[self.pos..].starts_with(text.as_bytes()) {
            self.pos += text.len();
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `byte` or fails with `message` at the next token.
    pub(crate) fn expect(&mut self, byte: u8, message: &str) -> Result<(), ParseError> {
        if self.eat(byte)? {
            Ok(())
        } else {
            Err(self.error_here(message))
        }
    }

    /// An error spanning the next token (after trivia, which must already be skipped).
    pub(crate) fn error_here(&self, message: impl Into<String>) -> ParseError {
        ParseError::new(self.pos..self.pos + self.token_len(), message)
    }

    /// A rough length of the token at the cursor, for error spans.
    fn token_len(&self) -> usize {
        let rest = &self.bytes()[self.pos.min(self.input.len())..];
        match rest.first() {
            None => 0,
            Some(&b) if is_ident_byte(b) => rest.iter().take_while(|&&b| is_ident_byte(b)).count(),
            Some(_) => self.input[self.pos..]
                .chars()
                .next()
                .map_or(1, char::len_utf8),
        }
    }

    /// Reads an identifier (`[A-Za-z_][A-Za-z0-9_.-]*`) after trivia, if one comes next.
    pub(crate) fn ident(&mut self) -> Result<Option<&'a str>, ParseError> {
        self.skip_trivia()?;
        let word = self.word();
        Ok((!word.is_empty()).then_some(word))
    }

    /// Reads an identifier right at the cursor (no trivia skipped); empty if none
    /// starts there.
    #[inline]
    pub(crate) fn word(&mut self) -> &'a str {
        let rest = &self.bytes()[self.pos..];
        let len = match rest.first() {
            Some(&b) if is_ident_start(b) => rest.iter().take_while(|&&b| is_ident_byte(b)).count(),
            _ => 0,
        };
        let start = self.pos;
        self.pos += len;
        &self.input[start..start + len]
    }

    /// Reads a word of letters only (attribute names such as `T`, `SC`, `PD`).
    pub(crate) fn letters(&mut self) -> Result<Option<(&'a str, usize)>, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let len = self.bytes()[start..]
            .iter()
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        if len == 0 {
            return Ok(None);
        }
        self.pos += len;
        Ok(Some((&self.input[start..start + len], start)))
    }

    /// Whether an integer (optionally negative) comes next, after trivia.
    #[inline]
    pub(crate) fn at_int(&mut self) -> Result<bool, ParseError> {
        self.skip_trivia()?;
        Ok(match self.peek_raw() {
            Some(b) if b.is_ascii_digit() => true,
            Some(b'-') => self.peek_raw_at(1).is_some_and(|b| b.is_ascii_digit()),
            _ => false,
        })
    }

    /// Reads a signed 64-bit integer; `what` names it in errors.
    #[inline]
    pub(crate) fn int(&mut self, what: &str) -> Result<(i64, usize), ParseError> {
        if !self.at_int()? {
            return Err(self.error_here(format!("expected {what}")));
        }
        let bytes = self.bytes();
        let start = self.pos;
        let negative = bytes[start] == b'-';
        let digits = start + usize::from(negative);
        let mut end = digits;
        let mut magnitude = 0u64;
        while let Some(&b) = bytes.get(end).filter(|b| b.is_ascii_digit()) {
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            end += 1;
        }
        // Like XLA's lexer, `2S` is the integer 2, then the identifier `S`.
        self.pos = end;
        // Up to 18 digits always fit; longer numbers are left to the standard parser.
        if end - digits <= 18 {
            let value = magnitude as i64;
            return Ok((if negative { -value } else { value }, start));
        }
        let text = &self.input[start..end];
        match text.parse::<i64>() {
            Ok(value) => Ok((value, start)),
            // XLA's lexer reads an integer from 2^63 to 2^64 - 1 as the int64 of the
            // same bits (`T(9223372036854775808)` is `T(*)`, `{18446744073709551615}`
            // is `{-1}`); a negative one past int64 is an error there too.
            Err(_) => match text.parse::<u64>() {
                Ok(bits) if !negative => Ok((bits as i64, start)),
                _ => Err(ParseError::new(
                    start..end,
                    format!("integer {text} does not fit in 64 bits"),
                )),
            },
        }
    }

    /// Reads an integer of 1 to 18 plain digits right at the cursor (no trivia, no
    /// sign): most sizes and dimensions, read without the general path's checks.
    /// Anything else is `None`, with the cursor left where it was.
    #[inline(always)]
    pub(crate) fn digits(&mut self) -> Option<i64> {
        let rest = &self.bytes()[self.pos..];
        let mut value = 0i64;
        let mut len = 0;
        while let Some(digit) = rest
            .get(len)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d < 10)
        {
            if len == 18 {
                return None;
            }
            value = value * 10 + i64::from(digit);
            len += 1;
        }
        if len == 0 {
            return None;
        }
        self.pos += len;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    /// The fast path reads every integer of up to 18 digits whole, with any byte after
    /// it, and nothing else.
    #[test]
    fn digits_read_as_a_byte_loop() {
        let mut numbers: Vec<String> = (0..2000).map(|n| n.to_string()).collect();
        let mut power = 1u64;
        for _ in 0..19 {
            numbers.extend([power - 1, power, power + 7].map(|n| n.to_string()));
            power *= 10;
        }
        numbers.extend(["007", "0000000000", "99999999", "123456789012345678"].map(String::from));
        for number in &numbers {
            for after in [
                "",
                "]",
                ",",
                "}",
                ":9",
                " 1",
                "/",
                "é",
                "\u{10FFFF}",
                ".........",
            ] {
                for before in ["", "xxxxxxxxxxxx"] {
                    let text = format!("{before}{number}{after}");
                    let mut cursor = Cursor::at(&text, before.len());
                    let expected = (number.len() <= 18).then(|| number.parse::<i64>().unwrap());
                    assert_eq!(cursor.digits(), expected, "{text:?}");
                    let end = before.len() + if expected.is_some() { number.len() } else { 0 };
                    assert_eq!(cursor.pos(), end, "{text:?}");
                }
            }
        }
        for text in ["", "x", "-1", " 1", "]", "/*1*/"] {
            assert_eq!(Cursor::new(text).digits(), None, "{text:?}");
        }
    }
}
