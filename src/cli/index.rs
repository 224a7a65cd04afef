//! `xla-shape index`: where an element of a shape lives in linear memory.

use std::fmt::Write as _;
use std::io::Write as _;

use std::path::PathBuf;

use clap::Args;
use xla_shape::index::LayoutPlan;
use xla_shape::validate::{validate_shape_with, Options};
use xla_shape::{text, ArrayShape, Shape};

use super::input::{Input, Source, TextForm};
use super::{Failure, OutputArg};

/// Map a multi-dimensional index to its linear index, or back with `--linear`.
///
/// Linear indices count elements (slots) from the start of the buffer, tiles and
/// padding included, following XLA's nested tiling (docs/tiled_layout.md).
#[derive(Debug, Args)]
#[command(
    override_usage = "xla-shape index [OPTIONS] <SHAPE> [INDEX]\n       \
                      xla-shape index [OPTIONS] --text <SHAPE> [INDEX]",
    after_help = "Examples:\n  \
    xla-shape index 'f32[3,5]{1,0:T(2,2)}' 2,3          # prints 17\n  \
    xla-shape index 's4[2,3]{1,0:E(4)}' 1,2 --bits      # prints 20\n  \
    xla-shape index 'f32[3,5]{1,0:T(2,2)}' --linear 11  # prints padding"
)]
pub struct IndexArgs {
    /// The shape: HLO text (e.g. 'f32[3,5]{1,0:T(2,2)}', legacy padding as PD(...)), a
    /// file holding it, or `-` for standard input. With --text, the index.
    #[arg(value_name = "SHAPE", required_unless_present = "text")]
    shape: Option<PathBuf>,
    /// The multi-dimensional index, e.g. `2,3` (empty for a scalar).
    #[arg(allow_negative_numbers = true)]
    index: Option<String>,
    /// The shape in HLO text; never read as a path.
    #[arg(long, value_name = "SHAPE")]
    text: Option<String>,
    /// Print the element at this linear index instead (or `padding`).
    #[arg(long, value_name = "N")]
    linear: Option<String>,
    /// Print the bit offset (linear index × element bits, E(n) if set) instead.
    #[arg(long, conflicts_with = "linear")]
    bits: bool,
    #[command(flatten)]
    output: OutputArg,
}

pub fn run(args: IndexArgs) -> Result<(), Failure> {
    // With --text, the first positional argument is the index.
    let (shape_arg, index) = match &args.text {
        Some(_) => {
            if args.index.is_some() {
                return Err(Failure::unreadable(
                    "with --text, give the index alone (the shape is the --text value)",
                ));
            }
            let index = match args.shape.as_deref() {
                None => None,
                Some(arg) => Some(
                    arg.to_str()
                        .ok_or_else(|| bad_number("index", &arg.to_string_lossy()))?
                        .to_string(),
                ),
            };
            (None, index)
        }
        None => (args.shape.as_deref(), args.index.clone()),
    };
    let source = Source::resolve(shape_arg, args.text.as_deref(), TextForm::Hlo)?;
    let shape = read_array(&source.read()?)?;
    let plan = LayoutPlan::new(&shape).map_err(|e| Failure::unreadable(format!("shape: {e}")))?;
    let out = match (&index, &args.linear) {
        (Some(_), Some(_)) => {
            return Err(Failure::unreadable(
                "give an index I,J,... or --linear N, not both",
            ))
        }
        (_, Some(linear)) => {
            let linear =
                parse_number(linear.trim()).ok_or_else(|| bad_number("--linear", linear))?;
            match plan.multi_index(linear) {
                Ok(Some(index)) => join(&index),
                Ok(None) => "padding".to_string(),
                Err(e) => return Err(Failure::unreadable(format!("--linear: {e}"))),
            }
        }
        (Some(index), None) => {
            let index = parse_index(index)?;
            let result = if args.bits {
                plan.bit_offset(&index)
            } else {
                plan.linear_index(&index).map(u128::from)
            };
            result
                .map_err(|e| Failure::unreadable(format!("index: {e}")))?
                .to_string()
        }
        (None, None) => return Err(Failure::unreadable("give an index I,J,... or --linear N")),
    };
    args.output.write(format!("{out}\n").as_bytes())
}

/// Parses and validates a SHAPE argument (HLO text rules, so `*` tiles are accepted)
/// into an array shape; a buffer `b(...)` gives its array.
pub(super) fn read_array(input: &Input) -> Result<ArrayShape, Failure> {
    let name = &input.name;
    let text = input.text()?.trim();
    let proto = text::parse_shape(text)
        .map_err(|e| Failure::unreadable(format!("{name}: {}", e.render(text))))?;
    // A shape that parses but is invalid is invalid input (exit 1), not unreadable.
    let shape = validate_shape_with(&proto, Options::hlo_text())
        .into_result()
        .map_err(|e| {
            let _ = writeln!(
                std::io::stderr(),
                "xla-shape: {name}: the shape is invalid: {e}"
            );
            Failure::Invalid
        })?;
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => Ok(array),
        other => Err(Failure::unreadable(format!(
            "{name}: a {} has no elements to index; give an array shape",
            other.kind_name()
        ))),
    }
}

fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn bad_number(what: &str, value: &str) -> Failure {
    Failure::unreadable(format!("{what}: '{value}' is not a non-negative integer"))
}

fn parse_index(text: &str) -> Result<Vec<u64>, Failure> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|part| parse_number(part.trim()).ok_or_else(|| bad_number("index", part.trim())))
        .collect()
}

fn join(index: &[u64]) -> String {
    let mut out = String::new();
    for (i, e) in index.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{e}");
    }
    out
}

/// The memory part of `explain`: sizes with padding, strides and, for small 2-D shapes,
/// a picture of the memory order (each element's linear index; dimension 0 down,
/// dimension 1 across). One line per fact, each starting with `indent`.
pub(super) fn memory_lines(shape: &ArrayShape, indent: &str, out: &mut String) {
    let plan = match LayoutPlan::new(shape) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = writeln!(out, "{indent}no memory layout: {e}");
            return;
        }
    };
    let bits = plan.element_bits();
    let _ = writeln!(
        out,
        "{indent}allocated: {} slot(s) of {bits} bits, {} byte(s) (legacy padding, tiles and tail padding included)",
        plan.allocated_elements(),
        plan.allocated_bytes()
    );
    let _ = writeln!(
        out,
        "{indent}data: {} slot(s), {} byte(s) up to the end of the last element in memory",
        plan.data_elements(),
        plan.data_bytes()
    );
    let _ = writeln!(
        out,
        "{indent}XLA's ArraySize {} byte(s), ArrayDataSize {} byte(s) (both from the first tile only)",
        plan.xla_array_size(),
        plan.xla_array_data_size()
    );
    match plan.element_strides() {
        Some(strides) => {
            let _ = write!(out, "{indent}strides: [{}] elements", join(&strides));
            match plan.byte_strides() {
                Some(bytes) => {
                    let _ = write!(out, ", [{}] bytes", join(&bytes));
                }
                None => {
                    let _ = write!(out, " (none in bytes: {bits}-bit elements)");
                }
            }
            out.push('\n');
        }
        None => {
            let _ = writeln!(out, "{indent}strides: none (the tiles reorder elements)");
        }
    }
    let dims = plan.dimensions();
    if let [rows, cols] = *dims {
        if (1..=16).contains(&rows) && (1..=16).contains(&cols) {
            let cells: Vec<Vec<String>> = (0..rows)
                .map(|i| {
                    (0..cols)
                        .map(|j| {
                            plan.linear_index(&[i, j])
                                .map_or_else(|_| "?".to_string(), |l| l.to_string())
                        })
                        .collect()
                })
                .collect();
            let width = cells.iter().flatten().map(String::len).max().unwrap_or(1);
            let _ = writeln!(
                out,
                "{indent}memory order (linear index of each element; dimension 0 down, dimension 1 across):"
            );
            for row in cells {
                out.push_str(indent);
                out.push(' ');
                for cell in row {
                    let _ = write!(out, " {cell:>width$}");
                }
                out.push('\n');
            }
        }
    }
}
