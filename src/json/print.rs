//! From the prost messages to proto3 JSON text, written directly.

use std::fmt::Write as _;

use super::fields::{self, Field};
use super::{FieldNames, PrintOptions};
use crate::proto::{
    DimLevelType, Format, LayoutProto, PaddingValue, PrimitiveType, ProgramShapeProto, ShapeProto,
    SplitConfigProto, TileProto,
};

/// Writes one message as JSON: keys in field-number order, default values left out.
pub(crate) struct Printer {
    out: String,
    pretty: bool,
    proto_names: bool,
    indent: usize,
}

/// An open object or array: whether anything was written in it yet.
struct Open {
    empty: bool,
}

impl Printer {
    pub(crate) fn new(options: &PrintOptions) -> Self {
        Self {
            // Most messages print in under 256 bytes: one allocation.
            out: String::with_capacity(256),
            pretty: options.pretty,
            proto_names: options.field_names == FieldNames::Proto,
            indent: 0,
        }
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    /// The text printed so far, taken out (printing goes on after it).
    pub(crate) fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    fn open(&mut self, bracket: char) -> Open {
        self.out.push(bracket);
        self.indent += 1;
        Open { empty: true }
    }

    /// Starts the next element of an open object or array.
    fn next(&mut self, open: &mut Open) {
        if !open.empty {
            self.out.push(',');
        }
        open.empty = false;
        if self.pretty {
            self.newline();
        }
    }

    fn close(&mut self, open: Open, bracket: char) {
        self.indent -= 1;
        if self.pretty && !open.empty {
            self.newline();
        }
        self.out.push(bracket);
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn key(&mut self, open: &mut Open, field: &Field) {
        self.next(open);
        let name = if self.proto_names {
            field.proto
        } else {
            field.json
        };
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str(if self.pretty { "\": " } else { "\":" });
    }

    fn list<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Self, &T)) {
        let mut open = self.open('[');
        for value in items {
            self.next(&mut open);
            item(self, value);
        }
        self.close(open, ']');
    }

    fn int64(&mut self, value: i64) {
        self.out.push('"');
        crate::digits::push_int(&mut self.out, value);
        self.out.push('"');
    }

    fn bool(&mut self, value: bool) {
        self.out.push_str(if value { "true" } else { "false" });
    }

    /// An enum value by its name, or as a bare number when the schema has no name for it.
    fn enum_value(&mut self, value: i32, name: Option<&'static str>) {
        match name {
            Some(name) => {
                self.out.push('"');
                self.out.push_str(name);
                self.out.push('"');
            }
            None => {
                let _ = write!(self.out, "{value}");
            }
        }
    }

    /// A string, escaped as Python's `json.dumps` does by default (`ensure_ascii`): the
    /// output is ASCII, everything else as `\uXXXX` (UTF-16, lowercase hex).
    fn string(&mut self, value: &str) {
        self.out.push('"');
        for c in value.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                ' '..='~' => self.out.push(c),
                _ => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(self.out, "\\u{unit:04x}");
                    }
                }
            }
        }
        self.out.push('"');
    }

    // ---- messages ----

    pub(crate) fn shape(&mut self, shape: &ShapeProto) {
        let f = fields::SHAPE;
        let mut o = self.open('{');
        if shape.element_type != 0 {
            self.key(&mut o, &f[0]);
            self.enum_value(shape.element_type, primitive_type_name(shape.element_type));
        }
        if !shape.dimensions.is_empty() {
            self.key(&mut o, &f[1]);
            self.list(&shape.dimensions, |p, &v| p.int64(v));
        }
        if !shape.tuple_shapes.is_empty() {
            self.key(&mut o, &f[2]);
            self.list(&shape.tuple_shapes, Self::shape);
        }
        if let Some(layout) = &shape.layout {
            self.key(&mut o, &f[3]);
            self.layout(layout);
        }
        if !shape.is_dynamic_dimension.is_empty() {
            self.key(&mut o, &f[4]);
            self.list(&shape.is_dynamic_dimension, |p, &v| p.bool(v));
        }
        self.close(o, '}');
    }

    pub(crate) fn layout(&mut self, layout: &LayoutProto) {
        let f = fields::LAYOUT;
        let mut o = self.open('{');
        let l = layout;
        if !l.minor_to_major.is_empty() {
            self.key(&mut o, &f[0]);
            self.list(&l.minor_to_major, |p, &v| p.int64(v));
        }
        if !l.padded_dimensions.is_empty() {
            self.key(&mut o, &f[1]);
            self.list(&l.padded_dimensions, |p, &v| p.int64(v));
        }
        if l.padding_value != 0 {
            self.key(&mut o, &f[2]);
            let name = PaddingValue::try_from(l.padding_value)
                .ok()
                .map(|v| v.as_str_name());
            self.enum_value(l.padding_value, name);
        }
        if l.format != 0 {
            self.key(&mut o, &f[3]);
            let name = Format::try_from(l.format).ok().map(|v| v.as_str_name());
            self.enum_value(l.format, name);
        }
        self.int64_field(&mut o, &f[4], l.max_sparse_elements);
        if !l.tiles.is_empty() {
            self.key(&mut o, &f[5]);
            self.list(&l.tiles, Self::tile);
        }
        self.int64_field(&mut o, &f[6], l.element_size_in_bits);
        self.int64_field(&mut o, &f[7], l.memory_space);
        if !l.dim_level_types.is_empty() {
            self.key(&mut o, &f[8]);
            self.list(&l.dim_level_types, |p, &v| {
                let name = DimLevelType::try_from(v).ok().map(|v| v.as_str_name());
                p.enum_value(v, name);
            });
        }
        if let Some(physical) = &l.physical_shape {
            self.key(&mut o, &f[9]);
            self.shape(physical);
        }
        if l.index_primitive_type != 0 {
            self.key(&mut o, &f[10]);
            self.enum_value(
                l.index_primitive_type,
                primitive_type_name(l.index_primitive_type),
            );
        }
        if l.pointer_primitive_type != 0 {
            self.key(&mut o, &f[11]);
            self.enum_value(
                l.pointer_primitive_type,
                primitive_type_name(l.pointer_primitive_type),
            );
        }
        if !l.dim_unique.is_empty() {
            self.key(&mut o, &f[12]);
            self.list(&l.dim_unique, |p, &v| p.bool(v));
        }
        if !l.dim_ordered.is_empty() {
            self.key(&mut o, &f[13]);
            self.list(&l.dim_ordered, |p, &v| p.bool(v));
        }
        self.int64_field(&mut o, &f[14], l.dynamic_shape_metadata_prefix_bytes);
        self.int64_field(&mut o, &f[15], l.tail_padding_alignment_in_elements);
        if !l.split_configs.is_empty() {
            self.key(&mut o, &f[16]);
            self.list(&l.split_configs, Self::split_config);
        }
        self.close(o, '}');
    }

    fn int64_field(&mut self, o: &mut Open, field: &Field, value: i64) {
        if value != 0 {
            self.key(o, field);
            self.int64(value);
        }
    }

    fn tile(&mut self, tile: &TileProto) {
        let mut o = self.open('{');
        if !tile.dimensions.is_empty() {
            self.key(&mut o, &fields::TILE[0]);
            self.list(&tile.dimensions, |p, &v| p.int64(v));
        }
        self.close(o, '}');
    }

    fn split_config(&mut self, config: &SplitConfigProto) {
        let f = fields::SPLIT_CONFIG;
        let mut o = self.open('{');
        self.int64_field(&mut o, &f[0], config.dimension);
        if !config.split_indices.is_empty() {
            self.key(&mut o, &f[1]);
            self.list(&config.split_indices, |p, &v| p.int64(v));
        }
        self.close(o, '}');
    }

    pub(crate) fn program_shape(&mut self, program: &ProgramShapeProto) {
        let f = fields::PROGRAM_SHAPE;
        let mut o = self.open('{');
        if !program.parameters.is_empty() {
            self.key(&mut o, &f[0]);
            self.list(&program.parameters, Self::shape);
        }
        if let Some(result) = &program.result {
            self.key(&mut o, &f[1]);
            self.shape(result);
        }
        if !program.parameter_names.is_empty() {
            self.key(&mut o, &f[2]);
            self.list(&program.parameter_names, |p, v| p.string(v));
        }
        self.close(o, '}');
    }
}

/// A program shape printed a parameter at a time: [`Printer::program_shape`] of the
/// parameters, then the result and the names given to [`ProgramPrinter::finish`].
pub(crate) struct ProgramPrinter {
    printer: Printer,
    object: Open,
    /// The `parameters` array, once a parameter is printed.
    parameters: Option<Open>,
}

impl ProgramPrinter {
    /// The text printed so far, taken out.
    pub(crate) fn take(&mut self) -> String {
        self.printer.take()
    }

    pub(crate) fn new(options: &PrintOptions) -> Self {
        let mut printer = Printer::new(options);
        let object = printer.open('{');
        Self {
            printer,
            object,
            parameters: None,
        }
    }

    pub(crate) fn parameter(&mut self, shape: Part<'_>) {
        let printer = &mut self.printer;
        let array = self.parameters.get_or_insert_with(|| {
            printer.key(&mut self.object, &fields::PROGRAM_SHAPE[0]);
            printer.open('[')
        });
        printer.next(array);
        printer.part(shape);
    }

    /// Closes the parameters and prints the result's key: its JSON comes next.
    pub(crate) fn start_result(&mut self) {
        if let Some(array) = self.parameters.take() {
            self.printer.close(array, ']');
        }
        self.printer
            .key(&mut self.object, &fields::PROGRAM_SHAPE[1]);
    }

    pub(crate) fn finish<'n>(
        mut self,
        result: Option<Part<'_>>,
        names: impl ExactSizeIterator<Item = &'n str>,
    ) -> String {
        let f = fields::PROGRAM_SHAPE;
        if let Some(array) = self.parameters.take() {
            self.printer.close(array, ']');
        }
        if let Some(result) = result {
            self.printer.key(&mut self.object, &f[1]);
            self.printer.part(result);
        }
        if names.len() > 0 {
            self.printer.key(&mut self.object, &f[2]);
            let mut array = self.printer.open('[');
            for name in names {
                self.printer.next(&mut array);
                self.printer.string(name);
            }
            self.printer.close(array, ']');
        }
        self.printer.close(self.object, '}');
        self.printer.finish()
    }
}

/// A shape of a program shape printed a part at a time: the shape, or its JSON
/// already printed at its place's indentation.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    /// The shape, to be printed.
    Shape(&'a ShapeProto),
    /// Its JSON, printed by a [`super::TupleJson::nested`] at its place's depth.
    Printed(&'a str),
}

impl Printer {
    fn part(&mut self, part: Part<'_>) {
        match part {
            Part::Shape(shape) => self.shape(shape),
            Part::Printed(json) => self.out.push_str(json),
        }
    }
}

fn primitive_type_name(value: i32) -> Option<&'static str> {
    PrimitiveType::try_from(value).ok().map(|v| v.as_str_name())
}

/// A tuple printed an element at a time: [`Printer::shape`] of `element_type: TUPLE`
/// and the elements, opened by [`TuplePrinter::new`] (or, for a tuple with fields of
/// its own, [`TuplePrinter::with_fields`]) and closed by [`TuplePrinter::finish`].
pub(crate) struct TuplePrinter {
    printer: Printer,
    /// The open tuples, outermost first: each one's object and `tupleShapes` array.
    open: Vec<(Open, Open)>,
    /// The top-level tuple's fields numbered above `tuple_shapes` (its layout and
    /// dynamic flags), printed after its elements.
    tail: ShapeProto,
}

impl TuplePrinter {
    pub(crate) fn new(options: &PrintOptions) -> Self {
        let plain = ShapeProto {
            element_type: PrimitiveType::Tuple as i32,
            ..Default::default()
        };
        Self::with_fields(options, &plain)
    }

    /// A tuple whose own fields are those of `shell` (its elements left out): its
    /// dimensions before the elements, its layout and dynamic flags after them.
    pub(crate) fn with_fields(options: &PrintOptions, shell: &ShapeProto) -> Self {
        Self::at_depth(options, shell, 0)
    }

    /// [`Self::with_fields`] of a tuple printed inside `depth` open objects and arrays
    /// (with `pretty`, indented as there).
    pub(crate) fn at_depth(options: &PrintOptions, shell: &ShapeProto, depth: usize) -> Self {
        let mut printer = Printer::new(options);
        printer.indent = depth;
        let mut tuple = Self {
            printer,
            open: Vec::new(),
            tail: ShapeProto {
                layout: shell.layout.clone(),
                is_dynamic_dimension: shell.is_dynamic_dimension.clone(),
                ..Default::default()
            },
        };
        tuple.open_tuple(&shell.dimensions);
        tuple
    }

    /// `{"elementType": "TUPLE", "tupleShapes": [`, as a plain tuple prints (with its
    /// `dimensions` before `tupleShapes`).
    fn open_tuple(&mut self, dimensions: &[i64]) {
        let f = fields::SHAPE;
        let printer = &mut self.printer;
        let mut object = printer.open('{');
        printer.key(&mut object, &f[0]);
        let tuple = PrimitiveType::Tuple as i32;
        printer.enum_value(tuple, primitive_type_name(tuple));
        if !dimensions.is_empty() {
            printer.key(&mut object, &f[1]);
            printer.list(dimensions, |p, &v| p.int64(v));
        }
        printer.key(&mut object, &f[2]);
        let array = printer.open('[');
        self.open.push((object, array));
    }

    /// Starts the next element of the innermost open tuple.
    fn next_element(&mut self) {
        if let Some((_, array)) = self.open.last_mut() {
            self.printer.next(array);
        }
    }

    /// The text printed so far, taken out.
    pub(crate) fn take(&mut self) -> String {
        self.printer.take()
    }

    pub(crate) fn element(&mut self, shape: &ShapeProto) {
        self.next_element();
        self.printer.shape(shape);
    }

    /// Opens a plain tuple as the next element of the innermost open one.
    pub(crate) fn open(&mut self) {
        self.next_element();
        self.open_tuple(&[]);
    }

    /// Opens a tuple whose own fields are those of `shell` (its elements left out) as
    /// the next element of the innermost open one: its dimensions printed now, before
    /// its elements.
    pub(crate) fn open_with(&mut self, shell: &ShapeProto) {
        self.next_element();
        self.open_tuple(&shell.dimensions);
    }

    /// Closes the innermost open tuple.
    pub(crate) fn close(&mut self) {
        self.close_with(&ShapeProto::default());
    }

    /// Closes the innermost open tuple, with the fields of `tail` numbered above
    /// `tuple_shapes` (its layout and dynamic flags) after its elements.
    pub(crate) fn close_with(&mut self, tail: &ShapeProto) {
        if let Some((mut object, array)) = self.open.pop() {
            let (f, printer) = (fields::SHAPE, &mut self.printer);
            printer.close(array, ']');
            if let Some(layout) = &tail.layout {
                printer.key(&mut object, &f[3]);
                printer.layout(layout);
            }
            if !tail.is_dynamic_dimension.is_empty() {
                printer.key(&mut object, &f[4]);
                printer.list(&tail.is_dynamic_dimension, |p, &v| p.bool(v));
            }
            printer.close(object, '}');
        }
    }

    /// Sets the top-level tuple's fields printed after its elements (its layout and
    /// dynamic flags) to those of `shell`, when they are known only once its elements
    /// are read.
    pub(crate) fn set_tail(&mut self, shell: &ShapeProto) {
        self.tail = ShapeProto {
            layout: shell.layout.clone(),
            is_dynamic_dimension: shell.is_dynamic_dimension.clone(),
            ..Default::default()
        };
    }

    pub(crate) fn finish(mut self) -> String {
        while self.open.len() > 1 {
            self.close();
        }
        let tail = std::mem::take(&mut self.tail);
        self.close_with(&tail);
        self.printer.finish()
    }
}
