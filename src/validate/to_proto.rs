//! Domain → proto: what XLA's own `Shape::ToProto` / `Layout::ToProto` write (see the
//! normalizations listed in [`crate::validate`]).

use crate::layout::{Layout, SplitConfig, Tile};
use crate::proto;
use crate::shape::{ArrayShape, ProgramShape, Shape};

impl From<&Tile> for proto::TileProto {
    fn from(tile: &Tile) -> Self {
        proto::TileProto {
            dimensions: tile.dimensions().iter().map(|d| d.to_i64()).collect(),
        }
    }
}

impl From<&SplitConfig> for proto::SplitConfigProto {
    fn from(split: &SplitConfig) -> Self {
        proto::SplitConfigProto {
            dimension: split.dimension,
            split_indices: split.split_indices.clone(),
        }
    }
}

fn to_i64(value: u64) -> i64 {
    // Validated values are at most i64::MAX.
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl From<&Layout> for proto::LayoutProto {
    fn from(layout: &Layout) -> Self {
        proto::LayoutProto {
            minor_to_major: layout
                .minor_to_major
                .iter()
                .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
                .collect(),
            padded_dimensions: layout
                .padded_dimensions
                .iter()
                .flatten()
                .map(|&d| to_i64(d))
                .collect(),
            padding_value: layout.padding_value.map_or(0, |v| v.as_i32()),
            format: if layout.dense_format {
                proto::Format::Dense as i32
            } else {
                0
            },
            max_sparse_elements: 0,
            tiles: layout.tiles.iter().map(Into::into).collect(),
            element_size_in_bits: to_i64(layout.element_size_in_bits),
            memory_space: layout.memory_space,
            dim_level_types: Vec::new(),
            physical_shape: None,
            index_primitive_type: 0,
            pointer_primitive_type: 0,
            dim_unique: Vec::new(),
            dim_ordered: Vec::new(),
            dynamic_shape_metadata_prefix_bytes: layout.dynamic_shape_metadata_prefix_bytes,
            tail_padding_alignment_in_elements: to_i64(layout.tail_padding_alignment_in_elements),
            split_configs: layout.split_configs.iter().map(Into::into).collect(),
        }
    }
}

impl From<&ArrayShape> for proto::ShapeProto {
    fn from(array: &ArrayShape) -> Self {
        proto::ShapeProto {
            element_type: array.element_type.as_i32(),
            dimensions: array.dimensions.iter().map(|d| d.to_i64()).collect(),
            tuple_shapes: Vec::new(),
            layout: array.layout.as_deref().map(|l| Box::new(l.into())),
            is_dynamic_dimension: array.dimensions.iter().map(|d| d.is_dynamic()).collect(),
        }
    }
}

impl From<&Shape> for proto::ShapeProto {
    fn from(shape: &Shape) -> Self {
        match shape {
            Shape::Array(array) => array.into(),
            Shape::Tuple(elements) => proto::ShapeProto {
                element_type: proto::PrimitiveType::Tuple as i32,
                tuple_shapes: elements.iter().map(Into::into).collect(),
                ..Default::default()
            },
            Shape::Buffer(array) => proto::ShapeProto {
                element_type: proto::PrimitiveType::Buffer as i32,
                tuple_shapes: vec![array.into()],
                ..Default::default()
            },
            Shape::Token => proto::ShapeProto {
                element_type: proto::PrimitiveType::Token as i32,
                ..Default::default()
            },
            Shape::Opaque => proto::ShapeProto {
                element_type: proto::PrimitiveType::OpaqueType as i32,
                ..Default::default()
            },
        }
    }
}

impl From<&ProgramShape> for proto::ProgramShapeProto {
    fn from(program: &ProgramShape) -> Self {
        proto::ProgramShapeProto {
            parameters: program.parameters.iter().map(Into::into).collect(),
            result: Some((&program.result).into()),
            parameter_names: program.parameter_names.clone(),
        }
    }
}

macro_rules! by_value {
    ($($domain:ty => $proto:ty),*) => {$(
        impl From<$domain> for $proto {
            fn from(value: $domain) -> Self {
                (&value).into()
            }
        }
    )*};
}

by_value!(Shape => proto::ShapeProto, ArrayShape => proto::ShapeProto,
    Layout => proto::LayoutProto, ProgramShape => proto::ProgramShapeProto);
