//! `explain` of HLO text, written as it is worked out: a tuple of [`STREAMED`] bytes or
//! more is described a shape at a time, so that a one-line tuple of a million shapes
//! (whose description is some fifty times its text) costs the memory of one shape and
//! the output goes to a [`Spool`] (a 17 MB tuple built whole and described took 3 GB).
//!
//! The bytes are those [`describe`](super::describe) and its `Display` or JSON give:
//! each tuple's texts (in the style, and the lossless text when it differs) are
//! printed a shape at a time ahead of its elements, then each element is described
//! (a tuple element of [`STREAMED_ELEMENT`] bytes or more again a shape at a time).

use std::io::Write;

use super::{describe_without_dimensions, shape_lines_made, Lines, ShapeJson, MAX_DEPTH};
use crate::error::Severity;
use crate::proto::ShapeProto;
use crate::spool::Spool;
use crate::text::{self, HloStyle, OutlineElement, ParseError, ParseOptions, TupleText};
use crate::validate::{validate_shape_each, validate_shape_with, Options, TupleIssues};
use crate::{Issue, Shape};

/// Texts of at least this many bytes that are a tuple are described a shape at a time.
pub const STREAMED: usize = crate::LONG_INPUT;

/// Inside a tuple described a shape at a time, a tuple element of at least this many
/// bytes of text is described a shape at a time too; a smaller one is built whole.
pub const STREAMED_ELEMENT: usize = 64 << 10;

/// How [`explain`] writes the description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplainFormat {
    /// Words: the `Display` of [`Description`](super::Description).
    Text,
    /// One JSON document on one line (with a newline after it).
    Json,
    /// One JSON document, indented (with a newline after it).
    PrettyJson,
}

/// Why [`explain`] describes nothing.
#[derive(Debug)]
pub enum ExplainError {
    /// The text is no shape.
    Syntax(ParseError),
    /// The shape is invalid: this many errors, each handed to the caller's callback.
    Invalid {
        /// The number of errors.
        errors: usize,
    },
    /// The output could not be written: a JSON serialisation (which does not happen
    /// for these types) or the temporary file of a text that was spooled.
    Output(String),
}

impl std::fmt::Display for ExplainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExplainError::Syntax(e) => write!(f, "{e}"),
            ExplainError::Invalid { errors } => write!(f, "invalid shape: {errors} errors"),
            ExplainError::Output(e) => write!(f, "output: {e}"),
        }
    }
}

impl std::error::Error for ExplainError {}

/// Describes the shape in HLO `text` (parsed as XLA's standalone parser does: a missing
/// layout is the default one; validated with the HLO text rules) in `style` and
/// `format`: the bytes of [`describe`](super::describe) then its `Display` or its JSON (and a newline),
/// in bounded memory whatever the tuple (see the module docs).
///
/// # Errors
/// The parse error; or, for an invalid shape, [`ExplainError::Invalid`] after every
/// error (in the order the whole validation lists them) was handed to `error`.
pub fn explain(
    text: &str,
    style: HloStyle,
    format: ExplainFormat,
    error: &mut dyn FnMut(&Issue),
) -> Result<Spool, ExplainError> {
    explain_with(text, style, format, error, (STREAMED, STREAMED_ELEMENT))
}

/// [`explain`] with the sizes from which the whole text and a tuple element are
/// described a shape at a time (for the properties that compare the two ways).
#[doc(hidden)]
pub fn explain_with(
    text: &str,
    style: HloStyle,
    format: ExplainFormat,
    error: &mut dyn FnMut(&Issue),
    (streamed, element): (usize, usize),
) -> Result<Spool, ExplainError> {
    let is_tuple = text.trim_start().starts_with('(');
    if text.len() < streamed || !is_tuple {
        let proto = text::parse_shape(text).map_err(ExplainError::Syntax)?;
        let shape = valid(&proto, error)?;
        drop(proto);
        // Written straight into the output, an array's dimensions made as they are
        // written (a rank of hundreds of thousands describes in tens of MB).
        let description = describe_without_dimensions(&shape, style, 0);
        let json = ShapeJson::new(Some(super::VERSION), &description, &shape);
        let mut out = Spool::new();
        match format {
            ExplainFormat::Text => {
                let mut lines = Lines::into_spool(&mut out);
                shape_lines_made(&description, &shape, "", &mut lines);
                lines.finish();
            }
            ExplainFormat::Json => {
                serde_json::to_writer(&mut out, &json).map_err(json_error)?;
            }
            ExplainFormat::PrettyJson => {
                serde_json::to_writer_pretty(&mut out, &json).map_err(json_error)?;
            }
        }
        if format != ExplainFormat::Text {
            out.push(b"\n");
        }
        return Ok(out);
    }
    // Parsed first, so that a syntax error comes alone, as the whole parse gives it.
    let parsed = text::parse_shape_leaves(text, ParseOptions::default(), &mut |_, _, _| {})
        .map_err(ExplainError::Syntax)?;
    if let text::Streamed::Shape(_) = parsed {
        return explain_with(text, style, format, error, (usize::MAX, element));
    }
    let mut tuple = TupleIssues::default();
    let mut errors = 0;
    let _ = text::parse_shape_leaves(text, ParseOptions::default(), &mut |path, _, leaf| {
        tuple.each(path, &leaf, Options::hlo_text(), &mut |issue| {
            if issue.severity() == Severity::Error {
                errors += 1;
                error(&issue);
            }
        });
    });
    if errors > 0 {
        return Err(ExplainError::Invalid { errors });
    }
    let mut writer = Writer {
        style,
        format,
        element,
        out: Spool::new(),
        failed: None,
    };
    writer.tuple(text, 0, "", true);
    if let Some(e) = writer.failed {
        return Err(e);
    }
    if format != ExplainFormat::Text {
        writer.out.push(b"\n");
    }
    Ok(writer.out)
}

/// The shape of a validated text, or its errors handed to `error` as they are found,
/// never held together (a shape of hundreds of thousands of errors is no larger than
/// its text).
fn valid(proto: &ShapeProto, error: &mut dyn FnMut(&Issue)) -> Result<Shape, ExplainError> {
    let mut errors = 0;
    let shape = validate_shape_each(proto, Options::hlo_text(), &mut |issue| {
        if issue.severity() == Severity::Error {
            errors += 1;
            error(&issue);
        }
    });
    shape.ok_or(ExplainError::Invalid { errors })
}

fn json_error(e: serde_json::Error) -> ExplainError {
    ExplainError::Output(format!("JSON: {e}"))
}

/// Writes a description a tuple at a time.
struct Writer {
    style: HloStyle,
    format: ExplainFormat,
    /// Tuple elements of this many bytes or more are described a shape at a time.
    element: usize,
    out: Spool,
    /// The first failure (a JSON serialisation, which does not happen for these types).
    failed: Option<ExplainError>,
}

impl Writer {
    /// Describes the tuple whose (valid) text is `text`, at nesting `depth`, its lines
    /// (text) or its object (JSON) at `indent`; `root` adds the document's version.
    fn tuple(&mut self, text: &str, depth: usize, indent: &str, root: bool) {
        let (shown, lossless, count) = self.texts(text);
        let inner = format!("{indent}  ");
        let described = depth < MAX_DEPTH;
        match self.format {
            ExplainFormat::Text => {
                self.out.push(indent.as_bytes());
                self.copy(shown, false);
                self.out.push(b"\n");
                if let Some(lossless) = lossless {
                    self.out.push(inner.as_bytes());
                    self.out.push(b"lossless text (--hlo-style exact): ");
                    self.copy(lossless, false);
                    self.out
                        .push(b" (XLA's text leaves out what XLA ignores)\n");
                }
                if !described {
                    let line = format!(
                        "{inner}a tuple (its elements are not described: nested deeper than {MAX_DEPTH} levels)\n"
                    );
                    self.out.push(line.as_bytes());
                    return;
                }
                let many = if count == 1 { "element" } else { "elements" };
                let line = format!("{inner}a tuple of {count} {many}:\n");
                self.out.push(line.as_bytes());
            }
            ExplainFormat::Json | ExplainFormat::PrettyJson => {
                let pretty = self.format == ExplainFormat::PrettyJson;
                // `"key": ` before each value; `,` between them.
                let key = |name: &str, first: bool| {
                    let comma = if first { "" } else { "," };
                    match pretty {
                        true => format!("{comma}\n{inner}\"{name}\": "),
                        false => format!("{comma}\"{name}\":"),
                    }
                };
                self.out.push(b"{");
                if root {
                    self.out.push(key("version", true).as_bytes());
                    self.out.push(super::VERSION.to_string().as_bytes());
                }
                self.out.push(key("text", !root).as_bytes());
                self.out.push(b"\"");
                self.copy(shown, true);
                self.out.push(b"\"");
                self.out.push(key("lossless_text", false).as_bytes());
                match lossless {
                    Some(lossless) => {
                        self.out.push(b"\"");
                        self.copy(lossless, true);
                        self.out.push(b"\"");
                    }
                    None => self.out.push(b"null"),
                }
                self.out.push(key("kind", false).as_bytes());
                self.out.push(b"\"tuple\"");
                self.out.push(key("array", false).as_bytes());
                self.out.push(b"null");
                self.out.push(key("elements", false).as_bytes());
                if !described {
                    self.out.push(b"null");
                    self.close_object(indent);
                    return;
                }
                self.out.push(b"[");
            }
        }
        let element_indent = format!("{inner}  ");
        let element = self.element;
        let parsed =
            text::parse_shape_outline(text, ParseOptions::default(), &mut |i, span, part| {
                let Some(source) = text.get(span) else {
                    return;
                };
                match self.format {
                    ExplainFormat::Text => {
                        self.out.push(format!("{inner}element {i}:\n").as_bytes());
                    }
                    ExplainFormat::Json => {
                        if i > 0 {
                            self.out.push(b",");
                        }
                    }
                    ExplainFormat::PrettyJson => {
                        let comma = if i > 0 { "," } else { "" };
                        self.out
                            .push(format!("{comma}\n{element_indent}").as_bytes());
                    }
                }
                let proto = match part {
                    OutlineElement::Tuple if source.len() >= element => {
                        self.tuple(source, depth + 1, &element_indent, false);
                        return;
                    }
                    OutlineElement::Tuple => match text::parse_shape(source) {
                        Ok(proto) => proto,
                        Err(e) => {
                            self.failed.get_or_insert(ExplainError::Syntax(e));
                            return;
                        }
                    },
                    OutlineElement::Shape(proto) => proto,
                };
                match validate_shape_with(&proto, Options::hlo_text()).into_result() {
                    Ok(shape) => self.shape(&shape, depth + 1, &element_indent),
                    Err(e) => {
                        let errors = e.errors().count();
                        self.failed.get_or_insert(ExplainError::Invalid { errors });
                    }
                }
            });
        if let Err(e) = parsed {
            self.failed.get_or_insert(ExplainError::Syntax(e));
        }
        if self.format != ExplainFormat::Text {
            if self.format == ExplainFormat::PrettyJson && count > 0 {
                self.out.push(format!("\n{inner}").as_bytes());
            }
            self.out.push(b"]");
            self.close_object(indent);
        }
    }

    /// Appends a spooled text ([`copy`]), noting a failure.
    fn copy(&mut self, text: Spool, json: bool) {
        if let Err(e) = copy(text, &mut self.out, json) {
            self.failed.get_or_insert(e);
        }
    }

    /// Ends a JSON object whose fields are written, at `indent`.
    fn close_object(&mut self, indent: &str) {
        if self.format == ExplainFormat::PrettyJson {
            self.out.push(format!("\n{indent}").as_bytes());
        }
        self.out.push(b"}");
    }

    /// Describes one shape built whole, at nesting `depth` and `indent`.
    fn shape(&mut self, shape: &Shape, depth: usize, indent: &str) {
        let description = describe_without_dimensions(shape, self.style, depth);
        let json = ShapeJson::new(None, &description, shape);
        match self.format {
            ExplainFormat::Text => {
                let mut lines = Lines::into_spool(&mut self.out);
                shape_lines_made(&description, shape, indent, &mut lines);
                lines.finish();
            }
            ExplainFormat::Json => {
                if let Err(e) = serde_json::to_writer(&mut self.out, &json) {
                    self.failed.get_or_insert(json_error(e));
                }
            }
            ExplainFormat::PrettyJson => match serde_json::to_string_pretty(&json) {
                // JSON strings hold no raw newline: every one is a line break.
                Ok(json) => {
                    let json = json.replace('\n', &format!("\n{indent}"));
                    self.out.push(json.as_bytes());
                }
                Err(e) => {
                    self.failed.get_or_insert(json_error(e));
                }
            },
        }
    }

    /// The texts of the tuple `text` as [`describe`](super::describe) gives them (a shape at a time): the
    /// text in the style, the lossless text when that differs, and the element count.
    fn texts(&self, text: &str) -> (Spool, Option<Spool>, usize) {
        let mut exact = TupleText::display();
        let mut xla = (self.style == HloStyle::Xla).then(|| TupleText::new(HloStyle::Xla));
        let (mut exact_out, mut xla_out) = (Spool::new(), Spool::new());
        let mut differs = false;
        let mut open = Vec::new();
        let mut elements = 0;
        let parsed =
            text::parse_shape_leaves(text, ParseOptions::default(), &mut |path, _, leaf| {
                crate::text::nest_to(&mut open, path, &mut |enter| {
                    for printer in std::iter::once(&mut exact).chain(xla.as_mut()) {
                        if enter {
                            printer.open();
                        } else {
                            printer.close();
                        }
                    }
                });
                // As the whole description prints it: the validated shape's.
                let proto = match validate_shape_with(&leaf, Options::hlo_text()).into_result() {
                    Ok(shape) => ShapeProto::from(&shape),
                    Err(_) => leaf,
                };
                exact.element(&proto);
                let shown = exact.take();
                if let Some(xla) = &mut xla {
                    xla.element(&proto);
                    let printed = xla.take();
                    differs |= printed != shown;
                    xla_out.push(printed.as_bytes());
                }
                exact_out.push(shown.as_bytes());
            });
        if let Ok(text::Streamed::Tuple { elements: count }) = parsed {
            elements = count;
        }
        let exact_rest = exact.finish().unwrap_or_default();
        exact_out.push(exact_rest.as_bytes());
        match xla.map(TupleText::finish) {
            Some(Ok(rest)) if differs => {
                xla_out.push(rest.as_bytes());
                (xla_out, Some(exact_out), elements)
            }
            _ => (exact_out, None, elements),
        }
    }
}

/// Appends the bytes of `spool` to `out`, escaped as inside a JSON string when `json`
/// (as `serde_json` escapes: `"`, `\` and control characters).
///
/// # Errors
/// A failure to read back the temporary file of `spool`.
fn copy(spool: Spool, out: &mut Spool, json: bool) -> Result<(), ExplainError> {
    struct Escaped<'a>(&'a mut Spool);
    impl Write for Escaped<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut start = 0;
            for (i, &b) in bytes.iter().enumerate() {
                let escaped: Option<std::borrow::Cow<'static, str>> = match b {
                    b'"' => Some("\\\"".into()),
                    b'\\' => Some("\\\\".into()),
                    b'\n' => Some("\\n".into()),
                    b'\r' => Some("\\r".into()),
                    b'\t' => Some("\\t".into()),
                    0x08 => Some("\\b".into()),
                    0x0c => Some("\\f".into()),
                    0..=0x1f => Some(format!("\\u{b:04x}").into()),
                    _ => None,
                };
                if let Some(escaped) = escaped {
                    self.0.push(&bytes[start..i]);
                    self.0.push(escaped.as_bytes());
                    start = i + 1;
                }
            }
            self.0.push(&bytes[start..]);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if json {
        spool.write_to(&mut Escaped(out))
    } else {
        spool.write_to(out)
    }
    .map_err(|e| ExplainError::Output(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::super::describe;
    use super::*;

    /// What [`explain_with`] gives: the output, or the error with the issues handed on.
    fn run(text: &str, style: HloStyle, format: ExplainFormat, sizes: (usize, usize)) -> String {
        let mut issues = Vec::new();
        match explain_with(
            text,
            style,
            format,
            &mut |i| issues.push(i.to_string()),
            sizes,
        ) {
            Ok(out) => String::from_utf8(out.into_vec().unwrap()).unwrap(),
            Err(ExplainError::Invalid { errors }) => {
                assert_eq!(errors, issues.len());
                format!("invalid: {issues:?}")
            }
            Err(e) => format!("error: {e}"),
        }
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Shapes XLA's parser read (`fixtures/hlo_shapes.jsonl`), and a few it refuses or
    /// that are invalid, with trivia around some.
    fn pool() -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
        let fixtures = std::fs::read_to_string(path).unwrap();
        let mut pool: Vec<String> = fixtures
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|case| case["ok"] == true)
            .filter_map(|case| case["text"].as_str().map(str::to_string))
            .filter(|text| !text.contains("->"))
            .collect();
        pool.extend(
            [
                "f32[4]{0:PD(8)PV(zero)}",
                "f32[2]{0:S(300)}",
                "f32[2,3]{0,1:PD(3,5)}",
                "token[]",
                "opaque[]",
                "()",
                "( /* empty */ )",
                "f32[<=4,?]",
                "s4[8]{0:E(4)}",
                "f32[2]{0:M(-1)}",
                "f32[2] /* a comment, with (brackets) */",
            ]
            .map(str::to_string),
        );
        pool
    }

    fn tuple(rng: &mut Rng, pool: &[String], depth: usize) -> String {
        let count = rng.below(5);
        let elements: Vec<String> = (0..count)
            .map(|_| {
                if depth < 4 && rng.below(3) == 0 {
                    tuple(rng, pool, depth + 1)
                } else {
                    pool[rng.below(pool.len())].clone()
                }
            })
            .collect();
        let separator = [", ", ",", " ,\n  "][rng.below(3)];
        format!("({})", elements.join(separator))
    }

    #[test]
    fn tuples_described_a_shape_at_a_time_are_described_as_whole() {
        let pool = pool();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let whole = (usize::MAX, usize::MAX);
        for case in 0..300 {
            let mut text = tuple(&mut rng, &pool, 0);
            if case % 50 == 7 {
                // Invalid elements (every error, in order), and a syntax error.
                text = format!("(f32[3]{{0:SC(0:5)}}, {text}, f32[3]{{0:SC(2:1)}})");
            }
            if case % 50 == 9 {
                text = format!("({text}, f32[2]{{1}})");
            }
            for style in [HloStyle::Xla, HloStyle::Exact] {
                for format in [
                    ExplainFormat::Text,
                    ExplainFormat::Json,
                    ExplainFormat::PrettyJson,
                ] {
                    let expected = run(&text, style, format, whole);
                    for sizes in [(0, 0), (0, 16), (0, usize::MAX)] {
                        assert_eq!(
                            run(&text, style, format, sizes),
                            expected,
                            "{text} {style:?} {format:?} {sizes:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn dimensions_made_as_written_are_those_the_description_holds() {
        // `explain` writes an array's dimensions as it makes them; `describe` holds
        // them: the same words and JSON, for arrays, buffers and tuples of them.
        let pool = pool();
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        let tuples = (0..100).map(|_| tuple(&mut rng, &pool, 0));
        let mut arrays = 0;
        for text in pool.iter().cloned().chain(tuples) {
            let Ok(proto) = text::parse_shape(&text) else {
                continue;
            };
            let Ok(shape) = validate_shape_with(&proto, Options::hlo_text()).into_result() else {
                continue;
            };
            arrays += usize::from(shape.as_array().is_some_and(|a| !a.is_scalar()));
            for style in [HloStyle::Xla, HloStyle::Exact] {
                let whole = describe(&shape, style);
                let expected = [
                    (ExplainFormat::Text, whole.to_string()),
                    (
                        ExplainFormat::Json,
                        serde_json::to_string(&whole).unwrap() + "\n",
                    ),
                    (
                        ExplainFormat::PrettyJson,
                        serde_json::to_string_pretty(&whole).unwrap() + "\n",
                    ),
                ];
                for (format, expected) in expected {
                    for sizes in [(usize::MAX, usize::MAX), (0, 0)] {
                        assert_eq!(
                            run(&text, style, format, sizes),
                            expected,
                            "{text} {style:?} {format:?} {sizes:?}"
                        );
                    }
                }
            }
        }
        assert!(arrays > 500, "{arrays}");
    }

    #[test]
    fn tuples_nested_past_the_described_depth_are_described_as_whole() {
        // 300: past the validator's depth, an error.
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 3, 300] {
            let text = format!(
                "({}f32[2]{}, s32[])",
                "(token[], ".repeat(depth),
                ")".repeat(depth)
            );
            for format in [ExplainFormat::Text, ExplainFormat::PrettyJson] {
                let whole = run(&text, HloStyle::Xla, format, (usize::MAX, 0));
                assert_eq!(whole.starts_with("invalid: "), depth == 300, "{whole}");
                assert_eq!(run(&text, HloStyle::Xla, format, (0, 0)), whole);
            }
        }
    }

    #[test]
    fn syntax_errors_come_alone() {
        let text = "(f32[2]{1}, f32[3], f32[";
        let streamed = run(text, HloStyle::Xla, ExplainFormat::Text, (0, 0));
        assert!(streamed.starts_with("error: "), "{streamed}");
        assert_eq!(
            streamed,
            run(text, HloStyle::Xla, ExplainFormat::Text, (usize::MAX, 0))
        );
    }
}
