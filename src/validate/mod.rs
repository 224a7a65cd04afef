//! The validation gate: raw protos in, domain types ([`Shape`], [`Layout`],
//! [`ProgramShape`]) and a [`Report`] of every problem out.
//!
//! This is the only way to build the domain types, so nothing downstream (text
//! printing, the indexing engine) ever sees an invalid shape. Use `TryFrom` for a
//! yes/no answer with every error, or [`validate_shape`], [`validate_layout`],
//! [`validate_program_shape`] for the value together with the warnings.
//!
//! ```
//! use xla_shape::{proto, Shape};
//! let raw = proto::ShapeProto {
//!     element_type: proto::PrimitiveType::F32 as i32,
//!     dimensions: vec![2, 3],
//!     layout: Some(Box::new(proto::LayoutProto { minor_to_major: vec![1, 3], ..Default::default() })),
//!     ..Default::default()
//! };
//! let error = Shape::try_from(&raw).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions"
//! );
//! ```
//!
//! # Rules
//!
//! Errors (the message is invalid):
//! - Everything XLA HEAD enforces (`Shape::FromProto`, `Layout::FromProto`,
//!   `ProgramShape::FromProto`, `ShapeUtil::ValidateShapeWithOptionalLayout`): a known
//!   element type other than `PRIMITIVE_TYPE_INVALID`; dimensions `>= 0` or INT64_MIN
//!   (unbounded); `is_dynamic_dimension` empty or one per dimension; element count and
//!   byte size within int64; no layout on a tuple, token or opaque shape (a layout on
//!   a buffer shape is its array's layout, replacing the array's own, as XLA does); a
//!   buffer holds exactly one array shape; `minor_to_major` a permutation of the
//!   dimensions; tail padding alignment `>= 0`; no index type, pointer type or physical
//!   shape (sparse only); tiles non-empty, with no 0 and no negative entry;
//!   `element_size_in_bits >= 0`; one parameter name per parameter and a result in a
//!   program shape.
//! - What the XLA in jaxlib 0.10.2 enforces beyond the HEAD snapshot of the reference:
//!   split configs name an existing physical dimension, at most once, and their
//!   indices are strictly increasing, positive and inside the dimension.
//! - The combine marker INT64_MIN (`*`) in a tile is rejected, as XLA's
//!   `Layout::FromProto` does, unless [`Options::accept_combine_tiles`] is set (XLA's
//!   HLO text parser accepts `*`; use [`Options::hlo_text`]).
//! - A missing layout is fine (XLA's `ValidateShapeWithOptionalLayout`).
//! - The retired layout fields, with the rules of the XLA that wrote them:
//!   `padded_dimensions` has one entry per dimension, each at least that dimension's
//!   size (bound; an unbounded dimension cannot be padded), and never comes with
//!   tiles; `padding_value` and `format` hold known values; `format: SPARSE` and
//!   `max_sparse_elements` are rejected as retired. `format` absent or `DENSE` is fine.
//! - So the indexing engine can be infallible, the padded and tiled allocation sizes
//!   must fit in int64 too (see [`ArrayShape`]'s guarantees). XLA itself does not check
//!   these (it accepts `s8[4611686018427387905]{0:T(4611686018427387904)}`); this is
//!   the one place where this gate is deliberately stricter than XLA on a modern
//!   message.
//!
//! Warnings (valid, but XLA silently ignores or reinterprets something): `dimensions` or
//! `is_dynamic_dimension` on a non-array shape; `tuple_shapes` on an array, token or
//! opaque shape; a buffer's layout replacing its array's own; the unbounded marker on a dimension not flagged dynamic;
//! `dim_level_types`, `dim_unique` and `dim_ordered`; a memory space outside int8 (XLA
//! keeps 8 bits: `S(300)` prints as `S(44)`); a negative metadata prefix (XLA prints
//! no `M`); `element_size_in_bits` below the type's bit width; a split config without
//! indices; `padding_value` without `padded_dimensions`; unknown fields.
//!
//! A lone [`LayoutProto`] (`--message layout`) is checked for everything that needs no
//! shape, taking its number of dimensions from `minor_to_major`.
//!
//! # Normalizations
//!
//! Converting a valid proto to the domain and back (`ShapeProto::from(&shape)`) writes
//! what XLA's own `Shape::ToProto` writes. So `to_proto(from_proto(p))` differs from `p`
//! exactly in these ways:
//! 1. `element_type` is always written (it is never 0 in a valid shape anyway).
//! 2. An array writes one `is_dynamic_dimension` flag per dimension, even when all are
//!    false; an empty list reads as all static.
//! 3. The unbounded marker without its dynamic flag (warned) is written with the flag.
//! 4. `tail_padding_alignment_in_elements` absent or 0 reads as 1 and is always written
//!    (as 1 by default).
//! 5. Fields XLA ignores are dropped: `dimensions`/`is_dynamic_dimension` on non-arrays,
//!    `tuple_shapes` on arrays, tokens and opaques, and `dim_level_types`, `dim_unique`,
//!    `dim_ordered`.
//! 6. A tuple writes only `element_type` and `tuple_shapes`; a buffer its one
//!    `tuple_shapes` entry (with the buffer's layout, if it had one, on that entry); a token or opaque only `element_type`; a program shape always
//!    writes its `result`.
//! 7. The retired `padded_dimensions`, `padding_value` and `format: DENSE` are kept when
//!    present (so old messages round-trip); `max_sparse_elements` is never valid.
//! 8. Everything else is kept as is: `minor_to_major`, tiles (`*` as INT64_MIN),
//!    `element_size_in_bits`, `memory_space`, `split_configs` and
//!    `dynamic_shape_metadata_prefix_bytes`, even where warned.
//!
//! Unknown fields are not part of the domain types; the codec keeps them next to the
//! raw message ([`crate::codec::Decoded`]), and [`validate_decoded`] turns its listing
//! into warnings (errors for known fields with the wrong wire type).

mod fast;
mod fields;
pub(crate) mod size;
mod to_proto;

use fields::{LayoutFields, ShapeFields};

use crate::codec::{Decoded, UnknownFieldInfo};
use crate::error::{Issue, IssueKind, Report, Severity, ValidationError};
use crate::layout::{DimList, TileDims, Tiles};
use crate::layout::{Layout, PaddingValue, SplitConfig, Tile, TileDim};
use crate::message::AnyMessage;
use crate::path::{Path, Segment};
use crate::primitive::PrimitiveType;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use crate::shape::{ArrayShape, DimSize, Dims, ProgramShape, Shape};

use std::collections::btree_map::{BTreeMap, Entry};
use std::num::NonZeroU64;

/// How deep shapes may nest (tuples in tuples, buffers, program shapes); deeper input
/// is reported as [`IssueKind::TooDeep`] instead of recursing further.
pub const MAX_DEPTH: usize = 256;

/// The outcome of one validation: the domain value when there is no error, and the
/// report of every problem found (errors and warnings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validated<T> {
    value: Option<T>,
    report: Report,
}

impl<T> Validated<T> {
    /// The value; `None` when the report has an error.
    pub fn value(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// The report: every error and warning.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The value and the report.
    pub fn into_parts(self) -> (Option<T>, Report) {
        (self.value, self.report)
    }

    /// The value, or every error (warnings are dropped with the value).
    pub fn into_result(self) -> Result<T, ValidationError> {
        match self.value {
            Some(value) => Ok(value),
            None => Err(ValidationError::new(self.report)),
        }
    }
}

/// Where the message came from, for the few rules on which XLA's surfaces differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Accept the combine marker INT64_MIN (`*`) in tiles. XLA's HLO text parser
    /// accepts `*`; its `Layout::FromProto` rejects it (every negative tile dimension,
    /// since 2025-04). Off by default (the proto rules).
    pub accept_combine_tiles: bool,
}

impl Options {
    /// The rules for a message read from a proto (binary or JSON): XLA's `FromProto`.
    pub fn proto() -> Self {
        Self::default()
    }

    /// The rules for a shape built from HLO text: as [`Options::proto`], but `*` tiles
    /// are accepted, as XLA's parser does.
    pub fn hlo_text() -> Self {
        Self {
            accept_combine_tiles: true,
        }
    }
}

/// Validates a shape and builds it, with the proto rules.
pub fn validate_shape(proto: &ShapeProto) -> Validated<Shape> {
    validate_shape_with(proto, Options::proto())
}

/// Validates a shape and builds it.
#[inline]
pub fn validate_shape_with(proto: &ShapeProto, options: Options) -> Validated<Shape> {
    let mut checker = Checker::new(options);
    let value = checker.shape(proto);
    checker.finish(value)
}

/// The report of [`validate_shape_with`] for a shape found `depth` levels down inside
/// tuples that hold nothing but their elements (which have no issues of their own):
/// the depth limit counts those levels, and the paths are relative to the shape.
pub(crate) fn validate_nested_shape(proto: &ShapeProto, options: Options, depth: usize) -> Report {
    let mut report = Report::new();
    each_nested_issue(proto, options, depth, &mut |issue| report.push(issue));
    report
}

/// [`validate_shape_with`] handing each problem to `each` as it is found, in the same
/// order, rather than holding them in a report: the shape when it is valid.
///
/// For a caller that prints, counts or drops the problems as they come, a shape of
/// many problems (a `minor_to_major` that repeats one dimension 300,000 times) is
/// checked in the memory of the shape, not of its problems.
///
/// ```
/// use xla_shape::{text, validate};
/// let proto = text::parse_shape("f32[2,2,2]{0,0,0}").unwrap();
/// let mut errors = Vec::new();
/// let shape = validate::validate_shape_each(&proto, validate::Options::hlo_text(), &mut |issue| {
///     errors.push(issue.to_string());
/// });
/// assert!(shape.is_none());
/// assert_eq!(
///     errors[1],
///     "layout.minor_to_major[2]: dimension 0 is listed twice (first at minor_to_major[0])"
/// );
/// ```
pub fn validate_shape_each(
    proto: &ShapeProto,
    options: Options,
    each: &mut dyn FnMut(Issue),
) -> Option<Shape> {
    let mut checker = Checker::handing_on(options, 0, each);
    let value = checker.shape(proto);
    value.filter(|_| checker.errors == 0)
}

/// [`validate_nested_shape`] handing each problem to `each` as it is found; no
/// validated value is built.
pub(crate) fn each_nested_issue(
    proto: &ShapeProto,
    options: Options,
    depth: usize,
    each: &mut dyn FnMut(Issue),
) {
    drop(Checker::only_problems(options, depth, each).shape(proto));
}

/// Validates a lone layout (everything that needs no shape) and builds it, with the
/// proto rules.
pub fn validate_layout(proto: &LayoutProto) -> Validated<Layout> {
    validate_layout_with(proto, Options::proto())
}

/// Validates a lone layout (everything that needs no shape) and builds it.
pub fn validate_layout_with(proto: &LayoutProto, options: Options) -> Validated<Layout> {
    let mut checker = Checker::new(options);
    let value = checker.layout(proto, None).map(|layout| *layout);
    checker.finish(value)
}

/// Validates a program shape and builds it, with the proto rules.
pub fn validate_program_shape(proto: &ProgramShapeProto) -> Validated<ProgramShape> {
    validate_program_shape_with(proto, Options::proto())
}

/// Validates a program shape and builds it.
pub fn validate_program_shape_with(
    proto: &ProgramShapeProto,
    options: Options,
) -> Validated<ProgramShape> {
    let mut checker = Checker::new(options);
    let value = checker.program_shape(proto);
    checker.finish(value)
}

/// The issues of the shapes of a tuple checked one at a time ([`TupleIssues::each`]).
#[derive(Debug, Default)]
pub(crate) struct TupleIssues {
    /// The path of the tuple last said to nest too deep.
    too_deep: Option<Vec<usize>>,
}

impl TupleIssues {
    /// Hands `each` the issues of the shape at `path` (tuple indices from the top-level
    /// tuple's) inside tuples that hold nothing but their elements (which have no
    /// issues of their own), as they are found, so that they are those of the whole
    /// tuple, at `tuple_shapes[i]...`. Below the validator's depth limit only the
    /// enclosing tuple at the limit is looked at, and said to nest too deep once.
    pub(crate) fn each(
        &mut self,
        path: &[usize],
        shape: &crate::proto::ShapeProto,
        gate: Options,
        each: &mut dyn FnMut(Issue),
    ) {
        self.each_in(&crate::path::Path::root(), path, shape, gate, each);
    }

    /// [`TupleIssues::each`] for a tuple at `base` in a larger message, at nesting depth
    /// 0 there (a program shape's parameter or result): the issues are at
    /// `base.tuple_shapes[i]...`.
    pub(crate) fn each_in(
        &mut self,
        base: &crate::path::Path,
        path: &[usize],
        shape: &crate::proto::ShapeProto,
        gate: Options,
        each: &mut dyn FnMut(Issue),
    ) {
        let limit = MAX_DEPTH;
        let prefix = crate::codec::tuple_path(&path[..path.len().min(limit)]).prefixed(base);
        let each = &mut |issue: Issue| each(issue.prefixed(&prefix));
        if path.len() > limit {
            let at = &path[..limit];
            if self.too_deep.as_deref() == Some(at) {
                return;
            }
            self.too_deep = Some(at.to_vec());
            let tuple = crate::proto::ShapeProto {
                element_type: crate::proto::PrimitiveType::Tuple as i32,
                ..Default::default()
            };
            each_nested_issue(&tuple, gate, limit, each);
        } else {
            each_nested_issue(shape, gate, path.len(), each);
        }
    }
}

/// How many unknown fields, and how many fields with a wrong wire type, one report
/// lists one by one: the rest are counted in one issue each
/// ([`IssueKind::UnknownFieldsNotListed`], [`IssueKind::WrongWireTypesNotListed`]),
/// so that a message of millions of unknown fields gets a report of its own size at
/// most.
pub const MAX_LISTED_UNKNOWN: usize = 1000;

/// The issues of unknown fields as they come, the first [`MAX_LISTED_UNKNOWN`] of each
/// kind listed, the rest counted ([`UnknownListing::finish`]).
#[derive(Debug, Default)]
pub(crate) struct UnknownListing {
    listed: (usize, usize),
    more: (usize, usize),
}

impl UnknownListing {
    /// The issue for one unknown field, when it is listed.
    pub(crate) fn field(&mut self, info: &UnknownFieldInfo) -> Option<Issue> {
        let wire_type = info.wire_type.name();
        let kind = match info.known_field {
            Some(_) => IssueKind::WrongWireType {
                number: info.number,
                wire_type,
            },
            None => IssueKind::UnknownField {
                number: info.number,
                wire_type,
            },
        };
        self.issue(Issue::new(info.field_path(), kind))
    }

    /// `issue` when it is listed: an unknown field or wrong wire type past the first
    /// [`MAX_LISTED_UNKNOWN`] of its kind, or a count of those not listed (from a
    /// report of its own), is counted instead; any other issue is listed.
    pub(crate) fn issue(&mut self, issue: Issue) -> Option<Issue> {
        let (listed, more) = match issue.kind() {
            IssueKind::UnknownField { .. } => (&mut self.listed.0, &mut self.more.0),
            IssueKind::WrongWireType { .. } => (&mut self.listed.1, &mut self.more.1),
            IssueKind::UnknownFieldsNotListed { more } => {
                self.more.0 += more;
                return None;
            }
            IssueKind::WrongWireTypesNotListed { more } => {
                self.more.1 += more;
                return None;
            }
            _ => return Some(issue),
        };
        if *listed < MAX_LISTED_UNKNOWN {
            *listed += 1;
            Some(issue)
        } else {
            *more += 1;
            None
        }
    }

    /// Adds the counts of the fields `other` did not list.
    pub(crate) fn merge(&mut self, other: UnknownListing) {
        self.more.0 += other.more.0;
        self.more.1 += other.more.1;
    }

    /// The counts of the fields not listed, at the message itself.
    pub(crate) fn finish(self) -> impl Iterator<Item = Issue> {
        let wrong = (self.more.1 > 0).then(|| {
            Issue::new(
                Path::root(),
                IssueKind::WrongWireTypesNotListed { more: self.more.1 },
            )
        });
        let unknown = (self.more.0 > 0).then(|| {
            Issue::new(
                Path::root(),
                IssueKind::UnknownFieldsNotListed { more: self.more.0 },
            )
        });
        wrong.into_iter().chain(unknown)
    }
}

/// The problems the codec's unknown-field listing stands for: a warning for each
/// unknown field (XLA skips them), at `PATH.#NUMBER`; an error for each known field
/// that arrived with a wire type it cannot have, at the field's path. At most
/// [`MAX_LISTED_UNKNOWN`] of each are listed; the rest are counted, at the end.
pub fn unknown_fields_report(unknown: &[UnknownFieldInfo]) -> Report {
    unknown_report(|each| unknown.iter().cloned().for_each(each))
}

/// [`unknown_fields_report`] of the fields `visit` hands on one at a time (from
/// [`Decoded::for_each_unknown_field`], which keeps none of them).
pub(crate) fn unknown_report(visit: impl FnOnce(&mut dyn FnMut(UnknownFieldInfo))) -> Report {
    let mut report = Report::new();
    let mut listing = UnknownListing::default();
    visit(&mut |info| {
        if let Some(issue) = listing.field(&info) {
            report.push(issue);
        }
    });
    listing.finish().for_each(|issue| report.push(issue));
    report
}

/// Validates a message decoded by the codec: the message's own problems, then those of
/// its unknown fields ([`unknown_fields_report`]).
pub fn validate_decoded(decoded: &Decoded<AnyMessage>, options: Options) -> Report {
    let mut report = validate_message(&decoded.message, options);
    report.extend(unknown_report(|each| decoded.for_each_unknown_field(each)));
    report
}

/// [`validate_shape_with`] on a shape decoded by the codec; its unknown fields add
/// warnings (and errors for wrong wire types, which also withhold the value).
pub fn validate_decoded_shape(decoded: &Decoded<ShapeProto>, options: Options) -> Validated<Shape> {
    if decoded.unknown.holds_nothing() {
        return validate_shape_with(&decoded.message, options);
    }
    let Validated { value, mut report } = validate_shape_with(&decoded.message, options);
    report.extend(unknown_report(|each| decoded.for_each_unknown_field(each)));
    Validated {
        value: value.filter(|_| report.is_valid()),
        report,
    }
}

/// Decodes a binary `ShapeProto` and validates it: [`validate_decoded_shape`] of
/// [`crate::codec::decode_shape`], the same value and report, for a caller that wants
/// the domain value and not the message. The shapes real XLA writes (arrays with their
/// layouts, and tuples of them) are read straight into the domain types, without
/// building the message first.
pub fn decode_validated_shape(
    bytes: &[u8],
    options: Options,
) -> Result<Validated<Shape>, crate::codec::DecodeError> {
    if let Some(shape) = fast::shape(bytes, options) {
        return Ok(Validated {
            value: Some(shape),
            report: Report::new(),
        });
    }
    let decoded = crate::codec::decode_shape(bytes)?;
    Ok(validate_decoded_shape(&decoded, options))
}

/// Validates any of the three messages; only the report. The validated value is not
/// built, so a shape of millions of dimensions is checked without a second list of
/// them.
pub fn validate_message(message: &AnyMessage, options: Options) -> Report {
    let mut report = Report::new();
    each_issue(message, options, &mut |issue| report.push(issue));
    report
}

/// [`validate_message`] handing each problem to `each` as it is found, in the same
/// order, rather than holding them in a report: a message of many problems (a
/// `minor_to_major` that repeats one dimension 300,000 times) is checked in the memory
/// of the message, not of its problems.
pub(crate) fn each_issue(message: &AnyMessage, options: Options, each: &mut dyn FnMut(Issue)) {
    let mut checker = Checker::only_problems(options, 0, each);
    match message {
        AnyMessage::Shape(p) => drop(checker.shape(p)),
        AnyMessage::Layout(p) => drop(checker.layout(p, None)),
        AnyMessage::ProgramShape(p) => drop(checker.program_shape(p)),
    }
}

/// [`validate_decoded`] handing each problem to `each` as it is found
/// ([`each_issue`]), then those of the unknown fields.
pub(crate) fn each_decoded_issue(
    decoded: &Decoded<AnyMessage>,
    options: Options,
    each: &mut dyn FnMut(Issue),
) {
    each_issue(&decoded.message, options, each);
    let mut listing = UnknownListing::default();
    decoded.for_each_unknown_field(&mut |info| {
        if let Some(issue) = listing.field(&info) {
            each(issue);
        }
    });
    listing.finish().for_each(each);
}

impl TryFrom<&ShapeProto> for Shape {
    type Error = ValidationError;
    fn try_from(proto: &ShapeProto) -> Result<Self, Self::Error> {
        validate_shape(proto).into_result()
    }
}

impl TryFrom<&ShapeProto> for ArrayShape {
    type Error = ValidationError;
    /// Validates an array shape; a valid non-array shape is an error at
    /// `element_type`.
    fn try_from(proto: &ShapeProto) -> Result<Self, Self::Error> {
        match Shape::try_from(proto)? {
            Shape::Array(array) => Ok(array),
            other => {
                let mut report = Report::new();
                report.push(Issue::new(
                    Path::root().field("element_type"),
                    IssueKind::NotAnArray {
                        kind: other.kind_name(),
                    },
                ));
                Err(ValidationError::new(report))
            }
        }
    }
}

impl TryFrom<&LayoutProto> for Layout {
    type Error = ValidationError;
    fn try_from(proto: &LayoutProto) -> Result<Self, Self::Error> {
        validate_layout(proto).into_result()
    }
}

impl TryFrom<&ProgramShapeProto> for ProgramShape {
    type Error = ValidationError;
    fn try_from(proto: &ProgramShapeProto) -> Result<Self, Self::Error> {
        validate_program_shape(proto).into_result()
    }
}

macro_rules! try_from_owned {
    ($($proto:ty => $domain:ty),*) => {$(
        impl TryFrom<$proto> for $domain {
            type Error = ValidationError;
            fn try_from(proto: $proto) -> Result<Self, Self::Error> {
                <$domain>::try_from(&proto)
            }
        }
    )*};
}

try_from_owned!(ShapeProto => Shape, ShapeProto => ArrayShape, LayoutProto => Layout,
    ProgramShapeProto => ProgramShape);

fn kind_name(t: PrimitiveType) -> &'static str {
    match t {
        PrimitiveType::Tuple => "tuple",
        PrimitiveType::Token => "token",
        PrimitiveType::OpaqueType => "opaque",
        PrimitiveType::Buffer => "buffer",
        _ => "array",
    }
}

/// Which dimension numbers `minor_to_major` has listed so far: a bit mask for up to 64
/// dimensions (no allocation), a bit per dimension beyond.
enum Seen {
    Mask(u64),
    Words(Vec<u64>),
}

impl Seen {
    fn new(rank: usize) -> Self {
        if rank <= 64 {
            Seen::Mask(0)
        } else {
            Seen::Words(vec![0; rank.div_ceil(64)])
        }
    }

    /// Marks `dim` (< rank) as seen; false if it already was.
    fn insert(&mut self, dim: usize) -> bool {
        let (word, bit) = match self {
            Seen::Mask(mask) => (mask, 1u64 << (dim & 63)),
            Seen::Words(words) => match words.get_mut(dim / 64) {
                Some(word) => (word, 1u64 << (dim % 64)),
                None => return false,
            },
        };
        let new = *word & bit == 0;
        *word |= bit;
        new
    }
}

/// The size a proto dimension stands for, `dynamic` as its flag says: `None` when it
/// is negative (and not the unbounded marker, INT64_MIN).
fn dim_size(d: i64, dynamic: bool) -> Option<DimSize> {
    if d == i64::MIN {
        return Some(DimSize::Unbounded);
    }
    let n = u64::try_from(d).ok()?;
    Some(if dynamic {
        DimSize::Bounded(n)
    } else {
        DimSize::Static(n)
    })
}

/// What a layout is checked against when it belongs to an array: the array's own
/// fields, read as they are needed (no second list of the dimensions is built for it).
#[derive(Clone, Copy)]
struct ShapeContext<'a> {
    element_type: PrimitiveType,
    /// The proto's dimensions.
    dimensions: &'a [i64],
    /// The proto's dynamic flags when there is one per dimension, else none.
    dynamic: &'a [bool],
}

impl ShapeContext<'_> {
    /// Dimension `i`, or `None` when there is none or it is itself invalid.
    fn dimension(&self, i: usize) -> Option<DimSize> {
        let d = *self.dimensions.get(i)?;
        dim_size(d, self.dynamic.get(i).copied().unwrap_or(false))
    }

    fn rank(&self) -> usize {
        self.dimensions.len()
    }
}

/// Where the checker is in the message: kept inline, turned into a [`Path`] only when
/// a problem is recorded, so a valid message costs no allocation for it.
type Trail = smallvec::SmallVec<[Segment; 6]>;

#[derive(Default)]
struct Checker<'s> {
    options: Options,
    path: Trail,
    report: Report,
    /// Where each problem goes as it is found, in place of `report`, when set.
    sink: Option<&'s mut dyn FnMut(Issue)>,
    errors: usize,
    depth: usize,
    /// Whether only the problems are wanted: then no array is built (its value is
    /// `None`), so an array of millions of dimensions is checked without a second list
    /// of them beside the message's.
    only_problems: bool,
}

impl<'s> Checker<'s> {
    fn new(options: Options) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// A checker that hands each problem to `sink` as it is found and keeps none.
    fn handing_on(options: Options, depth: usize, sink: &'s mut dyn FnMut(Issue)) -> Self {
        Self {
            options,
            depth,
            sink: Some(sink),
            ..Self::default()
        }
    }

    /// A checker that hands each problem to `sink` as it is found and builds no value.
    fn only_problems(options: Options, depth: usize, sink: &'s mut dyn FnMut(Issue)) -> Self {
        Self {
            only_problems: true,
            ..Self::handing_on(options, depth, sink)
        }
    }

    #[inline]
    fn finish<T>(self, value: Option<T>) -> Validated<T> {
        Validated {
            value: if self.errors == 0 { value } else { None },
            report: self.report,
        }
    }

    /// Records a problem at the current path.
    fn issue(&mut self, kind: IssueKind) {
        if kind.severity() == Severity::Error {
            self.errors += 1;
        }
        let issue = Issue::new(Path::from(self.path.to_vec()), kind);
        match &mut self.sink {
            Some(sink) => sink(issue),
            None => self.report.push(issue),
        }
    }

    /// Records a problem at the current path plus `field`.
    fn issue_at(&mut self, field: &'static str, kind: IssueKind) {
        self.at(Segment::Field(field), |c| c.issue(kind));
    }

    /// Records a problem at the current path plus `field[index]`.
    fn issue_at_index(&mut self, field: &'static str, index: usize, kind: IssueKind) {
        self.at(Segment::Field(field), |c| {
            c.at(Segment::Index(index), |c| c.issue(kind))
        });
    }

    /// Runs `f` with `segment` pushed onto the path.
    fn at<R>(&mut self, segment: Segment, f: impl FnOnce(&mut Self) -> R) -> R {
        self.path.push(segment);
        let result = f(self);
        self.path.pop();
        result
    }

    /// Runs `f` with the path at an array's layout: `outer` (a buffer's own layout) when
    /// given, else the current path plus `layout`.
    fn at_layout<R>(&mut self, outer: Option<&Trail>, f: impl FnOnce(&mut Self) -> R) -> R {
        match outer {
            Some(path) => {
                let saved = std::mem::replace(&mut self.path, path.clone());
                let result = f(self);
                self.path = saved;
                result
            }
            None => self.at(Segment::Field("layout"), f),
        }
    }

    fn element_type(&mut self, value: i32) -> Option<PrimitiveType> {
        let t = PrimitiveType::from_i32(value);
        if t.is_none() {
            let kind = if value == 0 {
                IssueKind::InvalidElementType
            } else {
                IssueKind::UnknownElementType { value }
            };
            self.issue_at("element_type", kind);
        }
        t
    }

    #[inline]
    fn shape(&mut self, p: &ShapeProto) -> Option<Shape> {
        if self.depth >= MAX_DEPTH {
            self.issue(IssueKind::TooDeep { limit: MAX_DEPTH });
            return None;
        }
        self.depth += 1;
        let mark = self.errors;
        let shape = self.shape_inner(p);
        self.depth -= 1;
        shape.filter(|_| self.errors == mark)
    }

    #[inline]
    fn shape_inner(&mut self, p: &ShapeProto) -> Option<Shape> {
        let t = self.element_type(p.element_type)?;
        if t.is_array() {
            return self.array(t, p, None).map(Shape::Array);
        }
        let kind = kind_name(t);
        if !p.dimensions.is_empty() {
            self.issue_at("dimensions", IssueKind::IgnoredDimensions { kind });
        }
        let shape = match t {
            PrimitiveType::Tuple => {
                let mut elements = Vec::with_capacity(p.tuple_shapes.len());
                for (i, element) in p.tuple_shapes.iter().enumerate() {
                    let shape = self.at(Segment::Field("tuple_shapes"), |c| {
                        c.at(Segment::Index(i), |c| c.shape(element))
                    });
                    elements.extend(shape);
                }
                Some(Shape::Tuple(elements))
            }
            PrimitiveType::Buffer => self.buffer(p),
            PrimitiveType::Token | PrimitiveType::OpaqueType => {
                if !p.tuple_shapes.is_empty() {
                    self.issue_at("tuple_shapes", IssueKind::IgnoredTupleShapes { kind });
                }
                Some(if t == PrimitiveType::Token {
                    Shape::Token
                } else {
                    Shape::Opaque
                })
            }
            _ => None,
        };
        if p.layout.is_some() && t != PrimitiveType::Buffer {
            self.issue_at("layout", IssueKind::LayoutOnNonArray { kind });
        }
        if !p.is_dynamic_dimension.is_empty() {
            self.issue_at(
                "is_dynamic_dimension",
                IssueKind::IgnoredDimensions { kind },
            );
        }
        shape
    }

    /// A buffer holds exactly one array. XLA (jaxlib 0.10.2) applies a layout written
    /// on the buffer itself to that array, replacing the array's own layout, and writes
    /// it back on the array.
    fn buffer(&mut self, p: &ShapeProto) -> Option<Shape> {
        let [inner] = p.tuple_shapes.as_slice() else {
            self.issue_at(
                "tuple_shapes",
                IssueKind::BufferShapeCount {
                    count: p.tuple_shapes.len(),
                },
            );
            return None;
        };
        let outer_layout = p.layout.as_deref().map(|layout| {
            let mut path = self.path.clone();
            path.push(Segment::Field("layout"));
            (layout, path)
        });
        self.at(Segment::Field("tuple_shapes"), |c| {
            c.at(Segment::Index(0), |c| {
                match PrimitiveType::from_i32(inner.element_type) {
                    Some(t) if !t.is_array() => {
                        c.issue(IssueKind::BufferOfNonArray { kind: kind_name(t) });
                        None
                    }
                    None => {
                        c.element_type(inner.element_type);
                        None
                    }
                    Some(t) => {
                        if outer_layout.is_some() && inner.layout.is_some() {
                            c.issue_at("layout", IssueKind::BufferLayoutReplaced);
                        }
                        c.array(t, inner, outer_layout.as_ref().map(|(l, p)| (*l, p)))
                            .map(Shape::Buffer)
                    }
                }
            })
        })
    }

    /// An array; `outer_layout` is a buffer's own layout (and its path), which replaces
    /// the array's.
    fn array<S: ShapeFields>(
        &mut self,
        element_type: PrimitiveType,
        p: &S,
        outer_layout: Option<(&S::Layout, &Trail)>,
    ) -> Option<ArrayShape> {
        let mark = self.errors;
        let rank = p.dimensions().len();
        let flags = p.is_dynamic_dimension();
        let flags_ok = flags.is_empty() || flags.len() == rank;
        let context = ShapeContext {
            element_type,
            dimensions: p.dimensions(),
            dynamic: if flags_ok { flags } else { &[] },
        };
        // Field 3: dimensions.
        // Built as the shape's own list when the shape is wanted, its room taken at once
        // (grown a dimension at a time it ended up to twice the room it needed); the
        // layout reads the message's.
        let mut dims = Dims::with_capacity(if self.only_problems { 0 } else { rank });
        for (i, &d) in p.dimensions().iter().enumerate() {
            let size = context.dimension(i);
            match size {
                Some(DimSize::Unbounded) if flags_ok && !flags.get(i).copied().unwrap_or(false) => {
                    self.issue_at_index("dimensions", i, IssueKind::UnboundedNotDynamic);
                }
                None => {
                    self.issue_at_index("dimensions", i, IssueKind::NegativeDimension { size: d });
                }
                Some(_) => {}
            }
            if !self.only_problems {
                dims.push(size.unwrap_or(DimSize::Static(0)));
            }
        }
        let dims_ok = self.errors == mark;
        let count = if dims_ok {
            // XLA multiplies in dimension order, so a 0 after an overflow does not save it.
            let count = size::product(
                (0..rank).filter_map(|i| context.dimension(i).and_then(DimSize::bound)),
            );
            if count.is_none() {
                self.issue_at("dimensions", IssueKind::ElementCountOverflow);
            }
            count
        } else {
            None
        };
        let byte_width = u64::from(element_type.byte_width().unwrap_or(1));
        if let Some(n) = count {
            if size::mul(n, byte_width).is_none() {
                self.issue_at("dimensions", IssueKind::ByteSizeOverflow { unit: "bytes" });
            }
        }
        // Field 4: tuple_shapes.
        if p.has_tuple_shapes() {
            self.issue_at(
                "tuple_shapes",
                IssueKind::IgnoredTupleShapes { kind: "array" },
            );
        }
        // Field 5: layout.
        let (layout_proto, outer_path) = match outer_layout {
            Some((l, path)) => (Some(l), Some(path)),
            None => (p.layout(), None),
        };
        let layout = match layout_proto {
            Some(l) => {
                let layout_mark = self.errors;
                let layout = self.at_layout(outer_path, |c| c.layout(l, Some(context)));
                if self.errors != layout_mark {
                    None
                } else {
                    layout.map(Some)
                }
            }
            None => Some(None),
        };
        // Field 6: is_dynamic_dimension.
        if !flags_ok {
            self.issue_at(
                "is_dynamic_dimension",
                IssueKind::DynamicFlagsCount {
                    flags: flags.len(),
                    rank,
                },
            );
        }
        let layout = layout?;
        if self.errors != mark {
            return None;
        }
        if let (Some(n), Some(layout), Some(fields)) = (count, &layout, layout_proto) {
            let minor_to_major = fields.minor_to_major();
            self.at_layout(outer_path, |c| {
                c.allocated_sizes(n, byte_width, context, minor_to_major, layout)
            });
        }
        if self.errors != mark || self.only_problems {
            return None;
        }
        Some(ArrayShape {
            element_type,
            dimensions: dims,
            layout,
        })
    }

    /// Checks, with the path at the layout, that the element bits, the legacy padded size
    /// and the tiled size fit in int64 (guarantees 1 to 3 of [`ArrayShape`]), for a
    /// valid array and layout; `minor_to_major` is the message's, a permutation.
    fn allocated_sizes(
        &mut self,
        count: u64,
        byte_width: u64,
        shape: ShapeContext<'_>,
        minor_to_major: &[i64],
        layout: &Layout,
    ) {
        let bits = layout.element_size_in_bits;
        if bits != 0 && size::mul(count, bits).is_none() {
            self.issue_at(
                "element_size_in_bits",
                IssueKind::ByteSizeOverflow { unit: "bits" },
            );
        }
        let bound = |d: i64| {
            usize::try_from(d)
                .ok()
                .and_then(|d| shape.dimension(d))
                .and_then(DimSize::bound)
        };
        if (0..shape.rank()).any(|i| shape.dimension(i).and_then(DimSize::bound).is_none()) {
            return; // No size to check: XLA skips unbounded dimensions.
        }
        if let Some(padded) = &layout.padded_dimensions {
            let fits = size::nonzero_product(padded.iter().copied())
                .is_some_and(|n| size::check_storage(n, byte_width, bits).is_ok());
            if !fits {
                self.issue_at(
                    "padded_dimensions",
                    IssueKind::AllocatedSizeOverflow { what: "padded" },
                );
            }
        }
        let alignment = layout.tail_padding_alignment_in_elements;
        if count == 0 || (layout.tiles.is_empty() && alignment <= 1) {
            // No elements: XLA's ArraySize is 0 whatever the tiling. Or untiled and
            // unaligned: the same as the element count, already checked.
            return;
        }
        let rank = minor_to_major.len();
        let physical = |p: usize| {
            let d = minor_to_major.get(rank - 1 - p).copied();
            d.and_then(bound).unwrap_or(0)
        };
        let fits = size::tiled_product(rank, physical, &layout.tiles)
            .and_then(|n| size::round_up(n, alignment))
            .is_some_and(|n| size::check_storage(n, byte_width, bits).is_ok());
        if !fits {
            let field = if layout.tiles.is_empty() {
                "tail_padding_alignment_in_elements"
            } else {
                "tiles"
            };
            self.issue_at(field, IssueKind::AllocatedSizeOverflow { what: "tiled" });
        }
    }

    /// The layout, boxed: it is large, and an [`ArrayShape`] holds it boxed.
    fn layout<L: LayoutFields>(
        &mut self,
        fields: &L,
        shape: Option<ShapeContext<'_>>,
    ) -> Option<Box<Layout>> {
        let mark = self.errors;
        let given_minor_to_major = fields.minor_to_major();
        let l = fields.others();
        let rank = shape.map_or(given_minor_to_major.len(), |s| s.dimensions.len());
        // Field 1: minor_to_major.
        if given_minor_to_major.len() != rank {
            self.issue_at(
                "minor_to_major",
                IssueKind::MinorToMajorLength {
                    len: given_minor_to_major.len(),
                    rank,
                },
            );
        }
        let mut seen = Seen::new(rank);
        // Built only when the layout is wanted; else the message's list is read.
        let room = if self.only_problems {
            0
        } else {
            given_minor_to_major.len().min(rank)
        };
        let mut minor_to_major = DimList::with_capacity(room);
        // Where each dimension is first listed, built at the first duplicate: looking
        // back through the list for each made a list of many duplicates quadratic.
        // Positions are held in 32 bits (`u32::MAX`: not listed, or too far to hold,
        // when the duplicate is named as its own first).
        let mut first_at: Vec<u32> = Vec::new();
        for (i, &d) in given_minor_to_major.iter().enumerate() {
            match usize::try_from(d).ok().filter(|&u| u < rank) {
                None => self.issue_at_index(
                    "minor_to_major",
                    i,
                    IssueKind::DimensionOutOfRange { dim: d, rank },
                ),
                Some(u) if seen.insert(u) => {
                    if !self.only_problems {
                        minor_to_major.push(u);
                    }
                }
                Some(u) => {
                    if first_at.is_empty() {
                        first_at = vec![u32::MAX; rank];
                        for (j, &e) in given_minor_to_major.iter().enumerate() {
                            let slot = usize::try_from(e).ok().and_then(|e| first_at.get_mut(e));
                            if let Some(slot) = slot.filter(|slot| **slot == u32::MAX) {
                                *slot = u32::try_from(j).unwrap_or(u32::MAX);
                            }
                        }
                    }
                    let first = first_at.get(u).map(|&f| f as usize);
                    let first = first.filter(|&f| f < i).unwrap_or(i);
                    self.issue_at_index(
                        "minor_to_major",
                        i,
                        IssueKind::DuplicateDimension { dim: d, first },
                    )
                }
            }
        }
        let permutation_ok = self.errors == mark;
        // Field 2: padded_dimensions (retired).
        let padded_dimensions = if l.padded_dimensions.is_empty() {
            None
        } else {
            if l.padded_dimensions.len() != rank {
                self.issue_at(
                    "padded_dimensions",
                    IssueKind::PaddedDimensionsLength {
                        len: l.padded_dimensions.len(),
                        rank,
                    },
                );
            }
            let mut padded = Vec::with_capacity(l.padded_dimensions.len());
            for (i, &p) in l.padded_dimensions.iter().enumerate() {
                let Ok(value) = u64::try_from(p) else {
                    self.issue_at_index(
                        "padded_dimensions",
                        i,
                        IssueKind::NegativePaddedSize { padded: p },
                    );
                    continue;
                };
                padded.push(value);
                let Some(dim) = shape.and_then(|s| s.dimension(i)) else {
                    continue;
                };
                match dim.bound() {
                    None => self.issue_at_index(
                        "padded_dimensions",
                        i,
                        IssueKind::PaddedUnbounded { dim: i },
                    ),
                    Some(size) if value < size => self.issue_at_index(
                        "padded_dimensions",
                        i,
                        IssueKind::PaddedBelowSize {
                            padded: p,
                            dim: i,
                            size,
                        },
                    ),
                    Some(_) => {}
                }
            }
            Some(padded)
        };
        // Field 3: padding_value (retired).
        let padding_value = match l.padding_value {
            0 => None,
            value => {
                let known = PaddingValue::from_i32(value);
                match known {
                    None => {
                        self.issue_at("padding_value", IssueKind::UnknownPaddingValue { value })
                    }
                    Some(_) if l.padded_dimensions.is_empty() => {
                        self.issue_at("padding_value", IssueKind::PaddingValueWithoutPadding)
                    }
                    Some(_) => {}
                }
                known
            }
        };
        // Field 4: format (retired).
        let dense_format = match l.format {
            0 => false,
            1 => true,
            2 => {
                self.issue_at("format", IssueKind::SparseFormat);
                false
            }
            value => {
                self.issue_at("format", IssueKind::UnknownFormat { value });
                false
            }
        };
        // Field 5: max_sparse_elements (retired).
        if l.max_sparse_elements != 0 {
            self.issue_at(
                "max_sparse_elements",
                IssueKind::MaxSparseElements {
                    value: l.max_sparse_elements,
                },
            );
        }
        // Field 6: tiles.
        let mut tiles = Tiles::new();
        let options = self.options;
        for (i, tile) in fields.tiles().enumerate() {
            self.at(Segment::Field("tiles"), |c| {
                c.at(Segment::Index(i), |c| {
                    if tile.is_empty() {
                        c.issue_at("dimensions", IssueKind::EmptyTile);
                    }
                    let mut dimensions = TileDims::new();
                    for (j, &d) in tile.iter().enumerate() {
                        let dim = if d == i64::MIN {
                            if !options.accept_combine_tiles {
                                c.issue_at_index("dimensions", j, IssueKind::CombineTileInProto);
                            }
                            Some(TileDim::Combine)
                        } else if d == 0 {
                            c.issue_at_index("dimensions", j, IssueKind::ZeroTileDimension);
                            None
                        } else if d < 0 {
                            c.issue_at_index(
                                "dimensions",
                                j,
                                IssueKind::NegativeTileDimension { value: d },
                            );
                            None
                        } else {
                            NonZeroU64::new(d.unsigned_abs()).map(TileDim::Size)
                        };
                        dimensions.extend(dim);
                    }
                    tiles.push(Tile { dimensions });
                })
            });
        }
        // Field 7: element_size_in_bits.
        let element_size_in_bits = match u64::try_from(l.element_size_in_bits) {
            Ok(bits) => {
                if let Some(type_bits) = shape.and_then(|s| s.element_type.bit_width()) {
                    if bits != 0 && bits < u64::from(type_bits) {
                        let element_type = shape.map_or("", |s| s.element_type.name());
                        self.issue_at(
                            "element_size_in_bits",
                            IssueKind::ElementSizeBelowWidth {
                                bits,
                                type_bits,
                                element_type,
                            },
                        );
                    }
                }
                bits
            }
            Err(_) => {
                self.issue_at(
                    "element_size_in_bits",
                    IssueKind::NegativeElementSize {
                        value: l.element_size_in_bits,
                    },
                );
                0
            }
        };
        // Field 8: memory_space.
        if i8::try_from(l.memory_space).is_err() {
            self.issue_at(
                "memory_space",
                IssueKind::MemorySpaceRange {
                    value: l.memory_space,
                },
            );
        }
        // Field 9: dim_level_types (ignored since 2025).
        if !l.dim_level_types.is_empty() {
            self.issue_at("dim_level_types", IssueKind::IgnoredSparseField);
        }
        // Fields 10 to 12: sparse only.
        if l.physical_shape.is_some() {
            self.issue_at("physical_shape", IssueKind::SparseOnlyField);
        }
        if l.index_primitive_type != 0 {
            self.issue_at("index_primitive_type", IssueKind::SparseOnlyField);
        }
        if l.pointer_primitive_type != 0 {
            self.issue_at("pointer_primitive_type", IssueKind::SparseOnlyField);
        }
        // Fields 13, 14: ignored since 2025.
        if !l.dim_unique.is_empty() {
            self.issue_at("dim_unique", IssueKind::IgnoredSparseField);
        }
        if !l.dim_ordered.is_empty() {
            self.issue_at("dim_ordered", IssueKind::IgnoredSparseField);
        }
        // Field 15: dynamic_shape_metadata_prefix_bytes.
        if l.dynamic_shape_metadata_prefix_bytes < 0 {
            self.issue_at(
                "dynamic_shape_metadata_prefix_bytes",
                IssueKind::NegativeMetadataPrefix {
                    value: l.dynamic_shape_metadata_prefix_bytes,
                },
            );
        }
        // Field 16: tail_padding_alignment_in_elements.
        let tail_padding_alignment_in_elements =
            match u64::try_from(l.tail_padding_alignment_in_elements) {
                Ok(value) => value.max(1),
                Err(_) => {
                    self.issue_at(
                        "tail_padding_alignment_in_elements",
                        IssueKind::NegativeTailPadding {
                            value: l.tail_padding_alignment_in_elements,
                        },
                    );
                    1
                }
            };
        // Field 17: split_configs.
        // Physical dimension `p`'s size, read through the message's list when it is a
        // permutation.
        let physical_size = |p: usize| {
            let s = shape.filter(|_| permutation_ok)?;
            let d = given_minor_to_major.get(rank.checked_sub(p + 1)?)?;
            s.dimension(usize::try_from(*d).ok()?)
        };
        // Each physical dimension's first split config: a list searched for each config
        // made many configs quadratic, and one entry per dimension made a config cost
        // the whole rank.
        let mut split_first = BTreeMap::new();
        let mut split_configs = Vec::with_capacity(l.split_configs.len());
        for (i, split) in l.split_configs.iter().enumerate() {
            self.at(Segment::Field("split_configs"), |c| {
                c.at(Segment::Index(i), |c| {
                    c.split_config(split, i, rank, &physical_size, &mut split_first)
                })
            });
            split_configs.push(SplitConfig {
                dimension: split.dimension,
                split_indices: split.split_indices.clone(),
            });
        }
        // Legacy padding and tiles never coexisted in any XLA.
        if padded_dimensions.is_some() && !tiles.is_empty() {
            self.issue_at("padded_dimensions", IssueKind::PaddingWithTiles);
        }
        if self.errors != mark {
            return None;
        }
        Some(Box::new(Layout {
            minor_to_major,
            tiles,
            tail_padding_alignment_in_elements,
            element_size_in_bits,
            memory_space: l.memory_space,
            split_configs,
            dynamic_shape_metadata_prefix_bytes: l.dynamic_shape_metadata_prefix_bytes,
            padded_dimensions,
            padding_value,
            dense_format,
        }))
    }

    /// XLA (jaxlib 0.10.2) rejects an out-of-range or repeated physical dimension and
    /// split indices that are not strictly increasing, positive and inside the
    /// dimension (an unbounded dimension has no size to split); it accepts an empty list
    /// of indices (warned). `physical_size` gives a physical dimension's size when it
    /// is known; `first` maps a physical dimension to its first config.
    fn split_config(
        &mut self,
        split: &crate::proto::SplitConfigProto,
        index: usize,
        rank: usize,
        physical_size: &dyn Fn(usize) -> Option<DimSize>,
        first: &mut BTreeMap<usize, usize>,
    ) {
        let dim = split.dimension;
        let position = usize::try_from(dim).ok().filter(|&d| d < rank);
        match position.map(|p| first.entry(p)) {
            None => self.issue_at(
                "dimension",
                IssueKind::SplitDimensionOutOfRange { dim, rank },
            ),
            Some(Entry::Occupied(earlier)) => self.issue_at(
                "dimension",
                IssueKind::DuplicateSplitDimension {
                    dim,
                    first: *earlier.get(),
                },
            ),
            Some(Entry::Vacant(slot)) => drop(slot.insert(index)),
        }
        if split.split_indices.is_empty() {
            self.issue_at("split_indices", IssueKind::EmptySplit);
        }
        let size = position.and_then(physical_size);
        let mut previous = 0i64;
        for (k, &index) in split.split_indices.iter().enumerate() {
            if index <= previous {
                self.issue_at_index(
                    "split_indices",
                    k,
                    IssueKind::SplitIndexNotIncreasing { index, previous },
                );
            } else if size == Some(DimSize::Unbounded) {
                self.issue_at_index(
                    "split_indices",
                    k,
                    IssueKind::SplitOfUnboundedDimension { index },
                );
            } else if let Some(size) = size
                .and_then(DimSize::bound)
                .filter(|&size| index.unsigned_abs() >= size)
            {
                self.issue_at_index(
                    "split_indices",
                    k,
                    IssueKind::SplitIndexOutOfBounds { index, size },
                );
            }
            previous = previous.max(index);
        }
    }

    fn program_shape(&mut self, p: &ProgramShapeProto) -> Option<ProgramShape> {
        let mut parameters = Vec::with_capacity(p.parameters.len());
        for (i, parameter) in p.parameters.iter().enumerate() {
            let shape = self.at(Segment::Field("parameters"), |c| {
                c.at(Segment::Index(i), |c| c.shape(parameter))
            });
            parameters.extend(shape);
        }
        let result = match &p.result {
            Some(result) => self.at(Segment::Field("result"), |c| c.shape(result)),
            None => {
                self.issue_at("result", IssueKind::MissingResult);
                None
            }
        };
        if p.parameter_names.len() != p.parameters.len() {
            self.issue_at(
                "parameter_names",
                IssueKind::ParameterNamesCount {
                    names: p.parameter_names.len(),
                    parameters: p.parameters.len(),
                },
            );
        }
        Some(ProgramShape {
            parameters,
            parameter_names: p.parameter_names.clone(),
            result: result?,
        })
    }
}
