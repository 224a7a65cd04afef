//! Element type names in HLO text: the enum names lower-cased, `opaque` for OPAQUE_TYPE.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use crate::proto::PrimitiveType;

/// FNV-1a: type words are a few bytes long, and the module scanner looks one up for
/// every `word[` it meets, so a light hash beats SipHash here (no untrusted keys are
/// stored: the table is fixed).
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

struct Names {
    /// Text name by enum number; `None` where the number has no text name.
    by_number: Vec<Option<&'static str>>,
    by_name: HashMap<&'static str, i32, BuildHasherDefault<Fnv>>,
}

fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut by_number = Vec::new();
        let mut by_name = HashMap::default();
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
            // TUPLE and BUFFER are not type words; `tuple[]` and `buffer[]` do not parse.
            if !matches!(ty, PrimitiveType::Tuple | PrimitiveType::Buffer) {
                by_name.insert(name, number);
            }
        }
        Names { by_number, by_name }
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
pub fn type_from_name(name: &str) -> Option<i32> {
    names().by_name.get(name).copied()
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
