//! Listing every shape of an input with where it stands: the `shapes` command, and
//! what [`diff`](super::diff) and [`policy`](super::policy) work on.
//!
//! # The listing text (a "layout lock file")
//!
//! One shape per line, in the order the input holds them (files in the order given,
//! directories in sorted order):
//!
//! ```text
//! FILE: LOCATION: SHAPE        a shape inside a module (text or proto)
//! FILE: SHAPE                  a single shape (one message, or one line of HLO text)
//! FILE: parameter N: SHAPE     a parameter of a single program shape (and `result`)
//! ```
//!
//! `LOCATION` is one of (`ENTRY ` in front marks the entry computation):
//!
//! | location | the shape |
//! | --- | --- |
//! | `entry_computation_layout/parameter N` | parameter N of the module's entry computation layout |
//! | `entry_computation_layout/result` | the result of the entry computation layout |
//! | `[ENTRY ]C/signature parameter N (NAME)` | parameter N in computation C's signature |
//! | `[ENTRY ]C/signature result` | the result in C's signature |
//! | `[ENTRY ]C/I` | the result shape of instruction I |
//! | `[ENTRY ]C/I operand N` | the shape written before operand N of I |
//! | `[ENTRY ]C/I ATTRIBUTE [N]` | a shape-valued attribute (`outfeed_shape`, `literal`, `operand_layout_constraints N`) |
//!
//! Shapes are printed in XLA's text ([`HloStyle::Xla`]) unless another style is asked
//! for. HLO names hold no space, `/` or `: `, and shapes hold no `: `, so a line reads
//! back unambiguously ([`parse_listing`]). A file name that would not read back as
//! itself is written as a JSON string (`"dir/a: b.txt": f32[2]{0}`, see
//! [`listed_name`]): one that holds `: ` or a control character (a line break), starts
//! with `"`, `#` or `//` (a comment line) or white space, ends with white space, or
//! is empty. Every other name is written as it is. Likewise a computation's,
//! instruction's or parameter's name in `LOCATION` that is not one XLA writes (a
//! module proto's names are any text) is written as a JSON string with its `:`s as
//! `\u003a` ([`listed_word`]): `ENTRY "m: n/1"/"dot general.1" operand 0`.

use crate::spool::{Heap, Sortable, Sorter, Table};
use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path as FsPath;

use serde::Serialize;

use crate::check;
use crate::message::{AnyMessage, MessageKind};
use crate::proto::ShapeProto;
use crate::report::{Finding, Form};
use crate::shape::Shape;
use crate::text::module::{self, InstructionSite, Names, ProtoSite, Role, Site};
use crate::text::{HloStyle, TupleText};
use crate::validate::{validate_shape_each, validate_shape_with, Options as GateOptions};

/// A shape kept beside its text, which does not read back as it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kept {
    /// The shape itself.
    Shape(Box<ShapeProto>),
    /// A long binary tuple's bytes, decoded when the shape is asked for: they take
    /// about their size, where the decoded tuple takes some 30 times that (its unknown
    /// fields, if any, are left out when it is decoded, as the listing leaves them out).
    Encoded(std::sync::Arc<[u8]>),
}

/// The location word of the module's entry computation layout.
pub const ENTRY_LAYOUT: &str = "entry_computation_layout";

/// One shape of a listing, and where it stands.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The computation it is in (`None` for the entry computation layout and for
    /// single messages).
    pub computation: Option<String>,
    /// Whether that computation is the entry computation.
    pub entry: bool,
    /// The instruction it belongs to, if any.
    pub instruction: Option<String>,
    /// What the shape is there.
    pub role: Role,
    /// The shape, when its text does not read back as it ([`Entry::shape`]): most
    /// entries keep only their text.
    held: Option<Kept>,
    /// The shape's text in the listing's style (as written, when it does not print).
    pub text: String,
    /// 1-based line in module text (or in HLO text, or in a listing read back).
    pub line: Option<usize>,
    /// 1-based column in module text.
    pub column: Option<usize>,
    /// The proto path in a module proto (e.g. `computations[1].instructions[4].shape`).
    pub path: Option<String>,
}

impl Entry {
    /// The location as the listing text writes it (see the module docs); `None` for a
    /// single shape.
    pub fn location(&self, module: bool) -> Option<String> {
        let prefix = || {
            let computation = listed_word(self.computation.as_deref().unwrap_or("?"), true);
            if self.entry {
                format!("ENTRY {computation}/")
            } else {
                format!("{computation}/")
            }
        };
        let instruction = || listed_word(self.instruction.as_deref().unwrap_or("?"), false);
        Some(match &self.role {
            Role::EntryParameter { index } if module => {
                format!("{ENTRY_LAYOUT}/parameter {index}")
            }
            Role::EntryParameter { index } => format!("parameter {index}"),
            Role::EntryResult if module => format!("{ENTRY_LAYOUT}/result"),
            Role::EntryResult => "result".to_string(),
            Role::Parameter { index, name } => {
                format!(
                    "{}signature parameter {index} ({})",
                    prefix(),
                    listed_word(clean_name(name), false)
                )
            }
            Role::ComputationResult => format!("{}signature result", prefix()),
            Role::Result if !module => return None,
            Role::Result => format!("{}{}", prefix(), instruction()),
            Role::Operand { index } => format!("{}{} operand {index}", prefix(), instruction()),
            Role::Attribute { name, index } => {
                if *index > 0 || name == "operand_layout_constraints" {
                    format!("{}{} {name} {index}", prefix(), instruction())
                } else {
                    format!("{}{} {name}", prefix(), instruction())
                }
            }
        })
    }

    /// An entry of `shape`, at no place yet, with `text` for its text: the shape is
    /// kept only if the text does not read back as it.
    pub fn new(role: Role, shape: &ShapeProto, text: String) -> Self {
        let held = match read_back(&text) {
            Ok(back) if crate::proto::same_shape(&back, shape) => None,
            _ => Some(Kept::Shape(Box::new(shape.clone()))),
        };
        Entry::bare(role, text, held)
    }

    /// An entry of the tuple `written` (HLO text, read with `options`), at no place
    /// yet, made a shape at a time: its text in `style`, and the tuple kept only if
    /// that text does not read back as it, which each shape's text tells. `None` when
    /// it must be made whole instead (it does not parse, or does not print in the
    /// style), so that its errors are the whole parse's and printing's.
    pub fn of_long_tuple(
        role: Role,
        written: &str,
        options: crate::text::ParseOptions,
        style: HloStyle,
    ) -> Option<Self> {
        Self::of_long_text(role, written, options, style).ok()?
    }

    /// [`Entry::of_long_tuple`], with the parse's error when the text does not parse
    /// (the whole parse's error: [`crate::text::parse_shape_leaves`] gives it), so that
    /// a long tuple broken at its end is not parsed whole again for its error (28 times
    /// the text, where the tuple listed a shape at a time takes about its size).
    pub(crate) fn of_long_text(
        role: Role,
        written: &str,
        options: crate::text::ParseOptions,
        style: HloStyle,
    ) -> Result<Option<Self>, crate::text::ParseError> {
        let mut printer = LongTuple::new(style);
        let parsed = crate::text::parse_shape_leaves(written, options, &mut |path, _, leaf| {
            printer.leaf(path, &leaf);
        })?;
        if !matches!(parsed, crate::text::Streamed::Tuple { .. }) {
            return Ok(None);
        }
        let reads_back = printer.reads_back;
        let Ok(text) = printer.text.finish() else {
            return Ok(None);
        };
        if reads_back {
            return Ok(Some(Entry::bare(role, text, None)));
        }
        let shape = crate::text::parse_shape_with(written, options)?;
        Ok(Some(Entry::new(role, &shape, text)))
    }

    /// [`Entry::of_long_tuple`] for a binary `ShapeProto` that is a tuple (as
    /// [`module::walk_proto_for_listing`] hands one on): its tuples opened however
    /// they nest ([`crate::codec::decode_shape_tree`]), unknown fields left out as the
    /// whole message's listing leaves them out. The text is the whole tuple's (in
    /// `style`, else in the lossless style, else why it has none); when it does not
    /// read back as the tuple (a shape's text does not, or a tuple has fields of its
    /// own), the entry keeps the bytes, not the decoded tuple (some 30 times larger).
    /// `None` when the top-level message is not a tuple with elements (whatever fields
    /// of its own it has), or does not decode.
    pub fn of_long_tuple_proto(role: Role, bytes: &[u8], style: HloStyle) -> Option<Self> {
        Self::long_proto(role, bytes, style, &std::cell::RefCell::new(None))
    }

    /// [`Entry::of_long_tuple_proto`], with the decode's error when the bytes do not
    /// decode (read a shape at a time with the whole decode's code, so its error), so
    /// that a long tuple cut short is not decoded whole again for its error (23 times
    /// its bytes).
    pub(crate) fn of_long_binary(
        role: Role,
        bytes: &[u8],
        style: HloStyle,
    ) -> Result<Option<Self>, crate::codec::DecodeError> {
        with_error(|failed| Self::long_proto(role, bytes, style, failed))
    }

    fn long_proto(
        role: Role,
        bytes: &[u8],
        style: HloStyle,
        failed: &std::cell::RefCell<Option<crate::codec::DecodeError>>,
    ) -> Option<Self> {
        let print = |printer: &mut LongTuple| {
            let printer = std::cell::RefCell::new(printer);
            let decoded = crate::codec::decode_shape_tree(
                bytes,
                &mut |path, _, leaf| printer.borrow_mut().leaf(path, &leaf.message),
                &mut |event| match event {
                    crate::codec::TreeEvent::Enter(path, own) => {
                        printer.borrow_mut().enter(path, own)
                    }
                    crate::codec::TreeEvent::Leave(_, own, _) => printer.borrow_mut().leave(&own),
                },
            );
            let decoded = noted(decoded, failed)?;
            printer.into_inner().top(&decoded.shell.message);
            decoded.is_tuple_with_elements().then_some(())
        };
        long_tuple_entry(role, style, print, || Some(Kept::Encoded(bytes.into())))
    }

    /// [`Entry::of_long_tuple_proto`] for a shape in proto3 JSON: its tuples opened
    /// however they nest ([`crate::json::shape_from_json_tree`]). When its text does not
    /// read back as it (a tuple has fields of its own, a shape's text does not), the
    /// entry keeps its binary encoding (converted a shape at a time; some seven times
    /// smaller than the JSON), as a binary tuple's entry keeps its bytes. `None` when the
    /// top-level message is not a tuple with elements, or does not read.
    pub fn of_long_tuple_json(role: Role, bytes: &[u8], style: HloStyle) -> Option<Self> {
        Self::long_json(role, bytes, style, &std::cell::RefCell::new(None))
    }

    /// [`Entry::of_long_tuple_json`], with the read's error when the JSON does not read
    /// (read a shape at a time, with the whole read's error).
    pub(crate) fn of_long_json(
        role: Role,
        bytes: &[u8],
        style: HloStyle,
    ) -> Result<Option<Self>, crate::json::JsonError> {
        with_error(|failed| Self::long_json(role, bytes, style, failed))
    }

    fn long_json(
        role: Role,
        bytes: &[u8],
        style: HloStyle,
        failed: &std::cell::RefCell<Option<crate::json::JsonError>>,
    ) -> Option<Self> {
        let print = |printer: &mut LongTuple| {
            let printer = std::cell::RefCell::new(printer);
            let tuple = ShapeProto {
                element_type: crate::proto::PrimitiveType::Tuple as i32,
                ..Default::default()
            };
            let shell = crate::json::shape_from_json_tree(
                bytes,
                &crate::json::ParseOptions::new(),
                &mut |path, leaf| printer.borrow_mut().leaf(path, &leaf),
                &mut |path, shell| {
                    let mut printer = printer.borrow_mut();
                    match shell {
                        None => printer.enter(path, &tuple),
                        // JSON may give a tuple's own fields after its elements.
                        Some(shell) => {
                            printer.reads_back &= crate::codec::is_tuple_shell(&shell);
                            printer.leave(&shell);
                        }
                    }
                },
            );
            let shell = noted(shell, failed)?;
            let printer = printer.into_inner();
            printer.top(&shell);
            crate::codec::has_tuple_elements(printer.elements, &shell).then_some(())
        };
        // The binary encoding, once a text does not read back.
        let encoded = || -> Option<Kept> {
            let options = crate::convert::Options::default();
            let spool =
                crate::convert::json_shape_to(bytes, crate::convert::Form::Binary, &options)?;
            Some(Kept::Encoded(spool.ok()?.into_vec().ok()?.into()))
        };
        long_tuple_entry(role, style, print, encoded)
    }

    /// An entry at no place yet.
    pub(crate) fn bare(role: Role, text: String, held: Option<Kept>) -> Self {
        Entry {
            computation: None,
            entry: false,
            instruction: None,
            role,
            held,
            text,
            line: None,
            column: None,
            path: None,
        }
    }

    /// The shape kept beside the text (when the text does not read back as it), taken
    /// out.
    pub(crate) fn take_held(&mut self) -> Option<Kept> {
        self.held.take()
    }

    /// The shape: its text read back (as a listing is read, [`parse_listing`]), or the
    /// shape itself when that text does not read back as it.
    pub fn shape(&self) -> std::borrow::Cow<'_, ShapeProto> {
        match &self.held {
            Some(Kept::Shape(shape)) => std::borrow::Cow::Borrowed(shape),
            Some(Kept::Encoded(bytes)) => std::borrow::Cow::Owned(
                crate::codec::decode_shape(bytes)
                    .map(|decoded| decoded.message)
                    .unwrap_or_default(),
            ),
            None => std::borrow::Cow::Owned(read_back(&self.text).unwrap_or_default()),
        }
    }

    /// The bytes of a long binary tuple kept beside its text ([`Kept::Encoded`]), which
    /// are read a shape at a time where they can be ([`Entry::bytes`], the policy
    /// check, `diff`).
    pub(crate) fn encoded(&self) -> Option<&[u8]> {
        match &self.held {
            Some(Kept::Encoded(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// Whether the entry is a long tuple kept as its text alone, which is read a shape
    /// at a time where it can be ([`Entry::bytes`], the policy check).
    pub(crate) fn is_long_tuple_text(&self) -> bool {
        self.held.is_none() && long_tuple(&self.text)
    }

    /// The validated shape (with the rules of the form it was read from), if valid.
    pub fn validated(&self) -> Option<Shape> {
        validate_shape_each(&self.shape(), GateOptions::hlo_text(), &mut drop)
    }

    /// Allocated bytes ([`allocated_bytes`]); a long tuple kept as its text is sized a
    /// shape at a time.
    pub fn bytes(&self) -> Option<u64> {
        if self.is_long_tuple_text() {
            return long_tuple_size(&self.text).flatten();
        }
        if let Some(Kept::Encoded(bytes)) = &self.held {
            if let Some(size) = long_encoded_size(bytes) {
                return size.flatten();
            }
        }
        allocated_bytes(&self.validated()?)
    }
}

/// Allocated bytes of a shape: an array's buffer with tiling and padding
/// ([`crate::LayoutPlan::allocated_bytes_of`]; XLA's default layout when it has none), the
/// sum of its arrays' for a tuple, 0 for a token or opaque shape; `None` when a
/// dimension is unbounded or the sum overflows.
pub fn allocated_bytes(shape: &Shape) -> Option<u64> {
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => {
            crate::LayoutPlan::allocated_bytes_of(array).ok()
        }
        Shape::Tuple(elements) => elements
            .iter()
            .try_fold(0u64, |sum, e| sum.checked_add(allocated_bytes(e)?)),
        Shape::Token | Shape::Opaque => Some(0),
    }
}

/// The text of a tuple written a shape at a time, and whether each shape's text reads
/// back as it.
struct LongTuple {
    style: HloStyle,
    text: TupleText,
    /// The top-level tuple's own fields, when it has some besides its elements (its
    /// text shows none of them; its printing refuses those it cannot print).
    top: Option<ShapeProto>,
    /// The path of the tuples open in `text` below the top-level one.
    open: Vec<usize>,
    reads_back: bool,
    /// Shapes printed so far.
    elements: usize,
}

impl LongTuple {
    fn new(style: HloStyle) -> Self {
        LongTuple {
            style,
            text: TupleText::new(style),
            top: None,
            open: Vec::new(),
            reads_back: true,
            elements: 0,
        }
    }

    /// Closes and opens the nested tuples between the last shape and the one at `path`.
    fn nest_to(&mut self, path: &[usize]) {
        let text = &mut self.text;
        crate::text::nest_to(&mut self.open, path, &mut |enter| {
            if enter {
                text.open();
            } else {
                text.close();
            }
        });
    }

    /// Opens the nested tuple at `path` ([`crate::codec::TreeEvent::Enter`]), whose own
    /// fields are those of `own`: a tuple with any but its element type does not read
    /// back from its text, which shows none of them.
    fn enter(&mut self, path: &[usize], own: &ShapeProto) {
        self.nest_to(path);
        debug_assert_eq!(
            self.open,
            path.split_last().map_or(&[][..], |(_, rest)| rest)
        );
        self.open.extend(path.last());
        self.text.open();
        self.reads_back &= crate::codec::is_tuple_shell(own);
    }

    /// The top-level tuple's own fields are those of `shell` (the tuple without its
    /// elements): when it has any but its element type, its text does not read back
    /// as it, and what its printing refuses of them comes first.
    fn top(&mut self, shell: &ShapeProto) {
        if !crate::codec::is_tuple_shell(shell) {
            self.reads_back = false;
            self.top = Some(shell.clone());
        }
    }

    /// The text, or what the whole tuple's printing refuses first.
    fn finish(self) -> Result<String, crate::text::PrintError> {
        match &self.top {
            Some(top) => self.text.finish_with(top),
            None => self.text.finish(),
        }
    }

    /// Closes the nested tuple last entered, whose own fields are those of `own`
    /// (refused as its whole printing refuses them).
    fn leave(&mut self, own: &ShapeProto) {
        self.open.pop();
        self.text.close_with(own);
    }

    /// The next shape of the tuple, at `path` (its tuple indices).
    fn leaf(&mut self, path: &[usize], leaf: &ShapeProto) {
        self.elements += 1;
        self.nest_to(path);
        self.text.element(leaf);
        // Read back alone and as a tuple's element: XLA's parser refuses an invalid
        // array in a tuple (a shape the listing keeps only if its text reads back).
        self.reads_back = self.reads_back
            && self.style.print_shape(leaf).is_ok_and(|text| {
                read_back(&text).is_ok_and(|back| {
                    crate::proto::same_shape(&back, leaf)
                        && crate::text::tuple_element_problem(&back).is_none()
                })
            });
    }
}

/// What `read` returns, or the error it put in the place it is given ([`noted`]: a
/// read a shape at a time, through callbacks that cannot return it).
fn with_error<T, E>(read: impl FnOnce(&std::cell::RefCell<Option<E>>) -> T) -> Result<T, E> {
    let failed = std::cell::RefCell::new(None);
    let out = read(&failed);
    match failed.into_inner() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The value of `result`, or `None` with its error put in `failed` ([`with_error`]).
fn noted<T, E>(result: Result<T, E>, failed: &std::cell::RefCell<Option<E>>) -> Option<T> {
    result.map_err(|e| *failed.borrow_mut() = Some(e)).ok()
}

/// The entry of a long tuple that `print` hands to a printer a shape at a time (saying
/// whether the message is a tuple with elements and nothing else of its own; `None`
/// when it is not, or does not read): its text in `style`, else in the lossless style,
/// else why it has none, as [`print`] says of a whole shape; and what `kept` gives
/// when that text does not read back as the tuple.
fn long_tuple_entry(
    role: Role,
    style: HloStyle,
    print: impl Fn(&mut LongTuple) -> Option<()>,
    kept: impl Fn() -> Option<Kept>,
) -> Option<Entry> {
    let mut styles = vec![style];
    if style == HloStyle::Xla {
        styles.push(HloStyle::Exact);
    }
    let mut refused = None;
    for style in styles {
        let mut printer = LongTuple::new(style);
        print(&mut printer)?;
        let reads_back = printer.reads_back;
        match printer.finish() {
            Ok(text) => {
                let held = match reads_back {
                    true => None,
                    false => Some(kept()?),
                };
                return Some(Entry::bare(role, text, held));
            }
            Err(e) => refused = Some(e),
        }
    }
    // No text in either style.
    let text = no_text(&refused?);
    Some(Entry::bare(role, text, Some(kept()?)))
}

/// How HLO module text gives shapes: with no layout filled in.
const MODULE_TEXT: crate::text::ParseOptions = crate::text::ParseOptions {
    fill_missing_layouts: false,
};

/// Shape text of this many bytes or more that is a tuple is read a shape at a time
/// where it can be: listed, checked when a listing is read back, sized.
pub(crate) const LONG_TEXT: usize = crate::LONG_INPUT;

/// A listing's shape text read back: as HLO module text gives shapes.
pub(crate) fn read_back(text: &str) -> Result<ShapeProto, crate::text::ParseError> {
    crate::text::parse_shape_with(text, MODULE_TEXT)
}

/// The text of each element of the tuple `text` (as the listing prints one: `(`, the
/// elements separated by `, ` with a `/*index=N*/` before some, `)`), found by its
/// brackets alone, without parsing it; empty for text that is not a tuple. For
/// comparing two long tuples an element at a time.
pub(crate) fn tuple_elements(text: &str) -> impl Iterator<Item = &str> {
    let text = text.trim();
    let body = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or("");
    let bytes = body.as_bytes();
    let (mut at, mut depth) = (0, 0usize);
    std::iter::from_fn(move || {
        // Past the separator and any comment before the element.
        loop {
            let rest = &body[at..];
            let trimmed = rest.trim_start_matches([',', ' ']);
            at += rest.len() - trimmed.len();
            match trimmed.strip_prefix("/*").and_then(|c| c.find("*/")) {
                Some(end) => at += end + 4,
                None => break,
            }
        }
        if at >= body.len() {
            return None;
        }
        let start = at;
        while at < bytes.len() {
            match bytes[at] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b',' if depth == 0 => break,
                _ => {}
            }
            at += 1;
        }
        Some(body[start..at].trim_end())
    })
}

/// Whether `text` is long tuple text ([`LONG_TEXT`]).
pub(crate) fn long_tuple(text: &str) -> bool {
    text.len() >= LONG_TEXT && text.trim_start().starts_with('(')
}

/// [`read_back`] without the shape: a long tuple is read a shape at a time.
fn check_reads_back(text: &str) -> Result<(), crate::text::ParseError> {
    if long_tuple(text) {
        crate::text::parse_shape_leaves(text, MODULE_TEXT, &mut |_, _, _| {}).map(drop)
    } else {
        read_back(text).map(drop)
    }
}

/// Whether the tuple `text` (which reads back) is valid, and then its allocated
/// bytes ([`allocated_bytes`]), a shape at a time: `None` if a shape is invalid (the
/// whole tuple then is, as it is if it nests too deep for the validator), `Some(None)`
/// if a shape has no size.
pub(crate) fn long_tuple_size(text: &str) -> Option<Option<u64>> {
    let mut size = TupleSize::default();
    let parsed = crate::text::parse_shape_leaves(text, MODULE_TEXT, &mut |path, _, leaf| {
        size.leaf(path, &leaf);
    });
    size.finish(parsed.is_ok())
}

/// [`long_tuple_size`] of a binary tuple kept as its bytes ([`Kept::Encoded`]), read a
/// shape at a time, the fields of its tuples' own (the top-level one's too) checked as
/// the whole validation checks them; `None` when it is no tuple with elements, or does
/// not decode.
pub(crate) fn long_encoded_size(bytes: &[u8]) -> Option<Option<Option<u64>>> {
    let size = std::cell::RefCell::new(TupleSize::default());
    let decoded = crate::codec::decode_shape_tree(
        bytes,
        &mut |path, _, leaf| size.borrow_mut().leaf(path, &leaf.message),
        &mut |event| {
            if let crate::codec::TreeEvent::Leave(path, shell, _) = event {
                size.borrow_mut().own(path, &shell);
            }
        },
    );
    let decoded = decoded.ok()?;
    if !decoded.is_tuple_with_elements() {
        return None;
    }
    let mut size = size.into_inner();
    let shell = &decoded.shell.message;
    if !crate::codec::is_tuple_shell(shell) {
        size.own(&[], shell);
    }
    Some(size.finish(true))
}

/// [`for_each_long_tuple_array`] of a binary tuple kept as its bytes, valid and read a
/// shape at a time ([`long_encoded_size`] is `Some(Some(_))`): each array's text is
/// XLA's, else the lossless text, else why it has none.
pub(crate) fn for_each_long_encoded_array(
    bytes: &[u8],
    each: &mut dyn FnMut(&[usize], &crate::ArrayShape, String),
) {
    let gate = GateOptions::hlo_text();
    let _ = crate::codec::decode_shape_tree(
        bytes,
        &mut |path, _, leaf| {
            if let Some(Shape::Array(array) | Shape::Buffer(array)) =
                validate_shape_with(&leaf.message, gate).into_parts().0
            {
                each(path, &array, print(&leaf.message, HloStyle::Xla, None));
            }
        },
        &mut |_| {},
    );
}

/// The validity and allocated bytes of a tuple summed a shape at a time, as the
/// validator would find them ([`long_tuple_size`], [`long_encoded_size`]).
struct TupleSize {
    valid: bool,
    sum: Option<u64>,
    tuple: crate::validate::TupleIssues,
}

impl Default for TupleSize {
    fn default() -> Self {
        TupleSize {
            valid: true,
            sum: Some(0),
            tuple: crate::validate::TupleIssues::default(),
        }
    }
}

impl TupleSize {
    /// The next shape, at `path` (its tuple indices).
    fn leaf(&mut self, path: &[usize], leaf: &ShapeProto) {
        if !self.valid {
            return;
        }
        let gate = GateOptions::hlo_text();
        let mut error = false;
        self.tuple.each(path, leaf, gate, &mut |issue| {
            error |= issue.severity() == crate::Severity::Error;
        });
        if error {
            self.valid = false;
            return;
        }
        match validate_shape_with(leaf, gate).into_parts().0 {
            Some(shape) => {
                self.sum = self
                    .sum
                    .zip(allocated_bytes(&shape))
                    .and_then(|(sum, bytes)| sum.checked_add(bytes));
            }
            None => self.valid = false,
        }
    }

    /// The own fields of the nested tuple at `path` (the tuple without its elements),
    /// checked as the whole validation checks them there.
    fn own(&mut self, path: &[usize], shell: &ShapeProto) {
        if !self.valid || path.len() > crate::validate::MAX_DEPTH {
            return;
        }
        let gate = GateOptions::hlo_text();
        let report = crate::validate::validate_nested_shape(shell, gate, path.len());
        if report
            .issues()
            .iter()
            .any(|i| i.severity() == crate::Severity::Error)
        {
            self.valid = false;
        }
    }

    /// The size, when every shape was read (`read`) and valid: `None` if a shape is
    /// invalid, `Some(None)` if a shape has no size.
    fn finish(self, read: bool) -> Option<Option<u64>> {
        (read && self.valid).then_some(self.sum)
    }
}

/// Each array of the valid tuple `text` (which reads back), a shape at a time, with
/// its path of tuple indices and its text in XLA's style (that of the buffer for a
/// buffer's array).
pub(crate) fn for_each_long_tuple_array(
    text: &str,
    each: &mut dyn FnMut(&[usize], &crate::ArrayShape, String),
) {
    let gate = GateOptions::hlo_text();
    let _ = crate::text::parse_shape_leaves(text, MODULE_TEXT, &mut |path, span, leaf| {
        if let Some(Shape::Array(array) | Shape::Buffer(array)) =
            validate_shape_with(&leaf, gate).into_parts().0
        {
            let written = text.get(span).unwrap_or_default().trim_end();
            let shown = HloStyle::Xla
                .print_shape(&leaf)
                .unwrap_or_else(|_| written.to_string());
            each(path, &array, shown);
        }
    });
}

/// A parameter name without `%` or a trailing `:`.
pub fn clean_name(name: &str) -> &str {
    name.trim_start_matches('%').trim_end_matches(':')
}

/// An instruction of a module: what the matching of renumbered names uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its computation.
    pub computation: String,
    /// Its name.
    pub name: String,
    /// Its opcode.
    pub opcode: String,
    /// Its operands' names.
    pub operands: Names,
    /// The names of the computations it calls, in the order of its proto's
    /// `called_computation_ids` ([`InstructionSite::calls`]).
    pub calls: Names,
    /// A get-tuple-element's tuple index ([`InstructionSite::tuple_index`]).
    pub tuple_index: Option<u64>,
}

/// What a listing read as a stream hands on, in the order read.
#[derive(Debug)]
pub(crate) enum Item {
    /// A shape and where it stands.
    Entry(Entry),
    /// An instruction of a module (only when asked for).
    Instruction(Instruction),
}

impl Instruction {
    fn of(site: &InstructionSite<'_>) -> Self {
        Instruction {
            computation: site.computation.unwrap_or_default().to_string(),
            name: site.name.to_string(),
            opcode: site.opcode.to_string(),
            operands: site.operands.clone(),
            calls: site.calls.clone(),
            tuple_index: site.tuple_index,
        }
    }
}

/// What kind of input a listing is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An HLO module (text or proto).
    Module,
    /// Single messages (a shape or program shape; HLO text holds one per line).
    Messages,
}

/// Every shape of one file.
#[derive(Clone, Debug)]
pub struct Listing {
    /// The file's name as given.
    pub file: String,
    /// Module or messages.
    pub kind: Kind,
    /// The form it was read from (`None` for a listing read back).
    pub form: Option<Form>,
    /// The shapes, in order.
    pub entries: Vec<Entry>,
    /// The instructions with opcodes and operands (empty for a listing read back).
    pub instructions: Vec<Instruction>,
}

impl Listing {
    fn new(file: &str, kind: Kind, form: Option<Form>) -> Self {
        Listing {
            file: file.to_string(),
            kind,
            form,
            entries: Vec::new(),
            instructions: Vec::new(),
        }
    }

    /// Writes the listing text (see the module docs), one line per shape.
    pub fn write_text(&self, out: &mut String) {
        for entry in &self.entries {
            self.write_entry_text(entry, out);
        }
    }

    /// Writes the listing line of `entry`, one of this listing's shapes (which may be
    /// handed on alone by [`stream_path`]).
    pub fn write_entry_text(&self, entry: &Entry, out: &mut String) {
        self.write_entry_head(entry, out);
        out.push_str(&entry.text);
        out.push('\n');
    }

    /// Writes what the listing line of `entry` ([`Self::write_entry_text`]) has before
    /// the shape's text (its file and location), for a writer that writes the text
    /// itself rather than copy it (a long tuple's is as large as its input).
    pub fn write_entry_head(&self, entry: &Entry, out: &mut String) {
        out.push_str(&listed_name(&self.file));
        out.push_str(": ");
        if let Some(location) = entry.location(self.kind == Kind::Module) {
            out.push_str(&location);
            out.push_str(": ");
        }
    }

    /// Writes one JSON line per shape ([`JsonLine`]).
    pub fn write_json_lines(&self, out: &mut String) {
        for entry in &self.entries {
            self.write_entry_json(entry, out);
        }
    }

    /// Writes the JSON line ([`JsonLine`]) of `entry`, one of this listing's shapes.
    pub fn write_entry_json(&self, entry: &Entry, out: &mut String) {
        let line = JsonLine::new(self, entry);
        if let Ok(text) = serde_json::to_string(&line) {
            out.push_str(&text);
            out.push('\n');
        }
    }
}

/// One line of `shapes --format json`: the fields of the text line, and more.
#[derive(Clone, Debug, Serialize)]
pub struct JsonLine<'a> {
    /// The file.
    pub file: &'a str,
    /// The location, as in the text (`null` for a single shape).
    pub location: Option<String>,
    /// The computation, if any.
    pub computation: Option<&'a str>,
    /// Whether the computation is the entry computation.
    pub entry: bool,
    /// The instruction, if any.
    pub instruction: Option<&'a str>,
    /// `entry_parameter`, `entry_result`, `parameter`, `computation_result`, `result`,
    /// `operand` or `attribute`.
    pub role: &'static str,
    /// The parameter, operand or list position, if any.
    pub index: Option<usize>,
    /// The parameter or attribute name, if any.
    pub name: Option<&'a str>,
    /// The shape's text.
    pub shape: &'a str,
    /// Allocated bytes ([`allocated_bytes`]); `null` when unknown.
    pub bytes: Option<u64>,
    /// Line in the input, when it is text.
    pub line: Option<usize>,
    /// Proto path, when it is a module proto.
    pub path: Option<&'a str>,
}

impl<'a> JsonLine<'a> {
    /// The JSON line of `entry` in `listing`.
    pub fn new(listing: &'a Listing, entry: &'a Entry) -> Self {
        let (role, index, name) = match &entry.role {
            Role::EntryParameter { index } => ("entry_parameter", Some(*index), None),
            Role::EntryResult => ("entry_result", None, None),
            Role::Parameter { index, name } => ("parameter", Some(*index), Some(clean_name(name))),
            Role::ComputationResult => ("computation_result", None, None),
            Role::Result => ("result", None, None),
            Role::Operand { index } => ("operand", Some(*index), None),
            Role::Attribute { name, index } => ("attribute", Some(*index), Some(name.as_str())),
        };
        JsonLine {
            file: &listing.file,
            location: entry.location(listing.kind == Kind::Module),
            computation: entry.computation.as_deref(),
            entry: entry.entry,
            instruction: entry.instruction.as_deref(),
            role,
            index,
            name,
            shape: &entry.text,
            bytes: entry.bytes(),
            line: entry.line,
            path: entry.path.as_deref(),
        }
    }
}

/// Why an input cannot be listed (exit status 2): a report code and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The file.
    pub file: String,
    /// A code of [`crate::report::CODES`] (`io_error`, `unknown_form`, `hlo_syntax`, ...).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for ReadError {}

/// The form to read an input as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Decided from the content ([`check::detect`], then a listing).
    #[default]
    Auto,
    /// One of the forms `validate` reads.
    Form(Form),
    /// A listing written by `shapes` (text).
    Listing,
}

/// How to read inputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// The form.
    pub source: Source,
    /// Which message single-message inputs hold; decided from the content if `None`.
    pub message: Option<MessageKind>,
    /// The text style of shapes.
    pub style: HloStyle,
}

fn error(file: &str, code: &'static str, message: impl Into<String>) -> ReadError {
    ReadError {
        file: file.to_string(),
        code,
        message: message.into(),
    }
}

/// Lists one file. A listing file read back may hold several files: one [`Listing`]
/// each. Module text is read as a stream (the scanner's memory stays flat; the
/// listing holds every shape).
pub fn read_path(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
) -> Result<Vec<Listing>, ReadError> {
    collect(|sink| stream_path_with(path, name, options, true, sink))
}

/// The listings of a read that hands on [`Item`]s ([`stream_path_with`] with
/// instructions): the one of an input that is one, with every entry (a module's with
/// its instructions), or one per file named in a listing file read back.
fn collect(
    read: impl FnOnce(&mut dyn FnMut(&Listing, Item)) -> Result<Option<Listing>, ReadError>,
) -> Result<Vec<Listing>, ReadError> {
    let (mut listings, mut instructions) = (Files::default(), Vec::new());
    let single = read(&mut |listing, item| match item {
        Item::Instruction(instruction) => instructions.push(instruction),
        Item::Entry(entry) => group(listing_of(&mut listings, listing), listing, entry),
    })?;
    let mut listings = listings.all;
    if let Some(mut single) = single {
        // A module or single messages: one listing (a module's with its instructions).
        single.entries = listings.pop().map(|l| l.entries).unwrap_or_default();
        single.instructions = instructions;
        listings = vec![single];
    }
    Ok(listings)
}

/// Lists one file as [`read_path`] does, handing each shape to `sink` as it is read
/// with the listing it belongs to (its file, kind and form; no entries), so that
/// module text and shape lines are listed in memory that stays flat whatever their
/// length (the entries of a listing file read back, and of other inputs, are read
/// whole first). On an error the shapes handed on so far are to be dropped.
pub fn stream_path(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(&Listing, Entry),
) -> Result<(), ReadError> {
    stream_path_with(path, name, options, false, &mut entries_to(sink)).map(drop)
}

/// [`stream_path`] for an input held in memory ([`read_bytes`] without gathering
/// the listing): module text and protos, shape lines and messages are handed on as
/// they are read.
pub fn stream_bytes(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
    sink: &mut dyn FnMut(&Listing, Entry),
) -> Result<(), ReadError> {
    read_bytes_with(name, bytes, options, false, &mut entries_to(sink)).map(drop)
}

/// A sink of [`Item`]s that hands each entry to `sink` (and drops instructions).
fn entries_to<'s>(sink: &'s mut dyn FnMut(&Listing, Entry)) -> impl FnMut(&Listing, Item) + 's {
    move |listing, item| {
        if let Item::Entry(entry) = item {
            sink(listing, entry);
        }
    }
}

/// Hands each entry of `listing` to `sink`; returns the listing without them.
fn hand_on(mut listing: Listing, sink: &mut dyn FnMut(&Listing, Item)) -> Listing {
    for entry in std::mem::take(&mut listing.entries) {
        sink(&listing, Item::Entry(entry));
    }
    listing
}

/// [`stream_path`], each shape handed on as an [`Item`]; returns the listing (with no
/// entries) of an input that is one (a module, or messages), `None` for a listing file
/// read back. A `collecting` reader is handed a module's instructions too, and the
/// lines of a listing file read back in their order (it groups them by file, as
/// [`parse_listing`] does: [`collect`]).
pub(crate) fn stream_path_with(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
    collecting: bool,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Option<Listing>, ReadError> {
    stream_path_keeping(path, name, options, (collecting, None), sink)
}

/// [`stream_path_with`], collecting, except that a listing file read back is not handed
/// on but held in `back` (its entries read when they are needed).
pub(crate) fn stream_path_holding_back(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
    back: &mut Option<Back>,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Option<Listing>, ReadError> {
    stream_path_keeping(path, name, options, (true, Some(back)), sink)
}

/// [`stream_path_with`], a listing file read back held in `back` when it is given.
fn stream_path_keeping(
    path: &FsPath,
    name: &str,
    options: &ReadOptions,
    how: (bool, Option<&mut Option<Back>>),
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Option<Listing>, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| error(name, "io_error", e.to_string()))?;
    // The input read whole below is read into a buffer of its size, not one grown by
    // doubling (up to twice its size).
    let opened = file.metadata().ok();
    let size = opened.as_ref().map_or(0, |m| m.len());
    // A large listing file read back reads its lines again from the file (the same
    // handle), when its size and time of change can tell that it did not change.
    let large = |m: &std::fs::Metadata| m.len() >= READ_AGAIN as u64 && m.modified().is_ok();
    let again = opened
        .filter(large)
        .and_then(|opened| Some((file.try_clone().ok()?, opened)));
    let reader = std::io::BufReader::with_capacity(buffer_for(size), file);
    stream_reader_with((reader, size), name, options, how, again, sink)
}

/// The size of the buffer a file of `size` bytes (0: not known) is read through: 1 MiB,
/// or for a smaller file its size (and a byte, to see its end in one read) from 8 KiB
/// up. A buffer of 1 MiB is mapped and unmapped on its own (the command line's mmap
/// threshold is 128 KiB): two for each of 400,000 small files took a third of `diff`'s
/// time of two directories of 200,000, in page faults.
pub(crate) fn buffer_for(size: u64) -> usize {
    const LARGE: usize = 1 << 20;
    match usize::try_from(size) {
        Ok(size) if size > 0 && size < LARGE => (size + 1).max(8 << 10),
        _ => LARGE,
    }
}

/// Whether [`read_path`] lists `path` as one listing of its own (a module, or
/// messages), never as a listing file read back that may name several files, known
/// from its first buffer as the read decides it: any form given but a listing; module
/// text or shape lines, which are streamed; or bytes that are not UTF-8, which no
/// listing is. `false` when only the whole read can tell (and on an I/O error, which
/// the read reports).
pub(crate) fn lists_as_one(path: &FsPath, options: &ReadOptions) -> bool {
    match options.source {
        Source::Form(_) => true,
        Source::Listing => false,
        Source::Auto => head_of(path, options).0,
    }
}

/// Whether [`read_path`] lists `path` as one listing of its own ([`lists_as_one`]), and
/// whether it reads it as shape lines, a line at a time: both told from one read of its
/// first buffer, as the read tells them (`false` on an I/O error, which the read
/// reports).
pub(crate) fn head_of(path: &FsPath, options: &ReadOptions) -> (bool, bool) {
    let Ok(file) = std::fs::File::open(path) else {
        return (matches!(options.source, Source::Form(_)), false);
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let reader = std::io::BufReader::with_capacity(buffer_for(size), file);
    let Ok(head) = check::Head::read(reader) else {
        return (matches!(options.source, Source::Form(_)), false);
    };
    let form = streamed_form(&head, options.source);
    let one = match options.source {
        Source::Form(_) => true,
        Source::Listing => false,
        Source::Auto => {
            let bytes = head.bytes();
            let not_utf8 = std::str::from_utf8(bytes).is_err_and(|e| e.error_len().is_some());
            not_utf8 || form.is_some()
        }
    };
    (one, form == Some(Form::Hlo))
}

/// [`stream_path`] of a stream that cannot be read twice (standard input): module text
/// and shape lines are listed as they are read; a listing file read back that goes on
/// past its first MiB is read from a copy of its text in a temporary file, as a file
/// is; anything else is read whole first.
pub fn stream_reader(
    reader: impl BufRead,
    name: &str,
    options: &ReadOptions,
    sink: &mut dyn FnMut(&Listing, Entry),
) -> Result<(), ReadError> {
    stream_reader_with(
        (reader, 0),
        name,
        options,
        (false, None),
        None,
        &mut entries_to(sink),
    )
    .map(drop)
}

/// The form [`stream_reader_with`] reads a line at a time, told from the reader's first
/// buffer `head`: module text ([`Form::HloModule`]) or shape lines ([`Form::Hlo`]), when
/// `head` is text as far as it goes (it may end inside a character); `None` for an input
/// read whole.
fn streamed_form<R: BufRead>(head: &check::Head<R>, source: Source) -> Option<Form> {
    let form = match source {
        Source::Form(form) => Some(form),
        Source::Auto => head.form().ok(),
        Source::Listing => None,
    };
    let head = head.bytes();
    let text = !head.contains(&0)
        && std::str::from_utf8(head).map_or_else(|e| e.error_len().is_none(), |_| true);
    match form {
        Some(Form::HloModule) if text => Some(Form::HloModule),
        Some(Form::Hlo) if text && !head.is_empty() => Some(Form::Hlo),
        _ => None,
    }
}

/// [`stream_path_keeping`] of what `reader` gives (`size` bytes, when known); a
/// listing file read back of [`READ_AGAIN`] bytes or more is read a line at a time,
/// not held, and its lines read again from `again` (the file, and its metadata when it
/// was opened) when they are handed on.
fn stream_reader_with(
    (reader, size): (impl BufRead, u64),
    name: &str,
    options: &ReadOptions,
    (collecting, back): (bool, Option<&mut Option<Back>>),
    again: Option<(std::fs::File, std::fs::Metadata)>,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Option<Listing>, ReadError> {
    let head = check::Head::read(reader).map_err(|e| error(name, "io_error", e.to_string()))?;
    let form = streamed_form(&head, options.source);
    // A listing that is large or goes on past its head (from a pipe) is read a line
    // at a time and its lines read again: from its file, if it has one and is not of
    // JSON lines; else from a copy of its text in a temporary file (when none can be
    // made, it is read whole).
    let large = again.is_some() || !head.is_whole();
    // A listing of JSON lines (read as the text it converts to) whose first line is
    // whole in the head.
    let json = large
        && form.is_none()
        && matches!(options.source, Source::Auto | Source::Listing)
        && json_listing_head(head.bytes());
    let listed = match form {
        // Its errors are its own, as the whole read says them.
        None if json => Some(None),
        None if large => listing_told_by(&head, options.source),
        _ => None,
    };
    let mut reader = head.into_reader();
    let again = match (listed.is_some(), again) {
        (true, Some(again)) if !json => Some(Again::File(again)),
        (true, _) => copy_of_listing(name, &mut reader, json)?.map(Again::Copy),
        (false, _) => None,
    };
    if let (Some(told), Some(again)) = (listed, again) {
        let (read, again) = match again {
            Again::File(again) => (FileLines::read(name, &mut reader, again.1.len()), again),
            Again::Copy(copy) => {
                // The copy's lines, through a handle of their own (at their start).
                let lines = copy.0.try_clone().map(|file| {
                    let lines = std::io::BufReader::with_capacity(1 << 20, file);
                    FileLines::read(name, lines, copy.1.len())
                });
                let read = lines.unwrap_or_else(|e| Err(error(name, "io_error", e.to_string())));
                (read, copy)
            }
        };
        let files = read.map_err(|e| match told {
            // Not a listing after all, as the whole read would say (it reports a
            // listing naming too many files as such when it holds them for `diff`).
            Some(reason) if e.code != "io_error" && !(e.code == "too_large" && back.is_some()) => {
                unknown_form(name, &reason)
            }
            _ => e,
        })?;
        let (file, opened) = again;
        let listed = Back {
            name: name.to_string(),
            text: Text::File {
                file: std::sync::Mutex::new((file, Windows::default())),
                len: opened.len(),
                modified: opened.modified().ok(),
            },
            files,
        };
        if let Some(back) = back {
            *back = Some(listed);
            return Ok(None);
        }
        // A collecting reader groups them so, whatever order they come in.
        listed
            .files
            .hand_on(sink, |index, each| listed.entries(index, each))?;
        return Ok(None);
    }
    match form {
        Some(Form::HloModule) => {
            let listing = Listing::new(name, Kind::Module, Some(Form::HloModule));
            module_text_scan(&listing, reader, options.style, collecting, sink)?;
            return Ok(Some(listing));
        }
        Some(_) => return hlo_lines(name, reader, options, sink).map(Some),
        None => {}
    }
    // Bytes whose first MiB already breaks the protobuf wire format (`/dev/zero`) are
    // read no further (`read_message`).
    let mut bytes = crate::input::read_message(&mut reader, size)
        .map_err(|e| error(name, "io_error", e.to_string()))?;
    if let Some(back) = back {
        match Back::of(name, bytes, options)? {
            Ok(held) => {
                *back = Some(held);
                return Ok(None);
            }
            Err(given) => bytes = given,
        }
    }
    read_bytes_with(name, &bytes, options, collecting, sink)
}

/// Whether the input whose first bytes are `head` (and that goes on past them) is read
/// as a listing file read back by [`read_bytes_with`], told as it tells it of the whole:
/// `Some` with why no other form fits it (nothing when a listing is given); `None` when
/// it is another form, or a listing of JSON lines (read as the text it converts to), or
/// its first line does not end in `head` (then only the whole can tell).
fn listing_told_by<R: BufRead>(head: &check::Head<R>, source: Source) -> Option<Option<String>> {
    let reason = match source {
        Source::Form(_) => return None,
        Source::Listing => None,
        // The form of a stream past its head is told from its head, as of the whole.
        Source::Auto => Some(head.form().err()?),
    };
    let bytes = head.bytes();
    let first = first_line(bytes)?;
    (first.ends_with(b"\n") && !is_json_listing(bytes)).then_some(reason)
}

/// The first line of `bytes` that is not blank, with its line break if it has one.
fn first_line(bytes: &[u8]) -> Option<&[u8]> {
    let mut lines = bytes.split_inclusive(|&b| b == b'\n');
    lines.find(|line| !line.trim_ascii().is_empty())
}

/// An input of no form known (`reason` says why).
fn unknown_form(name: &str, reason: &str) -> ReadError {
    error(
        name,
        "unknown_form",
        format!("cannot tell what this is: {reason}; give --from binary|json|hlo|hlo-module|hlo-module-proto|listing"),
    )
}

/// Lists HLO text of one shape (or program shape) a line, a line at a time; returns its
/// listing (with no entries).
fn hlo_lines(
    name: &str,
    mut reader: impl BufRead,
    options: &ReadOptions,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Listing, ReadError> {
    let listing = Listing::new(name, Kind::Messages, Some(Form::Hlo));
    let style = options.style;
    let mut bytes = Vec::new();
    let (mut number, mut listed) = (0, 0usize);
    loop {
        bytes.clear();
        let read = crate::input::read_line(&mut reader, &mut bytes)
            .map_err(|e| error(name, "io_error", e.to_string()))?;
        if read == 0 {
            break;
        }
        let line =
            std::str::from_utf8(&bytes).map_err(|_| error(name, "wrong_form", "not UTF-8 text"))?;
        number += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        // Each line's kind told as `validate` tells it, unless `--message` names it.
        let kind = options.message.unwrap_or_else(|| check::line_kind(trimmed));
        let syntax = |e: crate::text::ParseError| {
            let message = format!("line {number}: {}", e.message());
            error(name, "hlo_syntax", message)
        };
        let mut push = |mut entry: Entry| {
            entry.line = Some(number);
            listed += 1;
            sink(&listing, Item::Entry(entry));
        };
        if kind == MessageKind::Shape && long_tuple(trimmed) {
            let options = crate::text::ParseOptions::default();
            let long = Entry::of_long_text(Role::Result, trimmed, options, style);
            if let Some(entry) = long.map_err(syntax)? {
                push(entry);
                continue;
            }
        }
        if kind == MessageKind::ProgramShape
            && trimmed.len() >= LONG_TEXT
            && long_program_line(trimmed, style, &mut push).map_err(syntax)?
        {
            continue;
        }
        let message = crate::text::parse_message(kind, trimmed).map_err(syntax)?;
        if let AnyMessage::Shape(shape) = &message {
            push(line_entry(shape, trimmed, style));
            continue;
        }
        message_entries(name, &message, Some(number), style, &mut push)?;
    }
    if listed == 0 {
        return Err(error(name, "no_shapes", "no shape in the input"));
    }
    Ok(listing)
}

/// The entry of a line's shape: `shape`, parsed from `written` with the default
/// options. When it is an array whose text in `style` is the line itself, with its
/// layout, the text reads back as the shape without being read again: the two parses
/// differ only where an array has no layout (the default fills one in), and an array's
/// text holds `{` only in its layout. So an array of 340,000 dimensions is listed
/// without a second message of them.
fn line_entry(shape: &ShapeProto, written: &str, style: HloStyle) -> Entry {
    let text = print(shape, style, None);
    let array = crate::PrimitiveType::from_i32(shape.element_type).is_some_and(|t| t.is_array())
        && shape.tuple_shapes.is_empty();
    if array && text == written && written.contains('{') {
        return Entry::bare(Role::Result, text, None);
    }
    Entry::new(Role::Result, shape, text)
}

/// The entries of a long program shape's line (`text`), a part at a time, handed to
/// `push`: parameters and result as the whole message lists them (a line of a million
/// parameters took 43 times its size, parsed whole). A part that is a tuple with
/// elements is printed a shape at a time, as a long tuple line is
/// ([`Entry::of_long_text`]; a line with a tuple part of 1 MiB took 28 times its size).
/// `Ok(false)`, having handed on nothing, when such a tuple's text would not read back
/// as it or does not print (it is read whole, so that the entry keeps the tuple); the
/// whole parse's error when the text does not parse.
fn long_program_line(
    text: &str,
    style: HloStyle,
    push: &mut dyn FnMut(Entry),
) -> Result<bool, crate::text::ParseError> {
    let options = crate::text::ParseOptions::default();
    let role = |part| match part {
        crate::text::ProgramPart::Parameter(index) => Role::EntryParameter { index },
        crate::text::ProgramPart::Result => Role::EntryResult,
    };
    // First each tuple part's text is made and dropped, to know that all read back.
    let mut fits = true;
    let mut parts = TupleParts::new(style);
    crate::text::parse_program_shape_leaves(text, options, &mut |part, path, _, shape| {
        if let Some((_, tuple)) = parts.leaf(part, path, &shape) {
            fits &= tuple.is_ok();
        }
    })?;
    if let Some((_, tuple)) = parts.finish() {
        fits &= tuple.is_ok();
    }
    if !fits {
        return Ok(false);
    }
    let mut parts = TupleParts::new(style);
    let tuple_entry = |(part, tuple): TuplePart, push: &mut dyn FnMut(Entry)| {
        if let Ok(text) = tuple {
            push(Entry::bare(role(part), text, None));
        }
    };
    crate::text::parse_program_shape_leaves(text, options, &mut |part, path, _, shape| {
        if let Some(tuple) = parts.leaf(part, path, &shape) {
            tuple_entry(tuple, push);
        }
        if path.is_empty() {
            let text = print(&shape, style, None);
            push(Entry::new(role(part), &shape, text));
        }
    })?;
    if let Some(tuple) = parts.finish() {
        tuple_entry(tuple, push);
    }
    Ok(true)
}

/// The tuple parts of a program shape handed on a shape at a time, each printed as a
/// long tuple is ([`LongTuple`]).
struct TupleParts {
    style: HloStyle,
    open: Option<(crate::text::ProgramPart, LongTuple)>,
}

/// A tuple part's text, or `Err(())` when it does not read back as the tuple or does
/// not print.
type TuplePart = (crate::text::ProgramPart, Result<String, ()>);

impl TupleParts {
    fn new(style: HloStyle) -> Self {
        TupleParts { style, open: None }
    }

    /// Takes the shape at `path` of `part`: the tuple part before it, when this shape
    /// ends one.
    fn leaf(
        &mut self,
        part: crate::text::ProgramPart,
        path: &[usize],
        shape: &ShapeProto,
    ) -> Option<TuplePart> {
        let ended = match &self.open {
            Some((open, _)) if *open != part || path.is_empty() => self.finish(),
            _ => None,
        };
        if !path.is_empty() {
            let (_, tuple) = self
                .open
                .get_or_insert_with(|| (part, LongTuple::new(self.style)));
            tuple.leaf(path, shape);
        }
        ended
    }

    /// The tuple part open, ended.
    fn finish(&mut self) -> Option<TuplePart> {
        let (part, tuple) = self.open.take()?;
        let text = match tuple.reads_back {
            true => tuple.finish().map_err(drop),
            false => Err(()),
        };
        Some((part, text))
    }
}

/// Where the lines of a listing read a line at a time are read again from.
enum Again {
    /// The file it was read from (another handle of it), and its metadata when opened.
    File((std::fs::File, std::fs::Metadata)),
    /// A copy of its text in a temporary file (at its start), and the copy's metadata.
    Copy((std::fs::File, std::fs::Metadata)),
}

/// A copy of the text of the listing `reader` gives (named `name`; converted to text
/// when it is of JSON lines) in a temporary file, at its start, with its metadata;
/// `None` when no temporary file can be made (nothing was read then).
///
/// # Errors
/// A line that is no line of a JSON listing (as [`json_listing_as_text`] says it), or
/// a failure to read or keep the copy.
fn copy_of_listing(
    name: &str,
    reader: &mut impl BufRead,
    json: bool,
) -> Result<Option<(std::fs::File, std::fs::Metadata)>, ReadError> {
    use std::io::{Seek, Write};
    let Ok(file) = tempfile::tempfile() else {
        return Ok(None);
    };
    let kept = |e: std::io::Error| {
        let message = format!("cannot keep a copy of the listing in a temporary file: {e}");
        error(name, "io_error", message)
    };
    let read = |e: std::io::Error| error(name, "io_error", e.to_string());
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    if json {
        let (mut line, mut text, mut number) = (Vec::new(), String::new(), 0);
        loop {
            line.clear();
            if crate::input::read_line(reader, &mut line).map_err(read)? == 0 {
                break;
            }
            number += 1;
            let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
            text.clear();
            json_line_as_text(name, number, bytes, &mut text)?;
            out.write_all(text.as_bytes()).map_err(kept)?;
        }
    } else {
        // A read's error is told apart from a write's.
        let mut buffer = vec![0; 1 << 16];
        loop {
            let n = match std::io::Read::read(reader, &mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read(e)),
            };
            out.write_all(&buffer[..n]).map_err(kept)?;
        }
    }
    let mut file = out.into_inner().map_err(|e| kept(e.into_error()))?;
    file.rewind().map_err(kept)?;
    let metadata = file.metadata().map_err(kept)?;
    Ok(Some((file, metadata)))
}

/// Whether the first bytes `head` of a longer input are those of a listing written as
/// JSON lines ([`is_json_listing`]), its first line whole in them.
fn json_listing_head(head: &[u8]) -> bool {
    first_line(head).is_some_and(|line| line.ends_with(b"\n")) && is_json_listing(head)
}

/// Whether `bytes` are a listing written as JSON lines (`shapes --format json`): the
/// first line is an object whose first keys are `file` and `location` (no message has
/// a field `file`).
fn is_json_listing(bytes: &[u8]) -> bool {
    // Its line break, if any, is white space to JSON.
    first_line(bytes).is_some_and(|line| {
        line.trim_ascii_start().starts_with(b"{\"file\":") && {
            let line: Result<JsonListed, _> = serde_json::from_slice(line);
            line.is_ok()
        }
    })
}

/// What a JSON listing line ([`JsonLine`]) gives of its text line.
#[derive(serde::Deserialize)]
struct JsonListed {
    file: String,
    location: Option<String>,
    shape: String,
}

/// The text listing of a listing written as JSON lines: each line's `FILE: LOCATION:
/// SHAPE` (as `shapes` writes the text), so that both read back alike.
fn json_listing_as_text(name: &str, bytes: &[u8]) -> Result<String, ReadError> {
    let mut text = String::new();
    for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
        json_line_as_text(name, number + 1, line, &mut text)?;
    }
    Ok(text)
}

/// Adds to `text` the text line of line `number` of a listing written as JSON lines,
/// `line` (without its line break): nothing for an empty line.
fn json_line_as_text(
    name: &str,
    number: usize,
    line: &[u8],
    text: &mut String,
) -> Result<(), ReadError> {
    if line.trim_ascii().is_empty() {
        return Ok(());
    }
    let listed: JsonListed = serde_json::from_slice(line).map_err(|e| {
        let message = format!("line {number}: not a line of a JSON listing: {e}");
        error(name, "decode_error", message)
    })?;
    if listed.shape.contains('\n') || listed.location.as_ref().is_some_and(|l| l.contains('\n')) {
        let message = format!("line {number}: a line break in a JSON listing's field");
        return Err(error(name, "decode_error", message));
    }
    text.push_str(&listed_name(&listed.file));
    text.push_str(": ");
    if let Some(location) = &listed.location {
        text.push_str(location);
        text.push_str(": ");
    }
    text.push_str(&listed.shape);
    text.push('\n');
    Ok(())
}

/// Lists one input held in memory (see [`read_path`]).
pub fn read_bytes(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Vec<Listing>, ReadError> {
    collect(|sink| read_bytes_with(name, bytes, options, true, sink))
}

/// [`read_bytes`], handing on [`Item`]s as [`stream_path_with`] does (a module's shapes
/// and instructions as they are read).
fn read_bytes_with(
    name: &str,
    bytes: &[u8],
    options: &ReadOptions,
    collecting: bool,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<Option<Listing>, ReadError> {
    if bytes.is_empty() {
        return Err(error(name, "empty_input", "the input is empty"));
    }
    // A listing written as JSON lines (`shapes --format json`) is read back as the
    // text listing of the same lines.
    if matches!(options.source, Source::Auto | Source::Listing) && is_json_listing(bytes) {
        let text = json_listing_as_text(name, bytes)?;
        let options = ReadOptions {
            source: Source::Listing,
            ..*options
        };
        return read_bytes_with(name, text.as_bytes(), &options, collecting, sink);
    }
    // A listing file read back: to a collecting reader a line at a time (it groups
    // the entries by file), to others grouped by file first.
    let listings = |sink: &mut dyn FnMut(&Listing, Item)| {
        if collecting {
            listing_lines(name, bytes, &mut |listing, entry| {
                sink(listing, Item::Entry(entry))
            })?;
            return Ok(None);
        }
        stream_listing(name, bytes, sink)?;
        Ok(None)
    };
    let form = match options.source {
        Source::Listing => return listings(sink),
        Source::Form(form) => form,
        Source::Auto => match check::detect(bytes) {
            Ok(form) => form,
            Err(reason) => {
                if let Ok(read) = listings(sink) {
                    return Ok(read);
                }
                return Err(unknown_form(name, &reason));
            }
        },
    };
    let listing = match form {
        Form::HloModule => {
            let listing = Listing::new(name, Kind::Module, Some(Form::HloModule));
            module_text_scan(&listing, bytes, options.style, collecting, sink)?;
            return Ok(Some(listing));
        }
        Form::HloModuleProto => {
            let listing = Listing::new(name, Kind::Module, Some(Form::HloModuleProto));
            module_proto_scan(&listing, bytes, options.style, collecting, sink)?;
            return Ok(Some(listing));
        }
        Form::Binary | Form::Json => {
            let kind = match form {
                Form::Binary => options.message.or_else(|| binary_kind(bytes)),
                _ => options.message.or_else(|| json_kind(bytes)),
            }
            .unwrap_or_default();
            if bytes.len() >= LONG_TEXT {
                let listing = Listing::new(name, Kind::Messages, Some(form));
                let style = options.style;
                let mut push = |entry| sink(&listing, Item::Entry(entry));
                if let Some(read) =
                    long_message_entries(name, form, kind, bytes, style, LONG_PART, &mut push)
                {
                    read?;
                    return Ok(Some(listing));
                }
            }
            whole_message_listing(name, form, kind, bytes, options.style)?
        }
        Form::Hlo => {
            std::str::from_utf8(bytes).map_err(|_| error(name, "wrong_form", "not UTF-8 text"))?;
            return hlo_lines(name, bytes, options, sink).map(Some);
        }
    };
    Ok(Some(hand_on(listing, sink)))
}

/// The listing of one binary or JSON message (`form`) of `kind`, read whole.
fn whole_message_listing(
    name: &str,
    form: Form,
    kind: MessageKind,
    bytes: &[u8],
    style: HloStyle,
) -> Result<Listing, ReadError> {
    Ok(match form {
        Form::Binary => {
            let decoded =
                crate::codec::decode_any(kind, bytes).map_err(|e| undecodable(name, kind, &e))?;
            message_listing(name, Form::Binary, [(decoded.message, None)], style)?
        }
        _ => {
            let message = crate::json::from_json(kind, bytes, &crate::json::ParseOptions::new())
                .map_err(|e| unreadable_json(name, kind, &e))?;
            message_listing(name, Form::Json, [(message, None)], style)?
        }
    })
}

/// The entries of one binary or JSON message (`form`) of `kind` a shape at a time,
/// handed to `push` as they come: a shape that is a tuple, or each part of a program
/// shape (each tuple part of `long` bytes or more, [`LONG_PART`] but in the properties
/// that compare this with the whole listing), is listed from its shapes however its
/// tuples nest and whatever fields of their own they have, so that a tuple of millions
/// of shapes is never held (built whole, it took 30 to 85 times its bytes), nor the
/// entries of millions of parameters (41 times). A program shape that does not read
/// gets the whole read's error. `None`, before any entry is handed on, when it must be
/// listed whole instead.
fn long_message_entries(
    name: &str,
    form: Form,
    kind: MessageKind,
    bytes: &[u8],
    style: HloStyle,
    long: usize,
    push: &mut dyn FnMut(Entry),
) -> Option<Result<(), ReadError>> {
    match kind {
        MessageKind::Shape => {
            let entry = match form {
                Form::Binary => Entry::of_long_binary(Role::Result, bytes, style)
                    .map_err(|e| undecodable(name, kind, &e)),
                _ => Entry::of_long_json(Role::Result, bytes, style)
                    .map_err(|e| unreadable_json(name, kind, &e)),
            };
            match entry {
                Ok(Some(entry)) => push(entry),
                // Not a tuple with elements: listed whole.
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
        MessageKind::ProgramShape => {
            // JSON is listed from its binary encoding (converted a shape at a time,
            // some seven times smaller), whose parts are found by their fields.
            let converted;
            let binary = match form {
                Form::Binary => bytes,
                _ => {
                    let options = crate::convert::Options::default();
                    let to = crate::convert::Form::Binary;
                    let from = crate::convert::Form::Json;
                    match crate::convert::program_shape_to(from, bytes, to, &options) {
                        Ok(done) => {
                            converted = done.output.into_vec().ok()?;
                            &converted
                        }
                        Err(crate::convert::ConvertError::Json(e)) => {
                            return Some(Err(unreadable_json(name, kind, &e)))
                        }
                        Err(_) => return None,
                    }
                }
            };
            // Checked keeping nothing (every tuple opened, a result given more than
            // once merged where it stands), in the memory of one shape.
            if let Err(e) = crate::codec::check_program_shape(binary) {
                return Some(Err(undecodable(name, kind, &e)));
            }
            match program_entries(binary, style, long, push) {
                Ok(0) => return Some(Err(error(name, "no_shapes", "no shape in the input"))),
                Ok(_) => {}
                Err(e) => return Some(Err(undecodable(name, kind, &e))),
            }
        }
        MessageKind::Layout => return None,
    }
    Some(Ok(()))
}

/// The entries of a program shape in binary or JSON (`form`) listed a part at a time,
/// as a long one is, every tuple part of `long` bytes or more a shape at a time (for
/// the properties that compare this with the whole listing); `None` as
/// [`long_message_entries`].
#[doc(hidden)]
pub fn program_entries_by_parts(
    form: Form,
    bytes: &[u8],
    style: HloStyle,
    long: usize,
) -> Option<Result<Vec<Entry>, ReadError>> {
    let kind = MessageKind::ProgramShape;
    let mut entries = Vec::new();
    let read = long_message_entries("p", form, kind, bytes, style, long, &mut |entry| {
        entries.push(entry)
    })?;
    Some(read.map(|()| entries))
}

/// The entries of a binary program shape that decodes (`bytes`, checked by
/// [`crate::codec::check_program_shape`]), a part at a time, handed to `push`: each
/// parameter, then the result, found by their fields (a result given more than once is
/// the merge of them all, which protobuf reads as their bytes one after the other),
/// each a long tuple listed a shape at a time ([`Entry::of_long_tuple_proto`]) or a
/// shape read whole. Returns how many; the decode error of a part that does not decode
/// (which the check rules out).
fn program_entries(
    bytes: &[u8],
    style: HloStyle,
    long: usize,
    push: &mut dyn FnMut(Entry),
) -> Result<usize, crate::codec::DecodeError> {
    use crate::codec::wire::{Reader, WireType};
    let mut reader = Reader::new(bytes);
    let (mut parameters, mut results) = (0, Vec::new());
    while !reader.is_at_end() {
        let (number, wire_type) = reader.read_tag()?;
        let value = reader.skip_value(number, wire_type, 0)?;
        match (number, wire_type) {
            (1, WireType::LengthDelimited) => {
                let role = Role::EntryParameter { index: parameters };
                push(part_entry(role, value, style, long)?);
                parameters += 1;
            }
            (2, WireType::LengthDelimited) => results.push(value),
            _ => {}
        }
    }
    match results.as_slice() {
        [] => return Ok(parameters),
        [result] => push(part_entry(Role::EntryResult, result, style, long)?),
        several => {
            let merged = several.concat();
            push(part_entry(Role::EntryResult, &merged, style, long)?);
        }
    }
    Ok(parameters + 1)
}

/// The entry of a program shape's part (`bytes`, a `ShapeProto`): a tuple of `long`
/// bytes or more ([`LONG_PART`]) listed a shape at a time, anything else read whole.
fn part_entry(
    role: Role,
    bytes: &[u8],
    style: HloStyle,
    long: usize,
) -> Result<Entry, crate::codec::DecodeError> {
    if bytes.len() >= long {
        if let Some(entry) = Entry::of_long_tuple_proto(role.clone(), bytes, style) {
            return Ok(entry);
        }
    }
    let shape = crate::codec::decode_shape(bytes)?.message;
    Ok(Entry::new(role, &shape, print(&shape, style, None)))
}

/// A program shape's part of this many bytes or more that is a tuple is listed a
/// shape at a time.
const LONG_PART: usize = 64 << 10;

/// Why binary input of `kind` is not listed: it does not decode (`e`).
fn undecodable(name: &str, kind: MessageKind, e: &crate::codec::DecodeError) -> ReadError {
    error(
        name,
        "decode_error",
        format!("cannot decode {}: {e}", kind.proto_name()),
    )
}

/// Why JSON input of `kind` is not listed: it does not read (`e`).
fn unreadable_json(name: &str, kind: MessageKind, e: &crate::json::JsonError) -> ReadError {
    error(
        name,
        "decode_error",
        format!("cannot read {} from JSON: {e}", kind.proto_name()),
    )
}

/// The message kind of a JSON message without `--message`, told by its first key (a
/// field that only that message has: `parameters`, `result` and `parameterNames` are a
/// program shape's, `minorToMajor`, `tiles` and the rest a layout's); `None` (a shape)
/// for anything else, which is then read as a shape and refused as one if it is not.
fn json_kind(bytes: &[u8]) -> Option<MessageKind> {
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let key = rest.strip_prefix('"')?;
    let key = &key[..key.find('"')?];
    const PROGRAM: &[&str] = &["parameters", "result", "parameterNames", "parameter_names"];
    const LAYOUT: &[&str] = &[
        "minorToMajor",
        "minor_to_major",
        "tiles",
        "elementSizeInBits",
        "element_size_in_bits",
        "memorySpace",
        "memory_space",
        "dimLevelTypes",
        "dim_level_types",
        "physicalShape",
        "physical_shape",
        "indexPrimitiveType",
        "index_primitive_type",
        "pointerPrimitiveType",
        "pointer_primitive_type",
        "dimUnique",
        "dim_unique",
        "dimOrdered",
        "dim_ordered",
        "dynamicShapeMetadataPrefixBytes",
        "dynamic_shape_metadata_prefix_bytes",
        "tailPaddingAlignmentInElements",
        "tail_padding_alignment_in_elements",
        "splitConfigs",
        "split_configs",
    ];
    if PROGRAM.contains(&key) {
        Some(MessageKind::ProgramShape)
    } else if LAYOUT.contains(&key) {
        Some(MessageKind::Layout)
    } else {
        None
    }
}

/// The message kind of binary bytes without `--message`: the first of shape, program
/// shape that decodes with no unknown field, read a shape at a time (plain tuples are
/// not built).
fn binary_kind(bytes: &[u8]) -> Option<MessageKind> {
    let clean = std::cell::Cell::new(true);
    let shape = crate::codec::decode_shape_tree(
        bytes,
        &mut |_, _, leaf| clean.set(clean.get() && !leaf.has_unknown_fields()),
        &mut |event| {
            if let crate::codec::TreeEvent::Leave(_, message, unknown) = event {
                let tuple = crate::codec::Decoded { message, unknown };
                clean.set(clean.get() && !tuple.has_unknown_fields());
            }
        },
    );
    let clean = clean.get();
    if shape
        .is_ok_and(|s| clean && !s.shell.has_unknown_fields() && s.shell.message.element_type != 0)
    {
        return Some(MessageKind::Shape);
    }
    let program = crate::codec::decode_clean_program_shape_tree(
        bytes,
        &mut |_, _, _, _| {},
        &mut |_| {},
        &mut |_, _| {},
    );
    match program {
        Ok(Some(p)) if !p.shell.has_unknown_fields() && p.has_result() => {
            Some(MessageKind::ProgramShape)
        }
        _ => None,
    }
}

/// What a listing says for a shape that has no text in either style: why, in words,
/// never taken for a shape.
fn no_text(refused: &crate::text::PrintError) -> String {
    format!("<no HLO text: {refused}>")
}

fn print(shape: &ShapeProto, style: HloStyle, written: Option<&str>) -> String {
    match style.print_shape(shape) {
        Ok(text) => text,
        Err(_) => match written {
            Some(text) => text.to_string(),
            // No text in either style (an element type without a name): what stops it,
            // in words, never taken for a shape (the entry keeps the shape itself).
            None => crate::text::print_shape(shape).unwrap_or_else(|e| no_text(&e)),
        },
    }
}

fn message_listing(
    name: &str,
    form: Form,
    messages: impl IntoIterator<Item = (AnyMessage, Option<usize>)>,
    style: HloStyle,
) -> Result<Listing, ReadError> {
    let mut listing = Listing::new(name, Kind::Messages, Some(form));
    for (message, line) in messages {
        message_entries(name, &message, line, style, &mut |entry| {
            listing.entries.push(entry);
        })?;
    }
    if listing.entries.is_empty() {
        return Err(error(name, "no_shapes", "no shape in the input"));
    }
    Ok(listing)
}

/// The entries of one message (a shape, or a program shape's parameters and result),
/// at `line` of HLO text if it was read from one.
fn message_entries(
    name: &str,
    message: &AnyMessage,
    line: Option<usize>,
    style: HloStyle,
    push: &mut dyn FnMut(Entry),
) -> Result<(), ReadError> {
    let mut push = |role: Role, shape: &ShapeProto| {
        let mut entry = Entry::new(role, shape, print(shape, style, None));
        entry.line = line;
        push(entry);
    };
    match message {
        AnyMessage::Shape(shape) => push(Role::Result, shape),
        AnyMessage::ProgramShape(program) => {
            for (index, parameter) in program.parameters.iter().enumerate() {
                push(Role::EntryParameter { index }, parameter);
            }
            if let Some(result) = &program.result {
                push(Role::EntryResult, result);
            }
        }
        AnyMessage::Layout(_) => {
            return Err(error(
                name,
                "wrong_message",
                "a LayoutProto alone holds no shape to list or compare; give --message shape or program-shape",
            ))
        }
    }
    Ok(())
}

fn first_problem(name: &str, problems: Vec<Finding>) -> Result<(), ReadError> {
    match problems
        .into_iter()
        .find(|f| f.severity == crate::Severity::Error)
    {
        None => Ok(()),
        Some(f) => {
            let at = match (f.line, f.column) {
                (Some(line), Some(column)) => format!("{line}:{column}: "),
                _ if !f.path.is_empty() => format!("{}: ", f.path),
                _ => String::new(),
            };
            Err(error(name, f.code, format!("{at}{}", f.message)))
        }
    }
}

/// Lists module text, streamed.
pub fn module_text_listing<R: BufRead>(
    name: &str,
    reader: R,
    style: HloStyle,
) -> Result<Listing, ReadError> {
    module_listing(name, Form::HloModule, |listing, sink| {
        module_text_scan(listing, reader, style, true, sink)
    })
}

/// The listing of a module of `form` that `scan` reads, with its instructions.
fn module_listing(
    name: &str,
    form: Form,
    scan: impl FnOnce(&Listing, &mut dyn FnMut(&Listing, Item)) -> Result<(), ReadError>,
) -> Result<Listing, ReadError> {
    let module = || Listing::new(name, Kind::Module, Some(form));
    let mut listings = collect(|sink| {
        let listing = module();
        scan(&listing, sink)?;
        Ok(Some(listing))
    })?;
    Ok(listings.pop().unwrap_or_else(module))
}

/// Scans module text into `listing` (a module's, with no entries), handing each entry
/// to `sink` as it comes, and each instruction too if `keep` is set.
fn module_text_scan<R: BufRead>(
    listing: &Listing,
    reader: R,
    style: HloStyle,
    keep: bool,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<(), ReadError> {
    let name = listing.file.as_str();
    let mut problems = Vec::new();
    // Shapes and instructions come to two callbacks, in the order read.
    let sink = std::cell::RefCell::new(sink);
    let mut on_shape = |site: &Site<'_>, shape: &ShapeProto| {
        let computation = match site.role {
            Role::EntryParameter { .. } | Role::EntryResult => None,
            _ => site.computation.map(str::to_string),
        };
        let long = site
            .elided
            .then(|| Entry::of_long_tuple(site.role.clone(), site.text, MODULE_TEXT, style))
            .flatten();
        let mut entry = long.unwrap_or_else(|| {
            let whole;
            let shape = if site.elided {
                whole = crate::text::parse_shape_with(site.text, MODULE_TEXT).unwrap_or_default();
                &whole
            } else {
                shape
            };
            Entry::new(
                site.role.clone(),
                shape,
                print(shape, style, Some(site.text)),
            )
        });
        entry.entry = computation.is_some() && site.entry;
        entry.computation = computation;
        entry.instruction = site.instruction.map(str::to_string);
        entry.line = Some(site.line);
        entry.column = Some(site.column);
        (sink.borrow_mut())(listing, Item::Entry(entry));
    };
    let mut on_instruction = |site: &InstructionSite<'_>| {
        (sink.borrow_mut())(listing, Item::Instruction(Instruction::of(site)));
    };
    let mut on_problem = |finding: Finding| problems.push(finding);
    let on_instruction =
        keep.then_some(&mut on_instruction as &mut dyn FnMut(&InstructionSite<'_>));
    let summary =
        module::scan_text_for_listing_with(reader, &mut on_shape, on_instruction, &mut on_problem)
            .map_err(|e| error(name, "io_error", e.to_string()))?;
    first_problem(name, problems)?;
    if summary.structures == 0 {
        return Err(error(
            name,
            "not_a_module",
            "not an HLO module: no HloModule header, computation or instruction found",
        ));
    }
    if summary.shapes == 0 {
        // As `validate` says, and as a module proto of no shape is refused: an empty
        // listing would not read back, and `diff` of two would say "no difference".
        return Err(error(name, "no_shapes", "no shape in the module"));
    }
    Ok(())
}

/// Lists a module proto (`HloModuleProto`, or an `HloProto` / `HloSnapshot` around one).
pub fn module_proto_listing(
    name: &str,
    bytes: &[u8],
    style: HloStyle,
) -> Result<Listing, ReadError> {
    module_listing(name, Form::HloModuleProto, |listing, sink| {
        module_proto_scan(listing, bytes, style, true, sink)
    })
}

/// Walks a module proto for `listing` (a module's, with no entries) as
/// [`module_text_scan`] scans text: each entry handed to `sink`, and each instruction
/// if `keep` is set.
fn module_proto_scan(
    listing: &Listing,
    bytes: &[u8],
    style: HloStyle,
    keep: bool,
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<(), ReadError> {
    let name = listing.file.as_str();
    let mut problems = Vec::new();
    let mut shapes = 0usize;
    let sink = std::cell::RefCell::new(sink);
    let mut on_shape = |site: &ProtoSite<'_>, shape: &ShapeProto| {
        let long = site
            .elided
            .and_then(|bytes| Entry::of_long_tuple_proto(site.role.clone(), bytes, style));
        let mut entry = long.unwrap_or_else(|| {
            let whole;
            let shape = match site.elided {
                Some(bytes) => {
                    whole = crate::codec::decode_shape(bytes)
                        .map(|d| d.message)
                        .unwrap_or_default();
                    &whole
                }
                None => shape,
            };
            Entry::new(site.role.clone(), shape, print(shape, style, None))
        });
        entry.computation = site.computation.map(str::to_string);
        entry.entry = site.entry;
        entry.instruction = site.instruction.map(str::to_string);
        entry.path = Some(site.path.to_string());
        shapes += 1;
        (sink.borrow_mut())(listing, Item::Entry(entry));
    };
    let mut on_instruction = |site: &InstructionSite<'_>| {
        (sink.borrow_mut())(listing, Item::Instruction(Instruction::of(site)));
    };
    let mut on_problem = |finding: Finding| problems.push(finding);
    let on_instruction =
        keep.then_some(&mut on_instruction as &mut dyn FnMut(&InstructionSite<'_>));
    module::walk_proto_for_listing_with(bytes, &mut on_shape, on_instruction, &mut on_problem)
        .map_err(|e| {
            let code = match e {
                module::ScanError::NotAModule(_) => "not_a_module",
                _ => "decode_error",
            };
            error(name, code, e.to_string())
        })?;
    first_problem(name, problems)?;
    if shapes == 0 {
        return Err(error(name, "no_shapes", "no shape in the module"));
    }
    Ok(())
}

/// Reads a listing written by `shapes` (text) back: one [`Listing`] per file named in
/// it, in the order they first appear. Blank lines and `//` or `#` comment lines are
/// skipped.
pub fn parse_listing(name: &str, bytes: &[u8]) -> Result<Vec<Listing>, ReadError> {
    let mut listings = Files::default();
    listing_lines(name, bytes, &mut |line, entry| {
        group(listing_of(&mut listings, line), line, entry)
    })?;
    Ok(listings.all)
}

/// One `T` per file (a listing, or `diff`'s side of one), in the order the files first
/// appear.
pub(crate) struct Files<T> {
    /// Each file's, in order.
    pub(crate) all: Vec<T>,
    /// Each file's place in `all` (looked up, not searched: a listing file of 40,000
    /// files took seconds so).
    at: std::collections::HashMap<String, usize>,
}

impl<T> Default for Files<T> {
    fn default() -> Self {
        Files {
            all: Vec::new(),
            at: std::collections::HashMap::new(),
        }
    }
}

impl<T> Files<T> {
    /// The one of `file`, made by `new` when the file is new.
    pub(crate) fn of(&mut self, file: &str, new: impl FnOnce() -> T) -> &mut T {
        let at = self.index(file, new);
        &mut self.all[at]
    }

    /// The place in `all` of the one of `file`, made by `new` when the file is new.
    pub(crate) fn index(&mut self, file: &str, new: impl FnOnce() -> T) -> usize {
        match self.at.get(file) {
            Some(&at) => at,
            None => {
                self.all.push(new());
                self.at.insert(file.to_string(), self.all.len() - 1);
                self.all.len() - 1
            }
        }
    }
}

/// The listing of `line`'s file in `files` (of its kind and form when it is new).
fn listing_of<'f>(files: &'f mut Files<Listing>, line: &Listing) -> &'f mut Listing {
    files.of(&line.file, || {
        Listing::new(&line.file, line.kind, line.form)
    })
}

/// Adds `entry`, read from a line of `line`'s file, to `listing` (of that file): a file
/// is a module when any of its lines has a module's location.
fn group(listing: &mut Listing, line: &Listing, entry: Entry) {
    if line.kind == Kind::Module {
        listing.kind = Kind::Module;
    }
    listing.entries.push(entry);
}

/// Consecutive lines of one file in a listing read back: their byte range, and the
/// number of the first.
type Run = (std::ops::Range<usize>, usize);

/// Where each file's lines stand in a listing file read back, found by one pass that
/// checks every line (so that an error comes before any entry, as from the whole
/// read): each file's name once, in the order the files first appear, its runs of
/// lines (one each for a listing `shapes` wrote) and its kind.
///
/// Held in a bounded memory however many files it names: the runs found are sorted by
/// their file's name through a temporary file ([`Sorter`]) to gather each file's, then
/// by where each file first appears, and the files' names, records and runs kept in
/// tables whose first part is held and the rest in temporary files ([`Heap`],
/// [`Table`]). A file's name interned, with its runs, held some 40 bytes a file: 8 MB
/// for a listing of 200,000 one-line files, 80 for two million.
pub(crate) struct FileLines {
    /// Each file's name, end to end in the order of the files.
    names: Heap,
    files: Table<FileAt>,
    /// Each file's runs, file after file, each file's in order.
    runs: Table<RunAt>,
}

/// A file of a [`FileLines`]: where its name stands in the names, where its runs start
/// in the runs and how many there are, and whether any of its lines is a module's.
#[derive(Clone, Copy)]
struct FileAt {
    name: u64,
    name_len: u32,
    runs: u64,
    count: u64,
    module: bool,
}

/// `u64`s as two `u32` words each.
fn put_u64s(out: &mut Vec<u8>, values: &[u64]) {
    for &value in values {
        crate::spool::put_words(out, &[value as u32, (value >> 32) as u32]);
    }
}

/// The `k`-th `u64` [`put_u64s`] wrote.
fn u64_at(bytes: &[u8], k: usize) -> u64 {
    u64::from(crate::spool::word(bytes, 2 * k))
        | u64::from(crate::spool::word(bytes, 2 * k + 1)) << 32
}

impl crate::spool::Fixed for FileAt {
    const SIZE: usize = 32;

    fn put(&self, out: &mut Vec<u8>) {
        put_u64s(out, &[self.name, self.runs, self.count]);
        crate::spool::put_words(out, &[self.name_len, u32::from(self.module)]);
    }

    fn take(bytes: &[u8]) -> Self {
        FileAt {
            name: u64_at(bytes, 0),
            runs: u64_at(bytes, 1),
            count: u64_at(bytes, 2),
            name_len: crate::spool::word(bytes, 6),
            module: crate::spool::word(bytes, 7) != 0,
        }
    }
}

/// A run of a [`FileLines`]: its bytes and the number of its first line.
#[derive(Clone, Copy)]
struct RunAt {
    start: u64,
    end: u64,
    line: u64,
}

impl crate::spool::Fixed for RunAt {
    const SIZE: usize = 24;

    fn put(&self, out: &mut Vec<u8>) {
        put_u64s(out, &[self.start, self.end, self.line]);
    }

    fn take(bytes: &[u8]) -> Self {
        RunAt {
            start: u64_at(bytes, 0),
            end: u64_at(bytes, 1),
            line: u64_at(bytes, 2),
        }
    }
}

impl RunAt {
    fn run(self) -> Run {
        (self.start as usize..self.end as usize, self.line as usize)
    }
}

/// A run of lines of one file as found, sorted by its file's name, then where it
/// stands: `(name, start, end, first line, module)`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct NamedRun(String, u64, u64, u64, bool);

/// A run sorted by where its file first appears, then where it stands:
/// `(first, start, end, first line)`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct PlacedRun(u64, u64, u64, u64);

/// A file sorted by where it first appears: `(first, name, runs, module)`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct PlacedFile(u64, String, u64, bool);

/// `u64`s, then the rest as text, as a sorted record's bytes.
fn put_record(out: &mut Vec<u8>, values: &[u64], text: &str) {
    for value in values {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(text.as_bytes());
}

/// The `N` `u64`s and the text [`put_record`] wrote.
fn take_record<const N: usize>(bytes: &[u8]) -> Option<([u64; N], String)> {
    let (numbers, text) = bytes.split_at_checked(8 * N)?;
    let mut values = [0; N];
    for (value, word) in values.iter_mut().zip(numbers.chunks_exact(8)) {
        *value = u64::from_le_bytes(word.try_into().ok()?);
    }
    Some((values, String::from_utf8(text.to_vec()).ok()?))
}

impl Sortable for NamedRun {
    fn put(&self, out: &mut Vec<u8>) {
        put_record(out, &[self.1, self.2, self.3, u64::from(self.4)], &self.0);
    }
    fn take(bytes: &[u8]) -> Option<Self> {
        let ([start, end, line, module], name) = take_record(bytes)?;
        Some(NamedRun(name, start, end, line, module != 0))
    }
    fn held_size(&self) -> usize {
        self.0.len()
    }
}

impl Sortable for PlacedRun {
    fn put(&self, out: &mut Vec<u8>) {
        put_record(out, &[self.0, self.1, self.2, self.3], "");
    }
    fn take(bytes: &[u8]) -> Option<Self> {
        let ([first, start, end, line], _) = take_record(bytes)?;
        Some(PlacedRun(first, start, end, line))
    }
    fn held_size(&self) -> usize {
        0
    }
}

impl Sortable for PlacedFile {
    fn put(&self, out: &mut Vec<u8>) {
        put_record(out, &[self.0, self.2, u64::from(self.3)], &self.1);
    }
    fn take(bytes: &[u8]) -> Option<Self> {
        let ([first, runs, module], name) = take_record(bytes)?;
        Some(PlacedFile(first, name, runs, module != 0))
    }
    fn held_size(&self) -> usize {
        self.1.len()
    }
}

/// How many of a listing's files, and of their runs, its tables hold in memory
/// ([`FileLines`]): the rest are in a temporary file.
const FILES_HELD: usize = 4096;

/// The runs of a listing file's lines as they are found ([`FileLines`]).
#[derive(Default)]
struct Found {
    runs: Sorter<NamedRun>,
    /// The run of the last lines found, while they are of one file.
    current: Option<NamedRun>,
}

impl Found {
    /// Adds the entry of a line of `line`'s file at bytes `at`.
    fn add(&mut self, line: &Listing, entry: &Entry, at: std::ops::Range<usize>) {
        let module = line.kind == Kind::Module;
        // A run goes on while the lines are of one file.
        if let Some(run) = self.current.as_mut().filter(|run| run.0 == line.file) {
            run.2 = at.end as u64;
            run.4 |= module;
            return;
        }
        let first = entry.line.unwrap_or(1) as u64;
        let run = NamedRun(
            line.file.clone(),
            at.start as u64,
            at.end as u64,
            first,
            module,
        );
        if let Some(done) = self.current.replace(run) {
            self.runs.push(done);
        }
    }

    /// The files found (named `name`): the runs of each file gathered, the files in the
    /// order they first appear.
    fn finish(mut self, name: &str) -> Result<FileLines, ReadError> {
        let lost = |e: std::io::Error| {
            let message = format!("keeping where its files' lines stand in a temporary file: {e}");
            error(name, "io_error", message)
        };
        if let Some(done) = self.current.take() {
            self.runs.push(done);
        }
        // By name: each file's runs together, the first where it first appears.
        let mut by_name = self.runs.sorted().map_err(lost)?;
        let (mut placed, mut files) = (Sorter::default(), Sorter::default());
        let mut names_len: u64 = 0;
        let mut file: Option<PlacedFile> = None;
        while let Some(NamedRun(file_name, start, end, line, module)) =
            by_name.next_record().map_err(lost)?
        {
            match file.as_mut().filter(|f| f.1 == file_name) {
                Some(f) => {
                    f.2 += 1;
                    f.3 |= module;
                }
                None => {
                    names_len += file_name.len() as u64;
                    let new = PlacedFile(start, file_name, 1, module);
                    if let Some(done) = file.replace(new) {
                        files.push(done);
                    }
                }
            }
            let first = file.as_ref().map_or(start, |f| f.0);
            placed.push(PlacedRun(first, start, end, line));
        }
        if let Some(done) = file {
            files.push(done);
        }
        drop(by_name);
        if names_len > u64::from(u32::MAX) {
            return Err(error(
                name,
                "too_large",
                "the files it names take more than 4 GiB of names",
            ));
        }
        // The files in the order they first appear, and their runs in the same order.
        let mut found = FileLines {
            names: Heap::default(),
            files: Table::new(FILES_HELD.min(Table::<FileAt>::HELD)),
            runs: Table::new(FILES_HELD.min(Table::<RunAt>::HELD)),
        };
        let mut files = files.sorted().map_err(lost)?;
        let mut at = 0;
        while let Some(PlacedFile(_, file_name, count, module)) =
            files.next_record().map_err(lost)?
        {
            let name_at = found.names.push(file_name.as_bytes());
            found.files.push(FileAt {
                name: name_at,
                // Fewer than 4 GiB of names in all.
                name_len: file_name.len() as u32,
                runs: at,
                count,
                module,
            });
            at += count;
        }
        let mut placed = placed.sorted().map_err(lost)?;
        while let Some(PlacedRun(_, start, end, line)) = placed.next_record().map_err(lost)? {
            found.runs.push(RunAt { start, end, line });
        }
        if let Some(e) = found.lost() {
            return Err(lost(std::io::Error::other(e.to_string())));
        }
        Ok(found)
    }
}

impl FileLines {
    /// The files of the listing file `bytes` (named `name`), every line checked.
    fn of(name: &str, bytes: &[u8]) -> Result<Self, ReadError> {
        let mut found = Found::default();
        listing_lines_from(name, bytes, (0, 1), &mut |line, entry, at| {
            found.add(line, &entry, at);
        })?;
        found.finish(name)
    }

    /// [`FileLines::of`] of the listing file `reader` gives (`len` bytes), read a line
    /// at a time, not held: the same files, or the same error.
    fn read(name: &str, reader: impl BufRead, len: u64) -> Result<Self, ReadError> {
        let mut found = Found::default();
        let mut lines = ListingLines::new(name);
        let mut failed = None;
        let io_error = |e: std::io::Error| error(name, "io_error", e.to_string());
        // The whole read says a listing that is not UTF-8 anywhere is not, before any
        // line's error: the lines after a bad one are still read.
        let end = each_line(
            name,
            reader,
            (0, 1),
            io_error,
            |text: &str, number, span| {
                if failed.is_none() {
                    let mut add = |listing: &Listing, entry: Entry, span| {
                        found.add(listing, &entry, span);
                    };
                    failed = lines.line(text, number, span, &mut add).err();
                }
                Ok(())
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        lines.finish()?;
        if end as u64 != len {
            return Err(changed(name));
        }
        found.finish(name)
    }

    /// How many files it names.
    pub(crate) fn len(&self) -> usize {
        self.files.len()
    }

    /// The name of file `index` (empty when it cannot be read back).
    pub(crate) fn file(&self, index: usize) -> String {
        let Some(file) = self.files.get(index) else {
            return String::new();
        };
        let bytes = self.names.get(file.name, file.name_len as usize);
        bytes
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// File `index`'s kind: a module when any of its lines has a module's location.
    pub(crate) fn kind(&self, index: usize) -> Kind {
        match self.files.get(index) {
            Some(file) if file.module => Kind::Module,
            _ => Kind::Messages,
        }
    }

    /// The first failure to keep its tables in their temporary files: files or runs
    /// were lost.
    fn lost(&self) -> Option<&str> {
        self.files.lost().or(self.runs.lost())
    }

    /// Hands each file's entries (read by `entries`: file `index`'s to the sink it is
    /// given) to `sink` in turn, as the files first appear, each with a listing (no
    /// entries) of its file and kind.
    fn hand_on(
        &self,
        sink: &mut dyn FnMut(&Listing, Item),
        entries: impl Fn(usize, &mut dyn FnMut(Entry)) -> Result<(), ReadError>,
    ) -> Result<(), ReadError> {
        for index in 0..self.len() {
            let listing = Listing::new(&self.file(index), self.kind(index), None);
            entries(index, &mut |entry| sink(&listing, Item::Entry(entry)))?;
        }
        Ok(())
    }

    /// Hands file `index`'s entries to `sink`, read from `bytes`, the listing file
    /// (named `name`) they were found in.
    fn entries_in(
        &self,
        (name, bytes): (&str, &[u8]),
        index: usize,
        sink: &mut dyn FnMut(Entry),
    ) -> Result<(), ReadError> {
        for run in self.runs(index) {
            run_entries((name, bytes, 0), &run, sink)?;
        }
        self.not_lost(name)
    }

    /// An error when its tables could not be read back (a file's runs were cut short).
    fn not_lost(&self, name: &str) -> Result<(), ReadError> {
        match self.lost() {
            Some(e) => Err(error(
                name,
                "io_error",
                format!("reading where its files' lines stand again: {e}"),
            )),
            None => Ok(()),
        }
    }

    /// File `index`'s runs of lines, in order.
    fn runs(&self, index: usize) -> impl Iterator<Item = Run> + '_ {
        let (start, count) = self
            .files
            .get(index)
            .map_or((0, 0), |file| (file.runs, file.count));
        // Looked up one by one: most files have a run or two, and a walk from the
        // first copies out a block of runs.
        let runs = start..start.saturating_add(count);
        runs.map_while(|at| self.runs.get(usize::try_from(at).ok()?).map(RunAt::run))
    }
}

/// Hands the entries of run `run` of a listing file's `bytes` (named `name`; they
/// stand from byte `at` of the file on) to `sink`.
fn run_entries(
    (name, bytes, at): (&str, &[u8], usize),
    (range, first): &Run,
    sink: &mut dyn FnMut(Entry),
) -> Result<(), ReadError> {
    let part = range.start.checked_sub(at).and_then(|from| {
        let to = range.end.checked_sub(at)?;
        bytes.get(from..to)
    });
    let Some(part) = part else {
        return Ok(());
    };
    let text = std::str::from_utf8(part).map_err(|_| not_utf8(name))?;
    let mut lines = ListingLines::again(name);
    let mut start = range.start;
    for (line, number) in text.split_inclusive('\n').zip(*first..) {
        let at = start..start + line.len();
        start = at.end;
        lines.line(line, number, at, &mut |_, entry, _| sink(entry))?;
    }
    Ok(())
}

/// A listing file read back, held as where each file's lines stand ([`FileLines`]) and
/// its text, or the file to read them again from, so that each file's entries can be
/// read when they are needed: `diff` of listings naming many files held a compact
/// listing a file (some 1 KB each, with its tables), where this holds a bounded part
/// of its files' table (the rest in temporary files); and two listings of a module of
/// a million instructions (35 MB each) held both texts while their modules were
/// compared.
pub(crate) struct Back {
    /// The listing file's name as given.
    name: String,
    text: Text,
    /// Its files.
    pub(crate) files: FileLines,
}

/// The size from which a listing file read back is read a line at a time to find its
/// files' lines, not held, and each file's lines are read again from the file when
/// they are handed on ([`Back`], [`FileLines::read`], [`Windows`]): a smaller one is
/// held, a larger one costs its size no longer (`shapes` of a listing of 167 MB took
/// 171 MB, and takes 8). It was 16 MiB until the lines were read again a window at a
/// time: a listing naming 200,000 files of a line (8.7 MB) was read again a file at a
/// time twice as slowly as held, and is now compared with a changed copy in 87 MB and
/// 0.58 s, where held it took 105 MB and 0.43 s. A listing of JSON lines of this size
/// or more, and a listing from a pipe that goes on past its first MiB, are read so from
/// a copy of their text in a temporary file. The crate's own tests and fuzzing read
/// every listing file so.
#[cfg(not(any(test, feature = "fuzz-small-tables")))]
const READ_AGAIN: usize = 1 << 20;
#[cfg(any(test, feature = "fuzz-small-tables"))]
const READ_AGAIN: usize = 1;

/// Where a listing file read back's lines are read from.
enum Text {
    /// Its text: a smaller file's, what a shorter pipe gave, or the text a shorter
    /// listing of JSON lines reads as.
    Held(Vec<u8>),
    /// The file it was read from (a handle of the one it was read through; its lines
    /// read from where they stand), or the temporary file its text was copied to (from
    /// a pipe, or converted from JSON lines), with the size and time of change it had
    /// when opened: a file that changed is an error, never other lines read as these.
    File {
        file: std::sync::Mutex<(std::fs::File, Windows)>,
        len: u64,
        modified: Option<std::time::SystemTime>,
    },
}

/// Bytes of a listing file read back, read again from it: a read, from `start` on.
/// Files' runs of lines that follow one another are read [`Window::SIZE`] bytes at a
/// time, with one look at the file's size and time of change each, not a read (and a
/// look) for each run; a run anywhere else is read alone.
#[derive(Default)]
struct Window {
    start: usize,
    bytes: Vec<u8>,
    /// When it was last used ([`Windows::clock`]).
    used: u64,
}

impl Window {
    /// Bytes read at a time where runs follow one another; a run longer than this is
    /// read a line at a time, not held.
    #[cfg(not(any(test, feature = "fuzz-small-tables")))]
    const SIZE: usize = 256 << 10;
    #[cfg(any(test, feature = "fuzz-small-tables"))]
    const SIZE: usize = 64;

    /// The bytes of `range`, if they are the window's.
    fn get(&self, range: &std::ops::Range<usize>) -> Option<&[u8]> {
        let from = range.start.checked_sub(self.start)?;
        self.bytes.get(from..from + (range.end - range.start))
    }
}

/// A few [`Window`]s, so that `diff`, comparing pairs on several threads (each going
/// through its own part of the files in order), finds each thread's next run in the
/// window its last one came from.
#[derive(Default)]
struct Windows {
    windows: [Window; 4],
    clock: u64,
}

impl Windows {
    /// The window that holds `range`; else the one `range` follows on from, or the
    /// one used least lately, and whether `range` follows on from it.
    fn for_range(&mut self, range: &std::ops::Range<usize>) -> (&mut Window, bool) {
        self.clock += 1;
        let follows = |w: &Window| range.start == w.start + w.bytes.len() && !w.bytes.is_empty();
        let at = match self.windows.iter().position(|w| w.get(range).is_some()) {
            Some(at) => at,
            None => match self.windows.iter().position(follows) {
                Some(at) => at,
                None => (0..self.windows.len())
                    .min_by_key(|&k| self.windows[k].used)
                    .unwrap_or(0),
            },
        };
        let window = &mut self.windows[at];
        window.used = self.clock;
        let follows = follows(window);
        (window, follows)
    }
}

impl Back {
    /// `bytes`, read whole from `name`, held as a listing file read back when
    /// [`read_bytes_with`] reads them as one; given back otherwise (an error only when
    /// they are to be read as a listing and are not one).
    fn of(
        name: &str,
        bytes: Vec<u8>,
        options: &ReadOptions,
    ) -> Result<Result<Back, Vec<u8>>, ReadError> {
        let held = |bytes: Vec<u8>, files| Back {
            name: name.to_string(),
            text: Text::Held(bytes),
            files,
        };
        if bytes.is_empty() {
            return Ok(Err(bytes));
        }
        // As `read_bytes_with` tells them: JSON lines first, then a listing given, then
        // whatever no other form is.
        if matches!(options.source, Source::Auto | Source::Listing) && is_json_listing(&bytes) {
            let text = json_listing_as_text(name, &bytes)?.into_bytes();
            drop(bytes);
            let files = FileLines::of(name, &text)?;
            return Ok(Ok(held(text, files)));
        }
        match options.source {
            Source::Form(_) => Ok(Err(bytes)),
            Source::Listing => {
                let files = FileLines::of(name, &bytes)?;
                Ok(Ok(held(bytes, files)))
            }
            Source::Auto => {
                if check::detect(&bytes).is_ok() {
                    return Ok(Err(bytes));
                }
                match FileLines::of(name, &bytes) {
                    Ok(files) => Ok(Ok(held(bytes, files))),
                    // A listing naming more than it can hold is one all the same.
                    Err(e) if e.code == "too_large" => Err(e),
                    // Read again for the error the whole read gives.
                    Err(_) => Ok(Err(bytes)),
                }
            }
        }
    }

    /// Hands file `index`'s entries to `sink`, in their order.
    ///
    /// # Errors
    /// A line does not read back (it did when the listing was first read).
    pub(crate) fn entries(
        &self,
        index: usize,
        sink: &mut dyn FnMut(Entry),
    ) -> Result<(), ReadError> {
        let (file, len, modified) = match &self.text {
            Text::Held(bytes) => return self.files.entries_in((&self.name, bytes), index, sink),
            Text::File {
                file,
                len,
                modified,
            } => (file, *len, *modified),
        };
        // A lock poisoned by a panic elsewhere is the file all the same.
        let mut guard = file.lock().unwrap_or_else(|e| e.into_inner());
        let (file, windows) = &mut *guard;
        let name = self.name.as_str();
        // Before any byte is read from it.
        let unchanged = |file: &std::fs::File| {
            let meta = file.metadata().map_err(|e| reading_again(name, e))?;
            match meta.len() == len && meta.modified().ok() == modified {
                true => Ok(()),
                false => Err(changed(name)),
            }
        };
        for run in self.files.runs(index) {
            let (range, _) = &run;
            if range.end - range.start > Window::SIZE {
                unchanged(file)?;
                self.run_entries_from(file, &run, sink)?;
                continue;
            }
            let (window, follows) = windows.for_range(range);
            if window.get(range).is_none() {
                unchanged(file)?;
                // On from the window's end: as much as a window holds; else the run.
                let end = match follows {
                    true => (range.start + Window::SIZE).min(len as usize),
                    false => range.end,
                };
                self.read_window(file, window, range.start..end.max(range.end))?;
            }
            let bytes = window.get(range).ok_or_else(|| changed(name))?;
            run_entries((name, bytes, range.start), &run, sink)?;
        }
        self.files.not_lost(name)
    }

    /// Reads `range` of the file into `window`.
    fn read_window(
        &self,
        file: &mut std::fs::File,
        window: &mut Window,
        range: std::ops::Range<usize>,
    ) -> Result<(), ReadError> {
        use std::io::{Read, Seek};
        let name = self.name.as_str();
        window.start = range.start;
        window.bytes.clear();
        window.bytes.resize(range.end - range.start, 0);
        let read = file
            .seek(std::io::SeekFrom::Start(range.start as u64))
            .and_then(|_| file.read_exact(&mut window.bytes));
        if let Err(e) = read {
            window.bytes.clear();
            return Err(match e.kind() {
                std::io::ErrorKind::UnexpectedEof => changed(name),
                _ => reading_again(name, e),
            });
        }
        Ok(())
    }

    /// [`run_entries`] of run `run` read again from `file`.
    fn run_entries_from(
        &self,
        file: &mut std::fs::File,
        (range, first): &Run,
        sink: &mut dyn FnMut(Entry),
    ) -> Result<(), ReadError> {
        use std::io::{Read, Seek};
        let name = self.name.as_str();
        let failed = |e| reading_again(name, e);
        file.seek(std::io::SeekFrom::Start(range.start as u64))
            .map_err(failed)?;
        let size = range.end - range.start;
        let part = (&mut *file).take(size as u64);
        let reader = std::io::BufReader::with_capacity(size.min(1 << 16), part);
        let mut lines = ListingLines::again(name);
        let end = each_line(
            name,
            reader,
            (range.start, *first),
            failed,
            |text: &str, number, span| {
                lines.line(text, number, span, &mut |_, entry, _| sink(entry))
            },
        )?;
        if end != range.end {
            return Err(changed(name));
        }
        Ok(())
    }
}

/// Hands each line `reader` gives of the listing file named `name` to `each` (its
/// text, its number and its bytes in the whole), the first at byte `at` and numbered
/// `number`; returns where the last ends. A line that is not UTF-8 is the listing's
/// error, a failed read `io_error`'s.
fn each_line(
    name: &str,
    mut reader: impl BufRead,
    (mut at, mut number): (usize, usize),
    io_error: impl Fn(std::io::Error) -> ReadError,
    mut each: impl FnMut(&str, usize, std::ops::Range<usize>) -> Result<(), ReadError>,
) -> Result<usize, ReadError> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = crate::input::read_line(&mut reader, &mut line).map_err(&io_error)?;
        if read == 0 {
            return Ok(at);
        }
        let text = std::str::from_utf8(&line).map_err(|_| not_utf8(name))?;
        each(text, number, at..at + read)?;
        (at, number) = (at + read, number + 1);
    }
}

/// A listing file that could not be read again.
fn reading_again(name: &str, e: std::io::Error) -> ReadError {
    error(name, "io_error", format!("reading it again: {e}"))
}

/// A listing file that changed between two reads.
fn changed(name: &str) -> ReadError {
    error(name, "io_error", "it changed since it was first read")
}

/// [`parse_listing`] handing each file's entries to `sink` without gathering them
/// (each entry of a listing file read back took some 400 bytes): a first pass finds
/// each file's lines ([`FileLines`]), a second hands each file's entries on, the files
/// in the order they first appear.
fn stream_listing(
    name: &str,
    bytes: &[u8],
    sink: &mut dyn FnMut(&Listing, Item),
) -> Result<(), ReadError> {
    let files = FileLines::of(name, bytes)?;
    files.hand_on(sink, |index, each| {
        files.entries_in((name, bytes), index, each)
    })
}

/// Reads a listing written by `shapes` back a line at a time, as [`parse_listing`]
/// does, handing each entry to `sink` with a listing (no entries) of its file and the
/// kind its line tells; the entries handed on are to be dropped on an error.
fn listing_lines(
    name: &str,
    bytes: &[u8],
    sink: &mut dyn FnMut(&Listing, Entry),
) -> Result<(), ReadError> {
    listing_lines_from(name, bytes, (0, 1), &mut |listing, entry, _| {
        sink(listing, entry)
    })
}

/// [`listing_lines`] of a part of a listing that starts at byte `offset` and line
/// `first` of the whole, handing on each entry with its line's byte range in the whole.
fn listing_lines_from(
    name: &str,
    bytes: &[u8],
    (offset, first): (usize, usize),
    sink: &mut dyn FnMut(&Listing, Entry, std::ops::Range<usize>),
) -> Result<(), ReadError> {
    let text = std::str::from_utf8(bytes).map_err(|_| not_utf8(name))?;
    let mut lines = ListingLines::new(name);
    let mut start = offset;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let at = start..start + line.len();
        start = at.end;
        lines.line(line, index + first, at, sink)?;
    }
    lines.finish()
}

/// A listing that is not UTF-8.
fn not_utf8(name: &str) -> ReadError {
    error(
        name,
        "wrong_form",
        "a listing is text, and this is not UTF-8",
    )
}

/// The lines of a listing written by `shapes`, read one at a time.
struct ListingLines<'n> {
    /// The listing file's name as given.
    name: &'n str,
    /// The listing of the last entry's file and kind.
    current: Option<Listing>,
    /// Whether each shape text is checked to read back (not when the lines are read
    /// again, checked by the first read: parsing each twice took half as long again).
    check: bool,
}

impl<'n> ListingLines<'n> {
    /// Lines read for the first time.
    fn new(name: &'n str) -> Self {
        ListingLines {
            name,
            current: None,
            check: true,
        }
    }

    /// Lines read again, the same bytes as a first read checked.
    fn again(name: &'n str) -> Self {
        ListingLines {
            check: false,
            ..ListingLines::new(name)
        }
    }

    /// Reads line `number` (`line`, at bytes `at` of the whole): its entry handed to
    /// `sink` with a listing (no entries) of its file and the kind it tells, nothing for
    /// a blank or comment line.
    fn line(
        &mut self,
        line: &str,
        number: usize,
        at: std::ops::Range<usize>,
        sink: &mut dyn FnMut(&Listing, Entry, std::ops::Range<usize>),
    ) -> Result<(), ReadError> {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") || trimmed.starts_with('#') {
            return Ok(());
        }
        let bad = |why: &str| {
            error(
                self.name,
                "decode_error",
                format!(
                    "line {number}: not a listing line ({why}): {}",
                    crate::error::Shown::plain(trimmed)
                ),
            )
        };
        let (file, location, shape_text) = match quoted_name(trimmed) {
            Some((file, rest)) => match rest.rsplit_once(": ") {
                Some((location, shape)) => (file.into(), Some(location), shape),
                None => (file.into(), None, rest),
            },
            None => {
                let (head, shape) = trimmed.rsplit_once(": ").ok_or_else(|| bad("no ': '"))?;
                match head.rsplit_once(": ") {
                    Some((file, location)) => (Cow::Borrowed(file), Some(location), shape),
                    None => (Cow::Borrowed(head), None, shape),
                }
            }
        };
        // Checked here, read again when asked for (`Entry::shape`).
        if self.check {
            check_reads_back(shape_text)
                .map_err(|e| bad(&format!("the shape does not parse: {}", e.message())))?;
        }
        let file = file.as_ref();
        let (kind, mut entry) = match location {
            None => (Kind::Messages, bare_entry(Role::Result)),
            Some(location) => parse_location(location).ok_or_else(|| bad("unknown location"))?,
        };
        entry.text = shape_text.to_string();
        entry.line = Some(number);
        let listing = match &mut self.current {
            Some(listing) if listing.file == file && listing.kind == kind => listing,
            _ => self.current.insert(Listing::new(file, kind, None)),
        };
        sink(listing, entry, at);
        Ok(())
    }

    /// An error if no line was an entry.
    fn finish(self) -> Result<(), ReadError> {
        match self.current {
            None => Err(error(
                self.name,
                "no_shapes",
                "no listing line in the input",
            )),
            Some(_) => Ok(()),
        }
    }
}

/// The file part of a listing line: `file` as it is, or as a JSON string when it
/// would not read back as itself (see the module's docs): it holds `: ` or a control
/// character, starts with `"`, `#`, `//` or white space, ends with white space, or is
/// empty.
pub fn listed_name(file: &str) -> Cow<'_, str> {
    let quoted = file.is_empty()
        || file.starts_with(['"', '#'])
        || file.starts_with("//")
        || file.starts_with(char::is_whitespace)
        || file.ends_with(char::is_whitespace)
        || file.contains(": ")
        || file.chars().any(char::is_control);
    match quoted {
        true => serde_json::Value::from(file).to_string().into(),
        false => file.into(),
    }
}

/// A listing line that starts with a file name written as a JSON string
/// ([`listed_name`]) and `: `: the name, and what follows. `None` for any other line
/// (read as written before names were quoted: up to its last `: `s).
fn quoted_name(line: &str) -> Option<(String, &str)> {
    let (name, rest) = json_string_first(line)?;
    Some((name, rest.strip_prefix(": ")?))
}

/// The JSON string `text` starts with, and what follows it.
fn json_string_first(text: &str) -> Option<(String, &str)> {
    if !text.starts_with('"') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<String>();
    let name = values.next()?.ok()?;
    Some((name, &text[values.byte_offset()..]))
}

/// A computation's, instruction's or parameter's name as a listing line's location
/// writes it: as it is, or as a JSON string whose `:`s are written `\u003a` when the
/// location would not read back with it as it is (XLA's names never need this; a
/// module proto's names are any text). That is a name that is empty, starts with
/// `"`, or holds white space, a control character or `:`; and a computation's name
/// that holds `/` or is `entry_computation_layout` (`computation`).
pub fn listed_word(name: &str, computation: bool) -> Cow<'_, str> {
    let quoted = name.is_empty()
        || name.starts_with('"')
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ':')
        || (computation && (name.contains('/') || name == ENTRY_LAYOUT));
    match quoted {
        true => serde_json::Value::from(name)
            .to_string()
            .replace(':', "\\u003a")
            .into(),
        false => name.into(),
    }
}

/// A name [`listed_word`] wrote at the start of `text` (up to `end`, when it is not
/// quoted), and what follows it.
fn listed_word_first(text: &str, end: char) -> (String, &str) {
    json_string_first(text).unwrap_or_else(|| match text.find(end) {
        Some(at) => (text[..at].to_string(), &text[at..]),
        None => (text.to_string(), ""),
    })
}

fn bare_entry(role: Role) -> Entry {
    Entry::bare(role, String::new(), None)
}

fn parse_location(location: &str) -> Option<(Kind, Entry)> {
    let number = |s: &str| s.parse::<usize>().ok();
    if let Some(rest) = location.strip_prefix(&format!("{ENTRY_LAYOUT}/")) {
        let role = match rest {
            "result" => Role::EntryResult,
            _ => Role::EntryParameter {
                index: number(rest.strip_prefix("parameter ")?)?,
            },
        };
        return Some((Kind::Module, bare_entry(role)));
    }
    if location == "result" {
        return Some((Kind::Messages, bare_entry(Role::EntryResult)));
    }
    if let Some(index) = location.strip_prefix("parameter ") {
        let role = Role::EntryParameter {
            index: number(index)?,
        };
        return Some((Kind::Messages, bare_entry(role)));
    }
    let (entry, location) = match location.strip_prefix("ENTRY ") {
        Some(rest) => (true, rest),
        None => (false, location),
    };
    let (computation, rest) = listed_word_first(location, '/');
    let rest = rest.strip_prefix('/')?;
    let mut result = bare_entry(Role::Result);
    result.computation = Some(computation);
    result.entry = entry;
    if rest == "signature result" {
        result.role = Role::ComputationResult;
        return Some((Kind::Module, result));
    }
    if let Some(parameter) = rest.strip_prefix("signature parameter ") {
        let (index, name) = parameter.split_once(' ')?;
        let name = name.strip_prefix('(')?.strip_suffix(')')?;
        let name = match json_string_first(name) {
            Some((name, "")) => name,
            Some(_) => return None,
            None => name.to_string(),
        };
        result.role = Role::Parameter {
            index: number(index)?,
            name,
        };
        return Some((Kind::Module, result));
    }
    let (instruction, rest) = listed_word_first(rest, ' ');
    let words: Vec<&str> = match rest {
        "" => Vec::new(),
        rest => rest.strip_prefix(' ')?.split(' ').collect(),
    };
    result.instruction = Some(instruction);
    result.role = match words.as_slice() {
        [] => Role::Result,
        ["operand", index] => Role::Operand {
            index: number(index)?,
        },
        [name] => Role::Attribute {
            name: (*name).to_string(),
            index: 0,
        },
        [name, index] => Role::Attribute {
            name: (*name).to_string(),
            index: number(index)?,
        },
        _ => return None,
    };
    Some((Kind::Module, result))
}

#[cfg(test)]
mod tests {

    /// Every location reads back as the names and role it was written of, whatever
    /// the names: a module proto's are any text (`: `, `/`, white space, line breaks,
    /// quotes, the words of a location). XLA's names are written as they are.
    #[test]
    fn locations_read_back_whatever_the_names() {
        let names = [
            "main.1",
            "dot_general.1",
            "%p:",
            "",
            "a b",
            "a: b",
            "a/b",
            "a\nb",
            "\"q",
            "q\"",
            "signature",
            "signature result",
            "operand 1",
            "ENTRY",
            "ENTRY x",
            ENTRY_LAYOUT,
            "(a)",
            "a)",
            "?",
            "a:",
            "\u{85}",
            "x\\u003a",
        ];
        let roles = |name: &str| {
            vec![
                Role::Parameter {
                    index: 2,
                    name: name.to_string(),
                },
                Role::ComputationResult,
                Role::Result,
                Role::Operand { index: 3 },
                Role::Attribute {
                    name: "outfeed_shape".into(),
                    index: 0,
                },
                Role::Attribute {
                    name: "operand_layout_constraints".into(),
                    index: 0,
                },
            ]
        };
        for computation in names {
            for instruction in names {
                for role in roles(instruction) {
                    for entry in [false, true] {
                        let mut written = Entry::bare(role.clone(), String::new(), None);
                        written.computation = Some(computation.to_string());
                        written.instruction = Some(instruction.to_string());
                        written.entry = entry;
                        let location = written.location(true).unwrap();
                        assert!(!location.contains(": ") && !location.contains('\n'));
                        let (kind, read) = parse_location(&location)
                            .unwrap_or_else(|| panic!("{location:?} does not read back"));
                        assert_eq!(kind, Kind::Module);
                        // A parameter's name is written without XLA's `%` and `:`.
                        let expected = match &role {
                            Role::Parameter { index, name } => Role::Parameter {
                                index: *index,
                                name: clean_name(name).to_string(),
                            },
                            role => role.clone(),
                        };
                        assert_eq!(read.role, expected, "{location}");
                        assert_eq!(read.entry, entry, "{location}");
                        assert_eq!(read.computation.as_deref(), Some(computation), "{location}");
                        if !matches!(role, Role::Parameter { .. } | Role::ComputationResult) {
                            assert_eq!(
                                read.instruction.as_deref(),
                                Some(instruction),
                                "{location}"
                            );
                        }
                    }
                }
            }
        }
        // XLA's names stay as they are.
        let mut plain = Entry::bare(Role::Operand { index: 0 }, String::new(), None);
        plain.computation = Some("fused_computation.3".into());
        plain.instruction = Some("dot_general.1".into());
        assert_eq!(
            plain.location(true).unwrap(),
            "fused_computation.3/dot_general.1 operand 0"
        );
        // A file name likewise, read back from a whole line.
        for file in names.iter().chain(&["#c", "//c", " c", "c ", "dir/a.txt"]) {
            let line = format!("{}: f32[2]{{0}}\n", listed_name(file));
            let listings = parse_listing("l", line.as_bytes()).unwrap();
            assert_eq!(listings[0].file, *file, "{line}");
        }
    }
    use super::*;

    /// A line's entry made without reading its text back is the entry read back: the
    /// same text, and the shape kept beside it exactly when the text does not read back
    /// as it. Every shape text XLA's parser read (`fixtures/hlo_shapes.jsonl`, many
    /// without a layout), each as written and as printed in either style (so that the
    /// text is the line), and a few whose text in a style does not read back.
    #[test]
    fn a_line_entry_is_the_entry_read_back() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
        let fixtures = std::fs::read_to_string(path).unwrap();
        let mut lines: Vec<String> = fixtures
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter_map(|case| case["text"].as_str().map(str::to_string))
            .collect();
        lines.extend(
            [
                "f32[4]{0:PD(8)PV(zero)}",
                "f32[]",
                "f32[3]",
                "b(f32[2]{0})",
                "token[]",
                "(f32[2]{0}, s32[])",
                "f32[2,2]{1,0:T(2,2)E(32)S(1)}",
                "pred[<=4,?]{1,0}",
            ]
            .map(String::from),
        );
        let (mut same, mut kept) = (0, 0);
        for line in &lines {
            let Ok(shape) = crate::text::parse_shape(line) else {
                continue;
            };
            for style in [HloStyle::Xla, HloStyle::Exact] {
                let printed = style.print_shape(&shape).ok();
                for written in std::iter::once(line.as_str()).chain(printed.as_deref()) {
                    let Ok(shape) = crate::text::parse_shape(written) else {
                        continue;
                    };
                    let made = line_entry(&shape, written, style);
                    let read = Entry::new(Role::Result, &shape, print(&shape, style, None));
                    assert_eq!(made.text, read.text, "{written}");
                    assert_eq!(made.held, read.held, "{written} {style:?}");
                    same += usize::from(made.held.is_none() && made.text == written);
                    kept += usize::from(read.held.is_some());
                }
            }
        }
        // Most texts are the lines themselves; XLA's style leaves out the retired
        // padding, whose shape is then kept.
        assert!(same > 1000 && kept > 0, "{same} {kept}");
    }

    /// A listing of up to 30 lines of three files, interleaved, each line one of `lines`
    /// (location and shape; no location for a message's), a blank line or a comment,
    /// all ending in `\n` or all in `\r\n`.
    fn random_listing(next: &mut impl FnMut(usize) -> usize, lines: &[(&str, &str)]) -> String {
        let mut text = String::new();
        let end = ["\n", "\r\n"][next(2)];
        for _ in 0..1 + next(30) {
            let file = ["a.hlo", "b.hlo", "c.txt"][next(3)];
            match next(12) {
                0 => text.push_str(end),
                1 => text.push_str(&format!("# a comment{end}")),
                _ => {
                    let (location, shape) = lines[next(lines.len())];
                    match location {
                        "" => text.push_str(&format!("{file}: {shape}{end}")),
                        _ => text.push_str(&format!("{file}: {location}: {shape}{end}")),
                    }
                }
            }
        }
        text
    }

    /// A listing read back a file at a time without gathering it hands on the entries
    /// the whole read groups, in the same order, with the same listings: random
    /// listings whose files' lines interleave, of module and message kinds, with blank
    /// and comment lines and both line ends.
    #[test]
    fn listings_streamed_a_file_at_a_time_are_grouped_as_whole() {
        let lines = [
            ("ENTRY main/p0", "f32[8,128]{1,0}"),
            ("entry_computation_layout/result", "(s32[], f32[2]{0})"),
            ("fused/add.1/operand 1", "bf16[2,3]{0,1}"),
            ("", "pred[]"),
            ("", "f32[2,3]{1,0:T(2,2)}"),
        ];
        let mut next = crate::guard::draws(0x9e37_79b9_7f4a_7c15u64);
        let seen = |listing: &Listing, entry: &Entry| {
            format!(
                "{} {:?} {:?} {} {:?}",
                listing.file,
                listing.kind,
                entry.location(listing.kind == Kind::Module),
                entry.text,
                entry.line
            )
        };
        for _ in 0..200 {
            let text = random_listing(&mut next, &lines);
            let whole = parse_listing("listing", text.as_bytes()).map(|listings| {
                let mut all = Vec::new();
                for listing in listings {
                    for entry in &listing.entries {
                        all.push(seen(&listing, entry));
                    }
                }
                all
            });
            let mut streamed = Vec::new();
            let result = stream_listing("listing", text.as_bytes(), &mut |listing, item| {
                if let Item::Entry(entry) = item {
                    streamed.push(seen(listing, &entry));
                }
            });
            match whole {
                Ok(all) => {
                    assert!(result.is_ok(), "{text:?}");
                    assert_eq!(streamed, all, "{text:?}");
                }
                Err(e) => assert_eq!(result.err().map(|e| e.to_string()), Some(e.to_string())),
            }
        }
    }

    /// A listing file read back and held reads each file's entries again from its file
    /// (the crate's tests read every one again), the same entries the whole read
    /// groups: random listings whose files' lines interleave, with blank and comment
    /// lines and both line ends, and as JSON lines (read again from a copy of their
    /// text). A file that changed since is an error.
    #[test]
    fn listings_read_again_from_their_files_are_grouped_as_whole() {
        let lines = [
            ("ENTRY main/p0", "f32[8,128]{1,0}"),
            ("fused/add.1/operand 1", "bf16[2,3]{0,1}"),
            ("", "pred[]"),
        ];
        let seen = |file: &str, kind: Kind, entry: &Entry| {
            let location = entry.location(kind == Kind::Module);
            format!(
                "{file} {kind:?} {location:?} {} {:?}",
                entry.text, entry.line
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("listing.txt");
        let read = |path: &FsPath| {
            let mut back = None;
            let options = ReadOptions::default();
            let single =
                stream_path_holding_back(path, "listing", &options, &mut back, &mut |_, _| {});
            (single.map(|single| single.is_none()), back)
        };
        let mut next = crate::guard::draws(0x2545_f491_4f6c_dd1du64);
        for round in 0..100 {
            let text = random_listing(&mut next, &lines);
            let Ok(listings) = parse_listing("listing", text.as_bytes()) else {
                continue;
            };
            let whole: Vec<String> = listings
                .iter()
                .flat_map(|l| l.entries.iter().map(|e| seen(&l.file, l.kind, e)))
                .collect();
            let form = round % 2;
            if form == 0 {
                std::fs::write(&path, &text).unwrap();
            } else {
                let mut json = String::new();
                for listing in &listings {
                    listing.write_json_lines(&mut json);
                }
                std::fs::write(&path, json).unwrap();
            }
            let (read_back, back) = read(&path);
            assert_eq!(read_back.ok(), Some(true), "{text:?}");
            let back = back.unwrap();
            // Text read again from its file; JSON lines from a copy of the text they
            // read as.
            assert!(matches!(back.text, Text::File { .. }));
            let mut again = Vec::new();
            for index in 0..back.files.len() {
                let (file, kind) = (back.files.file(index), back.files.kind(index));
                back.entries(index, &mut |entry| again.push(seen(&file, kind, &entry)))
                    .unwrap();
            }
            if form == 0 {
                assert_eq!(again, whole, "{text:?}");
            } else {
                // JSON lines number their lines as the text they read as.
                let strip = |s: &String| s.rsplit_once(' ').map(|(a, _)| a.to_string());
                let (a, w): (Vec<_>, Vec<_>) = (
                    again.iter().map(strip).collect(),
                    whole.iter().map(strip).collect(),
                );
                assert_eq!(a, w, "{text:?}");
            }
        }
        // Changed since it was read: longer, or as long with another time of change.
        let text = "a.hlo: f32[2]{0}\nb.hlo: f32[3]{0}\n";
        for change in 0..2 {
            std::fs::write(&path, text).unwrap();
            let (_, back) = read(&path);
            let back = back.unwrap();
            if change == 0 {
                std::fs::write(&path, format!("{text}c.hlo: f32[4]{{0}}\n")).unwrap();
            } else {
                std::fs::write(&path, text.replace("f32[3]", "s32[3]")).unwrap();
                let file = std::fs::File::options().write(true).open(&path).unwrap();
                let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
                file.set_modified(later).unwrap();
            }
            let read_again = back.entries(1, &mut |_| {});
            let e = read_again.expect_err("changed since read");
            assert_eq!(
                (e.code, e.message.as_str()),
                ("io_error", "it changed since it was first read")
            );
        }
    }

    /// Files found a line at a time ([`FileLines::read`], for listing files too large to
    /// hold) are those found in the whole text, runs and all, and an input that is not a
    /// listing gets the whole read's error: random listings, some with a line that is
    /// not a listing's, a shape that does not parse or bytes that are not UTF-8 (after
    /// a bad line too: the whole read tells that first), or no entry at all.
    #[test]
    fn files_found_a_line_at_a_time_are_found_in_the_whole() {
        let lines = [
            ("ENTRY main/p0", "f32[8,128]{1,0}"),
            ("fused/add.1/operand 1", "bf16[2,3]{0,1}"),
            ("", "pred[]"),
        ];
        let mut next = crate::guard::draws(0x6a09_e667_f3bc_c908u64);
        let found = |files: &FileLines| -> Vec<String> {
            (0..files.len())
                .map(|i| {
                    let runs: Vec<Run> = files.runs(i).collect();
                    format!("{} {:?} {runs:?}", files.file(i), files.kind(i))
                })
                .collect()
        };
        for _ in 0..300 {
            let mut text = random_listing(&mut next, &lines).into_bytes();
            let at = next(text.len() + 1);
            let broken: &[u8] = match next(6) {
                0 => b"not a listing line\n",
                1 => b"a.hlo: f32[2]{\n",
                2 => b"\xff\xfe\n",
                _ => b"",
            };
            // Inserted where a line starts (or at the end).
            let start = text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            text.splice(start..start, broken.iter().copied());
            if next(8) == 0 {
                text.extend_from_slice(b"x.hlo: f32[2]{0} \xff\n");
            }
            let whole = FileLines::of("listing", &text);
            let read = FileLines::read("listing", &text[..], text.len() as u64);
            match (whole, read) {
                (Ok(a), Ok(b)) => assert_eq!(found(&a), found(&b), "{text:?}"),
                (Err(a), Err(b)) => assert_eq!((a.code, a.message), (b.code, b.message)),
                (a, b) => panic!("{:?} {:?} {text:?}", a.err(), b.err()),
            }
        }
    }

    /// A line that is no listing line is quoted in the error cut to its first 64
    /// characters and its length (a line of 300 KB was the message).
    #[test]
    fn a_long_line_that_is_no_listing_line_is_cut_in_the_error() {
        let options = super::ReadOptions {
            source: super::Source::Listing,
            ..super::ReadOptions::default()
        };
        for line in [
            "x".repeat(300_000),
            format!("a.txt: f32[{}x]", "1,".repeat(100_000)),
        ] {
            let text = format!("b.txt: f32[2]{{0}}\n{line}\n");
            let error = super::read_bytes("l.lock", text.as_bytes(), &options).unwrap_err();
            assert!(error.message.len() < 400, "{}", error.message.len());
            assert!(
                error.message.starts_with("line 2: not a listing line ("),
                "{}",
                error.message
            );
            let cut = format!("... ({} bytes in all)", line.len());
            assert!(error.message.ends_with(&cut), "{}", error.message);
        }
    }

    /// A small file is read through a buffer of its size and a byte (8 KiB at least),
    /// not one of 1 MiB, which the allocator maps on its own; a file of 1 MiB or more,
    /// or of a size not known, through 1 MiB.
    #[test]
    fn small_files_are_read_through_buffers_of_their_size() {
        use super::buffer_for;
        assert_eq!(buffer_for(10), 8 << 10);
        assert_eq!(buffer_for(9000), 9001);
        assert_eq!(buffer_for((1 << 20) - 1), 1 << 20);
        for large in [0, 1 << 20, 5 << 20, u64::MAX] {
            assert_eq!(buffer_for(large), 1 << 20, "{large}");
        }
    }

    /// A listing naming many files, their lines in runs here and there, is found as a
    /// map of each file's runs in the order the files first appear finds it, and its
    /// tables hold only their first few files in memory (three in the crate's tests;
    /// the rest go to temporary files).
    #[test]
    fn files_of_a_long_listing_are_found_in_order_and_kept_in_files() {
        let mut next = crate::guard::draws(0xbb67_ae85_84ca_a73b);
        let mut text = String::new();
        // Each file's name, and its runs (bytes, first line), in the order they come.
        let mut order: Vec<String> = Vec::new();
        let mut runs: std::collections::HashMap<String, Vec<Run>> = Default::default();
        let (mut last, mut number) = (String::new(), 1);
        for _ in 0..3000 {
            let file = format!("d{}/f{}.hlo", next(3), next(900));
            let start = text.len();
            text.push_str(&format!(
                "{file}: ENTRY main/x: f32[{}]{{0}}\n",
                next(9) + 1
            ));
            if !runs.contains_key(&file) {
                order.push(file.clone());
            }
            let list = runs.entry(file.clone()).or_default();
            match list.last_mut() {
                Some((range, _)) if last == file => range.end = text.len(),
                _ => list.push((start..text.len(), number)),
            }
            (last, number) = (file, number + 1);
        }
        let found = FileLines::read("listing", text.as_bytes(), text.len() as u64).unwrap();
        assert_eq!(found.len(), order.len());
        for (i, file) in order.iter().enumerate() {
            assert_eq!(found.file(i), *file);
            assert_eq!(found.runs(i).collect::<Vec<Run>>(), runs[file], "{file}");
        }
        assert!(found.lost().is_none());
        let held = super::FILES_HELD.min(Table::<FileAt>::HELD);
        assert!(found.files.held() <= held && found.runs.held() <= held);
        // At most what is held before the file and what waits to be written to it.
        assert!(found.names.held() < 10 + 16, "{}", found.names.held());
    }

    /// A tuple's validity and size a shape at a time are the whole tuple's, and so are
    /// its arrays.
    #[test]
    fn long_tuples_are_sized_and_walked_as_the_whole() {
        let deep = format!("{}f32[2]{{0}}{}", "(".repeat(300), ")".repeat(300));
        for text in [
            "(f32[2]{0}, (s32[], ()), ((bf16[4,4]{0,1:T(2,2)})), b(f32[3]{0}))",
            "(f32[2]{0}, f32[<=4]{0}, u4[3]{0:E(4)})",
            "(f32[2]{0}, f32[?]{0})",
            "(f32[2]{0}, f32[2]{0:E(4)})",
            "(s8[4611686018427387904]{0}, s8[4611686018427387904]{0}, s8[4611686018427387904]{0}, s8[4611686018427387904]{0}, s8[4611686018427387904]{0})",
            "((), token[], opaque[])",
            deep.as_str(),
        ] {
            let whole = read_back(text).unwrap();
            let validated = validate_shape_with(&whole, GateOptions::hlo_text())
                .into_parts()
                .0;
            let expected = validated.as_ref().map(allocated_bytes);
            assert_eq!(long_tuple_size(text), expected, "{text}");
            let mut arrays = Vec::new();
            if validated.is_some() {
                for_each_long_tuple_array(text, &mut |path, array, shown| {
                    arrays.push((path.to_vec(), array.clone(), shown));
                });
            }
            let mut expected = Vec::new();
            if let Some(shape) = &validated {
                collect(shape, &mut Vec::new(), &mut expected);
            }
            assert_eq!(arrays.len(), expected.len(), "{text}");
            for ((path, array, _), (want_path, want)) in arrays.iter().zip(&expected) {
                assert_eq!((path, array), (want_path, want), "{text}");
            }
        }
    }

    fn collect(
        shape: &Shape,
        path: &mut Vec<usize>,
        out: &mut Vec<(Vec<usize>, crate::ArrayShape)>,
    ) {
        match shape {
            Shape::Array(a) | Shape::Buffer(a) => out.push((path.clone(), a.clone())),
            Shape::Tuple(elements) => {
                for (i, e) in elements.iter().enumerate() {
                    path.push(i);
                    collect(e, path, out);
                    path.pop();
                }
            }
            Shape::Token | Shape::Opaque => {}
        }
    }

    /// A program shape listed a part at a time (each tuple a shape at a time) gives
    /// the whole listing's entries: their roles, texts, shapes and sizes, whatever
    /// fields of their own its tuples have, with unknown fields, a result given twice
    /// (merged), and in both styles.
    #[test]
    fn program_shapes_are_listed_a_part_at_a_time_as_the_whole() {
        use crate::codec::wire::{put_tag, put_varint, WireType};
        let field = |out: &mut Vec<u8>, number: u32, body: &[u8]| {
            put_tag(out, number, WireType::LengthDelimited);
            put_varint(out, body.len() as u64);
            out.extend_from_slice(body);
        };
        let shape = |text: &str| crate::codec::encode(&crate::text::parse_shape(text).unwrap());
        let unknown = [0xa0u8, 0x06, 0x01]; // field 100, varint 1
        let tuple = |elements: &[Vec<u8>], own: &[u8], tail: &[u8]| {
            let mut out = vec![0x10, 0x0d]; // element type TUPLE
            out.extend_from_slice(own);
            for element in elements {
                field(&mut out, 4, element);
            }
            out.extend_from_slice(tail);
            out
        };
        let mut layout = Vec::new();
        field(&mut layout, 5, &[]);
        let with_unknown = [shape("f32[2]{0}"), unknown.to_vec()].concat();
        let arrays = vec![
            shape("f32[8,128]{1,0:T(8,128)}"),
            with_unknown,
            shape("s32[3]{0}"),
            shape("f32[2]{5}"),
        ];
        let nested = tuple(&arrays, &[], &layout);
        let parts = [
            tuple(&arrays, &[], &[]),
            tuple(&arrays, &[], &unknown),
            tuple(&arrays, &[0x1a, 0x01, 0x02], &[]),
            tuple(&arrays, &[], &layout),
            tuple(&[arrays[0].clone(), nested.clone()], &[], &[]),
            tuple(&[nested.clone(), tuple(&[], &[], &[])], &[], &unknown),
            tuple(&[tuple(&[tuple(&arrays, &[], &[])], &[], &[])], &[], &[]),
            shape("f32[2,3]{0,1}"),
            shape("f32[2]{0:PD(3)}"),
            [shape("token[]"), unknown.to_vec()].concat(),
        ];
        for (i, part) in parts.iter().enumerate() {
            for (j, other) in parts.iter().enumerate() {
                let mut program = Vec::new();
                field(&mut program, 1, part);
                field(&mut program, 2, other);
                field(&mut program, 1, &arrays[0]);
                field(&mut program, 3, b"p");
                if i % 3 == 0 {
                    field(&mut program, 2, &parts[(i + j) % parts.len()]);
                }
                if j % 2 == 0 {
                    program.extend(unknown);
                }
                let kind = MessageKind::ProgramShape;
                for style in [HloStyle::Xla, HloStyle::Exact] {
                    let whole = whole_message_listing("p", Form::Binary, kind, &program, style)
                        .expect("a program shape that decodes is listed");
                    let mut long = Vec::new();
                    let count = program_entries(&program, style, 0, &mut |e| long.push(e))
                        .expect("listed by parts");
                    assert_eq!(count, long.len());
                    assert_eq!(long.len(), whole.entries.len(), "{i} {j}");
                    for (a, b) in long.iter().zip(&whole.entries) {
                        assert_eq!(a.role, b.role, "{i} {j}");
                        assert_eq!(a.text, b.text, "{i} {j}");
                        assert_eq!(a.shape(), b.shape(), "{i} {j} {}", b.text);
                        assert_eq!(a.bytes(), b.bytes(), "{i} {j} {}", b.text);
                    }
                }
            }
        }
    }
}
