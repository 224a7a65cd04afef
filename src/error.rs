//! Validation problems: what is wrong ([`IssueKind`]), where ([`Path`]), and how bad
//! ([`Severity`]), gathered into a [`Report`].
//!
//! One validation run reports every problem it finds, not just the first. An
//! [`Issue`] displays as `PATH: message`, e.g.
//! `tuple_shapes[2].layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions`.
//! Messages are lowercase and end without a period.

use std::fmt;

use crate::path::Path;

/// Past this many bytes, a key, value or word of the input quoted in a message is cut
/// ([`Shown`]).
pub const SHOWN_LONG: usize = 200;
/// The characters kept of a cut one.
pub const SHOWN_KEPT: usize = 64;

/// A key, value or word of the input in a message: whole when short, else its first
/// [`SHOWN_KEPT`] characters and its length (a 40 MB value made a 40 MB message).
///
/// ```
/// # use xla_shape::error::Shown;
/// assert_eq!(Shown::single("f33").to_string(), "'f33'");
/// let long = "x".repeat(1000);
/// assert_eq!(
///     Shown::plain(&long).to_string(),
///     format!("{}... (1000 bytes in all)", "x".repeat(64))
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Shown<'a> {
    text: &'a str,
    quote: Quote,
}

#[derive(Clone, Copy, Debug)]
enum Quote {
    None,
    Single,
    Escaped,
}

impl<'a> Shown<'a> {
    /// In double quotes, escaped (`{:?}`), as JSON keys and strings are shown.
    pub fn quoted(text: &'a str) -> Self {
        Shown {
            text,
            quote: Quote::Escaped,
        }
    }

    /// In single quotes, as module text's tokens are shown.
    pub fn single(text: &'a str) -> Self {
        Shown {
            text,
            quote: Quote::Single,
        }
    }

    /// As it is (a number, a word, or a string already quoted).
    pub fn plain(text: &'a str) -> Self {
        Shown {
            text,
            quote: Quote::None,
        }
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (text, cut) = if self.text.len() > SHOWN_LONG {
            let end = self
                .text
                .char_indices()
                .nth(SHOWN_KEPT)
                .map_or(self.text.len(), |(at, _)| at);
            (&self.text[..end], true)
        } else {
            (self.text, false)
        };
        match self.quote {
            Quote::None => f.write_str(text)?,
            Quote::Single => write!(f, "'{text}'")?,
            Quote::Escaped => write!(f, "{text:?}")?,
        }
        if cut {
            write!(f, "... ({} bytes in all)", self.text.len())?;
        }
        Ok(())
    }
}

/// How bad an [`Issue`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Something XLA accepts but silently ignores or reinterprets; the value is still valid.
    Warning,
    /// Something XLA (or, for the retired fields, the XLA that wrote them) rejects; the
    /// message is invalid.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `a tuple`, `an opaque`, `an array`.
fn a(kind: &str) -> String {
    match kind.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

fn entries(n: &usize) -> String {
    if *n == 1 {
        "1 entry".to_string()
    } else {
        format!("{n} entries")
    }
}

fn dimensions(n: &usize) -> String {
    if *n == 1 {
        "1 dimension".to_string()
    } else {
        format!("{n} dimensions")
    }
}

/// What is wrong. Each kind is either always an error or always a warning
/// ([`IssueKind::severity`]); the message ([`Display`](fmt::Display)) uses every field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IssueKind {
    // ----- errors: shape -----
    /// `element_type` is `PRIMITIVE_TYPE_INVALID` (0, also what an absent field reads as).
    #[error("element type is PRIMITIVE_TYPE_INVALID")]
    InvalidElementType,
    /// `element_type` is a number this schema does not know.
    #[error("unknown element type {value}")]
    UnknownElementType {
        /// The raw enum number.
        value: i32,
    },
    /// A dimension size below zero that is not the unbounded marker.
    #[error("negative dimension size {size}")]
    NegativeDimension {
        /// The raw size.
        size: i64,
    },
    /// `is_dynamic_dimension` is neither empty nor one flag per dimension.
    #[error("{} for a shape with {}; it must be empty or have one flag per dimension", entries(.flags), dimensions(.rank))]
    DynamicFlagsCount {
        /// Number of flags.
        flags: usize,
        /// Number of dimensions.
        rank: usize,
    },
    /// The number of elements does not fit in int64.
    #[error("the number of elements overflows int64")]
    ElementCountOverflow,
    /// The size in bytes (or bits, with `element_size_in_bits`) does not fit in int64.
    #[error("the size of the array in {unit} overflows int64")]
    ByteSizeOverflow {
        /// `bytes` or `bits`.
        unit: &'static str,
    },
    /// A layout on a tuple, token or opaque shape.
    #[error("{} shape cannot have a layout", a(.kind))]
    LayoutOnNonArray {
        /// `tuple`, `token`, `opaque` or `buffer`.
        kind: &'static str,
    },
    /// A buffer shape whose `tuple_shapes` does not hold exactly one shape.
    #[error("a buffer shape must hold exactly one array shape, not {count}")]
    BufferShapeCount {
        /// Number of `tuple_shapes`.
        count: usize,
    },
    /// A buffer shape wrapping something other than an array.
    #[error("a buffer must hold an array shape, not {} shape", a(.kind))]
    BufferOfNonArray {
        /// `tuple`, `token`, `opaque` or `buffer`.
        kind: &'static str,
    },
    /// A valid shape that is not an array where an array is required.
    #[error("expected an array shape, not {} shape", a(.kind))]
    NotAnArray {
        /// `tuple`, `token`, `opaque` or `buffer`.
        kind: &'static str,
    },
    /// Shapes nested deeper than the gate follows.
    #[error("shapes are nested more than {limit} levels deep")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    // ----- errors: layout -----
    /// `minor_to_major` does not have one entry per dimension.
    #[error("{} for a shape with {}", entries(.len), dimensions(.rank))]
    MinorToMajorLength {
        /// Entries in `minor_to_major`.
        len: usize,
        /// Number of dimensions.
        rank: usize,
    },
    /// A `minor_to_major` entry that is not a dimension number of the shape.
    #[error("dimension {dim} is out of range for a shape with {}", dimensions(.rank))]
    DimensionOutOfRange {
        /// The entry.
        dim: i64,
        /// Number of dimensions.
        rank: usize,
    },
    /// A dimension listed twice in `minor_to_major`.
    #[error("dimension {dim} is listed twice (first at minor_to_major[{first}])")]
    DuplicateDimension {
        /// The repeated dimension.
        dim: i64,
        /// Where it first appears.
        first: usize,
    },
    /// `tail_padding_alignment_in_elements` below zero.
    #[error("tail padding alignment {value} is negative")]
    NegativeTailPadding {
        /// The raw value.
        value: i64,
    },
    /// A sparse-array field (index/pointer type, physical shape) on a layout; XLA has no
    /// sparse arrays any more, so every array is dense and these fields are rejected.
    #[error("only sparse arrays may set this field, and every array is dense")]
    SparseOnlyField,
    /// A tile with no dimensions.
    #[error("a tile must have at least one dimension")]
    EmptyTile,
    /// A tile dimension of 0.
    #[error("tile dimension 0 is not allowed")]
    ZeroTileDimension,
    /// A negative tile dimension other than INT64_MIN (the combine marker `*`).
    #[error(
        "negative tile dimension {value}; a tile dimension is positive, or the combine marker `*`"
    )]
    NegativeTileDimension {
        /// The raw value.
        value: i64,
    },
    /// The combine marker INT64_MIN (`*`) in a tile read from a proto: XLA's
    /// `Layout::FromProto` rejects every negative tile dimension (since 2025-04), though
    /// its HLO text parser accepts `*`.
    #[error("the combine marker -9223372036854775808 (`*`) is rejected in a proto by XLA since 2025; only HLO text may use it")]
    CombineTileInProto,
    /// `element_size_in_bits` below zero.
    #[error("element size {value} bits is negative")]
    NegativeElementSize {
        /// The raw value.
        value: i64,
    },
    /// The tiled (or legacy padded) allocation does not fit in int64.
    #[error("the {what} size of the array overflows int64")]
    AllocatedSizeOverflow {
        /// `tiled` or `padded`.
        what: &'static str,
    },
    /// A split config whose physical dimension is not one of the shape's.
    #[error("split dimension {dim} is out of range for a shape with {}", dimensions(.rank))]
    SplitDimensionOutOfRange {
        /// The split's `dimension`.
        dim: i64,
        /// Number of dimensions.
        rank: usize,
    },
    /// Two split configs for the same physical dimension.
    #[error("physical dimension {dim} is split twice (first at split_configs[{first}])")]
    DuplicateSplitDimension {
        /// The split's `dimension`.
        dim: i64,
        /// Where it first appears.
        first: usize,
    },
    /// A split index not greater than the one before it (or than 0, for the first).
    #[error("split index {index} is not greater than {previous}; split indices must be strictly increasing and positive")]
    SplitIndexNotIncreasing {
        /// The split index.
        index: i64,
        /// The previous split index, or 0.
        previous: i64,
    },
    /// A split index at or beyond the end of the dimension it splits.
    #[error("split index {index} is out of bounds for a dimension of size {size}")]
    SplitIndexOutOfBounds {
        /// The split index.
        index: i64,
        /// The size (bound) of the split dimension.
        size: u64,
    },
    /// A split index on an unbounded dimension, which has no size to split at (XLA
    /// compares the index with the unbounded marker and rejects it).
    #[error("split index {index} splits an unbounded dimension, which has no size to split")]
    SplitOfUnboundedDimension {
        /// The split index.
        index: i64,
    },
    // ----- errors: retired (legacy) layout fields -----
    /// `padded_dimensions` does not have one entry per dimension.
    #[error("{} for a shape with {}; legacy padding needs one padded size per dimension", entries(.len), dimensions(.rank))]
    PaddedDimensionsLength {
        /// Entries in `padded_dimensions`.
        len: usize,
        /// Number of dimensions.
        rank: usize,
    },
    /// A padded size smaller than the dimension it pads.
    #[error("padded size {padded} is smaller than dimension {dim}'s size {size}")]
    PaddedBelowSize {
        /// The padded size.
        padded: i64,
        /// The logical dimension.
        dim: usize,
        /// The dimension's size (or bound).
        size: u64,
    },
    /// A negative padded size (checked on a lone layout).
    #[error("negative padded size {padded}")]
    NegativePaddedSize {
        /// The padded size.
        padded: i64,
    },
    /// Padding an unbounded dynamic dimension.
    #[error("dimension {dim} is unbounded and cannot be padded")]
    PaddedUnbounded {
        /// The logical dimension.
        dim: usize,
    },
    /// Legacy padding together with tiles: no XLA ever had both, so the meaning is undefined.
    #[error("padded_dimensions (retired in 2018) cannot be combined with tiles")]
    PaddingWithTiles,
    /// `padding_value` not a value of the retired `PaddingValue` enum.
    #[error("unknown padding value {value}")]
    UnknownPaddingValue {
        /// The raw enum number.
        value: i32,
    },
    /// `format` not a value of the retired `Format` enum.
    #[error("unknown layout format {value}")]
    UnknownFormat {
        /// The raw enum number.
        value: i32,
    },
    /// `format: SPARSE`: sparse layouts were removed from XLA in 2020.
    #[error("format SPARSE is retired: XLA removed sparse layouts in 2020")]
    SparseFormat,
    /// `max_sparse_elements` set: retired with sparse layouts in 2020.
    #[error("max_sparse_elements {value} is retired: XLA removed sparse layouts in 2020")]
    MaxSparseElements {
        /// The raw value.
        value: i64,
    },
    // ----- errors: program shape -----
    /// `parameter_names` does not have one name per parameter.
    #[error("{} for {} parameters; there must be one name per parameter", entries(.names), .parameters)]
    ParameterNamesCount {
        /// Number of names.
        names: usize,
        /// Number of parameters.
        parameters: usize,
    },
    /// A program shape without a result.
    #[error("a program shape must have a result")]
    MissingResult,
    // ----- errors: wire -----
    /// A known field that arrived with a wire type its declared type cannot have.
    #[error(
        "field {number} arrived with wire type {wire_type}, which its declared type cannot have"
    )]
    WrongWireType {
        /// The field number.
        number: u32,
        /// The wire type seen (`varint`, `fixed64`, `length-delimited`, ...).
        wire_type: &'static str,
    },
    /// More fields with a wrong wire type than a report lists one by one
    /// ([`crate::validate::MAX_LISTED_UNKNOWN`]): the rest, counted.
    #[error("{more} more fields arrived with a wire type their declared type cannot have (not listed one by one)")]
    WrongWireTypesNotListed {
        /// How many are not listed.
        more: usize,
    },

    // ----- warnings -----
    /// `dimensions` or `is_dynamic_dimension` on a non-array shape: XLA ignores them.
    #[error("ignored: {} shape has no dimensions", a(.kind))]
    IgnoredDimensions {
        /// `tuple`, `token`, `opaque` or `buffer`.
        kind: &'static str,
    },
    /// A layout on a buffer shape and on its array: XLA uses the buffer's.
    #[error("ignored: the buffer shape's own layout replaces this one")]
    BufferLayoutReplaced,
    /// `tuple_shapes` on an array, token or opaque shape: XLA ignores them.
    #[error("ignored: {} shape holds no other shapes", a(.kind))]
    IgnoredTupleShapes {
        /// `array`, `token` or `opaque`.
        kind: &'static str,
    },
    /// The unbounded marker (INT64_MIN) on a dimension not flagged dynamic; read as
    /// unbounded, as XLA's validation does.
    #[error("the unbounded marker -9223372036854775808 on a dimension not flagged dynamic (XLA keeps it as a static size); read as unbounded")]
    UnboundedNotDynamic,
    /// The sparse per-dimension fields that today's XLA ignores.
    #[error("ignored: XLA dropped sparse dimension level types in 2025")]
    IgnoredSparseField,
    /// `memory_space` outside the int8 range XLA stores it in.
    #[error("memory space {value} does not fit in the 8 bits XLA keeps it in")]
    MemorySpaceRange {
        /// The raw value.
        value: i64,
    },
    /// A negative `dynamic_shape_metadata_prefix_bytes`.
    #[error("negative metadata prefix size {value}; XLA treats it as no prefix")]
    NegativeMetadataPrefix {
        /// The raw value.
        value: i64,
    },
    /// `element_size_in_bits` below the type's own bit width: values would be truncated.
    #[error("element size {bits} bits is smaller than the {type_bits} bits of {element_type}")]
    ElementSizeBelowWidth {
        /// `element_size_in_bits`.
        bits: u64,
        /// The type's bit width.
        type_bits: u32,
        /// The type's name.
        element_type: &'static str,
    },
    /// A split config without split indices (XLA accepts it and prints `SC(d:)`).
    #[error("a split config without split indices splits nothing")]
    EmptySplit,
    /// `padding_value` without `padded_dimensions`.
    #[error("ignored: padding_value without padded_dimensions")]
    PaddingValueWithoutPadding,
    /// A field this schema does not know (from a newer XLA, or another message).
    #[error("unknown field {number} ({wire_type}); kept as is, but XLA ignores it")]
    UnknownField {
        /// The field number.
        number: u32,
        /// The wire type (`varint`, `fixed64`, `length-delimited`, ...).
        wire_type: &'static str,
    },
    /// More unknown fields than a report lists one by one
    /// ([`crate::validate::MAX_LISTED_UNKNOWN`]): the rest, counted.
    #[error(
        "{more} more unknown fields, kept as they are but not listed one by one; XLA ignores them"
    )]
    UnknownFieldsNotListed {
        /// How many are not listed.
        more: usize,
    },
}

impl IssueKind {
    /// Whether this kind is an error or a warning.
    pub fn severity(&self) -> Severity {
        use IssueKind::*;
        match self {
            IgnoredDimensions { .. }
            | IgnoredTupleShapes { .. }
            | BufferLayoutReplaced
            | UnboundedNotDynamic
            | IgnoredSparseField
            | MemorySpaceRange { .. }
            | NegativeMetadataPrefix { .. }
            | ElementSizeBelowWidth { .. }
            | EmptySplit
            | PaddingValueWithoutPadding
            | UnknownField { .. }
            | UnknownFieldsNotListed { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// Whether this is one of the crate's own size checks, which XLA does not make:
    /// the size in bits with `element_size_in_bits` (`E(n)`), and the tiled or padded
    /// allocation, must fit in int64 (the layout engine's sizes depend on them;
    /// docs/report.md). XLA's `ValidateShape` and its HLO text parser accept a shape
    /// that only these refuse.
    pub fn is_own_check(&self) -> bool {
        matches!(
            self,
            IssueKind::AllocatedSizeOverflow { .. } | IssueKind::ByteSizeOverflow { unit: "bits" }
        )
    }

    /// A stable snake_case name for the kind, for machine-readable reports
    /// (`dimension_out_of_range`, `unknown_field`, ...).
    pub fn code(&self) -> &'static str {
        use IssueKind::*;
        match self {
            InvalidElementType => "invalid_element_type",
            UnknownElementType { .. } => "unknown_element_type",
            NegativeDimension { .. } => "negative_dimension",
            DynamicFlagsCount { .. } => "dynamic_flags_count",
            ElementCountOverflow => "element_count_overflow",
            ByteSizeOverflow { .. } => "byte_size_overflow",
            LayoutOnNonArray { .. } => "layout_on_non_array",
            BufferShapeCount { .. } => "buffer_shape_count",
            BufferOfNonArray { .. } => "buffer_of_non_array",
            NotAnArray { .. } => "not_an_array",
            TooDeep { .. } => "too_deep",
            MinorToMajorLength { .. } => "minor_to_major_length",
            DimensionOutOfRange { .. } => "dimension_out_of_range",
            DuplicateDimension { .. } => "duplicate_dimension",
            NegativeTailPadding { .. } => "negative_tail_padding",
            SparseOnlyField => "sparse_only_field",
            EmptyTile => "empty_tile",
            ZeroTileDimension => "zero_tile_dimension",
            NegativeTileDimension { .. } => "negative_tile_dimension",
            CombineTileInProto => "combine_tile_in_proto",
            NegativeElementSize { .. } => "negative_element_size",
            AllocatedSizeOverflow { .. } => "allocated_size_overflow",
            PaddedDimensionsLength { .. } => "padded_dimensions_length",
            PaddedBelowSize { .. } => "padded_below_size",
            NegativePaddedSize { .. } => "negative_padded_size",
            PaddedUnbounded { .. } => "padded_unbounded",
            PaddingWithTiles => "padding_with_tiles",
            UnknownPaddingValue { .. } => "unknown_padding_value",
            UnknownFormat { .. } => "unknown_format",
            SparseFormat => "sparse_format",
            MaxSparseElements { .. } => "max_sparse_elements",
            ParameterNamesCount { .. } => "parameter_names_count",
            MissingResult => "missing_result",
            WrongWireType { .. } => "wrong_wire_type",
            WrongWireTypesNotListed { .. } => "wrong_wire_types_not_listed",
            IgnoredDimensions { .. } => "ignored_dimensions",
            IgnoredTupleShapes { .. } => "ignored_tuple_shapes",
            BufferLayoutReplaced => "buffer_layout_replaced",
            UnboundedNotDynamic => "unbounded_not_dynamic",
            IgnoredSparseField => "ignored_sparse_field",
            MemorySpaceRange { .. } => "memory_space_range",
            NegativeMetadataPrefix { .. } => "negative_metadata_prefix",
            ElementSizeBelowWidth { .. } => "element_size_below_width",
            SplitDimensionOutOfRange { .. } => "split_dimension_out_of_range",
            DuplicateSplitDimension { .. } => "duplicate_split_dimension",
            EmptySplit => "empty_split",
            SplitIndexNotIncreasing { .. } => "split_index_not_increasing",
            SplitIndexOutOfBounds { .. } => "split_index_out_of_bounds",
            SplitOfUnboundedDimension { .. } => "split_of_unbounded_dimension",
            PaddingValueWithoutPadding => "padding_value_without_padding",
            UnknownField { .. } => "unknown_field",
            UnknownFieldsNotListed { .. } => "unknown_fields_not_listed",
        }
    }
}

/// One problem: where it is and what it is.
#[derive(Clone, PartialEq, Eq)]
pub struct Issue {
    path: Path,
    kind: IssueKind,
}

impl Issue {
    /// A problem of `kind` at `path`.
    #[cold]
    pub fn new(path: Path, kind: IssueKind) -> Self {
        Self { path, kind }
    }

    /// Where the problem is, in proto field names.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the problem is.
    pub fn kind(&self) -> &IssueKind {
        &self.kind
    }

    /// Error or warning.
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// This problem with `prefix` put in front of its path.
    #[must_use]
    pub fn prefixed(self, prefix: &Path) -> Self {
        Self {
            path: self.path.prefixed(prefix),
            kind: self.kind,
        }
    }
}

impl fmt::Display for Issue {
    /// `PATH: message`, or just the message at the root.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_root() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

impl fmt::Debug for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self}", self.severity())
    }
}

/// Every problem one validation run found, errors and warnings, in the order found
/// (outer fields before inner ones, fields in field-number order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    issues: Vec<Issue>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one problem.
    pub fn push(&mut self, issue: Issue) {
        self.issues.push(issue);
    }

    /// Every problem, errors and warnings interleaved in the order found.
    pub fn issues(&self) -> &[Issue] {
        &self.issues
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Issue> {
        self.issues
            .iter()
            .filter(|i| i.severity() == Severity::Error)
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Issue> {
        self.issues
            .iter()
            .filter(|i| i.severity() == Severity::Warning)
    }

    /// Whether there is no error (warnings allowed).
    pub fn is_valid(&self) -> bool {
        self.errors().next().is_none()
    }

    /// Whether there is no problem at all.
    pub fn is_clean(&self) -> bool {
        self.issues.is_empty()
    }

    /// Whether there is at least one warning.
    pub fn has_warnings(&self) -> bool {
        self.warnings().next().is_some()
    }

    /// Appends every problem of `other`.
    pub fn extend(&mut self, other: Report) {
        self.issues.extend(other.issues);
    }
}

impl IntoIterator for Report {
    type Item = Issue;
    type IntoIter = std::vec::IntoIter<Issue>;
    fn into_iter(self) -> Self::IntoIter {
        self.issues.into_iter()
    }
}

/// Why a message is not a valid shape, layout or program shape: a [`Report`] with at
/// least one error (and any warnings found on the way).
///
/// Displays every error, one per line (`PATH: message`); warnings are in
/// [`ValidationError::report`].
#[derive(Clone, PartialEq, Eq)]
pub struct ValidationError {
    report: Report,
}

impl ValidationError {
    /// Wraps a report that holds at least one error (the gate's own use).
    pub(crate) fn new(report: Report) -> Self {
        Self { report }
    }

    /// Wraps a report; `None` if the report holds no error.
    pub fn from_report(report: Report) -> Option<Self> {
        if report.is_valid() {
            None
        } else {
            Some(Self { report })
        }
    }

    /// The whole report: every error and warning.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The report, by value.
    pub fn into_report(self) -> Report {
        self.report
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Issue> {
        self.report.errors()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for issue in self.report.errors() {
            if !first {
                f.write_str("\n")?;
            }
            write!(f, "{issue}")?;
            first = false;
        }
        Ok(())
    }
}

impl fmt::Debug for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for ValidationError {}
