//! The JSON and proto names of every field, in field-number order.

/// One field's two names: the proto3 JSON name (lowerCamelCase) and the proto name.
#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) json: &'static str,
    pub(crate) proto: &'static str,
}

const fn field(json: &'static str, proto: &'static str) -> Field {
    Field { json, proto }
}

/// `xla.ShapeProto`, fields 2-6.
pub(crate) const SHAPE: &[Field] = &[
    field("elementType", "element_type"),
    field("dimensions", "dimensions"),
    field("tupleShapes", "tuple_shapes"),
    field("layout", "layout"),
    field("isDynamicDimension", "is_dynamic_dimension"),
];

/// `xla.LayoutProto`, fields 1-17 (2-5 being the retired legacy fields).
pub(crate) const LAYOUT: &[Field] = &[
    field("minorToMajor", "minor_to_major"),
    field("paddedDimensions", "padded_dimensions"),
    field("paddingValue", "padding_value"),
    field("format", "format"),
    field("maxSparseElements", "max_sparse_elements"),
    field("tiles", "tiles"),
    field("elementSizeInBits", "element_size_in_bits"),
    field("memorySpace", "memory_space"),
    field("dimLevelTypes", "dim_level_types"),
    field("physicalShape", "physical_shape"),
    field("indexPrimitiveType", "index_primitive_type"),
    field("pointerPrimitiveType", "pointer_primitive_type"),
    field("dimUnique", "dim_unique"),
    field("dimOrdered", "dim_ordered"),
    field(
        "dynamicShapeMetadataPrefixBytes",
        "dynamic_shape_metadata_prefix_bytes",
    ),
    field(
        "tailPaddingAlignmentInElements",
        "tail_padding_alignment_in_elements",
    ),
    field("splitConfigs", "split_configs"),
];

/// `xla.TileProto`.
pub(crate) const TILE: &[Field] = &[field("dimensions", "dimensions")];

/// `xla.SplitConfigProto`.
pub(crate) const SPLIT_CONFIG: &[Field] = &[
    field("dimension", "dimension"),
    field("splitIndices", "split_indices"),
];

/// `xla.ProgramShapeProto`.
pub(crate) const PROGRAM_SHAPE: &[Field] = &[
    field("parameters", "parameters"),
    field("result", "result"),
    field("parameterNames", "parameter_names"),
];

/// Which of its two names a key gives a field by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// The JSON name; also when the two names are the same.
    Json,
    /// The proto name.
    Proto,
}

/// The field a key names, by its JSON name or its proto name (both are accepted),
/// and which of the two the key is.
pub(crate) fn lookup(table: &[Field], key: &[u8]) -> Option<(usize, Spelling)> {
    table.iter().enumerate().find_map(|(index, f)| {
        if f.json.as_bytes() == key {
            Some((index, Spelling::Json))
        } else if f.proto.as_bytes() == key {
            Some((index, Spelling::Proto))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// protoc's rule for `json_name`: drop each `_` and capitalise the letter after it.
    fn camel(proto: &str) -> String {
        let mut out = String::new();
        let mut upper = false;
        for c in proto.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn every_table_fits_the_readers_two_bits_per_field() {
        // The reader finds keys given twice with two bits per field in a u64.
        for table in [SHAPE, LAYOUT, TILE, SPLIT_CONFIG, PROGRAM_SHAPE] {
            assert!(table.len() <= 32);
        }
    }

    #[test]
    fn json_names_follow_protoc() {
        for table in [SHAPE, LAYOUT, TILE, SPLIT_CONFIG, PROGRAM_SHAPE] {
            for f in table {
                assert_eq!(f.json, camel(f.proto));
            }
        }
    }

    #[test]
    fn tables_follow_the_generated_structs() {
        // The descriptor prost-build was given lists the fields; compare names and order.
        let proto = include_str!("../../proto/xla_data.proto");
        for (message, table) in [
            ("ShapeProto", SHAPE),
            ("LayoutProto", LAYOUT),
            ("TileProto", TILE),
            ("SplitConfigProto", SPLIT_CONFIG),
            ("ProgramShapeProto", PROGRAM_SHAPE),
        ] {
            let start = proto.find(&format!("message {message} {{")).unwrap();
            let body = &proto[start..start + proto[start..].find("\n}").unwrap()];
            let names: Vec<&str> = body
                .lines()
                .filter_map(|line| {
                    let line = line.trim();
                    let decl = line.strip_suffix(';')?;
                    let (lhs, _number) = decl.split_once(" = ")?;
                    lhs.split_whitespace().last()
                })
                .collect();
            let ours: Vec<&str> = table.iter().map(|f| f.proto).collect();
            assert_eq!(names, ours, "{message}");
        }
    }
}
