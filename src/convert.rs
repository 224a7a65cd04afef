//! The faithful codec between the binary, JSON and HLO text forms of one message, as
//! `xla-shape convert` and the Python binding's `convert` run it.
//!
//! Every conversion is [`read()`] (input form → [`Decoded<AnyMessage>`]) then [`write()`]
//! (→ output form). Nothing is validated: the only failures are input that cannot be
//! read and values the target form cannot express.
//!
//! ```
//! use xla_shape::convert::{self, Form, Options};
//! use xla_shape::MessageKind;
//!
//! let options = Options::default();
//! let decoded = convert::read(Form::Hlo, MessageKind::Shape, b"f32[2,3]", &options)?;
//! let json = convert::write(Form::Json, &decoded, &options)?;
//! assert_eq!(
//!     String::from_utf8(json).unwrap(),
//!     "{\"elementType\":\"F32\",\"dimensions\":[\"2\",\"3\"],\"layout\":\
//!      {\"minorToMajor\":[\"1\",\"0\"],\"tailPaddingAlignmentInElements\":\"1\"},\
//!      \"isDynamicDimension\":[false,false]}\n"
//! );
//! # Ok::<(), convert::ConvertError>(())
//! ```

use std::fmt;

use crate::codec::{self, DecodeError, Decoded};
use crate::json::{self, JsonError};
use crate::message::ProgramPart;
use crate::path::Path;
use crate::spool::Spool;
use crate::text::{self, HloStyle, ParseError, PrintError};
use crate::{AnyMessage, MessageKind};

/// A form a message can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// The protobuf wire format: exactly the serialized message.
    Binary,
    /// The proto3 JSON mapping.
    Json,
    /// XLA's HLO text form.
    Hlo,
}

/// The keys of JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum JsonNames {
    /// lowerCamelCase json names (`elementType`), the proto3 JSON default.
    #[default]
    Camel,
    /// The `.proto` field names (`element_type`).
    Proto,
}

/// Options of reading and writing (the command line's `--json-names`, `--pretty`,
/// `--ignore-unknown-fields` and `--hlo-style`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The keys of JSON output.
    pub json_names: JsonNames,
    /// Indent JSON output.
    pub pretty: bool,
    /// Skip JSON keys the schema does not know instead of refusing them.
    pub ignore_unknown_fields: bool,
    /// HLO text output: XLA's text, or the lossless text.
    pub hlo_style: HloStyle,
}

/// Why a conversion failed. `Display` gives the reason alone, as the command line
/// prints it after the input's name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConvertError {
    /// Binary input that does not decode.
    Decode(DecodeError),
    /// JSON input that is not the message in proto3 JSON.
    Json(JsonError),
    /// HLO text input that is not UTF-8.
    NotUtf8(String),
    /// HLO text input that does not parse; `rendered` shows the input with a caret.
    Parse {
        /// The parser's error, with the byte span.
        error: ParseError,
        /// [`ParseError::render`] over the input.
        rendered: String,
    },
    /// HLO text that nests deeper than protobuf runtimes read.
    TooDeep {
        /// How deep the message nests.
        depth: usize,
    },
    /// A value the HLO text in the chosen style cannot express.
    Print(PrintError),
    /// The output's temporary file could not be written or read back
    /// ([`Spool`]).
    Spool(String),
    /// An unknown field, which the lossless text cannot carry.
    UnknownField {
        /// Where the field is.
        path: Path,
        /// Its field number.
        number: u32,
    },
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Decode(e) => e.fmt(f),
            ConvertError::Json(e) => e.fmt(f),
            ConvertError::NotUtf8(e) => write!(f, "hlo text is not UTF-8: {e}"),
            ConvertError::Parse { rendered, .. } => f.write_str(rendered),
            ConvertError::TooDeep { depth } => write!(
                f,
                "the shape nests {depth} messages deep; protobuf runtimes (and this codec) read at most {}",
                codec::wire::RECURSION_LIMIT
            ),
            ConvertError::Print(e) => e.fmt(f),
            ConvertError::Spool(e) => f.write_str(e),
            ConvertError::UnknownField { path, number } => write!(
                f,
                "{}unknown field {number} has no text form (--hlo-style xla drops it with a warning)",
                at(path)
            ),
        }
    }
}

impl std::error::Error for ConvertError {}

/// `PATH: ` in front of a message, or nothing for the message itself.
pub fn at(path: &Path) -> String {
    if path.is_root() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// Reads a message of `kind` in `form`.
///
/// # Errors
/// A [`ConvertError`] when the input cannot be read as that message.
pub fn read(
    form: Form,
    kind: MessageKind,
    bytes: &[u8],
    options: &Options,
) -> Result<Decoded<AnyMessage>, ConvertError> {
    match form {
        Form::Binary => codec::decode_any(kind, bytes).map_err(ConvertError::Decode),
        Form::Hlo => read_hlo(kind, bytes),
        Form::Json => read_json(kind, bytes, options),
    }
}

/// Writes a message in `form`: binary canonically, JSON and HLO text with a final
/// newline.
///
/// # Errors
/// A [`ConvertError`] when the message has a value the form cannot express.
pub fn write(
    form: Form,
    decoded: &Decoded<AnyMessage>,
    options: &Options,
) -> Result<Vec<u8>, ConvertError> {
    match form {
        Form::Binary => Ok(codec::encode_any(decoded)),
        Form::Hlo => write_hlo(decoded, options.hlo_style),
        Form::Json => Ok(write_json(decoded, options)),
    }
}

/// Proto3 JSON in; errors name the field path, line and column.
fn read_json(
    kind: MessageKind,
    bytes: &[u8],
    options: &Options,
) -> Result<Decoded<AnyMessage>, ConvertError> {
    let parse = json::ParseOptions::new().ignore_unknown_fields(options.ignore_unknown_fields);
    json::from_json(kind, bytes, &parse)
        .map(|message| Decoded {
            message,
            unknown: codec::UnknownFields::new(),
        })
        .map_err(ConvertError::Json)
}

/// Proto3 JSON out, with a final newline. Unknown fields are dropped, as Google's
/// JSON printers drop them.
fn write_json(decoded: &Decoded<AnyMessage>, options: &Options) -> Vec<u8> {
    let mut out = json::to_json(&decoded.message, &json_print_options(options));
    out.push('\n');
    out.into_bytes()
}

fn json_print_options(options: &Options) -> json::PrintOptions {
    let names = match options.json_names {
        JsonNames::Camel => json::FieldNames::Json,
        JsonNames::Proto => json::FieldNames::Proto,
    };
    json::PrintOptions::new()
        .field_names(names)
        .pretty(options.pretty)
}

/// A binary `ShapeProto` to JSON or HLO text (`to`), a top-level tuple one element at
/// a time: the same bytes as [`read()`] then [`write()`] give, in the memory of the
/// input, the output and one element. A tuple with fields of its own besides its
/// elements (dimensions, a layout, dynamic flags) is read twice, its own fields first
/// (as for [`binary_shape_to_binary`]). `None` when the message is not a tuple with
/// elements, which [`read()`] and [`write()`] then convert whole. A tuple whose shapes
/// hold unknown fields is `None` too, except into the lossless text, which refuses it
/// with the error [`write()`] gives (the whole message's first unknown field: the
/// tuple's own, then its elements' in order, then its layout's).
///
/// # Errors
/// As [`read()`] of a binary shape, then [`write()`]: a decode error first, then an
/// unknown field the lossless text cannot carry.
pub fn binary_shape_to_text(
    bytes: &[u8],
    to: Form,
    options: &Options,
) -> Option<Result<Spool, ConvertError>> {
    match binary_shape_to_text_dropping_unknown(bytes, to, options)? {
        Ok(Dropping {
            output, dropped, ..
        }) => dropped.is_empty().then_some(Ok(output)),
        Err(e) => Some(Err(e)),
    }
}

/// What [`binary_shape_to_text_dropping_unknown`] gives: the output, and the unknown
/// fields it left out.
#[derive(Debug)]
pub struct Dropping {
    /// The converted message (past a few megabytes, in a temporary file).
    pub output: Spool,
    /// The unknown fields left out, in the order (and with the paths)
    /// [`Decoded::unknown_fields`] of the whole message gives: the first
    /// [`crate::validate::MAX_LISTED_UNKNOWN`] of them.
    pub dropped: Vec<codec::UnknownFieldInfo>,
    /// How many more were left out.
    pub more: usize,
}

/// The unknown fields of a message that JSON and XLA's text leave out, as
/// [`Decoded::unknown_fields`] lists them: the first
/// [`crate::validate::MAX_LISTED_UNKNOWN`], and how many more (a message may hold
/// millions).
pub fn dropped_fields(decoded: &Decoded<AnyMessage>) -> (Vec<codec::UnknownFieldInfo>, usize) {
    let mut first = FirstFields::new(crate::validate::MAX_LISTED_UNKNOWN);
    decoded.for_each_unknown_field(|field| first.push(field));
    (first.fields, first.more)
}

/// The first `keep` unknown fields pushed, and how many more.
struct FirstFields {
    keep: usize,
    fields: Vec<codec::UnknownFieldInfo>,
    more: usize,
}

impl FirstFields {
    fn new(keep: usize) -> Self {
        Self {
            keep,
            fields: Vec::new(),
            more: 0,
        }
    }

    fn push(&mut self, field: codec::UnknownFieldInfo) {
        if self.fields.len() < self.keep {
            self.fields.push(field);
        } else {
            self.more += 1;
        }
    }

    /// Pushes `field`, found at `prefix` (only a field kept needs its whole path).
    fn push_at(&mut self, mut field: codec::UnknownFieldInfo, prefix: &Path) {
        if self.fields.len() < self.keep {
            field.path = field.path.prefixed(prefix);
        }
        self.push(field);
    }

    /// Those of `other` next.
    fn append(&mut self, other: FirstFields) {
        for field in other.fields {
            self.push(field);
        }
        self.more += other.more;
    }

    /// The unknown fields of the tuple at `path` (read without its elements, `shell`)
    /// with those of its `elements`, in the whole listing's order: its own, then its
    /// elements', then its layout's (children are visited by field number).
    fn of_tuple(
        shell: &Decoded<crate::proto::ShapeProto>,
        path: &[usize],
        elements: FirstFields,
    ) -> Self {
        Self::of_tuple_at(shell, &codec::tuple_path(path), elements)
    }

    /// [`FirstFields::of_tuple`] of the tuple at `prefix`, its proto path.
    fn of_tuple_at(
        shell: &Decoded<crate::proto::ShapeProto>,
        prefix: &Path,
        elements: FirstFields,
    ) -> Self {
        let keep = elements.keep;
        let (mut own, mut layout) = (FirstFields::new(keep), FirstFields::new(keep));
        shell.for_each_unknown_field(|field| {
            let at = if field.path.is_root() {
                &mut own
            } else {
                &mut layout
            };
            at.push_at(field, prefix);
        });
        own.append(elements);
        own.append(layout);
        own
    }
}

/// The unknown fields of a tuple read a shape at a time ([`Part`]s), in the whole
/// listing's order: those dropped so far from the innermost open tuple's elements, and
/// those of each tuple around it (a nested tuple's own come before its elements', so
/// its elements' wait for it to be left).
struct TreeFields {
    dropped: FirstFields,
    outer: Vec<FirstFields>,
}

impl TreeFields {
    fn new(keep: usize) -> Self {
        Self {
            dropped: FirstFields::new(keep),
            outer: Vec::new(),
        }
    }

    /// The unknown fields of `piece`, of the tuple that stands at `base`; whether it
    /// had any (a copy of a retired layout field is none: it is named).
    fn take(&mut self, base: &Path, piece: &Part<'_>) -> bool {
        let keep = self.dropped.keep;
        match piece {
            Part::Leaf(path, shape) => {
                let mut any = false;
                if !shape.holds_no_unknown() {
                    let prefix = codec::tuple_path(path).prefixed(base);
                    let dropped = &mut self.dropped;
                    shape.for_each_unknown_field(|field| {
                        any = true;
                        dropped.push_at(field, &prefix);
                    });
                }
                any
            }
            Part::Enter(..) => {
                let inner = std::mem::replace(&mut self.dropped, FirstFields::new(keep));
                self.outer.push(inner);
                false
            }
            Part::Leave(path, shell) => {
                let parent = self.outer.pop().unwrap_or_else(|| FirstFields::new(keep));
                let elements = std::mem::replace(&mut self.dropped, parent);
                let prefix = codec::tuple_path(path).prefixed(base);
                let tuple = FirstFields::of_tuple_at(shell, &prefix, elements);
                let any = !tuple.fields.is_empty();
                self.dropped.append(tuple);
                any
            }
        }
    }

    /// The fields gathered, the tree left empty.
    fn take_all(&mut self) -> FirstFields {
        let keep = self.dropped.keep;
        std::mem::replace(&mut self.dropped, FirstFields::new(keep))
    }
}

/// [`binary_shape_to_text`] for a tuple whose shapes may hold unknown fields. Into
/// the forms that drop them, proto3 JSON and XLA's text ([`HloStyle::Xla`]), as
/// [`write()`] does: the bytes and the fields dropped, for the caller to say so (none
/// for a plain tuple; the first [`crate::validate::MAX_LISTED_UNKNOWN`] listed, the
/// rest counted, so that millions of them cost nothing to keep). Into the lossless
/// text, which has no form for them: the first of them refused, as [`write()`]
/// refuses it. A tuple with fields of its own prints them where the whole message does
/// (JSON), or is refused as its whole printing refuses them (a layout in HLO text).
/// `None` for a message that is not a tuple, which [`read()`] and [`write()`] then
/// convert whole.
///
/// # Errors
/// As [`binary_shape_to_text`].
pub fn binary_shape_to_text_dropping_unknown(
    bytes: &[u8],
    to: Form,
    options: &Options,
) -> Option<Result<Dropping, ConvertError>> {
    let lossless = to == Form::Hlo && options.hlo_style == HloStyle::Exact;
    let own = match own_fields_shell(bytes) {
        Ok(own) => own,
        Err(e) => return Some(Err(e)),
    };
    // Into the lossless text only the first field is refused, and nothing is written
    // once there is one: the rest are neither kept nor printed.
    let keep = if lossless {
        1
    } else {
        crate::validate::MAX_LISTED_UNKNOWN
    };
    let mut writer = match &own {
        Some(shell) => TupleWriter::with_fields(to, options, shell.clone()),
        None => TupleWriter::new(to, options),
    };
    let mut fields = TreeFields::new(keep);
    // Into the lossless text only the first field is refused, and nothing is written
    // once there is one.
    let mut any = false;
    let root = Path::root();
    let shell = stream_tuple(bytes, own.is_some(), &mut |part| {
        // The tuples are still entered and left, to find the first field in order.
        let write = !(lossless && any);
        any |= fields.take(&root, &part);
        match part {
            Part::Leaf(path, element) => {
                if !(lossless && any) {
                    writer.put(path, &element.message);
                }
            }
            Part::Enter(path, own) => {
                if write {
                    writer.enter(path, own);
                }
            }
            Part::Leave(_, shell) => {
                if write {
                    writer.leave(shell);
                }
            }
        }
    })?;
    Some(shell.and_then(|shell| {
        let fields = FirstFields::of_tuple(&shell, &[], fields.take_all());
        match fields.fields.first() {
            Some(field) if lossless => Err(ConvertError::UnknownField {
                path: field.path.clone(),
                number: field.number,
            }),
            _ => writer.finish().map(|output| Dropping {
                output,
                dropped: fields.fields,
                more: fields.more,
            }),
        }
    }))
}

/// What [`stream_tuple`] hands on, in the order of the input.
enum Part<'a> {
    /// A shape that is not opened (an array, a tuple read whole), at its path of tuple
    /// indices.
    Leaf(&'a [usize], Decoded<crate::proto::ShapeProto>),
    /// A nested tuple opened, at its path, with its own fields read ahead of its
    /// elements.
    Enter(&'a [usize], &'a crate::proto::ShapeProto),
    /// The nested tuple last entered, left: its own fields and unknown fields.
    Leave(&'a [usize], Decoded<crate::proto::ShapeProto>),
}

/// Decodes a binary `ShapeProto` a shape at a time ([`codec::decode_shape_tree`]:
/// every nested tuple with elements is opened, whatever else it holds), handing each
/// shape with its path and unknown fields, and each nested tuple entered and left, to
/// `each` ([`Part`]). Returns the top-level message without its elements when it is a
/// tuple (its element type and at least one element, nothing else but unknown fields,
/// or with `own_fields` anything else too); `None` when it is not; the decode error of
/// [`read()`] when there is one.
fn stream_tuple(
    bytes: &[u8],
    own_fields: bool,
    each: &mut dyn FnMut(Part<'_>),
) -> Option<Result<Decoded<crate::proto::ShapeProto>, ConvertError>> {
    let each = std::cell::RefCell::new(each);
    let decoded = codec::decode_shape_tree(
        bytes,
        &mut |path, _, element| (each.borrow_mut())(Part::Leaf(path, element)),
        &mut |event| {
            let part = match event {
                codec::TreeEvent::Enter(path, own) => Part::Enter(path, own),
                codec::TreeEvent::Leave(path, message, unknown) => {
                    Part::Leave(path, Decoded { message, unknown })
                }
            };
            (each.borrow_mut())(part);
        },
    );
    match decoded {
        Err(e) => Some(Err(ConvertError::Decode(e))),
        Ok(streamed)
            if streamed.is_tuple() || (own_fields && streamed.is_tuple_with_elements()) =>
        {
            Some(Ok(streamed.shell))
        }
        Ok(_) => None,
    }
}

/// A binary tuple with fields of its own besides its elements (dimensions, a layout,
/// dynamic flags: found by a look at its top-level fields,
/// [`codec::is_tuple_with_own_fields`]), without its elements, read by a first pass
/// over the input so that a second can write those fields where the whole message
/// puts them. `None` for anything else (a plain tuple is streamed in one pass).
///
/// # Errors
/// The decode error of [`read()`], found by the first pass.
fn own_fields_shell(
    bytes: &[u8],
) -> Result<Option<Decoded<crate::proto::ShapeProto>>, ConvertError> {
    if !codec::is_tuple_with_own_fields(bytes) {
        return Ok(None);
    }
    let streamed =
        codec::decode_shape_streaming(bytes, &mut |_, _, _| {}).map_err(ConvertError::Decode)?;
    Ok(streamed.is_tuple_with_elements().then_some(streamed.shell))
}

/// Proto3 JSON of a `ShapeProto` to any form (`to`), a top-level tuple a shape at a
/// time ([`json::shape_from_json_tree`]: every tuple that nests is opened, whatever
/// fields of its own it has): the same bytes as [`read()`] then [`write()`] give, in
/// the memory of the input, the output and one shape. A tuple with fields of its own
/// besides its elements at the top level (or, into JSON, which prints a tuple's
/// dimensions before its elements, a nested tuple with dimensions) is read twice, those
/// fields first. `None` when the message is not a tuple with elements, which [`read()`]
/// and [`write()`] then convert whole.
///
/// # Errors
/// As [`read()`] of a JSON shape, then [`write()`]: a read error first.
pub fn json_shape_to(
    bytes: &[u8],
    to: Form,
    options: &Options,
) -> Option<Result<Spool, ConvertError>> {
    let parse = json::ParseOptions::new().ignore_unknown_fields(options.ignore_unknown_fields);
    let (mut elements, mut nested) = (0, NestedDimensions::default());
    let writer = std::cell::RefCell::new(TupleWriter::new(to, options));
    let read = json::shape_from_json_tree(
        bytes,
        &parse,
        &mut |path, leaf| {
            elements = elements.max(path.first().map_or(0, |&i| i + 1));
            writer.borrow_mut().put(path, &leaf);
        },
        &mut |path, shell| match shell {
            None => writer.borrow_mut().enter(path, &nested.enter()),
            Some(shell) => {
                nested.leave(&shell);
                writer.borrow_mut().leave(Decoded::new(shell));
            }
        },
    );
    let writer = writer.into_inner();
    let again = to == Form::Json && nested.any;
    let shell = match read {
        Err(e) => return Some(Err(ConvertError::Json(e))),
        Ok(shell) if elements > 0 && codec::is_tuple_shell(&shell) && !again => {
            return Some(writer.finish())
        }
        Ok(shell) if codec::has_tuple_elements(elements, &shell) => shell,
        Ok(_) => return None,
    };
    // Written again, the fields read by the first pass (which found no error) where
    // the whole message puts them: the top-level tuple's own, and into JSON the
    // dimensions of the nested tuples, printed before their elements.
    drop(writer);
    let writer = std::cell::RefCell::new(if codec::is_tuple_shell(&shell) {
        TupleWriter::new(to, options)
    } else {
        TupleWriter::with_fields(to, options, Decoded::new(shell))
    });
    let mut entered = 0;
    let read = json::shape_from_json_tree(
        bytes,
        &parse,
        &mut |path, leaf| writer.borrow_mut().put(path, &leaf),
        &mut |path, shell| match shell {
            None => {
                let own = nested.of(entered);
                entered += 1;
                writer.borrow_mut().enter(path, &own);
            }
            Some(shell) => writer.borrow_mut().leave(Decoded::new(shell)),
        },
    );
    Some(match read {
        Err(e) => Err(ConvertError::Json(e)),
        Ok(_) => writer.into_inner().finish(),
    })
}

/// The dimensions of the nested tuples of a JSON tuple, in the order they are entered,
/// known when each is left (JSON may give them after the elements): what a second pass
/// prints before each one's elements.
#[derive(Default)]
struct NestedDimensions {
    /// Each entered tuple's dimensions, when it has some.
    dimensions: Vec<Option<Box<[i64]>>>,
    /// The entered tuples still open, by their place in `dimensions`.
    open: Vec<usize>,
    /// Whether any has dimensions.
    any: bool,
}

impl NestedDimensions {
    /// A tuple is entered: its own fields as far as known (none yet).
    fn enter(&mut self) -> crate::proto::ShapeProto {
        self.open.push(self.dimensions.len());
        self.dimensions.push(None);
        tuple_shell(Vec::new())
    }

    /// The tuple last entered is left, with its own fields.
    fn leave(&mut self, shell: &crate::proto::ShapeProto) {
        if let Some(at) = self.open.pop() {
            if !shell.dimensions.is_empty() {
                self.any = true;
                self.dimensions[at] = Some(shell.dimensions.clone().into_boxed_slice());
            }
        }
    }

    /// The own fields printed before the elements of the `entered`-th tuple entered.
    fn of(&self, entered: usize) -> crate::proto::ShapeProto {
        let dimensions = self.dimensions.get(entered).cloned().flatten();
        tuple_shell(dimensions.map(Vec::from).unwrap_or_default())
    }
}

/// A tuple without elements, with `dimensions`.
fn tuple_shell(dimensions: Vec<i64>) -> crate::proto::ShapeProto {
    crate::proto::ShapeProto {
        element_type: crate::proto::PrimitiveType::Tuple as i32,
        dimensions,
        ..Default::default()
    }
}

/// The JSON, HLO text or binary form of a plain tuple, a shape at a time: each shape
/// comes with its path of tuple indices ([`TupleWriter::put`]), and the tuples that
/// nest between one shape and the next are opened and closed from the paths.
struct TupleWriter {
    form: Writer,
    /// Text written so far, taken out of `form` as it grows so that the output is
    /// held in bounded memory ([`Spool`]); parts of a program shape are held whole.
    out: Option<Spool>,
    /// Shapes written since text was last taken out of `form`.
    pending: usize,
    /// The path of the innermost open nested tuple.
    open: Vec<usize>,
    /// Binary output: what the top-level tuple holds after its elements (its layout,
    /// dynamic flags and unknown fields).
    tail: Option<Decoded<crate::proto::ShapeProto>>,
    /// HLO text output: why the top-level tuple's own fields cannot be printed (a
    /// layout, or dimensions in the lossless text), which the whole printing says
    /// before it prints an element. Nothing is written then.
    refused: Option<text::PrintError>,
}

enum Writer {
    Json(json::TupleJson),
    Hlo(text::TupleText),
    /// The bytes, and where the body of each open nested tuple starts.
    Binary(Vec<u8>, Vec<usize>),
}

impl TupleWriter {
    /// A writer of a plain tuple (element type `TUPLE` and its elements).
    fn new(to: Form, options: &Options) -> Self {
        let plain = crate::proto::ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..Default::default()
        };
        Self::with_fields(to, options, Decoded::new(plain))
    }

    /// A writer of a tuple whose own fields are those of `shell` (the tuple without its
    /// elements, with its unknown fields): in JSON and binary its dimensions before the
    /// elements and the rest after them, where the whole message puts them; in HLO
    /// text, where a tuple shows none of them, the whole printing's refusal of those
    /// it cannot print.
    fn with_fields(to: Form, options: &Options, shell: Decoded<crate::proto::ShapeProto>) -> Self {
        let (mut tail, mut refused) = (None, None);
        let form = match to {
            Form::Json => Writer::Json(json::TupleJson::with_fields(
                &json_print_options(options),
                &shell.message,
            )),
            Form::Binary => {
                let (head, rest) = split_own_fields(shell);
                tail = Some(rest);
                Writer::Binary(codec::encode(&head), Vec::new())
            }
            _ => {
                // The tuple printed with no elements is refused exactly when it is
                // refused with them, before any element is printed.
                let own = AnyMessage::Shape(shell.message);
                refused = options.hlo_style.print_message(&own).err();
                Writer::Hlo(text::TupleText::new(options.hlo_style))
            }
        };
        Self {
            form,
            out: Some(Spool::new()),
            pending: 0,
            open: Vec::new(),
            tail,
            refused,
        }
    }

    /// A writer of a tuple that is `part` of a program shape, whose own fields are
    /// those of `own` as far as they are known before its elements (finished by
    /// [`Self::finish_part_as`] with them all): in JSON at its depth there, in HLO
    /// text with its path there.
    fn of_part(
        to: Form,
        options: &Options,
        part: ProgramPart,
        own: &crate::proto::ShapeProto,
    ) -> Self {
        let depth = match part {
            ProgramPart::Parameter(_) => 2,
            ProgramPart::Result => 1,
        };
        let form = match to {
            Form::Json => Writer::Json(json::TupleJson::nested_with_fields(
                &json_print_options(options),
                own,
                depth,
            )),
            Form::Hlo => Writer::Hlo(text::TupleText::under(options.hlo_style, part.path())),
            // The tuple's own fields go around its elements when it is finished.
            Form::Binary => Writer::Binary(Vec::new(), Vec::new()),
        };
        Self {
            form,
            // Text is spooled (HLO text taken before a refusal is dropped with the
            // spool); the bytes of a part are held, for its length to go in front.
            out: (to != Form::Binary).then(Spool::new),
            pending: 0,
            open: Vec::new(),
            tail: None,
            refused: None,
        }
    }

    /// The binary writer's [`Self::put`] of a shape already encoded (with its unknown
    /// fields).
    fn put_encoded(&mut self, path: &[usize], encoded: &[u8]) {
        if self.refused.is_some() {
            return;
        }
        self.nest_to(path);
        if let Writer::Binary(out, _) = &mut self.form {
            put_element(out, encoded);
        }
        self.spill();
    }

    /// Closes and opens the nested tuples between the last shape and the one at
    /// `path`.
    fn nest_to(&mut self, path: &[usize]) {
        let form = &mut self.form;
        text::nest_to(&mut self.open, path, &mut |enter| {
            if enter {
                form.open_tuple();
            } else {
                form.close();
            }
        });
    }

    /// Opens the nested tuple at `path`, whose own fields are those of `shell` (read
    /// ahead of its elements: [`codec::TreeEvent::Enter`]), after closing and opening
    /// the tuples between the last shape and it; the shapes that follow are its own
    /// until [`Self::leave`].
    fn enter(&mut self, path: &[usize], shell: &crate::proto::ShapeProto) {
        if self.refused.is_some() {
            return;
        }
        self.nest_to(path);
        self.open.extend(path.last());
        match &mut self.form {
            Writer::Json(w) => w.open_with(shell),
            Writer::Hlo(w) => w.open(),
            // Its own fields go in front of its elements when it is closed, with the
            // length of the whole.
            Writer::Binary(out, starts) => starts.push(out.len()),
        }
    }

    /// Closes the nested tuple last entered ([`Self::enter`]), whose own fields (and
    /// unknown fields) are those of `shell`, read after its elements
    /// ([`codec::TreeEvent::Leave`]): written where the whole message puts them.
    fn leave(&mut self, shell: Decoded<crate::proto::ShapeProto>) {
        if self.refused.is_some() {
            return;
        }
        self.open.pop();
        match &mut self.form {
            Writer::Json(w) => w.close_with(&shell.message),
            Writer::Hlo(w) => w.close_with(&shell.message),
            Writer::Binary(out, starts) => {
                let (head, tail) = split_own_fields(shell);
                let start = starts.pop().unwrap_or(out.len());
                close_element(out, start, &codec::encode(&head), &tail.encode_to_vec());
            }
        }
    }

    /// Writes the shape at `path` (`[i]` for element `i` of the top-level tuple,
    /// `[i, j]` for element `j` of a plain tuple that is element `i`, ...), after
    /// closing and opening the nested tuples between the last shape and this one. A
    /// shape HLO text cannot carry is refused by [`Self::finish`], as the whole
    /// tuple's printing refuses it.
    fn put(&mut self, path: &[usize], element: &crate::proto::ShapeProto) {
        if self.refused.is_some() {
            return;
        }
        self.nest_to(path);
        match &mut self.form {
            Writer::Json(w) => w.element(element),
            Writer::Hlo(w) => w.element(element),
            Writer::Binary(out, _) => put_element(out, &codec::encode(element)),
        }
        self.spill();
    }

    /// Every few shapes, moves the text or bytes written so far into the spool (bytes
    /// only between the top-level elements: a nested tuple's length goes in front of
    /// it when it is closed).
    fn spill(&mut self) {
        const SHAPES: usize = 512;
        self.pending += 1;
        if self.pending < SHAPES {
            return;
        }
        self.pending = 0;
        let Some(out) = &mut self.out else {
            return;
        };
        let text = match &mut self.form {
            Writer::Json(w) => w.take(),
            Writer::Hlo(w) => w.take(),
            Writer::Binary(bytes, starts) => {
                if starts.is_empty() {
                    out.push(bytes);
                    bytes.clear();
                }
                return;
            }
        };
        out.push(text.as_bytes());
    }
}

/// A tuple's own fields (`shell`, the tuple without its elements) split where its
/// encoding puts its elements: those numbered below `tuple_shapes` (its element type
/// and dimensions), and the rest with its unknown fields, which come after them.
fn split_own_fields(
    shell: Decoded<crate::proto::ShapeProto>,
) -> (crate::proto::ShapeProto, Decoded<crate::proto::ShapeProto>) {
    let Decoded { message, unknown } = shell;
    let head = crate::proto::ShapeProto {
        element_type: message.element_type,
        dimensions: message.dimensions,
        ..Default::default()
    };
    let tail = Decoded {
        message: crate::proto::ShapeProto {
            layout: message.layout,
            is_dynamic_dimension: message.is_dynamic_dimension,
            ..Default::default()
        },
        unknown,
    };
    (head, tail)
}

impl Writer {
    fn open_tuple(&mut self) {
        match self {
            Writer::Json(w) => w.open(),
            Writer::Hlo(w) => w.open(),
            Writer::Binary(out, starts) => {
                starts.push(out.len());
                put_tuple_type(out);
            }
        }
    }

    fn close(&mut self) {
        match self {
            Writer::Json(w) => w.close(),
            Writer::Hlo(w) => w.close(),
            Writer::Binary(out, starts) => {
                if let Some(start) = starts.pop() {
                    close_element(out, start, &[], &[]);
                }
            }
        }
    }
}

/// Makes the bytes of `out` from `start` on (a nested tuple's elements, written) a
/// `tuple_shapes` field: its tag and length, then `head` (the tuple's fields numbered
/// below the elements) go in front of them, and `tail` (the rest) after them.
fn close_element(out: &mut Vec<u8>, start: usize, head: &[u8], tail: &[u8]) {
    use codec::wire::{put_tag, put_varint, WireType};
    let mut header = Vec::new();
    put_tag(&mut header, 4, WireType::LengthDelimited);
    put_varint(
        &mut header,
        (head.len() + out.len() - start + tail.len()) as u64,
    );
    header.extend_from_slice(head);
    out.splice(start..start, header);
    out.extend_from_slice(tail);
}

impl TupleWriter {
    /// The output: text with its final newline, or the bytes; what the whole
    /// tuple's HLO text refuses, if anything.
    fn finish(self) -> Result<Spool, ConvertError> {
        let binary = matches!(self.form, Writer::Binary(..));
        let mut out = self.finish_part()?;
        if !binary {
            out.push(b"\n");
        }
        Ok(out)
    }

    /// [`Self::finish`] without the final newline of text.
    fn finish_part(mut self) -> Result<Spool, ConvertError> {
        let mut out = self.out.take().unwrap_or_default();
        out.push(&self.finish_written()?);
        Ok(out)
    }

    /// The output of a writer made by [`Self::of_part`]: the tuple closed, with the
    /// own fields of `shell` (the tuple without its elements, with its unknown
    /// fields) where the whole message puts them (in HLO text, which shows none of
    /// them, what the whole printing refuses of them).
    fn finish_part_as(
        mut self,
        shell: Decoded<crate::proto::ShapeProto>,
    ) -> Result<Spool, ConvertError> {
        while self.open.pop().is_some() {
            self.form.close();
        }
        let last = match self.form {
            Writer::Json(w) => w.finish_with(&shell.message).into_bytes(),
            Writer::Hlo(w) => w
                .finish_with(&shell.message)
                .map_err(ConvertError::Print)?
                .into_bytes(),
            Writer::Binary(mut out, _) => {
                let (head, tail) = split_own_fields(shell);
                out.splice(0..0, codec::encode(&head));
                out.extend(tail.encode_to_vec());
                out
            }
        };
        // A part's bytes and text are held (`of_part`): handed on without a copy.
        let Some(mut out) = self.out.take() else {
            return Ok(Spool::from(last));
        };
        out.push(&last);
        Ok(out)
    }

    /// What is left to write, closed.
    fn finish_written(mut self) -> Result<Vec<u8>, ConvertError> {
        if let Some(refused) = self.refused {
            return Err(ConvertError::Print(refused));
        }
        while self.open.pop().is_some() {
            self.form.close();
        }
        let out = match self.form {
            Writer::Json(w) => w.finish(),
            Writer::Hlo(w) => w.finish().map_err(ConvertError::Print)?,
            Writer::Binary(mut out, _) => {
                if let Some(tail) = self.tail {
                    out.extend(tail.encode_to_vec());
                }
                return Ok(out);
            }
        };
        Ok(out.into_bytes())
    }
}

/// A program shape (`from` binary, JSON or HLO text) converted to any form (`to`) a
/// shape at a time: the same bytes, or the same error, as [`read()`] then [`write()`]
/// give, in the memory of the input, the output, one part's output and the parameter
/// names (a million parameters read whole took 35 to 100 times their size). A part
/// that is a tuple is opened however it nests, whatever fields of its own its tuples
/// have, and a result given more than once is read as their merge
/// ([`codec::decode_program_shape_tree`]). Into HLO text,
/// which puts each name before its parameter, the input is read twice: the names
/// first; JSON into JSON, which prints a tuple's dimensions before its elements, is
/// read twice when a tuple has some. Unknown fields of binary input are kept
/// (binary), left out and listed (JSON, XLA's text: [`Dropping::dropped`], as
/// [`dropped_fields`] lists them) or refused (the lossless text), as
/// [`binary_shape_to_text_dropping_unknown`] does for a shape.
///
/// # Errors
/// As [`read()`] of a program shape, then [`write()`]: a read error first, then an
/// unknown field the lossless text refuses.
pub fn program_shape_to(
    from: Form,
    bytes: &[u8],
    to: Form,
    options: &Options,
) -> Result<Dropping, ConvertError> {
    let mut source = ProgramSource {
        from,
        bytes,
        options,
        nested: None,
    };
    let (output, fields) = match to {
        Form::Binary => (program_to_binary(&source)?, None),
        Form::Json => {
            if from == Form::Json {
                source.nested = source.nested_dimensions()?;
            }
            program_to_json(&source)?
        }
        Form::Hlo => program_to_hlo(&source)?,
    };
    let (dropped, more) = fields.map_or((Vec::new(), 0), |f| (f.fields, f.more));
    Ok(Dropping {
        output,
        dropped,
        more,
    })
}

/// Parameters written between moves of a program shape's text into its [`Spool`].
const SPOOLED_PARTS: usize = 512;

/// Parameter names kept together: their text, and where each ends.
#[derive(Default)]
struct Names {
    text: String,
    ends: Vec<usize>,
}

impl Names {
    fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len());
    }

    fn get(&self, i: usize) -> &str {
        let start = match i {
            0 => 0,
            _ => self.ends.get(i - 1).copied().unwrap_or(self.text.len()),
        };
        let end = self.ends.get(i).copied().unwrap_or(start);
        self.text.get(start..end).unwrap_or_default()
    }

    fn iter(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.ends.len()).map(|i| self.get(i))
    }
}

/// What a program shape read a shape at a time gives besides its shapes.
struct ProgramRest {
    parameters: usize,
    names: usize,
    /// The unknown fields of the program shape's own top level (binary input).
    unknown: codec::UnknownFields,
}

/// What [`ProgramSource::read`] hands each shape of a program shape to, and each tuple
/// of a part it opens: the part, and the [`Part`] with its path inside the part (`[]`
/// for the part itself).
type ProgramEachFn<'a> = dyn FnMut(ProgramPart, Part<'_>) + 'a;

/// A program shape's input, read a shape at a time ([`ProgramSource::read`]).
struct ProgramSource<'a> {
    from: Form,
    bytes: &'a [u8],
    options: &'a Options,
    /// JSON input: the dimensions of the tuples it opens, read by a first pass, for
    /// output that prints them before the elements.
    nested: Option<NestedDimensions>,
}

impl ProgramSource<'_> {
    /// Reads the input, handing each shape of the parameters and of the result on in
    /// order, each tuple of a part entered and left (a part that is a tuple opened
    /// however it nests; a result read whole last), and each name.
    fn read(
        &self,
        each: &mut ProgramEachFn<'_>,
        name: &mut dyn FnMut(usize, &str),
    ) -> Result<ProgramRest, ConvertError> {
        match self.from {
            Form::Binary => self.read_binary(each, name),
            Form::Json => self.read_json(each, name),
            Form::Hlo => self.read_hlo(each, name),
        }
    }

    /// [`ProgramSource::read`] of binary input ([`codec::decode_program_shape_tree`]).
    fn read_binary(
        &self,
        each: &mut ProgramEachFn<'_>,
        name: &mut dyn FnMut(usize, &str),
    ) -> Result<ProgramRest, ConvertError> {
        let each = std::cell::RefCell::new(each);
        let program = codec::decode_program_shape_tree(
            self.bytes,
            &mut |part, path, _, shape| (each.borrow_mut())(part, Part::Leaf(path, shape)),
            &mut |event| match event {
                codec::TreeEvent::Enter(path, own) => {
                    let (part, inner) = codec::program_part(path);
                    (each.borrow_mut())(part, Part::Enter(inner, own));
                }
                codec::TreeEvent::Leave(path, message, unknown) => {
                    let (part, inner) = codec::program_part(path);
                    (each.borrow_mut())(part, Part::Leave(inner, Decoded { message, unknown }));
                }
            },
            name,
        )
        .map_err(ConvertError::Decode)?;
        let mut shell = program.shell;
        if let Some(message) = shell.message.result.take() {
            let unknown = shell.unknown.take_child(2, 0);
            let result = Decoded { message, unknown };
            (each.borrow_mut())(ProgramPart::Result, Part::Leaf(&[], result));
        }
        Ok(ProgramRest {
            parameters: program.parameters,
            names: program.names,
            unknown: shell.unknown,
        })
    }

    /// [`ProgramSource::read`] of JSON input ([`json::program_shape_from_json_tree`]):
    /// a tuple's own fields are known when it is left (JSON may give them after its
    /// elements); those printed before the elements, its dimensions, come from the
    /// first pass when there was one ([`ProgramSource::nested_dimensions`]).
    fn read_json(
        &self,
        each: &mut ProgramEachFn<'_>,
        name: &mut dyn FnMut(usize, &str),
    ) -> Result<ProgramRest, ConvertError> {
        let parse =
            json::ParseOptions::new().ignore_unknown_fields(self.options.ignore_unknown_fields);
        let each = std::cell::RefCell::new(each);
        let mut entered = 0;
        let program = json::program_shape_from_json_tree(
            self.bytes,
            &parse,
            &mut |part, path, shape| {
                (each.borrow_mut())(part, Part::Leaf(path, Decoded::new(shape)));
            },
            &mut |part, path, shell| match shell {
                None => {
                    let own = match &self.nested {
                        Some(nested) => nested.of(entered),
                        None => tuple_shell(Vec::new()),
                    };
                    entered += 1;
                    (each.borrow_mut())(part, Part::Enter(path, &own));
                }
                Some(shell) => (each.borrow_mut())(part, Part::Leave(path, Decoded::new(shell))),
            },
            name,
        )
        .map_err(ConvertError::Json)?;
        if let Some(result) = program.result {
            (each.borrow_mut())(ProgramPart::Result, Part::Leaf(&[], Decoded::new(result)));
        }
        Ok(ProgramRest {
            parameters: program.parameters,
            names: program.names,
            unknown: codec::UnknownFields::new(),
        })
    }

    /// The dimensions of the tuples JSON input opens, in order, when any has some
    /// (a first pass, for output that prints them before the elements); `None` when
    /// none has.
    fn nested_dimensions(&self) -> Result<Option<NestedDimensions>, ConvertError> {
        let mut nested = NestedDimensions::default();
        self.read_json(
            &mut |_, part| match part {
                Part::Enter(..) => {
                    nested.enter();
                }
                Part::Leave(_, shell) => nested.leave(&shell.message),
                Part::Leaf(..) => {}
            },
            &mut |_, _| {},
        )?;
        Ok(nested.any.then_some(nested))
    }

    /// [`ProgramSource::read`] of HLO text, refused as [`read_hlo`] refuses it when it
    /// nests deeper than the binary form allows.
    fn read_hlo(
        &self,
        each: &mut ProgramEachFn<'_>,
        name: &mut dyn FnMut(usize, &str),
    ) -> Result<ProgramRest, ConvertError> {
        let input =
            std::str::from_utf8(self.bytes).map_err(|e| ConvertError::NotUtf8(e.to_string()))?;
        let limit = codec::wire::RECURSION_LIMIT as usize;
        let mut deepest = 0;
        let parameters = text::parse_program_shape_named_leaves(
            input,
            text::ParseOptions::default(),
            &mut |part, path, _, shape| {
                deepest = deepest.max(path.len() + text::shape_depth(&shape) + 1);
                if deepest <= limit {
                    each(part, Part::Leaf(path, Decoded::new(shape)));
                }
            },
            name,
        )
        .map_err(|error| ConvertError::Parse {
            rendered: error.render(input),
            error,
        })?;
        if deepest > limit {
            return Err(ConvertError::TooDeep { depth: deepest });
        }
        Ok(ProgramRest {
            parameters,
            names: parameters,
            unknown: codec::UnknownFields::new(),
        })
    }
}

/// A part of a program shape as [`ProgramParts`] hands it on: a shape read whole, or
/// a tuple written a shape at a time (its bytes or text, or what its text refuses).
enum WrittenPart {
    Whole(Decoded<crate::proto::ShapeProto>),
    Written(Result<Spool, ConvertError>),
}

/// The shapes of a program shape's parts written as they come: a part that is a
/// tuple, handed on a shape at a time, is written into a [`TupleWriter`] of its own
/// (at its place's depth in JSON, its path in HLO text) and handed on once written,
/// so that no part is held whole. With `fields`, the unknown fields left out are
/// gathered too.
struct ProgramParts<'o> {
    to: Form,
    options: &'o Options,
    open: Option<(ProgramPart, TupleWriter)>,
    fields: Option<ProgramFields>,
}

impl<'o> ProgramParts<'o> {
    /// Parts written into `to`, gathering the unknown fields left out when `dropping`.
    fn new(to: Form, options: &'o Options, dropping: bool) -> Self {
        Self {
            to,
            options,
            open: None,
            fields: dropping.then(ProgramFields::default),
        }
    }

    /// Takes the next shape or tuple of `part` ([`Part`]); hands each part on to
    /// `done` once it is read.
    fn take(
        &mut self,
        part: ProgramPart,
        piece: Part<'_>,
        done: &mut dyn FnMut(ProgramPart, WrittenPart),
    ) {
        if let Some(fields) = &mut self.fields {
            fields.take(part, &piece);
        }
        if self.open.as_ref().is_some_and(|(open, _)| *open != part) {
            self.flush(done);
        }
        let (to, options) = (self.to, self.options);
        let plain = tuple_shell(Vec::new());
        match piece {
            Part::Leaf([], shape) => done(part, WrittenPart::Whole(shape)),
            Part::Enter([], own) => {
                self.open = Some((part, TupleWriter::of_part(to, options, part, own)));
            }
            Part::Leave([], shell) => {
                if let Some((part, writer)) = self.open.take() {
                    done(part, WrittenPart::Written(writer.finish_part_as(shell)));
                }
            }
            piece => {
                let (_, writer) = self
                    .open
                    .get_or_insert_with(|| (part, TupleWriter::of_part(to, options, part, &plain)));
                match piece {
                    Part::Leaf(path, shape) if to == Form::Binary && !shape.holds_no_unknown() => {
                        writer.put_encoded(path, &shape.encode_to_vec());
                    }
                    Part::Leaf(path, shape) => writer.put(path, &shape.message),
                    Part::Enter(path, own) => writer.enter(path, own),
                    Part::Leave(_, shell) => writer.leave(shell),
                }
            }
        }
    }

    /// Hands the part being written on, if any: a tuple of elements alone (a part
    /// opened without being entered, as HLO text gives one).
    fn flush(&mut self, done: &mut dyn FnMut(ProgramPart, WrittenPart)) {
        if let Some((part, writer)) = self.open.take() {
            let plain = Decoded::new(tuple_shell(Vec::new()));
            done(part, WrittenPart::Written(writer.finish_part_as(plain)));
        }
    }

    /// The unknown fields left out, when gathered: the program shape's own
    /// (`top`) first, then its parameters', then its result's, as
    /// [`Decoded::unknown_fields`] lists them.
    fn finish_fields(&mut self, top: codec::UnknownFields) -> Option<FirstFields> {
        Some(self.fields.take()?.finish(own_fields(top)))
    }
}

/// The unknown fields of a program shape's own top level (`unknown`, with no child),
/// as [`FirstFields`].
fn own_fields(unknown: codec::UnknownFields) -> FirstFields {
    let mut first = FirstFields::new(crate::validate::MAX_LISTED_UNKNOWN);
    let own = Decoded::<crate::proto::ProgramShapeProto> {
        message: Default::default(),
        unknown,
    };
    own.for_each_unknown_field(|field| first.push(field));
    first
}

/// The unknown fields of a program shape's parts, gathered a shape at a time in the
/// whole listing's order ([`FirstFields`]): the parameters' as they come, the
/// result's (which the listing puts last) apart.
struct ProgramFields {
    parameters: FirstFields,
    result: FirstFields,
    /// The part being read, and its fields so far.
    part: Option<ProgramPart>,
    tree: TreeFields,
}

impl Default for ProgramFields {
    fn default() -> Self {
        let keep = crate::validate::MAX_LISTED_UNKNOWN;
        Self {
            parameters: FirstFields::new(keep),
            result: FirstFields::new(keep),
            part: None,
            tree: TreeFields::new(keep),
        }
    }
}

impl ProgramFields {
    /// The unknown fields of the next shape or tuple of `part`.
    fn take(&mut self, part: ProgramPart, piece: &Part<'_>) {
        if self.part != Some(part) {
            self.end_part();
            self.part = Some(part);
        }
        self.tree.take(&part.path(), piece);
    }

    /// The part being read is read: its fields go to its place.
    fn end_part(&mut self) {
        let fields = self.tree.take_all();
        match self.part {
            Some(ProgramPart::Result) => self.result.append(fields),
            Some(ProgramPart::Parameter(_)) => self.parameters.append(fields),
            None => {}
        }
    }

    /// Those of the parts after `first` (the program shape's own).
    fn finish(mut self, mut first: FirstFields) -> FirstFields {
        self.end_part();
        first.append(self.parameters);
        first.append(self.result);
        first
    }
}

/// [`program_shape_to`] into binary: the parameters as they come, then the result, the
/// names and the program shape's own unknown fields, in the order of the canonical
/// encoding.
fn program_to_binary(source: &ProgramSource<'_>) -> Result<Spool, ConvertError> {
    use codec::wire::{put_tag, put_varint, WireType};
    // Each field is spooled as it is written: a part's bytes are held only until then.
    let put = |out: &mut Spool, number, body: &[u8]| {
        let mut head = Vec::new();
        put_tag(&mut head, number, WireType::LengthDelimited);
        put_varint(&mut head, body.len() as u64);
        out.push(&head);
        out.push(body);
    };
    let (mut out, mut result, mut names) = (Spool::new(), None, Names::default());
    let mut parts = ProgramParts::new(Form::Binary, source.options, false);
    let mut failed = None;
    let mut done = |part, written| {
        let body = match written {
            WrittenPart::Whole(shape) => shape.encode_to_vec(),
            // The binary writer refuses nothing, and holds its bytes.
            WrittenPart::Written(body) => match body.map(Spool::into_vec) {
                Ok(Ok(body)) => body,
                Ok(Err(e)) => {
                    failed.get_or_insert(ConvertError::Spool(e.to_string()));
                    Vec::new()
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    Vec::new()
                }
            },
        };
        match part {
            ProgramPart::Parameter(_) => put(&mut out, 1, &body),
            ProgramPart::Result => result = Some(body),
        }
    };
    let rest = source.read(
        &mut |part, piece| parts.take(part, piece, &mut done),
        &mut |_, name| names.push(name),
    );
    parts.flush(&mut done);
    if let Some(e) = failed {
        return Err(e);
    }
    let rest = rest?;
    if let Some(result) = result {
        put(&mut out, 2, &result);
    }
    for name in names.iter() {
        put(&mut out, 3, name.as_bytes());
    }
    // The program shape's own unknown fields, after its known ones.
    let own = Decoded::<crate::proto::ProgramShapeProto> {
        message: Default::default(),
        unknown: rest.unknown,
    };
    out.push(&own.encode_to_vec());
    Ok(out)
}

/// [`program_shape_to`] into proto3 JSON: a part written a shape at a time is
/// spooled ([`TupleWriter::of_part`]) and copied into the output in its place (the
/// result after every parameter, wherever the input gives it); the unknown fields
/// left out.
fn program_to_json(
    source: &ProgramSource<'_>,
) -> Result<(Spool, Option<FirstFields>), ConvertError> {
    let mut writer = json::ProgramJson::new(&json_print_options(source.options));
    let (mut spool, mut pending) = (Spool::new(), 0);
    let (mut result, mut names) = (None, Names::default());
    let mut parts = ProgramParts::new(Form::Json, source.options, source.from == Form::Binary);
    let mut done = |part, written: WrittenPart| {
        match (part, written) {
            (ProgramPart::Result, written) => result = Some(written),
            (_, WrittenPart::Whole(shape)) => writer.parameter(&shape.message),
            (_, WrittenPart::Written(json)) => {
                // The separator and indentation, then the part's JSON.
                writer.parameter_part(json::Part::Printed(""));
                spool.push(writer.take().as_bytes());
                // JSON refuses nothing.
                spool.append(json.unwrap_or_default());
            }
        }
        pending += 1;
        if pending == SPOOLED_PARTS {
            pending = 0;
            spool.push(writer.take().as_bytes());
        }
    };
    let rest = source.read(
        &mut |part, piece| parts.take(part, piece, &mut done),
        &mut |_, name| names.push(name),
    );
    parts.flush(&mut done);
    let rest = rest?;
    let fields = parts.finish_fields(rest.unknown);
    let result = match result {
        Some(WrittenPart::Whole(shape)) => {
            writer.finish_part(Some(json::Part::Shape(&shape.message)), names.iter())
        }
        Some(WrittenPart::Written(json)) => {
            writer.start_result();
            spool.push(writer.take().as_bytes());
            spool.append(json.unwrap_or_default());
            writer.finish_part(None, names.iter())
        }
        None => writer.finish_part(None, names.iter()),
    };
    spool.push(result.as_bytes());
    spool.push(b"\n");
    Ok((spool, fields))
}

/// [`program_shape_to`] into HLO text: the names read first (XLA's style prints none),
/// then the parameters printed as they come; the unknown fields left out (XLA's
/// style), or the first refused (the lossless style, by that first read).
fn program_to_hlo(
    source: &ProgramSource<'_>,
) -> Result<(Spool, Option<FirstFields>), ConvertError> {
    let style = source.options.hlo_style;
    let mut names = Names::default();
    let (mut named, mut counts) = (false, (0, 0));
    if style == HloStyle::Exact {
        // The lossless text has no form for an unknown field: the first is refused
        // before anything is printed.
        let mut fields = ProgramFields::default();
        let rest = source.read(
            &mut |part, piece| fields.take(part, &piece),
            &mut |_, name| {
                named |= !name.is_empty();
                names.push(name);
            },
        )?;
        if let Some(field) = fields.finish(own_fields(rest.unknown)).fields.first() {
            return Err(ConvertError::UnknownField {
                path: field.path.clone(),
                number: field.number,
            });
        }
        counts = (rest.names, rest.parameters);
    }
    let mut writer =
        text::ProgramText::new(style, named, counts.0, counts.1).map_err(ConvertError::Print)?;
    let (mut failed, mut result) = (None, None);
    let (mut spool, mut pending) = (Spool::new(), 0);
    let dropping = source.from == Form::Binary && style == HloStyle::Xla;
    let mut parts = ProgramParts::new(Form::Hlo, source.options, dropping);
    let mut done = |part, written: WrittenPart| {
        if failed.is_some() {
            return;
        }
        let printed = match (part, written) {
            // The result is printed (or refused) after every parameter, as the whole
            // printing does, wherever the input gives it.
            (ProgramPart::Result, written) => {
                result = Some(written);
                Ok(())
            }
            (ProgramPart::Parameter(i), WrittenPart::Whole(shape)) => writer
                .parameter(names.get(i), &shape.message)
                .map_err(ConvertError::Print),
            // The name is checked before the shape, as the whole printing checks it;
            // the part's text is copied from its spool into its place.
            (ProgramPart::Parameter(i), WrittenPart::Written(text)) => {
                match (writer.printed_parameter(names.get(i), ""), text) {
                    (Err(e), _) => Err(ConvertError::Print(e)),
                    (Ok(()), Err(e)) => Err(e),
                    (Ok(()), Ok(text)) => {
                        spool.push(writer.take().as_bytes());
                        spool.append(text);
                        Ok(())
                    }
                }
            }
        };
        failed = printed.err();
        pending += 1;
        if pending == SPOOLED_PARTS {
            pending = 0;
            spool.push(writer.take().as_bytes());
        }
    };
    let rest = source.read(
        &mut |part, piece| parts.take(part, piece, &mut done),
        &mut |_, _| {},
    );
    parts.flush(&mut done);
    let rest = rest?;
    let fields = parts.finish_fields(rest.unknown);
    if let Some(e) = failed {
        return Err(e);
    }
    match result {
        Some(WrittenPart::Written(text)) => {
            let text = text?;
            spool.push(writer.finish_printed("").as_bytes());
            spool.append(text);
        }
        Some(WrittenPart::Whole(shape)) => {
            let out = writer.finish(Some(&shape.message));
            spool.push(out.map_err(ConvertError::Print)?.as_bytes());
        }
        None => spool.push(writer.finish(None).map_err(ConvertError::Print)?.as_bytes()),
    }
    spool.push(b"\n");
    Ok((spool, fields))
}

/// The `element_type: TUPLE` field of a tuple's body.
fn put_tuple_type(out: &mut Vec<u8>) {
    use codec::wire::{put_tag, put_varint, WireType};
    put_tag(out, 2, WireType::Varint);
    put_varint(out, crate::proto::PrimitiveType::Tuple as u64);
}

/// A `tuple_shapes` field holding `body`.
fn put_element(out: &mut Vec<u8>, body: &[u8]) {
    use codec::wire::{put_tag, put_varint, WireType};
    put_tag(out, 4, WireType::LengthDelimited);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// HLO text of a shape straight to JSON or HLO text (`to`), a top-level tuple one
/// element at a time: the same bytes as [`read()`] then [`write()`] give, in the memory
/// of the input, the output and one element (a 200 MB one-line tuple built whole took
/// 6.3 GB to JSON and 5.0 GB to HLO text).
///
/// # Errors
/// As [`read()`] of HLO text, then [`write()`]: a parse error first, wherever it stands.
pub fn hlo_shape_to_text(bytes: &[u8], to: Form, options: &Options) -> Result<Spool, ConvertError> {
    let input = std::str::from_utf8(bytes).map_err(|e| ConvertError::NotUtf8(e.to_string()))?;
    let mut writer = TupleWriter::new(to, options);
    let limit = codec::wire::RECURSION_LIMIT as usize;
    let mut deepest = 0;
    let streamed = text::parse_shape_leaves(
        input,
        text::ParseOptions::default(),
        &mut |path, _, element| {
            deepest = deepest.max(text::shape_depth(&element) + path.len());
            if deepest <= limit {
                writer.put(path, &element);
            }
        },
    )
    .map_err(|error| ConvertError::Parse {
        rendered: error.render(input),
        error,
    })?;
    let shape = match streamed {
        text::Streamed::Shape(shape) => shape,
        // `()`: no `tupleShapes` key at all, as the whole message prints.
        text::Streamed::Tuple { elements: 0 } => crate::proto::ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..Default::default()
        },
        text::Streamed::Tuple { .. } => {
            if deepest > limit {
                return Err(ConvertError::TooDeep { depth: deepest });
            }
            return writer.finish();
        }
    };
    let decoded = read_hlo_shape(shape)?;
    write(to, &decoded, options).map(Spool::from)
}

/// HLO text of a shape straight to binary, a top-level tuple one element at a time:
/// the same bytes as [`read()`] then [`write()`] give, in the memory of the input, the
/// output and one element (a 200 MB one-line tuple built whole took 25 times its
/// size).
///
/// # Errors
/// As [`read`] of HLO text.
pub fn hlo_shape_to_binary(bytes: &[u8]) -> Result<Spool, ConvertError> {
    let input = std::str::from_utf8(bytes).map_err(|e| ConvertError::NotUtf8(e.to_string()))?;
    let mut writer = TupleWriter::new(Form::Binary, &Options::default());
    let limit = codec::wire::RECURSION_LIMIT as usize;
    let mut deepest = 0;
    let streamed = text::parse_shape_leaves(
        input,
        text::ParseOptions::default(),
        &mut |path, _, element| {
            deepest = deepest.max(text::shape_depth(&element) + path.len());
            if deepest <= limit {
                writer.put(path, &element);
            }
        },
    )
    .map_err(|error| ConvertError::Parse {
        rendered: error.render(input),
        error,
    })?;
    let message = match streamed {
        text::Streamed::Tuple { .. } => None,
        text::Streamed::Shape(shape) => Some(AnyMessage::Shape(shape)),
    };
    if let Some(message) = &message {
        deepest = text::message_depth(message);
    }
    if deepest > limit {
        return Err(ConvertError::TooDeep { depth: deepest });
    }
    match message {
        Some(message) => Ok(Spool::from(codec::encode_any(&Decoded {
            message,
            unknown: codec::UnknownFields::new(),
        }))),
        None => writer.finish(),
    }
}

/// A binary `ShapeProto` re-encoded, a top-level tuple one element at a time: the same
/// bytes as [`read()`] then [`write()`] give, in the memory of the input, the output
/// and one element (a 220 MB tuple decoded whole took 22 times its size). Unknown
/// fields are kept where the whole encoding puts them: an element's inside its
/// element, the tuple's own after its elements (each message's unknown fields after
/// its known ones). A tuple with fields of its own besides its elements (dimensions,
/// a layout, dynamic flags) is read twice, its own fields first, then written an
/// element at a time too, between its fields numbered below `tuple_shapes` and those
/// above it. `None` when the message is not a tuple with elements, which [`read()`]
/// and [`write()`] then convert whole.
///
/// # Errors
/// As [`read`] of a binary shape.
pub fn binary_shape_to_binary(bytes: &[u8]) -> Option<Result<Spool, ConvertError>> {
    let own = match own_fields_shell(bytes) {
        Ok(own) => own,
        Err(e) => return Some(Err(e)),
    };
    let options = Options::default();
    let mut writer = match &own {
        Some(shell) => TupleWriter::with_fields(Form::Binary, &options, shell.clone()),
        None => TupleWriter::new(Form::Binary, &options),
    };
    let shell = stream_tuple(bytes, own.is_some(), &mut |part| match part {
        Part::Leaf(path, element) if element.holds_no_unknown() => {
            writer.put(path, &element.message);
        }
        Part::Leaf(path, element) => writer.put_encoded(path, &element.encode_to_vec()),
        Part::Enter(path, own) => writer.enter(path, own),
        Part::Leave(_, shell) => writer.leave(shell),
    })?;
    Some(shell.and_then(|shell| {
        let mut out = writer.finish()?;
        if own.is_none() {
            // A plain tuple's own unknown fields come after its elements.
            let mut tail = Vec::new();
            shell.unknown.write_own(&mut tail, false);
            out.push(&tail);
        }
        Ok(out)
    }))
}

/// A shape read from HLO text, refused as [`read_hlo`] refuses it when it nests deeper
/// than the binary form allows.
fn read_hlo_shape(shape: crate::proto::ShapeProto) -> Result<Decoded<AnyMessage>, ConvertError> {
    let message = AnyMessage::Shape(shape);
    let depth = text::message_depth(&message);
    if depth > codec::wire::RECURSION_LIMIT as usize {
        return Err(ConvertError::TooDeep { depth });
    }
    Ok(Decoded {
        message,
        unknown: codec::UnknownFields::new(),
    })
}

/// HLO text in: the whole input is one message (surrounding whitespace allowed).
fn read_hlo(kind: MessageKind, bytes: &[u8]) -> Result<Decoded<AnyMessage>, ConvertError> {
    let input = std::str::from_utf8(bytes).map_err(|e| ConvertError::NotUtf8(e.to_string()))?;
    let message = text::parse_message(kind, input).map_err(|error| ConvertError::Parse {
        rendered: error.render(input),
        error,
    })?;
    let depth = text::message_depth(&message);
    if depth > codec::wire::RECURSION_LIMIT as usize {
        return Err(ConvertError::TooDeep { depth });
    }
    Ok(Decoded {
        message,
        unknown: codec::UnknownFields::new(),
    })
}

/// HLO text out, one line. In XLA's style, unknown fields are dropped (the command
/// line warns); the lossless style refuses them, as it refuses every value its text
/// cannot carry back.
fn write_hlo(decoded: &Decoded<AnyMessage>, style: HloStyle) -> Result<Vec<u8>, ConvertError> {
    if style == HloStyle::Exact {
        let mut first = None;
        decoded.for_each_unknown_field(|field| {
            first.get_or_insert(field);
        });
        if let Some(field) = first {
            return Err(ConvertError::UnknownField {
                path: field.path,
                number: field.number,
            });
        }
    }
    let mut out = style
        .print_message(&decoded.message)
        .map_err(ConvertError::Print)?;
    out.push('\n');
    Ok(out.into_bytes())
}
