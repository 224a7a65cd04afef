//! Element type names in HLO text: the enum names lower-cased, `opaque` for OPAQUE_TYPE.

use std::sync::OnceLock;

use crate::proto::PrimitiveType;

struct Names {
    /// Text name by enum number; `None` where the number has no text name.
    by_number: Vec<Option<&'static str>>,
}

fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut by_number = Vec::new();
        // The generated enum is the one list of names; the numbers are small.
        for number in 0..=u8::MAX as i32 {
            let Ok(ty) = PrimitiveType::try_from(number) else {
                continue;
            };
            let name: &'static str = match ty {
                PrimitiveType::Invalid => continue,
                PrimitiveType::OpaqueType => "opaque",
                _ => Box::leak(ty.as_str_name().to_ascii_lowercase().into_boxed_str()),
            };
            let index = usize::try_from(number).unwrap_or_default();
            if by_number.len() <= index {
                by_number.resize(index + 1, None);
            }
            by_number[index] = Some(name);
        }
        Names { by_number }
    })
}

/// The HLO text name of an element type (`f32`, `opaque`, `tuple`), or `None` for
/// PRIMITIVE_TYPE_INVALID and numbers this schema does not name.
pub fn type_name(element_type: i32) -> Option<&'static str> {
    let index = usize::try_from(element_type).ok()?;
    names().by_number.get(index).copied().flatten()
}

/// The element type a type word names, as XLA's lexer reads it: every lower-cased enum
/// name except `tuple`, `buffer` and the invalid type, plus `opaque`.
///
/// A `match` on the bytes: the scanners call this for every word that could be a type,
/// and it neither hashes nor touches a table (a unit test keeps it in step with the
/// generated enum).
pub fn type_from_name(name: &str) -> Option<i32> {
    use PrimitiveType as P;
    let ty = match name.as_bytes() {
        b"pred" => P::Pred,
        b"s1" => P::S1,
        b"s2" => P::S2,
        b"s4" => P::S4,
        b"s8" => P::S8,
        b"s16" => P::S16,
        b"s32" => P::S32,
        b"s64" => P::S64,
        b"u1" => P::U1,
        b"u2" => P::U2,
        b"u4" => P::U4,
        b"u8" => P::U8,
        b"u16" => P::U16,
        b"u32" => P::U32,
        b"u64" => P::U64,
        b"f16" => P::F16,
        b"f32" => P::F32,
        b"f64" => P::F64,
        b"bf16" => P::Bf16,
        b"c64" => P::C64,
        b"c128" => P::C128,
        b"f4e2m1fn" => P::F4e2m1fn,
        b"f6e2m3fn" => P::F6e2m3fn,
        b"f6e3m2fn" => P::F6e3m2fn,
        b"f8e3m4" => P::F8e3m4,
        b"f8e4m3" => P::F8e4m3,
        b"f8e4m3fn" => P::F8e4m3fn,
        b"f8e4m3fnuz" => P::F8e4m3fnuz,
        b"f8e4m3b11fnuz" => P::F8e4m3b11fnuz,
        b"f8e5m2" => P::F8e5m2,
        b"f8e5m2fnuz" => P::F8e5m2fnuz,
        b"f8e8m0fnu" => P::F8e8m0fnu,
        b"token" => P::Token,
        b"opaque" => P::OpaqueType,
        _ => return None,
    };
    Some(ty as i32)
}

/// Every type word, in enum order (not `tuple` or `buffer`).
pub fn all_names() -> impl Iterator<Item = &'static str> {
    names()
        .by_number
        .iter()
        .flatten()
        .copied()
        .filter(|name| type_from_name(name).is_some())
}

/// Whether `element_type` is an integral type (XLA's `primitive_util::IsIntegralType`).
pub(crate) fn is_integral(element_type: i32) -> bool {
    use PrimitiveType as P;
    matches!(
        PrimitiveType::try_from(element_type),
        Ok(P::S1 | P::S2 | P::S4 | P::S8 | P::S16 | P::S32 | P::S64)
            | Ok(P::U1 | P::U2 | P::U4 | P::U8 | P::U16 | P::U32 | P::U64)
    )
}

/// Whether `element_type` is an array type: a named type other than INVALID, TUPLE,
/// OPAQUE_TYPE, TOKEN and BUFFER.
pub(crate) fn is_array_type(element_type: i32) -> bool {
    use PrimitiveType as P;
    match PrimitiveType::try_from(element_type) {
        Ok(P::Invalid | P::Tuple | P::OpaqueType | P::Token | P::Buffer) => false,
        Ok(_) => true,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `match` of [`type_from_name`] names exactly the enum's types, each by its
    /// lower-cased name (`opaque` for OPAQUE_TYPE), and not TUPLE, BUFFER or INVALID.
    #[test]
    fn type_words_are_the_enum_names() {
        let mut words = 0;
        for number in 0..=i32::from(u8::MAX) {
            let Ok(ty) = PrimitiveType::try_from(number) else {
                continue;
            };
            let name = match ty {
                PrimitiveType::OpaqueType => "opaque".to_string(),
                _ => ty.as_str_name().to_ascii_lowercase(),
            };
            let word = !matches!(
                ty,
                PrimitiveType::Invalid | PrimitiveType::Tuple | PrimitiveType::Buffer
            );
            assert_eq!(type_from_name(&name), word.then_some(number), "{name}");
            words += usize::from(word);
        }
        assert_eq!(all_names().count(), words);
        assert_eq!(type_from_name("F32"), None);
        assert_eq!(type_from_name("opaque_type"), None);
    }
}
