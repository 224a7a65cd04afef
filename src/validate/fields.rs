//! What the checker reads of a shape and of its layout, so that the same rules run over
//! the generated messages and over the fast path's flat copy of a plain array
//! ([`super::fast`]), which holds its lists inline instead of in vectors.

use crate::proto::{LayoutProto, ShapeProto};

/// The fields of a `ShapeProto` that [`super::Checker::array`] reads.
pub(crate) trait ShapeFields {
    /// The layout's representation.
    type Layout: LayoutFields;

    /// Field 3.
    fn dimensions(&self) -> &[i64];

    /// Field 6.
    fn is_dynamic_dimension(&self) -> &[bool];

    /// Whether field 4 has any element.
    fn has_tuple_shapes(&self) -> bool;

    /// Field 5.
    fn layout(&self) -> Option<&Self::Layout>;
}

/// The fields of a `LayoutProto` that [`super::Checker::layout`] reads.
pub(crate) trait LayoutFields {
    /// Field 1.
    fn minor_to_major(&self) -> &[i64];

    /// Field 6: the dimensions of each tile, in order.
    fn tiles(&self) -> impl Iterator<Item = &[i64]>;

    /// Every other field. Its `minor_to_major` and `tiles` are not read: they come from
    /// the two methods above.
    fn others(&self) -> &LayoutProto;
}

impl ShapeFields for ShapeProto {
    type Layout = LayoutProto;

    fn dimensions(&self) -> &[i64] {
        &self.dimensions
    }

    fn is_dynamic_dimension(&self) -> &[bool] {
        &self.is_dynamic_dimension
    }

    fn has_tuple_shapes(&self) -> bool {
        !self.tuple_shapes.is_empty()
    }

    fn layout(&self) -> Option<&LayoutProto> {
        self.layout.as_deref()
    }
}

impl LayoutFields for LayoutProto {
    fn minor_to_major(&self) -> &[i64] {
        &self.minor_to_major
    }

    fn tiles(&self) -> impl Iterator<Item = &[i64]> {
        self.tiles.iter().map(|tile| tile.dimensions.as_slice())
    }

    fn others(&self) -> &LayoutProto {
        self
    }
}
