//! Module text: a scanner that knows the structure of an HLO module.
//!
//! It is not a full HLO parser (nothing is built, attribute values are skipped), but
//! it reads the structure XLA's `hlo_parser.cc` expects, token by token across lines:
//!
//! ```text
//! module      := ['HloModule' name (',' attribute)*] [stack_frames] computation+
//! computation := ['ENTRY'] name ['(' [param (',' param)*] ')' '->' shape]
//!                '{' instruction+ '}' (',' attribute)*
//! param       := name shape                                  (x: f32[2])
//! instruction := ['ROOT'] name '=' [shape] opcode '(' operands ')' (',' attribute)*
//! operand     := [shape] name | [shape] opcode '(' operands ')'   (a nested instruction)
//! attribute   := attr_name '=' value
//! ```
//!
//! Every place where XLA's parser expects a shape is read as one (instruction results,
//! operand shapes, computation signatures, `entry_computation_layout`, `outfeed_shape`,
//! `operand_layout_constraints`); whatever stands there that is not a shape is an error
//! at its line and column. `constant(...)` literals and `parameter(N)` are skipped, as
//! are attribute values (balanced brackets, strings) other than the shape-bearing ones.
//! After an error the scanner goes on at the next line that starts a statement, so one
//! run reports every broken place. Several modules in one file (as `// -----`-split test
//! files hold) are read one after the other.

use std::io::BufRead;

use super::lexer::{Kind, Lexer, Token};

use super::line::{
    call_attribute, plan_computation, plan_instruction, CallSink, CallSlot, Plan, Planned,
};
use super::{InstructionSite, Names, Role, ScanError, Site, Summary};
use crate::error::{Issue, Report, Severity};
use crate::proto::ShapeProto;
use crate::report::Finding;
use crate::text::parser::ParseOptions;
use crate::text::types;

/// Something was reported; the caller resynchronizes.
struct Reported;

type Step = Result<(), Reported>;

/// What the scanner hands on for each shape: where it stands, the shape, and its
/// issues when the scanner validates ([`Scanner::validating`]).
pub(super) type OnShape<'v> = dyn FnMut(&Site<'_>, &ShapeProto, Option<&mut Issues<'_>>) + 'v;

/// A shape's issues, handed one at a time to the function it is given, in the order
/// found: from a report the memo keeps, or from the validation as it runs (so that a
/// shape of hundreds of thousands of issues is never held with them).
pub(super) type Issues<'i> = dyn FnMut(&mut dyn FnMut(&Issue)) + 'i;

/// A shape the memo keeps, with its report when the scanner validates and the shape
/// has at most [`KEPT_ISSUES`] issues (`None` for more: they are found again, handed
/// on as they are found, each time the shape is).
#[derive(Clone)]
pub(super) struct Known {
    pub shape: ShapeProto,
    pub report: Option<Report>,
}

/// The most issues of one shape the scanner keeps in a report.
const KEPT_ISSUES: usize = 64;

/// The validation a validating scanner applies: the HLO text rules
/// ([`crate::validate::Options::hlo_text`], as [`super::validate_text`]).
fn validate(shape: &ShapeProto, each: &mut dyn FnMut(Issue)) {
    crate::validate::each_nested_issue(shape, crate::validate::Options::hlo_text(), 0, each);
}

/// The report of `shape` when it has at most [`KEPT_ISSUES`] issues.
fn kept_report(shape: &ShapeProto) -> Option<Report> {
    let mut report = Some(Report::new());
    validate(shape, &mut |issue| {
        if let Some(kept) = &mut report {
            match kept.issues().len() < KEPT_ISSUES {
                true => kept.push(issue),
                false => report = None,
            }
        }
    });
    report
}

/// Hands the shape `known` on with its issues: those of its report, or (validating
/// without one) those the validation finds again as it runs.
fn hand_on(on_shape: &mut OnShape<'_>, site: &Site<'_>, known: &Known, validating: bool) {
    let shape = &known.shape;
    match (&known.report, validating) {
        (Some(report), _) => {
            on_shape(
                site,
                shape,
                Some(&mut |each| report.issues().iter().for_each(each)),
            );
        }
        (None, true) => on_shape(
            site,
            shape,
            Some(&mut |each| validate(shape, &mut |i| each(&i))),
        ),
        (None, false) => on_shape(site, shape, None),
    }
}

pub(super) struct Scanner<'v, R> {
    lexer: Lexer<R>,
    on_shape: &'v mut OnShape<'v>,
    /// Whether each shape is validated ([`Self::validating`]).
    validating: bool,
    on_problem: &'v mut dyn FnMut(Finding),
    on_instruction: Option<&'v mut dyn FnMut(&InstructionSite<'_>)>,
    summary: Summary,
    computation: Option<String>,
    instruction: Option<String>,
    in_computation: bool,
    /// Whether the current computation is the entry (`ENTRY`).
    in_entry: bool,
    /// Spare buffers for the computation and instruction names: a name set again
    /// reuses the last one's allocation ([`set_name`], [`clear_name`]).
    computation_buffer: String,
    name_buffer: String,
    /// The operand names of the current instruction (only with `on_instruction`).
    operand_names: Names,
    /// The current instruction's opcode and line, kept until its attributes are read
    /// (only with `on_instruction`).
    opcode: String,
    instruction_line: usize,
    /// The computations its attributes name, and each one's place ([`CallSlot`]); put
    /// in order of place before they are handed on (only with `on_instruction`).
    calls: Names,
    call_places: Vec<u32>,
    /// A get-tuple-element's `index=` (only with `on_instruction`).
    tuple_index: Option<u64>,
    /// How deep in nested instructions the operands being read are.
    nesting: usize,
    options: ParseOptions,
    /// Shapes already parsed, by their text: real dumps write the same few shapes
    /// over and over (see [`Memo`]). Only texts the parser read completely and exactly
    /// (see [`shape_extent`]) are kept.
    memo: Memo<Known>,
    /// Whether whole lines may be read at byte level ([`Self::plain_instruction`],
    /// plain stack frame lines); off only in tests, to hold the token path beside them.
    whole_lines: bool,
    /// Whether a long tuple is validated a shape at a time, its issues handed on
    /// without the shape ([`Self::validating_long_tuples_by_leaf`]).
    long_tuples_by_leaf: bool,
    /// Whether a long tuple on one line is checked a shape at a time and handed on as
    /// its text alone ([`Self::eliding_long_tuples`]).
    eliding_long_tuples: bool,
}

/// Values by the exact text of a shape, so that a dump's thousandth `f32[1024]{0}` costs
/// a hash lookup instead of a parse (the scanner keeps parsed shapes) or a validation
/// ([`super::scan_text_validated`] keeps reports). The memo is bounded in entries, in
/// the length of one text and in the length of all its texts together (a shape's
/// value grows with its text), and starts afresh when full, so memory stays flat.
/// Long texts are kept too: real dumps repeat tuples of dozens of elements (a
/// while loop's state) on many lines.
///
/// Keys are hashed with foldhash, seeded per process (as the standard library's
/// SipHash is): a quarter of the cost on these short keys, and a module text cannot
/// be written to make its shapes collide.
pub(super) struct Memo<V> {
    values: std::collections::HashMap<Box<str>, V, foldhash::fast::RandomState>,
    /// The length of all the texts kept.
    text_bytes: usize,
}

impl<V: Clone> Memo<V> {
    const MAX_ENTRIES: usize = 4096;
    pub(super) const MAX_TEXT: usize = 16 * 1024;
    const MAX_TEXT_BYTES: usize = 256 * 1024;

    pub(super) fn new() -> Self {
        Memo {
            values: std::collections::HashMap::default(),
            text_bytes: 0,
        }
    }

    pub(super) fn get(&self, text: &str) -> Option<&V> {
        self.values.get(text)
    }

    /// Keeps `value` for `text`, unless the text is too long to keep.
    pub(super) fn put(&mut self, text: &str, value: &V) {
        if text.len() > Self::MAX_TEXT {
            return;
        }
        if self.values.len() >= Self::MAX_ENTRIES
            || self.text_bytes + text.len() > Self::MAX_TEXT_BYTES
        {
            self.values.clear();
            self.text_bytes = 0;
        }
        self.text_bytes += text.len();
        self.values.insert(text.into(), value.clone());
    }
}

/// The bytes [`shape_extent`] acts on outside brackets: brackets, separators, line
/// breaks, quotes and `/`.
const TOP_SHAPE_BYTE: [bool; 256] = byte_table(b"([{)]}, \t\r\n\"'/");

/// The bytes [`shape_extent`] acts on inside brackets (where `,` and blanks separate
/// sizes and tuple elements).
const INNER_SHAPE_BYTE: [bool; 256] = byte_table(b"([{)]}\r\n\"'/");

/// A table of which bytes are in `bytes`.
const fn byte_table(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// Where a shape written plainly at `start` ends: the bytes up to the first space,
/// `,`, unmatched closing bracket or line end outside brackets. `None` when what
/// follows could still belong to the shape (a space before `[` or `(`, or before a
/// `{` that does not end the line), or when anything unusual stands inside (strings,
/// comments other than `/* */` inside brackets, a line break): the parser decides
/// those. (A `{` that ends the line, as
/// after a computation's result shape, is not a layout to the parser: it reads `{` as
/// one only before an integer or `:`.) The memo is used only when the parser, on first
/// sight, stopped exactly here, so a hit reads the same bytes the parser would.
pub(super) fn shape_extent(line: &str, start: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut pos = start;
    loop {
        // Most bytes (type names, sizes, layouts) change nothing here.
        let table = if depth == 0 {
            &TOP_SHAPE_BYTE
        } else {
            &INNER_SHAPE_BYTE
        };
        while bytes.get(pos).is_some_and(|&b| !table[usize::from(b)]) {
            pos += 1;
        }
        let Some(&b) = bytes.get(pos) else {
            break;
        };
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b')' | b']' | b'}' | b',' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => break,
            // A `/*index=5*/` comment inside a tuple, closed on the line.
            b'/' if depth > 0 && bytes.get(pos + 1) == Some(&b'*') => {
                let close = memchr::memmem::find(&bytes[pos + 2..], b"*/")?;
                pos += 2 + close + 1;
            }
            b'"' | b'\'' | b'/' | b'\n' | b'\r' => return None,
            _ => {}
        }
        pos += 1;
    }
    if depth != 0 || pos == start {
        return None;
    }
    ends_shape(bytes, pos).then_some(pos)
}

/// Whether nothing after `pos` could still belong to a shape that ended there: what
/// follows (after spaces and tabs) is not `[` or `(`, nor a `{` with more than blanks
/// after it on the line.
pub(super) fn ends_shape(bytes: &[u8], pos: usize) -> bool {
    let not_blank = |b: &&u8| !matches!(b, b' ' | b'\t');
    let mut rest = bytes[pos..].iter();
    match rest.find(not_blank) {
        Some(b'[' | b'(') => false,
        Some(b'{') => super::lexer::only_blanks(rest.as_slice()),
        _ => true,
    }
}

/// The opcode whose `index=` is kept ([`InstructionSite::tuple_index`]).
const GET_TUPLE_ELEMENT: &str = "get-tuple-element";

/// The computations an instruction calls, as the scanner keeps them: their names
/// (without `%`) and their places.
struct CallNames<'a> {
    names: &'a mut Names,
    places: &'a mut Vec<u32>,
}

impl CallSink for CallNames<'_> {
    fn count(&self) -> usize {
        self.names.len()
    }

    fn add(&mut self, place: u32, (start, end): (usize, usize), bytes: &[u8]) {
        let name = String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default());
        if self.names.push(name.trim_start_matches('%')) {
            self.places.push(place);
        }
    }

    fn keep(&mut self, count: usize) {
        self.names.truncate(count);
        self.places.truncate(count);
    }
}

impl<'v, R: BufRead> Scanner<'v, R> {
    pub fn new(
        reader: R,
        on_shape: &'v mut OnShape<'v>,
        on_problem: &'v mut dyn FnMut(Finding),
    ) -> Self {
        Scanner {
            lexer: Lexer::new(reader),
            on_shape,
            validating: false,
            on_problem,
            on_instruction: None,
            summary: Summary::default(),
            computation: None,
            instruction: None,
            in_computation: false,
            in_entry: false,
            computation_buffer: String::new(),
            name_buffer: String::new(),
            operand_names: Names::new(),
            opcode: String::new(),
            instruction_line: 0,
            call_places: Vec::new(),
            tuple_index: None,
            calls: Names::new(),
            nesting: 0,
            options: ParseOptions {
                fill_missing_layouts: false,
            },
            memo: Memo::new(),
            whole_lines: true,
            long_tuples_by_leaf: false,
            eliding_long_tuples: false,
        }
    }

    /// Validates a tuple of [`LONG_TUPLE`] bytes or more on one line a shape at a time
    /// with the HLO text rules (the checker [`super::validate_text`] applies), as the
    /// whole tuple's check would, and hands on each shape of it with its own text and
    /// its issues (at their paths in the tuple) in place of the tuple's, and an empty
    /// tuple in place of the shape: for callers that only look at the issues. A 26 MB
    /// instruction shape built whole took 35 times its size.
    pub fn validating_long_tuples_by_leaf(mut self) -> Self {
        self.long_tuples_by_leaf = true;
        self
    }

    /// Checks that a tuple of [`LONG_TUPLE`] bytes or more on one line parses, a shape
    /// at a time, and hands it on as its text alone: an empty tuple in place of the
    /// shape and [`Site::elided`] set, for callers that read it again from the text as
    /// they need it (the layout guard's listing).
    pub fn eliding_long_tuples(mut self) -> Self {
        self.eliding_long_tuples = true;
        self
    }

    /// Validates every shape with the HLO text rules (as [`super::validate_text`]), once
    /// per distinct shape text as long as the memo keeps it and its report
    /// ([`Known`]), and hands its issues on with the shape.
    pub fn validating(mut self) -> Self {
        self.validating = true;
        self
    }

    /// Reads `chunk` bytes of lines at a time instead of the lexer's default.
    #[cfg(test)]
    fn chunked(mut self, chunk: usize) -> Self {
        self.lexer.chunk = chunk;
        self
    }

    /// Reads every line token by token (the reference the whole-line paths are held to).
    #[cfg(test)]
    fn token_by_token(mut self) -> Self {
        self.whole_lines = false;
        self
    }

    /// Reads attribute values token by token too (the reference the byte-level
    /// values are held to).
    #[cfg(test)]
    fn values_token_by_token(mut self) -> Self {
        self.lexer.plain_values = false;
        self
    }

    /// Also calls `on_instruction` for every instruction, once its attributes are read.
    pub fn with_instructions(
        mut self,
        on_instruction: &'v mut dyn FnMut(&InstructionSite<'_>),
    ) -> Self {
        self.on_instruction = Some(on_instruction);
        self
    }

    pub fn run(mut self) -> Result<Summary, ScanError> {
        let mut first = true;
        loop {
            // Most statements start with a name: read at byte level.
            let token = match self.lexer.peek_plain_line().map_err(ScanError::Io)? {
                Some(token) => token,
                None => self.peek()?,
            };
            if token.kind == Kind::Eof {
                break;
            }
            if std::mem::take(&mut first) {
                self.headerless_start(&token);
            }
            let word = |scanner: &Self, text: &str| {
                token.kind == Kind::Word && scanner.lexer.text(&token) == text
            };
            let step = match token.kind {
                _ if word(&self, "HloModule") => self.header(),
                _ if word(&self, "FileNames") => self.stack_frames(),
                Kind::Punct(b'}') if self.in_computation => self.close_computation(),
                _ if self.in_computation => self.instruction(),
                _ => {
                    let step = self.computation_header();
                    // A signature that does not read still opens a computation when
                    // its line ends with '{': its instructions are checked as such.
                    if step.is_err()
                        && !self.in_computation
                        && self.lexer.line().trim_end().ends_with('{')
                    {
                        self.in_computation = true;
                        self.summary.structures += 1;
                    }
                    step
                }
            };
            if step.is_err() {
                self.sync()?;
            }
            self.report_bad_lines();
        }
        self.report_bad_lines();
        if let Some((line, column, what)) = self.lexer.unterminated.take() {
            self.problem_at(
                line,
                column,
                "module_syntax",
                format!("unterminated {what}"),
            );
        } else if self.in_computation {
            let line = self.lexer.line_no().max(1);
            let column = self.lexer.column(self.lexer.line().trim_end().len());
            self.problem_at(
                line,
                column,
                "module_syntax",
                "expects '}' at the end of instruction list.".to_string(),
            );
        }
        self.summary.lines = self.lexer.line_no();
        Ok(self.summary)
    }

    // ----- tokens -----

    fn peek(&mut self) -> Result<Token, ScanError> {
        self.lexer.peek().map_err(ScanError::Io)
    }

    fn io<T>(&mut self, result: std::io::Result<T>) -> Result<T, Reported> {
        result.map_err(|e| {
            self.problem_at(
                self.lexer.line_no(),
                1,
                "io_error",
                format!("read error: {e}"),
            );
            Reported
        })
    }

    fn peek_tok(&mut self) -> Result<Token, Reported> {
        let result = self.lexer.peek();
        self.io(result)
    }

    fn next_tok(&mut self) -> Result<Token, Reported> {
        let result = self.lexer.next();
        self.io(result)
    }

    /// The next token, read at byte level when it is a name or a word on this line
    /// (most are), else by [`Self::peek_tok`]. Taken with [`Lexer::take`].
    fn peek_plain(&mut self) -> Result<Token, Reported> {
        match self.lexer.peek_plain() {
            Some(token) => Ok(token),
            None => self.peek_tok(),
        }
    }

    fn text(&self, token: &Token) -> String {
        match token.kind {
            Kind::Eof => "the end of the input".to_string(),
            _ => self.lexer.text(token).to_string(),
        }
    }

    /// The token's text for a message, cut when long ([`crate::error::Shown`]).
    fn shown(&self, token: &Token) -> String {
        match token.kind {
            Kind::Eof => "the end of the input".to_string(),
            _ => crate::error::Shown::plain(self.lexer.text(token)).to_string(),
        }
    }

    /// `'text'`, or `the end of the input`.
    fn quoted(&self, token: &Token) -> String {
        match token.kind {
            Kind::Eof => "the end of the input".to_string(),
            _ => crate::error::Shown::single(self.lexer.text(token)).to_string(),
        }
    }

    fn is_punct(token: &Token, byte: u8) -> bool {
        token.kind == Kind::Punct(byte)
    }

    /// After a list item: consumes `,` (true: another item follows) or `close` (false:
    /// the list ended); anything else is reported as `expects` (then `, saw X`).
    fn list_separator(&mut self, close: u8, expects: &str) -> Result<bool, Reported> {
        if self.lexer.eat(b',') {
            return Ok(true);
        }
        if self.lexer.eat(close) {
            return Ok(false);
        }
        let sep = self.next_tok()?;
        match sep.kind {
            Kind::Punct(b',') => Ok(true),
            Kind::Punct(b) if b == close => Ok(false),
            _ => {
                let saw = self.quoted(&sep);
                Err(self.error(&sep, "module_syntax", format!("{expects}, saw {saw}")))
            }
        }
    }

    /// Consumes `byte` or reports `message` at the token there.
    fn expect(&mut self, byte: u8, message: &str) -> Step {
        if self.lexer.eat(byte) {
            return Ok(());
        }
        let token = self.peek_tok()?;
        if Self::is_punct(&token, byte) {
            self.next_tok()?;
            Ok(())
        } else {
            let saw = self.quoted(&token);
            Err(self.error(&token, "module_syntax", format!("{message} (saw {saw})")))
        }
    }

    // ----- findings -----

    fn problem_at(&mut self, line: usize, column: usize, code: &'static str, message: String) {
        let mut finding = Finding::new(code, Severity::Error, message).at(line.max(1), column);
        finding.computation = self.computation.clone();
        finding.instruction = self.instruction.clone();
        self.summary.errors += 1;
        (self.on_problem)(finding);
    }

    fn error(&mut self, token: &Token, code: &'static str, message: String) -> Reported {
        let column = if token.kind == Kind::Eof {
            1
        } else {
            self.lexer.column(token.start)
        };
        self.problem_at(token.line, column, code, message);
        Reported
    }

    fn report_bad_lines(&mut self) {
        if self.lexer.bad_lines.is_empty() {
            return;
        }
        for bad in std::mem::take(&mut self.lexer.bad_lines) {
            self.problem_at(
                bad.line,
                bad.column,
                "not_utf8",
                "the line is not UTF-8".to_string(),
            );
        }
    }

    /// After an error: skip to the next line whose first token can start a statement
    /// (`}`, `ROOT`, `ENTRY`, `HloModule`, a name).
    fn sync(&mut self) -> Result<(), ScanError> {
        let line = self.lexer.line_no();
        loop {
            let token = self.peek()?;
            if token.kind == Kind::Eof {
                return Ok(());
            }
            if token.line > line && token.first_on_line {
                let starts = matches!(
                    token.kind,
                    Kind::Punct(b'}') | Kind::Name | Kind::Word | Kind::Label
                );
                if starts {
                    return Ok(());
                }
            }
            if token.line == self.lexer.line_no() {
                self.lexer.skip_line();
            } else {
                self.lexer.next().map_err(ScanError::Io)?;
            }
        }
    }

    // ----- structure -----

    /// XLA reads text without a `HloModule` header as a module only when it starts
    /// with `ENTRY` or with `name {` (a computation without a signature); otherwise it
    /// reads a single instruction, which a file of computations is not.
    fn headerless_start(&mut self, token: &Token) {
        let text = self.lexer.text(token);
        let module_start = token.kind == Kind::Word && matches!(text, "HloModule" | "ENTRY");
        if module_start || !matches!(token.kind, Kind::Word | Kind::Name) {
            return;
        }
        if self.lexer.next_byte_after(token.end) == Some(b'(') {
            let column = self.lexer.column(token.start);
            self.problem_at(
                token.line,
                column,
                "module_syntax",
                "expects HloModule: without a module header XLA reads a module only when it starts with ENTRY or 'name {'".to_string(),
            );
        }
    }

    /// `HloModule name (',' attribute)*`.
    fn header(&mut self) -> Step {
        self.next_tok()?;
        clear_name(&mut self.computation, &mut self.computation_buffer);
        clear_name(&mut self.instruction, &mut self.name_buffer);
        self.in_computation = false;
        let name = self.next_tok()?;
        if !matches!(name.kind, Kind::Word | Kind::Name | Kind::Label) {
            let saw = self.quoted(&name);
            return Err(self.error(
                &name,
                "module_syntax",
                format!("expects a module name after HloModule, saw {saw}"),
            ));
        }
        self.summary.structures += 1;
        self.attributes()
    }

    /// The stack frame index: `FileNames (INT STRING)* FunctionNames ... StackFrames ...`.
    fn stack_frames(&mut self) -> Step {
        self.next_tok()?;
        loop {
            // Most lines are one entry, read at byte level.
            if self.whole_lines {
                let plain = self.lexer.skip_plain_frame_line();
                if self.io(plain)? {
                    continue;
                }
            }
            let token = self.peek_tok()?;
            match token.kind {
                Kind::Number | Kind::Str => {
                    self.next_tok()?;
                }
                Kind::Word
                    if matches!(
                        self.lexer.text(&token),
                        "FunctionNames" | "FileLocations" | "StackFrames"
                    ) =>
                {
                    self.next_tok()?;
                }
                Kind::Punct(b'{') => {
                    self.next_tok()?;
                    self.skip_balanced(token)?;
                }
                _ => return Ok(()),
            }
            // A frame's `{...}` after its number, at byte level when it closes on its
            // line.
            while self.lexer.skip_group() {}
        }
    }

    /// `['ENTRY'] name ['(' params ')' '->' shape] '{'`.
    fn computation_header(&mut self) -> Step {
        clear_name(&mut self.instruction, &mut self.name_buffer);
        if self.plain_computation_header() {
            return Ok(());
        }
        self.in_entry = false;
        let mut token = self.next_tok()?;
        if token.kind == Kind::Word && self.lexer.text(&token) == "ENTRY" {
            self.in_entry = true;
            token = self.next_tok()?;
        }
        // XLA's lexer reads `name:` as a name too (as `%name`).
        if !matches!(token.kind, Kind::Word | Kind::Name | Kind::Label) {
            let saw = self.quoted(&token);
            return Err(self.error(
                &token,
                "module_syntax",
                format!("expects HloModule, ENTRY or a computation name, saw {saw}"),
            ));
        }
        set_name(
            &mut self.computation,
            &mut self.computation_buffer,
            self.lexer.text(&token).trim_start_matches('%'),
        );
        let next = self.peek_tok()?;
        if Self::is_punct(&next, b'(') {
            self.next_tok()?;
            let mut index = 0;
            if Self::is_punct(&self.peek_tok()?, b')') {
                self.next_tok()?;
            } else {
                loop {
                    let name = self.next_tok()?;
                    if !matches!(name.kind, Kind::Label | Kind::Word | Kind::Name) {
                        let saw = self.quoted(&name);
                        return Err(self.error(
                            &name,
                            "module_syntax",
                            format!("expects a parameter name, saw {saw}"),
                        ));
                    }
                    let param = self.text(&name).to_string();
                    self.shape(Role::Parameter { index, name: param })?;
                    index += 1;
                    if !self.list_separator(b')', "expects ',' or ')' in the parameter list")? {
                        break;
                    }
                }
            }
            let arrow = self.next_tok()?;
            if arrow.kind != Kind::Arrow {
                let saw = self.quoted(&arrow);
                return Err(self.error(
                    &arrow,
                    "module_syntax",
                    format!("expects '->' (saw {saw})"),
                ));
            }
            self.shape(Role::ComputationResult)?;
        }
        self.expect(b'{', "expects '{' at the beginning of instruction list.")?;
        self.in_computation = true;
        self.summary.structures += 1;
        Ok(())
    }

    /// `}` then the computation's attributes (`execution_thread=...`).
    fn close_computation(&mut self) -> Step {
        self.next_tok()?;
        self.in_computation = false;
        clear_name(&mut self.instruction, &mut self.name_buffer);
        let step = self.attributes();
        clear_name(&mut self.computation, &mut self.computation_buffer);
        step
    }

    /// `['ROOT'] name '=' [shape] opcode '(' operands ')' (',' attribute)*`.
    fn instruction(&mut self) -> Step {
        clear_name(&mut self.instruction, &mut self.name_buffer);
        self.calls.clear();
        self.call_places.clear();
        self.tuple_index = None;
        if !self.plain_instruction() {
            self.instruction_by_tokens()?;
        }
        self.attributes()?;
        self.hand_on_instruction();
        Ok(())
    }

    /// Hands the instruction just read, its attributes too, to `on_instruction`.
    fn hand_on_instruction(&mut self) {
        let Some(on_instruction) = self.on_instruction.as_mut() else {
            return;
        };
        if !self.call_places.is_sorted() {
            // A few names out of place (a `while`'s condition before its body): a stable
            // sort keeps the names of a list in their order.
            let mut order: Vec<usize> = (0..self.calls.len()).collect();
            order.sort_by_key(|&i| self.call_places.get(i).copied().unwrap_or(u32::MAX));
            let placed: Names = order.iter().filter_map(|&i| self.calls.get(i)).collect();
            self.calls = placed;
            self.call_places.clear();
        }
        let site = InstructionSite {
            line: self.instruction_line,
            computation: self.computation.as_deref(),
            entry: self.in_entry,
            name: self.instruction.as_deref().unwrap_or(""),
            opcode: &self.opcode,
            operands: &self.operand_names,
            calls: &self.calls,
            tuple_index: self.tuple_index,
        };
        on_instruction(&site);
    }

    /// An instruction through its operands, token by token.
    fn instruction_by_tokens(&mut self) -> Step {
        let mut token = self.peek_plain()?;
        self.lexer.take(&token);
        if token.kind == Kind::Word && self.lexer.text(&token) == "ROOT" {
            token = self.peek_plain()?;
            self.lexer.take(&token);
        }
        // `name:` is a name to XLA's lexer too (`c: = f32[] ...`).
        if !matches!(token.kind, Kind::Word | Kind::Name | Kind::Label) {
            let saw = self.quoted(&token);
            let message = if token.kind == Kind::Attr {
                format!("expects a space before '=' in an instruction, saw {saw}")
            } else {
                format!("expects an instruction (name = shape opcode(...)), saw {saw}")
            };
            return Err(self.error(&token, "module_syntax", message));
        }
        set_name(
            &mut self.instruction,
            &mut self.name_buffer,
            self.lexer.text(&token).trim_start_matches('%'),
        );
        self.expect(b'=', "expects '=' in instruction")?;
        let next = self.peek_plain()?;
        if self.can_be_shape(&next) {
            self.read_shape(next, Role::Result)?;
        } else if next.kind == Kind::Word {
            match self.lexer.next_byte_after(next.end) {
                Some(b'(') => {} // an opcode: the shape is left out, XLA infers it
                Some(b'[') => return Err(self.unknown_type_word(&next, Xla::Opcode)),
                _ => {
                    let saw = self.quoted(&next);
                    let xla = Xla::Opcode.wording(&self.shown(&next));
                    return Err(self.error(
                        &next,
                        "not_a_shape",
                        format!("expects a shape, saw {saw}{xla}"),
                    ));
                }
            }
        } else {
            let saw = self.quoted(&next);
            return Err(self.error(&next, "not_a_shape", format!("expects a shape, saw {saw}")));
        }
        let opcode = self.peek_plain()?;
        if opcode.kind != Kind::Word {
            let saw = self.quoted(&opcode);
            return Err(self.error(
                &opcode,
                "module_syntax",
                format!("expects opcode, saw {saw}"),
            ));
        }
        if self.lexer.next_byte_after(opcode.end) == Some(b'[') {
            return Err(self.unknown_type_word(&opcode, Xla::Opcode));
        }
        self.lexer.take(&opcode);
        self.instruction_line = opcode.line;
        let literal = is_literal_opcode(self.lexer.text(&opcode));
        if self.on_instruction.is_some() {
            self.opcode.clear();
            self.opcode.push_str(self.lexer.text(&opcode));
        }
        self.expect(b'(', "expects '(' at the beginning of operands")?;
        self.operand_names.clear();
        self.nesting = 0;
        self.operands(literal)
    }

    /// Where a whole-line path may start: the first token (kind, start, end) of a
    /// statement on a single line, when it is plain.
    fn whole_line_start(&self) -> Option<(Kind, usize, usize)> {
        if !self.whole_lines || !self.lexer.single_line() {
            return None;
        }
        let first = self.lexer.plain_first()?;
        Some((first.kind, first.start, first.end))
    }

    /// A computation header written plainly on its line, read through its `{` at byte
    /// level (see [`line`](super::line)), with the same callbacks the token path would
    /// make; false, with nothing done, when the token path must read it.
    fn plain_computation_header(&mut self) -> bool {
        let Some(first) = self.whole_line_start() else {
            return false;
        };
        let line = self.lexer.line();
        let Some(plan) = plan_computation(line, first, &self.memo) else {
            return false;
        };
        // `-> f32[2] {` at the end of the line is a layout's start when the next line
        // goes on with an integer or ':': the token path reads that.
        if let Some(result) = &plan.result {
            if !matches!(layout_may_follow(&mut self.lexer, result.end), Ok(false)) {
                return false;
            }
        }
        let line = self.lexer.line();
        let line_no = self.lexer.line_no();
        self.in_entry = plan.entry;
        set_name(
            &mut self.computation,
            &mut self.computation_buffer,
            line[plan.name.0..plan.name.1].trim_start_matches('%'),
        );
        let shapes = plan
            .parameters
            .iter()
            .enumerate()
            .map(|(index, (name, shape))| {
                let name = line[name.0..name.1].to_string();
                (Role::Parameter { index, name }, shape)
            });
        let result = plan
            .result
            .iter()
            .map(|shape| (Role::ComputationResult, shape));
        for (role, shape) in shapes.chain(result) {
            self.summary.shapes += 1;
            let site = Site {
                elided: false,
                entry: self.in_entry,
                line: line_no,
                column: self.lexer.column(shape.start),
                computation: self.computation.as_deref(),
                instruction: None,
                role,
                text: &line[shape.start..shape.end],
            };
            let (validating, known) = (self.validating, shape.value);
            hand_on(self.on_shape, &site, known, validating);
        }
        let end = plan.end;
        self.lexer.seek(end);
        self.in_computation = true;
        self.summary.structures += 1;
        true
    }

    /// An instruction written plainly on its line, read through its operands' `)` at
    /// byte level (see [`line`](super::line)), with the same callbacks the token path
    /// would make; false, with nothing done, when the token path must read it.
    fn plain_instruction(&mut self) -> bool {
        let Some(first) = self.whole_line_start() else {
            return false;
        };
        let line = self.lexer.line();
        let mut plan = Plan::new();
        if plan_instruction(line, first, &self.memo, &mut plan).is_none() {
            return false;
        }

        let line_no = self.lexer.line_no();
        set_name(
            &mut self.instruction,
            &mut self.name_buffer,
            line[plan.name.0..plan.name.1].trim_start_matches('%'),
        );
        // What the token path keeps of the instruction, handed on once its attributes
        // are read.
        self.instruction_line = line_no;
        if self.on_instruction.is_some() {
            let text = |&(start, end): &(usize, usize)| line[start..end].trim_start_matches('%');
            self.opcode.clear();
            self.opcode.push_str(&line[plan.opcode.0..plan.opcode.1]);
            self.operand_names.clear();
            (self.operand_names).extend(plan.operands.iter().map(text));
            for (place, at) in &plan.calls {
                if self.calls.push(text(at)) {
                    self.call_places.push(*place);
                }
            }
            if self.opcode == GET_TUPLE_ELEMENT {
                self.tuple_index = plan.index.and_then(|at| text(&at).parse().ok());
            }
        }
        for shape in &plan.shapes {
            let role = match shape.role {
                Planned::Result => Role::Result,
                Planned::Operand(index) => Role::Operand { index },
                Planned::LayoutConstraint(index) => Role::Attribute {
                    name: "operand_layout_constraints".to_string(),
                    index,
                },
            };
            self.summary.shapes += 1;
            let site = Site {
                elided: false,
                entry: self.in_entry,
                line: line_no,
                column: self.lexer.column(shape.start),
                computation: self.computation.as_deref(),
                instruction: self.instruction.as_deref(),
                role,
                text: &line[shape.start..shape.end],
            };
            let (validating, known) = (self.validating, shape.value);
            hand_on(self.on_shape, &site, known, validating);
        }
        let end = plan.end;
        self.lexer.seek(end);
        true
    }

    /// The operands after `(`, through the closing `)` (a `constant` or `parameter`
    /// opcode's `literal` is skipped). Like XLA's parser, which records an operand it
    /// cannot read and goes on at the next ',' (the module still loads when the rest
    /// adds up), an empty operand (`f(,%x)`, `f(%x,)`) and a shape without a name
    /// (`f(f32[2], %x)`) pass; neither is counted as an operand.
    fn operands(&mut self, literal: bool) -> Step {
        if literal {
            let open = Token {
                kind: Kind::Punct(b'('),
                line: self.lexer.line_no(),
                start: 0,
                end: 0,
                first_on_line: false,
            };
            return self.skip_balanced(open);
        }
        if Self::is_punct(&self.peek_tok()?, b')') {
            self.next_tok()?;
            return Ok(());
        }
        let mut index = 0;
        loop {
            let next = self.peek_tok()?;
            if !matches!(next.kind, Kind::Punct(b',' | b')')) && self.operand(index)? {
                index += 1;
            }
            if !self.list_separator(b')', "expects ')' at the end of operands")? {
                return Ok(());
            }
        }
    }

    /// `[shape] name` or a nested instruction `[shape] opcode(...)`; false for a shape
    /// alone, which XLA's parser passes over (see [`Self::operands`]).
    fn operand(&mut self, index: usize) -> Result<bool, Reported> {
        let token = self.peek_plain()?;
        let mut had_shape = false;
        if self.can_be_shape(&token) {
            self.read_shape(token, Role::Operand { index })?;
            had_shape = true;
        } else if token.kind == Kind::Word && self.lexer.next_byte_after(token.end) == Some(b'[') {
            return Err(self.unknown_type_word(&token, Xla::Operand));
        }
        let name = if had_shape { self.peek_plain()? } else { token };
        if had_shape && matches!(name.kind, Kind::Punct(b',' | b')')) {
            return Ok(false);
        }
        // `name:` is an operand name too: XLA's lexer reads it as `%name`.
        if !matches!(name.kind, Kind::Word | Kind::Name | Kind::Label) {
            let saw = self.quoted(&name);
            let (code, what) = if had_shape {
                ("module_syntax", "an operand name")
            } else {
                ("not_a_shape", "a shape or an operand name")
            };
            return Err(self.error(&name, code, format!("expects {what}, saw {saw}")));
        }
        self.lexer.take(&name);
        if self.nesting == 0 && self.on_instruction.is_some() {
            let text = self.lexer.text(&name);
            self.operand_names.push(text.trim_start_matches('%'));
        }
        // Most operands end here, at a ',' or ')' the caller reads.
        if self.lexer.next_is_punct(b",)") {
            return Ok(true);
        }
        let after = self.peek_tok()?;
        match after.kind {
            Kind::Punct(b'(') if name.kind == Kind::Label => {
                // `name:` is no opcode (XLA: "cannot parse as an instruction name or
                // as a nested instruction").
                let saw = self.quoted(&name);
                Err(self.error(
                    &name,
                    "module_syntax",
                    format!(
                        "expects an operand name or a nested instruction, saw {saw} before '('"
                    ),
                ))
            }
            Kind::Punct(b'(') => {
                // A nested instruction: the word was its opcode.
                if self.nesting >= MAX_NESTING {
                    return Err(self.error(
                        &name,
                        "module_syntax",
                        format!("instructions nested deeper than {MAX_NESTING} levels"),
                    ));
                }
                let literal = is_literal_opcode(self.lexer.text(&name));
                self.next_tok()?;
                self.nesting += 1;
                let step = self.operands(literal);
                self.nesting -= 1;
                step.map(|()| true)
            }
            Kind::Word | Kind::Name if !had_shape => {
                // `foo %x`: something stands where the operand's shape goes.
                let saw = self.quoted(&name);
                Err(self.error(
                    &name,
                    "not_a_shape",
                    format!("expects a shape before the operand, saw {saw}"),
                ))
            }
            _ => Ok(true),
        }
    }

    /// `(',' attribute)*`.
    fn attributes(&mut self) -> Step {
        loop {
            if !self.lexer.eat(b',') {
                // Usually the next statement's name, on the next line.
                let plain = self.lexer.peek_plain_line();
                if self.io(plain)?.is_some() || !self.eat_token(b',')? {
                    return Ok(());
                }
            }
            self.attribute()?;
        }
    }

    /// A value XLA reads as a string or a JSON dictionary (`backend_config`, a frontend
    /// attribute's value): a `{` starts a dictionary, in which only braces pair up
    /// ([`Lexer::skip_json_dict`]); anything else is skipped as other values are.
    fn string_or_json_dict(&mut self) -> Step {
        let open = self.peek_tok()?;
        if !Self::is_punct(&open, b'{') {
            return self.skip_value();
        }
        self.next_tok()?;
        let closed = self.lexer.skip_json_dict();
        if self.io(closed)? {
            return Ok(());
        }
        let end = self.peek_tok()?;
        Err(self.error(
            &end,
            "module_syntax",
            format!(
                "expects '}}' (opened on line {}) before the end of the input",
                open.line
            ),
        ))
    }

    /// `frontend_attributes={name=value, ...}`, each value a string or a JSON
    /// dictionary ([`Self::string_or_json_dict`]).
    fn frontend_attributes(&mut self) -> Step {
        if !Self::is_punct(&self.peek_tok()?, b'{') {
            return self.skip_value();
        }
        self.next_tok()?;
        if self.eat_token(b'}')? {
            return Ok(());
        }
        loop {
            let name = self.next_tok()?;
            if name.kind != Kind::Attr {
                let saw = self.quoted(&name);
                return Err(self.error(
                    &name,
                    "module_syntax",
                    format!("expects a frontend attribute (name=value), saw {saw}"),
                ));
            }
            self.string_or_json_dict()?;
            if !self.list_separator(b'}', "expects ',' or '}' in frontend_attributes")? {
                return Ok(());
            }
        }
    }

    /// Consumes the next token if it is `Punct(byte)`.
    fn eat_token(&mut self, byte: u8) -> Result<bool, Reported> {
        if Self::is_punct(&self.peek_tok()?, byte) {
            self.next_tok()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `attr_name=value`; shape-bearing attributes are read as shapes.
    fn attribute(&mut self) -> Step {
        let token = self.peek_plain()?;
        self.lexer.take(&token);
        if token.kind != Kind::Attr {
            let saw = self.quoted(&token);
            return Err(self.error(
                &token,
                "module_syntax",
                format!("expects an attribute (name=value), saw {saw}"),
            ));
        }
        match self.lexer.text(&token) {
            "backend_config" => return self.string_or_json_dict(),
            "frontend_attributes" => return self.frontend_attributes(),
            name if self.on_instruction.is_some() => {
                if let Some(slot) = call_attribute(name) {
                    return self.call_value(slot);
                }
                if name == "index" && self.opcode == GET_TUPLE_ELEMENT {
                    // Looked at, then skipped as any value is.
                    let value = self.peek_tok()?;
                    self.tuple_index = match value.kind {
                        Kind::Number => self.lexer.text(&value).parse().ok(),
                        _ => None,
                    };
                }
            }
            _ => {}
        }
        if !holds_shape(self.lexer.text(&token)) {
            return if self.lexer.skip_plain_value() {
                Ok(())
            } else {
                self.skip_value()
            };
        }
        let name = self.text(&token);
        match name.as_str() {
            "entry_computation_layout" => self.computation_layout(),
            "outfeed_shape" => self.shape(Role::Attribute { name, index: 0 }),
            "literal" => self.literal(&name, &mut 0, 0),
            "operand_layout_constraints" => {
                self.expect(b'{', "expects a list starting with '{'")?;
                if Self::is_punct(&self.peek_tok()?, b'}') {
                    self.next_tok()?;
                    return Ok(());
                }
                let mut index = 0;
                loop {
                    self.shape(Role::Attribute {
                        name: name.clone(),
                        index,
                    })?;
                    index += 1;
                    if !self.list_separator(b'}', "expects a list to end with '}'")? {
                        return Ok(());
                    }
                }
            }
            _ if self.lexer.skip_plain_value() => Ok(()),
            _ => self.skip_value(),
        }
    }

    /// A `literal=` attribute as XLA's parser reads it: a shape and its value
    /// (`s32[2]{0} {1, 2}`), or a tuple of literals, each with its own shape, commas
    /// between them taken but not required (`( s32[] 1, (pred[] true) )`, `()`). Each
    /// shape is handed on as the attribute's next one (`index`).
    fn literal(&mut self, name: &str, index: &mut usize, depth: usize) -> Step {
        let open = self.peek_tok()?;
        if !Self::is_punct(&open, b'(') {
            self.shape(Role::Attribute {
                name: name.to_string(),
                index: *index,
            })?;
            *index += 1;
            // The value: a number or word, or a bracketed group (`{...}`, `(1, 2)` of a
            // complex number).
            return self.unit();
        }
        if depth >= MAX_NESTING {
            return Err(self.error(
                &open,
                "module_syntax",
                format!("tuple literals nested deeper than {MAX_NESTING} levels"),
            ));
        }
        self.next_tok()?;
        loop {
            if self.eat_token(b')')? {
                return Ok(());
            }
            if self.peek_tok()?.kind == Kind::Eof {
                return self.expect(b')', "expects ')' to close a tuple literal");
            }
            self.literal(name, index, depth + 1)?;
            self.eat_token(b',')?;
        }
    }

    /// `entry_computation_layout={(shape, ...)->shape}`.
    fn computation_layout(&mut self) -> Step {
        self.expect(b'{', "expects '{' at the start of the computation layout")?;
        self.expect(b'(', "expects ( before parameter shape list")?;
        let mut index = 0;
        if Self::is_punct(&self.peek_tok()?, b')') {
            self.next_tok()?;
        } else {
            loop {
                let token = self.peek_tok()?;
                if token.kind == Kind::Label {
                    let saw = self.quoted(&token);
                    return Err(self.error(
                        &token,
                        "not_a_shape",
                        format!("expects a shape, saw {saw} (entry_computation_layout lists shapes without parameter names)"),
                    ));
                }
                self.shape(Role::EntryParameter { index })?;
                index += 1;
                if !self.list_separator(b')', "expects , between parameter shapes")? {
                    break;
                }
                // XLA's parser takes one ',' after the last parameter shape.
                if self.eat_token(b')')? {
                    break;
                }
            }
        }
        let arrow = self.next_tok()?;
        if arrow.kind != Kind::Arrow {
            let saw = self.quoted(&arrow);
            return Err(self.error(
                &arrow,
                "module_syntax",
                format!("expects -> before result shape, saw {saw}"),
            ));
        }
        self.shape(Role::EntryResult)?;
        self.expect(b'}', "expects '}' at the end of computation layouts")
    }

    /// An attribute value: one unit (a token or a bracketed group), then more units
    /// joined to it: bracketed groups (`mesh['a'=2] {'a'}`), `<=` and a unit (iota
    /// lists `[2,2]<=[4]`), `T(...)` (their transpose).
    fn skip_value(&mut self) -> Step {
        self.unit()?;
        self.glued_units().map(|_| ())
    }

    /// The units joined to a value's first (see [`Self::skip_value`]): whether there
    /// were any.
    fn glued_units(&mut self) -> Result<bool, Reported> {
        let mut glued = false;
        loop {
            let token = self.peek_tok()?;
            if matches!(token.kind, Kind::Punct(b'[' | b'{' | b'(')) {
                self.unit()?;
            } else if token.kind == Kind::Leq
                || (token.kind == Kind::Word
                    && self.lexer.text(&token) == "T"
                    && self.lexer.next_byte_after(token.end) == Some(b'('))
            {
                self.next_tok()?;
                self.unit()?;
            } else {
                return Ok(glued);
            }
            glued = true;
        }
    }

    /// The value of an attribute that names called computations (`slot`,
    /// [`call_attribute`]), read as [`Self::skip_value`] reads any value; the names
    /// kept for the instruction when it is one name, or for a list a braced list of
    /// names, with nothing joined to it (as [`call_value_end`] reads them at byte
    /// level).
    fn call_value(&mut self, slot: CallSlot) -> Step {
        let mut sink = CallNames {
            names: &mut self.calls,
            places: &mut self.call_places,
        };
        if self.lexer.skip_plain_call_value(slot, &mut sink) {
            return Ok(());
        }
        let before = self.calls.len();
        let first = self.peek_tok()?;
        let name = |scanner: &Self, token: &Token| {
            let text = scanner.lexer.text(token);
            text.trim_start_matches('%').to_string()
        };
        match (slot, first.kind) {
            (CallSlot::One(place), Kind::Name | Kind::Word) => {
                let text = name(self, &first);
                self.next_tok()?;
                if self.calls.push(&text) {
                    self.call_places.push(place);
                }
            }
            (CallSlot::List, Kind::Punct(b'{')) => {
                self.next_tok()?;
                let mut place = 0;
                loop {
                    let token = self.peek_tok()?;
                    if place == 0 && Self::is_punct(&token, b'}') {
                        self.next_tok()?;
                        break;
                    }
                    if matches!(token.kind, Kind::Name | Kind::Word) {
                        let text = name(self, &token);
                        self.next_tok()?;
                        if self.calls.push(&text) {
                            self.call_places.push(place);
                        }
                        place += 1;
                        if self.eat_token(b',')? {
                            continue;
                        }
                        if self.eat_token(b'}')? {
                            break;
                        }
                    }
                    // Not a list of names: skipped as any value, none kept.
                    self.calls.truncate(before);
                    self.call_places.truncate(before);
                    return self
                        .skip_balanced(first)
                        .and_then(|()| self.glued_units().map(|_| ()));
                }
            }
            _ => return self.skip_value(),
        }
        if self.glued_units()? {
            self.calls.truncate(before);
            self.call_places.truncate(before);
        }
        Ok(())
    }

    fn unit(&mut self) -> Step {
        let token = self.next_tok()?;
        match token.kind {
            Kind::Punct(b'{' | b'(' | b'[') => self.skip_balanced(token),
            Kind::Eof | Kind::Punct(b'}' | b')' | b']' | b',') => {
                let saw = self.quoted(&token);
                Err(self.error(
                    &token,
                    "module_syntax",
                    format!("expects an attribute value, saw {saw}"),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Skips through the bracket that closes `open` (already consumed), across lines,
    /// checking that brackets pair up.
    fn skip_balanced(&mut self, open: Token) -> Step {
        let closer = |b: u8| match b {
            b'{' => b'}',
            b'(' => b')',
            _ => b']',
        };
        let Kind::Punct(first) = open.kind else {
            return Ok(());
        };
        let mut stack = Brackets::default();
        stack.push(closer(first), open.line);
        while let Some((want, opened)) = stack.last() {
            let token = self.next_tok()?;
            match token.kind {
                Kind::Punct(b @ (b'{' | b'(' | b'[')) => stack.push(closer(b), token.line),
                Kind::Punct(b @ (b'}' | b')' | b']')) => {
                    if b != want {
                        return Err(self.error(
                            &token,
                            "module_syntax",
                            format!(
                                "expects '{}' (opened on line {opened}), saw '{}'",
                                char::from(want),
                                char::from(b)
                            ),
                        ));
                    }
                    stack.pop();
                }
                Kind::Eof => {
                    return Err(self.error(
                        &token,
                        "module_syntax",
                        format!(
                            "expects '{}' (opened on line {opened}) before the end of the input",
                            char::from(want)
                        ),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    // ----- shapes -----

    /// XLA's `CanBeShape`: a type word, `(`, or `b(`.
    fn can_be_shape(&self, token: &Token) -> bool {
        match token.kind {
            Kind::Punct(b'(') => true,
            Kind::Word => {
                let text = self.lexer.text(token);
                types::type_from_name(text).is_some()
                    || (text == "b" && self.lexer.next_byte_after(token.end) == Some(b'('))
            }
            _ => false,
        }
    }

    fn unknown_type_word(&mut self, token: &Token, xla: Xla) -> Reported {
        let hint = suggest_type(&self.text(token))
            .map(|t| format!("; did you mean {t}?"))
            .unwrap_or_default();
        let word = self.shown(token);
        let xla = xla.wording(&word);
        self.error(
            token,
            "unknown_type_word",
            format!("{} is not an element type{hint}{xla}", self.quoted(token)),
        )
    }

    /// Reads the shape at the next token and hands it to `on_shape`.
    fn shape(&mut self, role: Role) -> Step {
        let token = self.peek_tok()?;
        if !self.can_be_shape(&token) {
            let xla = match role {
                Role::Operand { .. } => Xla::Operand,
                _ => Xla::PrimitiveType,
            };
            if token.kind == Kind::Word && self.lexer.next_byte_after(token.end) == Some(b'[') {
                return Err(self.unknown_type_word(&token, xla));
            }
            let saw = self.quoted(&token);
            let xla = xla.wording(&self.shown(&token));
            return Err(self.error(
                &token,
                "not_a_shape",
                format!("expects a shape, saw {saw}{xla}"),
            ));
        }
        self.read_shape(token, role)
    }

    /// Reads the shape that starts at `token`, which [`Self::can_be_shape`], and hands
    /// it to `on_shape`.
    fn read_shape(&mut self, token: Token, role: Role) -> Step {
        let mut extent = shape_extent(self.lexer.line(), token.start);
        if let Some(end) = extent {
            if self.layout_may_follow(end)? {
                extent = None;
            }
        }
        if let Some(end) = extent {
            let text = &self.lexer.line()[token.start..end];
            if let Some(known) = self.memo.get(text) {
                self.summary.shapes += 1;
                let site = Site {
                    elided: false,
                    entry: self.in_entry,
                    line: token.line,
                    column: self.lexer.column(token.start),
                    computation: self.computation.as_deref(),
                    instruction: self.instruction.as_deref(),
                    role,
                    text,
                };
                let validating = self.validating;
                hand_on(self.on_shape, &site, known, validating);
                self.lexer.seek(end);
                return Ok(());
            }
        }
        let long = extent.is_some_and(|end| end - token.start >= LONG_TUPLE);
        let tuple = long && self.lexer.line().as_bytes()[token.start] == b'(';
        if tuple && (self.long_tuples_by_leaf || self.eliding_long_tuples) {
            return self.read_long_tuple(token, role);
        }
        // Where the shape ends on its line, while no line is joined to it.
        let mut end = extent;
        let parsed = loop {
            let line = self.lexer.line();
            let result = match self.parse_here(token.start, end) {
                Ok(Here::LongTuple(after)) => return self.hand_on_long_tuple(token, role, after),
                Ok(Here::Whole(parsed)) => Ok(parsed),
                Err(e) => Err(e),
            };
            // A shape that runs past the end of its line (a long tuple written over
            // several lines, a comment that goes on) is read again with the next line
            // joined, and so is one whose layout may start on the next line.
            let go_on = match &result {
                Err(e) => {
                    e.span().start >= line.trim_end().len()
                        || matches!(
                            tail(&line.as_bytes()[e.span().start.min(line.len())..]),
                            Tail::Comment | Tail::Brace
                        )
                }
                Ok((_, after)) => self.layout_may_follow(*after)?,
            };
            if !go_on {
                break result;
            }
            // Lines are joined, each looked at once, until the shape can have ended:
            // cut short, through its open brackets and comments (a line that no shape
            // can go on into stops it); else through lines of nothing but comments.
            // Parsing again after every line took the square of the lines' length.
            let (from, closing) = match &result {
                Err(_) => (token.start, true),
                Ok((_, after)) => (*after, false),
            };
            let mut scan = ShapeLines::default();
            scan.read(&self.lexer.line().as_bytes()[from..]);
            end = None;
            // What the line held before the shape is not the shape's.
            let cap = token.start.saturating_add(MAX_SHAPE_BYTES);
            let joined = loop {
                let before = self.lexer.line().len();
                let extended = self.lexer.extend_line(cap);
                if !self.io(extended)? {
                    break false;
                }
                let content = scan.read(&self.lexer.line().as_bytes()[before..]);
                let done = if closing {
                    (scan.depth == 0 && !scan.in_comment) || scan.foreign
                } else {
                    content
                };
                if done {
                    break true;
                }
            };
            if !joined {
                let again = match self.parse_here(token.start, None) {
                    Ok(Here::LongTuple(after)) => {
                        return self.hand_on_long_tuple(token, role, after)
                    }
                    Ok(Here::Whole(parsed)) => Ok(parsed),
                    Err(e) => Err(e),
                };
                if again.is_err() && self.lexer.line().len() > cap {
                    // Cut short where the join stopped: say why, not what the parse
                    // saw at the cut.
                    let message = format!(
                        "a shape written over several lines may take at most {MAX_SHAPE_BYTES} bytes of text; this one is not closed within them"
                    );
                    return Err(self.error(&token, "hlo_syntax", message));
                }
                break again;
            }
        };
        match parsed {
            Ok((shape, after)) => {
                self.summary.shapes += 1;
                let report = self.validating.then(|| kept_report(&shape)).flatten();
                let known = Known { shape, report };
                let text = self.lexer.line()[token.start..after].trim_end();
                if extent == Some(token.start + text.len()) {
                    self.memo.put(text, &known);
                }
                let site = Site {
                    elided: false,
                    entry: self.in_entry,
                    line: token.line,
                    column: self.lexer.column(token.start),
                    computation: self.computation.as_deref(),
                    instruction: self.instruction.as_deref(),
                    role,
                    text,
                };
                let validating = self.validating;
                hand_on(self.on_shape, &site, &known, validating);
                self.lexer.seek(after);
                Ok(())
            }
            Err(e) => self.syntax_error(&e),
        }
    }
}

impl<R: BufRead> Scanner<'_, R> {
    /// Whether a shape that ends at byte `after` of the current line may take a layout
    /// from the next line: XLA's lexer reads on across line breaks and comments, so
    /// `f32[2]` with `{0}` on the next line, or `f32[2]{` with `0}` on it, is one shape.
    /// Only then (or inside a comment that goes on) is the next line worth joining.
    fn layout_may_follow(&mut self, after: usize) -> Result<bool, Reported> {
        let follows = layout_may_follow(&mut self.lexer, after);
        self.io(follows)
    }

    /// The shape at byte `start` of the current line (lines joined as they are), parsed
    /// whole, or only checked when it is a tuple of [`LONG_TUPLE`] bytes or more that
    /// the scan reads a shape at a time ([`Self::hand_on_long_tuple`]): such a tuple is
    /// not built, whether it parses or is cut short at the line's end (a 10 MB one-line
    /// tuple closed on the next line took 47 times its size). Its length is to `end`
    /// when the caller knows where it ends, else to the end of the line.
    fn parse_here(
        &self,
        start: usize,
        end: Option<usize>,
    ) -> Result<Here, crate::text::ParseError> {
        let line = self.lexer.line();
        let length = end.unwrap_or(line.len()) - start;
        let long = length >= LONG_TUPLE && line.as_bytes().get(start) == Some(&b'(');
        if long && (self.long_tuples_by_leaf || self.eliding_long_tuples) {
            let after =
                crate::text::parse_shape_leaves_at(line, start, self.options, &mut |_, _, _| {})?;
            return Ok(Here::LongTuple(after));
        }
        crate::text::parse_shape_at(line, start, self.options).map(Here::Whole)
    }

    /// [`Self::read_shape`] of a long tuple on one line, a shape at a time: when
    /// validating ([`Self::validating_long_tuples_by_leaf`]), once the whole tuple has
    /// parsed it is read again and each of its shapes handed on with its issues as they
    /// are found; when eliding ([`Self::eliding_long_tuples`]), the tuple is handed on
    /// as its text. A syntax error is all that is said of a tuple that does not parse.
    fn read_long_tuple(&mut self, token: Token, role: Role) -> Step {
        let line = self.lexer.line();
        let parsed =
            crate::text::parse_shape_leaves_at(line, token.start, self.options, &mut |_, _, _| {});
        match parsed {
            Ok(after) => self.hand_on_long_tuple(token, role, after),
            Err(e) => self.syntax_error(&e),
        }
    }

    /// [`Self::read_long_tuple`] of a tuple known to parse, to byte `after`.
    fn hand_on_long_tuple(&mut self, token: Token, role: Role, after: usize) -> Step {
        let line = self.lexer.line();
        let validating = self.long_tuples_by_leaf;
        self.summary.shapes += 1;
        let shell = ShapeProto {
            element_type: crate::proto::PrimitiveType::Tuple as i32,
            ..ShapeProto::default()
        };
        let column = self.lexer.column(token.start);
        let site = |text, elided| Site {
            elided,
            entry: self.in_entry,
            line: token.line,
            column,
            computation: self.computation.as_deref(),
            instruction: self.instruction.as_deref(),
            role: role.clone(),
            text,
        };
        if validating {
            // Read again rather than hold the issues until the tuple is known to parse
            // (a tuple of many warned elements held some 150 bytes an issue).
            let mut tuple = crate::validate::TupleIssues::default();
            let on_shape = &mut *self.on_shape;
            let gate = crate::validate::Options::hlo_text();
            // The same text parses the same again.
            let _ = crate::text::parse_shape_leaves_at(
                line,
                token.start,
                self.options,
                &mut |path, span, leaf| {
                    let text = line.get(span).unwrap_or_default().trim_end();
                    let issues = &mut |each: &mut dyn FnMut(&Issue)| {
                        tuple.each(path, &leaf, gate, &mut |issue| each(&issue));
                    };
                    on_shape(&site(text, false), &shell, Some(issues));
                },
            );
        } else {
            let text = line[token.start..after].trim_end();
            (self.on_shape)(&site(text, true), &shell, None);
        }
        self.lexer.seek(after);
        Ok(())
    }

    /// Reports a shape that does not parse, where the parser stopped.
    fn syntax_error(&mut self, e: &crate::text::ParseError) -> Step {
        let at = e.span().start.min(self.lexer.line().len());
        let (line, column) = (self.lexer.line_of(at), self.lexer.column(at));
        self.problem_at(line, column, "hlo_syntax", e.message().to_string());
        Err(Reported)
    }
}

/// The brackets and comments of a shape written over lines, read a line at a time
/// ([`Scanner::read_shape`]).
#[derive(Default)]
struct ShapeLines {
    /// Brackets open.
    depth: usize,
    /// Inside a `/* */` comment.
    in_comment: bool,
    /// A byte no shape text holds outside comments (`=` but in `<=`, `%`, a quote) or a
    /// bracket closing more than were opened: the shape cannot go on through it.
    foreign: bool,
}

impl ShapeLines {
    /// Reads the next bytes; whether any stands outside comments and blanks.
    fn read(&mut self, bytes: &[u8]) -> bool {
        let mut content = false;
        let mut i = 0;
        while i < bytes.len() {
            if self.in_comment {
                match memchr::memmem::find(&bytes[i..], b"*/") {
                    Some(end) => {
                        self.in_comment = false;
                        i += end + 2;
                    }
                    None => return content,
                }
                continue;
            }
            match bytes[i] {
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    self.in_comment = true;
                    i += 2;
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => return content,
                b if b.is_ascii_whitespace() => {}
                b => {
                    content = true;
                    match b {
                        b'(' | b'[' | b'{' => self.depth += 1,
                        b')' | b']' | b'}' => match self.depth.checked_sub(1) {
                            Some(depth) => self.depth = depth,
                            None => self.foreign = true,
                        },
                        b'=' if i == 0 || bytes[i - 1] != b'<' => self.foreign = true,
                        b'%' | b'"' | b'\'' => self.foreign = true,
                        _ => {}
                    }
                }
            }
            i += 1;
        }
        content
    }
}

/// [`Scanner::layout_may_follow`], on the lexer alone.
fn layout_may_follow<R: BufRead>(lexer: &mut Lexer<R>, after: usize) -> std::io::Result<bool> {
    let line = lexer.line().as_bytes();
    let starts = |head: u8, brace: bool| {
        head == b'\n'
            || head == b'\r'
            || head == b'/'
            || if brace {
                head.is_ascii_digit() || head == b'-' || head == b':'
            } else {
                head == b'{'
            }
    };
    let brace = match tail(&line[after.min(line.len())..]) {
        Tail::Other => return Ok(false),
        Tail::Comment => return Ok(true),
        Tail::Blank => false,
        Tail::Brace => true,
    };
    Ok(lexer
        .next_line_head()?
        .is_some_and(|head| starts(head, brace)))
}

/// What follows a shape to the end of its line, as far as a layout on a later line
/// goes.
enum Tail {
    /// A token that is no layout's start: the shape ends here.
    Other,
    /// Nothing but spaces and comments.
    Blank,
    /// A `{`, then nothing but spaces and comments: a layout only if an integer or `:`
    /// follows, which XLA's lexer looks for past the line break.
    Brace,
    /// A `/*` comment that goes on past the end of the line.
    Comment,
}

fn tail(rest: &[u8]) -> Tail {
    let mut brace = false;
    let mut i = 0;
    loop {
        match rest.get(i) {
            None => break,
            Some(b) if b.is_ascii_whitespace() => i += 1,
            Some(b'/') if rest.get(i + 1) == Some(&b'/') => break,
            Some(b'/') if rest.get(i + 1) == Some(&b'*') => {
                match memchr::memmem::find(&rest[i + 2..], b"*/") {
                    Some(end) => i += 2 + end + 2,
                    None => return Tail::Comment,
                }
            }
            Some(b'{') if !brace => {
                brace = true;
                i += 1;
            }
            Some(_) => return Tail::Other,
        }
    }
    if brace {
        Tail::Brace
    } else {
        Tail::Blank
    }
}

/// What [`Scanner::parse_here`] makes of a shape.
enum Here {
    /// The shape, parsed whole, and the byte after it.
    Whole((ShapeProto, usize)),
    /// A long tuple that parses, to the byte given, not built.
    LongTuple(usize),
}

/// Tuples on one line at least this long are validated a shape at a time when the
/// scanner only hands reports on ([`Scanner::validating_long_tuples_by_leaf`]).
const LONG_TUPLE: usize = crate::LONG_INPUT;

/// Sets a name slot (the computation's or the instruction's) to `text`, reusing the
/// buffer the slot or its `spare` holds.
fn set_name(slot: &mut Option<String>, spare: &mut String, text: &str) {
    let mut name = slot.take().unwrap_or_else(|| std::mem::take(spare));
    name.clear();
    name.push_str(text);
    *slot = Some(name);
}

/// Empties a name slot, keeping its buffer in `spare` for the next name.
fn clear_name(slot: &mut Option<String>, spare: &mut String) {
    if let Some(name) = slot.take() {
        *spare = name;
    }
}

/// Whether the attribute `name` is read as shapes (or may be: `literal=s32[] 1`).
pub(super) fn holds_shape(name: &str) -> bool {
    matches!(
        name,
        "entry_computation_layout" | "outfeed_shape" | "literal" | "operand_layout_constraints"
    )
}

/// The brackets open in a value skipped whole: each one's closer, a byte, and the line
/// it was opened on only where the line changes (ten million `{` on one line took
/// 16 bytes each, nine times the text).
#[derive(Default)]
struct Brackets {
    closers: Vec<u8>,
    /// (how many brackets were open before, line) of each run of brackets opened on
    /// one line.
    lines: Vec<(usize, usize)>,
}

impl Brackets {
    fn push(&mut self, closer: u8, line: usize) {
        if self.lines.last().is_none_or(|&(_, last)| last != line) {
            self.lines.push((self.closers.len(), line));
        }
        self.closers.push(closer);
    }

    /// The innermost open bracket's closer and line.
    fn last(&self) -> Option<(u8, usize)> {
        let closer = *self.closers.last()?;
        let &(_, line) = self.lines.last()?;
        Some((closer, line))
    }

    fn pop(&mut self) {
        self.closers.pop();
        if self
            .lines
            .last()
            .is_some_and(|&(before, _)| before >= self.closers.len())
        {
            self.lines.pop();
        }
    }
}

/// Whether an instruction's operands are a literal (`constant(...)`, `parameter(N)`)
/// rather than operands.
pub(super) fn is_literal_opcode(opcode: &str) -> bool {
    matches!(opcode, "constant" | "parameter")
}

/// What XLA's parser says where a shape was expected and something else stands:
/// appended to our message, so users who search for XLA's error find ours.
#[derive(Clone, Copy)]
enum Xla {
    /// The shape of an instruction's result: XLA reads the word as the opcode.
    Opcode,
    /// An operand's shape: XLA reads the word as an operand or a nested instruction.
    Operand,
    /// A signature, `entry_computation_layout` or attribute shape.
    PrimitiveType,
}

impl Xla {
    fn wording(self, word: &str) -> String {
        match self {
            Xla::Opcode => format!(" (XLA: expects opcode but sees: {word})"),
            Xla::Operand => {
                " (XLA: cannot parse as an instruction name or as a nested instruction)".to_string()
            }
            Xla::PrimitiveType => " (XLA: expected primitive type)".to_string(),
        }
    }
}

/// How deep nested instructions (`add(multiply(...), ...)`) may go: each level is a
/// call of [`Scanner::operands`], so hostile input must not nest without bound.
const MAX_NESTING: usize = 256;

/// How far a shape may run over following lines (bytes of text read for it).
const MAX_SHAPE_BYTES: usize = 1 << 20;

/// The element type a misspelled type word most likely meant: the same word in lower
/// case, or the type name at the smallest edit distance (at most 2).
fn suggest_type(word: &str) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    if types::type_from_name(&lower).is_some() {
        return Some(lower);
    }
    // XLA's names first, then the names numpy and JAX users type (`float32`).
    let names = types::all_names()
        .map(|name| (name, name))
        .chain(ALIASES.iter().copied());
    let mut best: Option<(usize, &'static str)> = None;
    for (spelling, name) in names {
        let d = edit_distance(&lower, spelling);
        if d <= 2 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, name));
        }
    }
    best.map(|(_, name)| name.to_string())
}

/// numpy / JAX / C spellings of element types, and XLA's name for each.
const ALIASES: &[(&str, &str)] = &[
    ("bool", "pred"),
    ("int8", "s8"),
    ("int16", "s16"),
    ("int32", "s32"),
    ("int64", "s64"),
    ("uint8", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("float16", "f16"),
    ("half", "f16"),
    ("float32", "f32"),
    ("float", "f32"),
    ("float64", "f64"),
    ("double", "f64"),
    ("bfloat16", "bf16"),
    ("complex64", "c64"),
    ("complex128", "c128"),
];

fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > 2 || a.len() > 32 {
        return usize::MAX;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::Scanner;
    use crate::text::module;

    /// The memo keeps long texts (tuples of dozens of elements), and never more than
    /// its bound in entries and in text.
    #[test]
    fn the_memo_is_bounded_in_entries_and_in_text() {
        let mut memo = super::Memo::<u32>::new();
        let long = "x".repeat(super::Memo::<u32>::MAX_TEXT);
        memo.put(&long, &1);
        assert_eq!(memo.get(&long), Some(&1));
        memo.put(&format!("{long}y"), &2);
        assert_eq!(
            memo.get(&format!("{long}y")),
            None,
            "longer than one text may be"
        );
        for i in 0..2000u32 {
            let text = format!("{i:0>width$}", width = 10 + (i as usize % 3000));
            memo.put(&text, &i);
            assert_eq!(memo.get(&text), Some(&i));
            assert!(memo.values.len() <= super::Memo::<u32>::MAX_ENTRIES);
            assert!(memo.text_bytes <= super::Memo::<u32>::MAX_TEXT_BYTES);
            let kept: usize = memo.values.keys().map(|k| k.len()).sum();
            assert_eq!(kept, memo.text_bytes);
        }
    }

    /// Everything a scan reports, in order, as text.
    fn transcript(text: &str, whole_lines: bool) -> Vec<String> {
        transcript_of(text.as_bytes(), whole_lines, super::super::lexer::CHUNK)
    }

    /// [`transcript`] of what `reader` gives, read `chunk` bytes of lines at a time.
    fn transcript_of(
        reader: impl std::io::BufRead,
        whole_lines: bool,
        chunk: usize,
    ) -> Vec<String> {
        transcript_with(reader, whole_lines, true, chunk)
    }

    impl<R: std::io::BufRead> Scanner<'_, R> {
        /// The scanner reading whole lines at byte level or not, attribute values at
        /// byte level or token by token, and its input `chunk` bytes at a time.
        fn reading(mut self, (whole_lines, plain_values, chunk): (bool, bool, usize)) -> Self {
            self = self.chunked(chunk);
            if !whole_lines {
                self = self.token_by_token();
            }
            if !plain_values {
                self = self.values_token_by_token();
            }
            self
        }
    }

    /// [`transcript_of`], attribute values read at byte level or token by token.
    fn transcript_with(
        reader: impl std::io::BufRead,
        whole_lines: bool,
        plain_values: bool,
        chunk: usize,
    ) -> Vec<String> {
        let log = std::cell::RefCell::new(Vec::new());
        let mut on_shape = |site: &module::Site<'_>,
                            shape: &crate::proto::ShapeProto,
                            _: Option<&mut super::Issues<'_>>| {
            log.borrow_mut().push(format!("shape {site:?} {shape:?}"));
        };
        let mut on_problem = |finding: crate::report::Finding| {
            log.borrow_mut().push(format!("problem {finding:?}"));
        };
        let mut on_instruction = |site: &module::InstructionSite<'_>| {
            log.borrow_mut().push(format!("instruction {site:?}"));
        };
        let paths = (whole_lines, plain_values, chunk);
        let summary = Scanner::new(reader, &mut on_shape, &mut on_problem)
            .with_instructions(&mut on_instruction)
            .reading(paths)
            .run();
        let mut log = log.into_inner();
        log.push(format!("summary {summary:?}"));
        log
    }

    /// The real modules of the fixtures, and XLA's module dumps.
    fn real_modules() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut texts = Vec::new();
        let mut dirs = vec![root.join("modules"), root.join("dumps")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let name = path.to_string_lossy().into_owned();
                if path.is_dir() {
                    dirs.push(path);
                } else if name.ends_with(".hlo.txt") || name.ends_with("optimizations.txt") {
                    texts.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        texts.sort();
        // What XLA prints more rarely: nested instructions, comments, shapes over
        // lines, attributes with shapes, operand shapes, literals, odd spacing.
        texts.push(
            "HloModule odd, entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}\n\n\
             %c (p: f32[2], q: (f32[2], s32[])) -> f32[2] {\n\
             \x20 %p = f32[2]{0} parameter(0)\n\
             \x20 %q = (f32[2]{0}, /*index=1*/s32[]) parameter(1)\n\
             \x20 %n = f32[2]{0} add(f32[2]{0} %p, f32[2]{0} multiply(%p, %p))\n\
             \x20 %k = s32[3]{0} constant({1, 2, 3}), metadata={op_name=\"a(b)\"}\n\
             \x20 %o = token[] outfeed(%p, %t), outfeed_shape=f32[2]{0}\n\
             \x20 %cc = f32[2]{0} custom-call(%p), custom_call_target=\"x\", operand_layout_constraints={f32[2]{0}}\n\
             \x20 %m = f32[2]{0}\tadd( %p ,%n ) , sharding={devices=[2]<=[2]}, backend_config={\"a\":[1]}\n\
             \x20 %l = f32[2]{0} add(%p, %n) /* a comment */, metadata={}\n\
             \x20 %w = f32[2]{0} add(%p,\n      %n), metadata={}\n\
             \x20 %t = (f32[2]{0},\n   s32[]) tuple(%p, %k)\n\
             \x20 %u = f32[2] add(%p, %n), dimensions={0}\n\
             \x20 ROOT %r = f32[2]{0} add(%m, %l)\n\
             }\n\n\
             ENTRY %e (a: f32[2], b: s32[]) -> f32[2] {\n\
             \x20 %a = f32[2]{0} parameter(0)\n\
             \x20 %b = s32[] parameter(1)\n\
             \x20 %z = (f32[2]{0}, s32[]) tuple(f32[2]{0} %a, s32[] %b)\n\
             \x20 ROOT %call = f32[2]{0} call(%a, %z), to_apply=%c\n\
             }\n"
                .to_string(),
        );
        texts
    }

    /// Lines read in chunks of any size, from a reader that gives any number of bytes
    /// at a time, give the same scan: lines longer than a chunk, shapes over lines
    /// across chunks, lines that are not UTF-8, CRLF, no line break at the end.
    #[test]
    fn any_chunk_size_reads_the_same_lines() {
        let mut inputs: Vec<Vec<u8>> = real_modules().into_iter().map(String::into_bytes).collect();
        let mut odd = b"HloModule m\r\n\r\nENTRY %e (p: f32[2]) -> (f32[2],\n  s32[]) {\n".to_vec();
        odd.extend_from_slice(
            b"  %p = f32[2]{0} parameter(0)\n  %bad = f32[\xff\xfe] add(%p, %p)\n",
        );
        odd.extend_from_slice(
            b"  %q = (f32[2]{0},\n\n   s32[]) tuple(%p, %p), metadata={op_name=\"\xc3\xa9\" x=1}\n",
        );
        odd.extend_from_slice(
            format!(
                "  %long = f32[2]{{0}} add(%p, %p), metadata={{op_name=\"{}\"}}\n",
                "y".repeat(300)
            )
            .as_bytes(),
        );
        odd.extend_from_slice(b"  ROOT %r = (f32[2]{0}, s32[]) tuple(%p, \xe9%p)\n}");
        inputs.push(odd);
        for input in &inputs {
            let reference = transcript_of(&input[..], true, super::super::lexer::CHUNK);
            for chunk in [1, 2, 7, 64, 1000] {
                assert_eq!(
                    transcript_of(&input[..], true, chunk),
                    reference,
                    "chunk {chunk}"
                );
                let reader = std::io::BufReader::with_capacity(3, &input[..]);
                assert_eq!(
                    transcript_of(reader, true, chunk),
                    reference,
                    "chunk {chunk}, 3-byte reads"
                );
            }
        }
        // The odd module's findings: its lines, as counted.
        let last = inputs.last().unwrap();
        let reference = transcript_of(&last[..], true, super::super::lexer::CHUNK);
        let bad: Vec<&String> = reference
            .iter()
            .filter(|l| l.contains("not_utf8"))
            .collect();
        assert_eq!(bad.len(), 2, "{reference:#?}");
        let at = |finding: &str| {
            let line = finding
                .split("line: Some(")
                .nth(1)?
                .split(')')
                .next()?
                .to_string();
            let column = finding
                .split("column: Some(")
                .nth(1)?
                .split(')')
                .next()?
                .to_string();
            Some((line, column))
        };
        let column = "  ROOT %r = (f32[2]{0}, s32[]) tuple(%p, ".len() + 1;
        assert_eq!(at(bad[0]), Some(("6".into(), "14".into())), "{}", bad[0]);
        assert_eq!(
            at(bad[1]),
            Some(("11".into(), column.to_string())),
            "{}",
            bad[1]
        );
    }

    /// Iota lists read at byte level (as attribute values, on whole lines or not)
    /// report exactly what reading every token one by one, values too, reports.
    #[test]
    fn iota_lists_read_as_the_token_path_does() {
        // Iota lists of replica groups, as XLA prints them and bent: mid-line, at the
        // end of a line, spaced, unclosed, glued to other bytes, inside groups.
        let values = [
            "[1,16]<=[16]",
            "[8,2]<=[2,8]T(1,0)",
            "[2,8]<=[16] ",
            "[2,8] <= [16] T(1,0)",
            "[2,8]<=[16]T (1,0)",
            "[2,8]<=16",
            "[2,8]<=[16]x",
            "[2,8]<=[16]T(1,0",
            "[2,8]<[16]",
            "[2,8]{1}(2)[3]",
            "[2,8]<=[16]/*c*/",
            "[2,[8]]<=[[16]]",
            "[2,8]<=[16]}",
            "[]",
            "[",
            "[2,8]\n  <=[16]",
            "[2,8]<=\n[16]",
            "[2,8]<=[16]\n  T(1,0)",
        ];
        let chunk = super::super::lexer::CHUNK;
        let mut problems = 0;
        for value in values {
            for tail in ["", ", dimensions={0}, use_global_device_ids=true"] {
                let text = format!(
                    "HloModule m\n\nENTRY %main (p: f32[16]) -> f32[16] {{\n  \
                     %p = f32[16]{{0}} parameter(0)\n  \
                     %g = f32[16]{{0}} all-gather(%p), channel_id=1, replica_groups={value}{tail}\n  \
                     ROOT %r = f32[16]{{0}} copy(%g)\n}}\n"
                );
                // Every token read one by one, values too.
                let tokens = transcript_with(text.as_bytes(), false, false, chunk);
                problems += tokens.iter().filter(|t| t.starts_with("problem")).count();
                for whole_lines in [true, false] {
                    let plain = transcript_with(text.as_bytes(), whole_lines, true, chunk);
                    assert_eq!(plain, tokens, "{text}whole lines: {whole_lines}");
                }
            }
        }
        assert!(problems > 0);
    }

    /// The computations an instruction calls, read from its attributes alike on every
    /// path (whole lines, tokens, values token by token), in the order of its proto's
    /// `called_computation_ids`; values that are no name (a computation written in
    /// place, a list with anything but names, a name with more joined to it) name none.
    #[test]
    fn calls_are_read_alike_on_every_path_in_proto_order() {
        let cases = [
            ("calls=%fused.1", vec!["fused.1"]),
            ("to_apply=add", vec!["add"]),
            ("condition=%cond, body=%body", vec!["body", "cond"]),
            ("body=%body, condition=%cond", vec!["body", "cond"]),
            ("false_computation=%f, true_computation=%t", vec!["t", "f"]),
            ("scatter=%s, select=%g", vec!["g", "s"]),
            ("branch_computations={%b0, %b1,%b2}", vec!["b0", "b1", "b2"]),
            ("called_computations={}", vec![]),
            ("called_computations={%a}, to_apply=%b", vec!["a", "b"]),
            ("calls=\n    %fused.2", vec!["fused.2"]),
            ("branch_computations={%b0,\n %b1}", vec!["b0", "b1"]),
            ("calls=%fused.1 /* c */", vec!["fused.1"]),
            ("to_apply={\n  %x = f32[] parameter(0)\n}", vec![]),
            ("to_apply={ ROOT %x = f32[] parameter(0) }", vec![]),
            ("branch_computations={%b0, {%b1}}", vec![]),
            ("branch_computations={%b0, %b1,}", vec![]),
            ("branch_computations=%b0", vec![]),
            ("called_computations={%a}[1]", vec![]),
            ("to_apply=%a[1]", vec![]),
            ("to_apply=%a T(1,0)", vec![]),
            ("to_apply=\"add\"", vec![]),
            ("metadata={op_name=\"calls=%x\"}", vec![]),
        ];
        for (attributes, want) in cases {
            let text = format!(
                "HloModule m\n\nENTRY %main (p: f32[16]) -> f32[16] {{\n  \
                 %p = f32[16]{{0}} parameter(0)\n  \
                 ROOT %r = f32[16]{{0}} custom-call(%p), custom_call_target=\"t\", {attributes}\n}}\n"
            );
            let seen = instruction_r_on_every_path(&text, false, |site| site.calls.to_vec());
            assert_eq!(seen, vec![want; 3], "{attributes}");
            // The same line twice: the second time on the whole-line path.
            let twice = format!("{text}\n{text}");
            assert_eq!(
                transcript(&twice, true),
                transcript(&twice, false),
                "{attributes}"
            );
        }
    }

    /// What `of` gives of instruction `%r` of the module `text` read on each path (the
    /// whole line, plain values, tokens), in that order; the scan must succeed, and
    /// find nothing unless `findings`.
    fn instruction_r_on_every_path<T>(
        text: &str,
        findings: bool,
        of: impl Fn(&module::InstructionSite<'_>) -> T,
    ) -> Vec<T> {
        let chunk = super::super::lexer::CHUNK;
        let mut seen = Vec::new();
        for (whole_lines, plain_values) in [(true, true), (false, true), (false, false)] {
            let got = std::cell::RefCell::new(Vec::new());
            let mut on_shape = |_: &module::Site<'_>,
                                _: &crate::proto::ShapeProto,
                                _: Option<&mut super::Issues<'_>>| {};
            let mut on_problem = |f: crate::report::Finding| assert!(findings, "{text}: {f:?}");
            let mut on_instruction = |site: &module::InstructionSite<'_>| {
                if site.name == "r" {
                    got.borrow_mut().push(of(site));
                }
            };
            let summary = Scanner::new(text.as_bytes(), &mut on_shape, &mut on_problem)
                .with_instructions(&mut on_instruction)
                .reading((whole_lines, plain_values, chunk))
                .run();
            assert!(summary.is_ok(), "{text}: {summary:?}");
            let got = got.into_inner();
            assert_eq!(got.len(), 1, "{text}");
            seen.extend(got);
        }
        seen
    }

    /// A get-tuple-element's `index=` is read alike on every path (the whole line, plain
    /// values, tokens), however it is written; a value that is no number, or more than
    /// one, gives none, and so does `index=` on another opcode.
    #[test]
    fn tuple_indices_are_read_alike_on_every_path() {
        let cases = [
            ("get-tuple-element", "index=1", Some(1)),
            (
                "get-tuple-element",
                "index=0, metadata={op_name=\"x\"}",
                Some(0),
            ),
            (
                "get-tuple-element",
                "metadata={op_name=\"index=3\"}, index=2",
                Some(2),
            ),
            ("get-tuple-element", "index=\n    1", Some(1)),
            ("get-tuple-element", "index=1 /* c */", Some(1)),
            (
                "get-tuple-element",
                "index=18446744073709551615",
                Some(u64::MAX),
            ),
            ("get-tuple-element", "index=18446744073709551616", None),
            ("get-tuple-element", "index=-1", None),
            ("get-tuple-element", "index=1x", None),
            ("get-tuple-element", "index=\"1\"", None),
            ("get-tuple-element", "sharding={replicated}", None),
            ("custom-call", "index=1, custom_call_target=\"t\"", None),
        ];
        for (opcode, attributes, want) in cases {
            let text = format!(
                "HloModule m\n\nENTRY %main (p: (f32[2], f32[3])) -> f32[3] {{\n  \
                 %p = (f32[2]{{0}}, f32[3]{{0}}) parameter(0)\n  \
                 ROOT %r = f32[3]{{0}} {opcode}(%p), {attributes}\n}}\n"
            );
            let seen = instruction_r_on_every_path(&text, true, |site| site.tuple_index);
            assert_eq!(seen, [want; 3], "{opcode} {attributes}");
        }
    }

    /// A layout that starts on the line after its shape (XLA's lexer reads across line
    /// breaks) is read alike by the token path and, on a module's second copy, by the
    /// whole-line paths: after a computation's result shape, whose `{` might open the
    /// body; in a tuple; after a comment; and a JSON dictionary over lines.
    #[test]
    fn a_layout_on_the_next_line_is_read_alike_on_both_paths() {
        let modules = [
            "HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n0} {\n  ROOT %x = f32[2]{0} parameter(0)\n}\n",
            "HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  0:S(1)} {\n  ROOT %x = f32[2]{0:S(1)} parameter(0)\n}\n",
            "HloModule m\nENTRY %e (x: (f32[2], f32[])) -> (f32[2], f32[]) {\n  ROOT %x = (f32[2]{\n0}, f32[]) parameter(0)\n}\n",
            "HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  ROOT %x = f32[2] // c\n  /* d\n */ {0} parameter(0), backend_config={\n[}\n}\n",
        ];
        for module in modules {
            let twice = format!("{module}\n{module}");
            let fast = transcript(&twice, true);
            assert_eq!(fast, transcript(&twice, false), "{module}");
            assert!(
                !fast.iter().any(|line| line.starts_with("problem")),
                "{module}: {fast:?}"
            );
            assert_eq!(
                fast.iter().filter(|l| l.starts_with("shape")).count() % 2,
                0
            );
        }
    }

    /// A shape may run over lines for [`super::MAX_SHAPE_BYTES`] of its own text: what its line
    /// held before it does not count (a parameter after a long one in
    /// `entry_computation_layout` took its layout from the next line only while the
    /// line before it was short), and a shape cut short at the cap says so rather than
    /// what the parse saw where the join stopped ("expects ')' at the end of tuple
    /// shape").
    #[test]
    fn a_shape_over_lines_is_capped_by_its_own_length() {
        let pad = " ".repeat(super::MAX_SHAPE_BYTES + 10);
        let after_a_long_line = format!(
            "HloModule m, entry_computation_layout={{({pad}f32[2]\n{{0}})->f32[2]{{0}}}}\n\n\
             ENTRY %e (x: f32[2]) -> f32[2] {{\n  ROOT %x = f32[2]{{0}} parameter(0)\n}}\n"
        );
        let log = transcript(&after_a_long_line, false);
        assert!(!log.iter().any(|l| l.starts_with("problem")), "{log:?}");
        assert_eq!(log.iter().filter(|l| l.starts_with("shape")).count(), 5);
        let too_long = format!(
            "HloModule m\nENTRY %e (x: (f32[2], f32[])) -> (f32[2], f32[]) {{\n  \
             ROOT %x = ({pad}f32[2]{{\n    0}}, f32[]) parameter(0)\n}}\n"
        );
        let log = transcript(&too_long, false);
        let problems: Vec<_> = log.iter().filter(|l| l.starts_with("problem")).collect();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("may take at most 1048576 bytes"),
            "{problems:?}"
        );
    }

    /// The whole-line paths (instructions, computation headers and stack frames read
    /// at byte level) report
    /// exactly what the token path reports: on every real module, and on each with one
    /// line changed (a byte removed, doubled or replaced by one that matters to the
    /// syntax), after the memo has seen the module's shapes once (the module is read
    /// twice in a row, so the second copy takes the whole-line paths).
    #[test]
    fn whole_lines_read_as_the_token_path_does() {
        const BYTES: &[u8] = b" ,()[]{}%=:/*\"'\n\t-<>0a";
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % bound as u64) as usize
        };
        let modules = real_modules();
        assert!(modules.len() >= 20, "{} modules", modules.len());
        let mut runs = 0;
        for text in &modules {
            let twice = format!("{text}\n{text}");
            assert_eq!(transcript(&twice, true), transcript(&twice, false));
            // Where the second copy's instruction, computation header and stack frame
            // lines are.
            let lines: Vec<std::ops::Range<usize>> = twice[text.len() + 1..]
                .split_inclusive('\n')
                .scan(text.len() + 1, |start, line| {
                    let range = *start..*start + line.len();
                    *start = range.end;
                    Some(range)
                })
                .filter(|range| {
                    let line = &twice[range.clone()];
                    line.contains(" = ")
                        || line.starts_with(|c: char| c.is_ascii_digit())
                        || line.trim_end().ends_with('{')
                })
                .collect();
            for _ in 0..150 {
                let mut bytes = twice.clone().into_bytes();
                let line = &lines[next(lines.len())];
                let at = line.start + next(line.len());
                match next(3) {
                    0 => {
                        bytes.remove(at);
                    }
                    1 => bytes.insert(at, bytes[at]),
                    _ => bytes[at] = BYTES[next(BYTES.len())],
                }
                let Ok(changed) = String::from_utf8(bytes) else {
                    continue;
                };
                let fast = transcript(&changed, true);
                let reference = transcript(&changed, false);
                assert_eq!(fast, reference, "changed at byte {at}:\n{changed}");
                runs += 1;
            }
        }
        assert!(runs > 3000, "{runs} runs");
    }

    #[test]
    fn deeply_nested_instructions_are_an_error_not_a_stack_overflow() {
        let text = format!(
            "HloModule m\nENTRY e {{\n  ROOT x = f32[] a({}%p)\n}}\n",
            "op(".repeat(100_000)
        );
        let mut findings = Vec::new();
        let mut check = module::validate_text;
        let summary =
            module::scan_text(text.as_bytes(), &mut check, &mut |f| findings.push(f)).unwrap();
        assert_eq!(summary.errors, 1);
        assert_eq!(
            findings[0].message,
            "instructions nested deeper than 256 levels"
        );
    }
}
