//! Bit-level element moves: the one definition of what moving an element means, shared
//! by the reference and the fast path's general kernels.
//!
//! Element slot `i` of an `n`-bit layout occupies bits `[i·n, (i+1)·n)` of the buffer,
//! each byte's bits counted from the least significant (XLA's `PackIntN` order).

/// How one element goes from a source slot to a destination slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conv {
    /// Bits of a source slot.
    pub src_bits: u64,
    /// Bits of a destination slot.
    pub dst_bits: u64,
    /// The element type's own bit width (4 for `s4`, 32 for `f32`).
    pub value_bits: u64,
    /// Whether widening sign-extends (signed integer types).
    pub signed: bool,
}

impl Conv {
    /// Moves the element in source slot `s` to destination slot `d`:
    ///
    /// - equal slot widths: the slot's bits, all of them, unchanged;
    /// - a narrower destination: the low `dst_bits` bits;
    /// - a wider destination: the value's bits (the low `min(value_bits, src_bits)`),
    ///   then the sign bit repeated for signed integer types, zeros otherwise.
    #[inline]
    pub fn move_element(&self, src: &[u8], s: u64, dst: &mut [u8], d: u64) {
        let sb = u128::from(s) * u128::from(self.src_bits);
        let db = u128::from(d) * u128::from(self.dst_bits);
        if self.dst_bits <= self.src_bits {
            copy_bits(src, sb, dst, db, self.dst_bits);
        } else {
            let v = self.value_bits.min(self.src_bits);
            copy_bits(src, sb, dst, db, v);
            let sign = self.signed && read_bit(src, sb + u128::from(v) - 1);
            fill_bits(dst, db + u128::from(v), self.dst_bits - v, sign);
        }
    }
}

/// Bit `bit` of a buffer (LSB-first within bytes).
#[inline]
pub(crate) fn read_bit(buf: &[u8], bit: u128) -> bool {
    (buf[(bit / 8) as usize] >> (bit % 8)) & 1 == 1
}

/// Copies `n` bits from bit offset `s` of `src` to bit offset `d` of `dst`, leaving the
/// other bits of `dst` as they are. Offsets must be inside the buffers.
#[inline]
pub(crate) fn copy_bits(src: &[u8], mut s: u128, dst: &mut [u8], mut d: u128, mut n: u64) {
    // Whole bytes when both offsets are byte-aligned.
    if s % 8 == 0 && d % 8 == 0 && n >= 8 {
        let bytes = (n / 8) as usize;
        let (si, di) = ((s / 8) as usize, (d / 8) as usize);
        dst[di..di + bytes].copy_from_slice(&src[si..si + bytes]);
        let done = bytes as u64 * 8;
        s += u128::from(done);
        d += u128::from(done);
        n -= done;
    }
    while n > 0 {
        let soff = (s % 8) as u64;
        let doff = (d % 8) as u64;
        let take = n.min(8 - soff).min(8 - doff);
        let mask = ((1u16 << take) - 1) as u8;
        let v = (src[(s / 8) as usize] >> soff) & mask;
        let byte = &mut dst[(d / 8) as usize];
        *byte = (*byte & !(mask << doff)) | (v << doff);
        s += u128::from(take);
        d += u128::from(take);
        n -= take;
    }
}

/// Sets `n` bits from bit offset `d` to `one`.
pub(crate) fn fill_bits(dst: &mut [u8], mut d: u128, mut n: u64, one: bool) {
    let pattern = if one { 0xFF } else { 0 };
    while n > 0 {
        let doff = (d % 8) as u64;
        if doff == 0 && n >= 8 {
            let bytes = (n / 8) as usize;
            let di = (d / 8) as usize;
            dst[di..di + bytes].fill(pattern);
            let done = bytes as u64 * 8;
            d += u128::from(done);
            n -= done;
            continue;
        }
        let take = n.min(8 - doff);
        let mask = (((1u16 << take) - 1) as u8) << doff;
        let byte = &mut dst[(d / 8) as usize];
        *byte = (*byte & !mask) | (pattern & mask);
        d += u128::from(take);
        n -= take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_and_extension() {
        // s4 E(4) -> 8-bit slots: 0x9 (-7) sign-extends, 0x7 does not.
        let src = [0x79u8];
        let mut dst = [0u8; 2];
        let conv = Conv {
            src_bits: 4,
            dst_bits: 8,
            value_bits: 4,
            signed: true,
        };
        conv.move_element(&src, 0, &mut dst, 0);
        conv.move_element(&src, 1, &mut dst, 1);
        assert_eq!(dst, [0xF9, 0x07]);
        // And back: the low nibble.
        let back = Conv {
            src_bits: 8,
            dst_bits: 4,
            value_bits: 4,
            signed: true,
        };
        let mut packed = [0u8];
        back.move_element(&dst, 0, &mut packed, 0);
        back.move_element(&dst, 1, &mut packed, 1);
        assert_eq!(packed, [0x79]);
    }

    #[test]
    fn unaligned_runs() {
        let src = [0b1011_0110u8, 0b0000_1111];
        let mut dst = [0u8; 3];
        copy_bits(&src, 1, &mut dst, 5, 11);
        let mut expect = [0u8; 3];
        for i in 0..11u128 {
            if read_bit(&src, 1 + i) {
                let b = 5 + i;
                expect[(b / 8) as usize] |= 1 << (b % 8);
            }
        }
        assert_eq!(dst, expect);
        fill_bits(&mut dst, 3, 14, true);
        assert_eq!(dst[0] & 0b1111_1000, 0b1111_1000);
        assert_eq!(dst[1], 0xFF);
        assert_eq!(dst[2] & 1, 1);
    }
}
