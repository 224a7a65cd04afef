//! Proto3 JSON, both ways, for `ShapeProto`, `LayoutProto` and `ProgramShapeProto`.
//!
//! This is the standard [proto3 JSON mapping], so what Google's `json_format`
//! (Python), `protojson` (Go) and `JsonFormat` (Java) write can be read here, and
//! what is written here they read. Google's Python `json_format` is the reference
//! wherever the mapping leaves a choice.
//!
//! # Writing
//!
//! - Keys are the lowerCamelCase JSON names (`elementType`), or the proto field
//!   names (`element_type`) with [`FieldNames::Proto`], in field-number order.
//! - int64 values are strings (`"128"`); enums are their names (`"F32"`), and a
//!   number the schema has no name for is written as a bare number (`2000`).
//! - Zero scalars, zero enums and empty lists are left out; a singular message
//!   that is set (`layout`, `physicalShape`, `result`) is written even when empty,
//!   as `{}`.
//! - Compact by default; [`PrintOptions::pretty`] indents by two spaces exactly as
//!   `json_format.MessageToJson` does. Strings are ASCII, other characters escaped.
//! - The retired `LayoutProto` fields 2-5 (`paddedDimensions`, `paddingValue`,
//!   `format`, `maxSparseElements`), which this crate's schema names, are written
//!   under those names when set. XLA's schema only reserves those numbers, so
//!   Google's printers drop them and Google's parsers reject their keys unless told
//!   to ignore unknown fields.
//! - Unknown fields of a binary message are not written (as Google's printers do).
//!
//! # Reading
//!
//! - Keys may be JSON names or proto names (the legacy ones included). An unknown
//!   key is an error, or skipped with [`ParseOptions::ignore_unknown_fields`]
//!   (which also skips an enum name the schema does not know).
//! - `null` is the field's default (an unset message, an empty list); `null` inside
//!   a list is an error.
//! - Integers may be JSON numbers or strings, read as Python's `json_format` reads
//!   them: an exponent or fraction must give an integral value (`1e3`, `"1.0"`);
//!   strings may have `_` between digits, a sign, leading zeros and surrounding
//!   whitespace other than a plain space (`" 5"` is refused, `"\t5"` is not). A
//!   value that does not fit is an error, never truncated.
//! - Enums may be names or numbers (JSON numbers or numeric strings).
//! - Duplicate keys are an error, and so is one field given twice under its two
//!   names (as Google's C++, Go and Java parsers do; Python's keeps the last).
//! - Messages nest at most [`MAX_MESSAGE_DEPTH`] deep, and arrays and objects at
//!   most 512 deep, so no input can exhaust the stack.
//!
//! Where this reader deliberately refuses what Python's `json_format` accepts (the
//! C++, Go and Java parsers refuse all of them too):
//!
//! - a JSON value of the wrong type that Python happens to iterate over: an array or
//!   a string for a message (`"layout": []`, a top-level `"F32"` under
//!   `ignore_unknown_fields`), read by Python as an empty message;
//! - `true` or `11.5` for an enum, which Python reads as 1 and 11;
//! - an enum number outside int32 whose low 32 bits happen to fit: Python (upb)
//!   refuses 2^31 but keeps only the low 32 bits of 2^32 (0) or -2^63 + 1 (1);
//! - one field under both its names in one object (`elementType` and
//!   `element_type`), where Python keeps the last;
//! - `NaN` for an enum under `ignore_unknown_fields`, which Python skips;
//! - arrays or objects nested deeper than 512 inside an ignored value.
//!
//! And where the schemas differ: the legacy keys above are fields here, so they are
//! read (and their enum names checked) where Google's parser with XLA's schema
//! rejects them, or drops them under `ignore_unknown_fields`.
//!
//! [proto3 JSON mapping]: https://protobuf.dev/programming-guides/json/
//!
//! ```
//! use xla_shape::json::{ParseOptions, PrintOptions, ProtoJson};
//! use xla_shape::proto::ShapeProto;
//!
//! let shape = ShapeProto::from_json(
//!     r#"{"elementType": "F32", "dimensions": [2, "3"], "layout": {"minor_to_major": [1, 0]}}"#,
//!     &ParseOptions::new(),
//! )?;
//! assert_eq!(
//!     shape.to_json(&PrintOptions::new()),
//!     r#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"]}}"#
//! );
//! # Ok::<(), xla_shape::json::JsonError>(())
//! ```

mod error;
mod fields;
mod number;
mod print;

pub use print::Part;
mod read;
mod syntax;

pub use error::{JsonError, JsonErrorKind};

use crate::message::{AnyMessage, MessageKind, ProgramPart};
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};

/// How deeply messages may nest in JSON input, counting the top-level message as 1:
/// the limit of Google's parsers (Python's `max_recursion_depth`, C++'s and Go's
/// recursion limits) and of the binary decoders.
pub const MAX_MESSAGE_DEPTH: usize = 100;

/// Which names the keys of written JSON have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FieldNames {
    /// The lowerCamelCase JSON names, e.g. `elementType` (the proto3 default).
    #[default]
    Json,
    /// The `.proto` field names, e.g. `element_type` (Python's
    /// `preserving_proto_field_name=True`).
    Proto,
}

/// How to write JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrintOptions {
    /// Which names keys have.
    pub field_names: FieldNames,
    /// Indent by two spaces, one key or element per line, as
    /// `json_format.MessageToJson` does; compact (no whitespace at all) otherwise.
    pub pretty: bool,
}

impl PrintOptions {
    /// Compact output with lowerCamelCase keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// These options with `pretty` set.
    #[must_use]
    pub fn pretty(mut self, pretty: bool) -> Self {
        self.pretty = pretty;
        self
    }

    /// These options with the key names set.
    #[must_use]
    pub fn field_names(mut self, names: FieldNames) -> Self {
        self.field_names = names;
        self
    }
}

/// How to read JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Skip keys that name no field, and enum names the schema does not know
    /// (Google's `ignore_unknown_fields`), instead of failing.
    pub ignore_unknown_fields: bool,
}

impl ParseOptions {
    /// Strict reading: unknown keys are errors.
    pub fn new() -> Self {
        Self::default()
    }

    /// These options with `ignore_unknown_fields` set.
    #[must_use]
    pub fn ignore_unknown_fields(mut self, ignore: bool) -> Self {
        self.ignore_unknown_fields = ignore;
        self
    }
}

/// A message that has a proto3 JSON form.
pub trait ProtoJson: Sized + private::Sealed {
    /// This message as JSON text (no final newline).
    fn to_json(&self, options: &PrintOptions) -> String;

    /// Reads a message from JSON text.
    ///
    /// # Errors
    ///
    /// When the text is not JSON, or not this message in proto3 JSON; the error says
    /// which field and where (see [`JsonError`]).
    fn from_json(json: &str, options: &ParseOptions) -> Result<Self, JsonError>;

    /// Reads a message from JSON bytes, which must be UTF-8.
    ///
    /// # Errors
    ///
    /// As [`ProtoJson::from_json`], and when the bytes are not UTF-8.
    fn from_json_slice(json: &[u8], options: &ParseOptions) -> Result<Self, JsonError> {
        Self::from_json(utf8(json)?, options)
    }
}

/// [`ProtoJson::from_json_slice`] of a `ShapeProto`, handing each element of the
/// top-level `tuple_shapes` to `element` as soon as it is read instead of keeping it,
/// so that a huge tuple costs the memory of one element. Returns the message without
/// those elements. The callback sees every element read before an error; the error is
/// the one `from_json_slice` gives.
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn shape_from_json_streaming(
    json: &[u8],
    options: &ParseOptions,
    element: &mut dyn FnMut(ShapeProto),
) -> Result<ShapeProto, JsonError> {
    read::read_shape_streaming(utf8(json)?, options, element)
}

/// [`shape_from_json_streaming`] into nested tuples too: an element that is a plain
/// tuple (`"elementType": "TUPLE"` and a non-empty `tupleShapes`, no other key) is read
/// the same way, so that every other shape goes to `leaf` with its path of tuple
/// indices (`[2, 0]` is element 0 of the top-level element 2) and a huge tuple costs
/// the memory of one shape however its elements nest. Returns the top-level message
/// without its elements; the callback sees every shape read before an error, and the
/// error is the one `from_json_slice` gives. Finding a plain tuple looks ahead over its
/// elements by their brackets, so text that nests `d` plain tuples is scanned up to
/// `d + 1` times (`d` is at most [`MAX_MESSAGE_DEPTH`]).
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn shape_from_json_leaves(
    json: &[u8],
    options: &ParseOptions,
    leaf: &mut dyn FnMut(&[usize], ShapeProto),
) -> Result<ShapeProto, JsonError> {
    read::read_shape_leaves(utf8(json)?, options, leaf)
}

/// [`shape_from_json_leaves`] that opens every tuple with elements below the top level,
/// whatever fields of its own it has (its dimensions, layout or dynamic flags, which
/// the JSON may give before or after its elements), telling `tree` when it enters one
/// (`None`) and when it leaves it (the tuple without its elements), so that a tuple
/// of a tuple with fields of its own costs the memory of one shape too. The same
/// reading, with the same errors.
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn shape_from_json_tree(
    json: &[u8],
    options: &ParseOptions,
    leaf: &mut dyn FnMut(&[usize], ShapeProto),
    tree: &mut dyn FnMut(&[usize], Option<ShapeProto>),
) -> Result<ShapeProto, JsonError> {
    read::read_shape_tree(utf8(json)?, options, leaf, tree)
}

/// What [`program_shape_from_json_leaves`] read: the result, and how many parameters
/// and parameter names there were.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamedProgram {
    /// The result shape, if given and read whole.
    pub result: Option<ShapeProto>,
    /// Whether the result was handed to the callback a shape at a time (a plain
    /// tuple), and so is not in `result`.
    pub result_streamed: bool,
    /// The number of parameters handed to the callback.
    pub parameters: usize,
    /// The number of parameter names read.
    pub names: usize,
}

/// [`ProtoJson::from_json_slice`] of a `ProgramShapeProto`, handing the shapes of each
/// parameter, and of the result when it is a plain tuple, to `leaf` as they are read
/// (the part, the shape's path of tuple indices inside the part, `[]` for the part
/// itself; plain tuples are opened as [`shape_from_json_leaves`] opens them) and
/// reading the parameter names without keeping them, so that a program shape of a
/// million parameters, or of a result of a million shapes, costs the memory of one. The callback sees every shape read before an error; the error is
/// the one `from_json_slice` gives.
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn program_shape_from_json_leaves(
    json: &[u8],
    options: &ParseOptions,
    leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
) -> Result<StreamedProgram, JsonError> {
    program_shape_from_json_streamed(json, options, leaf, &mut |_, _| {})
}

/// What [`program_shape_from_json_tree`] tells of each tuple it opens: its part, its
/// path inside the part (`[]` for the part itself), and `None` when it is entered, the
/// tuple without its elements when it is left.
pub type ProgramTreeFn<'a> = dyn FnMut(ProgramPart, &[usize], Option<ShapeProto>) + 'a;

/// [`program_shape_from_json_leaves`] that opens every part that is a tuple with
/// elements, whatever fields of its own it has (a parameter, or the result), and every
/// tuple inside one, telling `tree` when it enters one (`None`) and leaves it (the
/// tuple without its elements), with its part and its path inside the part (`[]` for
/// the part itself), and each parameter name (its index and the text) as read. A result
/// opened so is said to be streamed. The same reading, with the same errors.
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn program_shape_from_json_tree(
    json: &[u8],
    options: &ParseOptions,
    leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
    tree: &mut ProgramTreeFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<StreamedProgram, JsonError> {
    let mut name = |i, text: String| name(i, &text);
    let (result, result_streamed, parameters, names) =
        read::read_program_shape_tree(utf8(json)?, options, leaf, tree, &mut name)?;
    Ok(StreamedProgram {
        result,
        result_streamed,
        parameters,
        names,
    })
}

/// [`program_shape_from_json_leaves`] with each parameter name (its index and the
/// text) handed on as read.
///
/// # Errors
/// As [`ProtoJson::from_json_slice`].
pub fn program_shape_from_json_streamed(
    json: &[u8],
    options: &ParseOptions,
    leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
    name: &mut dyn FnMut(usize, &str),
) -> Result<StreamedProgram, JsonError> {
    let (result, result_streamed, parameters, names) =
        read::read_program_shape_leaves(utf8(json)?, options, leaf, &mut |i, text| {
            name(i, &text);
        })?;
    Ok(StreamedProgram {
        result,
        result_streamed,
        parameters,
        names,
    })
}

/// The proto3 JSON of a program shape written a parameter at a time: what
/// [`to_json`] gives for the whole program shape, without holding its parameters.
pub struct ProgramJson(print::ProgramPrinter);

impl std::fmt::Debug for ProgramJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgramJson")
    }
}

impl ProgramJson {
    /// A program shape printed with `options`, with no parameter yet.
    pub fn new(options: &PrintOptions) -> Self {
        ProgramJson(print::ProgramPrinter::new(options))
    }

    /// Appends the next parameter.
    pub fn parameter(&mut self, shape: &ShapeProto) {
        self.0.parameter(Part::Shape(shape));
    }

    /// The text printed so far, taken out, so that it can be written while the
    /// printing goes on ([`finish`](Self::finish) then gives the rest).
    pub fn take(&mut self) -> String {
        self.0.take()
    }

    /// Appends the next parameter, given as a shape or as its JSON already printed
    /// ([`TupleJson::nested`] at depth 2).
    pub fn parameter_part(&mut self, shape: Part<'_>) {
        self.0.parameter(shape);
    }

    /// The JSON text (no final newline), ended by the result and the parameter names.
    pub fn finish<'n>(
        self,
        result: Option<&ShapeProto>,
        names: impl ExactSizeIterator<Item = &'n str>,
    ) -> String {
        self.0.finish(result.map(Part::Shape), names)
    }

    /// Closes the parameters and prints the result's key: the result's JSON, printed
    /// by a [`TupleJson::nested`] at depth 1, comes next, in the caller's output after
    /// what [`take`](Self::take) gives; then [`finish`](Self::finish) with no result.
    /// For a result whose JSON is too large to hold.
    pub fn start_result(&mut self) {
        self.0.start_result();
    }

    /// [`Self::finish`] with the result given as a shape or as its JSON already
    /// printed ([`TupleJson::nested`] at depth 1).
    pub fn finish_part<'n>(
        self,
        result: Option<Part<'_>>,
        names: impl ExactSizeIterator<Item = &'n str>,
    ) -> String {
        self.0.finish(result, names)
    }
}

/// The proto3 JSON of a tuple (element type `TUPLE` and its elements, and with
/// [`TupleJson::with_fields`] fields of its own), written an element at a time: what
/// [`to_json`] gives for the whole tuple, without holding it.
pub struct TupleJson(print::TuplePrinter);

impl std::fmt::Debug for TupleJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TupleJson")
    }
}

impl TupleJson {
    /// A tuple printed with `options`, with no element yet.
    pub fn new(options: &PrintOptions) -> Self {
        TupleJson(print::TuplePrinter::new(options))
    }

    /// A plain tuple printed inside `depth` open objects and arrays (with `pretty`,
    /// indented as there): a parameter of a program shape (depth 2) or its result
    /// (depth 1), given to [`ProgramJson`] as a [`Part::Printed`].
    pub fn nested(options: &PrintOptions, depth: usize) -> Self {
        let plain = ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..Default::default()
        };
        Self::nested_with_fields(options, &plain, depth)
    }

    /// [`TupleJson::nested`] of a tuple with fields of its own, those of `shell` (as
    /// [`TupleJson::with_fields`]): a program shape's part that is such a tuple.
    pub fn nested_with_fields(options: &PrintOptions, shell: &ShapeProto, depth: usize) -> Self {
        TupleJson(print::TuplePrinter::at_depth(options, shell, depth))
    }

    /// A tuple with fields of its own besides its elements, those of `shell` (a tuple
    /// without its elements): its dimensions printed before the elements, its layout
    /// and dynamic flags after them, where the whole message puts them.
    pub fn with_fields(options: &PrintOptions, shell: &ShapeProto) -> Self {
        TupleJson(print::TuplePrinter::with_fields(options, shell))
    }

    /// Appends the next element.
    pub fn element(&mut self, shape: &ShapeProto) {
        self.0.element(shape);
    }

    /// Opens a tuple of nothing but elements (element type `TUPLE`) as the next
    /// element; the elements that follow are its own until [`close`](Self::close).
    pub fn open(&mut self) {
        self.0.open();
    }

    /// Closes the tuple last opened by [`open`](Self::open).
    pub fn close(&mut self) {
        self.0.close();
    }

    /// Opens a tuple with fields of its own as the next element, those of `shell` (the
    /// tuple without its elements): its element type and dimensions are printed now,
    /// before the elements that follow, which are its own until
    /// [`close_with`](Self::close_with).
    pub fn open_with(&mut self, shell: &ShapeProto) {
        self.0.open_with(shell);
    }

    /// Closes the tuple last opened, printing the fields of `shell` that the whole
    /// message puts after its elements (its layout and dynamic flags).
    pub fn close_with(&mut self, shell: &ShapeProto) {
        self.0.close_with(shell);
    }

    /// The text, closed (no final newline, as [`to_json`]).
    pub fn finish(self) -> String {
        self.0.finish()
    }

    /// [`finish`](Self::finish), the top-level tuple's layout and dynamic flags taken
    /// from `shell` (the tuple without its elements) in place of those it was made
    /// with: JSON may give them after the elements.
    pub fn finish_with(mut self, shell: &ShapeProto) -> String {
        self.0.set_tail(shell);
        self.0.finish()
    }

    /// The text printed so far, taken out, so that it can be written while the
    /// printing goes on ([`finish`](Self::finish) then gives the rest).
    pub fn take(&mut self) -> String {
        self.0.take()
    }
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::ShapeProto {}
    impl Sealed for super::LayoutProto {}
    impl Sealed for super::ProgramShapeProto {}
}

fn utf8(json: &[u8]) -> Result<&str, JsonError> {
    std::str::from_utf8(json).map_err(|e| {
        let valid = json.get(..e.valid_up_to()).unwrap_or_default();
        // The prefix is valid UTF-8, so this cannot fail; fall back to the start.
        let text = std::str::from_utf8(valid).unwrap_or_default();
        JsonError::at_offset(text, text.len(), JsonErrorKind::NotUtf8)
    })
}

macro_rules! proto_json {
    ($ty:ty, $print:ident, $read:ident) => {
        impl ProtoJson for $ty {
            fn to_json(&self, options: &PrintOptions) -> String {
                let mut printer = print::Printer::new(options);
                printer.$print(self);
                printer.finish()
            }

            fn from_json(json: &str, options: &ParseOptions) -> Result<Self, JsonError> {
                read::read(json, options, read::Reader::$read)
            }
        }
    };
}

proto_json!(ShapeProto, shape, shape);
proto_json!(LayoutProto, layout, layout);
proto_json!(ProgramShapeProto, program_shape, program_shape);

/// Any of the three messages as JSON text (no final newline).
pub fn to_json(message: &AnyMessage, options: &PrintOptions) -> String {
    match message {
        AnyMessage::Shape(m) => m.to_json(options),
        AnyMessage::Layout(m) => m.to_json(options),
        AnyMessage::ProgramShape(m) => m.to_json(options),
    }
}

/// Reads a message of the given kind from JSON bytes (UTF-8).
///
/// # Errors
///
/// When the bytes are not UTF-8 JSON, or not that message in proto3 JSON; the error
/// says which field and where (see [`JsonError`]).
pub fn from_json(
    kind: MessageKind,
    json: &[u8],
    options: &ParseOptions,
) -> Result<AnyMessage, JsonError> {
    Ok(match kind {
        MessageKind::Shape => AnyMessage::Shape(ShapeProto::from_json_slice(json, options)?),
        MessageKind::Layout => AnyMessage::Layout(LayoutProto::from_json_slice(json, options)?),
        MessageKind::ProgramShape => {
            AnyMessage::ProgramShape(ProgramShapeProto::from_json_slice(json, options)?)
        }
    })
}
