//! The HLO text parser for shapes, layouts and program shapes, accepting what XLA's
//! `hlo_parser.cc` accepts and building the proto XLA's `ToProto` writes.
//!
//! Nested shapes (tuples, buffers, physical shapes) are parsed with an explicit stack,
//! never by recursion, so any input depth is safe; like XLA, nesting deeper than
//! [`MAX_NESTING`] levels is an error.

use super::cursor::Cursor;
use super::error::ParseError;
use super::types;
use crate::proto::{
    LayoutProto, PrimitiveType, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto,
};

/// The deepest nesting of shapes the parser accepts (XLA's limit).
pub const MAX_NESTING: usize = 32768;

/// How to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Give an array without a layout the default layout (`{n-1,...,1,0}`; `{}` for a
    /// scalar), as XLA's standalone `ParseShape` does. When false, such an array has no
    /// layout, as in an HLO module's computation signatures.
    pub fill_missing_layouts: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            fill_missing_layouts: true,
        }
    }
}

/// Layout attributes in the order they must appear; each at most once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Attr {
    /// The 2022-25 dim level types; parsed and dropped, as HEAD XLA does.
    D,
    T,
    L,
    Index,
    Pointer,
    E,
    S,
    Sc,
    P,
    M,
    // Our legacy extension, after every attribute XLA knows.
    Pd,
    Pv,
    F,
    Ms,
    Dl,
    Du,
    Do,
}

/// An unfinished shape on the explicit stack.
enum Frame {
    Tuple(Vec<ShapeProto>),
    Buffer {
        start: usize,
    },
    /// An array whose layout is waiting for its `P(...)` shape.
    Physical(Box<PendingArray>),
}

struct PendingArray {
    array: ShapeProto,
    layout: LayoutProto,
    layout_start: usize,
    start: usize,
}

enum Begun {
    Done(ShapeProto),
    Open(Frame),
}

pub(crate) struct Parser<'a> {
    pub(crate) cursor: Cursor<'a>,
    options: ParseOptions,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(input: &'a str, options: ParseOptions) -> Self {
        Self {
            cursor: Cursor::new(input),
            options,
        }
    }

    pub(crate) fn at(input: &'a str, pos: usize, options: ParseOptions) -> Self {
        Self {
            cursor: Cursor::at(input, pos),
            options,
        }
    }

    /// Fails unless only trivia is left.
    pub(crate) fn finish(&mut self, what: &str) -> Result<(), ParseError> {
        match self.cursor.peek()? {
            None => Ok(()),
            Some(_) => Err(self
                .cursor
                .error_here(format!("extra content after {what}"))),
        }
    }

    /// Parses one shape.
    pub(crate) fn shape(&mut self) -> Result<ShapeProto, ParseError> {
        let mut stack: Vec<Frame> = Vec::new();
        'begin: loop {
            let mut done = match self.begin(stack.len())? {
                Begun::Done(shape) => shape,
                Begun::Open(Frame::Tuple(elements)) => {
                    if self.cursor.eat(b')')? {
                        tuple(elements)
                    } else {
                        stack.push(Frame::Tuple(elements));
                        continue 'begin;
                    }
                }
                Begun::Open(frame) => {
                    stack.push(frame);
                    continue 'begin;
                }
            };
            loop {
                match stack.pop() {
                    None => return Ok(done),
                    Some(Frame::Tuple(mut elements)) => {
                        elements.push(done);
                        if self.cursor.eat(b',')? {
                            stack.push(Frame::Tuple(elements));
                            continue 'begin;
                        }
                        self.cursor
                            .expect(b')', "expects ')' at the end of tuple shape")?;
                        done = tuple(elements);
                    }
                    Some(Frame::Buffer { start }) => {
                        self.cursor
                            .expect(b')', "expects ')' at the end of buffer shape")?;
                        if !types::is_array_type(done.element_type) {
                            return Err(ParseError::new(
                                start..self.cursor.pos(),
                                "a buffer shape must hold an array shape",
                            ));
                        }
                        done = ShapeProto {
                            element_type: PrimitiveType::Buffer as i32,
                            tuple_shapes: vec![done],
                            ..ShapeProto::default()
                        };
                    }
                    Some(Frame::Physical(pending)) => {
                        let PendingArray {
                            mut array,
                            mut layout,
                            layout_start,
                            start,
                        } = *pending;
                        self.cursor
                            .expect(b')', "expects physical shape to end with ')'")?;
                        layout.physical_shape = Some(Box::new(done));
                        self.layout_attributes(&mut layout, Some(Attr::P))?;
                        self.layout_end()?;
                        let layout_span = layout_start..self.cursor.pos();
                        check_array_layout(&array, &layout, layout_span, start)?;
                        array.layout = Some(Box::new(layout));
                        done = array;
                    }
                }
            }
        }
    }

    /// Reads the start of a shape: a whole array, or the opening of a nested shape.
    fn begin(&mut self, depth: usize) -> Result<Begun, ParseError> {
        let start = match self.cursor.peek()? {
            Some(b'(') => {
                self.nest(depth)?;
                self.cursor.eat(b'(')?;
                return Ok(Begun::Open(Frame::Tuple(Vec::new())));
            }
            Some(_) => self.cursor.pos(),
            None => return Err(self.cursor.error_here("expected a shape, saw the end")),
        };
        let Some((word, _)) = self.cursor.ident()? else {
            return Err(self.cursor.error_here("expected primitive type"));
        };
        if word == "b" && self.cursor.peek()? == Some(b'(') {
            self.nest(depth)?;
            self.cursor.eat(b'(')?;
            return Ok(Begun::Open(Frame::Buffer { start }));
        }
        let Some(element_type) = types::type_from_name(word) else {
            return Err(ParseError::new(
                start..start + word.len(),
                format!("expected primitive type, saw '{word}'"),
            ));
        };
        let mut array = ShapeProto {
            element_type,
            ..ShapeProto::default()
        };
        self.dimensions(&mut array)?;
        if element_type == PrimitiveType::Token as i32
            || element_type == PrimitiveType::OpaqueType as i32
        {
            // `token[]` and `opaque[]`: no dimensions, and a layout is never read.
            if !array.dimensions.is_empty() {
                return Err(ParseError::new(
                    start..self.cursor.pos(),
                    format!("{word} shapes have no dimensions"),
                ));
            }
            return Ok(Begun::Done(ShapeProto {
                element_type,
                ..ShapeProto::default()
            }));
        }
        if !self.layout_follows()? {
            if self.options.fill_missing_layouts {
                let rank = array.dimensions.len();
                array.layout = Some(Box::new(LayoutProto {
                    minor_to_major: (0..rank as i64).rev().collect(),
                    tail_padding_alignment_in_elements: 1,
                    ..LayoutProto::default()
                }));
            }
            return Ok(Begun::Done(array));
        }
        let layout_start = self.cursor.pos();
        let mut layout = self.layout_head()?;
        if self.layout_attributes(&mut layout, None)? {
            self.nest(depth)?;
            return Ok(Begun::Open(Frame::Physical(Box::new(PendingArray {
                array,
                layout,
                layout_start,
                start,
            }))));
        }
        self.layout_end()?;
        check_array_layout(&array, &layout, layout_start..self.cursor.pos(), start)?;
        array.layout = Some(Box::new(layout));
        Ok(Begun::Done(array))
    }

    fn nest(&self, depth: usize) -> Result<(), ParseError> {
        if depth >= MAX_NESTING {
            Err(self
                .cursor
                .error_here(format!("shapes nest deeper than {MAX_NESTING} levels")))
        } else {
            Ok(())
        }
    }

    /// `[` dims `]`, each `?`, `<=N` or `N`.
    fn dimensions(&mut self, array: &mut ShapeProto) -> Result<(), ParseError> {
        self.cursor
            .expect(b'[', "expects '[' to start the dimensions")?;
        if self.cursor.eat(b']')? {
            return Ok(());
        }
        loop {
            self.cursor.skip_trivia()?;
            let (size, dynamic) = if self.cursor.eat(b'?')? {
                (i64::MIN, true)
            } else {
                let bounded = self.cursor.eat_str("<=")?;
                let (size, at) = self.cursor.int("a dimension size")?;
                if size < 0 {
                    return Err(ParseError::new(
                        at..self.cursor.pos(),
                        format!("invalid dimension size {size}"),
                    ));
                }
                (size, bounded)
            };
            array.dimensions.push(size);
            array.is_dynamic_dimension.push(dynamic);
            if self.cursor.eat(b',')? {
                continue;
            }
            self.cursor
                .expect(b']', "expects ']' at the end of the dimensions")?;
            return Ok(());
        }
    }

    /// XLA reads `{` after a shape as a layout only if an integer or `:` follows it.
    fn layout_follows(&mut self) -> Result<bool, ParseError> {
        if self.cursor.peek()? != Some(b'{') {
            return Ok(false);
        }
        let mut ahead = self.cursor.clone();
        ahead.eat(b'{')?;
        Ok(ahead.at_int()? || ahead.peek()? == Some(b':'))
    }

    /// `{` and the minor_to_major list.
    fn layout_head(&mut self) -> Result<LayoutProto, ParseError> {
        self.cursor.expect(b'{', "expects '{' to start a layout")?;
        let mut layout = LayoutProto {
            tail_padding_alignment_in_elements: 1,
            ..LayoutProto::default()
        };
        if self.cursor.at_int()? {
            loop {
                let (dim, _) = self.cursor.int("an integer")?;
                layout.minor_to_major.push(dim);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
        }
        Ok(layout)
    }

    fn layout_end(&mut self) -> Result<(), ParseError> {
        self.cursor.expect(b'}', "expects layout to end with '}'")
    }

    /// Reads attributes after `:` (or resumes after `P(...)` when `after` is set).
    /// Returns true when it stopped at `P(`, whose shape the caller must parse.
    fn layout_attributes(
        &mut self,
        layout: &mut LayoutProto,
        after: Option<Attr>,
    ) -> Result<bool, ParseError> {
        let mut last = after;
        if after.is_none() && !self.cursor.eat(b':')? {
            return Ok(false);
        }
        loop {
            self.cursor.skip_trivia()?;
            let mut ahead = self.cursor.clone();
            let attr = match ahead.peek()? {
                Some(b'#') => {
                    ahead.eat(b'#')?;
                    Attr::Index
                }
                Some(b'*') => {
                    ahead.eat(b'*')?;
                    Attr::Pointer
                }
                _ => match ahead.letters()? {
                    Some((word, _)) => match attr_of(word) {
                        Some(attr) => attr,
                        None => return Ok(false),
                    },
                    None => return Ok(false),
                },
            };
            if last.is_some_and(|last| attr <= last) {
                // Out of order or repeated: XLA stops here and wants the '}'.
                return Ok(false);
            }
            self.cursor = ahead;
            last = Some(attr);
            match attr {
                Attr::D => self.dim_level_group()?,
                Attr::T => loop {
                    layout.tiles.push(self.tile()?);
                    if self.cursor.peek()? != Some(b'(') {
                        break;
                    }
                },
                Attr::L => {
                    let (n, at) = self.paren_int()?;
                    if n < 1 {
                        return Err(ParseError::new(
                            at..self.cursor.pos(),
                            format!("tail padding alignment must be at least 1, saw {n}"),
                        ));
                    }
                    layout.tail_padding_alignment_in_elements = n;
                }
                Attr::Index => layout.index_primitive_type = self.paren_type()?,
                Attr::Pointer => layout.pointer_primitive_type = self.paren_type()?,
                Attr::E => layout.element_size_in_bits = self.paren_int()?.0,
                // XLA keeps the memory space in an int8_t.
                Attr::S => layout.memory_space = i64::from(self.paren_int()?.0 as i8),
                Attr::Sc => loop {
                    layout.split_configs.push(self.split_config()?);
                    if self.cursor.peek()? != Some(b'(') {
                        break;
                    }
                },
                Attr::P => {
                    self.cursor.expect(b'(', "expects '(' after P")?;
                    return Ok(true);
                }
                Attr::M => layout.dynamic_shape_metadata_prefix_bytes = self.paren_int()?.0,
                Attr::Pd => layout.padded_dimensions = self.paren_ints()?,
                Attr::Pv => {
                    layout.padding_value = self.paren_enum(
                        &["invalid", "zero", "one", "lowest", "highest", "unknown"],
                        "a padding value",
                    )?
                }
                Attr::F => {
                    layout.format = self.paren_enum(&["invalid", "dense", "sparse"], "a format")?
                }
                Attr::Ms => layout.max_sparse_elements = self.paren_int()?.0,
                Attr::Dl => layout.dim_level_types = self.paren_level_types()?,
                Attr::Du => layout.dim_unique = self.paren_bools()?,
                Attr::Do => layout.dim_ordered = self.paren_bools()?,
            }
        }
    }

    fn open(&mut self) -> Result<(), ParseError> {
        self.cursor.expect(b'(', "expects '('")
    }

    fn close(&mut self) -> Result<(), ParseError> {
        self.cursor.expect(b')', "expects ')'")
    }

    fn paren_int(&mut self) -> Result<(i64, usize), ParseError> {
        self.open()?;
        let value = self.cursor.int("an integer")?;
        self.close()?;
        Ok(value)
    }

    fn paren_ints(&mut self) -> Result<Vec<i64>, ParseError> {
        self.open()?;
        let mut values = Vec::new();
        if !self.cursor.eat(b')')? {
            loop {
                values.push(self.cursor.int("an integer")?.0);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
            self.close()?;
        }
        Ok(values)
    }

    fn paren_bools(&mut self) -> Result<Vec<bool>, ParseError> {
        let values = self.paren_ints()?;
        let start = self.cursor.pos();
        values
            .into_iter()
            .map(|v| match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(ParseError::new(
                    start..start,
                    format!("expected 0 or 1, saw {v}"),
                )),
            })
            .collect()
    }

    fn paren_type(&mut self) -> Result<i32, ParseError> {
        self.open()?;
        self.cursor.skip_trivia()?;
        let ty = match self.cursor.ident()? {
            Some((word, _)) => types::type_from_name(word),
            None => None,
        };
        let Some(ty) = ty else {
            return Err(self.cursor.error_here("expected primitive type"));
        };
        self.close()?;
        Ok(ty)
    }

    /// A name from `names` (its index is the enum number) or a number.
    fn paren_enum(&mut self, names: &[&str], what: &str) -> Result<i32, ParseError> {
        self.open()?;
        let value = self.enum_value(names, what)?;
        self.close()?;
        Ok(value)
    }

    fn enum_value(&mut self, names: &[&str], what: &str) -> Result<i32, ParseError> {
        if self.cursor.at_int()? {
            let (n, at) = self.cursor.int(what)?;
            return i32::try_from(n).map_err(|_| {
                ParseError::new(at..self.cursor.pos(), format!("{what} {n} is out of range"))
            });
        }
        let found = match self.cursor.letters()? {
            Some((word, at)) => names
                .iter()
                .position(|name| *name == word)
                .map(|i| i as i32)
                .ok_or_else(|| ParseError::new(at..at + word.len(), format!("expected {what}"))),
            None => Err(self.cursor.error_here(format!("expected {what}"))),
        };
        found
    }

    fn paren_level_types(&mut self) -> Result<Vec<i32>, ParseError> {
        self.open()?;
        let mut values = Vec::new();
        if !self.cursor.eat(b')')? {
            loop {
                values.push(self.enum_value(&["D", "C", "S", "H"], "a dim level type")?);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
            self.close()?;
        }
        Ok(values)
    }

    /// `(` D|C|S|H [+][~] `,` ... `)`: read and dropped, as HEAD XLA does.
    fn dim_level_group(&mut self) -> Result<(), ParseError> {
        self.open()?;
        loop {
            self.cursor.skip_trivia()?;
            let letter = self.cursor.letters()?;
            if !matches!(letter, Some(("D" | "C" | "S" | "H", _))) {
                let err = match letter {
                    Some((word, at)) => ParseError::new(at..at + word.len(), ""),
                    None => self.cursor.error_here(""),
                };
                return Err(ParseError::new(
                    err.span(),
                    "expected a DimLevelType abbreviation (D, C, or S)",
                ));
            }
            self.cursor.eat(b'+')?;
            self.cursor.eat(b'~')?;
            if !self.cursor.eat(b',')? {
                break;
            }
        }
        self.close()
    }

    /// `(` tile dims `)`, each an integer or `*`.
    fn tile(&mut self) -> Result<TileProto, ParseError> {
        self.open()?;
        let mut tile = TileProto::default();
        if self.cursor.eat(b')')? {
            return Ok(tile);
        }
        loop {
            if self.cursor.eat(b'*')? {
                tile.dimensions.push(i64::MIN);
            } else {
                let (n, at) = self.cursor.int("an integer or '*'")?;
                if n < 0 && n != i64::MIN {
                    return Err(ParseError::new(
                        at..self.cursor.pos(),
                        format!("tile dimension {n} is negative (a combined dimension is '*')"),
                    ));
                }
                tile.dimensions.push(n);
            }
            if !self.cursor.eat(b',')? {
                break;
            }
        }
        self.close()?;
        Ok(tile)
    }

    /// `(` dimension `:` index, ... `)`.
    fn split_config(&mut self) -> Result<SplitConfigProto, ParseError> {
        self.open()?;
        let mut split = SplitConfigProto {
            dimension: self.cursor.int("an integer")?.0,
            ..SplitConfigProto::default()
        };
        self.cursor
            .expect(b':', "expects ':' after the split dimension")?;
        if !self.cursor.eat(b')')? {
            loop {
                split.split_indices.push(self.cursor.int("an integer")?.0);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
            self.close()?;
        }
        Ok(split)
    }

    /// A standalone layout `{...}` (XLA's `ParseLayout`).
    pub(crate) fn layout(&mut self) -> Result<LayoutProto, ParseError> {
        let mut layout = self.layout_head()?;
        if self.layout_attributes(&mut layout, None)? {
            let shape = self.shape()?;
            self.cursor
                .expect(b')', "expects physical shape to end with ')'")?;
            layout.physical_shape = Some(Box::new(shape));
            self.layout_attributes(&mut layout, Some(Attr::P))?;
        }
        self.layout_end()?;
        Ok(layout)
    }

    /// `(p0, p1, ...)->result`; each parameter may carry a name (`name: shape`), and the
    /// whole may be wrapped in `{...}` as in `entry_computation_layout={...}`.
    pub(crate) fn program_shape(&mut self) -> Result<ProgramShapeProto, ParseError> {
        let braced = self.cursor.eat(b'{')?;
        self.cursor
            .expect(b'(', "expects '(' to start the parameters")?;
        let mut program = ProgramShapeProto::default();
        let mut named = None;
        if !self.cursor.eat(b')')? {
            loop {
                let name = self.parameter_name()?;
                let at = self.cursor.pos();
                match (named, &name) {
                    (None, _) => named = Some(name.is_some()),
                    (Some(true), None) | (Some(false), Some(_)) => {
                        return Err(self
                            .cursor
                            .error_here("either every parameter has a name or none has"))
                    }
                    _ => {}
                }
                let _ = at;
                program.parameter_names.push(name.unwrap_or_default());
                program.parameters.push(self.shape()?);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
            self.cursor
                .expect(b')', "expects ')' at the end of the parameters")?;
        }
        if !self.cursor.eat_str("->")? {
            return Err(self
                .cursor
                .error_here("expects '->' before the result shape"));
        }
        program.result = Some(self.shape()?);
        if braced {
            self.cursor.expect(b'}', "expects '}'")?;
        }
        Ok(program)
    }

    /// `name:` or `(unknown):` before a parameter shape, if present.
    fn parameter_name(&mut self) -> Result<Option<String>, ParseError> {
        self.cursor.skip_trivia()?;
        let mut ahead = self.cursor.clone();
        if ahead.eat_str("(unknown)")? && ahead.eat(b':')? {
            self.cursor = ahead;
            return Ok(Some(String::new()));
        }
        let mut ahead = self.cursor.clone();
        if let Some((word, _)) = ahead.ident()? {
            // A name is an identifier glued to ':' (XLA's lexer makes it one token).
            if ahead.peek_raw() == Some(b':') {
                ahead.eat(b':')?;
                self.cursor = ahead;
                return Ok(Some(word.to_string()));
            }
        }
        Ok(None)
    }
}

fn attr_of(word: &str) -> Option<Attr> {
    Some(match word {
        "D" => Attr::D,
        "T" => Attr::T,
        "L" => Attr::L,
        "E" => Attr::E,
        "S" => Attr::S,
        "SC" => Attr::Sc,
        "P" => Attr::P,
        "M" => Attr::M,
        "PD" => Attr::Pd,
        "PV" => Attr::Pv,
        "F" => Attr::F,
        "MS" => Attr::Ms,
        "DL" => Attr::Dl,
        "DU" => Attr::Du,
        "DO" => Attr::Do,
        _ => return None,
    })
}

fn tuple(elements: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::Tuple as i32,
        tuple_shapes: elements,
        ..ShapeProto::default()
    }
}

/// The checks XLA's parser makes once an array's layout is read.
fn check_array_layout(
    array: &ShapeProto,
    layout: &LayoutProto,
    layout_span: std::ops::Range<usize>,
    _start: usize,
) -> Result<(), ParseError> {
    if layout.minor_to_major.len() != array.dimensions.len() {
        return Err(ParseError::new(
            layout_span,
            format!(
                "dimensions size is {}, but minor to major size is {}",
                array.dimensions.len(),
                layout.minor_to_major.len()
            ),
        ));
    }
    if layout.physical_shape.is_some() {
        return Err(ParseError::new(
            layout_span,
            "layout has physical shape, but is not for a sparse array",
        ));
    }
    Ok(())
}
