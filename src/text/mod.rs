//! HLO text: shapes, layouts and program shapes as XLA prints and parses them, and a
//! scanner that finds and checks every shape in a whole HLO module.
//!
//! ```
//! use xla_shape::text;
//!
//! let shape = text::parse_shape("bf16[32,4096]{1,0:T(8,128)(2,1)S(1)}").unwrap();
//! assert_eq!(shape.dimensions, [32, 4096]);
//! assert_eq!(text::print_shape(&shape).unwrap(), "bf16[32,4096]{1,0:T(8,128)(2,1)S(1)}");
//!
//! // Like XLA's standalone parser, a missing layout becomes the default one.
//! let shape = text::parse_shape("f32[2,3]").unwrap();
//! assert_eq!(text::print_shape(&shape).unwrap(), "f32[2,3]{1,0}");
//!
//! let err = text::parse_shape("f32[2,3]{0}").unwrap_err();
//! assert_eq!(err.to_string(), "dimensions size is 2, but minor to major size is 1");
//! ```
//!
//! The parser builds exactly the proto XLA's parser followed by `Shape::ToProto` builds:
//! one `is_dynamic_dimension` per dimension, `tail_padding_alignment_in_elements: 1` on
//! every layout, the memory space narrowed to 8 bits, the 2022-25 `D(...)` group read
//! and dropped. It does not validate (`f32[4]{7}` parses, as in XLA).
//!
//! Our extension for the layout fields XLA retired, written after every attribute XLA
//! knows and in this order: `PD(3,5)` padded_dimensions, `PV(zero)` padding_value
//! (`invalid|zero|one|lowest|highest|unknown` or a number), `F(dense)` format
//! (`invalid|dense|sparse` or a number), `MS(n)` max_sparse_elements, `DL(C,S)`
//! dim_level_types (`D|C|S|H` or a number), `DU(1,0)` dim_unique, `DO(1,0)` dim_ordered.

mod cursor;
mod display;
mod error;
pub mod module;
mod parser;
mod printer;
pub(crate) mod types;

pub use display::FromTextError;
pub use error::{ParseError, PrintError};
pub(crate) use parser::tuple_element_problem;
pub use parser::{ParseOptions, MAX_NESTING};
pub use types::{type_from_name, type_name};

use crate::path::Path;
use crate::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use crate::AnyMessage;
use crate::MessageKind;
use parser::Parser;
use printer::{Mode, Printer};

/// Parses a whole string as one shape, as XLA's `ParseShape` does (missing layouts are
/// filled with the default layout).
///
/// Possible reasons to fail, one example each: `f32[2,3]{0}` (layout length),
/// `f32[2]{0:S(1)T(2)}` (attributes out of order), `f32[1]{0:P(f32[1])}` (physical
/// shape on an array), `b(s32[], f32[])` (a buffer holds one array), `f32[-1]`,
/// `f32[2]{}` (extra content: `{}` is not a layout after a shape).
pub fn parse_shape(input: &str) -> Result<ShapeProto, ParseError> {
    parse_shape_with(input, ParseOptions::default())
}

/// [`parse_shape`] with options.
pub fn parse_shape_with(input: &str, options: ParseOptions) -> Result<ShapeProto, ParseError> {
    let mut parser = Parser::new(input, options);
    let mut shape = ShapeProto::default();
    parser.shape_into(0, &mut shape)?;
    parser.finish("shape")?;
    Ok(shape)
}

/// What [`parse_shape_streaming`] read: a shape, or a top-level tuple whose elements
/// went to the callback.
#[derive(Clone, Debug, PartialEq)]
pub enum Streamed {
    /// The input is not a tuple: the whole shape.
    Shape(ShapeProto),
    /// The input is a tuple of this many elements, each handed to the callback.
    Tuple {
        /// The number of elements.
        elements: usize,
    },
}

/// [`parse_shape_with`], handing the elements of a top-level tuple to `element` one
/// by one (with their index and byte span) instead of building the tuple, so that a
/// huge one-line tuple costs the memory of one element. The callback sees every
/// element that parses, also when a later one fails; the result (including which error
/// comes first) is that of [`parse_shape_with`].
pub fn parse_shape_streaming(
    input: &str,
    options: ParseOptions,
    element: &mut dyn FnMut(usize, std::ops::Range<usize>, ShapeProto),
) -> Result<Streamed, ParseError> {
    stream(input, options, false, &mut |path, span, shape| {
        element(path.first().copied().unwrap_or(0), span, shape);
    })
}

/// What [`parse_shape_leaves`] hands each shape to: its path of tuple indices, its
/// byte span in the input, and the shape.
pub type LeafFn<'a> = dyn FnMut(&[usize], std::ops::Range<usize>, ShapeProto) + 'a;

/// [`parse_shape_streaming`] into nested tuples too: every shape of a top-level tuple
/// that is not itself a non-empty tuple goes to `leaf` with its path of tuple indices
/// (`[2, 0]` is element 0 of the top-level tuple's element 2) and byte span, so that a
/// huge tuple costs the memory of one leaf however its elements nest. The result is
/// that of [`parse_shape_with`], as for [`parse_shape_streaming`]; `Streamed::Tuple`
/// counts the top-level elements.
pub fn parse_shape_leaves(
    input: &str,
    options: ParseOptions,
    leaf: &mut LeafFn<'_>,
) -> Result<Streamed, ParseError> {
    stream(input, options, true, leaf)
}

/// What [`parse_shape_outline`] hands on for each element of a top-level tuple.
#[derive(Clone, Debug, PartialEq)]
pub enum OutlineElement {
    /// An element that is no non-empty tuple, parsed.
    Shape(ShapeProto),
    /// A non-empty tuple, checked but not built: its text is the element's span.
    Tuple,
}

/// [`parse_shape_streaming`] that builds no element that is a non-empty tuple: each
/// element of a top-level tuple goes to `element` with its index and byte span, parsed
/// when it is no non-empty tuple, else only checked (its shapes are read one at a time
/// and dropped), so that a tuple of one huge tuple costs the memory of one of its
/// shapes. The span of a tuple element, from its `(` to its `)`, parses alone as that
/// element. The result is that of [`parse_shape_with`], as for
/// [`parse_shape_streaming`].
pub fn parse_shape_outline(
    input: &str,
    options: ParseOptions,
    element: &mut dyn FnMut(usize, std::ops::Range<usize>, OutlineElement),
) -> Result<Streamed, ParseError> {
    let element = std::cell::RefCell::new(element);
    stream_with(
        input,
        options,
        true,
        &mut |path, span, shape| {
            if let [i] = path {
                (element.borrow_mut())(*i, span, OutlineElement::Shape(shape));
            }
        },
        &mut |path, span| {
            if let [i] = path {
                (element.borrow_mut())(*i, span, OutlineElement::Tuple);
            }
        },
    )
}

fn stream(
    input: &str,
    options: ParseOptions,
    nest: bool,
    leaf: &mut LeafFn<'_>,
) -> Result<Streamed, ParseError> {
    stream_with(input, options, nest, leaf, &mut |_, _| {})
}

/// [`stream`], also handing each nested tuple that closes to `closed`, with its path
/// and span.
fn stream_with(
    input: &str,
    options: ParseOptions,
    nest: bool,
    leaf: &mut LeafFn<'_>,
    closed: &mut ClosedFn<'_>,
) -> Result<Streamed, ParseError> {
    let mut parser = Parser::new(input, options);
    if parser.cursor.peek()? != Some(b'(') {
        let shape = parser.shape()?;
        parser.finish("shape")?;
        return Ok(Streamed::Shape(shape));
    }
    parser.cursor.eat(b'(')?;
    let elements = stream_elements(&mut parser, 1, nest, leaf, closed)?;
    parser.finish("shape")?;
    Ok(Streamed::Tuple { elements })
}

/// What [`stream_elements`] hands each nested tuple to once it is closed: its path of
/// tuple indices and its byte span, `(` to `)`.
type ClosedFn<'a> = dyn FnMut(&[usize], std::ops::Range<usize>) + 'a;

/// The elements of a tuple whose `(` was just read, up to and with its `)`, as the
/// whole parse reads them (elements at nesting `level`; the first element that is no
/// valid tuple element is the tuple's error once its `)` is read), each handed to
/// `leaf`; with `nest`, a non-empty tuple element is read the same way instead, on a
/// stack of open tuples (they may nest thousands deep). Returns the element count.
fn stream_elements(
    parser: &mut Parser<'_>,
    level: usize,
    nest: bool,
    leaf: &mut LeafFn<'_>,
    closed: &mut ClosedFn<'_>,
) -> Result<usize, ParseError> {
    if parser.cursor.eat(b')')? {
        return Ok(0);
    }
    // The open tuples, outermost first: elements read so far, the first invalid one
    // and where the tuple starts.
    let mut open: Vec<(usize, Option<ParseError>, usize)> = vec![(0, None, 0)];
    // The index of the element being read in each open tuple.
    let mut path: Vec<usize> = Vec::new();
    loop {
        parser.cursor.skip_trivia()?;
        let start = parser.cursor.pos();
        let depth = level + open.len() - 1;
        let Some((count, problem, _)) = open.last_mut() else {
            return Ok(0);
        };
        path.push(*count);
        if nest && parser.cursor.peek()? == Some(b'(') {
            parser.nest(depth)?;
            parser.cursor.eat(b'(')?;
            if !parser.cursor.eat(b')')? {
                open.push((0, None, start));
                continue;
            }
            let empty = ShapeProto {
                element_type: crate::proto::PrimitiveType::Tuple as i32,
                ..ShapeProto::default()
            };
            leaf(&path, start..parser.cursor.pos(), empty);
        } else {
            let mut shape = ShapeProto::default();
            parser.shape_into(depth, &mut shape)?;
            let span = start..parser.cursor.pos();
            if problem.is_none() {
                if let Some(message) = parser::tuple_element_problem(&shape) {
                    *problem = Some(ParseError::new(span.clone(), message));
                }
            }
            leaf(&path, span, shape);
        }
        // An element is read: close the tuples it ends.
        loop {
            path.pop();
            let Some((count, _, _)) = open.last_mut() else {
                return Ok(0);
            };
            *count += 1;
            if parser.cursor.eat(b',')? {
                break;
            }
            parser
                .cursor
                .expect(b')', "expects ')' at the end of tuple shape")?;
            let Some((count, problem, start)) = open.pop() else {
                return Ok(0);
            };
            if let Some(problem) = problem {
                return Err(problem);
            }
            if open.is_empty() {
                return Ok(count);
            }
            closed(&path, start..parser.cursor.pos());
        }
    }
}

pub use crate::message::ProgramPart;

/// What [`parse_program_shape_leaves`] hands each shape to: the part it belongs to, its
/// path of tuple indices inside that part (`[]` for the part itself), its byte span in
/// the input, and the shape.
pub type ProgramLeafFn<'a> =
    dyn FnMut(ProgramPart, &[usize], std::ops::Range<usize>, ShapeProto) + 'a;

/// [`parse_program_shape_with`], handing every parameter and the result to `leaf`
/// instead of building the program shape, each opened into its tuples as
/// [`parse_shape_leaves`] opens a tuple (so that every shape handed on is no non-empty
/// tuple), so that a program shape of a million parameters costs the memory of one.
/// Names are read and checked as the whole parse reads them, and not kept: every
/// parameter has one (empty when the text gives none). The callback sees every shape
/// that parses, also when a later one fails; the result is the error of
/// [`parse_program_shape_with`], or the number of parameters.
pub fn parse_program_shape_leaves(
    input: &str,
    options: ParseOptions,
    leaf: &mut ProgramLeafFn<'_>,
) -> Result<usize, ParseError> {
    parse_program_shape_named_leaves(input, options, leaf, &mut |_, _| {})
}

/// [`parse_program_shape_leaves`] with each parameter's name (`""` when the text gives
/// none) handed to `name` before the parameter's shapes.
pub fn parse_program_shape_named_leaves(
    input: &str,
    options: ParseOptions,
    leaf: &mut ProgramLeafFn<'_>,
    name: &mut dyn FnMut(usize, &str),
) -> Result<usize, ParseError> {
    program_parts(input, options, &mut |parser, part, label| {
        if let ProgramPart::Parameter(i) = part {
            name(i, label);
        }
        stream_shape(parser, &mut |path, span, shape| {
            leaf(part, path, span, shape)
        })
    })
}

/// The frame of a program shape as [`parse_program_shape_with`] reads it (the whole
/// input, `Parser::program_frame`), each parameter's shape (after its name, `""` for
/// none) and then the result's read by `read`.
fn program_parts(
    input: &str,
    options: ParseOptions,
    read: &mut dyn FnMut(&mut Parser<'_>, ProgramPart, &str) -> Result<(), ParseError>,
) -> Result<usize, ParseError> {
    let mut parser = Parser::new(input, options);
    let parameters = parser.program_frame(&mut |parser, part, name| read(parser, part, &name))?;
    parser.finish("program shape")?;
    Ok(parameters)
}

/// One shape at nesting level 0, as `Parser::shape` reads it, handed to `leaf` with
/// path `[]`, or, when it is a non-empty tuple, its shapes handed on as
/// [`parse_shape_leaves`] hands them.
fn stream_shape(parser: &mut Parser<'_>, leaf: &mut LeafFn<'_>) -> Result<(), ParseError> {
    parser.cursor.skip_trivia()?;
    let start = parser.cursor.pos();
    if parser.cursor.peek()? == Some(b'(') {
        parser.nest(0)?;
        parser.cursor.eat(b'(')?;
        if !parser.cursor.eat(b')')? {
            stream_elements(parser, 1, true, leaf, &mut |_, _| {})?;
            return Ok(());
        }
        let empty = ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..ShapeProto::default()
        };
        leaf(&[], start..parser.cursor.pos(), empty);
        return Ok(());
    }
    let mut shape = ShapeProto::default();
    parser.shape_into(0, &mut shape)?;
    leaf(&[], start..parser.cursor.pos(), shape);
    Ok(())
}

/// [`parse_shape_at`] with the shapes handed to `leaf` as [`parse_shape_leaves`] hands
/// them (a tuple opened however it nests, anything else whole at path `[]`), instead
/// of building the shape: the same errors. Returns the byte offset just after it.
pub(crate) fn parse_shape_leaves_at(
    input: &str,
    start: usize,
    options: ParseOptions,
    leaf: &mut LeafFn<'_>,
) -> Result<usize, ParseError> {
    let mut parser = Parser::at(input, start, options);
    stream_shape(&mut parser, leaf)?;
    Ok(parser.cursor.pos())
}

/// Parses one shape starting at byte `start` of `input` and returns it with the byte
/// offset just after it; whatever follows is left alone.
pub fn parse_shape_at(
    input: &str,
    start: usize,
    options: ParseOptions,
) -> Result<(ShapeProto, usize), ParseError> {
    let mut parser = Parser::at(input, start, options);
    let shape = parser.shape()?;
    Ok((shape, parser.cursor.pos()))
}

/// Parses a whole string as one layout, `{1,0:T(8,128)}`, as XLA's `ParseLayout` does.
pub fn parse_layout(input: &str) -> Result<LayoutProto, ParseError> {
    let mut parser = Parser::new(input, ParseOptions::default());
    let layout = parser.layout()?;
    parser.finish("layout")?;
    Ok(layout)
}

/// Parses a program shape: `(f32[2]{0}, s32[])->f32[]`, optionally in braces as in
/// `entry_computation_layout={...}`, with optional parameter names
/// (`(a: f32[2], b: s32[]) -> f32[]`). Without names, every parameter gets an empty
/// name, as XLA's `ProgramShape::ToProto` writes one name per parameter.
pub fn parse_program_shape(input: &str) -> Result<ProgramShapeProto, ParseError> {
    parse_program_shape_with(input, ParseOptions::default())
}

/// [`parse_program_shape`] with options.
pub fn parse_program_shape_with(
    input: &str,
    options: ParseOptions,
) -> Result<ProgramShapeProto, ParseError> {
    let mut parser = Parser::new(input, options);
    let program = parser.program_shape()?;
    parser.finish("program shape")?;
    Ok(program)
}

/// Parses one message of `kind` from text.
pub fn parse_message(kind: MessageKind, input: &str) -> Result<AnyMessage, ParseError> {
    Ok(match kind {
        MessageKind::Shape => AnyMessage::Shape(parse_shape(input)?),
        MessageKind::Layout => AnyMessage::Layout(parse_layout(input)?),
        MessageKind::ProgramShape => AnyMessage::ProgramShape(parse_program_shape(input)?),
    })
}

/// Prints a shape with its layouts, refusing what the text cannot carry back (see the
/// module docs for the few normalizations: an empty `is_dynamic_dimension` list reads
/// back as all static, a tail padding of 0 as 1).
pub fn print_shape(shape: &ShapeProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Exact, true, &Path::root()).shape(shape, &mut out)?;
    Ok(out)
}

/// Prints a shape without layouts (`f32[2,3]`), as XLA's `ShapeUtil::HumanString`.
pub fn print_shape_without_layout(shape: &ShapeProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Exact, false, &Path::root()).shape(shape, &mut out)?;
    Ok(out)
}

/// Prints what XLA prints for this proto (`Shape::FromProto` then
/// `HumanStringWithLayout`): retired fields and dim level types are ignored, the memory
/// space is narrowed to 8 bits, a non-integral index type prints `#(invalid)`. Fails
/// where XLA's `FromProto` fails.
pub fn print_shape_as_xla(shape: &ShapeProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Xla, true, &Path::root()).shape(shape, &mut out)?;
    Ok(out)
}

/// Prints a layout (`{1,0:T(8,128)}`, `{}` when empty), as XLA's `Layout::ToString`,
/// plus our legacy extension.
pub fn print_layout(layout: &LayoutProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Exact, true, &Path::root()).layout(layout, &mut out)?;
    Ok(out)
}

/// [`print_layout`] as XLA prints it (see [`print_shape_as_xla`]).
pub fn print_layout_as_xla(layout: &LayoutProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Xla, true, &Path::root()).layout(layout, &mut out)?;
    Ok(out)
}

/// Prints a program shape with layouts, in the form of an HLO module's
/// `entry_computation_layout`: `(f32[2]{0}, s32[])->f32[]`, with `name: ` before each
/// parameter when the parameters have names (`(unknown)` for an empty one).
pub fn print_program_shape(program: &ProgramShapeProto) -> Result<String, PrintError> {
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Exact, true, &Path::root()).program_shape(program, &mut out)?;
    Ok(out)
}

/// [`print_program_shape`] as XLA prints it in `entry_computation_layout`: no names,
/// and each shape as [`print_shape_as_xla`] prints it.
pub fn print_program_shape_as_xla(program: &ProgramShapeProto) -> Result<String, PrintError> {
    let unnamed = ProgramShapeProto {
        parameter_names: Vec::new(),
        ..program.clone()
    };
    let mut out = String::with_capacity(64);
    Printer::new(Mode::Xla, true, &Path::root()).program_shape(&unnamed, &mut out)?;
    Ok(out)
}

/// How deep a message nests submessages (a shape with a layout is 1; each tuple or
/// buffer level and each physical shape adds 1), counted without recursion.
pub fn message_depth(message: &AnyMessage) -> usize {
    let mut stack: Vec<(&ShapeProto, usize)> = Vec::new();
    match message {
        AnyMessage::Shape(shape) => stack.push((shape, 0)),
        AnyMessage::Layout(layout) => {
            if let Some(physical) = layout.physical_shape.as_deref() {
                stack.push((physical, 1));
            }
        }
        AnyMessage::ProgramShape(program) => {
            stack.extend(program.parameters.iter().map(|p| (p, 1)));
            stack.extend(program.result.iter().map(|r| (r, 1)));
        }
    }
    deepest_of(stack)
}

/// [`message_depth`] of a shape.
pub fn shape_depth(shape: &ShapeProto) -> usize {
    deepest_of(vec![(shape, 0)])
}

/// How deep the shapes on `stack` (each with its own depth) nest, counted without
/// recursion.
fn deepest_of(mut stack: Vec<(&ShapeProto, usize)>) -> usize {
    let mut deepest = 0;
    while let Some((shape, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        stack.extend(shape.tuple_shapes.iter().map(|s| (s, depth + 1)));
        if let Some(layout) = shape.layout.as_deref() {
            deepest = deepest.max(depth + 1);
            if let Some(physical) = layout.physical_shape.as_deref() {
                stack.push((physical, depth + 2));
            }
        }
    }
    deepest
}

/// Prints one message of any kind.
pub fn print_message(message: &AnyMessage) -> Result<String, PrintError> {
    match message {
        AnyMessage::Shape(shape) => print_shape(shape),
        AnyMessage::Layout(layout) => print_layout(layout),
        AnyMessage::ProgramShape(program) => print_program_shape(program),
    }
}

/// [`print_message`] as XLA prints the message: [`print_shape_as_xla`],
/// [`print_layout_as_xla`] or [`print_program_shape_as_xla`].
pub fn print_message_as_xla(message: &AnyMessage) -> Result<String, PrintError> {
    match message {
        AnyMessage::Shape(shape) => print_shape_as_xla(shape),
        AnyMessage::Layout(layout) => print_layout_as_xla(layout),
        AnyMessage::ProgramShape(program) => print_program_shape_as_xla(program),
    }
}

/// The HLO text of a program shape written a parameter at a time: what
/// [`HloStyle::print_message`] gives for the whole program shape (without the final
/// newline), the same errors first, without holding its parameters.
#[derive(Debug)]
pub struct ProgramText {
    mode: Mode,
    /// Whether the parameters are printed with their names.
    named: bool,
    parameters: usize,
    out: String,
}

impl ProgramText {
    /// The text printed so far, taken out, so that it can be written while the
    /// printing goes on (the rest then follows; what the whole printing refuses, if
    /// anything, means the text taken is to be dropped).
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// A program shape in `style` of `parameters` parameters and `names` names, of
    /// which some are not empty when `named` (XLA's style prints no name): refused
    /// as the whole printing refuses names that are not one per parameter.
    ///
    /// # Errors
    /// When some name is not empty and the names are not one per parameter.
    pub fn new(
        style: HloStyle,
        named: bool,
        names: usize,
        parameters: usize,
    ) -> Result<Self, PrintError> {
        let (mode, named) = match style {
            HloStyle::Xla => (Mode::Xla, false),
            HloStyle::Exact => (Mode::Exact, named),
        };
        Printer::new(mode, true, &Path::root()).check_names(named, names, parameters)?;
        Ok(Self {
            mode,
            named,
            parameters: 0,
            out: String::from("("),
        })
    }

    /// Appends the next parameter, with its name (`""` for none).
    ///
    /// # Errors
    /// What the whole printing refuses in this parameter or its name.
    pub fn parameter(&mut self, name: &str, shape: &ShapeProto) -> Result<(), PrintError> {
        let name = self.named.then_some(name);
        Printer::new(self.mode, true, &Path::root()).parameter(
            self.parameters,
            name,
            shape,
            &mut self.out,
        )?;
        self.parameters += 1;
        Ok(())
    }

    /// Appends the next parameter, with its name (`""` for none), already printed: the
    /// text of a tuple written a shape at a time ([`TupleText::under`] at
    /// `parameters[i]`).
    ///
    /// # Errors
    /// What the whole printing refuses in the name.
    pub fn printed_parameter(&mut self, name: &str, text: &str) -> Result<(), PrintError> {
        let name = self.named.then_some(name);
        Printer::new(self.mode, true, &Path::root()).parameter_with(
            self.parameters,
            name,
            &mut self.out,
            &mut |out| {
                out.push_str(text);
                Ok(())
            },
        )?;
        self.parameters += 1;
        Ok(())
    }

    /// The text, ended by the result.
    ///
    /// # Errors
    /// What the whole printing refuses in the result (or its absence).
    pub fn finish(mut self, result: Option<&ShapeProto>) -> Result<String, PrintError> {
        Printer::new(self.mode, true, &Path::root()).program_result(result, &mut self.out)?;
        Ok(self.out)
    }

    /// The text, ended by the result already printed (as for
    /// [`printed_parameter`](Self::printed_parameter), at `result`).
    pub fn finish_printed(mut self, result: &str) -> String {
        self.out.push_str(")->");
        self.out.push_str(result);
        self.out
    }
}

/// Which HLO text to write: XLA's, or the crate's lossless form.
///
/// ```
/// use xla_shape::text::{self, HloStyle};
///
/// // f32[2,3]{0,1} with the retired padded_dimensions [3,5] (the seeds' example).
/// let mut shape = text::parse_shape("f32[2,3]{0,1:PD(3,5)}").unwrap();
/// assert_eq!(HloStyle::Xla.print_shape(&shape).unwrap(), "f32[2,3]{0,1}");
/// assert_eq!(HloStyle::Exact.print_shape(&shape).unwrap(), "f32[2,3]{0,1:PD(3,5)}");
/// // A negative dimension: XLA prints it, the lossless form refuses it.
/// shape.dimensions[0] = -5;
/// assert_eq!(HloStyle::Xla.print_shape(&shape).unwrap(), "f32[-5,3]{0,1}");
/// assert_eq!(
///     HloStyle::Exact.print_shape(&shape).unwrap_err().to_string(),
///     "dimensions[0]: dimension -5 has no text form"
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HloStyle {
    /// Exactly what XLA prints for the message (`ShapeUtil::HumanStringWithLayout`,
    /// `Layout::ToString`, `entry_computation_layout` without parameter names): the
    /// fields XLA ignores are left out as XLA leaves them out, and only what XLA's
    /// `FromProto` refuses is refused. The text is XLA's, so every XLA tool reads it,
    /// but it may not read back to the same proto.
    #[default]
    Xla,
    /// The lossless form: parameter names, the retired fields in our extension
    /// (`PD(...)`, `PV(...)`, ...), and a refusal ([`PrintError`]) of any value the
    /// text cannot carry back to the same proto.
    Exact,
}

/// Steps from the shape last written inside the nested tuples `open` (their indices,
/// below the top-level tuple) to the next one, at `path` (its tuple indices): `step`
/// closes each tuple left (`false`) and opens each tuple entered (`true`), and `open`
/// becomes the path of the tuples around the next shape. How a tuple handed on a
/// shape at a time ([`parse_shape_leaves`], [`crate::codec::decode_shape_leaves`]) is
/// written again with its nesting.
pub(crate) fn nest_to(open: &mut Vec<usize>, path: &[usize], step: &mut dyn FnMut(bool)) {
    let enclosing = path.split_last().map_or(&[][..], |(_, rest)| rest);
    let common = open
        .iter()
        .zip(enclosing)
        .take_while(|(a, b)| a == b)
        .count();
    while open.len() > common {
        open.pop();
        step(false);
    }
    for &i in &enclosing[common..] {
        open.push(i);
        step(true);
    }
}

/// The HLO text of a plain tuple (element type `TUPLE` and its elements, nothing
/// else), written an element at a time: what [`HloStyle::print_shape`] gives for the
/// whole tuple, errors included (their paths start at `tuple_shapes[i]`), without
/// holding the tuple.
#[derive(Debug)]
pub struct TupleText {
    mode: Mode,
    out: String,
    /// Each open tuple, outermost first.
    levels: Vec<Level>,
    /// The path of the innermost open tuple.
    path: Path,
}

/// An open tuple of a [`TupleText`].
#[derive(Debug, Default)]
struct Level {
    /// Elements so far.
    count: usize,
    /// The last element XLA's parser would reject (lossless style), which the whole
    /// tuple's printer reports before printing any element.
    problem: Option<PrintError>,
    /// The first element (or nested tuple) that could not be printed, in order.
    first: Option<PrintError>,
}

impl Level {
    /// What printing this tuple whole refuses first, if anything.
    fn refusal(self) -> Option<PrintError> {
        self.problem.or(self.first)
    }
}

impl TupleText {
    /// A tuple in `style`, with no element yet.
    pub fn new(style: HloStyle) -> Self {
        Self::under(style, Path::root())
    }

    /// A tuple in `style` that stands at `at` in a larger message (a parameter or the
    /// result of a program shape), so that what it refuses is said at its path there.
    pub fn under(style: HloStyle, at: Path) -> Self {
        let mode = match style {
            HloStyle::Xla => Mode::Xla,
            HloStyle::Exact => Mode::Exact,
        };
        Self {
            mode,
            out: String::from("("),
            levels: vec![Level::default()],
            path: at,
        }
    }

    /// A tuple printed as [`Display`](std::fmt::Display) prints validated shapes (the
    /// lossless text, which never refuses a validated value).
    pub(crate) fn display() -> Self {
        Self {
            mode: Mode::Display,
            ..Self::new(HloStyle::Exact)
        }
    }

    /// Appends the next element. A value the style cannot print is kept for
    /// [`finish`](Self::finish), which refuses the tuple as its whole printing would.
    pub fn element(&mut self, shape: &ShapeProto) {
        let mark = self.out.len();
        let count = self.next_element();
        let prefix = self.path.clone().field("tuple_shapes").index(count);
        if self.mode == Mode::Exact {
            // The lossless printer checks every element of a tuple as XLA's parser
            // would before printing any, and reports the last it would reject.
            if let Some(message) = printer::rejected_element(shape) {
                if let Some(level) = self.levels.last_mut() {
                    level.problem = Some(PrintError::new(prefix.clone(), message));
                }
            }
        }
        let printed = Printer::new(self.mode, true, &prefix).shape(shape, &mut self.out);
        if let Some(level) = self.levels.last_mut() {
            level.count += 1;
            if let Err(error) = printed {
                self.out.truncate(mark);
                level.first.get_or_insert(error);
            }
        }
    }

    /// Opens a tuple of nothing but elements as the next element; the elements that
    /// follow are its own until [`close`](Self::close).
    pub fn open(&mut self) {
        let count = self.next_element();
        self.out.push('(');
        self.path = self.path.field("tuple_shapes").index(count);
        self.levels.push(Level::default());
    }

    /// Writes the separator before the next element of the innermost open tuple and
    /// returns that element's index.
    fn next_element(&mut self) -> usize {
        let count = self.levels.last().map_or(0, |level| level.count);
        if count > 0 {
            printer::separator(count, &mut self.out);
        }
        count
    }

    /// Closes the tuple last opened by [`open`](Self::open).
    pub fn close(&mut self) {
        self.close_refusing(None);
    }

    /// Closes the tuple last opened, whose own fields are those of `shell` (the tuple
    /// without its elements). A tuple shows none of them in text, but the whole
    /// printing refuses those it cannot print (a layout; dimensions in the lossless
    /// style) before it looks at the tuple's elements, so that refusal is said in
    /// place of anything its elements gave.
    pub fn close_with(&mut self, shell: &ShapeProto) {
        let mut scratch = String::new();
        let own = Printer::new(self.mode, true, &self.path)
            .shape(shell, &mut scratch)
            .err();
        self.close_refusing(own);
    }

    /// Closes the innermost nested tuple, refused for `own` if anything.
    fn close_refusing(&mut self, own: Option<PrintError>) {
        if self.levels.len() > 1 {
            let closed = self.levels.pop().and_then(Level::refusal);
            let closed = own.or(closed);
            self.out.push(')');
            self.path.pop();
            self.path.pop();
            if let Some(level) = self.levels.last_mut() {
                level.count += 1;
                if let Some(error) = closed {
                    level.first.get_or_insert(error);
                }
            }
        }
    }

    /// The text printed so far, taken out, so that it can be written while the
    /// printing goes on ([`finish`](Self::finish) then gives the rest, or what the
    /// whole printing refuses: the text taken is then to be dropped).
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// The text, closed.
    ///
    /// # Errors
    /// What printing the whole tuple in the style refuses first ([`PrintError`]).
    pub fn finish(mut self) -> Result<String, PrintError> {
        while self.levels.len() > 1 {
            self.close();
        }
        if let Some(error) = self.levels.pop().and_then(Level::refusal) {
            return Err(error);
        }
        self.out.push(')');
        Ok(self.out)
    }

    /// [`finish`](Self::finish) of a top-level tuple whose own fields are those of
    /// `shell` (the tuple without its elements): as [`close_with`](Self::close_with)
    /// says of a nested one, what the whole printing refuses of them comes before
    /// anything its elements gave.
    ///
    /// # Errors
    /// What printing the whole tuple in the style refuses first ([`PrintError`]).
    pub fn finish_with(mut self, shell: &ShapeProto) -> Result<String, PrintError> {
        while self.levels.len() > 1 {
            self.close();
        }
        let mut scratch = String::new();
        let at = self.path.clone();
        Printer::new(self.mode, true, &at).shape(shell, &mut scratch)?;
        self.finish()
    }
}

impl HloStyle {
    /// Prints a shape in this style ([`print_shape_as_xla`] or [`print_shape`]).
    pub fn print_shape(self, shape: &ShapeProto) -> Result<String, PrintError> {
        match self {
            HloStyle::Xla => print_shape_as_xla(shape),
            HloStyle::Exact => print_shape(shape),
        }
    }

    /// Prints a message in this style ([`print_message_as_xla`] or [`print_message`]).
    pub fn print_message(self, message: &AnyMessage) -> Result<String, PrintError> {
        match self {
            HloStyle::Xla => print_message_as_xla(message),
            HloStyle::Exact => print_message(message),
        }
    }
}

/// XLA's `ProgramShape::ToString`: `(name: shape, ...) -> result`, shapes without
/// layouts, `(unknown)` for an empty or missing name.
pub fn program_shape_to_string(program: &ProgramShapeProto) -> Result<String, PrintError> {
    let mut out = String::from("(");
    for (i, parameter) in program.parameters.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match program
            .parameter_names
            .get(i)
            .filter(|name| !name.is_empty())
        {
            Some(name) => out.push_str(name),
            None => out.push_str("(unknown)"),
        }
        out.push_str(": ");
        let prefix = Path::root().field("parameters").index(i);
        Printer::new(Mode::Xla, false, &prefix).shape(parameter, &mut out)?;
    }
    out.push_str(") -> ");
    match &program.result {
        Some(result) => {
            let prefix = Path::root().field("result");
            Printer::new(Mode::Xla, false, &prefix).shape(result, &mut out)?;
        }
        None => out.push_str("()"),
    }
    Ok(out)
}
