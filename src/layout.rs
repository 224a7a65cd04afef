//! [`Layout`]: how a validated array is laid out in memory, with its [`Tile`]s
//! ([`TileDim`]), [`SplitConfig`]s and the retired padding fields.
//!
//! Values of these types come only from the validation gate ([`crate::validate`]), so
//! their invariants hold; each accessor says which.

use std::num::NonZeroU64;

/// XLA's default memory space, `S(0)`: device memory (HBM on TPU and GPU).
pub const DEFAULT_MEMORY_SPACE: i64 = 0;
/// XLA's generic fast memory space, `S(1)`: VMEM on TPU.
pub const GENERIC_FAST_MEMORY_SPACE: i64 = 1;
/// XLA's host memory space, `S(5)`.
pub const HOST_MEMORY_SPACE: i64 = 5;
/// XLA's unpinned host memory space, `S(6)`.
pub const UNPINNED_HOST_MEMORY_SPACE: i64 = 6;

/// A short description of an XLA memory space id, as in HEAD's `Layout` constants and
/// `docs/shapes.md`: `S(0)` device memory (HBM), `S(1)` generic fast memory (VMEM on
/// TPU), `S(5)` host memory, `S(6)` unpinned host memory. Other ids are backend
/// specific and give `None`.
pub fn memory_space_name(memory_space: i64) -> Option<&'static str> {
    match memory_space {
        DEFAULT_MEMORY_SPACE => Some("device memory (HBM)"),
        GENERIC_FAST_MEMORY_SPACE => Some("generic fast memory (VMEM on TPU)"),
        HOST_MEMORY_SPACE => Some("host memory"),
        UNPINNED_HOST_MEMORY_SPACE => Some("unpinned host memory"),
        _ => None,
    }
}

// Inline storage for what a typical layout holds (ranks up to 4, two levels of tiles of
// up to two dimensions), so that building a validated layout need not allocate.
/// Dimension numbers of a layout, inline up to rank 4.
pub(crate) type DimList = smallvec::SmallVec<[usize; 4]>;
/// The dimensions of a tile, inline up to two.
pub(crate) type TileDims = smallvec::SmallVec<[TileDim; 2]>;
/// The tiles of a layout, inline up to two levels.
pub(crate) type Tiles = smallvec::SmallVec<[Tile; 2]>;

/// One dimension of a [`Tile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileDim {
    /// A tile size. In a validated [`Tile`] it is at most `i64::MAX`.
    Size(NonZeroU64),
    /// The combine marker, `*` in HLO text and INT64_MIN in the proto: this dimension is
    /// merged into the next more minor one instead of being tiled.
    Combine,
}

impl TileDim {
    /// The proto encoding: the size, or INT64_MIN for [`TileDim::Combine`].
    pub fn to_i64(self) -> i64 {
        match self {
            TileDim::Size(size) => i64::try_from(size.get()).unwrap_or(i64::MAX),
            TileDim::Combine => i64::MIN,
        }
    }

    /// The size, or `None` for [`TileDim::Combine`].
    pub fn size(self) -> Option<u64> {
        match self {
            TileDim::Size(size) => Some(size.get()),
            TileDim::Combine => None,
        }
    }
}

/// How many outer and inner dimensions a tile makes, its entries given by whether each
/// is `*` (most major first): a size makes one of each; a `*` merges into the next
/// entry, unless it is the last, when it stays as an outer dimension alone.
pub(crate) fn tile_makes(combines: impl ExactSizeIterator<Item = bool>) -> (usize, usize) {
    let last = combines.len().saturating_sub(1);
    let (mut outer, mut inner) = (0, 0);
    for (i, combine) in combines.enumerate() {
        outer += usize::from(!combine || i == last);
        inner += usize::from(!combine);
    }
    (outer, inner)
}

/// One level of tiling, `(8,128)` in `T(8,128)(2,1)`.
///
/// Invariant: at least one dimension; every size is in `1..=i64::MAX`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    pub(crate) dimensions: TileDims,
}

impl Tile {
    /// The tile's dimensions, from the most major to the most minor. They apply to the
    /// most minor suffix of the (already tiled) physical dimensions.
    pub fn dimensions(&self) -> &[TileDim] {
        &self.dimensions
    }
}

/// How the data of one physical dimension is split between memories (`SC(d:i,...)`).
///
/// In a validated layout the dimension is a physical dimension of the shape (of the
/// layout, for a lone layout), no two configs split the same dimension, and the
/// indices are strictly increasing, positive and (in a shape) inside the dimension,
/// as the XLA of jaxlib 0.10.2 checks. The list of indices may be empty (warned).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SplitConfig {
    pub(crate) dimension: i64,
    pub(crate) split_indices: Vec<i64>,
}

impl SplitConfig {
    /// The **physical** dimension split (0 is the most major), in `0..rank`.
    pub fn dimension(&self) -> i64 {
        self.dimension
    }

    /// The indices at which the dimension is split, strictly increasing and positive.
    pub fn split_indices(&self) -> &[i64] {
        &self.split_indices
    }
}

/// The retired (2017-2018) `PaddingValue`: what fills legacy `padded_dimensions` padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PaddingValue {
    /// `ZERO_PAD`.
    Zero,
    /// `ONE_PAD`.
    One,
    /// `LOWEST_PAD`: the lowest value of the type.
    Lowest,
    /// `HIGHEST_PAD`: the highest value of the type.
    Highest,
    /// `UNKNOWN_PAD`: the padding holds unknown values.
    Unknown,
}

impl PaddingValue {
    /// The proto enum number.
    pub fn as_i32(self) -> i32 {
        match self {
            PaddingValue::Zero => 1,
            PaddingValue::One => 2,
            PaddingValue::Lowest => 3,
            PaddingValue::Highest => 4,
            PaddingValue::Unknown => 5,
        }
    }

    /// The value for a proto enum number; `None` for `INVALID_PAD` (0, unset) and
    /// unknown numbers.
    pub fn from_i32(value: i32) -> Option<Self> {
        match value {
            1 => Some(PaddingValue::Zero),
            2 => Some(PaddingValue::One),
            3 => Some(PaddingValue::Lowest),
            4 => Some(PaddingValue::Highest),
            5 => Some(PaddingValue::Unknown),
            _ => None,
        }
    }
}

/// A validated layout.
///
/// Invariants (established by the gate):
/// 1. `minor_to_major` is a permutation of `0..n` (n = its length; for a layout inside
///    an [`ArrayShape`](crate::ArrayShape), n is the shape's number of dimensions).
/// 2. Every tile is non-empty with sizes in `1..=i64::MAX` or [`TileDim::Combine`].
/// 3. `tail_padding_alignment_in_elements >= 1` (absent or 0 in the proto reads as 1).
/// 4. `element_size_in_bits` is in `0..=i64::MAX` (0 means the type's byte width × 8).
/// 5. `padded_dimensions`, when present, has one entry per dimension, each in
///    `0..=i64::MAX` (and, in a shape, at least that dimension's size); it never appears
///    together with tiles.
/// 6. No sparse-only field: the index and pointer types and `physical_shape` are
///    rejected, and `dim_level_types`/`dim_unique`/`dim_ordered` are dropped (warned).
/// 7. Split configs name distinct physical dimensions in `0..n`, with strictly
///    increasing positive indices (inside the dimension, in a shape).
/// 8. Tiles hold [`TileDim::Combine`] only when validated with
///    [`Options::hlo_text`](crate::validate::Options::hlo_text) (XLA's text parser
///    accepts `*`; its proto reader does not).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub(crate) minor_to_major: DimList,
    pub(crate) tiles: Tiles,
    pub(crate) tail_padding_alignment_in_elements: u64,
    pub(crate) element_size_in_bits: u64,
    pub(crate) memory_space: i64,
    pub(crate) split_configs: Vec<SplitConfig>,
    pub(crate) dynamic_shape_metadata_prefix_bytes: i64,
    pub(crate) padded_dimensions: Option<Vec<u64>>,
    pub(crate) padding_value: Option<PaddingValue>,
    pub(crate) dense_format: bool,
}

impl Layout {
    /// XLA's default layout for `rank` dimensions: `minor_to_major = [rank-1, ..., 1, 0]`,
    /// "dim 0 is major" (dimension 0 varies slowest), no attributes.
    pub fn default_for_rank(rank: usize) -> Self {
        Self::with_minor_to_major((0..rank).rev().collect())
    }

    pub(crate) fn with_minor_to_major(minor_to_major: DimList) -> Self {
        Self {
            minor_to_major,
            tiles: Tiles::new(),
            tail_padding_alignment_in_elements: 1,
            element_size_in_bits: 0,
            memory_space: 0,
            split_configs: Vec::new(),
            dynamic_shape_metadata_prefix_bytes: 0,
            padded_dimensions: None,
            padding_value: None,
            dense_format: false,
        }
    }

    /// Number of dimensions the layout is for (length of `minor_to_major`).
    pub fn rank(&self) -> usize {
        self.minor_to_major.len()
    }

    /// Logical dimension numbers from the most minor (fastest varying) to the most
    /// major. A permutation of `0..rank`.
    pub fn minor_to_major(&self) -> &[usize] {
        &self.minor_to_major
    }

    /// Logical dimension numbers from the most major to the most minor: the physical
    /// order, position 0 being physical dimension 0.
    pub fn major_to_minor(&self) -> Vec<usize> {
        self.minor_to_major.iter().rev().copied().collect()
    }

    /// The logical dimension at physical position `physical` (0 = most major).
    pub fn physical_to_logical(&self, physical: usize) -> Option<usize> {
        let from_minor = self.rank().checked_sub(physical)?.checked_sub(1)?;
        self.minor_to_major.get(from_minor).copied()
    }

    /// The physical position (0 = most major) of logical dimension `logical`.
    pub fn logical_to_physical(&self, logical: usize) -> Option<usize> {
        let from_minor = self.minor_to_major.iter().position(|&d| d == logical)?;
        Some(self.rank() - 1 - from_minor)
    }

    /// "Dim 0 is minor": `minor_to_major` is `[0, 1, ..., n-1]`, so dimension 0 varies
    /// fastest (column-major for 2 dimensions). True for rank 0 and 1.
    pub fn is_dim0_minor(&self) -> bool {
        self.minor_to_major.iter().enumerate().all(|(i, &d)| i == d)
    }

    /// "Dim 0 is major": `minor_to_major` is `[n-1, ..., 1, 0]`, XLA's default, so
    /// dimension 0 varies slowest (row-major for 2 dimensions). True for rank 0 and 1.
    pub fn is_dim0_major(&self) -> bool {
        let n = self.rank();
        self.minor_to_major
            .iter()
            .enumerate()
            .all(|(i, &d)| d + i + 1 == n)
    }

    /// Tiles, applied in order (`T(8,128)(2,1)`: first (8,128), then (2,1)); empty
    /// when the layout is untiled.
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }

    /// After tiling, the element count is padded up to a multiple of this (`L(n)`);
    /// always at least 1.
    pub fn tail_padding_alignment_in_elements(&self) -> u64 {
        self.tail_padding_alignment_in_elements
    }

    /// Bits per element in memory (`E(n)`); 0 means the type's byte width × 8. At most
    /// `i64::MAX`.
    pub fn element_size_in_bits(&self) -> u64 {
        self.element_size_in_bits
    }

    /// The memory space id (`S(n)`), backend specific; 0 is the default. See
    /// [`memory_space_name`].
    pub fn memory_space(&self) -> i64 {
        self.memory_space
    }

    /// The memory space's description when XLA names it ([`memory_space_name`]):
    /// `S(0)` device memory (HBM), `S(1)` generic fast memory (VMEM on TPU), `S(5)`
    /// host memory, `S(6)` unpinned host memory.
    pub fn memory_space_name(&self) -> Option<&'static str> {
        memory_space_name(self.memory_space)
    }

    /// How the data is split between memories (`SC(...)`): a physical dimension that
    /// exists, at most once per dimension, split at strictly increasing indices inside
    /// it (as XLA checks).
    pub fn split_configs(&self) -> &[SplitConfig] {
        &self.split_configs
    }

    /// Bytes of dynamic-size metadata in front of the data (`M(n)`), as written. XLA
    /// does not check it; a negative value (warned) means no prefix.
    pub fn dynamic_shape_metadata_prefix_bytes(&self) -> i64 {
        self.dynamic_shape_metadata_prefix_bytes
    }

    /// Retired (2017-2018) legacy padding: the size each logical dimension is padded to,
    /// one per dimension, each at least the dimension's size. `None` when absent.
    pub fn padded_dimensions(&self) -> Option<&[u64]> {
        self.padded_dimensions.as_deref()
    }

    /// Retired (2017-2018): the value in legacy padding, when set.
    pub fn padding_value(&self) -> Option<PaddingValue> {
        self.padding_value
    }

    /// Whether the retired `format` field (2017-2022) was set to `DENSE`. XLA of 2018 to
    /// 2022 required it on array layouts; today's XLA ignores it. It is kept so that the
    /// proto round-trips.
    pub fn legacy_dense_format(&self) -> bool {
        self.dense_format
    }
}
