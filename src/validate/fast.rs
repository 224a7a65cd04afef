//! The fast path of [`super::decode_validated_shape`]: the binary form of the shapes
//! XLA writes (arrays with their dimensions, dynamic flags and layouts, and tuples,
//! buffers, tokens and opaques of them) read straight into inline lists and checked by
//! the validator's own rules, with no message built on the heap. It only ever says
//! "valid, and here is the shape": anything else (a field it does not read, an unknown
//! field, a wire error, any issue, even a warning) makes it give up, and the caller
//! decodes and validates the bytes the ordinary way, which gives the same answer for
//! what the fast path accepts and the full report for the rest.

use smallvec::SmallVec;

use super::fields::{LayoutFields, ShapeFields};
use super::{Checker, Options};
use crate::codec::wire::{Reader, WireType};
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, SplitConfigProto};
use crate::shape::Shape;

/// The most values the fast path reads into one list (dimensions, dynamic flags,
/// `minor_to_major`, and all tiles' dimensions together); longer lists go the
/// ordinary way.
const MAX_RANK: usize = 64;

/// How deep tuples may nest for the fast path: far below the codec's recursion limit
/// and the validator's depth limit (a shape at this depth, its layout and a tile are
/// still within both), so that neither ever applies here.
const MAX_NESTING: usize = 64;

const _: () = assert!(MAX_NESTING + 2 < crate::codec::wire::RECURSION_LIMIT as usize);
const _: () = assert!(MAX_NESTING < super::MAX_DEPTH);

/// An array's fields as read from the wire.
#[derive(Default)]
struct FlatShape {
    element_type: i32,
    dimensions: SmallVec<[i64; 8]>,
    dynamic: SmallVec<[bool; 8]>,
    layout: Option<FlatLayout>,
}

/// A layout's fields as read from the wire: the two lists inline, the scalar fields in
/// an otherwise empty `LayoutProto` (whose vectors stay empty and unallocated).
#[derive(Default)]
struct FlatLayout {
    minor_to_major: SmallVec<[i64; 8]>,
    /// Every tile's dimensions, one after the other.
    tile_dims: SmallVec<[i64; 8]>,
    /// Where each tile ends in `tile_dims`.
    tile_ends: SmallVec<[usize; 4]>,
    others: LayoutProto,
}

impl ShapeFields for FlatShape {
    type Layout = FlatLayout;

    fn dimensions(&self) -> &[i64] {
        &self.dimensions
    }

    fn is_dynamic_dimension(&self) -> &[bool] {
        &self.dynamic
    }

    fn has_tuple_shapes(&self) -> bool {
        false
    }

    fn layout(&self) -> Option<&FlatLayout> {
        self.layout.as_ref()
    }
}

impl LayoutFields for FlatLayout {
    fn minor_to_major(&self) -> &[i64] {
        &self.minor_to_major
    }

    fn tiles(&self) -> impl Iterator<Item = &[i64]> {
        let starts = std::iter::once(0).chain(self.tile_ends.iter().copied());
        starts
            .zip(self.tile_ends.iter().copied())
            .map(|(start, end)| self.tile_dims.get(start..end).unwrap_or(&[]))
    }

    fn others(&self) -> &LayoutProto {
        &self.others
    }
}

/// The valid shape `bytes` encode, when the fast path can tell; `None` when the
/// ordinary path must decide.
pub(super) fn shape(bytes: &[u8], options: Options) -> Option<Shape> {
    shape_at(bytes, options, 0)
}

fn shape_at(bytes: &[u8], options: Options, nesting: usize) -> Option<Shape> {
    let mut flat = FlatShape::default();
    let mut elements: Vec<Shape> = Vec::new();
    let mut reader = Reader::new(bytes);
    while !reader.is_at_end() {
        match reader.read_tag().ok()? {
            (2, WireType::Varint) => {
                // Protobuf keeps the low 32 bits of an enum's varint.
                flat.element_type = reader.read_varint().ok()? as i32;
            }
            (3, wire_type) => varints(&mut reader, wire_type, &mut flat.dimensions, |v| v as i64)?,
            (4, WireType::LengthDelimited) if nesting < MAX_NESTING => {
                let element = reader.read_length_delimited().ok()?;
                elements.push(shape_at(element, options, nesting + 1)?);
            }
            (5, WireType::LengthDelimited) if flat.layout.is_none() => {
                // Read in place: the flat layout is a few hundred bytes to move.
                let slot = flat.layout.insert(FlatLayout::default());
                layout(reader.read_length_delimited().ok()?, slot)?;
            }
            (6, wire_type) => varints(&mut reader, wire_type, &mut flat.dynamic, |v| v != 0)?,
            _ => return None,
        }
    }
    let element_type = PrimitiveType::from_i32(flat.element_type)?;
    if !element_type.is_array() {
        // A tuple, token, opaque or buffer with nothing but its elements has no issue of
        // its own; a buffer's one element must be an array.
        let bare = flat.dimensions.is_empty() && flat.dynamic.is_empty() && flat.layout.is_none();
        return match element_type {
            _ if !bare => None,
            PrimitiveType::Tuple => Some(Shape::Tuple(elements)),
            PrimitiveType::Token if elements.is_empty() => Some(Shape::Token),
            PrimitiveType::OpaqueType if elements.is_empty() => Some(Shape::Opaque),
            PrimitiveType::Buffer => match <[Shape; 1]>::try_from(elements) {
                Ok([Shape::Array(array)]) => Some(Shape::Buffer(array)),
                _ => None,
            },
            _ => None,
        };
    }
    if !elements.is_empty() {
        return None;
    }
    let mut checker = Checker::new(options);
    let array = checker.array(element_type, &flat, None);
    if checker.errors != 0 || !checker.report.is_clean() {
        return None;
    }
    array.map(Shape::Array)
}

fn layout(bytes: &[u8], flat: &mut FlatLayout) -> Option<()> {
    let mut reader = Reader::new(bytes);
    while !reader.is_at_end() {
        let others = &mut flat.others;
        match reader.read_tag().ok()? {
            (1, wire_type) => {
                varints(&mut reader, wire_type, &mut flat.minor_to_major, |v| {
                    v as i64
                })?;
            }
            (2, wire_type) => {
                let mut padded = SmallVec::<[i64; 8]>::new();
                varints(&mut reader, wire_type, &mut padded, |v| v as i64)?;
                others.padded_dimensions.extend_from_slice(&padded);
                if others.padded_dimensions.len() > MAX_RANK {
                    return None;
                }
            }
            (6, WireType::LengthDelimited) => tile(reader.read_length_delimited().ok()?, flat)?,
            (17, WireType::LengthDelimited) => {
                others
                    .split_configs
                    .push(split_config(reader.read_length_delimited().ok()?)?);
                if others.split_configs.len() > MAX_RANK {
                    return None;
                }
            }
            (number, WireType::Varint) => {
                let value = reader.read_varint().ok()?;
                // As the codec reads them: int64 fields keep the 64 bits, enums the low 32.
                match number {
                    3 => others.padding_value = value as i32,
                    4 => others.format = value as i32,
                    5 => others.max_sparse_elements = value as i64,
                    7 => others.element_size_in_bits = value as i64,
                    8 => others.memory_space = value as i64,
                    11 => others.index_primitive_type = value as i32,
                    12 => others.pointer_primitive_type = value as i32,
                    15 => others.dynamic_shape_metadata_prefix_bytes = value as i64,
                    16 => others.tail_padding_alignment_in_elements = value as i64,
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(())
}

/// One `TileProto`: its dimensions (field 1) and nothing else.
fn tile(bytes: &[u8], flat: &mut FlatLayout) -> Option<()> {
    let mut reader = Reader::new(bytes);
    while !reader.is_at_end() {
        match reader.read_tag().ok()? {
            (1, wire_type) => varints(&mut reader, wire_type, &mut flat.tile_dims, |v| v as i64)?,
            _ => return None,
        }
    }
    flat.tile_ends.push(flat.tile_dims.len());
    Some(())
}

/// One `SplitConfigProto`: its dimension (field 1) and split indices (field 2).
fn split_config(bytes: &[u8]) -> Option<SplitConfigProto> {
    let mut split = SplitConfigProto::default();
    let mut indices = SmallVec::<[i64; 8]>::new();
    let mut reader = Reader::new(bytes);
    while !reader.is_at_end() {
        match reader.read_tag().ok()? {
            (1, WireType::Varint) => split.dimension = reader.read_varint().ok()? as i64,
            (2, wire_type) => varints(&mut reader, wire_type, &mut indices, |v| v as i64)?,
            _ => return None,
        }
    }
    split.split_indices = indices.to_vec();
    Some(split)
}

/// A repeated varint field, one value or a packed run, appended to `out` (at most
/// [`MAX_RANK`] values in all).
fn varints<T, const N: usize>(
    reader: &mut Reader<'_>,
    wire_type: WireType,
    out: &mut SmallVec<[T; N]>,
    convert: impl Fn(u64) -> T,
) -> Option<()>
where
    [T; N]: smallvec::Array<Item = T>,
{
    match wire_type {
        WireType::Varint => out.push(convert(reader.read_varint().ok()?)),
        WireType::LengthDelimited => {
            let body = reader.read_length_delimited().ok()?;
            if out.len() + body.len() > MAX_RANK * 10 {
                return None;
            }
            let mut values = Reader::new(body);
            while !values.is_at_end() {
                out.push(convert(values.read_varint().ok()?));
            }
        }
        _ => return None,
    }
    (out.len() <= MAX_RANK).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;
    use crate::validate::{validate_decoded_shape, Options};

    /// Every shape message of the fixtures (XLA's, Google's and hand-made ones, valid or
    /// not), whole and with each byte changed: what the fast path accepts, the ordinary
    /// path finds valid without a warning and builds alike; and the fast path takes
    /// nearly every real shape the ordinary path finds clean.
    #[test]
    fn agrees_with_the_ordinary_path_on_the_fixtures() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/messages.jsonl");
        let text = std::fs::read_to_string(path).expect("fixtures/messages.jsonl");
        let (mut clean, mut taken, mut variants) = (0usize, 0usize, 0usize);
        for line in text.lines().filter(|l| l.contains(r#""message":"shape""#)) {
            let start = line.find(r#""hex":""#).expect("a hex field") + 7;
            let len = line[start..].find('"').expect("the end of the hex field");
            let bytes = hex::decode(&line[start..start + len]).expect("hex");
            let mut inputs = vec![bytes.clone()];
            for at in 0..bytes.len() {
                for mask in [0x01, 0x80, 0xff] {
                    let mut changed = bytes.clone();
                    changed[at] ^= mask;
                    inputs.push(changed);
                }
            }
            for (i, input) in inputs.iter().enumerate() {
                for options in [Options::proto(), Options::hlo_text()] {
                    let fast = shape(input, options);
                    let ordinary = codec::decode_shape(input)
                        .map(|decoded| validate_decoded_shape(&decoded, options));
                    let ordinary_clean = match &ordinary {
                        Ok(v) => v.report().is_clean().then(|| v.value().cloned()).flatten(),
                        Err(_) => None,
                    };
                    if let Some(shape) = &fast {
                        assert_eq!(Some(shape), ordinary_clean.as_ref(), "{input:02x?}");
                    }
                    if i == 0 && options == Options::proto() && ordinary_clean.is_some() {
                        clean += 1;
                        taken += usize::from(fast.is_some());
                    }
                    variants += 1;
                }
            }
        }
        assert!(clean >= 500, "{clean} clean shapes");
        assert!(
            taken * 100 >= clean * 99,
            "{taken} of {clean} clean shapes taken"
        );
        assert!(variants > 10_000, "{variants} inputs");
    }
}
