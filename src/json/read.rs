//! From JSON text straight to the prost messages, with proto3 JSON's rules: the
//! reader pulls tokens from [`super::syntax`] and fills each message as it goes, with
//! no document tree in between, and builds an error's path only once it has one.
//!
//! # Which error is reported
//!
//! Google's `json_format.Parse` reads the whole text with `json.loads` before it
//! looks at a single field, so the first syntax error of the text (a duplicate key
//! included) is the one reported, wherever it is. Then, message by message from the
//! top, the first problem with a message's keys (a key that names no field, a field
//! under both its names) comes before any problem inside its values, and those come
//! in the order written.
//!
//! Reading in one pass, this reader reports the same error: a syntax error stops it
//! at once; any other error is kept while the rest of the text is stepped over
//! ([`Lexer::skip_value`]), its syntax checked and the remaining keys of each message
//! still open too, and is reported only if nothing there comes before it.

use super::error::{line_column, JsonError, JsonErrorKind};
use super::fields::{self, Field, Spelling};
use super::number;
use super::syntax::{KeySet, Lexer, Token};
use super::{ParseOptions, MAX_MESSAGE_DEPTH};
use crate::message::ProgramPart;
use crate::path::{Path, Segment};
use crate::proto::{
    DimLevelType, Format, LayoutProto, PaddingValue, PrimitiveType, ProgramShapeProto, ShapeProto,
    SplitConfigProto, TileProto,
};

type Result<T> = std::result::Result<T, Stop>;

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

/// Why reading stopped.
pub(crate) enum Stop {
    /// The text is not JSON. Final: nothing after it is looked at, and nothing found
    /// before it would have been reported instead.
    Syntax(Box<JsonError>),
    /// The text is JSON so far, but not the message; kept while the rest is checked.
    Invalid(Box<Invalid>),
}

/// Well-formed JSON that is not the message.
pub(crate) struct Invalid {
    pos: usize,
    kind: JsonErrorKind,
    /// Where, innermost segment first: each message and list adds its own as the
    /// error travels out.
    path: Vec<Segment>,
}

impl From<Box<JsonError>> for Stop {
    fn from(error: Box<JsonError>) -> Self {
        Stop::Syntax(error)
    }
}

impl Stop {
    #[cold]
    fn invalid(pos: usize, kind: JsonErrorKind) -> Self {
        Stop::Invalid(Box::new(Invalid {
            pos,
            kind,
            path: Vec::new(),
        }))
    }

    /// This error, one level further in: in a field, or an element of a list.
    #[cold]
    fn within(mut self, segment: Segment) -> Self {
        if let Stop::Invalid(invalid) = &mut self {
            invalid.path.push(segment);
        }
        self
    }

    #[cold]
    fn into_error(self, text: &str) -> JsonError {
        match self {
            Stop::Syntax(error) => *error,
            Stop::Invalid(invalid) => {
                let Invalid { pos, kind, path } = *invalid;
                let (line, column) = line_column(text, pos);
                let path = Path::from(path.into_iter().rev().collect::<Vec<_>>());
                JsonError::new(path, line, column, kind)
            }
        }
    }
}

/// A message read by one of [`Reader::shape`], [`Reader::layout`] and
/// [`Reader::program_shape`], from its first token.
pub(crate) type ReadMessage<'a, T> = fn(&mut Reader<'a>, usize, Token<'a>) -> Result<T>;

/// Reads a whole JSON text as one message.
pub(crate) fn read<'a, T>(
    text: &'a str,
    options: &ParseOptions,
    message: ReadMessage<'a, T>,
) -> std::result::Result<T, JsonError> {
    read_text(text, options, message).map_err(|stop| stop.into_error(text))
}

/// Reads a whole JSON text as one `ShapeProto`, the elements of its top-level
/// `tuple_shapes` handed to `element` ([`Reader::shape_leaves`] opening no nested
/// tuple).
pub(crate) fn read_shape_streaming<'a>(
    text: &'a str,
    options: &ParseOptions,
    element: &mut dyn FnMut(ShapeProto),
) -> std::result::Result<ShapeProto, JsonError> {
    // The top-level elements whole: no tuple inside them is opened.
    let mut leaf = |_: &[usize], shape: ShapeProto| element(shape);
    let mut path = Vec::new();
    let mut read = |reader: &mut Reader<'a>, pos: usize, token: Token<'a>| {
        reader.shape_leaves(pos, token, &mut path, false, &mut leaf)
    };
    read_text_with(text, options, &mut read).map_err(|stop| stop.into_error(text))
}

/// Reads a whole JSON text as one `ShapeProto`, every shape of its top-level tuple
/// handed to `leaf` with its path of tuple indices and plain tuples that nest opened
/// ([`Reader::shape_leaves`]). Returns the top-level message without its elements.
pub(crate) fn read_shape_leaves<'a>(
    text: &'a str,
    options: &ParseOptions,
    leaf: &mut dyn FnMut(&[usize], ShapeProto),
) -> std::result::Result<ShapeProto, JsonError> {
    let mut path = Vec::new();
    let mut read = |reader: &mut Reader<'a>, pos: usize, token: Token<'a>| {
        reader.shape_leaves(pos, token, &mut path, true, leaf)
    };
    read_text_with(text, options, &mut read).map_err(|stop| stop.into_error(text))
}

/// Which tuple elements a shape read a shape at a time opens
/// ([`Reader::shape_tree`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Nest {
    /// None: each element is read whole.
    No,
    /// Plain tuples (element type and elements, nothing else).
    Plain,
    /// Every tuple with elements, each told when entered and left.
    Tree,
}

pub(crate) use super::ProgramTreeFn;

/// [`read_program_shape_leaves`] that opens every part that is a tuple with elements,
/// whatever fields of its own it has, telling `tree` of each tuple it opens.
pub(crate) fn read_program_shape_tree<'a>(
    text: &'a str,
    options: &ParseOptions,
    leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
    tree: &mut ProgramTreeFn<'_>,
    name: &mut dyn FnMut(usize, String),
) -> std::result::Result<ProgramRead, JsonError> {
    let mut read = |reader: &mut Reader<'a>, pos: usize, token: Token<'a>| {
        reader.program_shape_tree(pos, token, true, leaf, name, Some(&mut *tree))
    };
    read_text_with(text, options, &mut read).map_err(|stop| stop.into_error(text))
}

/// What [`read_shape_tree`] tells of each tuple it opens below the top level: its path,
/// and `None` when it is entered, the tuple without its elements when it is left.
pub(crate) type JsonTreeFn<'a> = dyn FnMut(&[usize], Option<ShapeProto>) + 'a;

/// [`read_shape_leaves`] that opens every tuple with elements below the top level
/// (whatever fields of its own it has), telling `tree` when it enters and leaves each.
pub(crate) fn read_shape_tree<'a>(
    text: &'a str,
    options: &ParseOptions,
    leaf: &mut dyn FnMut(&[usize], ShapeProto),
    tree: &mut JsonTreeFn<'_>,
) -> std::result::Result<ShapeProto, JsonError> {
    let mut path = Vec::new();
    let mut read = |reader: &mut Reader<'a>, pos: usize, token: Token<'a>| {
        reader.shape_tree(pos, token, &mut path, Nest::Tree, leaf, tree)
    };
    read_text_with(text, options, &mut read).map_err(|stop| stop.into_error(text))
}

/// What [`read_program_shape_leaves`] read besides the shapes it handed on: the result
/// when it was read whole, whether it was handed on instead, and the numbers of
/// parameters and names.
pub(crate) type ProgramRead = (Option<ShapeProto>, bool, usize, usize);

/// Reads a whole JSON text as one `ProgramShapeProto`, each shape of its parameters
/// handed to `leaf` with its part and its path of tuple indices inside the part (plain
/// tuples opened as [`read_shape_leaves`] opens them, the result's too),
/// its parameter names handed to `name`, counted and not kept.
pub(crate) fn read_program_shape_leaves<'a>(
    text: &'a str,
    options: &ParseOptions,
    leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
    name: &mut dyn FnMut(usize, String),
) -> std::result::Result<ProgramRead, JsonError> {
    let mut read = |reader: &mut Reader<'a>, pos: usize, token: Token<'a>| {
        reader.program_shape_leaves(pos, token, true, leaf, name)
    };
    read_text_with(text, options, &mut read).map_err(|stop| stop.into_error(text))
}

fn read_text<'a, T>(
    text: &'a str,
    options: &ParseOptions,
    message: ReadMessage<'a, T>,
) -> Result<T> {
    read_text_with(text, options, &mut |reader, pos, token| {
        message(reader, pos, token)
    })
}

fn read_text_with<'a, T>(
    text: &'a str,
    options: &ParseOptions,
    message: &mut dyn FnMut(&mut Reader<'a>, usize, Token<'a>) -> Result<T>,
) -> Result<T> {
    let mut reader = Reader {
        lexer: Lexer::new(text)?,
        ignore_unknown_fields: options.ignore_unknown_fields,
        depth: 0,
        nesting: 0,
        entries: 0,
    };
    let (pos, token) = reader.lexer.token()?;
    let read = message(&mut reader, pos, token);
    if let Err(Stop::Syntax(_)) = read {
        return read;
    }
    // Whatever else is wrong, the text must be JSON to the end.
    reader.lexer.end()?;
    read
}

/// Reads messages out of JSON text, one token at a time.
pub(crate) struct Reader<'a> {
    lexer: Lexer<'a>,
    ignore_unknown_fields: bool,
    /// Messages open, counting the one being read.
    depth: usize,
    /// Arrays and objects open.
    nesting: usize,
    /// The list entries read so far into the shape being read (see
    /// [`crate::MAX_LIST_ENTRIES`]): a tuple element or a program parameter counts its
    /// own ([`Reader::own_entries`]).
    entries: usize,
}

/// The keys of one message object so far, to find a key or a field given twice
/// without keeping the keys of known fields.
#[derive(Default)]
struct Keys<'a> {
    /// Two bits per field of the message (none has more than 32): bit `2 * index`
    /// once the field was given by its JSON name, the next one by its proto name.
    fields: u64,
    /// The keys that name no field (there are none in the common case, and then
    /// nothing is allocated).
    others: KeySet<'a>,
}

/// A known key, as [`Keys::see_field`] finds it.
enum Seen {
    First,
    /// The same key again: malformed JSON.
    Again,
    /// The field again, under its other name.
    UnderOtherName,
}

impl Keys<'_> {
    fn see_field(&mut self, index: usize, spelling: Spelling) -> Seen {
        let json = 1u64 << (2 * index);
        let (bit, other) = match spelling {
            Spelling::Json => (json, json << 1),
            Spelling::Proto => (json << 1, json),
        };
        let before = self.fields;
        self.fields |= bit;
        if before & bit != 0 {
            Seen::Again
        } else if before & other != 0 {
            Seen::UnderOtherName
        } else {
            Seen::First
        }
    }
}

impl<'a> Reader<'a> {
    /// Enters the array or object just seen.
    fn open(&mut self) -> Result<bool> {
        let more = self.lexer.open(self.nesting)?;
        self.nesting += 1;
        Ok(more)
    }

    /// Steps over the value that comes next.
    fn skip_value(&mut self) -> Result<()> {
        Ok(self.lexer.skip_value(self.nesting)?)
    }

    /// The error for a value of the wrong JSON type, after stepping over it.
    #[cold]
    fn wrong_type(&mut self, pos: usize, token: Token<'_>, expected: &'static str) -> Stop {
        if let Token::Array | Token::Object = token {
            if let Err(stop) = self.skip_value() {
                return stop;
            }
        }
        Stop::invalid(
            pos,
            JsonErrorKind::WrongType {
                expected,
                found: token.type_name(),
            },
        )
    }

    /// One message object, `pos` and `token` being its start: `read_field` is called
    /// for each key that names a field, with the field's index in `message.fields` and
    /// the reader at the value, which it must read whole. Checks the type, the depth,
    /// unknown keys and fields given twice.
    fn message(
        &mut self,
        pos: usize,
        token: Token<'a>,
        message: &MessageType,
        mut read_field: impl FnMut(&mut Self, usize) -> Result<()>,
    ) -> Result<()> {
        if !matches!(token, Token::Object) {
            return Err(self.wrong_type(pos, token, "an object"));
        }
        if self.depth >= MAX_MESSAGE_DEPTH {
            self.skip_value()?;
            let limit = MAX_MESSAGE_DEPTH;
            return Err(Stop::invalid(pos, JsonErrorKind::MessageTooDeep { limit }));
        }
        let mut more = self.open()?;
        self.depth += 1;
        let mut keys = Keys::default();
        // The first error about a key of this message and the first inside a value,
        // kept while the rest of the object is checked; the key's comes first.
        let mut bad_key: Option<Stop> = None;
        let mut bad_value: Option<Stop> = None;
        while more {
            let (key, key_pos) = self.lexer.key()?;
            let known = fields::lookup(message.fields, &key);
            let key_error = match known {
                Some((index, spelling)) => match keys.see_field(index, spelling) {
                    Seen::First => None,
                    Seen::Again => return Err(self.lexer.duplicate_key(&key, key_pos).into()),
                    Seen::UnderOtherName => {
                        let field = &message.fields[index];
                        let first = match spelling {
                            Spelling::Json => field.proto,
                            Spelling::Proto => field.json,
                        };
                        let kind = JsonErrorKind::DuplicateField {
                            key: lossy(&key),
                            first: first.to_owned(),
                        };
                        Some(Stop::invalid(key_pos, kind).within(Segment::Field(field.proto)))
                    }
                },
                None => {
                    if !keys.others.insert(key.clone(), self.lexer.text_bytes()) {
                        return Err(self.lexer.duplicate_key(&key, key_pos).into());
                    }
                    (!self.ignore_unknown_fields).then(|| {
                        let kind = JsonErrorKind::UnknownField {
                            message: message.name,
                            key: lossy(&key),
                        };
                        Stop::invalid(key_pos, kind)
                    })
                }
            };
            if bad_key.is_none() {
                bad_key = key_error;
            }
            match known {
                Some((index, _)) if bad_key.is_none() && bad_value.is_none() => {
                    if let Err(stop) = read_field(self, index) {
                        let stop @ Stop::Invalid(_) = stop else {
                            return Err(stop);
                        };
                        let name = message.fields[index].proto;
                        bad_value = Some(stop.within(Segment::Field(name)));
                    }
                }
                _ => self.skip_value()?,
            }
            more = self.lexer.next_in_object()?;
        }
        self.nesting -= 1;
        self.depth -= 1;
        match bad_key.or(bad_value) {
            Some(stop) => Err(stop),
            None => Ok(()),
        }
    }

    // ---- messages ----
    //
    // The fields that hold messages are read in the slim functions below, which are
    // all that recursion stacks up; the other fields are read in separate functions.

    pub(crate) fn shape(&mut self, pos: usize, token: Token<'a>) -> Result<ShapeProto> {
        let mut shape = ShapeProto::default();
        self.message(pos, token, &SHAPE, |reader, index| {
            match index {
                2 => {
                    let elements = &mut shape.tuple_shapes;
                    reader.each_in_list(|reader, _, pos, token| {
                        let element = reader.own_entries(|reader| reader.shape(pos, token))?;
                        elements.push(element);
                        Ok(())
                    })?;
                }
                3 => reader.shape_layout(&mut shape)?,
                _ => reader.shape_scalar(&mut shape, index)?,
            }
            Ok(())
        })?;
        Ok(shape)
    }

    /// A shape whose `tuple_shapes` go to `leaf` a shape at a time: with `nest`, an
    /// element that is a plain tuple (element type `TUPLE` and at least one element, no
    /// other key; [`Self::plain_tuple_ahead`]) is read the same way, one level deeper in
    /// `path`; every other element is read whole and handed over with its path. The
    /// same reading, with the same errors, as [`Self::shape`]; returns the message
    /// without its elements.
    fn shape_leaves(
        &mut self,
        pos: usize,
        token: Token<'a>,
        path: &mut Vec<usize>,
        nest: bool,
        leaf: &mut dyn FnMut(&[usize], ShapeProto),
    ) -> Result<ShapeProto> {
        let nest = if nest { Nest::Plain } else { Nest::No };
        self.shape_tree(pos, token, path, nest, leaf, &mut |_, _| {})
    }

    /// [`Self::shape_leaves`], with `nest` saying which tuple elements are opened: with
    /// [`Nest::Tree`], every tuple (element type `TUPLE` and at least one element,
    /// whatever else it holds; [`Self::tuple_ahead`]), each told to `tree` when it is
    /// entered (`None`) and left (the tuple without its elements).
    fn shape_tree(
        &mut self,
        pos: usize,
        token: Token<'a>,
        path: &mut Vec<usize>,
        nest: Nest,
        leaf: &mut dyn FnMut(&[usize], ShapeProto),
        tree: &mut JsonTreeFn<'_>,
    ) -> Result<ShapeProto> {
        let mut shape = ShapeProto::default();
        self.message(pos, token, &SHAPE, |reader, index| {
            match index {
                2 => reader.tuple_leaves(path, nest, leaf, tree)?,
                3 => reader.shape_layout(&mut shape)?,
                _ => reader.shape_scalar(&mut shape, index)?,
            }
            Ok(())
        })?;
        Ok(shape)
    }

    /// The `tuple_shapes` list of [`Self::shape_leaves`], read as [`Self::shape`]
    /// reads it.
    fn tuple_leaves(
        &mut self,
        path: &mut Vec<usize>,
        nest: Nest,
        leaf: &mut dyn FnMut(&[usize], ShapeProto),
        tree: &mut JsonTreeFn<'_>,
    ) -> Result<()> {
        self.each_in_list(|reader, index, pos, token| {
            path.push(index);
            let item = reader.own_entries(|reader| match token {
                Token::Object if nest == Nest::Plain && reader.plain_tuple_ahead() => reader
                    .shape_tree(pos, Token::Object, path, nest, leaf, tree)
                    .map(drop),
                Token::Object if nest == Nest::Tree && reader.tuple_ahead() => {
                    tree(path, None);
                    let shell = reader.shape_tree(pos, Token::Object, path, nest, leaf, tree)?;
                    tree(path, Some(shell));
                    Ok(())
                }
                token => reader.shape(pos, token).map(|shape| leaf(path, shape)),
            });
            path.pop();
            item
        })
    }

    /// Whether the object the lexer is at is a tuple with at least one element,
    /// whatever else it holds: its element type is given as `"TUPLE"` and its
    /// `tuple_shapes` is a non-empty array, each once. A look-ahead as
    /// [`Self::plain_tuple_ahead`], over every value by its brackets.
    fn tuple_ahead(&self) -> bool {
        self.tuple_ahead_with(false)
    }

    /// [`Self::plain_tuple_ahead`] (`plain`: no other key), or [`Self::tuple_ahead`].
    fn tuple_ahead_with(&self, plain: bool) -> bool {
        let mut ahead = self.lexer.clone();
        if !matches!(ahead.open(self.nesting), Ok(true)) {
            return false;
        }
        let (mut tuple, mut elements) = (false, false);
        loop {
            let Ok((key, _)) = ahead.key() else {
                return false;
            };
            match fields::lookup(SHAPE.fields, &key) {
                Some((0, _)) if !tuple => match ahead.token() {
                    Ok((_, Token::String(name))) if &*name == b"TUPLE" => tuple = true,
                    _ => return false,
                },
                Some((2, _)) if !elements => {
                    if !matches!(ahead.token(), Ok((_, Token::Array))) {
                        return false;
                    }
                    let mut first = ahead.clone();
                    if !matches!(first.open(self.nesting + 1), Ok(true)) || !ahead.skip_container()
                    {
                        return false;
                    }
                    elements = true;
                }
                Some((0 | 2, _)) => return false,
                _ if plain => return false,
                // Another field, stepped over.
                _ => match ahead.token() {
                    Ok((_, Token::Array | Token::Object)) => {
                        if !ahead.skip_container() {
                            return false;
                        }
                    }
                    Ok(_) => {}
                    Err(_) => return false,
                },
            }
            match ahead.next_in_object() {
                Ok(true) => {}
                Ok(false) => return tuple && elements,
                Err(_) => return false,
            }
        }
    }

    /// Whether the object the lexer is at is a plain tuple: its keys are the element
    /// type, given as `"TUPLE"`, and a non-empty `tuple_shapes` array, each once and
    /// nothing else. A look-ahead on a copy of the lexer, which steps over the
    /// elements by their brackets alone (so a text that nests `d` tuples is scanned
    /// at most `d + 1` times, and `d` is at most [`MAX_MESSAGE_DEPTH`]); the reader
    /// then reads the object either way, with the same errors.
    fn plain_tuple_ahead(&self) -> bool {
        self.tuple_ahead_with(true)
    }

    /// Runs `read` on a shape that counts its own list entries (a tuple element, a
    /// program parameter), the count of the shape around it put back afterwards.
    fn own_entries<T>(&mut self, read: impl FnOnce(&mut Self) -> T) -> T {
        let outer = std::mem::replace(&mut self.entries, 0);
        let result = read(self);
        self.entries = outer;
        result
    }

    #[inline(never)]
    fn shape_layout(&mut self, shape: &mut ShapeProto) -> Result<()> {
        shape.layout = self.optional(Self::boxed_layout)?;
        Ok(())
    }

    #[inline(never)]
    fn shape_scalar(&mut self, shape: &mut ShapeProto, index: usize) -> Result<()> {
        match index {
            0 => shape.element_type = self.enum_field(&PRIMITIVE_TYPE)?,
            1 => shape.dimensions = self.list(Self::int64)?,
            _ => shape.is_dynamic_dimension = self.list(Self::bool)?,
        }
        Ok(())
    }

    pub(crate) fn layout(&mut self, pos: usize, token: Token<'a>) -> Result<LayoutProto> {
        let mut layout = LayoutProto::default();
        self.layout_into(&mut layout, pos, token)?;
        Ok(layout)
    }

    /// A layout read straight into its box (a layout is large to move).
    fn boxed_layout(&mut self, pos: usize, token: Token<'a>) -> Result<Box<LayoutProto>> {
        let mut layout = Box::<LayoutProto>::default();
        self.layout_into(&mut layout, pos, token)?;
        Ok(layout)
    }

    fn layout_into(
        &mut self,
        layout: &mut LayoutProto,
        pos: usize,
        token: Token<'a>,
    ) -> Result<()> {
        self.message(pos, token, &LAYOUT, |reader, index| {
            match index {
                9 => layout.physical_shape = reader.optional(Self::shape)?.map(Box::new),
                _ => reader.layout_other(layout, index)?,
            }
            Ok(())
        })
    }

    #[inline(never)]
    fn layout_other(&mut self, l: &mut LayoutProto, index: usize) -> Result<()> {
        match index {
            0 => l.minor_to_major = self.list(Self::int64)?,
            1 => l.padded_dimensions = self.list(Self::int64)?,
            2 => l.padding_value = self.enum_field(&PADDING_VALUE)?,
            3 => l.format = self.enum_field(&FORMAT)?,
            4 => l.max_sparse_elements = self.int64_field()?,
            5 => l.tiles = self.list(Self::tile)?,
            6 => l.element_size_in_bits = self.int64_field()?,
            7 => l.memory_space = self.int64_field()?,
            8 => l.dim_level_types = self.list(Self::dim_level_type)?,
            10 => l.index_primitive_type = self.enum_field(&PRIMITIVE_TYPE)?,
            11 => l.pointer_primitive_type = self.enum_field(&PRIMITIVE_TYPE)?,
            12 => l.dim_unique = self.list(Self::bool)?,
            13 => l.dim_ordered = self.list(Self::bool)?,
            14 => l.dynamic_shape_metadata_prefix_bytes = self.int64_field()?,
            15 => l.tail_padding_alignment_in_elements = self.int64_field()?,
            _ => l.split_configs = self.list(Self::split_config)?,
        }
        Ok(())
    }

    fn dim_level_type(&mut self, pos: usize, token: Token<'a>) -> Result<Option<i32>> {
        self.enum_value(pos, token, &DIM_LEVEL_TYPE)
    }

    fn tile(&mut self, pos: usize, token: Token<'a>) -> Result<Option<TileProto>> {
        let mut tile = TileProto::default();
        self.message(pos, token, &TILE, |reader, _| {
            tile.dimensions = reader.list(Self::int64)?;
            Ok(())
        })?;
        Ok(Some(tile))
    }

    fn split_config(&mut self, pos: usize, token: Token<'a>) -> Result<Option<SplitConfigProto>> {
        let mut config = SplitConfigProto::default();
        self.message(pos, token, &SPLIT_CONFIG, |reader, index| {
            match index {
                0 => config.dimension = reader.int64_field()?,
                _ => config.split_indices = reader.list(Self::int64)?,
            }
            Ok(())
        })?;
        Ok(Some(config))
    }

    pub(crate) fn program_shape(
        &mut self,
        pos: usize,
        token: Token<'a>,
    ) -> Result<ProgramShapeProto> {
        let (mut parameters, mut names) = (Vec::new(), Vec::new());
        let (result, _, _, _) = self.program_shape_leaves(
            pos,
            token,
            false,
            &mut |_, _, shape| parameters.push(shape),
            &mut |_, name| names.push(name),
        )?;
        Ok(ProgramShapeProto {
            parameters,
            result,
            parameter_names: names,
        })
    }

    /// [`Self::program_shape`] with each parameter's shapes handed to `leaf` (the
    /// parameter's index, the path inside it) as [`Self::tuple_leaves`] hands on a
    /// tuple's, and the names counted: the same reading, with the same errors. Returns
    /// the result and the counts of parameters and names.
    fn program_shape_leaves(
        &mut self,
        pos: usize,
        token: Token<'a>,
        nest: bool,
        leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
        name: &mut dyn FnMut(usize, String),
    ) -> Result<ProgramRead> {
        self.program_shape_tree(pos, token, nest, leaf, name, None)
    }

    /// [`Self::program_shape_leaves`]; with `tree`, a part that is a tuple with fields
    /// of its own (a parameter, or the result) is opened too, with every tuple inside
    /// it, each told to `tree` when entered (`None`) and left (the tuple without its
    /// elements), with its part and its path inside the part.
    fn program_shape_tree(
        &mut self,
        pos: usize,
        token: Token<'a>,
        nest: bool,
        leaf: &mut dyn FnMut(ProgramPart, &[usize], ShapeProto),
        name: &mut dyn FnMut(usize, String),
        mut tree: Option<&mut ProgramTreeFn<'_>>,
    ) -> Result<ProgramRead> {
        let (mut result, mut streamed, mut parameters, mut names) = (None, false, 0, 0);
        let mut path = Vec::new();
        self.message(pos, token, &PROGRAM_SHAPE, |reader, index| {
            match index {
                0 => reader.each_in_list(|reader, index, pos, token| {
                    path.clear();
                    parameters = index + 1;
                    let part = ProgramPart::Parameter(index);
                    let mut inner = |path: &[usize], shape| leaf(part, path, shape);
                    reader.own_entries(|reader| match (token, &mut tree) {
                        // With `tree`, every tuple is opened as one, so that a tuple
                        // with fields of its own inside a plain one is opened too.
                        (Token::Object, Some(tell)) if reader.tuple_ahead() => {
                            reader.part_tree(pos, part, &mut path, &mut inner, &mut **tell)
                        }
                        (Token::Object, _) if nest && reader.plain_tuple_ahead() => reader
                            .shape_leaves(pos, Token::Object, &mut path, true, &mut inner)
                            .map(drop),
                        (token, _) => reader.shape(pos, token).map(|shape| inner(&[], shape)),
                    })
                })?,
                1 => match reader.lexer.token()? {
                    (_, Token::Null) => {}
                    (pos, Token::Object) if tree.is_some() && reader.tuple_ahead() => {
                        path.clear();
                        let mut inner =
                            |path: &[usize], shape| leaf(ProgramPart::Result, path, shape);
                        if let Some(tell) = tree.as_mut() {
                            reader.part_tree(
                                pos,
                                ProgramPart::Result,
                                &mut path,
                                &mut inner,
                                &mut **tell,
                            )?;
                        }
                        streamed = true;
                    }
                    (pos, Token::Object) if nest && reader.plain_tuple_ahead() => {
                        // As `optional(Self::shape)` reads it, a shape at a time.
                        path.clear();
                        let mut inner =
                            |path: &[usize], shape| leaf(ProgramPart::Result, path, shape);
                        reader.shape_leaves(pos, Token::Object, &mut path, true, &mut inner)?;
                        streamed = true;
                    }
                    (pos, token) => result = Some(reader.shape(pos, token)?),
                },
                _ => reader.each_in_list(|reader, index, pos, token| {
                    names = index + 1;
                    let text = reader.string(pos, token)?;
                    name(index, text.unwrap_or_default());
                    Ok(())
                })?,
            }
            Ok(())
        })?;
        Ok((result, streamed, parameters, names))
    }

    /// A part of a program shape that is a tuple with fields of its own, opened as
    /// [`Self::shape_tree`] opens one, the part itself and every tuple inside it told
    /// to `tell` when entered and left.
    fn part_tree(
        &mut self,
        pos: usize,
        part: ProgramPart,
        path: &mut Vec<usize>,
        leaf: &mut dyn FnMut(&[usize], ShapeProto),
        tell: &mut ProgramTreeFn<'_>,
    ) -> Result<()> {
        tell(part, &[], None);
        let mut inner = |path: &[usize], shell: Option<ShapeProto>| tell(part, path, shell);
        let shell = self.shape_tree(pos, Token::Object, path, Nest::Tree, leaf, &mut inner)?;
        tell(part, &[], Some(shell));
        Ok(())
    }

    // ---- field shapes ----

    /// A singular message field: `null` leaves it unset.
    fn optional<T>(&mut self, read: ReadMessage<'a, T>) -> Result<Option<T>> {
        match self.lexer.token()? {
            (_, Token::Null) => Ok(None),
            (pos, token) => read(self, pos, token).map(Some),
        }
    }

    /// A repeated field of a shape's own lists (not its elements): an array (or
    /// `null`, the empty list) of non-null elements, each an entry of the shape (see
    /// [`crate::MAX_LIST_ENTRIES`]). `read` returns `None` for an element to drop (an
    /// unknown enum name when unknown fields are ignored).
    fn list<T>(&mut self, read: ReadMessage<'a, Option<T>>) -> Result<Vec<T>> {
        let mut items = Vec::new();
        self.each_in_list(|reader, _, pos, token| {
            if let Some(item) = read(reader, pos, token)? {
                if reader.entries >= crate::MAX_LIST_ENTRIES {
                    let limit = crate::MAX_LIST_ENTRIES;
                    return Err(Stop::invalid(pos, JsonErrorKind::TooManyEntries { limit }));
                }
                reader.entries += 1;
                items.push(item);
            }
            Ok(())
        })?;
        Ok(items)
    }

    /// An array (or `null`, the empty list) of non-null elements, each read by `item`
    /// with its index, position and first token; after an error in one, the rest of
    /// the array is stepped over and the error is given at its index.
    #[inline(always)]
    fn each_in_list(
        &mut self,
        mut item: impl FnMut(&mut Self, usize, usize, Token<'a>) -> Result<()>,
    ) -> Result<()> {
        let (pos, token) = self.lexer.token()?;
        match token {
            Token::Null => return Ok(()),
            Token::Array => {}
            _ => return Err(self.wrong_type(pos, token, "an array")),
        }
        let mut more = self.open()?;
        let mut index = 0;
        while more {
            let read = match self.lexer.token()? {
                (pos, Token::Null) => Err(Stop::invalid(pos, JsonErrorKind::NullInList)),
                (pos, token) => item(self, index, pos, token),
            };
            if let Err(stop) = read {
                return Err(self.skip_rest_of_list(stop.within(Segment::Index(index))));
            }
            index += 1;
            more = self.lexer.next_in_array()?;
        }
        self.nesting -= 1;
        Ok(())
    }

    /// After an error in an element of a list: the rest of the array stepped over.
    #[cold]
    fn skip_rest_of_list(&mut self, stop: Stop) -> Stop {
        if let Stop::Syntax(_) = stop {
            return stop;
        }
        while match self.lexer.next_in_array() {
            Ok(more) => more,
            Err(error) => return error.into(),
        } {
            if let Err(stop) = self.skip_value() {
                return stop;
            }
        }
        self.nesting -= 1;
        stop
    }

    // ---- scalars ----

    /// A singular int64 field: `null` is 0.
    fn int64_field(&mut self) -> Result<i64> {
        match self.lexer.token()? {
            (_, Token::Null) => Ok(0),
            (pos, token) => self.integer(pos, token),
        }
    }

    fn int64(&mut self, pos: usize, token: Token<'a>) -> Result<Option<i64>> {
        self.integer(pos, token).map(Some)
    }

    /// An int64: a JSON integer, an integral JSON number, or a string Python's
    /// `json_format` reads as an integer (see [`super::number`]).
    fn integer(&mut self, pos: usize, token: Token<'a>) -> Result<i64> {
        // Most integers are plain digits, as a number or a string.
        let plain = match &token {
            Token::Number(raw) => number::plain_int(raw.as_bytes()),
            Token::String(bytes) => number::plain_int(bytes),
            _ => None,
        };
        if let Some(value) = plain {
            return Ok(value);
        }
        let wide = match &token {
            Token::Number(raw) => number::json_number_as_integer(raw),
            Token::String(bytes) => std::str::from_utf8(bytes)
                .map_err(|_| ())
                .and_then(number::string_as_integer),
            _ => return Err(self.wrong_type(pos, token, "an integer (a number or a string)")),
        };
        let Ok(wide) = wide else {
            return Err(not_an_integer(pos, &token));
        };
        i64::try_from(wide).map_err(|_| out_of_range(pos, &token, "int64"))
    }

    /// A singular enum field: `null` is 0, and so is an unknown name when unknown
    /// fields are ignored.
    fn enum_field(&mut self, ty: &EnumType) -> Result<i32> {
        let (pos, token) = self.lexer.token()?;
        Ok(self.enum_value(pos, token, ty)?.unwrap_or(0))
    }

    /// An enum value: its name, or its number as a JSON integer, an integral JSON
    /// number or a string Python's `int()` reads. Numbers the enum does not name are
    /// kept (proto3 enums are open). `None` for an unknown name when unknown fields
    /// are ignored, as Google's parsers do.
    fn enum_value(&mut self, pos: usize, token: Token<'a>, ty: &EnumType) -> Result<Option<i32>> {
        let wide = match &token {
            Token::Null => return Ok(Some(0)),
            Token::String(bytes) => {
                let name = std::str::from_utf8(bytes).ok();
                if let Some(number) = name.and_then(ty.from_name) {
                    return Ok(Some(number));
                }
                match name.and_then(number::python_int) {
                    Some(wide) => wide,
                    None if self.ignore_unknown_fields => return Ok(None),
                    None => {
                        let kind = JsonErrorKind::UnknownEnumName {
                            enum_name: ty.name,
                            name: lossy(bytes),
                        };
                        return Err(Stop::invalid(pos, kind));
                    }
                }
            }
            Token::Number(raw) => match number::json_number_as_integer(raw) {
                Ok(wide) => wide,
                Err(()) => return Err(not_an_integer(pos, &token)),
            },
            _ => return Err(self.wrong_type(pos, token, "an enum name or number")),
        };
        match i32::try_from(wide) {
            Ok(number) => Ok(Some(number)),
            Err(_) => Err(out_of_range(pos, &token, "int32")),
        }
    }

    fn bool(&mut self, pos: usize, token: Token<'a>) -> Result<Option<bool>> {
        match token {
            Token::Bool(b) => Ok(Some(b)),
            _ => Err(self.wrong_type(pos, token, "true or false")),
        }
    }

    fn string(&mut self, pos: usize, token: Token<'a>) -> Result<Option<String>> {
        match &token {
            Token::String(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(Some(text.to_owned())),
                Err(_) => Err(Stop::invalid(pos, JsonErrorKind::UnpairedSurrogate)),
            },
            _ => Err(self.wrong_type(pos, token, "a string")),
        }
    }
}

/// A message of the schema: its proto name and its fields.
struct MessageType {
    name: &'static str,
    fields: &'static [Field],
}

const SHAPE: MessageType = MessageType {
    name: "xla.ShapeProto",
    fields: fields::SHAPE,
};
const LAYOUT: MessageType = MessageType {
    name: "xla.LayoutProto",
    fields: fields::LAYOUT,
};
const TILE: MessageType = MessageType {
    name: "xla.TileProto",
    fields: fields::TILE,
};
const SPLIT_CONFIG: MessageType = MessageType {
    name: "xla.SplitConfigProto",
    fields: fields::SPLIT_CONFIG,
};
const PROGRAM_SHAPE: MessageType = MessageType {
    name: "xla.ProgramShapeProto",
    fields: fields::PROGRAM_SHAPE,
};

#[cold]
fn not_an_integer(pos: usize, token: &Token<'_>) -> Stop {
    let text = as_written(token);
    Stop::invalid(pos, JsonErrorKind::NotAnInteger { text })
}

#[cold]
fn out_of_range(pos: usize, token: &Token<'_>, ty: &'static str) -> Stop {
    let text = as_written(token);
    Stop::invalid(pos, JsonErrorKind::OutOfRange { text, ty })
}

/// A WTF-8 string for a message, unpaired surrogates shown as U+FFFD.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A number or string value as written, for a message: strings in double quotes,
/// escaped.
fn as_written(token: &Token<'_>) -> String {
    match token {
        Token::Number(raw) => (*raw).to_owned(),
        Token::String(bytes) => format!("{:?}", lossy(bytes)),
        other => other.type_name().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str, ignore_unknown_fields: bool) -> String {
        let options = ParseOptions::new().ignore_unknown_fields(ignore_unknown_fields);
        read(text, &options, Reader::shape).unwrap_err().to_string()
    }

    /// Errors kept while the rest of the text is read: a later syntax error, or a bad
    /// key of a message still open, is reported instead, as when the whole text is
    /// parsed first and the keys of a message are checked before its values.
    #[test]
    fn the_first_error_in_googles_order_is_reported() {
        for (text, message) in [
            (
                r#"{"dimensions":[true],"foo":1}"#,
                r#"xla.ShapeProto has no field named "foo" at line 1 column 22"#,
            ),
            (
                r#"{"layout":{"foo":1},"bar":2}"#,
                r#"xla.ShapeProto has no field named "bar" at line 1 column 21"#,
            ),
            (
                r#"{"layout":{"minorToMajor":["x"]},"element_type":"F32","elementType":"S32"}"#,
                r#"element_type: "elementType" sets the same field as "element_type" again at line 1 column 55"#,
            ),
            (
                r#"{"tupleShapes":[{"dimensions":[null]},{"foo":1}]}"#,
                "tuple_shapes[0].dimensions[0]: null is not allowed in a list at line 1 column 32",
            ),
            (
                r#"{"dimensions":[true] x"#,
                "expected ',' or '}' at line 1 column 22",
            ),
            (
                r#"{"dimensions":[true],"elementType":"F32","elementType":"S32"}"#,
                r#"duplicate key "elementType" at line 1 column 42"#,
            ),
            (
                r#"{"layout":5,"layout":6}"#,
                r#"duplicate key "layout" at line 1 column 13"#,
            ),
            (
                r#"{"foo":[[1]],"foo":2}"#,
                r#"duplicate key "foo" at line 1 column 14"#,
            ),
        ] {
            assert_eq!(error(text, false), message, "{text}");
        }
        // Nesting too deep inside an ignored value, after a bad value.
        let text = format!(
            "{{\"dimensions\":[true],\"foo\":{}}}",
            "[".repeat(600) + &"]".repeat(600)
        );
        assert_eq!(
            error(&text, true),
            "arrays and objects nest deeper than 512 levels at line 1 column 539"
        );
        // Trailing characters after messages nested too deep.
        let deep = "{\"tupleShapes\":[".repeat(100) + "{}" + &"]}".repeat(100);
        assert!(error(&deep, false)
            .ends_with("messages nest deeper than 100 levels at line 1 column 1601"));
        assert_eq!(
            error(&(deep + "x"), false),
            "trailing characters after the value at line 1 column 1803"
        );
    }
}
