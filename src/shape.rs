//! [`Shape`], [`ArrayShape`], [`DimSize`] and [`ProgramShape`]: validated shapes.
//!
//! Values come only from the validation gate ([`crate::validate`]): `TryFrom` a raw
//! proto, or [`crate::validate::validate_shape`] for the full report. So nothing that
//! holds one of these ever sees an invalid shape.

use std::borrow::Cow;

use crate::layout::Layout;
use crate::primitive::PrimitiveType;
use crate::validate::size;

/// The size of one dimension of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DimSize {
    /// A static size, `7` in `f32[7]`. At most `i64::MAX` in a validated shape.
    Static(u64),
    /// A dynamic size with an upper bound, `<=7` in `f32[<=7]`. At most `i64::MAX`.
    Bounded(u64),
    /// A dynamic size with no bound, `?` (INT64_MIN and dynamic in the proto).
    Unbounded,
}

impl DimSize {
    /// The static size or the bound; `None` when unbounded.
    pub fn bound(self) -> Option<u64> {
        match self {
            DimSize::Static(n) | DimSize::Bounded(n) => Some(n),
            DimSize::Unbounded => None,
        }
    }

    /// Whether the size is dynamic (bounded or unbounded).
    pub fn is_dynamic(self) -> bool {
        !matches!(self, DimSize::Static(_))
    }

    /// The proto encoding: the size or bound, or INT64_MIN when unbounded.
    pub fn to_i64(self) -> i64 {
        match self {
            DimSize::Static(n) | DimSize::Bounded(n) => i64::try_from(n).unwrap_or(i64::MAX),
            DimSize::Unbounded => i64::MIN,
        }
    }
}

/// A validated shape: an array, a tuple, a token, an opaque or a buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// An array of elements.
    Array(ArrayShape),
    /// A tuple of shapes (possibly empty).
    Tuple(Vec<Shape>),
    /// A token (`token[]`), ordering side effects.
    Token,
    /// An opaque value (`opaque[]`).
    Opaque,
    /// A buffer holding one array (`b(f32[8])`).
    Buffer(ArrayShape),
}

impl Shape {
    /// The primitive type that selects this kind of shape (`Tuple`, `Token`,
    /// `OpaqueType`, `Buffer`) or the array's element type.
    pub fn element_type(&self) -> PrimitiveType {
        match self {
            Shape::Array(a) => a.element_type(),
            Shape::Tuple(_) => PrimitiveType::Tuple,
            Shape::Token => PrimitiveType::Token,
            Shape::Opaque => PrimitiveType::OpaqueType,
            Shape::Buffer(_) => PrimitiveType::Buffer,
        }
    }

    /// The array, if this is an array shape.
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The elements, if this is a tuple shape.
    pub fn as_tuple(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(elements) => Some(elements),
            _ => None,
        }
    }

    /// `array`, `tuple`, `token`, `opaque` or `buffer`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Shape::Array(_) => "array",
            Shape::Tuple(_) => "tuple",
            Shape::Token => "token",
            Shape::Opaque => "opaque",
            Shape::Buffer(_) => "buffer",
        }
    }

    /// The kind with its article, for messages: `"an array"`, `"a tuple"`, `"a token"`,
    /// `"an opaque"` or `"a buffer"`.
    pub fn kind_phrase(&self) -> &'static str {
        match self {
            Shape::Array(_) => "an array",
            Shape::Tuple(_) => "a tuple",
            Shape::Token => "a token",
            Shape::Opaque => "an opaque",
            Shape::Buffer(_) => "a buffer",
        }
    }
}

impl From<ArrayShape> for Shape {
    fn from(array: ArrayShape) -> Self {
        Shape::Array(array)
    }
}

/// The dimensions of an array, inline up to rank 4 (nearly every real shape), so that
/// building a validated shape need not allocate for them.
pub(crate) type Dims = smallvec::SmallVec<[DimSize; 4]>;

/// A validated array shape: element type, dimensions and an optional layout.
///
/// # Guarantees
///
/// Besides the [`Layout`] invariants (with `minor_to_major` a permutation of
/// `0..number_of_dimensions()`), the gate proves with checked arithmetic that, when no
/// dimension is [`DimSize::Unbounded`] and every dimension is taken at its size or bound:
///
/// 1. Element count: the product of the dimensions, multiplied in dimension order, never
///    exceeds `i64::MAX` on the way (XLA's rule), and neither does count × the type's
///    byte width, nor count × `element_size_in_bits` when that is set.
/// 2. Legacy padding: the product of the non-zero `padded_dimensions` is at most
///    `i64::MAX`, and so is it × the byte width (× `element_size_in_bits` when set).
/// 3. Tiling, when the element count is not 0: applying every tile in turn to the
///    physical dimensions (most major first), each tile to the most minor suffix of the
///    shape so far (leading 1s added when the tile has more dimensions), a dimension
///    *d* with tile size *t* becoming ⌈*d*/*t*⌉ outer and *t* inner (inner ones moved to
///    the minor end in order), and a combine (`*`) entry multiplying the next more
///    minor dimension by its own (a combine entry with nothing more minor stays as one
///    untiled dimension): the product of the final extents, rounded up to a multiple of
///    `tail_padding_alignment_in_elements`, is at most `i64::MAX`, and so is that times
///    the byte width, or times `element_size_in_bits` when set. So is every partial
///    product, hence every stride.
///
/// An array with no elements (some dimension is 0) has nothing to index and
/// allocates nothing (XLA's `ArraySize` is 0); only guarantee 1 holds for it, as XLA
/// accepts `s8[0,1099511627776,1099511627776]`. So an engine that handles the empty
/// case first can compute element counts, padded or tiled sizes, strides and linear
/// indices in `u64` or `i64` without overflow.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    pub(crate) element_type: PrimitiveType,
    pub(crate) dimensions: Dims,
    // Boxed: keeps the shape small to move (a layout is about 180 bytes).
    pub(crate) layout: Option<Box<Layout>>,
}

impl ArrayShape {
    /// The element type; always an array type ([`PrimitiveType::is_array`]).
    pub fn element_type(&self) -> PrimitiveType {
        self.element_type
    }

    /// Logical bits per element: the type's bit width (1 for `pred`, 4 for `s4`).
    pub fn element_bit_width(&self) -> u32 {
        self.element_type.bit_width().unwrap_or(0)
    }

    /// Bits one element occupies in memory: the layout's `element_size_in_bits` when set,
    /// else the type's byte width × 8 (so 8 for `pred` and unpacked `s4`).
    pub fn storage_bits_per_element(&self) -> u64 {
        match self.layout.as_deref().map(Layout::element_size_in_bits) {
            Some(bits) if bits != 0 => bits,
            _ => u64::from(self.element_type.byte_width().unwrap_or(0)) * 8,
        }
    }

    /// The dimension sizes, dimension 0 first.
    pub fn dimensions(&self) -> &[DimSize] {
        &self.dimensions
    }

    /// One dimension with Python-like indexing: `-1` is the last dimension, `-2` the one
    /// before; `None` when out of range.
    pub fn dimension(&self, index: i64) -> Option<DimSize> {
        let n = i64::try_from(self.dimensions.len()).ok()?;
        let index = if index < 0 {
            index.checked_add(n)?
        } else {
            index
        };
        self.dimensions.get(usize::try_from(index).ok()?).copied()
    }

    /// Number of dimensions (formerly "rank"); 0 for a scalar.
    pub fn number_of_dimensions(&self) -> usize {
        self.dimensions.len()
    }

    /// The *true* number of dimensions: how many have a size greater than 1 (XLA's
    /// `TrueNumDimensions`; a bounded dimension counts by its bound, an unbounded one
    /// does not count, as INT64_MIN is not greater than 1).
    pub fn true_number_of_dimensions(&self) -> usize {
        self.dimensions
            .iter()
            .filter(|d| d.bound().is_some_and(|n| n > 1))
            .count()
    }

    /// The conventional letter of each dimension for 1 to 4 dimensions, dimension 0
    /// first: `[x]`, `[y, x]`, `[z, y, x]`, `[p, z, y, x]` (XLA's shapes doc names 2 to 4
    /// dimensions; one dimension follows the same pattern). `None` otherwise.
    pub fn dimension_letters(&self) -> Option<&'static [char]> {
        match self.dimensions.len() {
            1 => Some(&['x']),
            2 => Some(&['y', 'x']),
            3 => Some(&['z', 'y', 'x']),
            4 => Some(&['p', 'z', 'y', 'x']),
            _ => None,
        }
    }

    /// Whether this is a scalar (no dimensions).
    pub fn is_scalar(&self) -> bool {
        self.dimensions.is_empty()
    }

    /// Whether any dimension is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.dimensions.iter().any(|d| d.is_dynamic())
    }

    /// The layout, if the shape has one.
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_deref()
    }

    /// The layout, or XLA's default layout ([`Layout::default_for_rank`]) when there is
    /// none.
    pub fn layout_or_default(&self) -> Cow<'_, Layout> {
        match &self.layout {
            Some(layout) => Cow::Borrowed(layout),
            None => Cow::Owned(Layout::default_for_rank(self.dimensions.len())),
        }
    }

    /// This shape with XLA's default layout when it has none. Still valid: a default
    /// layout adds no padding.
    #[must_use]
    pub fn with_default_layout(mut self) -> Self {
        if self.layout.is_none() {
            self.layout = Some(Box::new(Layout::default_for_rank(self.dimensions.len())));
        }
        self
    }

    /// Number of elements (bounded dimensions at their bound, as XLA's `ElementsIn`);
    /// `None` when a dimension is unbounded. Fits in `i64` (see the guarantees).
    pub fn element_count(&self) -> Option<u64> {
        size::element_count(&self.dimensions)
    }

    /// Size of the elements in bytes, ignoring tiling and padding (XLA's
    /// `ByteSizeOfElements`): count × byte width, or ⌈count × `element_size_in_bits` / 8⌉
    /// when that is set. `None` when a dimension is unbounded.
    pub fn byte_size(&self) -> Option<u64> {
        let count = self.element_count()?;
        let bits = self
            .layout
            .as_deref()
            .map_or(0, Layout::element_size_in_bits);
        if bits != 0 {
            Some(count.checked_mul(bits)?.div_ceil(8))
        } else {
            count.checked_mul(u64::from(self.element_type.byte_width()?))
        }
    }
}

/// A validated program shape: parameter shapes with their names, and the result.
///
/// Invariant: one name per parameter (XLA's `ProgramShape::FromProto` since 2025).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramShape {
    pub(crate) parameters: Vec<Shape>,
    pub(crate) parameter_names: Vec<String>,
    pub(crate) result: Shape,
}

impl ProgramShape {
    /// The parameter shapes.
    pub fn parameters(&self) -> &[Shape] {
        &self.parameters
    }

    /// The parameter names, one per parameter (possibly empty strings).
    pub fn parameter_names(&self) -> &[String] {
        &self.parameter_names
    }

    /// The result shape.
    pub fn result(&self) -> &Shape {
        &self.result
    }
}
