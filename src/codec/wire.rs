//! The protobuf wire format, read and written by hand: varints, tags, fixed-width
//! values, length-delimited slices and groups.
//!
//! [`Reader`] walks a serialized message field by field and never reads past the
//! end, allocates or recurses: every malformed input is a [`DecodeError`] with the
//! byte offset where the problem starts. It follows Google's runtime (upb, the
//! engine of Python's protobuf) on what is malformed:
//!
//! - a tag is a varint of at most 5 bytes whose value fits in 32 bits, with a wire
//!   type other than 6 and 7 and a field number other than 0 (Google's runtime
//!   allows 0 inside the groups of unknown fields, and so does this reader);
//! - a varint is at most 10 bytes long. Google's runtime drops the bits of a
//!   10-byte varint past the 64th; [`Reader::read_varint`] refuses them so that no
//!   value is truncated silently, but skipping an unknown field (whose bytes are
//!   kept whole) accepts them as Google's runtime does;
//! - an end-group tag must close the innermost open group of the same number, and
//!   messages and groups nest at most [`RECURSION_LIMIT`] levels deep.
//!
//! The module is public so that other scanners (for example of serialized
//! `HloModuleProto`s) can reuse it; [`crate::codec`] builds on it.

use std::fmt;

use super::error::{DecodeError, DecodeErrorKind};

/// How many messages and groups may nest inside the top-level message: 100, the
/// default of Google's C++ and upb runtimes. The top-level message itself does not
/// count; a submessage at depth 100 is accepted and one at depth 101 is refused.
pub const RECURSION_LIMIT: u32 = 100;

/// The largest field number protobuf allows: 2^29 - 1.
pub const MAX_FIELD_NUMBER: u32 = (1 << 29) - 1;

/// The six wire types of the protobuf encoding (numbers 6 and 7 are invalid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WireType {
    /// 0: a base-128 varint (int32, int64, uint, bool, enum).
    Varint,
    /// 1: eight little-endian bytes (fixed64, sfixed64, double).
    Fixed64,
    /// 2: a varint length then that many bytes (string, bytes, message, packed).
    LengthDelimited,
    /// 3: the start of a group (proto2), closed by an end-group tag.
    StartGroup,
    /// 4: the end of a group.
    EndGroup,
    /// 5: four little-endian bytes (fixed32, sfixed32, float).
    Fixed32,
}

impl WireType {
    /// The wire type with this 3-bit number, or `None` for 6 and 7.
    pub fn from_bits(bits: u8) -> Option<WireType> {
        match bits {
            0 => Some(WireType::Varint),
            1 => Some(WireType::Fixed64),
            2 => Some(WireType::LengthDelimited),
            3 => Some(WireType::StartGroup),
            4 => Some(WireType::EndGroup),
            5 => Some(WireType::Fixed32),
            _ => None,
        }
    }

    /// The 3-bit number of this wire type.
    pub fn bits(self) -> u8 {
        match self {
            WireType::Varint => 0,
            WireType::Fixed64 => 1,
            WireType::LengthDelimited => 2,
            WireType::StartGroup => 3,
            WireType::EndGroup => 4,
            WireType::Fixed32 => 5,
        }
    }

    /// A short lowercase name: `varint`, `fixed64`, `length-delimited`,
    /// `start-group`, `end-group` or `fixed32`.
    pub fn name(self) -> &'static str {
        match self {
            WireType::Varint => "varint",
            WireType::Fixed64 => "fixed64",
            WireType::LengthDelimited => "length-delimited",
            WireType::StartGroup => "start-group",
            WireType::EndGroup => "end-group",
            WireType::Fixed32 => "fixed32",
        }
    }
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The value of one field as it is on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// A varint, as the unsigned 64-bit number it encodes.
    Varint(u64),
    /// Eight bytes, little-endian.
    Fixed64(u64),
    /// The bytes after the length prefix.
    LengthDelimited(&'a [u8]),
    /// The bytes between the start-group and the matching end-group tags.
    Group(&'a [u8]),
    /// Four bytes, little-endian.
    Fixed32(u32),
}

/// One field read by [`Reader::read_field`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    /// The field number, 1 to [`MAX_FIELD_NUMBER`].
    pub number: u32,
    /// The wire type of the tag (never [`WireType::EndGroup`]).
    pub wire_type: WireType,
    /// The decoded value.
    pub value: Value<'a>,
    /// The whole field as it is in the input: tag, then value (then end-group tag).
    pub raw: &'a [u8],
    /// The offset of the field's first byte in the reader's buffer.
    pub offset: usize,
}

/// A cursor over a serialized message, bounded by a limit that can be narrowed to
/// a submessage with [`Reader::push_limit`].
///
/// Offsets in errors are positions in the whole buffer the reader was made with.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`, limited to its end.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
        }
    }

    /// The current offset in the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The current limit: the end of the innermost message being read.
    pub fn limit(&self) -> usize {
        self.end
    }

    /// Bytes left before the limit.
    pub fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// Whether the reader has reached its limit.
    pub fn is_at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// The bytes of the buffer from `start` to the current position (empty if
    /// `start` is past it).
    pub fn since(&self, start: usize) -> &'a [u8] {
        self.buf.get(start..self.pos).unwrap_or(&[])
    }

    /// The bytes from the current position to the limit.
    pub fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..self.end).unwrap_or(&[])
    }

    /// Moves past `n` bytes, which the caller has read through [`Reader::rest`]
    /// (at most the limit).
    pub(crate) fn skip(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.end);
    }

    /// Narrows the limit to the next `len` bytes and returns the previous limit for
    /// [`Reader::pop_limit`]. Fails if `len` bytes are not left.
    pub fn push_limit(&mut self, len: usize) -> Result<usize, DecodeError> {
        let remaining = self.remaining();
        if len > remaining {
            return Err(DecodeError::new(
                DecodeErrorKind::LengthPastEnd {
                    length: len as u64,
                    remaining,
                },
                self.pos,
            ));
        }
        let saved = self.end;
        self.end = self.pos + len;
        Ok(saved)
    }

    /// Restores a limit returned by [`Reader::push_limit`].
    pub fn pop_limit(&mut self, saved: usize) {
        self.end = saved.min(self.buf.len());
    }

    /// Reads a varint of at most 10 bytes whose value fits in 64 bits.
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64, DecodeError> {
        self.varint(true)
    }

    /// Reads a varint of at most 10 bytes; with `strict`, bits past the 64th are an
    /// error, otherwise they are dropped (as Google's runtime does; this crate only
    /// does so where the value is not kept, e.g. when skipping an unknown field
    /// whose bytes are kept whole).
    ///
    /// The one-byte case (most tags, lengths and small values) is inlined at every
    /// call; longer varints go to [`Reader::long_varint`].
    #[inline(always)]
    fn varint(&mut self, strict: bool) -> Result<u64, DecodeError> {
        if self.pos < self.end {
            if let Some(&b) = self.buf.get(self.pos) {
                if b < 0x80 {
                    self.pos += 1;
                    return Ok(u64::from(b));
                }
            }
        }
        self.long_varint(strict)
    }

    /// [`Reader::varint`] past its one-byte case.
    #[inline(never)]
    fn long_varint(&mut self, strict: bool) -> Result<u64, DecodeError> {
        let start = self.pos;
        let rest = self.rest();
        let mut value: u64 = 0;
        for (i, &b) in rest.iter().take(10).enumerate() {
            let bits = u64::from(b & 0x7f);
            if i == 9 {
                if b & 0x80 != 0 {
                    return Err(DecodeError::new(DecodeErrorKind::VarintTooLong, start));
                }
                if strict && bits > 1 {
                    return Err(DecodeError::new(DecodeErrorKind::VarintOverflow, start));
                }
            }
            value |= bits.checked_shl(7 * i as u32).unwrap_or(0);
            if b & 0x80 == 0 {
                self.pos = start + i + 1;
                return Ok(value);
            }
        }
        Err(DecodeError::new(DecodeErrorKind::TruncatedVarint, start))
    }

    /// Reads a tag: a varint of at most 5 bytes whose value fits in 32 bits, with a
    /// field number other than 0 and a valid wire type. Returns the field number
    /// and the wire type.
    #[inline(always)]
    pub fn read_tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let start = self.pos;
        let (number, wire_type) = self.tag()?;
        if number == 0 {
            return Err(DecodeError::new(DecodeErrorKind::FieldNumberZero, start));
        }
        Ok((number, wire_type))
    }

    /// A tag, field number 0 allowed (Google's runtime allows it inside the groups
    /// of unknown fields, which it skips without looking at their fields).
    #[inline(always)]
    fn tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let start = self.pos;
        let value = self.varint(false)?;
        if self.pos - start > 5 {
            return Err(DecodeError::new(DecodeErrorKind::TagTooLong, start));
        }
        let Ok(tag) = u32::try_from(value) else {
            return Err(DecodeError::new(DecodeErrorKind::TagTooLarge(value), start));
        };
        // `tag & 7` is below 8, so the cast is exact.
        let bits = (tag & 7) as u8;
        let Some(wire_type) = WireType::from_bits(bits) else {
            return Err(DecodeError::new(
                DecodeErrorKind::InvalidWireType(bits),
                start,
            ));
        };
        Ok((tag >> 3, wire_type))
    }

    fn read_fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let start = self.pos;
        let remaining = self.remaining();
        let bytes = if remaining >= N {
            self.buf.get(start..start + N)
        } else {
            None
        };
        match bytes.and_then(|b| <[u8; N]>::try_from(b).ok()) {
            Some(array) => {
                self.pos = start + N;
                Ok(array)
            }
            None => Err(DecodeError::new(
                DecodeErrorKind::TruncatedFixed {
                    width: N,
                    remaining,
                },
                start,
            )),
        }
    }

    /// Reads four little-endian bytes.
    pub fn read_fixed32(&mut self) -> Result<u32, DecodeError> {
        self.read_fixed::<4>().map(u32::from_le_bytes)
    }

    /// Reads eight little-endian bytes.
    pub fn read_fixed64(&mut self) -> Result<u64, DecodeError> {
        self.read_fixed::<8>().map(u64::from_le_bytes)
    }

    /// Reads the length prefix of a length-delimited value and checks that that
    /// many bytes are left. The offset of an error is that of the prefix.
    pub fn read_length(&mut self) -> Result<usize, DecodeError> {
        let start = self.pos;
        let length = self.read_varint()?;
        let remaining = self.remaining();
        match usize::try_from(length) {
            Ok(len) if len <= remaining => Ok(len),
            _ => Err(DecodeError::new(
                DecodeErrorKind::LengthPastEnd { length, remaining },
                start,
            )),
        }
    }

    /// Reads a length-delimited value and returns its bytes (without the prefix).
    pub fn read_length_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.read_length()?;
        let start = self.pos;
        let bytes = self.buf.get(start..start + len).unwrap_or(&[]);
        self.pos = start + len;
        Ok(bytes)
    }

    /// Skips the value of a field whose tag has just been read. `depth` is the
    /// nesting depth of the message holding the field (0 for the top level); a
    /// group opens one more level. Returns the contents of a group (between its
    /// tags), or the value's bytes for the other wire types.
    pub fn skip_value(
        &mut self,
        number: u32,
        wire_type: WireType,
        depth: u32,
    ) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        match wire_type {
            WireType::Varint => {
                // The bytes are kept whole, so excess bits are not lost.
                self.varint(false)?;
            }
            WireType::Fixed64 => {
                self.read_fixed::<8>()?;
            }
            WireType::Fixed32 => {
                self.read_fixed::<4>()?;
            }
            WireType::LengthDelimited => return self.read_length_delimited(),
            WireType::StartGroup => return self.skip_group(number, depth),
            WireType::EndGroup => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnexpectedEndGroup(number),
                    start,
                ))
            }
        }
        Ok(self.since(start))
    }

    /// Skips a group whose start tag (for field `number`) has just been read, with
    /// every group nested in it, iteratively. Returns the group's contents.
    fn skip_group(&mut self, number: u32, depth: u32) -> Result<&'a [u8], DecodeError> {
        let start = self.pos;
        let mut open: Vec<(u32, usize)> = Vec::new();
        let mut current = (number, start);
        if depth >= RECURSION_LIMIT {
            return Err(DecodeError::new(DecodeErrorKind::RecursionLimit, start));
        }
        loop {
            if self.is_at_end() {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnterminatedGroup(current.0),
                    current.1,
                ));
            }
            let tag_start = self.pos;
            let (n, wire_type) = self.tag()?;
            match wire_type {
                WireType::EndGroup => {
                    if n != current.0 {
                        return Err(DecodeError::new(
                            DecodeErrorKind::MismatchedEndGroup {
                                expected: current.0,
                                found: n,
                            },
                            tag_start,
                        ));
                    }
                    match open.pop() {
                        Some(outer) => current = outer,
                        None => return Ok(self.buf.get(start..tag_start).unwrap_or(&[])),
                    }
                }
                WireType::StartGroup => {
                    // `open.len() + 1` groups are open inside the message at `depth`.
                    let nested = depth as usize + open.len() + 2;
                    if nested > RECURSION_LIMIT as usize {
                        return Err(DecodeError::new(DecodeErrorKind::RecursionLimit, self.pos));
                    }
                    open.push(current);
                    current = (n, self.pos);
                }
                other => {
                    self.skip_value(n, other, depth)?;
                }
            }
        }
    }

    /// Reads the next whole field: its tag and value, skipping over groups.
    /// `depth` is as for [`Reader::skip_value`]. An end-group tag here is an error:
    /// groups are read whole.
    pub fn read_field(&mut self, depth: u32) -> Result<Field<'a>, DecodeError> {
        let offset = self.pos;
        let (number, wire_type) = self.read_tag()?;
        let value = match wire_type {
            WireType::Varint => Value::Varint(self.read_varint()?),
            WireType::Fixed64 => Value::Fixed64(self.read_fixed64()?),
            WireType::Fixed32 => Value::Fixed32(self.read_fixed32()?),
            WireType::LengthDelimited => Value::LengthDelimited(self.read_length_delimited()?),
            WireType::StartGroup => Value::Group(self.skip_group(number, depth)?),
            WireType::EndGroup => {
                return Err(DecodeError::new(
                    DecodeErrorKind::UnexpectedEndGroup(number),
                    offset,
                ))
            }
        };
        Ok(Field {
            number,
            wire_type,
            value,
            raw: self.since(offset),
            offset,
        })
    }
}

/// The number of bytes `value` takes as a varint (1 to 10).
pub fn varint_len(value: u64) -> usize {
    // 64 - leading zeros = significant bits; 7 bits a byte, at least one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends `value` as a canonical (shortest) varint.
pub fn put_varint(buf: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// The tag value for a field number and wire type.
pub fn tag(number: u32, wire_type: WireType) -> u64 {
    (u64::from(number) << 3) | u64::from(wire_type.bits())
}

/// Appends a tag.
pub fn put_tag(buf: &mut Vec<u8>, number: u32, wire_type: WireType) {
    put_varint(buf, tag(number, wire_type));
}

/// The number of bytes a tag for `number` takes.
pub fn tag_len(number: u32) -> usize {
    varint_len(u64::from(number) << 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths_match_encodings() {
        for value in [
            0u64,
            1,
            127,
            128,
            16383,
            16384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varint(&mut buf, value);
            assert_eq!(buf.len(), varint_len(value), "{value}");
            let mut reader = Reader::new(&buf);
            assert_eq!(reader.read_varint().unwrap(), value);
            assert!(reader.is_at_end());
        }
        assert_eq!(varint_len(u64::MAX), 10);
        assert_eq!(varint_len((-1i64) as u64), 10);
    }

    #[test]
    fn read_field_returns_raw_bytes_and_group_contents() {
        // Field 99 group containing field 1 varint 1, then field 2 varint 1.
        let bytes = [0x9b, 0x06, 0x08, 0x01, 0x9c, 0x06, 0x10, 0x01];
        let mut reader = Reader::new(&bytes);
        let field = reader.read_field(0).unwrap();
        assert_eq!(field.number, 99);
        assert_eq!(field.wire_type, WireType::StartGroup);
        assert_eq!(field.value, Value::Group(&[0x08, 0x01]));
        assert_eq!(field.raw, &bytes[..6]);
        let field = reader.read_field(0).unwrap();
        assert_eq!((field.number, field.value), (2, Value::Varint(1)));
        assert!(reader.is_at_end());
    }
}
