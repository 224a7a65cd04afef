//! Reading inputs within bounds: no line, and no input read whole (a binary or JSON
//! message, a module proto), is read past [`MAX_INPUT_BYTES`], so that an endless
//! input (`/dev/zero`, a pipe whose line never ends) is refused with an error once
//! that much is read, never held without bound.
//!
//! ```
//! let mut lines = &b"f32[2]{0}\nbf16[3]"[..];
//! let mut line = Vec::new();
//! assert_eq!(xla_shape::input::read_line(&mut lines, &mut line).unwrap(), 10);
//! assert_eq!(line, b"f32[2]{0}\n");
//! let whole = xla_shape::input::read_whole(&b"\x08\x0b"[..], 2).unwrap();
//! assert_eq!(whole, b"\x08\x0b");
//! ```

use std::io::{self, BufRead, Read};

/// The most bytes one line, or one input read whole, may hold: 2 GiB less one byte,
/// the most one protobuf message can be (Google's runtime neither writes nor parses a
/// larger one, and XLA's messages, modules included, are protobuf messages).
pub const MAX_INPUT_BYTES: usize = i32::MAX as usize;

/// The error of an input, or a line of one, that holds more than `limit` bytes: of
/// kind [`io::ErrorKind::FileTooLarge`].
pub(crate) fn too_long(what: &str, limit: usize) -> io::Error {
    let most = match limit {
        MAX_INPUT_BYTES => " (2 GiB), the most one protobuf message can be".to_string(),
        _ => String::new(),
    };
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{what} holds more than {limit} bytes{most}: it is not read further"),
    )
}

/// The error of memory that could not be had to hold an input: of kind
/// [`io::ErrorKind::OutOfMemory`], never an abort.
fn no_memory(e: std::collections::TryReserveError) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!("cannot hold the input in memory: {e}"),
    )
}

/// Appends `more` to `bytes`, or says that the memory for it cannot be had.
pub(crate) fn try_extend(bytes: &mut Vec<u8>, more: &[u8]) -> io::Result<()> {
    bytes.try_reserve(more.len()).map_err(no_memory)?;
    bytes.extend_from_slice(more);
    Ok(())
}

/// Reads all of `reader`, of `size` bytes when that is known (read into a buffer of
/// that size rather than one grown by doubling), up to [`MAX_INPUT_BYTES`]. Memory
/// that cannot be had is an error, not an abort.
///
/// # Errors
/// The reader's; more than [`MAX_INPUT_BYTES`] bytes (of kind
/// [`io::ErrorKind::FileTooLarge`]); memory that cannot be had (of kind
/// [`io::ErrorKind::OutOfMemory`]).
pub fn read_whole<R: Read>(reader: R, size: u64) -> io::Result<Vec<u8>> {
    read_whole_within(reader, size, MAX_INPUT_BYTES)
}

/// [`read_whole`] with `limit` in place of [`MAX_INPUT_BYTES`] (for inputs of a size
/// known beforehand, such as an array's bytes).
///
/// # Errors
/// As [`read_whole`]'s, past `limit`.
pub fn read_whole_within<R: Read>(reader: R, size: u64, limit: usize) -> io::Result<Vec<u8>> {
    read_within(reader, size, limit, false)
}

/// How many bytes [`read_message`] reads before it looks whether they can be a
/// message: what `check` tells an input's form from.
const HEAD: usize = 1 << 20;

/// Reads one message whole, as [`read_whole`] does, except that bytes whose first MiB
/// is no text and already breaks the protobuf wire format at its top level (a field
/// number 0, a wire type no field has, ...) are read no further and given as they are:
/// no bytes after them can make the input a message, and a decoder (or a JSON or text
/// parser) stops where it would in the whole. `/dev/zero` is thus refused at once.
///
/// # Errors
/// As [`read_whole`]'s.
pub fn read_message<R: Read>(reader: R, size: u64) -> io::Result<Vec<u8>> {
    read_within(reader, size, MAX_INPUT_BYTES, true)
}

fn read_within<R: Read>(reader: R, size: u64, limit: usize, message: bool) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let room = usize::try_from(size).unwrap_or(usize::MAX).min(limit);
    bytes
        .try_reserve_exact(room.saturating_add(1))
        .map_err(no_memory)?;
    let mut reader = reader.take(limit as u64 + 1);
    // The size said, straight into the room made for it; anything more (a stream, a
    // file that grew) through a chunk, the buffer grown only as memory allows.
    if message {
        (&mut reader).take(HEAD as u64).read_to_end(&mut bytes)?;
        if bytes.len() == HEAD && !crate::check::is_text(&bytes) && breaks_wire(&bytes) {
            return Ok(bytes);
        }
    }
    let said = room.saturating_sub(bytes.len());
    (&mut reader).take(said as u64).read_to_end(&mut bytes)?;
    let mut chunk = vec![0; 64 << 10];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        try_extend(&mut bytes, &chunk[..n])?;
    }
    if bytes.len() > limit {
        return Err(too_long("the input", limit));
    }
    Ok(bytes)
}

/// Appends the next line of `reader` to `line`, its line break (`\n`) included, as
/// [`BufRead::read_until`] does: how many bytes were appended, 0 at the end of the
/// input. A line of more than [`MAX_INPUT_BYTES`] bytes (before its line break) is an
/// error once that many are read.
///
/// # Errors
/// The reader's; a line too long (of kind [`io::ErrorKind::FileTooLarge`]); memory
/// that cannot be had (of kind [`io::ErrorKind::OutOfMemory`]).
pub fn read_line<R: BufRead + ?Sized>(reader: &mut R, line: &mut Vec<u8>) -> io::Result<usize> {
    read_line_within(reader, line, MAX_INPUT_BYTES)
}

/// [`read_line`] with `limit` in place of [`MAX_INPUT_BYTES`].
pub(crate) fn read_line_within<R: BufRead + ?Sized>(
    reader: &mut R,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<usize> {
    let start = line.len();
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(line.len() - start);
        }
        let (used, ended) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if line.len() - start + used - usize::from(ended) > limit {
            return Err(too_long("a line", limit));
        }
        try_extend(line, &available[..used])?;
        reader.consume(used);
        if ended {
            return Ok(line.len() - start);
        }
    }
}

/// Whether `head`, the first bytes of a longer input, already breaks the protobuf
/// wire format at its top level, so that no bytes after it can make the input one
/// message, and a decoder stops there whatever follows (its error the same): a field
/// number 0 or past 2^29 - 1, a wire type no field has (6 or 7), the end of a group
/// never started, or a varint of more than ten bytes. A field cut at the end of
/// `head`, one longer than what follows (a decoder's error says how much is left),
/// and a group (not followed here) are not a break.
pub(crate) fn breaks_wire(head: &[u8]) -> bool {
    /// The varint at `*at`, moving past it: `Ok(None)` when `head` ends inside it,
    /// `Err` for one of more than ten bytes.
    fn varint(head: &[u8], at: &mut usize) -> Result<Option<u64>, ()> {
        let mut value = 0u64;
        for shift in 0..10 {
            let Some(&byte) = head.get(*at) else {
                return Ok(None);
            };
            *at += 1;
            value |= u64::from(byte & 0x7f) << (7 * shift);
            if byte < 0x80 {
                return Ok(Some(value));
            }
        }
        Err(())
    }
    let mut at = 0;
    while at < head.len() {
        let tag = match varint(head, &mut at) {
            Ok(Some(tag)) => tag,
            Ok(None) => return false,
            Err(()) => return true,
        };
        if tag >> 3 == 0 || tag > u64::from(u32::MAX) {
            return true;
        }
        match tag & 7 {
            0 => match varint(head, &mut at) {
                Ok(Some(_)) => {}
                Ok(None) => return false,
                Err(()) => return true,
            },
            1 => at = at.saturating_add(8),
            2 => match varint(head, &mut at) {
                Ok(Some(len)) => at = at.saturating_add(usize::try_from(len).unwrap_or(usize::MAX)),
                Ok(None) => return false,
                Err(()) => return true,
            },
            3 => return false,
            5 => at = at.saturating_add(4),
            _ => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_inputs_past_the_limit_are_refused_once_that_much_is_read() {
        // An endless line, and an endless input: refused, having read the limit.
        let endless = || io::BufReader::with_capacity(3, io::repeat(b'a'));
        let mut line = Vec::new();
        let e = read_line_within(&mut endless(), &mut line, 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(
            e.to_string(),
            "a line holds more than 10 bytes: it is not read further"
        );
        assert!(line.len() <= 10, "{}", line.len());
        let e = read_whole_within(io::repeat(0), 0, 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(
            too_long("the input", MAX_INPUT_BYTES).to_string(),
            "the input holds more than 2147483647 bytes (2 GiB), the most one protobuf \
             message can be: it is not read further"
        );
        // At the limit, whatever sizes the reads come in.
        for capacity in [1, 2, 3, 64] {
            let mut text = io::BufReader::with_capacity(capacity, &b"0123456789\nab"[..]);
            let mut line = Vec::new();
            assert_eq!(read_line_within(&mut text, &mut line, 10).unwrap(), 11);
            assert_eq!(line, b"0123456789\n");
            line.clear();
            assert_eq!(read_line_within(&mut text, &mut line, 10).unwrap(), 2);
            assert_eq!(read_line_within(&mut text, &mut line, 10).unwrap(), 0);
            assert_eq!(line, b"ab");
            let mut text = io::BufReader::with_capacity(capacity, &b"0123456789a\n"[..]);
            assert!(read_line_within(&mut text, &mut Vec::new(), 10).is_err());
        }
        assert_eq!(read_whole_within(&[7u8; 10][..], 10, 10).unwrap(), [7; 10]);
        assert!(read_whole_within(&[7u8; 11][..], 11, 10).is_err());
    }

    #[test]
    fn a_message_that_breaks_in_its_first_mib_is_read_no_further() {
        // Zeros: field number 0 at byte 0, whatever follows.
        assert_eq!(read_message(io::repeat(0), 0).unwrap().len(), HEAD);
        // Text (an endless line of it) and bytes that keep to the wire format are read
        // on, to the end or the limit.
        let text = vec![b'a'; HEAD + 5];
        assert_eq!(read_message(&text[..], 0).unwrap(), text);
        let mut wire = Vec::new();
        while wire.len() <= HEAD {
            wire.extend_from_slice(&[0x08, 0x01]);
        }
        assert_eq!(read_message(&wire[..], wire.len() as u64).unwrap(), wire);
        // A break past the first MiB: read whole, for the decoder to find.
        let mut late = wire.clone();
        late.extend_from_slice(&[0; 10]);
        assert_eq!(read_message(&late[..], 0).unwrap(), late);
    }

    #[test]
    fn the_wire_is_broken_only_where_no_message_can_go_on() {
        // Breaks: field 0 (a run of zeros), wire types 6 and 7, an end of group never
        // started, an eleven-byte varint, a tag past u32.
        for head in [
            &[0u8, 0, 0][..],
            &[0x0e],
            &[0x0f],
            &[0x0c],
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[0x80, 0x80, 0x80, 0x80, 0x10],
            &[0x08, 0x01, 0x12, 0x01, 0x00, 0x00],
        ] {
            assert!(breaks_wire(head), "{head:?}");
        }
        // May go on: cut inside a varint, a length or a field (however long); a group;
        // a valid start.
        for head in [
            &[][..],
            &[0x0a, 0x80, 0x80, 0x80, 0x80, 0x08],
            &[0x08],
            &[0x08, 0x80],
            &[0x0a, 0x05, 0x00],
            &[0x09, 0, 0, 0],
            &[0x0b, 0x00, 0x00],
            &[0x08, 0x0b, 0x10, 0x02, 0x1a, 0x00],
        ] {
            assert!(!breaks_wire(head), "{head:?}");
        }
    }
}
