//! Numbers as Google's Python `json_format.Parse` reads them.
//!
//! For an integer field Python takes a JSON integer exactly, a JSON number with a
//! fraction or exponent through a `float` (a double) that must be integral, and a
//! string through Python's `int(s)` and, failing that, `float(s)` (integral again); a
//! string holding a space (U+0020) is refused first. `int(s)` and `float(s)` allow
//! surrounding whitespace (Python's definition of it), `_` between digits, a `+` sign,
//! leading zeros and the decimal digits of every script; `float(s)` also takes
//! `.5`, `5.`, exponents and `inf`/`nan` (which are never integral). This module
//! reproduces exactly that, for the integer fields and the enum fields of the schema.

/// An integer read from text, before its range is checked. Values beyond ±2^100 are
/// clamped there: all that matters about them is that they fit no field.
pub(crate) type Wide = i128;

const CLAMP: Wide = 1 << 100;

/// The first code point of each run of ten decimal digits (Unicode category Nd) that
/// Python 3.11's `int()` and `float()` accept (Unicode 14.0), in order.
const DIGIT_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// The value of a decimal digit of any script, as Python's `int()` sees it.
fn decimal_digit(c: char) -> Option<u8> {
    let code = u32::from(c);
    let run = DIGIT_ZEROS
        .partition_point(|&zero| zero <= code)
        .checked_sub(1)?;
    let offset = code - DIGIT_ZEROS.get(run)?;
    u8::try_from(offset).ok().filter(|&d| d < 10)
}

/// Python's `str.isspace()`: Unicode White_Space plus the four separators U+001C-U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `int(s)` in base 10; `None` where Python raises `ValueError`.
pub(crate) fn python_int(s: &str) -> Option<Wide> {
    if let Some(value) = plain_int(s.as_bytes()) {
        return Some(value.into());
    }
    let s = s.trim_matches(is_python_space);
    let (negative, digits) = match s.chars().next()? {
        '-' => (true, &s[1..]),
        '+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mut value: Wide = 0;
    let mut previous_digit = false;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            if !previous_digit {
                return None;
            }
            previous_digit = false;
            continue;
        }
        let digit = decimal_digit(c)?;
        value = (value * 10 + Wide::from(digit)).min(CLAMP);
        previous_digit = true;
        any = true;
    }
    if !any || !previous_digit {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// The common case, fast: an optional `-` and 1 to 18 ASCII digits, which every
/// reading of an integer (as a JSON number, by `int(s)`) takes as it is.
pub(crate) fn plain_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text {
        [b'-', digits @ ..] => (true, digits),
        digits => (false, digits),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits
        .iter()
        .fold(0, |value: i64, b| value * 10 + i64::from(b - b'0'));
    Some(if negative { -value } else { value })
}

/// Python's `float(s)`; `None` where Python raises `ValueError`.
pub(crate) fn python_float(s: &str) -> Option<f64> {
    let s = s.trim_matches(is_python_space);
    // Digits of every script become ASCII; `_` may only stand between two digits.
    let chars: Vec<char> = s.chars().collect();
    let mut ascii = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let digit_at = |j: Option<usize>| {
                j.and_then(|j| chars.get(j))
                    .is_some_and(|&d| decimal_digit(d).is_some())
            };
            if !digit_at(i.checked_sub(1)) || !digit_at(i.checked_add(1)) {
                return None;
            }
        } else if let Some(d) = decimal_digit(c) {
            ascii.push(char::from(b'0' + d));
        } else if c.is_ascii() {
            ascii.push(c);
        } else {
            return None;
        }
    }
    let unsigned = ascii.strip_prefix(['+', '-']).unwrap_or(&ascii);
    let lower = unsigned.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return ascii.parse().ok();
    }
    // [digits][.digits][(e|E)[sign]digits], with a digit before or after the point.
    let bytes = unsigned.as_bytes();
    let mut i = 0;
    let count_digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let whole = count_digits(i);
    i += whole;
    let mut fraction = 0;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        fraction = count_digits(i);
        i += fraction;
    }
    if whole == 0 && fraction == 0 {
        return None;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        let exponent = count_digits(i);
        if exponent == 0 {
            return None;
        }
        i += exponent;
    }
    if i != bytes.len() {
        return None;
    }
    ascii.parse().ok()
}

/// The integer a JSON number's raw text stands for, as Python's `json.loads` and
/// `json_format` read it: integer syntax exactly; a fraction or an exponent through a
/// double, which must be integral. `Err(())` means not an integer.
pub(crate) fn json_number_as_integer(raw: &str) -> Result<Wide, ()> {
    if raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return python_int(raw).ok_or(());
    }
    match raw {
        "NaN" | "Infinity" | "-Infinity" => Err(()),
        _ => float_as_integer(raw.parse::<f64>().map_err(|_| ())?),
    }
}

/// An integral double as an integer; `Err(())` for a fraction, an infinity or NaN.
pub(crate) fn float_as_integer(value: f64) -> Result<Wide, ()> {
    if !value.is_finite() || value.fract() != 0.0 {
        return Err(());
    }
    // Every finite integral double below 2^100 in magnitude converts exactly; larger
    // ones clamp, which keeps them out of every range.
    if value.abs() >= 2f64.powi(100) {
        return Ok(if value < 0.0 { -CLAMP } else { CLAMP });
    }
    #[allow(clippy::cast_possible_truncation)] // Integral and below 2^100: exact.
    Ok(value as Wide)
}

/// Python's reading of a string for an integer field: refused if it holds a space,
/// then `int(s)`, then an integral `float(s)`.
pub(crate) fn string_as_integer(s: &str) -> Result<Wide, ()> {
    if s.contains(' ') {
        return Err(());
    }
    if let Some(value) = python_int(s) {
        return Ok(value);
    }
    float_as_integer(python_float(s).ok_or(())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_int_matches_cpython() {
        // Expected values: CPython 3.11 `int(s)`.
        for (s, want) in [
            ("12", Some(12)),
            ("  -12\t", Some(-12)),
            ("+7", Some(7)),
            ("007", Some(7)),
            ("-0", Some(0)),
            ("1_000", Some(1000)),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("+_1", None),
            ("\u{661}\u{662}", Some(12)),
            ("\u{a0}5\u{3000}", Some(5)),
            ("\u{1c}5", Some(5)),
            ("1.0", None),
            ("1e3", None),
            ("", None),
            ("-", None),
            ("0x10", None),
            ("1 2", None),
        ] {
            assert_eq!(python_int(s), want, "{s:?}");
        }
        assert_eq!(python_int(&"9".repeat(60)), Some(CLAMP));
    }

    #[test]
    fn python_float_matches_cpython() {
        // Expected values: CPython 3.11 `float(s)`.
        for (s, want) in [
            ("1e3", Some(1000.0)),
            (" 1.5 ", Some(1.5)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1_0.2_5", Some(10.25)),
            ("1_.5", None),
            ("1._5", None),
            ("-1E+2", Some(-100.0)),
            ("\u{661}.5", Some(1.5)),
            (".", None),
            ("e3", None),
            ("1e", None),
            ("0x1p3", None),
            ("1,5", None),
        ] {
            assert_eq!(python_float(s), want, "{s:?}");
        }
        assert_eq!(python_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(python_float("iNf"), Some(f64::INFINITY));
        assert!(python_float("nan").is_some_and(f64::is_nan));
        assert_eq!(python_float("infinit"), None);
    }

    #[test]
    fn integers_from_json_numbers_and_strings() {
        assert_eq!(
            json_number_as_integer("-9223372036854775809"),
            Ok(-9_223_372_036_854_775_809)
        );
        assert_eq!(json_number_as_integer("1e3"), Ok(1000));
        assert_eq!(json_number_as_integer("-0.0"), Ok(0));
        assert_eq!(json_number_as_integer("1.5"), Err(()));
        assert_eq!(json_number_as_integer("1e400"), Err(()));
        assert_eq!(json_number_as_integer("NaN"), Err(()));
        // 2^63 - 1 is not a double: through a float it becomes 2^63.
        assert_eq!(json_number_as_integer("9223372036854775807.0"), Ok(1 << 63));
        assert_eq!(string_as_integer("\t5"), Ok(5));
        assert_eq!(string_as_integer(" 5"), Err(()));
        assert_eq!(string_as_integer("10e-1"), Ok(1));
        assert_eq!(string_as_integer("inf"), Err(()));
        assert_eq!(string_as_integer("1.5"), Err(()));
    }
}
