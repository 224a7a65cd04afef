//! From a parsed JSON document to the prost messages, with proto3 JSON's rules.

use super::error::{line_column, JsonError, JsonErrorKind};
use super::fields::{self, Field};
use super::number::{self, Wide};
use super::value::{Member, Node, Value};
use super::{ParseOptions, MAX_MESSAGE_DEPTH};
use crate::path::{Path, Segment};
use crate::proto::{
    DimLevelType, Format, LayoutProto, PaddingValue, PrimitiveType, ProgramShapeProto, ShapeProto,
    SplitConfigProto, TileProto,
};

type Result<T> = std::result::Result<T, JsonError>;

/// An enum of the schema: its proto name and its value names.
pub(crate) struct EnumType {
    pub(crate) name: &'static str,
    pub(crate) from_name: fn(&str) -> Option<i32>,
}

pub(crate) const PRIMITIVE_TYPE: EnumType = EnumType {
    name: "xla.PrimitiveType",
    from_name: |s| PrimitiveType::from_str_name(s).map(|v| v as i32),
};
pub(crate) const DIM_LEVEL_TYPE: EnumType = EnumType {
    name: "xla.DimLevelType",
    from_name: |s| DimLevelType::from_str_name(s).map(|v| v as i32),
};
pub(crate) const PADDING_VALUE: EnumType = EnumType {
    name: "xla.PaddingValue",
    from_name: |s| PaddingValue::from_str_name(s).map(|v| v as i32),
};
pub(crate) const FORMAT: EnumType = EnumType {
    name: "xla.Format",
    from_name: |s| Format::from_str_name(s).map(|v| v as i32),
};

/// Reads messages out of one parsed document.
pub(crate) struct Reader<'t> {
    text: &'t str,
    ignore_unknown_fields: bool,
    depth: usize,
    path: Path,
}

impl<'t> Reader<'t> {
    pub(crate) fn new(text: &'t str, options: &ParseOptions) -> Self {
        Self {
            text,
            ignore_unknown_fields: options.ignore_unknown_fields,
            depth: 0,
            path: Path::root(),
        }
    }

    #[cold]
    fn error(&self, pos: usize, kind: JsonErrorKind) -> JsonError {
        let (line, column) = line_column(self.text, pos);
        JsonError::new(self.path.clone(), line, column, kind)
    }

    /// The known fields of an object, as (index into `table`, value) pairs, in the
    /// order written. Checks the type, the depth, unknown keys and fields given twice.
    /// The caller reads the fields and then calls [`Self::leave`].
    fn enter<'n, 'a>(
        &mut self,
        node: &'n Node<'a>,
        message: &'static str,
        table: &'static [Field],
    ) -> Result<impl Iterator<Item = (usize, &'n Member<'a>)>> {
        let Value::Object(members) = &node.value else {
            return Err(self.wrong_type(node, "an object"));
        };
        self.depth += 1;
        if self.depth > MAX_MESSAGE_DEPTH {
            return Err(self.error(
                node.pos,
                JsonErrorKind::MessageTooDeep {
                    limit: MAX_MESSAGE_DEPTH,
                },
            ));
        }
        // Every table has fewer than 32 fields.
        let mut seen = 0u32;
        for member in members {
            let Some(index) = fields::lookup(table, &member.key) else {
                if self.ignore_unknown_fields {
                    continue;
                }
                return Err(self.error(
                    member.key_pos,
                    JsonErrorKind::UnknownField {
                        message,
                        key: lossy(&member.key),
                    },
                ));
            };
            let bit = 1u32 << (index % 32);
            if seen & bit != 0 {
                let first = members
                    .iter()
                    .find(|m| fields::lookup(table, &m.key) == Some(index))
                    .map_or_else(String::new, |m| lossy(&m.key));
                self.path.push(Segment::Field(table[index].proto));
                return Err(self.error(
                    member.key_pos,
                    JsonErrorKind::DuplicateField {
                        key: lossy(&member.key),
                        first,
                    },
                ));
            }
            seen |= bit;
        }
        Ok(members
            .iter()
            .filter_map(move |m| fields::lookup(table, &m.key).map(|index| (index, m))))
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    #[cold]
    fn wrong_type(&self, node: &Node<'_>, expected: &'static str) -> JsonError {
        self.error(
            node.pos,
            JsonErrorKind::WrongType {
                expected,
                found: node.value.type_name(),
            },
        )
    }

    // ---- messages ----
    //
    // The fields that hold messages are read in the slim functions below, which are
    // all that recursion stacks up; the other fields are read in separate functions.

    pub(crate) fn shape(&mut self, node: &Node<'_>) -> Result<ShapeProto> {
        let mut shape = ShapeProto::default();
        for (index, member) in self.enter(node, "xla.ShapeProto", fields::SHAPE)? {
            let value = &member.value;
            self.path.push(Segment::Field(fields::SHAPE[index].proto));
            match index {
                2 => shape.tuple_shapes = self.list(value, Self::shape_element)?,
                3 => self.shape_layout(&mut shape, value)?,
                _ => self.shape_scalar(&mut shape, index, value)?,
            }
            self.path.pop();
        }
        self.leave();
        Ok(shape)
    }

    fn shape_element(&mut self, node: &Node<'_>) -> Result<Option<ShapeProto>> {
        self.shape(node).map(Some)
    }

    #[inline(never)]
    fn shape_layout(&mut self, shape: &mut ShapeProto, value: &Node<'_>) -> Result<()> {
        shape.layout = self.optional(value, Self::layout)?.map(Box::new);
        Ok(())
    }

    #[inline(never)]
    fn shape_scalar(
        &mut self,
        shape: &mut ShapeProto,
        index: usize,
        value: &Node<'_>,
    ) -> Result<()> {
        match index {
            0 => shape.element_type = self.enum_value(value, &PRIMITIVE_TYPE)?.unwrap_or(0),
            1 => shape.dimensions = self.list(value, Self::int64)?,
            _ => shape.is_dynamic_dimension = self.list(value, Self::bool)?,
        }
        Ok(())
    }

    pub(crate) fn layout(&mut self, node: &Node<'_>) -> Result<LayoutProto> {
        let mut layout = LayoutProto::default();
        for (index, member) in self.enter(node, "xla.LayoutProto", fields::LAYOUT)? {
            let value = &member.value;
            self.path.push(Segment::Field(fields::LAYOUT[index].proto));
            match index {
                9 => layout.physical_shape = self.optional(value, Self::shape)?.map(Box::new),
                _ => self.layout_other(&mut layout, index, value)?,
            }
            self.path.pop();
        }
        self.leave();
        Ok(layout)
    }

    #[inline(never)]
    fn layout_other(&mut self, l: &mut LayoutProto, index: usize, value: &Node<'_>) -> Result<()> {
        match index {
            0 => l.minor_to_major = self.list(value, Self::int64)?,
            1 => l.padded_dimensions = self.list(value, Self::int64)?,
            2 => l.padding_value = self.enum_value(value, &PADDING_VALUE)?.unwrap_or(0),
            3 => l.format = self.enum_value(value, &FORMAT)?.unwrap_or(0),
            4 => l.max_sparse_elements = self.int64_or_default(value)?,
            5 => l.tiles = self.list(value, Self::tile)?,
            6 => l.element_size_in_bits = self.int64_or_default(value)?,
            7 => l.memory_space = self.int64_or_default(value)?,
            8 => l.dim_level_types = self.list(value, Self::dim_level_type)?,
            10 => l.index_primitive_type = self.enum_value(value, &PRIMITIVE_TYPE)?.unwrap_or(0),
            11 => l.pointer_primitive_type = self.enum_value(value, &PRIMITIVE_TYPE)?.unwrap_or(0),
            12 => l.dim_unique = self.list(value, Self::bool)?,
            13 => l.dim_ordered = self.list(value, Self::bool)?,
            14 => l.dynamic_shape_metadata_prefix_bytes = self.int64_or_default(value)?,
            15 => l.tail_padding_alignment_in_elements = self.int64_or_default(value)?,
            _ => l.split_configs = self.list(value, Self::split_config)?,
        }
        Ok(())
    }

    fn dim_level_type(&mut self, node: &Node<'_>) -> Result<Option<i32>> {
        self.enum_value(node, &DIM_LEVEL_TYPE)
    }

    fn tile(&mut self, node: &Node<'_>) -> Result<Option<TileProto>> {
        let mut tile = TileProto::default();
        for (index, member) in self.enter(node, "xla.TileProto", fields::TILE)? {
            self.path.push(Segment::Field(fields::TILE[index].proto));
            tile.dimensions = self.list(&member.value, Self::int64)?;
            self.path.pop();
        }
        self.leave();
        Ok(Some(tile))
    }

    fn split_config(&mut self, node: &Node<'_>) -> Result<Option<SplitConfigProto>> {
        let mut config = SplitConfigProto::default();
        for (index, member) in self.enter(node, "xla.SplitConfigProto", fields::SPLIT_CONFIG)? {
            let value = &member.value;
            self.path
                .push(Segment::Field(fields::SPLIT_CONFIG[index].proto));
            match index {
                0 => config.dimension = self.int64_or_default(value)?,
                _ => config.split_indices = self.list(value, Self::int64)?,
            }
            self.path.pop();
        }
        self.leave();
        Ok(Some(config))
    }

    pub(crate) fn program_shape(&mut self, node: &Node<'_>) -> Result<ProgramShapeProto> {
        let mut program = ProgramShapeProto::default();
        for (index, member) in self.enter(node, "xla.ProgramShapeProto", fields::PROGRAM_SHAPE)? {
            let value = &member.value;
            self.path
                .push(Segment::Field(fields::PROGRAM_SHAPE[index].proto));
            match index {
                0 => program.parameters = self.list(value, Self::shape_element)?,
                1 => program.result = self.optional(value, Self::shape)?,
                _ => program.parameter_names = self.list(value, Self::string)?,
            }
            self.path.pop();
        }
        self.leave();
        Ok(program)
    }

    // ---- field shapes ----

    /// A singular message field: `null` leaves it unset.
    fn optional<T>(
        &mut self,
        node: &Node<'_>,
        read: fn(&mut Self, &Node<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match node.value {
            Value::Null => Ok(None),
            _ => read(self, node).map(Some),
        }
    }

    /// A repeated field: an array (or `null`, the empty list) of non-null elements.
    /// `read` returns `None` for an element to drop (an unknown enum name when unknown
    /// fields are ignored).
    fn list<T>(
        &mut self,
        node: &Node<'_>,
        read: fn(&mut Self, &Node<'_>) -> Result<Option<T>>,
    ) -> Result<Vec<T>> {
        let items = match &node.value {
            Value::Null => return Ok(Vec::new()),
            Value::Array(items) => items,
            _ => return Err(self.wrong_type(node, "an array")),
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            self.path.push(Segment::Index(i));
            if let Value::Null = item.value {
                return Err(self.error(item.pos, JsonErrorKind::NullInList));
            }
            out.extend(read(self, item)?);
            self.path.pop();
        }
        Ok(out)
    }

    // ---- scalars ----

    fn int64_or_default(&mut self, node: &Node<'_>) -> Result<i64> {
        match node.value {
            Value::Null => Ok(0),
            _ => self.integer(node, "int64").map(|v| v.unwrap_or(0)),
        }
    }

    fn int64(&mut self, node: &Node<'_>) -> Result<Option<i64>> {
        self.integer(node, "int64")
    }

    /// An int64: a JSON integer, an integral JSON number, or a string Python's
    /// `json_format` reads as an integer (see [`super::number`]).
    fn integer(&mut self, node: &Node<'_>, ty: &'static str) -> Result<Option<i64>> {
        let wide = match &node.value {
            Value::Number(raw) => number::json_number_as_integer(raw),
            Value::String(bytes) => std::str::from_utf8(bytes)
                .map_err(|_| ())
                .and_then(number::string_as_integer),
            _ => return Err(self.wrong_type(node, "an integer (a number or a string)")),
        };
        let wide = wide.map_err(|()| {
            self.error(
                node.pos,
                JsonErrorKind::NotAnInteger {
                    text: as_written(node),
                },
            )
        })?;
        self.fit(node, wide, ty).map(Some)
    }

    fn fit(&self, node: &Node<'_>, wide: Wide, ty: &'static str) -> Result<i64> {
        let fits = match ty {
            "int32" => i32::try_from(wide).map(i64::from).ok(),
            _ => i64::try_from(wide).ok(),
        };
        fits.ok_or_else(|| {
            self.error(
                node.pos,
                JsonErrorKind::OutOfRange {
                    text: as_written(node),
                    ty,
                },
            )
        })
    }

    /// An enum value: its name, or its number as a JSON integer, an integral JSON
    /// number or a string Python's `int()` reads. Numbers the enum does not name are
    /// kept (proto3 enums are open). `None` for an unknown name when unknown fields
    /// are ignored, as Google's parsers do.
    fn enum_value(&mut self, node: &Node<'_>, ty: &EnumType) -> Result<Option<i32>> {
        let wide = match &node.value {
            Value::Null => return Ok(Some(0)),
            Value::String(bytes) => {
                let name = std::str::from_utf8(bytes).ok();
                if let Some(number) = name.and_then(ty.from_name) {
                    return Ok(Some(number));
                }
                match name.and_then(number::python_int) {
                    Some(wide) => wide,
                    None if self.ignore_unknown_fields => return Ok(None),
                    None => {
                        return Err(self.error(
                            node.pos,
                            JsonErrorKind::UnknownEnumName {
                                enum_name: ty.name,
                                name: lossy(bytes),
                            },
                        ))
                    }
                }
            }
            Value::Number(raw) => match number::json_number_as_integer(raw) {
                Ok(wide) => wide,
                Err(()) => {
                    return Err(self.error(
                        node.pos,
                        JsonErrorKind::NotAnInteger {
                            text: (*raw).to_owned(),
                        },
                    ))
                }
            },
            _ => return Err(self.wrong_type(node, "an enum name or number")),
        };
        let number = self.fit(node, wide, "int32")?;
        // `fit` checked the int32 range.
        Ok(i32::try_from(number).ok())
    }

    fn bool(&mut self, node: &Node<'_>) -> Result<Option<bool>> {
        match node.value {
            Value::Bool(b) => Ok(Some(b)),
            _ => Err(self.wrong_type(node, "true or false")),
        }
    }

    fn string(&mut self, node: &Node<'_>) -> Result<Option<String>> {
        match &node.value {
            Value::String(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(Some(text.to_owned())),
                Err(_) => Err(self.error(node.pos, JsonErrorKind::UnpairedSurrogate)),
            },
            _ => Err(self.wrong_type(node, "a string")),
        }
    }
}

/// A WTF-8 string for a message, unpaired surrogates shown as U+FFFD.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A number or string value as written, for a message: strings in double quotes,
/// escaped.
#[cold]
fn as_written(node: &Node<'_>) -> String {
    match &node.value {
        Value::Number(raw) => (*raw).to_owned(),
        Value::String(bytes) => format!("{:?}", lossy(bytes)),
        other => other.type_name().to_owned(),
    }
}
