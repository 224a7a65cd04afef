//! Integers into text without `core::fmt`: the printers' hot path.

/// Appends `value` in decimal, without going through `core::fmt`.
pub(crate) fn push_int(out: &mut String, value: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::push_int;

    #[test]
    fn every_width_and_sign_reads_as_core_fmt() {
        let mut values = vec![0, 1, -1, 9, 10, -10, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut power = 1i64;
        while let Some(next) = power.checked_mul(10) {
            values.extend([power - 1, power, power + 1, -power, next / 3]);
            power = next;
        }
        for value in values {
            let mut out = String::from("x");
            push_int(&mut out, value);
            assert_eq!(out, format!("x{value}"));
        }
    }
}
