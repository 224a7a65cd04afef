//! `xla-shape index`: where elements of a shape live in linear memory
//! ([`xla_shape::describe::locate`]), one result per index asked for.

use std::path::PathBuf;

use clap::Args;
use xla_shape::describe::{locate, locate_linear, IndexJson, Location};
use xla_shape::error::Shown;
use xla_shape::index::{IndexError, LayoutPlan};
use xla_shape::spool::Spool;
use xla_shape::{ArrayShape, Shape};

use super::input::{Source, TextForm};
use super::{Failure, FormatArg, HloStyleArg, OutputArg};

/// Map multi-dimensional indices to linear indices, or back with `--linear`.
///
/// Linear indices count elements (slots) from the start of the buffer, tiles and
/// padding included, following XLA's nested tiling (docs/tiled_layout.md). Give any
/// number of indices; `-` reads them from standard input, one a line. Text output is
/// one result a line; `--format json` gives the linear index, bit and byte offset of
/// each (docs/explain-index-json.md).
#[derive(Debug, Args)]
#[command(
    override_usage = "xla-shape index [OPTIONS] <SHAPE> <INDEX>...\n       \
                      xla-shape index [OPTIONS] --text <SHAPE> <INDEX>...",
    after_help = "Examples:\n  \
    xla-shape index 'f32[3,5]{1,0:T(2,2)}' 2,3          # prints 17\n  \
    xla-shape index 'f32[3,5]{1,0:T(2,2)}' 0,0 1,2 2,4  # prints 0, 5 and 20, one a line\n  \
    xla-shape index 's4[2,3]{1,0:E(4)}' 1,2 --bits      # prints 20\n  \
    xla-shape index 'f32[3,5]{1,0:T(2,2)}' --linear 11  # prints padding\n  \
    printf '0,1\\n2,3\\n' | xla-shape index 'f32[3,5]{1,0:T(2,2)}' - --format json"
)]
pub struct IndexArgs {
    /// The shape: HLO text (e.g. 'f32[3,5]{1,0:T(2,2)}', legacy padding as PD(...)), a
    /// file holding it, or `-` for standard input. With --text, the first index.
    #[arg(value_name = "SHAPE", required_unless_present = "text")]
    shape: Option<PathBuf>,
    /// Indices: `2,3` (also `[2,3]` or `(2, 3)`; empty for a scalar), or with --linear
    /// slot numbers; `-` reads them from standard input, one a line (blank lines and
    /// lines starting with `#` skipped).
    #[arg(value_name = "INDEX", allow_negative_numbers = true)]
    indices: Vec<String>,
    /// The shape in HLO text; never read as a path.
    #[arg(long, value_name = "SHAPE")]
    text: Option<String>,
    /// The indices are linear indices (slots): print the element each holds (I,J,...)
    /// or `padding`.
    #[arg(long)]
    linear: bool,
    /// Print the bit offset (linear index × element bits, E(n) if set) instead.
    #[arg(long, conflicts_with = "linear")]
    bits: bool,
    /// One result a line, or one JSON document with every offset.
    #[arg(long, value_enum, default_value_t)]
    format: FormatArg,
    /// Indent JSON output.
    #[arg(long)]
    pretty: bool,
    /// Shape text in JSON output: XLA's, or the lossless text.
    #[arg(long, value_enum, default_value_t)]
    hlo_style: HloStyleArg,
    #[command(flatten)]
    output: OutputArg,
}

/// One index as given, with the name to put in front of its errors.
struct Request<'a> {
    /// `[2,3]` for an argument, `<stdin>:4` for a line.
    name: String,
    text: &'a str,
}

pub fn run(args: IndexArgs) -> Result<(), Failure> {
    // With --text, every positional argument is an index.
    let mut arguments = Vec::with_capacity(args.indices.len() + 1);
    let shape_arg = match (&args.text, args.shape.as_deref()) {
        (Some(_), Some(first)) => {
            let first = first.to_str().ok_or_else(|| {
                Failure::unreadable(format!("[{}]: not UTF-8", first.to_string_lossy()))
            })?;
            arguments.push(first.to_string());
            None
        }
        (_, shape) => shape,
    };
    arguments.extend(args.indices.iter().cloned());
    let source = Source::resolve(shape_arg, args.text.as_deref(), TextForm::Hlo)?;
    let shape_from_stdin = source.is_stdin();
    let input = source.read()?;
    let name = &input.name;
    let Some(shape) = input.shape_for_array()? else {
        return Err(Failure::unreadable(format!(
            "{name}: {}",
            no_elements("a tuple")
        )));
    };
    let array = array_of(&shape).map_err(|e| Failure::unreadable(format!("{name}: {e}")))?;
    let plan = LayoutPlan::new(array).map_err(|e| Failure::unreadable(format!("{name}: {e}")))?;

    check_arguments(&arguments, shape_from_stdin)?;
    // Each answer is written into the output as it comes (spooled: written only once
    // every index is answered), so that any number of lines costs the memory of one.
    let style = args.hlo_style.into();
    let mut json =
        (args.format == FormatArg::Json).then(|| IndexJson::new(&shape, style, &plan, args.pretty));
    let mut text = Spool::new();
    each_request(&arguments, &mut |request| {
        let named = |message: String| Failure::unreadable(format!("{}: {message}", request.name));
        let location = if args.linear {
            let slot = parse_number(request.text.trim())
                .ok_or_else(|| named(not_a_number(request.text.trim())))?;
            locate_linear(&plan, slot)
        } else {
            let index = parse_index(request.text, plan.rank()).map_err(named)?;
            locate(&plan, &index)
        };
        let location = location.map_err(|e| named(e.to_string()))?;
        match &mut json {
            Some(json) => json.push(&location),
            None => text.push(text_line(&location, &args).as_bytes()),
        }
        Ok(())
    })?;
    args.output.write_spool(match json {
        Some(json) => json.finish(),
        None => text,
    })
}

/// The array of an array or buffer shape; other shapes have no elements to index.
fn array_of(shape: &Shape) -> Result<&ArrayShape, String> {
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => Ok(array),
        other => Err(no_elements(other.kind_phrase())),
    }
}

fn no_elements(kind: &str) -> String {
    format!("{kind} has no elements to index; give an array shape")
}

/// Refuses arguments that give no index, or read standard input twice.
fn check_arguments(arguments: &[String], shape_from_stdin: bool) -> Result<(), Failure> {
    if arguments.is_empty() {
        return Err(Failure::unreadable(
            "give an index I,J,... (or --linear N), or - to read them from standard input",
        ));
    }
    let stdin_reads =
        arguments.iter().filter(|a| *a == "-").count() + usize::from(shape_from_stdin);
    if stdin_reads > 1 {
        return Err(Failure::unreadable(
            "standard input (-) can be read once: for the shape or for the indices",
        ));
    }
    Ok(())
}

/// Hands each index to answer to `answer`, in order: the arguments, with `-` replaced
/// by the lines of standard input, read a line at a time (blank lines and lines
/// starting with `#` skipped). Stops at the first error.
fn each_request(
    arguments: &[String],
    answer: &mut dyn FnMut(Request<'_>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    for argument in arguments {
        if argument != "-" {
            answer(Request {
                name: format!("[{}]", Shown::plain(argument.trim())),
                text: argument,
            })?;
            continue;
        }
        let mut stdin = std::io::stdin().lock();
        let (mut line, mut offset) = (Vec::new(), 0usize);
        for number in 1.. {
            line.clear();
            let read = xla_shape::input::read_line(&mut stdin, &mut line)
                .map_err(|e| Failure::unreadable(format!("<stdin>: cannot read: {e}")))?;
            if read == 0 {
                break;
            }
            let text = std::str::from_utf8(&line).map_err(|e| {
                // Said as of the whole input, where the first bad byte stands.
                let at = offset + e.valid_up_to();
                let what = match e.error_len() {
                    Some(len) => format!("invalid utf-8 sequence of {len} bytes from index {at}"),
                    None => format!("incomplete utf-8 byte sequence from index {at}"),
                };
                Failure::unreadable(format!("<stdin>: not UTF-8 text: {what}"))
            })?;
            offset += read;
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            answer(Request {
                name: format!("<stdin>:{number}"),
                text,
            })?;
        }
    }
    Ok(())
}

/// One line of text output.
fn text_line(location: &Location, args: &IndexArgs) -> String {
    if args.linear {
        match &location.index {
            Some(index) => format!("{}\n", join(index)),
            None => "padding\n".to_string(),
        }
    } else if args.bits {
        format!("{}\n", location.bit_offset)
    } else {
        format!("{}\n", location.linear_index)
    }
}

fn parse_number(s: &str) -> Option<u64> {
    digits_only(s).then(|| s.parse().ok()).flatten()
}

/// Whether `s` is one or more ASCII digits and nothing else.
fn digits_only(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Why `s` is no index [`parse_number`] reads: a number past `u64` (no array holds as
/// many elements as its coordinate, or slot, says) is said as such.
fn not_a_number(s: &str) -> String {
    let shown = Shown::single(s);
    match digits_only(s) {
        true => format!("{shown} is larger than any index (at most {})", u64::MAX),
        false => format!("{shown} is not a non-negative integer"),
    }
}

/// `2,3`, `[2, 3]` or `(2,3)`; empty (or `[]`, `()`) for a scalar. Past `rank`
/// coordinates they are still read (the first that is not a number is the error, as
/// with any line) but not kept: a line of ten million coordinates costs its text, not
/// eight bytes more for each, and is refused for its rank as `locate` would.
fn parse_index(text: &str, rank: usize) -> Result<Vec<u64>, String> {
    let mut text = text.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close)) {
            text = inner.trim();
            break;
        }
    }
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let (mut index, mut got) = (Vec::new(), 0usize);
    for part in text.split(',') {
        let part = part.trim();
        let n = parse_number(part).ok_or_else(|| not_a_number(part))?;
        got += 1;
        if got <= rank {
            index.push(n);
        }
    }
    if got > rank {
        return Err(IndexError::WrongRank { got, rank }.to_string());
    }
    Ok(index)
}

/// The coordinates with commas, written straight into one text (a string for each
/// took some 56 bytes a coordinate at the largest ranks).
fn join(index: &[u64]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(index.len() * 2);
    for (k, i) in index.iter().enumerate() {
        let comma = if k == 0 { "" } else { "," };
        let _ = write!(out, "{comma}{i}");
    }
    out
}
