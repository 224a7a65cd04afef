//! The fast path for an instruction written plainly on one line, the way XLA prints
//! nearly all of them:
//!
//! ```text
//! [ROOT] name = shape opcode([shape] name, /*index=5*/ name, ...), attr=value, ...
//! ```
//!
//! [`plan_instruction`] reads such a line at byte level, without side effects, and says
//! what the token-by-token path ([`Scanner::instruction`](super::text)) would do with
//! it: which shapes it hands on (each one the scanner's memo already holds, so the
//! parser would stop exactly where the memo's text ends; an instruction's own, its
//! operands' and those of `operand_layout_constraints`), which operand names, and
//! where the operands' `)` and the plain attributes after it end. Anything the token
//! path would read differently or report, or that it reads over more than this line
//! (comments other than one before an operand, line breaks, a shape not yet parsed,
//! a nested instruction, an error of any kind), gives `None`, and the
//! token path reads the line from its start. So both paths give the same callbacks in
//! the same order; the tests of `tests/module_scan.rs` and the equivalence test
//! below hold them to it.

use smallvec::SmallVec;

use super::lexer::{
    balanced_group_end, blanks, json_dict_end, plain_token, plain_value_end, string_end,
    value_ends, Kind,
};
use super::text::{ends_shape, holds_shape, is_literal_opcode, shape_extent, Known, Memo};
use crate::text::types;

/// A shape of an instruction line, found in the memo.
pub(super) struct PlannedShape<'m> {
    /// Its byte range in the line.
    pub start: usize,
    pub end: usize,
    /// Where it stands on an instruction line.
    pub role: Planned,
    /// The parsed shape (and its report).
    pub value: &'m Known,
}

/// Where a planned shape stands on an instruction line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Planned {
    /// The instruction's result (also a computation signature's shapes).
    Result,
    /// Before operand `i`.
    Operand(usize),
    /// Entry `i` of `operand_layout_constraints={...}`.
    LayoutConstraint(usize),
}

/// A plan holds at most this many operands and shapes: a line of more is read by the
/// token path past them, which holds none of them (a plan of millions of operands took
/// some six times the line).
const PLANNED: usize = 1024;

/// What the token path would read on an instruction line, up to its operands' `)` and
/// the plain attributes after it.
pub(super) struct Plan<'m> {
    /// The instruction's name token (with its `%`, if any).
    pub name: (usize, usize),
    /// The opcode's byte range.
    pub opcode: (usize, usize),
    /// The shapes, in the order the token path hands them on.
    pub shapes: SmallVec<[PlannedShape<'m>; 4]>,
    /// The operand name tokens (with their `%`), in order.
    pub operands: SmallVec<[(usize, usize); 4]>,
    /// The computations named by the attributes read ([`call_value_end`]).
    pub calls: SmallVec<[Call; 2]>,
    /// The plain number that is the value of an `index=` read (a get-tuple-element's).
    pub index: Option<(usize, usize)>,
    /// Just after the `)` that closes the operands, or after the last of the plain
    /// attributes that follow it on the line.
    pub end: usize,
}

/// Whether the scanner's `can_be_shape` holds for the token at `start`: a `(`, or a
/// word that is an element type, or `b` before `(`. `word` is the plain token there.
fn can_be_shape(line: &str, start: usize, word: Option<(Kind, usize)>) -> bool {
    let bytes = line.as_bytes();
    match word {
        Some((Kind::Word, end)) => {
            let text = &line[start..end];
            types::type_from_name(text).is_some()
                || (text == "b" && bytes.get(blanks(bytes, end)) == Some(&b'('))
        }
        Some(_) => false,
        None => bytes.get(start) == Some(&b'('),
    }
}

/// The shape at `start` if the memo holds its text: its end and value.
///
/// Most shapes on an instruction line end at the first space after them: when the
/// text up to there is in the memo, [`shape_extent`] ends there too. (A memo key is a
/// text that [`shape_extent`] once read to its end without stopping inside; it reads
/// the same bytes the same way anywhere, and stops at the space after them, when
/// [`ends_shape`] holds there.) Otherwise [`shape_extent`] finds the end.
fn memo_shape<'m>(line: &str, start: usize, memo: &'m Memo<Known>) -> Option<(usize, &'m Known)> {
    let bytes = line.as_bytes();
    let longest = bytes.len().min(start + Memo::<Known>::MAX_TEXT + 1);
    if let Some(len) = memchr::memchr(b' ', &bytes[start..longest]) {
        let end = start + len;
        if let Some(known) = memo.get(&line[start..end]).filter(|_| len > 0) {
            return ends_shape(bytes, end).then_some((end, known));
        }
    }
    let end = shape_extent(line, start)?;
    Some((end, memo.get(&line[start..end])?))
}

impl<'m> Plan<'m> {
    /// An empty plan, to be filled by [`plan_instruction`].
    pub fn new() -> Self {
        Plan {
            name: (0, 0),
            opcode: (0, 0),
            shapes: SmallVec::new(),
            operands: SmallVec::new(),
            calls: SmallVec::new(),
            index: None,
            end: 0,
        }
    }
}

/// Fills `plan` for the instruction whose first token (`ROOT` or its name, as
/// [`plain_token`] reads it) is `first` = (kind, start, end) on `line`, a single line
/// with no comment or string open before it; `None` when anything on the line needs
/// the token path (then `plan` holds nothing of use).
pub(super) fn plan_instruction<'m>(
    line: &str,
    first: (Kind, usize, usize),
    memo: &'m Memo<Known>,
    plan: &mut Plan<'m>,
) -> Option<()> {
    let bytes = line.as_bytes();
    let (mut kind, mut pos, mut end) = first;
    if kind == Kind::Word && &line[pos..end] == "ROOT" {
        pos = blanks(bytes, end);
        (kind, end) = plain_token(bytes, pos)?;
    }
    if !matches!(kind, Kind::Word | Kind::Name) {
        return None;
    }
    plan.name = (pos, end);
    pos = blanks(bytes, end);
    if bytes.get(pos) != Some(&b'=') {
        return None;
    }
    pos = blanks(bytes, pos + 1);

    plan.shapes.clear();
    plan.operands.clear();
    plan.calls.clear();
    plan.index = None;
    let word = plain_token(bytes, pos);
    let opcode_end = if can_be_shape(line, pos, word) {
        let (shape_end, value) = memo_shape(line, pos, memo)?;
        plan.shapes.push(PlannedShape {
            start: pos,
            end: shape_end,
            role: Planned::Result,
            value,
        });
        pos = blanks(bytes, shape_end);
        match plain_token(bytes, pos)? {
            (Kind::Word, end) => end,
            _ => return None,
        }
    } else {
        // The shape left out: the word is the opcode (it must be followed by `(`,
        // which is checked below).
        match word? {
            (Kind::Word, end) => end,
            _ => return None,
        }
    };
    plan.opcode = (pos, opcode_end);
    pos = blanks(bytes, opcode_end);
    if bytes.get(pos) != Some(&b'(') {
        return None;
    }
    if is_literal_opcode(&line[plan.opcode.0..opcode_end]) {
        // A literal: skipped to its closing bracket.
        let operands_end = balanced_group_end(bytes, pos)?;
        plan.end = attributes_end(line, operands_end, memo, plan);
        return Some(());
    }
    pos = blanks(bytes, pos + 1);
    if bytes.get(pos) == Some(&b')') {
        plan.end = attributes_end(line, pos + 1, memo, plan);
        return Some(());
    }
    loop {
        let index = plan.operands.len();
        if index >= PLANNED || plan.shapes.len() >= PLANNED {
            return None;
        }
        // XLA writes `/*index=5*/` before every fifth operand: trivia to the lexer.
        while bytes[pos..].starts_with(b"/*") {
            let close = memchr::memmem::find(&bytes[pos + 2..], b"*/")?;
            pos = blanks(bytes, pos + 2 + close + 2);
        }
        let word = plain_token(bytes, pos);
        let (kind, end) = if can_be_shape(line, pos, word) {
            let (shape_end, value) = memo_shape(line, pos, memo)?;
            plan.shapes.push(PlannedShape {
                start: pos,
                end: shape_end,
                role: Planned::Operand(index),
                value,
            });
            pos = blanks(bytes, shape_end);
            plain_token(bytes, pos)?
        } else {
            word?
        };
        if !matches!(kind, Kind::Word | Kind::Name) {
            return None;
        }
        plan.operands.push((pos, end));
        pos = blanks(bytes, end);
        match bytes.get(pos) {
            Some(b',') => pos = blanks(bytes, pos + 1),
            Some(b')') => {
                plan.end = attributes_end(line, pos + 1, memo, plan);
                return Some(());
            }
            // A nested instruction, or something the token path reports.
            _ => return None,
        }
    }
}

/// Past the attributes from `pos` on that the token path would skip without a finding
/// and without a shape not in the memo: `, name=value` with a plain value (see
/// [`plain_value_end`]) and a name that holds no shape, and
/// `, operand_layout_constraints={shape, ...}` of memoized shapes (added to the plan's
/// shapes), and attributes that name called computations plainly (added to its calls,
/// [`call_value_end`]). Stops before the `,` of any other attribute (the token path
/// reads it), and at anything else.
fn attributes_end<'m>(
    line: &str,
    mut pos: usize,
    memo: &'m Memo<Known>,
    plan: &mut Plan<'m>,
) -> usize {
    let bytes = line.as_bytes();
    let shapes = &mut plan.shapes;
    loop {
        let comma = blanks(bytes, pos);
        if bytes.get(comma) != Some(&b',') || shapes.len() >= PLANNED {
            return pos;
        }
        let start = blanks(bytes, comma + 1);
        let Some((Kind::Attr, end)) = plain_token(bytes, start) else {
            return pos;
        };
        let name = &line[start..end];
        let value_end = if name == "operand_layout_constraints" {
            let before = shapes.len();
            let end = layout_constraints_end(line, blanks(bytes, end + 1), memo, shapes);
            if end.is_none() {
                shapes.truncate(before);
            }
            end
        } else if holds_shape(name) {
            None
        } else if let Some(slot) = call_attribute(name) {
            call_value_end(
                bytes,
                blanks(bytes, end + 1),
                slot,
                &mut plan.calls,
                PLANNED,
            )
        } else if name == "backend_config" || name == "frontend_attributes" {
            json_valued_end(bytes, blanks(bytes, end + 1), name == "frontend_attributes")
        } else {
            let value = blanks(bytes, end + 1);
            let end = plain_value_end(bytes, value);
            if name == "index" {
                let digits = bytes.get(value..).unwrap_or_default();
                let digits = digits.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits > 0 && end == Some(value + digits) {
                    plan.index = Some((value, value + digits));
                }
            }
            end
        };
        match value_end {
            Some(value_end) => pos = value_end,
            None => return pos,
        }
    }
}

/// Where the computations an attribute names stand among its instruction's called
/// computations: the order of `called_computation_ids` in its proto, which XLA keeps
/// for each opcode (a `while` calls its body first, then its condition; the text names
/// the condition first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CallSlot {
    /// One computation, at this place.
    One(u32),
    /// A braced list of them, in order.
    List,
}

/// The place of the computations the attribute `name` names (`calls`, `to_apply`,
/// `condition`, `body`, `branch_computations`, ...); `None` for any other attribute.
pub(super) fn call_attribute(name: &str) -> Option<CallSlot> {
    match name {
        "calls" | "to_apply" | "body" | "true_computation" | "select" => Some(CallSlot::One(0)),
        "condition" | "false_computation" | "scatter" => Some(CallSlot::One(1)),
        "branch_computations" | "called_computations" => Some(CallSlot::List),
        _ => None,
    }
}

/// A called computation: its place ([`CallSlot`]) and its name's byte range (with its
/// `%`, if any).
pub(super) type Call = (u32, (usize, usize));

/// Where [`call_value_end`] puts the names it reads.
pub(super) trait CallSink {
    /// How many it holds.
    fn count(&self) -> usize;
    /// Adds the name at `at` in `bytes`, at `place`.
    fn add(&mut self, place: u32, at: (usize, usize), bytes: &[u8]);
    /// Keeps the first `count`.
    fn keep(&mut self, count: usize);
}

/// A plan's calls: their byte ranges.
impl CallSink for SmallVec<[Call; 2]> {
    fn count(&self) -> usize {
        self.len()
    }

    fn add(&mut self, place: u32, at: (usize, usize), _: &[u8]) {
        self.push((place, at));
    }

    fn keep(&mut self, count: usize) {
        self.truncate(count);
    }
}

/// The end of the value at `pos` of an attribute that names called computations
/// (`slot`, [`call_attribute`]), as the token path reads it, the names added to
/// `calls`: one name (`%fused_computation.1`), or for a list a braced list of names
/// (`{%a, %b}`, `{}`); for one, a balanced `{...}` group (a computation written in
/// place, which has no name) adds none. What follows must end the value, as for
/// [`plain_value_end`]. `None`, with nothing added, for anything else, and when
/// `calls` would hold more than `limit`.
pub(super) fn call_value_end(
    bytes: &[u8],
    pos: usize,
    slot: CallSlot,
    calls: &mut dyn CallSink,
    limit: usize,
) -> Option<usize> {
    let ends = |end: usize| value_ends(bytes, end);
    match (slot, bytes.get(pos)) {
        (CallSlot::One(_), Some(b'{')) => plain_value_end(bytes, pos),
        (CallSlot::One(place), _) => {
            let (Kind::Name | Kind::Word, end) = plain_token(bytes, pos)? else {
                return None;
            };
            let end = ends(end).filter(|_| calls.count() < limit)?;
            calls.add(place, (pos, end), bytes);
            Some(end)
        }
        (CallSlot::List, Some(b'{')) => {
            let before = calls.count();
            let mut at = blanks(bytes, pos + 1);
            if bytes.get(at) == Some(&b'}') {
                return ends(at + 1);
            }
            let mut place = 0;
            let end = loop {
                let Some((Kind::Name | Kind::Word, end)) = plain_token(bytes, at) else {
                    break None;
                };
                if calls.count() >= limit {
                    break None;
                }
                calls.add(place, (at, end), bytes);
                place += 1;
                at = blanks(bytes, end);
                match bytes.get(at) {
                    Some(b',') => at = blanks(bytes, at + 1),
                    Some(b'}') => break ends(at + 1),
                    _ => break None,
                }
            };
            if end.is_none() {
                calls.keep(before);
            }
            end
        }
        (CallSlot::List, _) => None,
    }
}

/// Past the value at `pos` of `backend_config` or (with `frontend`) of
/// `frontend_attributes`, as the token path reads them: a JSON dictionary in braces,
/// in which only braces pair up, or `{name=value, ...}` of strings and such
/// dictionaries; any other value as [`plain_value_end`] reads it. `None` for anything
/// else, and for a dictionary or list that does not close on this line.
fn json_valued_end(bytes: &[u8], pos: usize, frontend: bool) -> Option<usize> {
    if bytes.get(pos) != Some(&b'{') {
        return plain_value_end(bytes, pos);
    }
    let end = if frontend {
        let mut pos = blanks(bytes, pos + 1);
        if bytes.get(pos) == Some(&b'}') {
            pos + 1
        } else {
            loop {
                let Some((Kind::Attr, name_end)) = plain_token(bytes, pos) else {
                    return None;
                };
                let value = blanks(bytes, name_end + 1);
                let value_end = match bytes.get(value) {
                    Some(b'{') => json_dict_end(bytes, value)?,
                    Some(&quote @ (b'"' | b'\'')) => string_end(bytes, value + 1, quote)?,
                    _ => return None,
                };
                pos = blanks(bytes, value_end);
                match bytes.get(pos) {
                    Some(b',') => pos = blanks(bytes, pos + 1),
                    Some(b'}') => break pos + 1,
                    _ => return None,
                }
            }
        }
    } else {
        json_dict_end(bytes, pos)?
    };
    value_ends(bytes, end)
}

/// Past `{shape, ...}` at `pos`, as the token path reads `operand_layout_constraints`,
/// when every shape is in the memo and the list closes on this line (each added to
/// `shapes`); `None` otherwise.
fn layout_constraints_end<'m>(
    line: &str,
    pos: usize,
    memo: &'m Memo<Known>,
    shapes: &mut SmallVec<[PlannedShape<'m>; 4]>,
) -> Option<usize> {
    let bytes = line.as_bytes();
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    let mut pos = blanks(bytes, pos + 1);
    if bytes.get(pos) == Some(&b'}') {
        return Some(pos + 1);
    }
    let mut index = 0;
    loop {
        if shapes.len() >= PLANNED {
            return None;
        }
        let shape = shape_at(line, pos, Planned::LayoutConstraint(index), memo)?;
        pos = blanks(bytes, shape.end);
        shapes.push(shape);
        index += 1;
        match bytes.get(pos) {
            Some(b',') => pos = blanks(bytes, pos + 1),
            Some(b'}') => return Some(pos + 1),
            _ => return None,
        }
    }
}

/// What the token path would read on a computation's first line, through its `{`:
/// `[ENTRY] name [(param: shape, ...) -> shape] {`.
pub(super) struct HeaderPlan<'m> {
    /// Whether it starts with `ENTRY`.
    pub entry: bool,
    /// The computation's name token (with its `%`, if any).
    pub name: (usize, usize),
    /// The parameters: each name token (as written, without a `:`) and shape.
    pub parameters: SmallVec<[((usize, usize), PlannedShape<'m>); 4]>,
    /// The result shape, when there is a signature.
    pub result: Option<PlannedShape<'m>>,
    /// Just after the `{`.
    pub end: usize,
}

/// The shape at `pos`, standing as `role`, if the token path would read a shape there
/// (a computation's signature, a list of them) and the memo holds it.
fn shape_at<'m>(
    line: &str,
    pos: usize,
    role: Planned,
    memo: &'m Memo<Known>,
) -> Option<PlannedShape<'m>> {
    if !can_be_shape(line, pos, plain_token(line.as_bytes(), pos)) {
        return None;
    }
    let (end, value) = memo_shape(line, pos, memo)?;
    Some(PlannedShape {
        start: pos,
        end,
        role,
        value,
    })
}

/// The plan for a computation header whose first token is `first` = (kind, start,
/// end) on `line` (as for [`plan_instruction`]); `None` when anything on it needs the
/// token path.
pub(super) fn plan_computation<'m>(
    line: &str,
    first: (Kind, usize, usize),
    memo: &'m Memo<Known>,
) -> Option<HeaderPlan<'m>> {
    let bytes = line.as_bytes();
    let (mut kind, mut pos, mut end) = first;
    let entry = kind == Kind::Word && &line[pos..end] == "ENTRY";
    if entry {
        pos = blanks(bytes, end);
        (kind, end) = plain_token(bytes, pos)?;
    }
    if !matches!(kind, Kind::Word | Kind::Name) {
        return None;
    }
    let mut plan = HeaderPlan {
        entry,
        name: (pos, end),
        parameters: SmallVec::new(),
        result: None,
        end: 0,
    };
    pos = blanks(bytes, end);
    if bytes.get(pos) == Some(&b'(') {
        pos = blanks(bytes, pos + 1);
        if bytes.get(pos) == Some(&b')') {
            pos += 1;
        } else {
            loop {
                let (kind, end) = plain_token(bytes, pos)?;
                let after = match kind {
                    // The `:` of a label is part of its token.
                    Kind::Label => end + 1,
                    Kind::Word | Kind::Name => end,
                    _ => return None,
                };
                let shape = shape_at(line, blanks(bytes, after), Planned::Result, memo)?;
                let next = blanks(bytes, shape.end);
                plan.parameters.push(((pos, end), shape));
                pos = next;
                match bytes.get(pos) {
                    Some(b',') => pos = blanks(bytes, pos + 1),
                    Some(b')') => {
                        pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        pos = blanks(bytes, pos);
        if bytes.get(pos..pos + 2) != Some(b"->") {
            return None;
        }
        let result = shape_at(line, blanks(bytes, pos + 2), Planned::Result, memo)?;
        pos = blanks(bytes, result.end);
        plan.result = Some(result);
    }
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    plan.end = pos + 1;
    Some(plan)
}
