//! The HLO text parser for shapes, layouts and program shapes, accepting what XLA's
//! `hlo_parser.cc` accepts and building the proto XLA's `ToProto` writes.
//!
//! Nested shapes (tuples, buffers, physical shapes) are parsed with an explicit stack,
//! never by recursion, so any input depth is safe; like XLA, nesting deeper than
//! [`MAX_NESTING`] levels is an error.

use super::cursor::Cursor;
use super::error::ParseError;
use super::types;
use super::ProgramPart;
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
    /// layout, as in an HLO module's computation signatures, except a scalar: XLA's
    /// parser gives a scalar its (empty) default layout either way.
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

/// An unfinished shape on the explicit stack. Each gives a place to the shape inside
/// it being read ([`Frame::place`]), so that the large struct is read where it stays.
enum Frame {
    /// A tuple: its elements so far (the last one may be being read), where it starts,
    /// and the first element XLA's parser would reject (reported once the tuple closes).
    Tuple {
        elements: Vec<ShapeProto>,
        problem: Option<ParseError>,
        start: usize,
    },
    /// A buffer `b(...)`.
    Buffer(Box<PendingBuffer>),
    /// An array whose layout is waiting for the end of its `P(...)` shape.
    Physical(Box<PendingArray>),
}

/// The open shapes, innermost last. The innermost is kept out of the vector, so that
/// a tuple of arrays (one level) allocates nothing for it.
#[derive(Default)]
struct Stack {
    below: Vec<Frame>,
    top: Option<Frame>,
}

impl Stack {
    fn len(&self) -> usize {
        self.below.len() + usize::from(self.top.is_some())
    }

    fn last_mut(&mut self) -> Option<&mut Frame> {
        self.top.as_mut()
    }

    fn push(&mut self, frame: Frame) {
        if let Some(below) = self.top.replace(frame) {
            self.below.push(below);
        }
    }

    fn pop(&mut self) -> Option<Frame> {
        let top = self.top.take()?;
        self.top = self.below.pop();
        Some(top)
    }
}

struct PendingBuffer {
    inner: ShapeProto,
    start: usize,
}

struct PendingArray {
    /// The list entries of the array so far (see [`crate::MAX_LIST_ENTRIES`]).
    entries: usize,
    array: ShapeProto,
    layout: Box<LayoutProto>,
    physical: ShapeProto,
    layout_start: usize,
    start: usize,
}

impl Frame {
    /// A place for the next shape inside this one: a new last element of a tuple.
    fn place(&mut self) -> &mut ShapeProto {
        match self {
            Frame::Tuple { elements, .. } => {
                elements.push(ShapeProto::default());
                let last = elements.len() - 1;
                &mut elements[last]
            }
            Frame::Buffer(pending) => &mut pending.inner,
            Frame::Physical(pending) => &mut pending.physical,
        }
    }

    /// Takes back the place given for a shape that turned out to nest others: it is
    /// built on its own frame and [put](Frame::put) here once complete.
    fn unplace(&mut self) {
        if let Frame::Tuple { elements, .. } = self {
            elements.pop();
            if elements.is_empty() {
                // No memory held for a tuple that only opens another (deep nesting).
                *elements = Vec::new();
            }
        }
    }

    /// Puts a complete shape built on its own frame in its place.
    fn put(&mut self, shape: ShapeProto) {
        match self {
            Frame::Tuple { elements, .. } => elements.push(shape),
            Frame::Buffer(pending) => pending.inner = shape,
            Frame::Physical(pending) => pending.physical = shape,
        }
    }
}

pub(crate) struct Parser<'a> {
    pub(crate) cursor: Cursor<'a>,
    options: ParseOptions,
    /// The first soft failure inside the current layout's attributes (see
    /// [`Parser::layout_attributes`]), reported if the layout then fails to close.
    soft: Option<ParseError>,
    /// The list entries read so far into the shape being read (see
    /// [`crate::MAX_LIST_ENTRIES`]): each shape read on its own, tuple element and
    /// buffer counts its own.
    entries: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(input: &'a str, options: ParseOptions) -> Self {
        Self {
            cursor: Cursor::new(input),
            options,
            soft: None,
            entries: 0,
        }
    }

    pub(crate) fn at(input: &'a str, pos: usize, options: ParseOptions) -> Self {
        Self {
            cursor: Cursor::at(input, pos),
            options,
            soft: None,
            entries: 0,
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
        let mut shape = ShapeProto::default();
        self.shape_into(0, &mut shape)?;
        Ok(shape)
    }

    /// Parses one shape nested `base` levels deep (for the nesting limit) into `out`,
    /// which must be a default shape.
    pub(crate) fn shape_into(
        &mut self,
        base: usize,
        out: &mut ShapeProto,
    ) -> Result<(), ParseError> {
        self.cursor.skip_trivia()?;
        self.entries = 0;
        match self.begin(base, out)? {
            // Most shapes are one array, read in place.
            None => Ok(()),
            Some(opened) => self.nested_shape_into(base, opened, out),
        }
    }

    /// Reads the rest of a shape that nests others, `opened` at its start, into `out`.
    fn nested_shape_into(
        &mut self,
        base: usize,
        opened: Frame,
        out: &mut ShapeProto,
    ) -> Result<(), ParseError> {
        let mut stack = Stack::default();
        stack.push(opened);
        'begin: loop {
            self.cursor.skip_trivia()?;
            let mut done_start = self.cursor.pos();
            let depth = base + stack.len();
            let Some(parent) = stack.last_mut() else {
                return Ok(());
            };
            if !matches!(parent, Frame::Physical(_)) {
                // A tuple element or a buffer's array: a shape of its own.
                self.entries = 0;
            }
            let place = parent.place();
            if let Some(opened) = self.begin(depth, place)? {
                parent.unplace();
                stack.push(opened);
                continue 'begin;
            }
            // The shape just read is complete in its place: close the shapes it ends.
            loop {
                if let Some(Frame::Tuple {
                    elements, problem, ..
                }) = stack.last_mut()
                {
                    if let (None, Some(element)) = (&problem, elements.last()) {
                        *problem = tuple_element_problem(element)
                            .map(|message| ParseError::new(done_start..self.cursor.pos(), message));
                    }
                    if self.cursor.eat(b',')? {
                        continue 'begin;
                    }
                }
                let Some(frame) = stack.pop() else {
                    return Ok(());
                };
                let (shape, start) = self.close_frame(frame)?;
                done_start = start;
                match stack.last_mut() {
                    Some(parent) => parent.put(shape),
                    None => {
                        *out = shape;
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Closes a nested shape whose last inner shape is complete, with the checks XLA
    /// makes there; returns the whole shape and where it starts.
    fn close_frame(&mut self, frame: Frame) -> Result<(ShapeProto, usize), ParseError> {
        match frame {
            Frame::Tuple {
                elements,
                problem,
                start,
            } => {
                self.cursor
                    .expect(b')', "expects ')' at the end of tuple shape")?;
                match problem {
                    Some(problem) => Err(problem),
                    None => Ok((tuple(elements), start)),
                }
            }
            Frame::Buffer(pending) => {
                let PendingBuffer { inner, start } = *pending;
                self.cursor
                    .expect(b')', "expects ')' at the end of buffer shape")?;
                if !types::is_array_type(inner.element_type) {
                    return Err(ParseError::new(
                        start..self.cursor.pos(),
                        "a buffer shape must hold an array shape",
                    ));
                }
                let buffer = ShapeProto {
                    element_type: PrimitiveType::Buffer as i32,
                    tuple_shapes: vec![inner],
                    ..ShapeProto::default()
                };
                Ok((buffer, start))
            }
            Frame::Physical(pending) => {
                let PendingArray {
                    entries,
                    mut array,
                    mut layout,
                    physical,
                    layout_start,
                    start,
                } = *pending;
                self.cursor
                    .expect(b')', "expects physical shape to end with ')'")?;
                if physical.element_type == PrimitiveType::Tuple as i32 {
                    // Its elements counted their own: back to the array's.
                    self.entries = entries;
                }
                layout.physical_shape = Some(Box::new(physical));
                self.layout_attributes(&mut layout, Some(Attr::P))?;
                self.layout_end()?;
                let layout_span = layout_start..self.cursor.pos();
                check_array_layout(&array, &layout, layout_span, start)?;
                array.layout = Some(layout);
                Ok((array, start))
            }
        }
    }

    /// Reads the start of a shape: a whole array into `array` (a default shape), or
    /// the opening of a nested shape, returned.
    fn begin(&mut self, depth: usize, array: &mut ShapeProto) -> Result<Option<Frame>, ParseError> {
        let start = match self.cursor.peek()? {
            Some(b'(') => {
                self.nest(depth)?;
                let start = self.cursor.pos();
                self.cursor.eat(b'(')?;
                if self.cursor.eat(b')')? {
                    array.element_type = PrimitiveType::Tuple as i32;
                    return Ok(None);
                }
                return Ok(Some(Frame::Tuple {
                    elements: Vec::new(),
                    problem: None,
                    start,
                }));
            }
            Some(_) => self.cursor.pos(),
            None => return Err(self.cursor.error_here("expected a shape, saw the end")),
        };
        // Trivia is skipped: the word is right at the cursor.
        let word = self.cursor.word();
        if word.is_empty() {
            return Err(self.cursor.error_here("expected primitive type"));
        }
        if word == "b" && self.cursor.peek()? == Some(b'(') {
            self.nest(depth)?;
            self.cursor.eat(b'(')?;
            return Ok(Some(Frame::Buffer(Box::new(PendingBuffer {
                inner: ShapeProto::default(),
                start,
            }))));
        }
        let Some(element_type) = types::type_from_name(word) else {
            return Err(ParseError::new(
                start..start + word.len(),
                format!("expected primitive type, saw '{word}'"),
            ));
        };
        array.element_type = element_type;
        self.dimensions(array)?;
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
            return Ok(None);
        }
        if !self.layout_follows()? {
            // As XLA's parser: a scalar always gets the (empty) default layout, an
            // array only when filling. (A scalar's empty layout prints as nothing,
            // so a scalar without one could not read back.)
            if self.options.fill_missing_layouts || array.dimensions.is_empty() {
                let mut layout = new_layout();
                let rank = array.dimensions.len() as i64;
                self.count(array.dimensions.len())?;
                if rank > 0 {
                    layout.minor_to_major = (0..rank).rev().collect();
                }
                array.layout = Some(layout);
            }
            return Ok(None);
        }
        let layout_start = self.cursor.pos();
        let mut layout = self.layout_head()?;
        if self.cursor.eat(b':')? && self.layout_attributes(&mut layout, None)? {
            self.nest(depth)?;
            return Ok(Some(Frame::Physical(Box::new(PendingArray {
                entries: self.entries,
                array: std::mem::take(array),
                layout,
                physical: ShapeProto::default(),
                layout_start,
                start,
            }))));
        }
        self.layout_end()?;
        check_array_layout(array, &layout, layout_start..self.cursor.pos(), start)?;
        array.layout = Some(layout);
        Ok(None)
    }

    pub(crate) fn nest(&self, depth: usize) -> Result<(), ParseError> {
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
            let (size, dynamic) = match self.cursor.digits() {
                Some(size) => (size, false),
                None => self.dimension_size()?,
            };
            // The size and its dynamic flag.
            self.count(2)?;
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

    /// One dimension size in full (after trivia): `?`, `<=N` or `N`, and whether it
    /// is dynamic.
    fn dimension_size(&mut self) -> Result<(i64, bool), ParseError> {
        if self.cursor.eat(b'?')? {
            return Ok((i64::MIN, true));
        }
        let bounded = self.cursor.eat_str("<=")?;
        let (size, at) = self.cursor.int("a dimension size")?;
        // `<=` of int64's least value is XLA's unbounded size: `?` (it checks the size
        // only after the bound is read, and that one is allowed).
        if size < 0 && !(bounded && size == i64::MIN) {
            return Err(ParseError::new(
                at..self.cursor.pos(),
                format!("invalid dimension size {size}"),
            ));
        }
        Ok((size, bounded))
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
    fn layout_head(&mut self) -> Result<Box<LayoutProto>, ParseError> {
        self.cursor.expect(b'{', "expects '{' to start a layout")?;
        let mut layout = new_layout();
        if self.cursor.at_int()? {
            loop {
                let dim = match self.cursor.digits() {
                    Some(dim) => dim,
                    None => self.cursor.int("an integer")?.0,
                };
                self.count(1)?;
                layout.minor_to_major.push(dim);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
        }
        Ok(layout)
    }

    /// Counts `more` list entries into the shape being read: an error past
    /// [`crate::MAX_LIST_ENTRIES`].
    fn count(&mut self, more: usize) -> Result<(), ParseError> {
        let entries = self.entries.saturating_add(more);
        if entries > crate::MAX_LIST_ENTRIES {
            return Err(self.cursor.error_here(format!(
                "the shape's lists hold more than {} entries in all (xla-shape's limit)",
                crate::MAX_LIST_ENTRIES
            )));
        }
        self.entries = entries;
        Ok(())
    }

    fn layout_end(&mut self) -> Result<(), ParseError> {
        let soft = self.soft.take();
        if self.cursor.eat(b'}')? {
            return Ok(());
        }
        Err(soft.unwrap_or_else(|| self.cursor.error_here("expects layout to end with '}'")))
    }

    /// Records a soft failure (the first one counts) and returns `Ok(false)`.
    fn soft_fail(&mut self, message: &str) -> Result<bool, ParseError> {
        self.cursor.skip_trivia()?;
        if self.soft.is_none() {
            self.soft = Some(self.cursor.error_here(message));
        }
        Ok(false)
    }

    /// XLA's list: `open`, then nothing or `elem (',' elem)*`, then `close`. A missing
    /// `open`, a bad element or a missing `close` is a soft failure (`Ok(false)`), with
    /// the elements read so far kept.
    fn soft_list(
        &mut self,
        open: u8,
        close: u8,
        mut elem: impl FnMut(&mut Self) -> Result<bool, ParseError>,
    ) -> Result<bool, ParseError> {
        if !self.cursor.eat(open)? {
            return self.soft_fail(&format!("expects a list starting with '{}'", open as char));
        }
        if self.cursor.eat(close)? {
            return Ok(true);
        }
        loop {
            if !elem(self)? {
                return Ok(false);
            }
            if !self.cursor.eat(b',')? {
                break;
            }
        }
        if self.cursor.eat(close)? {
            Ok(true)
        } else {
            self.soft_fail(&format!("expects a list to end with '{}'", close as char))
        }
    }

    /// `(` INT [`)`] for L, E, S and M: the `(` and the integer are needed (else a soft
    /// failure and no value), the `)` is not.
    fn int_attribute(&mut self, what: &str) -> Result<Option<(i64, usize)>, ParseError> {
        if !self.cursor.eat(b'(')? {
            self.soft_fail(&format!("expects {what} to start with '('"))?;
            return Ok(None);
        }
        if !self.cursor.at_int()? {
            self.soft_fail("expected an integer")?;
            return Ok(None);
        }
        let value = self.cursor.int("an integer")?;
        if !self.cursor.eat(b')')? {
            self.soft_fail(&format!("expects {what} to end with ')'"))?;
        }
        Ok(Some(value))
    }

    /// [`(`] [TYPE] [`)`] for `#` and `*`: each part is read if it is there.
    fn type_attribute(&mut self, what: &str) -> Result<Option<i32>, ParseError> {
        if !self.cursor.eat(b'(')? {
            self.soft_fail(&format!("expects {what} to start with '('"))?;
        }
        self.cursor.skip_trivia()?;
        let mut ahead = self.cursor.clone();
        let ty = ahead.ident()?.and_then(types::type_from_name);
        match ty {
            Some(_) => self.cursor = ahead,
            None => {
                self.soft_fail("expected primitive type")?;
            }
        }
        if !self.cursor.eat(b')')? {
            self.soft_fail(&format!("expects {what} to be followed by ')'"))?;
        }
        Ok(ty)
    }

    /// Reads attributes after the `:` the caller read (or resumes after `P(...)` when
    /// `after` is set). Returns true when it stopped at `P(`, whose shape the caller
    /// must parse.
    fn layout_attributes(
        &mut self,
        layout: &mut LayoutProto,
        after: Option<Attr>,
    ) -> Result<bool, ParseError> {
        let mut last = after;
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
                // A whole identifier, as XLA's lexer reads it: `S1` is not `S`.
                _ => match ahead.ident()? {
                    Some(word) => match attr_of(word) {
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
            // XLA's parser ignores the failure of most attribute parts: it stops that
            // attribute where it failed and goes on, so `S(1}` is `S(1)` and `#u8` is
            // `#(u8)`; a failure only matters if what is left does not close the layout.
            match attr {
                Attr::D => {
                    self.soft_list(b'(', b')', Self::dim_level_type)?;
                }
                Attr::T => loop {
                    self.count(1)?;
                    layout.tiles.push(TileProto::default());
                    let complete = self.soft_list(b'(', b')', |p| {
                        let Some(tile) = layout.tiles.last_mut() else {
                            return Ok(false);
                        };
                        p.tile_dimension(tile)
                    })?;
                    if !complete || self.cursor.peek()? != Some(b'(') {
                        break;
                    }
                },
                Attr::L => {
                    if let Some((n, at)) = self.int_attribute("tail padding alignment")? {
                        if n < 1 {
                            return Err(ParseError::new(
                                at..self.cursor.pos(),
                                format!("tail padding alignment must be at least 1, saw {n}"),
                            ));
                        }
                        layout.tail_padding_alignment_in_elements = n;
                    }
                }
                Attr::Index => {
                    if let Some(ty) = self.type_attribute("index primitive type")? {
                        layout.index_primitive_type = ty;
                    }
                }
                Attr::Pointer => {
                    if let Some(ty) = self.type_attribute("pointer primitive type")? {
                        layout.pointer_primitive_type = ty;
                    }
                }
                Attr::E => {
                    if let Some((n, _)) = self.int_attribute("element size in bits")? {
                        layout.element_size_in_bits = n;
                    }
                }
                // XLA keeps the memory space in an int8_t.
                Attr::S => {
                    if let Some((n, _)) = self.int_attribute("memory space")? {
                        layout.memory_space = i64::from(n as i8);
                    }
                }
                Attr::Sc => self.split_configs(layout)?,
                Attr::P => {
                    self.cursor.expect(b'(', "expects '(' after P")?;
                    return Ok(true);
                }
                Attr::M => {
                    let what = "dynamic shape metadata prefix bytes";
                    if let Some((n, _)) = self.int_attribute(what)? {
                        layout.dynamic_shape_metadata_prefix_bytes = n;
                    }
                }
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
                let value = self.cursor.int("an integer")?.0;
                self.count(1)?;
                values.push(value);
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
                let value = self.enum_value(&["D", "C", "S", "H"], "a dim level type")?;
                self.count(1)?;
                values.push(value);
                if !self.cursor.eat(b',')? {
                    break;
                }
            }
            self.close()?;
        }
        Ok(values)
    }

    /// One entry of the `D(...)` group: D|C|S|H, then optionally `+`, then `~`.
    fn dim_level_type(&mut self) -> Result<bool, ParseError> {
        self.cursor.skip_trivia()?;
        let mut ahead = self.cursor.clone();
        if !matches!(ahead.letters()?, Some(("D" | "C" | "S" | "H", _))) {
            return self.soft_fail("expected a DimLevelType abbreviation (D, C, or S)");
        }
        self.cursor = ahead;
        self.cursor.eat(b'+')?;
        self.cursor.eat(b'~')?;
        Ok(true)
    }

    /// One tile dimension: an integer or `*`.
    fn tile_dimension(&mut self, tile: &mut TileProto) -> Result<bool, ParseError> {
        if let Some(n) = self.cursor.digits() {
            self.count(1)?;
            tile.dimensions.push(n);
            return Ok(true);
        }
        if self.cursor.eat(b'*')? {
            self.count(1)?;
            tile.dimensions.push(i64::MIN);
            return Ok(true);
        }
        if !self.cursor.at_int()? {
            return self.soft_fail("expected an integer or '*'");
        }
        let (n, at) = self.cursor.int("an integer or '*'")?;
        if n < 0 && n != i64::MIN {
            // XLA aborts here (a CHECK in LayoutUtil::MakeLayout).
            return Err(ParseError::new(
                at..self.cursor.pos(),
                format!("tile dimension {n} is negative (a combined dimension is '*')"),
            ));
        }
        self.count(1)?;
        tile.dimensions.push(n);
        Ok(true)
    }

    /// `SC` then `(` dimension `:` index, ... `)` repeated; a config whose dimension
    /// was read is kept even if its index list fails.
    fn split_configs(&mut self, layout: &mut LayoutProto) -> Result<(), ParseError> {
        if self.cursor.peek()? != Some(b'(') {
            self.soft_fail("expects split configs to start with '('")?;
            return Ok(());
        }
        while self.cursor.eat(b'(')? {
            if !self.cursor.at_int()? {
                self.soft_fail("expected an integer")?;
                return Ok(());
            }
            self.count(1)?;
            let mut split = SplitConfigProto {
                dimension: self.cursor.int("an integer")?.0,
                ..SplitConfigProto::default()
            };
            let complete = self.soft_list(b':', b')', |p| {
                if !p.cursor.at_int()? {
                    return p.soft_fail("expected an integer");
                }
                let index = p.cursor.int("an integer")?.0;
                p.count(1)?;
                split.split_indices.push(index);
                Ok(true)
            })?;
            layout.split_configs.push(split);
            if !complete {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A standalone layout `{...}` (XLA's `ParseLayout`).
    pub(crate) fn layout(&mut self) -> Result<LayoutProto, ParseError> {
        let mut layout = self.layout_head()?;
        if self.cursor.eat(b':')? && self.layout_attributes(&mut layout, None)? {
            // The physical shape's entries are the layout's (a tuple's elements count
            // their own).
            let outer = self.entries;
            let shape = self.shape()?;
            if shape.element_type == PrimitiveType::Tuple as i32 {
                self.entries = outer;
            } else {
                self.count(outer)?;
            }
            self.cursor
                .expect(b')', "expects physical shape to end with ')'")?;
            layout.physical_shape = Some(Box::new(shape));
            self.layout_attributes(&mut layout, Some(Attr::P))?;
        }
        self.layout_end()?;
        Ok(*layout)
    }

    /// `(p0, p1, ...)->result`; each parameter may carry a name (`name: shape`), and the
    /// whole may be wrapped in `{...}` as in `entry_computation_layout={...}`.
    pub(crate) fn program_shape(&mut self) -> Result<ProgramShapeProto, ParseError> {
        let mut program = ProgramShapeProto::default();
        self.program_frame(&mut |parser, part, name| {
            let shape = parser.shape()?;
            match part {
                ProgramPart::Parameter(_) => {
                    program.parameter_names.push(name);
                    program.parameters.push(shape);
                }
                ProgramPart::Result => program.result = Some(shape),
            }
            Ok(())
        })?;
        Ok(program)
    }

    /// The frame of a program shape, [`Self::program_shape`] without its shapes: each
    /// parameter's shape (after its name, `""` for none, which it is given) and then
    /// the result's are read by `read`. Returns the number of parameters.
    pub(crate) fn program_frame(
        &mut self,
        read: &mut dyn FnMut(&mut Self, ProgramPart, String) -> Result<(), ParseError>,
    ) -> Result<usize, ParseError> {
        let braced = self.cursor.eat(b'{')?;
        self.cursor
            .expect(b'(', "expects '(' to start the parameters")?;
        let mut parameters = 0;
        if !self.cursor.eat(b')')? {
            let mut named = None;
            loop {
                let name = self.parameter_name()?;
                match (named, name.is_some()) {
                    (None, has) => named = Some(has),
                    (Some(all), has) if all != has => {
                        return Err(self
                            .cursor
                            .error_here("either every parameter has a name or none has"))
                    }
                    _ => {}
                }
                let part = ProgramPart::Parameter(parameters);
                read(self, part, name.unwrap_or_default())?;
                parameters += 1;
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
        read(self, ProgramPart::Result, String::new())?;
        if braced {
            self.cursor.expect(b'}', "expects '}'")?;
        }
        Ok(parameters)
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
        if let Some(word) = ahead.ident()? {
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

/// An empty layout as XLA's `ToProto` writes one (tail padding 1), made on the heap
/// where the shape keeps it, so that the large struct is not moved there afterwards.
fn new_layout() -> Box<LayoutProto> {
    let mut layout = Box::<LayoutProto>::default();
    layout.tail_padding_alignment_in_elements = 1;
    layout
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

/// Why XLA's parser would reject `element` as a tuple element (its arrays are
/// validated with XLA's rules), or `None`.
///
/// XLA builds a parsed tuple with `ShapeUtil::MakeValidatedTupleShape`, so every
/// element must be valid (missing layouts allowed); a top-level array or a buffer is
/// not validated. Each array is checked once, when its innermost tuple reads it, and
/// the first problem is reported when the tuple closes.
pub(crate) fn tuple_element_problem(element: &ShapeProto) -> Option<String> {
    let array = match PrimitiveType::try_from(element.element_type) {
        Ok(PrimitiveType::Buffer) => element.tuple_shapes.first()?,
        Ok(PrimitiveType::Tuple | PrimitiveType::Token | PrimitiveType::OpaqueType) => return None,
        _ => element,
    };
    if plainly_valid_array(array) {
        return None;
    }
    let options = crate::validate::Options::hlo_text();
    let report = crate::validate::validate_shape_with(array, options)
        .into_parts()
        .1;
    report
        .issues()
        .iter()
        // The crate's own size checks (for the indexing engine) are not ones XLA's
        // parser applies.
        .find(|issue| issue.severity() == crate::Severity::Error && !issue.kind().is_own_check())
        .map(|issue| format!("invalid tuple element: {issue}"))
}

/// Whether `array` passes every rule of the validator, known without running it: a
/// quick sufficient condition that covers most tuple elements (dimensions with a
/// small element count, and no layout or one with at most `E(n)` and `S(n)`).
/// Anything else goes through the validator; a unit test checks this against it.
fn plainly_valid_array(array: &ShapeProto) -> bool {
    // Far below every size limit (i64::MAX bytes or bits), at each partial product.
    const SMALL: u64 = 1 << 48;
    let rank = array.dimensions.len();
    let mut count = 1u64;
    for &size in &array.dimensions {
        // Negative or unbounded sizes are left to the validator.
        let Ok(size) = u64::try_from(size) else {
            return false;
        };
        match count.checked_mul(size) {
            Some(product) if product <= SMALL => count = product,
            _ => return false,
        }
    }
    // Only array types have a bit width.
    let Some(type_bits) =
        crate::PrimitiveType::from_i32(array.element_type).and_then(|ty| ty.bit_width())
    else {
        return false;
    };
    let flags = array.is_dynamic_dimension.len();
    if !array.tuple_shapes.is_empty() || (flags != 0 && flags != rank) {
        return false;
    }
    let Some(layout) = array.layout.as_deref() else {
        return true;
    };
    let plain = layout.tiles.is_empty()
        && matches!(layout.tail_padding_alignment_in_elements, 0 | 1)
        && layout.index_primitive_type == 0
        && layout.pointer_primitive_type == 0
        // No element narrower than its type, and few enough bits in all.
        && (layout.element_size_in_bits == 0
            || (i64::from(type_bits)..=1024).contains(&layout.element_size_in_bits))
        && i8::try_from(layout.memory_space).is_ok()
        && layout.split_configs.is_empty()
        && layout.physical_shape.is_none()
        && layout.dynamic_shape_metadata_prefix_bytes >= 0
        && layout.padded_dimensions.is_empty()
        && layout.padding_value == 0
        && layout.format == 0
        && layout.max_sparse_elements == 0
        && layout.dim_level_types.is_empty()
        && layout.dim_unique.is_empty()
        && layout.dim_ordered.is_empty();
    plain && is_permutation(&layout.minor_to_major, rank)
}

/// Whether `dims` holds each of `0..rank` once (ranks up to 64; larger ones are left
/// to the validator).
fn is_permutation(dims: &[i64], rank: usize) -> bool {
    if dims.len() != rank || rank > 64 {
        return false;
    }
    let mut seen = 0u64;
    for &dim in dims {
        match u32::try_from(dim) {
            Ok(dim) if (dim as usize) < rank && seen & (1 << dim) == 0 => seen |= 1 << dim,
            _ => return false,
        }
    }
    true
}

/// An old (2018-2020) sparse layout, written with our `F(sparse)` extension: it had no
/// `minor_to_major`, so the length check does not apply (XLA cannot read such text).
pub(crate) fn is_legacy_sparse(layout: &LayoutProto) -> bool {
    layout.format == crate::proto::Format::Sparse as i32
}

/// The checks XLA's parser makes once an array's layout is read.
fn check_array_layout(
    array: &ShapeProto,
    layout: &LayoutProto,
    layout_span: std::ops::Range<usize>,
    _start: usize,
) -> Result<(), ParseError> {
    if layout.minor_to_major.len() != array.dimensions.len() && !is_legacy_sparse(layout) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every edit the test makes to a real shape, to reach both sides of each rule.
    fn variants(shape: &ShapeProto) -> Vec<ShapeProto> {
        let mut out = vec![shape.clone()];
        let mut edit = |f: &dyn Fn(&mut ShapeProto)| {
            let mut s = shape.clone();
            f(&mut s);
            out.push(s);
        };
        for size in [0, 1, -1, i64::MIN, 1 << 24, 1 << 47, 1 << 62, i64::MAX] {
            edit(&|s| s.dimensions.push(size));
            edit(&|s| {
                s.dimensions.push(size);
                s.is_dynamic_dimension.push(true);
                if let Some(l) = s.layout.as_mut() {
                    l.minor_to_major.insert(0, s.dimensions.len() as i64 - 1);
                }
            });
            edit(&|s| s.dimensions.iter_mut().for_each(|d| *d = size));
        }
        edit(&|s| s.is_dynamic_dimension.push(false));
        edit(&|s| s.element_type = 0);
        edit(&|s| s.element_type = PrimitiveType::Tuple as i32);
        edit(&|s| s.tuple_shapes.push(ShapeProto::default()));
        edit(&|s| s.layout = None);
        let layout_edits: [&dyn Fn(&mut LayoutProto); 25] = [
            &|l| l.minor_to_major.reverse(),
            &|l| l.minor_to_major.push(0),
            &|l| {
                l.minor_to_major.pop();
            },
            &|l| l.minor_to_major.iter_mut().for_each(|d| *d = 0),
            &|l| l.minor_to_major.iter_mut().for_each(|d| *d += 1),
            &|l| l.tiles.push(TileProto::default()),
            &|l| l.tail_padding_alignment_in_elements = 0,
            &|l| l.tail_padding_alignment_in_elements = -1,
            &|l| l.index_primitive_type = PrimitiveType::S32 as i32,
            &|l| l.element_size_in_bits = 1,
            &|l| l.element_size_in_bits = 4,
            &|l| l.element_size_in_bits = 16,
            &|l| l.element_size_in_bits = 64,
            &|l| l.element_size_in_bits = 1 << 40,
            &|l| l.element_size_in_bits = -4,
            &|l| l.memory_space = 300,
            &|l| l.memory_space = -1,
            &|l| l.split_configs.push(SplitConfigProto::default()),
            &|l| l.physical_shape = Some(Box::default()),
            &|l| l.dynamic_shape_metadata_prefix_bytes = -1,
            &|l| l.padded_dimensions.push(1),
            &|l| l.padding_value = 1,
            &|l| l.format = 2,
            &|l| l.max_sparse_elements = 1,
            &|l| l.dim_level_types.push(1),
        ];
        for f in layout_edits {
            edit(&|s| f(s.layout.get_or_insert_with(Default::default)));
        }
        out
    }

    /// The quick check never passes a shape the validator would reject.
    #[test]
    fn plainly_valid_arrays_are_valid() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/messages.jsonl");
        let text = std::fs::read_to_string(path).expect("fixtures/messages.jsonl");
        let (mut plain, mut checked) = (0, 0);
        for line in text.lines() {
            let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let Some(text) = row["xla"]["text"].as_str() else {
                continue;
            };
            let Ok(parsed) = super::super::parse_shape(text) else {
                continue;
            };
            let mut shapes = vec![&parsed];
            while let Some(shape) = shapes.pop() {
                shapes.extend(&shape.tuple_shapes);
                for variant in variants(shape) {
                    checked += 1;
                    if !plainly_valid_array(&variant) {
                        continue;
                    }
                    plain += 1;
                    let report = crate::validate::validate_shape_with(
                        &variant,
                        crate::validate::Options::hlo_text(),
                    )
                    .into_parts()
                    .1;
                    assert!(
                        report
                            .issues()
                            .iter()
                            .all(|i| i.severity() != crate::Severity::Error),
                        "{variant:?}: {:?}",
                        report.issues()
                    );
                }
            }
        }
        assert!(plain > 1000 && checked > 2 * plain, "{plain} of {checked}");
    }
}
