//! The hand-written decoder and encoder of each message, over the prost structs.
//!
//! Decoding follows Google's runtime: packed and unpacked repeated scalars are both
//! accepted (and may be mixed), a singular message that occurs again is merged into
//! the first, a singular scalar that occurs again replaces it, enum values keep
//! any number (a varint is cut to its low 32 bits, as protobuf does for int32 and
//! enums), a bool is true for any nonzero varint, and a known field with a wire type
//! it never has is kept as an unknown field.
//!
//! Encoding writes what Google's runtime writes: known fields in field-number order
//! (except LayoutProto's retired fields 2-5, which XLA's schema only reserves, so
//! Google's runtime writes them with the unknown fields, in their place),
//! repeated scalars packed, proto3 defaults left out (zero, enum 0, empty lists), a
//! singular message written whenever it is present (even empty), negative numbers
//! as 10-byte varints, then the message's unknown fields in their original order.

use super::error::{DecodeError, DecodeErrorKind};
use super::unknown::UnknownFields;
use super::wire::{self, Reader, WireType, RECURSION_LIMIT};
use crate::path::Segment;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};

/// The messages of the schema, for walking the unknown-field tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ShapeProto`.
    Shape,
    /// `LayoutProto`.
    Layout,
    /// `ProgramShapeProto`.
    ProgramShape,
    /// `TileProto`.
    Tile,
    /// `SplitConfigProto`.
    SplitConfig,
}

/// A message-typed field of a message.
pub(crate) struct Submessage {
    pub name: &'static str,
    pub repeated: bool,
    pub kind: Kind,
}

impl Kind {
    /// The name of the known field with this number, if any.
    pub(crate) fn field_name(self, number: u32) -> Option<&'static str> {
        let name = match (self, number) {
            (Kind::Shape, 2) => "element_type",
            (Kind::Shape, 3) => "dimensions",
            (Kind::Shape, 4) => "tuple_shapes",
            (Kind::Shape, 5) => "layout",
            (Kind::Shape, 6) => "is_dynamic_dimension",
            (Kind::Layout, 1) => "minor_to_major",
            (Kind::Layout, 2) => "padded_dimensions",
            (Kind::Layout, 3) => "padding_value",
            (Kind::Layout, 4) => "format",
            (Kind::Layout, 5) => "max_sparse_elements",
            (Kind::Layout, 6) => "tiles",
            (Kind::Layout, 7) => "element_size_in_bits",
            (Kind::Layout, 8) => "memory_space",
            (Kind::Layout, 9) => "dim_level_types",
            (Kind::Layout, 10) => "physical_shape",
            (Kind::Layout, 11) => "index_primitive_type",
            (Kind::Layout, 12) => "pointer_primitive_type",
            (Kind::Layout, 13) => "dim_unique",
            (Kind::Layout, 14) => "dim_ordered",
            (Kind::Layout, 15) => "dynamic_shape_metadata_prefix_bytes",
            (Kind::Layout, 16) => "tail_padding_alignment_in_elements",
            (Kind::Layout, 17) => "split_configs",
            (Kind::ProgramShape, 1) => "parameters",
            (Kind::ProgramShape, 2) => "result",
            (Kind::ProgramShape, 3) => "parameter_names",
            (Kind::Tile, 1) => "dimensions",
            (Kind::SplitConfig, 1) => "dimension",
            (Kind::SplitConfig, 2) => "split_indices",
            _ => return None,
        };
        Some(name)
    }

    /// The message-typed field with this number, if any.
    pub(crate) fn submessage(self, number: u32) -> Option<Submessage> {
        let (name, repeated, kind) = match (self, number) {
            (Kind::Shape, 4) => ("tuple_shapes", true, Kind::Shape),
            (Kind::Shape, 5) => ("layout", false, Kind::Layout),
            (Kind::Layout, 6) => ("tiles", true, Kind::Tile),
            (Kind::Layout, 10) => ("physical_shape", false, Kind::Shape),
            (Kind::Layout, 17) => ("split_configs", true, Kind::SplitConfig),
            (Kind::ProgramShape, 1) => ("parameters", true, Kind::Shape),
            (Kind::ProgramShape, 2) => ("result", false, Kind::Shape),
            _ => return None,
        };
        Some(Submessage {
            name,
            repeated,
            kind,
        })
    }
}

/// The decoding state: the reader and the nesting depth of the current message.
#[derive(Debug)]
pub struct Decoder<'a> {
    pub(crate) reader: Reader<'a>,
    pub(crate) depth: u32,
    /// Where the tag of the field being decoded starts.
    pub(crate) tag_start: usize,
    /// The highest field number read so far in the message being decoded.
    pub(crate) highest_seen: u32,
    /// The list entries read so far into the shape being decoded (see
    /// [`crate::MAX_LIST_ENTRIES`]): a tuple element or a program parameter counts its
    /// own ([`own_entries`]).
    pub(crate) entries: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `bytes`, outside any message.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Decoder {
            reader: Reader::new(bytes),
            depth: 0,
            tag_start: 0,
            highest_seen: 0,
            entries: 0,
        }
    }
}

pub(crate) mod sealed {
    use super::{DecodeError, Decoder, Kind, SizeList, Sizes, UnknownFields, WireType};

    /// The hand-written codec of one message type.
    pub trait Codec: Default {
        /// Which message this is.
        const KIND: Kind;

        /// Decodes the value of a field whose tag has been read. Returns `false`,
        /// having read nothing, when the number is not a known field or the wire
        /// type is not one the field can have.
        fn merge_field(
            &mut self,
            number: u32,
            wire_type: WireType,
            decoder: &mut Decoder<'_>,
            unknown: &mut UnknownFields,
        ) -> Result<bool, DecodeError>;

        /// The length of the known fields, with the unknown fields of submessages.
        /// Pushes the body length of every submessage onto `sizes`, in the order
        /// `write_known` writes them (depth first), so that each is computed once.
        fn known_len(&self, unknown: &UnknownFields, sizes: &mut SizeList) -> usize;

        /// Whether the message's copies of retired fields (see
        /// [`super::UnknownField::is_retired_layout_field`]) are written, in their
        /// place among the unknown fields, instead of the named fields.
        fn keeps_retired_copies(&self, _unknown: &UnknownFields) -> bool {
            true
        }

        /// Writes the known fields with the unknown fields of submessages, taking
        /// submessage lengths from `sizes` as `known_len` recorded them.
        fn write_known(&self, unknown: &UnknownFields, buf: &mut Vec<u8>, sizes: &mut Sizes<'_>);
    }
}

use sealed::Codec;

/// Decodes fields until the reader's limit, into `message` and `unknown`.
pub(crate) fn merge_message<M: Codec>(
    decoder: &mut Decoder<'_>,
    message: &mut M,
    unknown: &mut UnknownFields,
) -> Result<(), DecodeError> {
    let outer_highest = std::mem::replace(&mut decoder.highest_seen, 0);
    let result = merge_fields(decoder, message, unknown);
    decoder.highest_seen = outer_highest;
    result
}

fn merge_fields<M: Codec>(
    decoder: &mut Decoder<'_>,
    message: &mut M,
    unknown: &mut UnknownFields,
) -> Result<(), DecodeError> {
    // A hook that takes nothing: generic, so that the ordinary decode pays no call.
    merge_fields_with(decoder, message, unknown, |_, _, _| Ok(false))
}

/// [`merge_fields`], offering each field to `hook` first: it returns `true` when it
/// read the field's value (see [`merge_shape_streaming`]).
fn merge_fields_with<M: Codec>(
    decoder: &mut Decoder<'_>,
    message: &mut M,
    unknown: &mut UnknownFields,
    mut hook: impl FnMut(u32, WireType, &mut Decoder<'_>) -> Result<bool, DecodeError>,
) -> Result<(), DecodeError> {
    while !decoder.reader.is_at_end() {
        let start = decoder.reader.position();
        let (number, wire_type) = decoder.reader.read_tag()?;
        if wire_type == WireType::EndGroup {
            return Err(DecodeError::new(
                DecodeErrorKind::UnexpectedEndGroup(number),
                start,
            ));
        }
        decoder.tag_start = start;
        if hook(number, wire_type, decoder)? {
            // Taken by the hook.
        } else if !message.merge_field(number, wire_type, decoder, unknown)? {
            let field = match M::KIND.field_name(number) {
                Some(name) => Segment::Field(name),
                None => Segment::Number(number),
            };
            decoder
                .reader
                .skip_value(number, wire_type, decoder.depth)
                .map_err(|e| e.within(field))?;
            unknown.push_raw(decoder.reader.since(start), false, false);
        }
        decoder.highest_seen = decoder.highest_seen.max(number);
    }
    Ok(())
}

/// What [`merge_shape_streaming`] hands each element (or leaf) to: its path of tuple
/// indices, the span of its field in the input, and the element with its unknown
/// fields.
pub(crate) type ElementFn<'a> =
    dyn FnMut(&[usize], std::ops::Range<usize>, crate::proto::ShapeProto, UnknownFields) + 'a;

/// Which tuple elements [`merge_shape_streaming`] opens, handing on their elements in
/// their place.
pub(crate) enum Nest<'a> {
    /// None: each element is handed on whole.
    No,
    /// Those that are plain tuples: the element type `TUPLE` and elements, nothing
    /// else ([`plain_tuple_ahead`]).
    Plain,
    /// Every tuple with elements, whatever else it holds ([`tuple_ahead`]), each
    /// announced to the function before its elements and handed to it after them
    /// without them ([`TreeEvent`]).
    Tree(&'a mut TreeFn<'a>),
}

/// What [`decode_shape_tree`](super::decode_shape_tree) says of a tuple it opens.
#[derive(Debug)]
pub enum TreeEvent<'a> {
    /// Its elements come next: its path of tuple indices, and its own fields (the
    /// tuple without its elements, read ahead by the same code, so that a writer can
    /// put those numbered below `tuple_shapes` before the elements).
    Enter(&'a [usize], &'a crate::proto::ShapeProto),
    /// Its elements were handed on: its path, and the tuple without its elements,
    /// with its own unknown fields (and those of its layout).
    Leave(&'a [usize], crate::proto::ShapeProto, UnknownFields),
}

/// The function [`decode_shape_tree`](super::decode_shape_tree) tells of the tuples it
/// opens.
pub type TreeFn<'a> = dyn FnMut(TreeEvent<'_>) + 'a;

/// Decodes a top-level `ShapeProto` into `shell` and `unknown` as [`merge_message`]
/// does, except that each element of `tuple_shapes` goes to `element` (its path, the
/// span of its field in the input, and the element with its unknown fields) instead of
/// into `shell`. Elements that are tuples are opened as `nest` says, their elements
/// going to `element` at their longer paths. The same code reads the same bytes in the
/// same order, so the errors are those of [`merge_message`]. Returns the number of
/// elements of `shell`.
pub(crate) fn merge_shape_streaming(
    decoder: &mut Decoder<'_>,
    shell: &mut crate::proto::ShapeProto,
    unknown: &mut UnknownFields,
    path: &mut Vec<usize>,
    nest: &mut Nest<'_>,
    element: &mut ElementFn<'_>,
) -> Result<usize, DecodeError> {
    merge_shape_streaming_from(decoder, (shell, unknown), 0, path, nest, element)
}

/// [`merge_shape_streaming`] into a shell that already has `first` elements (an
/// occurrence of a singular message given again, merged into the first): the elements
/// are numbered from there. Returns the number of elements it has then.
fn merge_shape_streaming_from(
    decoder: &mut Decoder<'_>,
    (shell, unknown): (&mut crate::proto::ShapeProto, &mut UnknownFields),
    first: usize,
    path: &mut Vec<usize>,
    nest: &mut Nest<'_>,
    element: &mut ElementFn<'_>,
) -> Result<usize, DecodeError> {
    let mut count = first;
    let hook = |number: u32, wire_type: WireType, decoder: &mut Decoder<'_>| {
        if number != 4 || wire_type != WireType::LengthDelimited {
            return Ok(false);
        }
        // As `repeated_message` and `ShapeProto::merge_field` read field 4.
        let start = decoder.tag_start;
        let mut message = crate::proto::ShapeProto::default();
        let mut node = UnknownFields::new();
        path.push(count);
        let streamed = match nest {
            Nest::No => false,
            Nest::Plain => plain_tuple_ahead(&decoder.reader),
            Nest::Tree(tell) => match tuple_shell_ahead(decoder) {
                Some(own) => {
                    tell(TreeEvent::Enter(path, &own));
                    true
                }
                None => false,
            },
        };
        let result = own_entries(decoder, |decoder| {
            if streamed {
                // As `merge_submessage`, with the elements streamed.
                nested(decoder, |decoder| {
                    merge_shape_streaming(decoder, &mut message, &mut node, path, nest, element)
                        .map(drop)
                })
            } else {
                merge_submessage(decoder, &mut message, &mut node)
            }
        });
        result
            .map_err(|e| e.within(Segment::Index(count)))
            .map_err(within("tuple_shapes"))?;
        match (streamed, &mut *nest) {
            (true, Nest::Tree(tell)) => tell(TreeEvent::Leave(path, message, node)),
            // Only the element type is left of it: the fields were looked at first.
            (true, _) => debug_assert!(node.holds_nothing() && super::is_tuple_shell(&message)),
            (false, _) => element(path, start..decoder.reader.position(), message, node),
        }
        path.pop();
        count += 1;
        Ok(true)
    };
    let outer_highest = std::mem::replace(&mut decoder.highest_seen, 0);
    let result = merge_fields_with(decoder, shell, unknown, hook);
    decoder.highest_seen = outer_highest;
    result.map(|()| count)
}

/// What [`merge_clean_program_streaming`] hands each parameter name to: its index and
/// its text.
pub(crate) type NameFn<'a> = dyn FnMut(usize, &str) + 'a;

/// Decodes a top-level `ProgramShapeProto` into `shell` as [`merge_message`] does,
/// except that each parameter goes to `element` (opened into its plain tuples as
/// [`merge_shape_streaming`] opens them, at paths that start with the parameter's
/// index), with `stream_result` the result too when it is a plain tuple (at paths that
/// start with [`RESULT_INDEX`]), and each parameter name is read (and checked as
/// UTF-8), handed to `name` and counted in `names`, not kept. It stops, returning
/// `Ok(false)`, at the first field that the whole decode would keep as unknown, at the
/// top level, in a parameter or in the shapes of a result it opens, unless
/// `keep_unknown` (then the shapes go on with theirs, and the top level's stay in
/// `unknown`, as the whole decode keeps them) (the shapes handed
/// on so far are then to be dropped), so that bytes of some other message cost nothing
/// to try; the unknown fields of a result read whole are left in `unknown`. The same code reads the same bytes in the same order,
/// so an error before any unknown field is the one [`merge_message`] gives. Returns the
/// number of parameters through `parameters`. With `tree`, a parameter or a result
/// given once that is a tuple with fields of its own is opened too, each tuple of it
/// entered and left as [`merge_shape_streaming`] enters and leaves nested tuples, at
/// paths that start with the part's index. With `merge_results`, every occurrence of
/// the result is read where it stands into one shell, its elements numbered on from
/// the last occurrence's and handed on to nothing (for the errors alone:
/// [`check_program_shape`](super::check_program_shape)).
pub(crate) fn merge_clean_program_streaming(
    decoder: &mut Decoder<'_>,
    shell: &mut ProgramShapeProto,
    unknown: &mut UnknownFields,
    (parameters, names): (&mut usize, &mut usize),
    (stream_result, keep_unknown, merge_results): (bool, bool, bool),
    element: &mut ElementFn<'_>,
    (name, mut tree): (&mut NameFn<'_>, Option<&mut TreeFn<'_>>),
) -> Result<bool, DecodeError> {
    let mut unclean = false;
    let mut path = Vec::new();
    // With `merge_results`, the result's shell without its elements, its unknown
    // fields and how many elements it has, merged occurrence by occurrence.
    let mut merged = (ShapeProto::default(), UnknownFields::new(), 0);
    // Copies of retired layout fields are no unknown field: they go on, for the shape
    // to be re-encoded as it was. Past an unknown field nothing more is handed on.
    let mut leaf = |path: &[usize], span, shape, node: UnknownFields, unclean: &mut bool| {
        if *unclean {
            return;
        }
        if keep_unknown || node.lists_nothing(Kind::Shape) {
            element(path, span, shape, node);
        } else {
            *unclean = true;
        }
    };
    let hook = |number: u32, wire_type: WireType, decoder: &mut Decoder<'_>| {
        if unclean {
            // Stops the decode; the error is not looked at.
            return Err(DecodeError::new(
                DecodeErrorKind::TruncatedVarint,
                decoder.tag_start,
            ));
        }
        match (number, wire_type) {
            (1, WireType::LengthDelimited) => {
                // As `repeated_message` reads field 1, the shape opened as
                // `merge_shape_streaming` opens a tuple element.
                let index = *parameters;
                let start = decoder.tag_start;
                let mut message = ShapeProto::default();
                let mut node = UnknownFields::new();
                path.clear();
                path.push(index);
                let streamed = plain_tuple_ahead(&decoder.reader);
                // With `tree`, every tuple is opened as one (a plain tuple too, so that
                // a tuple with fields of its own inside it is opened).
                let own = match &mut tree {
                    Some(tell) => tuple_shell_ahead(decoder).inspect(|own| {
                        tell(TreeEvent::Enter(&path, own));
                    }),
                    None => None,
                };
                let mut each = |path: &[usize], span, shape, node| {
                    leaf(path, span, shape, node, &mut unclean);
                };
                let result = own_entries(decoder, |decoder| match (&mut tree, &own) {
                    (Some(tell), Some(_)) => open_tuple_tree(
                        decoder,
                        (&mut message, &mut node),
                        &mut path,
                        &mut **tell,
                        &mut each,
                    ),
                    _ if streamed => open_plain_tuple(decoder, &mut path, &mut each),
                    _ => merge_submessage(decoder, &mut message, &mut node),
                });
                result
                    .map_err(|e| e.within(Segment::Index(index)))
                    .map_err(within("parameters"))?;
                match (&mut tree, own) {
                    (Some(tell), Some(_)) => tell(TreeEvent::Leave(&path, message, node)),
                    _ if streamed => {}
                    _ => each(&path, start..decoder.reader.position(), message, node),
                }
                *parameters += 1;
                Ok(true)
            }
            (2, WireType::LengthDelimited) if merge_results => {
                // Each occurrence read where it stands into the same shell (as
                // `singular_message` merges it), its elements numbered on from the last
                // occurrence's and opened, handed on to nothing: only its errors count.
                path.clear();
                path.push(RESULT_INDEX);
                let (message, node, count) = &mut merged;
                let (mut skip, mut quiet) = (|_: &[usize], _, _, _| {}, |_: TreeEvent<'_>| {});
                nested(decoder, |decoder| {
                    let mut nest = Nest::Tree(&mut quiet);
                    *count = merge_shape_streaming_from(
                        decoder,
                        (message, node),
                        *count,
                        &mut path,
                        &mut nest,
                        &mut skip,
                    )?;
                    Ok(())
                })
                .map_err(within("result"))?;
                Ok(true)
            }
            (2, WireType::LengthDelimited)
                if stream_result && tree.is_some() && tuple_ahead(&decoder.reader, false) =>
            {
                // The only result, a tuple (with fields of its own or not): opened with
                // `tree`, as a parameter is.
                let Some(tell) = tree.as_mut() else {
                    return Ok(false);
                };
                let Some(own) = tuple_shell_ahead(decoder) else {
                    return Ok(false);
                };
                path.clear();
                path.push(RESULT_INDEX);
                tell(TreeEvent::Enter(&path, &own));
                let (mut message, mut node) = (ShapeProto::default(), UnknownFields::new());
                let mut each = |path: &[usize], span, shape, node| {
                    leaf(path, span, shape, node, &mut unclean);
                };
                open_tuple_tree(
                    decoder,
                    (&mut message, &mut node),
                    &mut path,
                    &mut **tell,
                    &mut each,
                )
                .map_err(within("result"))?;
                tell(TreeEvent::Leave(&path, message, node));
                Ok(true)
            }
            (2, WireType::LengthDelimited)
                if stream_result && plain_tuple_ahead(&decoder.reader) =>
            {
                // The only result, a plain tuple: opened as a parameter is (as
                // `singular_message` reads field 2), its shapes at paths that start
                // with `RESULT_INDEX`, and left out of the shell.
                path.clear();
                path.push(RESULT_INDEX);
                let mut each = |path: &[usize], span, shape, node| {
                    leaf(path, span, shape, node, &mut unclean);
                };
                open_plain_tuple(decoder, &mut path, &mut each).map_err(within("result"))?;
                Ok(true)
            }
            (2, WireType::LengthDelimited) => Ok(false),
            (3, WireType::LengthDelimited) => {
                // As `ProgramShapeProto::merge_field` reads field 3.
                name(*names, parameter_name(decoder, *names)?);
                *names += 1;
                Ok(true)
            }
            // Kept in `unknown`, as the whole decode keeps it.
            _ if keep_unknown => Ok(false),
            _ => {
                unclean = true;
                Err(DecodeError::new(
                    DecodeErrorKind::TruncatedVarint,
                    decoder.tag_start,
                ))
            }
        }
    };
    let outer_highest = std::mem::replace(&mut decoder.highest_seen, 0);
    let result = merge_fields_with(decoder, shell, unknown, hook);
    decoder.highest_seen = outer_highest;
    match result {
        _ if unclean => Ok(false),
        Ok(()) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Reads the length-delimited plain tuple at the reader (found by
/// [`plain_tuple_ahead`]) as [`merge_submessage`] would, its shapes handed to `each`
/// at `path` and below ([`merge_shape_streaming`], plain tuples inside it opened too).
fn open_plain_tuple(
    decoder: &mut Decoder<'_>,
    path: &mut Vec<usize>,
    each: &mut ElementFn<'_>,
) -> Result<(), DecodeError> {
    let mut message = ShapeProto::default();
    let mut node = UnknownFields::new();
    nested(decoder, |decoder| {
        merge_shape_streaming(
            decoder,
            &mut message,
            &mut node,
            path,
            &mut Nest::Plain,
            each,
        )
        .map(drop)
    })
}

/// Reads the length-delimited tuple at the reader (found by [`tuple_shell_ahead`]) as
/// [`merge_submessage`] would, into `message` and `node` without its elements, which
/// go to `each` at `path` and below, every tuple inside it entered and left through
/// `tell` ([`merge_shape_streaming`] with [`Nest::Tree`]).
fn open_tuple_tree(
    decoder: &mut Decoder<'_>,
    (message, node): (&mut ShapeProto, &mut UnknownFields),
    path: &mut Vec<usize>,
    tell: &mut TreeFn<'_>,
    each: &mut ElementFn<'_>,
) -> Result<(), DecodeError> {
    nested(decoder, |decoder| {
        merge_shape_streaming(decoder, message, node, path, &mut Nest::Tree(tell), each).map(drop)
    })
}

/// The first index of the paths at which [`merge_clean_program_streaming`] hands on
/// the shapes of a streamed result (a parameter's paths start with its index).
pub(crate) const RESULT_INDEX: usize = usize::MAX;

/// The value of `parameter_names[index]` (field 3 of `ProgramShapeProto`, its tag
/// just read): its text, which must be UTF-8.
fn parameter_name<'a>(decoder: &mut Decoder<'a>, index: usize) -> Result<&'a str, DecodeError> {
    let start = decoder.reader.position();
    let name = decoder.reader.read_length_delimited().and_then(|bytes| {
        std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidUtf8, start))
    });
    name.map_err(|e| {
        e.within(Segment::Index(index))
            .within(Segment::Field("parameter_names"))
    })
}

/// Whether the length-delimited value at the reader is a `ShapeProto` that is a plain
/// tuple: at least one `tuple_shapes` element, element type `TUPLE`, and no other
/// field ([`tuple_ahead`]).
fn plain_tuple_ahead(reader: &wire::Reader<'_>) -> bool {
    tuple_ahead(reader, true)
}

/// Whether the length-delimited value at the reader is a `ShapeProto` that is a tuple
/// with elements: element type `TUPLE` (its last value, as protobuf reads it) and at
/// least one `tuple_shapes` element, and, when `plain`, no other field. Looks at its
/// own fields only (each skipped by its length); `false` for anything malformed, which
/// the ordinary decode then reports.
fn tuple_ahead(reader: &wire::Reader<'_>, plain: bool) -> bool {
    let mut probe = reader.clone();
    let Ok(len) = probe.read_length() else {
        return false;
    };
    let Some(body) = probe.rest().get(..len) else {
        return false;
    };
    let mut fields = wire::Reader::new(body);
    let (mut element_type, mut elements) = (0, 0usize);
    while !fields.is_at_end() {
        let Ok((number, wire_type)) = fields.read_tag() else {
            return false;
        };
        match (number, wire_type) {
            (2, WireType::Varint) => match fields.read_varint() {
                // As an enum field is read: the low 32 bits.
                Ok(v) => element_type = v as i32,
                Err(_) => return false,
            },
            (4, WireType::LengthDelimited) => {
                if fields.read_length_delimited().is_err() {
                    return false;
                }
                elements += 1;
            }
            _ if plain => return false,
            _ => {
                if fields.skip_value(number, wire_type, 0).is_err() {
                    return false;
                }
            }
        }
    }
    elements > 0 && element_type == crate::proto::PrimitiveType::Tuple as i32
}

/// The own fields of the length-delimited tuple at the reader (found by
/// [`tuple_ahead`]): the tuple read without its elements, by the code that reads it
/// with them, at the same depth, so that what it holds is what the decode that follows
/// gives. `None` when it is no tuple with elements or does not decode (the element is
/// then read whole, and the ordinary decode reports the error).
fn tuple_shell_ahead(decoder: &Decoder<'_>) -> Option<ShapeProto> {
    if !tuple_ahead(&decoder.reader, false) {
        return None;
    }
    let mut probe = Decoder {
        reader: decoder.reader.clone(),
        depth: decoder.depth,
        tag_start: decoder.tag_start,
        highest_seen: 0,
        entries: 0,
    };
    let (mut shell, mut unknown) = (ShapeProto::default(), UnknownFields::new());
    let read = nested(&mut probe, |decoder| {
        merge_fields_with(decoder, &mut shell, &mut unknown, |number, wire_type, d| {
            if number != 4 || wire_type != WireType::LengthDelimited {
                return Ok(false);
            }
            d.reader.read_length_delimited()?;
            Ok(true)
        })
    });
    read.ok().map(|()| shell)
}

/// Runs `merge` on the length-delimited submessage at the reader, as
/// [`merge_submessage`] does: its length read, the recursion limit checked, the reader
/// limited to it.
fn nested(
    decoder: &mut Decoder<'_>,
    merge: impl FnOnce(&mut Decoder<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let len = decoder.reader.read_length()?;
    if decoder.depth >= RECURSION_LIMIT {
        return Err(DecodeError::new(
            DecodeErrorKind::RecursionLimit,
            decoder.reader.position(),
        ));
    }
    let saved = decoder.reader.push_limit(len)?;
    decoder.depth += 1;
    let result = merge(decoder);
    decoder.depth -= 1;
    decoder.reader.pop_limit(saved);
    result
}

/// Decodes a length-delimited submessage into `message` (merging).
fn merge_submessage<M: Codec>(
    decoder: &mut Decoder<'_>,
    message: &mut M,
    unknown: &mut UnknownFields,
) -> Result<(), DecodeError> {
    nested(decoder, |decoder| merge_message(decoder, message, unknown))
}

fn singular_varint(
    decoder: &mut Decoder<'_>,
    wire_type: WireType,
) -> Result<Option<u64>, DecodeError> {
    if wire_type != WireType::Varint {
        return Ok(None);
    }
    decoder.reader.read_varint().map(Some)
}

fn int64(
    decoder: &mut Decoder<'_>,
    wire_type: WireType,
    out: &mut i64,
) -> Result<bool, DecodeError> {
    Ok(match singular_varint(decoder, wire_type)? {
        Some(v) => {
            *out = v as i64;
            true
        }
        None => false,
    })
}

fn enumeration(
    decoder: &mut Decoder<'_>,
    wire_type: WireType,
    out: &mut i32,
) -> Result<bool, DecodeError> {
    Ok(match singular_varint(decoder, wire_type)? {
        Some(v) => {
            // Protobuf keeps the low 32 bits of a varint read as int32 or enum.
            *out = v as i32;
            true
        }
        None => false,
    })
}

/// Counts `more` list entries into the shape being decoded: an error past
/// [`crate::MAX_LIST_ENTRIES`], before they are read.
fn count_entries(decoder: &mut Decoder<'_>, more: usize) -> Result<(), DecodeError> {
    let entries = decoder.entries.saturating_add(more);
    if entries > crate::MAX_LIST_ENTRIES {
        let limit = crate::MAX_LIST_ENTRIES;
        return Err(DecodeError::new(
            DecodeErrorKind::TooManyEntries { limit },
            decoder.tag_start,
        ));
    }
    decoder.entries = entries;
    Ok(())
}

/// Runs `decode` on a shape that counts its own list entries (a tuple element, a
/// program parameter), the count of the shape around it put back afterwards.
fn own_entries<T>(decoder: &mut Decoder<'_>, decode: impl FnOnce(&mut Decoder<'_>) -> T) -> T {
    let outer = std::mem::replace(&mut decoder.entries, 0);
    let result = decode(decoder);
    decoder.entries = outer;
    result
}

/// A repeated varint-encoded field, packed or not.
fn repeated<T>(
    decoder: &mut Decoder<'_>,
    wire_type: WireType,
    out: &mut Vec<T>,
    convert: impl Fn(u64) -> T,
) -> Result<bool, DecodeError> {
    match wire_type {
        WireType::Varint => {
            let value = decoder.reader.read_varint()?;
            count_entries(decoder, 1)?;
            out.push(convert(value));
        }
        WireType::LengthDelimited => {
            let len = decoder.reader.read_length()?;
            let saved = decoder.reader.push_limit(len)?;
            let body = decoder.reader.rest();
            // Every varint ends with exactly one byte below 0x80: reserve that many.
            let count = body.iter().filter(|&&b| b < 0x80).count();
            if let Err(e) = count_entries(decoder, count) {
                decoder.reader.pop_limit(saved);
                return Err(e);
            }
            if out.is_empty() {
                *out = Vec::with_capacity(count);
            } else {
                out.reserve(count);
            }
            if count == body.len() {
                // One byte per value (dimensions below 128, layouts, flags): no
                // varint to assemble.
                out.extend(body.iter().map(|&b| convert(u64::from(b))));
                decoder.reader.skip(body.len());
                decoder.reader.pop_limit(saved);
                return Ok(true);
            }
            let mut result = Ok(());
            while !decoder.reader.is_at_end() {
                match decoder.reader.read_varint() {
                    Ok(value) => out.push(convert(value)),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            decoder.reader.pop_limit(saved);
            result?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn to_i64(v: u64) -> i64 {
    v as i64
}

fn to_i32(v: u64) -> i32 {
    v as i32
}

fn to_bool(v: u64) -> bool {
    v != 0
}

fn repeated_message<M: Codec>(
    decoder: &mut Decoder<'_>,
    wire_type: WireType,
    number: u32,
    list: &mut Vec<M>,
    unknown: &mut UnknownFields,
) -> Result<bool, DecodeError> {
    if wire_type != WireType::LengthDelimited {
        return Ok(false);
    }
    let index = list.len();
    let mut message = M::default();
    let mut node = UnknownFields::new();
    let merged = if M::KIND == Kind::Shape {
        // A tuple element or a program parameter: a shape of its own.
        own_entries(decoder, |decoder| {
            merge_submessage(decoder, &mut message, &mut node)
        })
    } else {
        // A tile or a split config: an entry of the shape's layout.
        count_entries(decoder, 1).and_then(|()| merge_submessage(decoder, &mut message, &mut node))
    };
    merged.map_err(|e| e.within(Segment::Index(index)))?;
    list.push(message);
    unknown.put_child(number, index, node);
    Ok(true)
}

fn singular_message<M: Codec>(
    decoder: &mut Decoder<'_>,
    number: u32,
    message: &mut M,
    unknown: &mut UnknownFields,
) -> Result<bool, DecodeError> {
    let mut node = unknown.take_child(number, 0);
    let result = merge_submessage(decoder, message, &mut node);
    unknown.put_child(number, 0, node);
    result.map(|()| true)
}

// Encoding helpers: lengths and writers of each field kind.

fn len_varint_field(number: u32, value: u64) -> usize {
    if value == 0 {
        0
    } else {
        wire::tag_len(number) + wire::varint_len(value)
    }
}

fn put_varint_field(buf: &mut Vec<u8>, number: u32, value: u64) {
    if value != 0 {
        wire::put_tag(buf, number, WireType::Varint);
        wire::put_varint(buf, value);
    }
}

fn int64_bits(v: &i64) -> u64 {
    *v as u64
}

fn enum_bits(v: &i32) -> u64 {
    i64::from(*v) as u64
}

fn bool_bits(v: &bool) -> u64 {
    u64::from(*v)
}

fn packed_body_len<T>(values: &[T], bits: impl Fn(&T) -> u64) -> usize {
    values.iter().map(|v| wire::varint_len(bits(v))).sum()
}

fn len_packed<T>(number: u32, values: &[T], bits: impl Fn(&T) -> u64) -> usize {
    if values.is_empty() {
        return 0;
    }
    let body = packed_body_len(values, bits);
    wire::tag_len(number) + wire::varint_len(body as u64) + body
}

fn put_packed<T>(buf: &mut Vec<u8>, number: u32, values: &[T], bits: impl Fn(&T) -> u64 + Copy) {
    if values.is_empty() {
        return;
    }
    let body = packed_body_len(values, bits);
    wire::put_tag(buf, number, WireType::LengthDelimited);
    wire::put_varint(buf, body as u64);
    if body == values.len() {
        // One byte per value: the values themselves.
        buf.extend(values.iter().map(|v| bits(v) as u8));
        return;
    }
    for value in values {
        wire::put_varint(buf, bits(value));
    }
}

/// Submessage body lengths, in the order the encoder writes the submessages: inline
/// for the few submessages of a typical shape, so encoding allocates only its output.
pub type SizeList = smallvec::SmallVec<[usize; 16]>;

/// Submessage body lengths recorded by [`sealed::Codec::known_len`], read back in
/// the same order while writing.
#[derive(Debug)]
pub struct Sizes<'a>(std::slice::Iter<'a, usize>);

impl Sizes<'_> {
    fn next(&mut self) -> usize {
        let size = self.0.next().copied();
        debug_assert!(size.is_some(), "known_len and write_known disagree");
        size.unwrap_or(0)
    }
}

/// The length of a message: known fields then its own unknown fields.
fn body_len<M: Codec>(message: &M, unknown: &UnknownFields, sizes: &mut SizeList) -> usize {
    message.known_len(unknown, sizes) + unknown.own_len(message.keeps_retired_copies(unknown))
}

/// The encoded length of a message with its unknown fields.
pub(crate) fn encoded_len<M: Codec>(message: &M, unknown: &UnknownFields) -> usize {
    body_len(message, unknown, &mut SizeList::new())
}

/// Encodes a message: known fields then its own unknown fields, at every level.
pub(crate) fn encode<M: Codec>(message: &M, unknown: &UnknownFields) -> Vec<u8> {
    let mut sizes = SizeList::new();
    let len = body_len(message, unknown, &mut sizes);
    let mut buf = Vec::with_capacity(len);
    let mut cursor = Sizes(sizes.iter());
    message.write_known(unknown, &mut buf, &mut cursor);
    unknown.write_own(&mut buf, message.keeps_retired_copies(unknown));
    debug_assert_eq!(buf.len(), len);
    buf
}

fn child(unknown: &UnknownFields, number: u32, index: usize) -> &UnknownFields {
    unknown
        .child(number, index)
        .unwrap_or(&super::unknown::EMPTY)
}

fn len_message<M: Codec>(
    number: u32,
    message: &M,
    unknown: &UnknownFields,
    sizes: &mut SizeList,
) -> usize {
    let slot = sizes.len();
    sizes.push(0);
    let body = body_len(message, unknown, sizes);
    if let Some(size) = sizes.get_mut(slot) {
        *size = body;
    }
    wire::tag_len(number) + wire::varint_len(body as u64) + body
}

fn put_message<M: Codec>(
    buf: &mut Vec<u8>,
    number: u32,
    message: &M,
    unknown: &UnknownFields,
    sizes: &mut Sizes<'_>,
) {
    wire::put_tag(buf, number, WireType::LengthDelimited);
    wire::put_varint(buf, sizes.next() as u64);
    message.write_known(unknown, buf, sizes);
    unknown.write_own(buf, message.keeps_retired_copies(unknown));
}

fn len_messages<M: Codec>(
    number: u32,
    list: &[M],
    unknown: &UnknownFields,
    sizes: &mut SizeList,
) -> usize {
    list.iter()
        .enumerate()
        .map(|(i, m)| len_message(number, m, child(unknown, number, i), sizes))
        .sum()
}

fn put_messages<M: Codec>(
    buf: &mut Vec<u8>,
    number: u32,
    list: &[M],
    unknown: &UnknownFields,
    sizes: &mut Sizes<'_>,
) {
    for (i, message) in list.iter().enumerate() {
        put_message(buf, number, message, child(unknown, number, i), sizes);
    }
}

fn len_optional<M: Codec>(
    number: u32,
    message: Option<&M>,
    unknown: &UnknownFields,
    sizes: &mut SizeList,
) -> usize {
    message.map_or(0, |m| {
        len_message(number, m, child(unknown, number, 0), sizes)
    })
}

fn put_optional<M: Codec>(
    buf: &mut Vec<u8>,
    number: u32,
    message: Option<&M>,
    unknown: &UnknownFields,
    sizes: &mut Sizes<'_>,
) {
    if let Some(m) = message {
        put_message(buf, number, m, child(unknown, number, 0), sizes);
    }
}

fn within(name: &'static str) -> impl FnOnce(DecodeError) -> DecodeError {
    move |e| e.within(Segment::Field(name))
}

impl Codec for TileProto {
    const KIND: Kind = Kind::Tile;

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        _unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        match number {
            1 => repeated(decoder, wire_type, &mut self.dimensions, to_i64)
                .map_err(within("dimensions")),
            _ => Ok(false),
        }
    }

    fn known_len(&self, _unknown: &UnknownFields, _sizes: &mut SizeList) -> usize {
        len_packed(1, &self.dimensions, int64_bits)
    }

    fn write_known(&self, _unknown: &UnknownFields, buf: &mut Vec<u8>, _sizes: &mut Sizes<'_>) {
        put_packed(buf, 1, &self.dimensions, int64_bits);
    }
}

impl Codec for SplitConfigProto {
    const KIND: Kind = Kind::SplitConfig;

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        _unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        match number {
            1 => int64(decoder, wire_type, &mut self.dimension).map_err(within("dimension")),
            2 => repeated(decoder, wire_type, &mut self.split_indices, to_i64)
                .map_err(within("split_indices")),
            _ => Ok(false),
        }
    }

    fn known_len(&self, _unknown: &UnknownFields, _sizes: &mut SizeList) -> usize {
        len_varint_field(1, int64_bits(&self.dimension))
            + len_packed(2, &self.split_indices, int64_bits)
    }

    fn write_known(&self, _unknown: &UnknownFields, buf: &mut Vec<u8>, _sizes: &mut Sizes<'_>) {
        put_varint_field(buf, 1, int64_bits(&self.dimension));
        put_packed(buf, 2, &self.split_indices, int64_bits);
    }
}

impl Codec for LayoutProto {
    const KIND: Kind = Kind::Layout;

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        let d = decoder;
        let wt = wire_type;
        match number {
            1 => {
                repeated(d, wt, &mut self.minor_to_major, to_i64).map_err(within("minor_to_major"))
            }
            2..=5 => self.merge_retired(number, wt, d, unknown),
            6 => repeated_message(d, wt, 6, &mut self.tiles, unknown).map_err(within("tiles")),
            7 => {
                int64(d, wt, &mut self.element_size_in_bits).map_err(within("element_size_in_bits"))
            }
            8 => int64(d, wt, &mut self.memory_space).map_err(within("memory_space")),
            9 => repeated(d, wt, &mut self.dim_level_types, to_i32)
                .map_err(within("dim_level_types")),
            10 if wt == WireType::LengthDelimited => {
                let shape = self.physical_shape.get_or_insert_with(Default::default);
                singular_message(d, 10, &mut **shape, unknown).map_err(within("physical_shape"))
            }
            11 => enumeration(d, wt, &mut self.index_primitive_type)
                .map_err(within("index_primitive_type")),
            12 => enumeration(d, wt, &mut self.pointer_primitive_type)
                .map_err(within("pointer_primitive_type")),
            13 => repeated(d, wt, &mut self.dim_unique, to_bool).map_err(within("dim_unique")),
            14 => repeated(d, wt, &mut self.dim_ordered, to_bool).map_err(within("dim_ordered")),
            15 => int64(d, wt, &mut self.dynamic_shape_metadata_prefix_bytes)
                .map_err(within("dynamic_shape_metadata_prefix_bytes")),
            16 => int64(d, wt, &mut self.tail_padding_alignment_in_elements)
                .map_err(within("tail_padding_alignment_in_elements")),
            17 => repeated_message(d, wt, 17, &mut self.split_configs, unknown)
                .map_err(within("split_configs")),
            _ => Ok(false),
        }
    }

    fn known_len(&self, unknown: &UnknownFields, sizes: &mut SizeList) -> usize {
        len_packed(1, &self.minor_to_major, int64_bits)
            + self.retired_len(unknown)
            + len_messages(6, &self.tiles, unknown, sizes)
            + len_varint_field(7, int64_bits(&self.element_size_in_bits))
            + len_varint_field(8, int64_bits(&self.memory_space))
            + len_packed(9, &self.dim_level_types, enum_bits)
            + len_optional(10, self.physical_shape.as_deref(), unknown, sizes)
            + len_varint_field(11, enum_bits(&self.index_primitive_type))
            + len_varint_field(12, enum_bits(&self.pointer_primitive_type))
            + len_packed(13, &self.dim_unique, bool_bits)
            + len_packed(14, &self.dim_ordered, bool_bits)
            + len_varint_field(15, int64_bits(&self.dynamic_shape_metadata_prefix_bytes))
            + len_varint_field(16, int64_bits(&self.tail_padding_alignment_in_elements))
            + len_messages(17, &self.split_configs, unknown, sizes)
    }

    fn write_known(&self, unknown: &UnknownFields, buf: &mut Vec<u8>, sizes: &mut Sizes<'_>) {
        put_packed(buf, 1, &self.minor_to_major, int64_bits);
        self.write_retired(unknown, buf);
        put_messages(buf, 6, &self.tiles, unknown, sizes);
        put_varint_field(buf, 7, int64_bits(&self.element_size_in_bits));
        put_varint_field(buf, 8, int64_bits(&self.memory_space));
        put_packed(buf, 9, &self.dim_level_types, enum_bits);
        put_optional(buf, 10, self.physical_shape.as_deref(), unknown, sizes);
        put_varint_field(buf, 11, enum_bits(&self.index_primitive_type));
        put_varint_field(buf, 12, enum_bits(&self.pointer_primitive_type));
        put_packed(buf, 13, &self.dim_unique, bool_bits);
        put_packed(buf, 14, &self.dim_ordered, bool_bits);
        put_varint_field(
            buf,
            15,
            int64_bits(&self.dynamic_shape_metadata_prefix_bytes),
        );
        put_varint_field(
            buf,
            16,
            int64_bits(&self.tail_padding_alignment_in_elements),
        );
        put_messages(buf, 17, &self.split_configs, unknown, sizes);
    }

    fn keeps_retired_copies(&self, unknown: &UnknownFields) -> bool {
        self.retired_placement(unknown) == RetiredPlacement::Trailing
    }
}

/// Where the encoder writes LayoutProto's retired fields 2-5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RetiredPlacement {
    /// The named fields, canonically, in field-number order (right after
    /// `minor_to_major`): what XLA wrote while the fields existed, and what a
    /// runtime that knows them writes.
    Named,
    /// The decoded copies, byte for byte, in field-number order: they came before
    /// every field numbered above 5, as XLA of 2017-2022 wrote them.
    Leading,
    /// The decoded copies, byte for byte, among the unknown fields at the end: where
    /// Google's runtime under today's schema (which only reserves 2-5) puts them.
    Trailing,
}

impl LayoutProto {
    fn retired_placement(&self, unknown: &UnknownFields) -> RetiredPlacement {
        if unknown.own_is_empty() {
            // No copies: the named fields, whatever they hold.
            return RetiredPlacement::Named;
        }
        if !self.copies_agree(unknown) {
            return RetiredPlacement::Named;
        }
        let mut copies = unknown.retired_fields().peekable();
        if copies.peek().is_none() {
            return RetiredPlacement::Named;
        }
        if copies.all(|copy| copy.is_leading()) {
            RetiredPlacement::Leading
        } else {
            RetiredPlacement::Trailing
        }
    }

    fn copies_agree(&self, unknown: &UnknownFields) -> bool {
        let mut copies = unknown.retired_fields().peekable();
        if copies.peek().is_none() {
            return !self.has_retired_values();
        }
        // The named fields must still say what the copies say.
        let mut from_copies = LayoutProto::default();
        let mut scratch = UnknownFields::new();
        for copy in copies {
            let mut decoder = Decoder::new(copy.raw());
            if merge_message(&mut decoder, &mut from_copies, &mut scratch).is_err() {
                return false;
            }
        }
        from_copies.padded_dimensions == self.padded_dimensions
            && from_copies.padding_value == self.padding_value
            && from_copies.format == self.format
            && from_copies.max_sparse_elements == self.max_sparse_elements
    }
}

// LayoutProto's retired fields 2-5. XLA's schema only reserves their numbers, so
// Google's runtime keeps them as unknown fields, byte for byte, and writes them after
// the known fields; XLA of 2017-2022, which knew them, wrote them in number order.
// The decoder reads them into the named fields and keeps their bytes as copies,
// noting whether they came before every field above 5. While the named fields agree
// with the copies, the encoder writes the copies back where they were (see
// `RetiredPlacement`); otherwise it writes the named fields canonically, in number
// order.
impl LayoutProto {
    fn has_retired_values(&self) -> bool {
        !self.padded_dimensions.is_empty()
            || self.padding_value != 0
            || self.format != 0
            || self.max_sparse_elements != 0
    }

    fn merge_retired(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        let snapshot = decoder.reader.clone();
        let (listed, entries) = (self.padded_dimensions.len(), decoder.entries);
        let read = match number {
            2 => repeated(decoder, wire_type, &mut self.padded_dimensions, to_i64),
            3 => enumeration(decoder, wire_type, &mut self.padding_value),
            4 => enumeration(decoder, wire_type, &mut self.format),
            _ => int64(decoder, wire_type, &mut self.max_sparse_elements),
        };
        match read {
            Ok(true) => {
                let raw = decoder.reader.since(decoder.tag_start);
                // Leading only as XLA of 2017-2022 wrote it: after field 1 at most,
                // with nothing kept as unknown before it. A copy that follows an
                // unknown field stays among the unknown fields, where Google's
                // runtime keeps it, so that re-encoding is a fixed point: what the
                // encoder writes at the end re-decodes as leading only when it
                // already is where the leading copies would go.
                let leading = decoder.highest_seen <= 5 && unknown.own_all_retired();
                unknown.push_raw(raw, true, leading);
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) if matches!(e.kind(), DecodeErrorKind::TooManyEntries { .. }) => Err(e),
            Err(_) => {
                // Unreadable as the named field (a bad packed list, a varint past 64
                // bits): Google's runtime keeps such bytes as an unknown field, whole.
                self.padded_dimensions.truncate(listed);
                decoder.reader = snapshot;
                decoder.entries = entries;
                Ok(false)
            }
        }
    }

    fn retired_len(&self, unknown: &UnknownFields) -> usize {
        match self.retired_placement(unknown) {
            RetiredPlacement::Trailing => return 0,
            RetiredPlacement::Leading => {
                return unknown.retired_fields().map(|f| f.raw().len()).sum();
            }
            RetiredPlacement::Named => {}
        }
        len_packed(2, &self.padded_dimensions, int64_bits)
            + len_varint_field(3, enum_bits(&self.padding_value))
            + len_varint_field(4, enum_bits(&self.format))
            + len_varint_field(5, int64_bits(&self.max_sparse_elements))
    }

    fn write_retired(&self, unknown: &UnknownFields, buf: &mut Vec<u8>) {
        match self.retired_placement(unknown) {
            RetiredPlacement::Trailing => return,
            RetiredPlacement::Leading => {
                for copy in unknown.retired_fields() {
                    buf.extend_from_slice(copy.raw());
                }
                return;
            }
            RetiredPlacement::Named => {}
        }
        put_packed(buf, 2, &self.padded_dimensions, int64_bits);
        put_varint_field(buf, 3, enum_bits(&self.padding_value));
        put_varint_field(buf, 4, enum_bits(&self.format));
        put_varint_field(buf, 5, int64_bits(&self.max_sparse_elements));
    }
}

impl Codec for ShapeProto {
    const KIND: Kind = Kind::Shape;

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        let d = decoder;
        let wt = wire_type;
        match number {
            2 => enumeration(d, wt, &mut self.element_type).map_err(within("element_type")),
            3 => repeated(d, wt, &mut self.dimensions, to_i64).map_err(within("dimensions")),
            4 => repeated_message(d, wt, 4, &mut self.tuple_shapes, unknown)
                .map_err(within("tuple_shapes")),
            5 if wt == WireType::LengthDelimited => {
                let layout = self.layout.get_or_insert_with(Default::default);
                singular_message(d, 5, &mut **layout, unknown).map_err(within("layout"))
            }
            6 => repeated(d, wt, &mut self.is_dynamic_dimension, to_bool)
                .map_err(within("is_dynamic_dimension")),
            _ => Ok(false),
        }
    }

    fn known_len(&self, unknown: &UnknownFields, sizes: &mut SizeList) -> usize {
        len_varint_field(2, enum_bits(&self.element_type))
            + len_packed(3, &self.dimensions, int64_bits)
            + len_messages(4, &self.tuple_shapes, unknown, sizes)
            + len_optional(5, self.layout.as_deref(), unknown, sizes)
            + len_packed(6, &self.is_dynamic_dimension, bool_bits)
    }

    fn write_known(&self, unknown: &UnknownFields, buf: &mut Vec<u8>, sizes: &mut Sizes<'_>) {
        put_varint_field(buf, 2, enum_bits(&self.element_type));
        put_packed(buf, 3, &self.dimensions, int64_bits);
        put_messages(buf, 4, &self.tuple_shapes, unknown, sizes);
        put_optional(buf, 5, self.layout.as_deref(), unknown, sizes);
        put_packed(buf, 6, &self.is_dynamic_dimension, bool_bits);
    }
}

impl Codec for ProgramShapeProto {
    const KIND: Kind = Kind::ProgramShape;

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        decoder: &mut Decoder<'_>,
        unknown: &mut UnknownFields,
    ) -> Result<bool, DecodeError> {
        let d = decoder;
        let wt = wire_type;
        match number {
            1 => repeated_message(d, wt, 1, &mut self.parameters, unknown)
                .map_err(within("parameters")),
            2 if wt == WireType::LengthDelimited => {
                let result = self.result.get_or_insert_with(Default::default);
                singular_message(d, 2, result, unknown).map_err(within("result"))
            }
            3 if wt == WireType::LengthDelimited => {
                let name = parameter_name(d, self.parameter_names.len())?;
                self.parameter_names.push(name.to_owned());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn known_len(&self, unknown: &UnknownFields, sizes: &mut SizeList) -> usize {
        len_messages(1, &self.parameters, unknown, sizes)
            + len_optional(2, self.result.as_ref(), unknown, sizes)
            + self
                .parameter_names
                .iter()
                .map(|s| wire::tag_len(3) + wire::varint_len(s.len() as u64) + s.len())
                .sum::<usize>()
    }

    fn write_known(&self, unknown: &UnknownFields, buf: &mut Vec<u8>, sizes: &mut Sizes<'_>) {
        put_messages(buf, 1, &self.parameters, unknown, sizes);
        put_optional(buf, 2, self.result.as_ref(), unknown, sizes);
        for name in &self.parameter_names {
            wire::put_tag(buf, 3, WireType::LengthDelimited);
            wire::put_varint(buf, name.len() as u64);
            buf.extend_from_slice(name.as_bytes());
        }
    }
}
