//! The binary codec: `ShapeProto`, `LayoutProto` and `ProgramShapeProto` decoded and
//! encoded byte-exactly, with every unknown field kept.
//!
//! prost's own `Message::decode` drops fields the schema does not know, so a message
//! from a newer XLA would lose data on a round trip. This codec reads the wire format
//! by hand into the same prost structs ([`crate::proto`]) and keeps everything else
//! in an [`UnknownFields`] tree beside the message, as a [`Decoded`]:
//!
//! ```
//! use xla_shape::codec;
//!
//! // f32[2,3]{1,0} as XLA's C++ writes it, plus an unknown field 99 in the layout.
//! let bytes = [
//!     0x10, 0x0b, 0x1a, 0x02, 0x02, 0x03, 0x2a, 0x0a, 0x0a, 0x02, 0x01, 0x00, 0x80, 0x01,
//!     0x01, 0x98, 0x06, 0x07, 0x32, 0x02, 0x00, 0x00,
//! ];
//! let decoded = codec::decode_shape(&bytes)?;
//! assert_eq!(decoded.message.dimensions, [2, 3]);
//! assert_eq!(decoded.encode_to_vec(), bytes);
//! let unknown = decoded.unknown_fields();
//! assert_eq!(unknown[0].to_string(), "layout: unknown field 99 (varint)");
//! # Ok::<(), codec::DecodeError>(())
//! ```
//!
//! # Decoding
//!
//! As Google's runtime does, decoding accepts repeated scalars packed, unpacked or
//! both, merges repeated occurrences of a singular message, keeps the last of
//! repeated singular scalars, keeps enum numbers the schema does not name (a varint
//! is cut to its low 32 bits), and keeps a known field written with a wire type it
//! never has as an unknown field ([`UnknownFieldInfo::known_field`] says so, for
//! validation to report). Malformed input is a [`DecodeError`] with its byte
//! offset and field path; see [`wire`] for what counts as malformed. Decoding never
//! panics, recurses more than [`wire::RECURSION_LIMIT`] levels, or reserves more
//! memory than the input's size justifies.
//!
//! # Encoding
//!
//! Encoding writes what Google's runtime writes for the same message under XLA's
//! current schema (upb, the engine of Python's protobuf; C++ agrees except that it
//! re-encodes unknown fields canonically):
//!
//! - known fields in field-number order, repeated scalars packed, proto3 defaults
//!   omitted (zero, enum 0, empty lists), present submessages written even when
//!   empty (`layout {}` is `2a 00`), negative numbers as 10-byte varints;
//! - then, in each message, its unknown fields in their original order and exact
//!   bytes. LayoutProto's retired fields 2-5, which XLA's schema only reserves, are
//!   among them: see [`UnknownField::is_retired_layout_field`].
//!
//! So re-encoding bytes written by XLA or by Google's runtime gives the same bytes,
//! and non-canonical known fields (overlong varints, unpacked lists, repeated
//! singular fields) come out canonical. `tests/codec.rs` checks this against Google's
//! runtime on every fixture message and on 2000 mutated messages and field soups.

mod error;
mod messages;
mod unknown;
pub mod wire;

use crate::message::ProgramPart;

use std::fmt;

pub use error::{DecodeError, DecodeErrorKind};
pub use messages::{TreeEvent, TreeFn};
pub use unknown::{UnknownField, UnknownFieldInfo, UnknownFields};

use crate::message::{AnyMessage, MessageKind};
use crate::path::Path;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};
use messages::{sealed::Codec, Decoder};

/// A message type this codec reads and writes: [`ShapeProto`], [`LayoutProto`],
/// [`ProgramShapeProto`], [`TileProto`] and [`SplitConfigProto`]. Sealed.
pub trait WireMessage: Codec + Clone + PartialEq + fmt::Debug {}

impl WireMessage for ShapeProto {}
impl WireMessage for LayoutProto {}
impl WireMessage for ProgramShapeProto {}
impl WireMessage for TileProto {}
impl WireMessage for SplitConfigProto {}

/// A decoded message with the unknown fields found in it and in every nested message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded<M> {
    /// The message, with every field the schema knows.
    pub message: M,
    /// Everything else, by message position.
    pub unknown: UnknownFields,
}

impl<M: WireMessage> Decoded<M> {
    /// A message with no unknown fields.
    pub fn new(message: M) -> Self {
        Decoded {
            message,
            unknown: UnknownFields::new(),
        }
    }

    /// The serialized message: known fields as Google's runtime writes them, each
    /// message's unknown fields after its known ones.
    pub fn encode_to_vec(&self) -> Vec<u8> {
        messages::encode(&self.message, &self.unknown)
    }

    /// The length of [`Decoded::encode_to_vec`]'s output.
    pub fn encoded_len(&self) -> usize {
        messages::encoded_len(&self.message, &self.unknown)
    }

    /// Every unknown field, with the path of the message holding it, outermost
    /// message first, then by field number and index.
    pub fn unknown_fields(&self) -> Vec<UnknownFieldInfo> {
        let mut out = Vec::new();
        self.unknown.collect(M::KIND, &mut Path::root(), &mut out);
        out
    }

    /// [`Decoded::unknown_fields`] one at a time, without keeping them (a message may
    /// hold millions).
    pub fn for_each_unknown_field(&self, mut each: impl FnMut(UnknownFieldInfo)) {
        self.unknown.visit(M::KIND, &mut Path::root(), &mut each);
    }

    /// Whether [`Decoded::unknown_fields`] lists anything, without listing it.
    pub fn has_unknown_fields(&self) -> bool {
        !self.unknown.lists_nothing(M::KIND)
    }
}

/// Decodes one message, keeping its unknown fields.
pub fn decode<M: WireMessage>(bytes: &[u8]) -> Result<Decoded<M>, DecodeError> {
    let mut decoded = Decoded::<M>::default();
    merge_top(bytes, &mut decoded.message, &mut decoded.unknown)?;
    Ok(decoded)
}

/// Decodes a top-level message into `message` and `unknown`.
fn merge_top<M: Codec>(
    bytes: &[u8],
    message: &mut M,
    unknown: &mut UnknownFields,
) -> Result<(), DecodeError> {
    messages::merge_message(&mut Decoder::new(bytes), message, unknown)
}

/// What [`decode_shape_streaming`] read: the top-level message without its tuple
/// elements, and how many elements went to the callback.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamedShape {
    /// The message with its `tuple_shapes` left out, with its own unknown fields.
    pub shell: Decoded<ShapeProto>,
    /// The number of `tuple_shapes` elements handed to the callback.
    pub elements: usize,
}

/// [`decode_shape`], handing each element of the top-level `tuple_shapes` to `element`
/// as soon as it is decoded (its index, the byte span of its field, and the element
/// with its unknown fields) instead of keeping it, so that a huge tuple costs the
/// memory of one element. The callback sees every element decoded before an error;
/// the error is the one [`decode_shape`] gives, at the same byte.
///
/// # Errors
/// As [`decode_shape`].
pub fn decode_shape_streaming(
    bytes: &[u8],
    element: &mut dyn FnMut(usize, std::ops::Range<usize>, Decoded<ShapeProto>),
) -> Result<StreamedShape, DecodeError> {
    decode_shape_with(
        bytes,
        &mut messages::Nest::No,
        &mut |path, span, message, unknown| {
            element(
                path.first().copied().unwrap_or(0),
                span,
                Decoded { message, unknown },
            );
        },
    )
}

/// What [`decode_shape_leaves`] hands each shape to: its path of tuple indices, the
/// byte span of its field in the input, and the shape with its unknown fields.
pub type LeafFn<'a> = dyn FnMut(&[usize], std::ops::Range<usize>, Decoded<ShapeProto>) + 'a;

/// The proto path of the shape that [`decode_shape_leaves`] hands on at `path` (its
/// tuple indices): `tuple_shapes[2].tuple_shapes[0]` for `[2, 0]`.
pub(crate) fn tuple_path(path: &[usize]) -> Path {
    path.iter()
        .fold(Path::root(), |at, &i| at.field("tuple_shapes").index(i))
}

/// [`decode_shape_streaming`] into nested tuples too: an element that is a plain tuple
/// (element type `TUPLE` and its elements, nothing else) is read the same way, so that
/// every other shape goes to `leaf` with its path of tuple indices (`[2, 0]` is element
/// 0 of the top-level element 2), and a huge tuple costs the memory of one leaf however
/// it nests. The error is the one [`decode_shape`] gives, at the same byte;
/// [`StreamedShape::elements`] counts the top-level elements.
///
/// # Errors
/// As [`decode_shape`].
pub fn decode_shape_leaves(
    bytes: &[u8],
    leaf: &mut LeafFn<'_>,
) -> Result<StreamedShape, DecodeError> {
    decode_shape_with(
        bytes,
        &mut messages::Nest::Plain,
        &mut |path, span, message, unknown| leaf(path, span, Decoded { message, unknown }),
    )
}

/// [`decode_shape_leaves`] opening every tuple with elements, whatever else it holds
/// (its own dimensions, layout or unknown fields), so that a huge tuple costs the
/// memory of one leaf however it nests and whatever its tuples hold. `tree` is told of
/// each tuple opened below the top level: [`TreeEvent::Enter`] before its elements,
/// [`TreeEvent::Leave`] after them, with the tuple without its elements and its own
/// unknown fields. The error is the one [`decode_shape`] gives, at the same byte.
///
/// # Errors
/// As [`decode_shape`].
pub fn decode_shape_tree(
    bytes: &[u8],
    leaf: &mut LeafFn<'_>,
    tree: &mut TreeFn<'_>,
) -> Result<StreamedShape, DecodeError> {
    decode_shape_with(
        bytes,
        &mut messages::Nest::Tree(tree),
        &mut |path, span, message, unknown| leaf(path, span, Decoded { message, unknown }),
    )
}

/// The top-level `ShapeProto` of `bytes`, its elements handed to `element` (tuples
/// among them opened as `nest` says: [`messages::merge_shape_streaming`]).
fn decode_shape_with(
    bytes: &[u8],
    nest: &mut messages::Nest<'_>,
    element: &mut messages::ElementFn<'_>,
) -> Result<StreamedShape, DecodeError> {
    let mut shell = Decoded::<ShapeProto>::default();
    let elements = messages::merge_shape_streaming(
        &mut Decoder::new(bytes),
        &mut shell.message,
        &mut shell.unknown,
        &mut Vec::new(),
        nest,
        element,
    )?;
    Ok(StreamedShape { shell, elements })
}

/// What [`decode_clean_program_shape_leaves`] read: the message without its parameters
/// and parameter names, and how many of each there were.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamedProgram {
    /// The message with its `parameters` and `parameter_names` left out: its result,
    /// with the result's unknown fields.
    pub shell: Decoded<ProgramShapeProto>,
    /// The number of parameters handed to the callback.
    pub parameters: usize,
    /// The number of parameter names read.
    pub names: usize,
    /// Whether the result was handed to the callback a shape at a time (a plain tuple,
    /// given once), and so is not in `shell`.
    pub result_streamed: bool,
}

impl StreamedProgram {
    /// Whether the message has a result: in `shell`, or handed on a shape at a time.
    pub fn has_result(&self) -> bool {
        self.shell.message.result.is_some() || self.result_streamed
    }
}

/// What [`decode_clean_program_shape_leaves`] hands each shape of a parameter or of the
/// result to: the part, the shape's path of tuple indices inside the part (`[]` for
/// the part itself), the byte span of its field in the input, and the shape.
pub type ProgramLeafFn<'a> =
    dyn FnMut(ProgramPart, &[usize], std::ops::Range<usize>, ShapeProto) + 'a;

/// What [`decode_clean_program_shape_streamed`] hands each shape to: as
/// [`ProgramLeafFn`], the shape with the copies of retired layout fields that place
/// them when it is encoded again.
pub type ProgramDecodedLeafFn<'a> =
    dyn FnMut(ProgramPart, &[usize], std::ops::Range<usize>, Decoded<ShapeProto>) + 'a;

/// [`decode_program_shape`] for a message with no unknown field in its parameters, at
/// its top level or in the shapes of a result it opens, handing the parameters to `leaf` as they are decoded (each opened
/// into its plain tuples, as [`decode_shape_leaves`] opens a tuple), and the result
/// too when it is a plain tuple given once ([`StreamedProgram::result_streamed`]), and
/// reading the parameter names without keeping them, so that a program shape of a
/// million parameters, or of a result of a million shapes, costs the memory of one.
/// `Ok(None)` as soon as it meets a field the whole decode would keep as unknown there
/// (the shapes handed on until then are then not the message's: nothing more is
/// decoded, so that bytes of another message cost nothing to try). The error is the
/// one [`decode_program_shape`] gives, at the same byte, when it comes before any
/// unknown field.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn decode_clean_program_shape_leaves(
    bytes: &[u8],
    leaf: &mut ProgramLeafFn<'_>,
) -> Result<Option<StreamedProgram>, DecodeError> {
    decode_clean_program_shape_streamed(
        bytes,
        &mut |part, path, span, shape| leaf(part, path, span, shape.message),
        &mut |_, _| {},
    )
}

/// [`decode_clean_program_shape_leaves`] with each shape's copies of retired layout
/// fields (to encode it again as it was) and each parameter name (its index and the
/// text) handed on as decoded.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn decode_clean_program_shape_streamed(
    bytes: &[u8],
    leaf: &mut ProgramDecodedLeafFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<Option<StreamedProgram>, DecodeError> {
    decode_program_shape_parts(bytes, false, leaf, name, None)
}

/// [`decode_clean_program_shape_streamed`] that goes on past unknown fields: each
/// shape is handed on with its own, and those of the top level (and of a result read
/// whole) stay in [`StreamedProgram::shell`], so that a program shape with unknown
/// fields is read a shape at a time too. The error is the one [`decode_program_shape`]
/// gives, at the same byte.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn decode_program_shape_streamed(
    bytes: &[u8],
    leaf: &mut ProgramDecodedLeafFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<StreamedProgram, DecodeError> {
    let streamed = decode_program_shape_parts(bytes, true, leaf, name, None)?;
    // Never stops: nothing is unknown to it.
    Ok(streamed.unwrap_or_default())
}

/// [`decode_program_shape_streamed`] that opens every part that is a tuple with
/// elements, whatever fields of its own it has (a parameter, or a result given once),
/// and every tuple inside one, as [`decode_shape_tree`] opens a shape's: each is told
/// to `tree` when entered and left ([`TreeEvent`]), at paths that start with the
/// part's index (a parameter's) or with the result's index ([`program_part`] tells
/// them apart), and its shapes
/// go to `leaf` as they are decoded. A part opened so is in neither
/// [`StreamedProgram::shell`] nor counted as read whole. A result given more than once
/// (which protobuf merges) is opened too: the message is first checked
/// ([`check_program_shape`]), then read with the result given once, the merge of them
/// all (the spans handed to `leaf` are then in that message, which puts the result
/// last). The error is the one [`decode_program_shape`] gives, at the same byte.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn decode_program_shape_tree(
    bytes: &[u8],
    leaf: &mut ProgramDecodedLeafFn<'_>,
    tree: &mut TreeFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<StreamedProgram, DecodeError> {
    if count_top_level_fields(bytes, 2) > 1 {
        // Protobuf merges a result given more than once. Read first where each
        // occurrence stands, for the whole decode's error; then the same message with
        // the result given once, the occurrences' bytes one after the other (which
        // protobuf reads as their merge), is opened as a result given once is.
        check_program_shape(bytes)?;
        return decode_program_shape_tree_once(&result_given_once(bytes), leaf, tree, name);
    }
    decode_program_shape_tree_once(bytes, leaf, tree, name)
}

/// [`decode_program_shape_tree`] of a program shape whose result is given at most once.
fn decode_program_shape_tree_once(
    bytes: &[u8],
    leaf: &mut ProgramDecodedLeafFn<'_>,
    tree: &mut TreeFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<StreamedProgram, DecodeError> {
    // Never stops: nothing is unknown to it.
    program_tree_parts(bytes, true, leaf, tree, name).map(Option::unwrap_or_default)
}

/// [`decode_program_shape_tree`] for a message with no unknown field anywhere (at its
/// top level, in a part, in a tuple's own fields or in a shape), as
/// [`decode_clean_program_shape_streamed`] is: `Ok(None)` when it has one (read as far
/// as the first, or to its end for one in a tuple's own fields, which are read after
/// its elements; the shapes and tuples handed on are then not the message's), so that
/// the bytes of another message cost the memory of one shape to try. The error is the
/// one [`decode_program_shape`] gives, at the same byte, when it comes before any
/// unknown field.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn decode_clean_program_shape_tree(
    bytes: &[u8],
    leaf: &mut ProgramDecodedLeafFn<'_>,
    tree: &mut TreeFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<Option<StreamedProgram>, DecodeError> {
    if count_top_level_fields(bytes, 2) > 1 {
        // As `decode_program_shape_tree` reads a result given more than once.
        if !check_program_shape_with(bytes, false)? {
            return Ok(None);
        }
        return decode_clean_program_shape_tree(&result_given_once(bytes), leaf, tree, name);
    }
    let mut dirty = false;
    let mut tell = |event: TreeEvent<'_>| {
        if let TreeEvent::Leave(_, _, node) = &event {
            dirty |= !node.lists_nothing(messages::Kind::Shape);
        }
        tree(event);
    };
    let streamed = program_tree_parts(bytes, false, leaf, &mut tell, name)?;
    Ok(streamed.filter(|_| !dirty))
}

/// The program shape of `bytes` with every tuple of a part opened (`tree`), stopping
/// at unknown fields unless `keep_unknown` ([`decode_program_shape_parts`]).
fn program_tree_parts(
    bytes: &[u8],
    keep_unknown: bool,
    leaf: &mut ProgramDecodedLeafFn<'_>,
    tree: &mut TreeFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<Option<StreamedProgram>, DecodeError> {
    let mut opened_result = false;
    let mut tell = |event: TreeEvent<'_>| {
        if let TreeEvent::Enter(path, _) = &event {
            opened_result |= path.first() == Some(&messages::RESULT_INDEX);
        }
        tree(event);
    };
    let streamed = decode_program_shape_parts(bytes, keep_unknown, leaf, name, Some(&mut tell))?;
    Ok(streamed.map(|mut streamed| {
        streamed.result_streamed |= opened_result;
        streamed
    }))
}

/// The program shape of `bytes` a part at a time, stopping at unknown fields unless
/// `keep_unknown` ([`messages::merge_clean_program_streaming`]).
fn decode_program_shape_parts(
    bytes: &[u8],
    keep_unknown: bool,
    leaf: &mut ProgramDecodedLeafFn<'_>,
    name: &mut dyn FnMut(usize, &str),
    tree: Option<&mut TreeFn<'_>>,
) -> Result<Option<StreamedProgram>, DecodeError> {
    let mut result_streamed = false;
    let mut each = |path: &[usize], span, message, unknown| {
        let (part, inner) = match path.split_first() {
            Some((&messages::RESULT_INDEX, inner)) => {
                result_streamed = true;
                (ProgramPart::Result, inner)
            }
            Some((&i, inner)) => (ProgramPart::Parameter(i), inner),
            None => (ProgramPart::Parameter(0), path),
        };
        leaf(part, inner, span, Decoded { message, unknown });
    };
    // The result is opened only when given once: protobuf merges a repeated one.
    let stream_result = count_top_level_fields(bytes, 2) == 1;
    let mut streamed = StreamedProgram::default();
    let clean = messages::merge_clean_program_streaming(
        &mut Decoder::new(bytes),
        &mut streamed.shell.message,
        &mut streamed.shell.unknown,
        (&mut streamed.parameters, &mut streamed.names),
        (stream_result, keep_unknown, false),
        &mut each,
        (name, tree),
    )?;
    Ok(clean.then_some(StreamedProgram {
        result_streamed,
        ..streamed
    }))
}

/// Whether `bytes` decode as a `ProgramShapeProto`: the error of
/// [`decode_program_shape`], at the same byte, found in the memory of one shape (every
/// tuple of a part opened, a result given more than once merged occurrence by
/// occurrence where each stands, as the whole decode merges them), keeping nothing.
///
/// # Errors
/// As [`decode_program_shape`].
pub fn check_program_shape(bytes: &[u8]) -> Result<(), DecodeError> {
    check_program_shape_with(bytes, true).map(drop)
}

/// [`check_program_shape`], stopping at the first unknown field outside a tuple's own
/// fields (`Ok(false)`) unless `keep_unknown`.
fn check_program_shape_with(bytes: &[u8], keep_unknown: bool) -> Result<bool, DecodeError> {
    let mut shell = Decoded::<ProgramShapeProto>::default();
    let (mut parameters, mut names) = (0, 0);
    messages::merge_clean_program_streaming(
        &mut Decoder::new(bytes),
        &mut shell.message,
        &mut shell.unknown,
        (&mut parameters, &mut names),
        (false, keep_unknown, true),
        &mut |_, _, _, _| {},
        (&mut |_, _| {}, Some(&mut |_| {})),
    )
}

/// The program shape of `bytes` (which decode) with its result given once: every other
/// field as it stands, then one result whose bytes are those of every occurrence, one
/// after the other, which protobuf reads as their merge (the message decodes the same;
/// a result given once is left where it stands by the callers, which ask only when it
/// is given more than once).
pub(crate) fn result_given_once(bytes: &[u8]) -> Vec<u8> {
    use wire::{put_tag, put_varint, WireType};
    let mut reader = wire::Reader::new(bytes);
    let (mut out, mut results) = (Vec::with_capacity(bytes.len()), Vec::new());
    while !reader.is_at_end() {
        let start = reader.position();
        let Ok((number, wire_type)) = reader.read_tag() else {
            break;
        };
        let Ok(value) = reader.skip_value(number, wire_type, 0) else {
            break;
        };
        match (number, wire_type) {
            (2, WireType::LengthDelimited) => results.push(value),
            _ => out.extend_from_slice(&bytes[start..reader.position()]),
        }
    }
    put_tag(&mut out, 2, WireType::LengthDelimited);
    put_varint(&mut out, results.iter().map(|r| r.len() as u64).sum());
    for result in results {
        out.extend_from_slice(result);
    }
    out
}

/// The part of a program shape and the path inside it, of a path that
/// [`decode_program_shape_tree`] gives in its [`TreeEvent`]s (its first index is the
/// part's).
pub fn program_part(path: &[usize]) -> (ProgramPart, &[usize]) {
    match path.split_first() {
        Some((&messages::RESULT_INDEX, inner)) => (ProgramPart::Result, inner),
        Some((&i, inner)) => (ProgramPart::Parameter(i), inner),
        None => (ProgramPart::Parameter(0), path),
    }
}

/// How many times the message field `number` stands at the top level of `bytes`
/// (length-delimited: with another wire type it is an unknown field), read a tag at a
/// time (values skipped by their lengths); as many as were read before bytes that do
/// not read as fields (which the decode then reports).
pub(crate) fn count_top_level_fields(bytes: &[u8], number: u32) -> usize {
    let mut reader = wire::Reader::new(bytes);
    let mut count = 0;
    while !reader.is_at_end() {
        let Ok((n, wire_type)) = reader.read_tag() else {
            break;
        };
        count += usize::from(n == number && wire_type == wire::WireType::LengthDelimited);
        if reader.skip_value(n, wire_type, 0).is_err() {
            break;
        }
    }
    count
}

impl StreamedShape {
    /// Whether the message was a plain tuple: at least one element, and besides them
    /// only its element type (see [`is_tuple_shell`]), with no unknown field at the top
    /// level. Whether the elements hold unknown fields is for the callback to see.
    pub fn is_plain_tuple(&self) -> bool {
        self.is_tuple() && self.shell.holds_no_unknown()
    }

    /// Whether the message was a tuple of at least one element with nothing else but
    /// its element type, apart from unknown fields at the top level (in `shell`).
    pub fn is_tuple(&self) -> bool {
        self.elements > 0 && is_tuple_shell(&self.shell.message)
    }

    /// Whether the message was a tuple of at least one element, whatever else it holds
    /// ([`has_tuple_elements`]).
    pub fn is_tuple_with_elements(&self) -> bool {
        has_tuple_elements(self.elements, &self.shell.message)
    }
}

/// Whether `shell`, a shape read without its `elements` elements, is a tuple with at
/// least one, whatever else it holds.
pub fn has_tuple_elements(elements: usize, shell: &ShapeProto) -> bool {
    elements > 0 && shell.element_type == crate::proto::PrimitiveType::Tuple as i32
}

/// Whether a top-level shape without its tuple elements is a plain tuple: the element
/// type `TUPLE` and nothing else.
pub fn is_tuple_shell(shell: &ShapeProto) -> bool {
    *shell
        == ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..Default::default()
        }
}

/// Whether a serialized `ShapeProto` looks, from its top-level fields alone, like a
/// tuple with fields of its own besides its elements: element type `TUPLE`, at least
/// one `tuple_shapes` element, and `dimensions`, a `layout` or `is_dynamic_dimension`
/// (which XLA never writes for a tuple, but the schema allows). The elements are
/// skipped by their lengths, not decoded; `false` for bytes that do not read as fields,
/// whose decode then reports them.
pub fn is_tuple_with_own_fields(bytes: &[u8]) -> bool {
    let mut reader = wire::Reader::new(bytes);
    let (mut element_type, mut elements, mut own) = (0, 0usize, false);
    while !reader.is_at_end() {
        let Ok((number, wire_type)) = reader.read_tag() else {
            return false;
        };
        match (number, wire_type) {
            (2, wire::WireType::Varint) => match reader.read_varint() {
                // As an enum field is read: the low 32 bits.
                Ok(v) => element_type = v as i32,
                Err(_) => return false,
            },
            (4, wire::WireType::LengthDelimited) => {
                if reader.read_length_delimited().is_err() {
                    return false;
                }
                elements += 1;
            }
            _ => {
                own |= matches!(number, 3 | 5 | 6);
                if reader.skip_value(number, wire_type, 0).is_err() {
                    return false;
                }
            }
        }
    }
    own && elements > 0 && element_type == crate::proto::PrimitiveType::Tuple as i32
}

impl<M> Decoded<M> {
    /// Whether the message has no unknown fields at all, nor copies of retired layout
    /// fields kept for re-encoding (then its encoding is that of the message alone).
    pub fn holds_no_unknown(&self) -> bool {
        self.unknown.holds_nothing()
    }
}

/// Decodes a `ShapeProto`.
pub fn decode_shape(bytes: &[u8]) -> Result<Decoded<ShapeProto>, DecodeError> {
    decode(bytes)
}

/// Decodes a `LayoutProto`.
pub fn decode_layout(bytes: &[u8]) -> Result<Decoded<LayoutProto>, DecodeError> {
    decode(bytes)
}

/// Decodes a `ProgramShapeProto`.
pub fn decode_program_shape(bytes: &[u8]) -> Result<Decoded<ProgramShapeProto>, DecodeError> {
    decode(bytes)
}

/// Encodes a message that has no unknown fields.
pub fn encode<M: WireMessage>(message: &M) -> Vec<u8> {
    messages::encode(message, &unknown::EMPTY)
}

/// Decodes a message of the given kind.
pub fn decode_any(kind: MessageKind, bytes: &[u8]) -> Result<Decoded<AnyMessage>, DecodeError> {
    // Decoded in place, without moving the message into the enum afterwards.
    let mut decoded = Decoded {
        message: match kind {
            MessageKind::Shape => AnyMessage::Shape(ShapeProto::default()),
            MessageKind::Layout => AnyMessage::Layout(LayoutProto::default()),
            MessageKind::ProgramShape => AnyMessage::ProgramShape(ProgramShapeProto::default()),
        },
        unknown: UnknownFields::new(),
    };
    let unknown = &mut decoded.unknown;
    match &mut decoded.message {
        AnyMessage::Shape(m) => merge_top(bytes, m, unknown)?,
        AnyMessage::Layout(m) => merge_top(bytes, m, unknown)?,
        AnyMessage::ProgramShape(m) => merge_top(bytes, m, unknown)?,
    }
    Ok(decoded)
}

/// Encodes a message of any kind with its unknown fields (the same as
/// [`Decoded::encode_to_vec`]).
pub fn encode_any(decoded: &Decoded<AnyMessage>) -> Vec<u8> {
    decoded.encode_to_vec()
}

impl Decoded<AnyMessage> {
    /// Which kind of message this is.
    pub fn kind(&self) -> MessageKind {
        self.message.kind()
    }

    /// The serialized message, as for a message of a known type.
    pub fn encode_to_vec(&self) -> Vec<u8> {
        match &self.message {
            AnyMessage::Shape(m) => messages::encode(m, &self.unknown),
            AnyMessage::Layout(m) => messages::encode(m, &self.unknown),
            AnyMessage::ProgramShape(m) => messages::encode(m, &self.unknown),
        }
    }

    /// The length of [`Decoded::encode_to_vec`]'s output.
    pub fn encoded_len(&self) -> usize {
        match &self.message {
            AnyMessage::Shape(m) => messages::encoded_len(m, &self.unknown),
            AnyMessage::Layout(m) => messages::encoded_len(m, &self.unknown),
            AnyMessage::ProgramShape(m) => messages::encoded_len(m, &self.unknown),
        }
    }

    /// Every unknown field, with the path of the message holding it (see
    /// [`Decoded::unknown_fields`] for a message of a known type).
    pub fn unknown_fields(&self) -> Vec<UnknownFieldInfo> {
        let kind = match self.message {
            AnyMessage::Shape(_) => messages::Kind::Shape,
            AnyMessage::Layout(_) => messages::Kind::Layout,
            AnyMessage::ProgramShape(_) => messages::Kind::ProgramShape,
        };
        let mut out = Vec::new();
        self.unknown.collect(kind, &mut Path::root(), &mut out);
        out
    }

    /// The same as [`Decoded::unknown_fields`] (the first name of the method).
    pub fn unknown_fields_any(&self) -> Vec<UnknownFieldInfo> {
        self.unknown_fields()
    }

    /// [`Decoded::unknown_fields`] one at a time, without keeping them (a message may
    /// hold millions).
    pub fn for_each_unknown_field(&self, mut each: impl FnMut(UnknownFieldInfo)) {
        self.unknown
            .visit(self.wire_kind(), &mut Path::root(), &mut each);
    }

    /// Whether [`Decoded::unknown_fields`] lists anything, without listing it.
    pub fn has_unknown_fields(&self) -> bool {
        !self.unknown.lists_nothing(self.wire_kind())
    }

    fn wire_kind(&self) -> messages::Kind {
        match self.message {
            AnyMessage::Shape(_) => messages::Kind::Shape,
            AnyMessage::Layout(_) => messages::Kind::Layout,
            AnyMessage::ProgramShape(_) => messages::Kind::ProgramShape,
        }
    }
}

macro_rules! into_any {
    ($proto:ty, $variant:ident) => {
        impl From<Decoded<$proto>> for Decoded<AnyMessage> {
            fn from(decoded: Decoded<$proto>) -> Self {
                Decoded {
                    message: AnyMessage::$variant(decoded.message),
                    unknown: decoded.unknown,
                }
            }
        }
    };
}

into_any!(ShapeProto, Shape);
into_any!(LayoutProto, Layout);
into_any!(ProgramShapeProto, ProgramShape);
