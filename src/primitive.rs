//! [`PrimitiveType`]: the validated element type of a shape, with its bit and byte widths
//! and its HLO text name.
//!
//! The variants are exactly the valid values of the generated
//! [`proto::PrimitiveType`] minus `PRIMITIVE_TYPE_INVALID`,
//! with the same Rust names. Text names are derived from the generated enum: the proto
//! name lower-cased, except `OPAQUE_TYPE`, which XLA prints as `opaque`.

use std::fmt;
use std::sync::LazyLock;

use crate::proto;

macro_rules! primitive_types {
    ($( $(#[$doc:meta])* $name:ident => $bits:expr, )*) => {
        /// The element type of an array shape, or the kind of a non-array shape (`Tuple`,
        /// `OpaqueType`, `Token`, `Buffer`), as in XLA's `PrimitiveType`.
        ///
        /// Every valid value of the proto enum except `PRIMITIVE_TYPE_INVALID`. Numbers a
        /// newer XLA may add are not representable here: the validation gate reports them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum PrimitiveType {
            $( $(#[$doc])* $name, )*
        }

        impl PrimitiveType {
            /// Every primitive type, in proto number order.
            pub const ALL: &'static [PrimitiveType] = &[$(PrimitiveType::$name),*];

            /// The matching generated proto enum value.
            pub fn to_proto(self) -> proto::PrimitiveType {
                match self {
                    $(PrimitiveType::$name => proto::PrimitiveType::$name,)*
                }
            }

            /// The domain value for a generated proto enum value; `None` for
            /// `PRIMITIVE_TYPE_INVALID`.
            pub fn from_proto(value: proto::PrimitiveType) -> Option<Self> {
                match value {
                    proto::PrimitiveType::Invalid => None,
                    $(proto::PrimitiveType::$name => Some(PrimitiveType::$name),)*
                }
            }

            /// Number of bits one element occupies logically (XLA's
            /// `primitive_util::BitWidth`), or `None` for the non-array kinds.
            pub fn bit_width(self) -> Option<u32> {
                match self {
                    $(PrimitiveType::$name => $bits,)*
                }
            }
        }
    };
}

primitive_types! {
    /// `pred`: a boolean; bit width 1, stored in one byte.
    Pred => Some(1),
    /// `s8`.
    S8 => Some(8),
    /// `s16`.
    S16 => Some(16),
    /// `s32`.
    S32 => Some(32),
    /// `s64`.
    S64 => Some(64),
    /// `u8`.
    U8 => Some(8),
    /// `u16`.
    U16 => Some(16),
    /// `u32`.
    U32 => Some(32),
    /// `u64`.
    U64 => Some(64),
    /// `f16`.
    F16 => Some(16),
    /// `f32`.
    F32 => Some(32),
    /// `f64`.
    F64 => Some(64),
    /// A tuple shape (not an array element type).
    Tuple => None,
    /// An opaque shape, printed `opaque` (not an array element type).
    OpaqueType => None,
    /// `c64`: two f32.
    C64 => Some(64),
    /// `bf16`.
    Bf16 => Some(16),
    /// A token shape (not an array element type).
    Token => None,
    /// `c128`: two f64.
    C128 => Some(128),
    /// `f8e5m2`.
    F8e5m2 => Some(8),
    /// `f8e4m3fn`.
    F8e4m3fn => Some(8),
    /// `s4`.
    S4 => Some(4),
    /// `u4`.
    U4 => Some(4),
    /// `f8e4m3b11fnuz`.
    F8e4m3b11fnuz => Some(8),
    /// `f8e5m2fnuz`.
    F8e5m2fnuz => Some(8),
    /// `f8e4m3fnuz`.
    F8e4m3fnuz => Some(8),
    /// `s2`.
    S2 => Some(2),
    /// `u2`.
    U2 => Some(2),
    /// `f8e4m3`.
    F8e4m3 => Some(8),
    /// `f8e3m4`.
    F8e3m4 => Some(8),
    /// `s1`.
    S1 => Some(1),
    /// `u1`.
    U1 => Some(1),
    /// `f4e2m1fn` (MX type).
    F4e2m1fn => Some(4),
    /// `f8e8m0fnu` (MX type).
    F8e8m0fnu => Some(8),
    /// A buffer shape, printed `b(...)` (not an array element type).
    Buffer => None,
    /// `f6e3m2fn` (MX type).
    F6e3m2fn => Some(6),
    /// `f6e2m3fn` (MX type).
    F6e2m3fn => Some(6),
}

/// Text names, derived from the generated enum once: index = position in `ALL`.
static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    PrimitiveType::ALL
        .iter()
        .map(|t| match t {
            PrimitiveType::OpaqueType => "opaque".to_string(),
            _ => t.to_proto().as_str_name().to_ascii_lowercase(),
        })
        .collect()
});

impl PrimitiveType {
    /// The domain value for a raw proto enum number; `None` for `PRIMITIVE_TYPE_INVALID`
    /// (0) and for numbers this schema does not know.
    pub fn from_i32(value: i32) -> Option<Self> {
        proto::PrimitiveType::try_from(value)
            .ok()
            .and_then(Self::from_proto)
    }

    /// The proto enum number.
    pub fn as_i32(self) -> i32 {
        self.to_proto() as i32
    }

    /// The HLO text name: the proto name lower-cased (`f32`, `bf16`, `pred`, `token`),
    /// except `OPAQUE_TYPE`, which is `opaque`.
    pub fn name(self) -> &'static str {
        // `self as usize` is the position in ALL, since both follow declaration order.
        NAMES.get(self as usize).map_or("", String::as_str)
    }

    /// The type with this HLO text name (`f32`, `opaque`, ...), as XLA's name table has
    /// it: every valid type except `PRIMITIVE_TYPE_INVALID`; `opaque_type` is not a name.
    pub fn from_name(name: &str) -> Option<Self> {
        NAMES
            .iter()
            .position(|n| n == name)
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// Whether this is an array element type (XLA's `IsArrayType`): everything except
    /// `Tuple`, `OpaqueType`, `Token` and `Buffer`.
    pub fn is_array(self) -> bool {
        self.bit_width().is_some()
    }

    /// Bytes one element occupies without `element_size_in_bits` packing (XLA's
    /// `ByteWidth`): the bit width rounded up to whole bytes, so `pred` and every
    /// sub-byte type take one byte. `None` for the non-array kinds.
    pub fn byte_width(self) -> Option<u32> {
        self.bit_width().map(|bits| bits.div_ceil(8))
    }

    /// Whether this is a signed or unsigned integer type (`s1`..`s64`, `u1`..`u64`).
    pub fn is_integral(self) -> bool {
        self.is_signed_integral() || self.is_unsigned_integral()
    }

    /// Whether this is a signed integer type.
    pub fn is_signed_integral(self) -> bool {
        use PrimitiveType::*;
        matches!(self, S1 | S2 | S4 | S8 | S16 | S32 | S64)
    }

    /// Whether this is an unsigned integer type.
    pub fn is_unsigned_integral(self) -> bool {
        use PrimitiveType::*;
        matches!(self, U1 | U2 | U4 | U8 | U16 | U32 | U64)
    }

    /// Whether this is a complex type (`c64`, `c128`).
    pub fn is_complex(self) -> bool {
        matches!(self, PrimitiveType::C64 | PrimitiveType::C128)
    }

    /// Whether this is a real floating-point type.
    pub fn is_floating_point(self) -> bool {
        self.is_array() && !self.is_integral() && !self.is_complex() && self != PrimitiveType::Pred
    }

    /// XLA's `IsSubByteNonPredType`: an array type other than `pred` narrower than 8
    /// bits (`s1`, `s2`, `s4`, `u1`, `u2`, `u4`, `f4e2m1fn`; also the 6-bit floats).
    pub fn is_sub_byte_non_pred(self) -> bool {
        self != PrimitiveType::Pred && self.bit_width().is_some_and(|bits| bits < 8)
    }
}

impl fmt::Display for PrimitiveType {
    /// Writes the HLO text name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_proto_value_but_invalid_maps_both_ways() {
        for number in 0..=40 {
            match proto::PrimitiveType::try_from(number) {
                Ok(proto::PrimitiveType::Invalid) | Err(_) => {
                    assert_eq!(PrimitiveType::from_i32(number), None)
                }
                Ok(p) => {
                    let t = PrimitiveType::from_proto(p).expect("valid type");
                    assert_eq!(t.as_i32(), number);
                    assert_eq!(PrimitiveType::from_name(t.name()), Some(t));
                }
            }
        }
        assert_eq!(PrimitiveType::ALL.len(), 36);
    }
}
