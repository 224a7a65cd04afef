//! `.npy` files (numpy's array format) for the logical array of a shape: written with
//! the header NumPy's `np.save` writes, byte for byte; read as NumPy reads a plain
//! dtype's header, in one pass (the `npyz` crate's reader took time that grew with the
//! nesting of a header's brackets, allocated a header's length before reading it, and
//! refused headers NumPy reads: Python 2's `3L`, a line break inside the dict), with
//! `npyz`'s dtype strings.
//!
//! # Dtypes
//!
//! | XLA type | `.npy` dtype written | also read |
//! | --- | --- | --- |
//! | `pred` | `\|b1` (0 or 1) | |
//! | `s8` `s16` `s32` `s64`, `u8` ... `u64` | `\|i1` `<i2` `<i4` `<i8`, `\|u1` ... `<u8` | big-endian (`>`) |
//! | `f16` `f32` `f64` | `<f2` `<f4` `<f8` | big-endian |
//! | `c64` `c128` | `<c8` `<c16` | big-endian |
//! | `bf16` | `<u2`: the raw bits (view it with `ml_dtypes.bfloat16`) | `>u2`, `\|V2` (what `np.save` writes for an `ml_dtypes.bfloat16` array) |
//! | `f8e5m2` and the other 8-bit floats | `\|u1`: the raw bits (`ml_dtypes.float8_*` views) | `\|V1` |
//! | `s4` `s2` `s1` | `\|i1`: the value, sign-extended (`.astype(ml_dtypes.int4)`) | values must fit the type |
//! | `u4` `u2` `u1` | `\|u1`: the value | values must fit the type |
//! | `f4e2m1fn` `f6e2m3fn` `f6e3m2fn` | `\|u1`: the raw bits in the low bits | `\|V1`; bits must fit the type |
//!
//! numpy has no type for bf16, the 8-bit, 6-bit and 4-bit floats, or the integers below
//! 8 bits. The raw bits of the floats go in unsigned integers of their byte width, which
//! numpy can hold, print and compare without `ml_dtypes`, and which `ml_dtypes` views as
//! the real type without a copy (`a.view(ml_dtypes.bfloat16)`); the narrow integers go in
//! int8/uint8 as the values they are. Files are written in C order; files are read in C
//! or Fortran order.

use std::fmt;
use std::io::Cursor;

use npyz::{NpyHeader, Order, TypeChar, TypeStr};

use super::{column_major, row_major, shape_text, Relayout, RelayoutError};
use crate::primitive::PrimitiveType;
use crate::shape::ArrayShape;

/// Why an `.npy` file cannot be read or written for a shape.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NpyError {
    /// The bytes are not an `.npy` file `npyz` can read.
    Format(String),
    /// The file's dtype is not the one of the shape's element type.
    Dtype {
        /// The shape, as text.
        shape: String,
        /// The dtype expected (and the others accepted).
        expected: String,
        /// The file's dtype.
        got: String,
    },
    /// The file's dimensions are not the shape's.
    Dimensions {
        /// The shape, as text.
        shape: String,
        /// The shape's dimensions.
        expected: Vec<u64>,
        /// The file's.
        got: Vec<u64>,
    },
    /// The data after the header is not as long as the header says.
    DataLength {
        /// Bytes the header asks for.
        expected: u64,
        /// Bytes present.
        got: u64,
    },
    /// A value does not fit the element type (an int8 of 9 for `s4`).
    Value {
        /// The element's index.
        index: Vec<u64>,
        /// The value in the file.
        value: i64,
        /// The element type's name.
        element_type: &'static str,
    },
    /// Moving the bytes failed.
    Relayout(RelayoutError),
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Format(e) => write!(f, "not an .npy file this tool can read: {e}"),
            NpyError::Dtype {
                shape,
                expected,
                got,
            } => write!(
                f,
                "the .npy file holds dtype {got}, but {shape} needs {expected}"
            ),
            NpyError::Dimensions {
                shape,
                expected,
                got,
            } => match got.iter().zip(expected).position(|(g, e)| g != e) {
                Some(k) if got.len() == expected.len() && got.len() > LISTED => write!(
                    f,
                    "the .npy file's dimension {k} is {}, but {shape}'s is {}",
                    got[k], expected[k]
                ),
                _ => write!(
                    f,
                    "the .npy file has dimensions {}, but {shape} has {}",
                    listed(got),
                    listed(expected)
                ),
            },
            NpyError::DataLength { expected, got } => write!(
                f,
                "the .npy file has {got} bytes of data, but its header needs {expected}"
            ),
            NpyError::Value {
                index,
                value,
                element_type,
            } => write!(
                f,
                "element {} of the .npy file is {value}, which does not fit {element_type}",
                listed(index)
            ),
            NpyError::Relayout(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for NpyError {}

impl From<RelayoutError> for NpyError {
    fn from(e: RelayoutError) -> Self {
        NpyError::Relayout(e)
    }
}

/// How values of narrow types sit in their `.npy` byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Narrow {
    /// A whole-byte type: bytes as they are.
    No,
    /// A signed integer of this many bits, sign-extended in an int8.
    Signed(u32),
    /// An unsigned integer or raw float bits of this many bits, in the low bits.
    Unsigned(u32),
}

fn narrow(t: PrimitiveType) -> Narrow {
    let bits = t.bit_width().unwrap_or(8);
    if t == PrimitiveType::Pred {
        Narrow::Unsigned(1)
    } else if bits >= 8 {
        Narrow::No
    } else if t.is_signed_integral() {
        Narrow::Signed(bits)
    } else {
        Narrow::Unsigned(bits)
    }
}

/// The `.npy` dtype (numpy's `descr`) this crate writes for an element type; see the
/// [module docs](self). `None` for the non-array kinds (tuple, token, opaque, buffer).
pub fn dtype_descr(t: PrimitiveType) -> Option<&'static str> {
    use PrimitiveType as P;
    Some(match t {
        P::Pred => "|b1",
        P::S8 | P::S4 | P::S2 | P::S1 => "|i1",
        P::S16 => "<i2",
        P::S32 => "<i4",
        P::S64 => "<i8",
        P::U16 | P::Bf16 => "<u2",
        P::U32 => "<u4",
        P::U64 => "<u8",
        P::F16 => "<f2",
        P::F32 => "<f4",
        P::F64 => "<f8",
        P::C64 => "<c8",
        P::C128 => "<c16",
        _ if t.is_array() && t.byte_width() == Some(1) => "|u1",
        _ => return None,
    })
}

/// The dtypes read for an element type besides its own (`descr` without the byte order).
fn also_read(t: PrimitiveType) -> &'static [&'static str] {
    match t {
        PrimitiveType::Bf16 => &["V2"],
        _ if t.is_floating_point() && t.byte_width() == Some(1) => &["V1"],
        _ => &[],
    }
}

fn unsupported(shape: &ArrayShape) -> NpyError {
    NpyError::Dtype {
        shape: shape_text(shape),
        expected: "an array element type".to_string(),
        got: "none".to_string(),
    }
}

/// The logical array of `data` (laid out as `shape`) as an `.npy` file, C order.
///
/// # Errors
/// [`NpyError::Relayout`] when `data` is not `shape`'s allocated size.
pub fn to_npy(shape: &ArrayShape, data: &[u8]) -> Result<Vec<u8>, NpyError> {
    let descr = dtype_descr(shape.element_type()).ok_or_else(|| unsupported(shape))?;
    let logical = row_major(shape);
    let relayout = Relayout::new(shape, &logical)?;
    let mut body = relayout.to_vec(data)?;
    match narrow(shape.element_type()) {
        Narrow::No => {}
        Narrow::Signed(bits) => {
            let shift = 8 - bits;
            for b in &mut body {
                *b = (((*b << shift) as i8) >> shift) as u8;
            }
        }
        Narrow::Unsigned(bits) => {
            let mask = ((1u16 << bits) - 1) as u8;
            for b in &mut body {
                *b &= mask;
            }
        }
    }
    let mut out = numpy_header(descr, relayout.source_plan().dimensions());
    out.try_reserve_exact(body.len()).map_err(|_| {
        NpyError::Relayout(RelayoutError::TooLarge {
            shape: shape_text(shape),
            bytes: body.len() as u64,
        })
    })?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// The magic string, format version, header length and header that NumPy's `np.save`
/// writes for a C-order array of `descr` and `dims` (`numpy.lib.format`): the dict's
/// `repr` with its keys sorted, spaces that let the first dimension grow to 21 digits,
/// then spaces and a newline up to a multiple of 64 bytes (64 more when it is one
/// already). Format version 1.0, or 2.0 when the header is longer than 65,535 bytes
/// (past NumPy's rank of 64).
fn numpy_header(descr: &str, dims: &[u64]) -> Vec<u8> {
    let listed: Vec<String> = dims.iter().map(u64::to_string).collect();
    let shape = match listed.as_slice() {
        [one] => format!("({one},)"),
        all => format!("({})", all.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    if let Some(first) = listed.first() {
        header.push_str(&" ".repeat(21usize.saturating_sub(first.len())));
    }
    let hlen = header.len() + 1;
    let padded = |size_bytes: usize| hlen + 64 - (8 + size_bytes + hlen) % 64;
    let mut out = b"\x93NUMPY".to_vec();
    let total = match u16::try_from(padded(2)) {
        Ok(total) => {
            out.extend([1, 0]);
            out.extend(total.to_le_bytes());
            usize::from(total)
        }
        Err(_) => {
            let total = padded(4);
            out.extend([2, 0]);
            out.extend(u32::try_from(total).unwrap_or(u32::MAX).to_le_bytes());
            total
        }
    };
    out.extend(header.as_bytes());
    out.resize(out.len() + total - hlen, b' ');
    out.push(b'\n');
    out
}

/// Lays out the logical array of an `.npy` file (C or Fortran order, its dimensions and
/// dtype those of `shape`) as `shape`: a buffer of `shape`'s allocated size.
///
/// # Errors
/// [`NpyError`] for a file that does not read, another dtype or other dimensions, data
/// of the wrong length, or a value that does not fit a narrow type.
pub fn from_npy(shape: &ArrayShape, npy: &[u8]) -> Result<Vec<u8>, NpyError> {
    let t = shape.element_type();
    let descr = dtype_descr(t).ok_or_else(|| unsupported(shape))?;
    let Some(header) = read_header(npy)? else {
        // No magic, or a format version NumPy does not write: the reader's words.
        let said = match NpyHeader::from_reader(&mut Cursor::new(npy)) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                format!("the file ends inside its header ({} bytes)", npy.len())
            }
            Err(e) => concise(&e.to_string()),
            Ok(_) => "not a format version NumPy reads".to_string(),
        };
        return Err(NpyError::Format(said));
    };
    // A header of another rank is refused before anything is built for it.
    if header.dims.len() != shape.dimensions().len() {
        return Err(NpyError::Dimensions {
            shape: shape_text(shape),
            expected: shape
                .dimensions()
                .iter()
                .map(|d| d.bound().unwrap_or(0))
                .collect(),
            got: header.dims,
        });
    }
    let data = npy.get(header.data_at..).unwrap_or(&[]);

    // The dtype: the one written, another byte order, or an accepted alternative.
    let got: TypeStr = std::str::from_utf8(header.descr)
        .map_err(|e| e.to_string())
        .and_then(|d| {
            d.parse()
                .map_err(|e: npyz::ParseTypeStrError| e.to_string())
        })
        .map_err(|e| NpyError::Format(concise(&format!("invalid type string: {e}"))))?;
    let got_text = got.to_string();
    let body = got_text.get(1..).unwrap_or("");
    let own = descr.get(1..).unwrap_or("");
    let swap = body == own && got_text.starts_with('>') && got.num_bytes().unwrap_or(1) > 1;
    if body != own && !also_read(t).contains(&body) {
        let mut expected = descr.to_string();
        for alt in also_read(t) {
            expected.push_str(" or |");
            expected.push_str(alt);
        }
        return Err(NpyError::Dtype {
            shape: shape_text(shape),
            expected,
            got: got_text,
        });
    }

    let order = match header.fortran {
        true => Order::Fortran,
        false => Order::C,
    };
    let logical = match order {
        Order::C => row_major(shape),
        Order::Fortran => column_major(shape),
    };
    let relayout = Relayout::new(&logical, shape)?;
    let dims = relayout.source_plan().dimensions().to_vec();
    if header.dims != dims {
        return Err(NpyError::Dimensions {
            shape: shape_text(shape),
            expected: dims,
            got: header.dims,
        });
    }
    let expected = relayout.source_bytes() as u64;
    if data.len() as u64 != expected {
        return Err(NpyError::DataLength {
            expected,
            got: data.len() as u64,
        });
    }

    let swapped;
    let data: &[u8] = if swap {
        let mut bytes = data.to_vec();
        let width = got.num_bytes().unwrap_or(1);
        let part = if got.type_char() == TypeChar::Complex {
            width / 2
        } else {
            width
        };
        for chunk in bytes.chunks_exact_mut(part.max(1)) {
            chunk.reverse();
        }
        swapped = bytes;
        &swapped
    } else {
        data
    };
    check_values(t, data, &dims, order)?;
    Ok(relayout.to_vec(data)?)
}

/// An `.npy` file's header, as NumPy reads it ([`read_header`]).
struct Header<'a> {
    /// The dtype's string, between its quotes.
    descr: &'a [u8],
    fortran: bool,
    dims: Vec<u64>,
    /// Where the data starts.
    data_at: usize,
}

/// Reads the header of a file with NumPy's magic and a format version it reads (1.0,
/// 2.0 or 3.0; `None` for anything else, left for the reader to say). A header whose
/// length runs past the file's end is refused (the reader allocated that length before
/// it read, and a 13-byte file that said 4 GiB aborted, or took 4 GiB of address
/// space), as is one that is not the dict NumPy reads for a plain dtype
/// ([`plain_header`]).
fn read_header(npy: &[u8]) -> Result<Option<Header<'_>>, NpyError> {
    if !npy.starts_with(b"\x93NUMPY") || npy.get(7) != Some(&0) {
        return Ok(None);
    }
    let version = npy[6];
    let (said, start) = match version {
        1 => (
            npy.get(8..10)
                .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]]))),
            10,
        ),
        2 | 3 => (
            npy.get(8..12)
                .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            12,
        ),
        _ => return Ok(None),
    };
    let Some(said) = said else {
        return Err(NpyError::Format(format!(
            "the file ends inside its header ({} bytes)",
            npy.len()
        )));
    };
    let there = npy.len().saturating_sub(start) as u64;
    if said > there {
        return Err(NpyError::Format(format!(
            "the file ends inside its header ({} bytes, where the header says it is {said} bytes long after its first {start})",
            npy.len()
        )));
    }
    let data_at = start + said as usize;
    // Python 2's `3L` dimensions: NumPy reads them in format versions 1.0 and 2.0.
    let long_ints = version < 3;
    let (descr, fortran, dims) = plain_header(&npy[start..data_at], long_ints).map_err(|why| {
        NpyError::Format(format!(
            "the header is not the dict of 'descr', 'fortran_order' and 'shape' that NumPy writes for a plain dtype: {why}"
        ))
    })?;
    Ok(Some(Header {
        descr,
        fortran,
        dims,
        data_at,
    }))
}

/// Reads a header's Python literal, in one pass, as NumPy reads what it writes for a
/// plain dtype: a dict of `'descr'` (a string), `'fortran_order'` (`True` or `False`)
/// and `'shape'` (a tuple of integers whose non-zero ones multiply within 64 bits), in
/// any order, the last given of a key kept (as Python's dict literal keeps it), with
/// blanks, line breaks and comments between any two of its parts; with `long_ints`,
/// an integer may end in Python 2's `L`. Its descr, order and dimensions.
///
/// Nothing else is read: a header of brackets nested deep took the `npyz` reader time
/// that grew some three times a level (a 150-byte header of `{` 14 deep took 14 s, of
/// `[` 21 deep 60 s), and 3,000 groups of `{` 6 deep (42 KB) 9.5 s.
fn plain_header(header: &[u8], long_ints: bool) -> Result<(&[u8], bool, Vec<u64>), String> {
    const KEYS: [&str; 3] = ["descr", "fortran_order", "shape"];
    let mut at = HeaderAt::new(header);
    at.blank();
    at.expect(b'{')?;
    let mut seen = [false; 3];
    let (mut descr, mut fortran, mut dims): (&[u8], _, _) = (&[], false, Vec::new());
    loop {
        at.blank();
        if at.take(b'}') {
            break;
        }
        let key = at.string()?;
        let place = KEYS
            .iter()
            .position(|k| k.as_bytes() == key)
            .ok_or_else(|| {
                format!(
                    "its key '{}'",
                    String::from_utf8_lossy(key).escape_default()
                )
            })?;
        seen[place] = true;
        at.blank();
        at.expect(b':')?;
        at.blank();
        match place {
            0 if at.peek() == Some(b'[') => {
                return Err(
                    "'descr' is a structured dtype (a list); this tool reads plain dtypes".into(),
                )
            }
            0 => descr = at.string()?,
            1 => {
                fortran = match () {
                    _ if at.word(b"True") => true,
                    _ if at.word(b"False") => false,
                    _ => return Err(at.unexpected("True or False")),
                }
            }
            _ => dims = at.tuple(long_ints)?,
        }
        at.blank();
        if !at.take(b',') {
            at.blank();
            at.expect(b'}')?;
            break;
        }
    }
    at.blank();
    if !at.rest().is_empty() {
        return Err(at.unexpected("the end of the header"));
    }
    match seen.iter().position(|&seen| !seen) {
        Some(place) => Err(format!("no key '{}'", KEYS[place])),
        None => Ok((descr, fortran, dims)),
    }
}

/// A place in a header ([`plain_header`]).
struct HeaderAt<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> HeaderAt<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        HeaderAt { bytes, at: 0 }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }

    /// Skips blanks, line breaks, comments (`#` to the line's end) and a `\\` that
    /// ends a line, as Python's tokenizer does between a literal's parts.
    fn blank(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') => self.at += 1,
                Some(b'#') => {
                    while !matches!(self.peek(), None | Some(b'\n' | b'\r')) {
                        self.at += 1;
                    }
                }
                Some(b'\\') if matches!(self.bytes.get(self.at + 1), Some(b'\n' | b'\r')) => {
                    self.at += 1;
                }
                _ => return,
            }
        }
    }

    fn take(&mut self, byte: u8) -> bool {
        let taken = self.peek() == Some(byte);
        self.at += usize::from(taken);
        taken
    }

    fn word(&mut self, word: &[u8]) -> bool {
        let taken = self.rest().starts_with(word);
        if taken {
            self.at += word.len();
        }
        taken
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        match self.take(byte) {
            true => Ok(()),
            false => Err(self.unexpected(&format!("'{}'", char::from(byte)))),
        }
    }

    /// What stands at the cursor instead of `wanted`.
    fn unexpected(&self, wanted: &str) -> String {
        let saw = match self.peek() {
            Some(b) if b.is_ascii_graphic() => format!("'{}'", char::from(b)),
            Some(b) => format!("byte {b:#04x}"),
            None => "the end".to_string(),
        };
        format!("{saw} at byte {} where {wanted} belongs", self.at)
    }

    /// A quoted string (`'` or `"`, after a `u` or `U` if any, `\\` escaping the next
    /// byte) on one line: its bytes between the quotes.
    fn string(&mut self) -> Result<&'a [u8], String> {
        let prefixed = matches!(self.peek(), Some(b'u' | b'U'))
            && matches!(self.bytes.get(self.at + 1), Some(b'\'' | b'"'));
        let opens = self.at + usize::from(prefixed);
        let quote = match self.bytes.get(opens) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(self.unexpected("a string")),
        };
        let begin = opens + 1;
        let mut i = begin;
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'\n' | b'\r' => break,
                b if b == quote => {
                    self.at = i + 1;
                    return Ok(&self.bytes[begin..i]);
                }
                _ => i += 1,
            }
        }
        Err(format!("a string at byte {} that does not end", begin - 1))
    }

    /// A tuple of integers, `()`, `(3,)`, `(2, 3)` or `(2, 3,)`, the product of whose
    /// non-zero ones fits 64 bits (the data's length is their product). Integers are
    /// written as Python reads them: decimal digits, `_` between two, no leading zero
    /// but in zero itself; with `long_ints`, Python 2's `L` may follow one.
    fn tuple(&mut self, long_ints: bool) -> Result<Vec<u64>, String> {
        self.expect(b'(')?;
        let mut product = Some(1u64);
        let mut dims = Vec::new();
        loop {
            self.blank();
            if self.take(b')') {
                break;
            }
            let dimension = self.integer()?;
            if long_ints {
                let before = self.at;
                self.blank();
                let next = self.bytes.get(self.at + 1);
                let alone = !next.is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_');
                if !(self.peek() == Some(b'L') && alone && self.take(b'L')) {
                    self.at = before;
                }
            }
            // Zeros left out: the data of any other dimensions is empty.
            product = product
                .zip(dimension)
                .and_then(|(p, d)| p.checked_mul(d.max(1)));
            dims.push(dimension.unwrap_or(u64::MAX));
            self.blank();
            if !self.take(b',') {
                self.blank();
                self.expect(b')')?;
                break;
            }
        }
        match product {
            Some(_) => Ok(dims),
            None => Err("its dimensions multiply past 64 bits".into()),
        }
    }

    /// A non-negative integer as Python writes it (decimal, or after `0x`, `0o` or
    /// `0b`; `_` before a digit but the first decimal one): its value, `None` past 64
    /// bits.
    fn integer(&mut self) -> Result<Option<u64>, String> {
        let start = self.at;
        let radix = match (self.peek(), self.bytes.get(self.at + 1)) {
            (Some(b'0'), Some(b'x' | b'X')) => 16,
            (Some(b'0'), Some(b'o' | b'O')) => 8,
            (Some(b'0'), Some(b'b' | b'B')) => 2,
            _ => 10,
        };
        if radix != 10 {
            self.at += 2;
        }
        let (mut value, mut digits) = (Some(0u64), 0usize);
        loop {
            let underscore = self.peek() == Some(b'_') && (digits > 0 || radix != 10);
            let at = self.at + usize::from(underscore);
            let Some(digit) = self
                .bytes
                .get(at)
                .and_then(|&b| char::from(b).to_digit(radix))
            else {
                break;
            };
            value = value
                .and_then(|n| n.checked_mul(u64::from(radix)))
                .and_then(|n| n.checked_add(u64::from(digit)));
            digits += 1;
            self.at = at + 1;
        }
        if digits == 0 {
            self.at = start;
            return Err(self.unexpected("a dimension"));
        }
        // Python reads `00` but not `03`.
        if radix == 10 && self.bytes[start] == b'0' && value != Some(0) {
            return Err(format!(
                "a dimension at byte {start} with a leading zero, which Python does not read"
            ));
        }
        // Python 2's `L` is for the caller to take.
        if matches!(self.peek(), Some(b) if b.is_ascii_alphabetic() && b != b'L') {
            return Err(self.unexpected("a dimension's end"));
        }
        Ok(value)
    }
}

/// How many numbers of a list an error writes ([`listed`]).
const LISTED: usize = 16;

/// `[a, b, c]`, or, past [`LISTED`] numbers, the first of them and how many there are
/// (a header of 30,000 dimensions made an error of 90 KB).
fn listed(numbers: &[u64]) -> String {
    if numbers.len() <= LISTED {
        return format!("{numbers:?}");
    }
    let first: Vec<String> = numbers[..LISTED].iter().map(u64::to_string).collect();
    format!("[{}, ... ({} in all)]", first.join(", "), numbers.len())
}

/// How many characters of a line of a header's error are kept.
const ERROR_LINE: usize = 160;

/// An error about a header, each line cut to [`ERROR_LINE`] characters: the parser's
/// message quotes the header's line whole (a header of 200,000 brackets made an error
/// of 220 KB), where its position and reason say what is wrong.
fn concise(message: &str) -> String {
    let lines = message
        .lines()
        .map(|line| match line.char_indices().nth(ERROR_LINE) {
            Some((at, _)) => format!("{}…", &line[..at]),
            None => line.to_string(),
        });
    lines.collect::<Vec<_>>().join("\n")
}

/// Refuses narrow-type values that do not fit (and `pred` other than 0 or 1).
fn check_values(t: PrimitiveType, data: &[u8], dims: &[u64], order: Order) -> Result<(), NpyError> {
    let fits = |b: u8| match narrow(t) {
        Narrow::No => true,
        Narrow::Signed(bits) => {
            let v = i16::from(b as i8);
            let half = 1i16 << (bits - 1);
            (-half..half).contains(&v)
        }
        Narrow::Unsigned(bits) => u16::from(b) < (1u16 << bits),
    };
    let Some(position) = data.iter().position(|&b| !fits(b)) else {
        return Ok(());
    };
    let byte = data[position];
    let value = match narrow(t) {
        Narrow::Signed(_) => i64::from(byte as i8),
        _ => i64::from(byte),
    };
    // The index of the position in file order.
    let mut index = vec![0u64; dims.len()];
    let mut rest = position as u64;
    let order: Vec<usize> = match order {
        Order::C => (0..dims.len()).rev().collect(),
        Order::Fortran => (0..dims.len()).collect(),
    };
    for k in order {
        let d = dims[k].max(1);
        index[k] = rest % d;
        rest /= d;
    }
    Err(NpyError::Value {
        index,
        value,
        element_type: t.name(),
    })
}
