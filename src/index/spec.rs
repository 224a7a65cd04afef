//! The engine's input: the facts of a validated array shape that indexing needs, in
//! plain numbers. Built only from a validated shape (or, inside the crate's tests,
//! by hand); the compiler still re-checks every fact it relies on, so a
//! inconsistent `Spec` gives a [`PlanError`](super::PlanError), never a panic.

/// One entry of a tile, most major first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TileEntry {
    /// A tile dimension of this many elements (at least 1).
    Size(u64),
    /// `*`: merge this dimension into the next more minor one before tiling.
    Combine,
}

/// The indexing facts of one array shape and its layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Logical dimension sizes (the bound for a bounded dynamic dimension); `None` is
    /// an unbounded dimension (`?`).
    pub dims: Vec<Option<u64>>,
    /// Dimension numbers from most minor to most major; a permutation of `0..rank`.
    pub minor_to_major: Vec<usize>,
    /// Legacy `padded_dimensions`, one per logical dimension, each at least the size.
    pub padded: Option<Vec<u64>>,
    /// Tiles, the first applied first; each lists sizes most major first.
    pub tiles: Vec<Vec<TileEntry>>,
    /// `element_size_in_bits` as written in the layout; 0 means the type's width.
    pub element_size_in_bits: u64,
    /// XLA's `ByteSizeOfPrimitiveType` of the element type (1 for every sub-byte type).
    pub byte_width: u64,
    /// `tail_padding_alignment_in_elements`, at least 1.
    pub tail_padding: u64,
    /// Split configs: (physical dimension, split indices).
    pub split_configs: Vec<(usize, Vec<u64>)>,
}

impl Spec {
    /// Bits one element takes in memory: `E(n)` if set, else 8 × the byte width.
    pub fn element_bits(&self) -> u64 {
        if self.element_size_in_bits != 0 {
            self.element_size_in_bits
        } else {
            self.byte_width.saturating_mul(8)
        }
    }
}
