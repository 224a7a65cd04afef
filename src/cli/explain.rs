//! `xla-shape explain`: what a shape string means, in words.
//!
//! The output is built line by line from small functions, one per aspect (element
//! type, dimensions, layout order, tiles, the other layout attributes, sizes), so more
//! aspects (strides, a picture) can be added beside them.

use std::fmt::Write as _;

use std::path::PathBuf;

use clap::Args;
use xla_shape::layout::memory_space_name;
use xla_shape::text;
use xla_shape::{ArrayShape, DimSize, Layout, PrimitiveType, Shape, TileDim};

use super::input::{Input, Source, TextForm};
use super::{Failure, OutputArg};

/// Say what a shape string means: element type, dimensions, layout, sizes.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    xla-shape explain 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'\n  \
    xla-shape explain --text 'f32[3,5]{1,0:T(2,2)}'\n  \
    echo 's4[2,3]{1,0:E(4)}' | xla-shape explain -")]
pub struct ExplainArgs {
    /// The shape: HLO text (e.g. 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'), a file
    /// holding it, or `-` (or nothing) for standard input.
    shape: Option<PathBuf>,
    /// The shape in HLO text; never read as a path.
    #[arg(long, value_name = "SHAPE", conflicts_with = "shape")]
    text: Option<String>,
    #[command(flatten)]
    output: OutputArg,
}

pub fn run(args: ExplainArgs) -> Result<(), Failure> {
    let source = Source::resolve(args.shape.as_deref(), args.text.as_deref(), TextForm::Hlo)?;
    let shape = parse(&source.read()?)?;
    let mut out = String::new();
    describe(&shape, "", &mut out);
    args.output.write(out.as_bytes())
}

/// Parses (as XLA's standalone parser: a missing layout is the default one) and
/// validates; a parse error shows the input with a caret, an invalid shape lists
/// every error.
pub fn parse(input: &Input) -> Result<Shape, Failure> {
    let name = &input.name;
    let text = input.text()?.trim();
    let proto = text::parse_shape(text)
        .map_err(|e| Failure::unreadable(format!("{name}: {}", e.render(text))))?;
    let options = xla_shape::validate::Options::hlo_text();
    let validated = xla_shape::validate::validate_shape_with(&proto, options);
    validated.into_result().map_err(|e| {
        let mut stderr = String::new();
        for issue in e.errors() {
            let _ = writeln!(stderr, "xla-shape: {name}: {issue}");
        }
        eprint!("{stderr}");
        Failure::Invalid
    })
}

/// Every line about `shape`, each prefixed by `indent`.
pub fn describe(shape: &Shape, indent: &str, out: &mut String) {
    let _ = writeln!(out, "{indent}{shape}");
    let inner = format!("{indent}  ");
    match shape {
        Shape::Array(array) => describe_array(array, &inner, out),
        Shape::Buffer(array) => {
            let _ = writeln!(out, "{inner}a buffer holding one array:");
            describe_array(array, &inner, out);
        }
        Shape::Token => {
            let _ = writeln!(
                out,
                "{inner}a token: orders side effects, holds no data (0 bytes)"
            );
        }
        Shape::Opaque => {
            let _ = writeln!(
                out,
                "{inner}an opaque value: backend data XLA does not look into"
            );
        }
        Shape::Tuple(elements) => {
            let _ = writeln!(out, "{inner}a tuple of {} element(s):", elements.len());
            for (i, element) in elements.iter().enumerate() {
                let _ = writeln!(out, "{inner}element {i}:");
                describe(element, &format!("{inner}  "), out);
            }
        }
    }
}

fn describe_array(array: &ArrayShape, indent: &str, out: &mut String) {
    element_line(array, indent, out);
    dimension_lines(array, indent, out);
    if let Some(layout) = array.layout() {
        order_line(array, layout, indent, out);
        tile_lines(array, layout, indent, out);
        attribute_lines(layout, indent, out);
    } else {
        let _ = writeln!(out, "{indent}no layout");
    }
    size_lines(array, indent, out);
    super::index::memory_lines(array, indent, out);
}

/// `element type: bf16, 16-bit floating point, 2 bytes per element`.
fn element_line(array: &ArrayShape, indent: &str, out: &mut String) {
    let ty = array.element_type();
    let bits = ty.bit_width().unwrap_or(0);
    let kind = if ty == PrimitiveType::Pred {
        "boolean".to_string()
    } else if ty.is_signed_integral() {
        format!("{bits}-bit signed integer")
    } else if ty.is_unsigned_integral() {
        format!("{bits}-bit unsigned integer")
    } else if ty.is_complex() {
        format!(
            "{bits}-bit complex (real and imaginary {}-bit floats)",
            bits / 2
        )
    } else {
        format!("{bits}-bit floating point")
    };
    let bytes = ty.byte_width().unwrap_or(0);
    let unit = if bytes == 1 { "byte" } else { "bytes" };
    let mut line = format!("{indent}element type: {ty}, {kind}, {bytes} {unit} per element");
    let packed = array.layout().map_or(0, Layout::element_size_in_bits);
    if packed != 0 {
        let _ = write!(
            line,
            " unpacked, {packed} bits per element as laid out (E({packed}))"
        );
    } else if bits < 8 && ty != PrimitiveType::Pred {
        line.push_str(" (not packed: no E(n) in the layout)");
    }
    let _ = writeln!(out, "{line}");
}

fn dimension_name(array: &ArrayShape, dim: usize) -> String {
    match array
        .dimension_letters()
        .and_then(|letters| letters.get(dim))
    {
        Some(letter) => format!("dimension {dim} ({letter})"),
        None => format!("dimension {dim}"),
    }
}

/// One line per dimension: its number, letter and size.
fn dimension_lines(array: &ArrayShape, indent: &str, out: &mut String) {
    let dims = array.dimensions();
    if dims.is_empty() {
        let _ = writeln!(out, "{indent}a scalar: no dimensions, one element");
        return;
    }
    let _ = writeln!(
        out,
        "{indent}{} dimension(s), dimension 0 first:",
        dims.len()
    );
    for (i, size) in dims.iter().enumerate() {
        let size = match size {
            DimSize::Static(n) => n.to_string(),
            DimSize::Bounded(n) => format!("dynamic, at most {n}"),
            DimSize::Unbounded => "dynamic, unbounded".to_string(),
        };
        let _ = writeln!(out, "{indent}  {}: {size}", dimension_name(array, i));
    }
}

/// The memory order from `minor_to_major`.
fn order_line(array: &ArrayShape, layout: &Layout, indent: &str, out: &mut String) {
    let m2m = layout.minor_to_major();
    if m2m.is_empty() {
        return;
    }
    let list = m2m
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let _ = write!(out, "{indent}minor_to_major {{{list}}}: ");
    let names: Vec<String> = m2m.iter().map(|&d| dimension_name(array, d)).collect();
    match names.as_slice() {
        [only] => {
            let _ = write!(out, "{only} is the only one");
        }
        [minor, .., major] => {
            let _ = write!(out, "{minor} varies fastest in memory, {major} slowest");
        }
        [] => {}
    }
    if *layout == Layout::default_for_rank(m2m.len()) {
        out.push_str(" (XLA's default: dimension 0 most major)");
    }
    out.push('\n');
}

/// Each tile: its sizes and which physical dimensions it covers.
fn tile_lines(array: &ArrayShape, layout: &Layout, indent: &str, out: &mut String) {
    for (i, tile) in layout.tiles().iter().enumerate() {
        let dims = tile.dimensions();
        let text = dims
            .iter()
            .map(|d| match d {
                TileDim::Size(n) => n.to_string(),
                TileDim::Combine => "*".to_string(),
            })
            .collect::<Vec<_>>()
            .join(",");
        if i == 0 {
            let covered: Vec<String> = layout
                .minor_to_major()
                .iter()
                .take(dims.len())
                .rev()
                .map(|&d| dimension_name(array, d))
                .collect();
            let _ = write!(
                out,
                "{indent}tile ({text}): the array is cut into {}-dimensional tiles over the {} most minor dimension(s)",
                dims.len(),
                dims.len()
            );
            if !covered.is_empty() {
                let _ = write!(out, " ({})", covered.join(", "));
            }
            out.push_str(", tiles laid out one after another, edges padded");
        } else {
            let _ = write!(
                out,
                "{indent}then tile ({text}): applied again to the most minor dimensions of the tiled shape"
            );
        }
        if dims.contains(&TileDim::Combine) {
            out.push_str("; '*' merges a dimension into the next more minor one");
        }
        out.push('\n');
    }
}

/// L, E, S, SC, M and the retired padding fields.
fn attribute_lines(layout: &Layout, indent: &str, out: &mut String) {
    let tail = layout.tail_padding_alignment_in_elements();
    if tail > 1 {
        let _ = writeln!(
            out,
            "{indent}tail padding L({tail}): after tiling, the element count is rounded up to a multiple of {tail}"
        );
    }
    let space = layout.memory_space();
    if space != 0 {
        let name = memory_space_name(space).unwrap_or("backend specific");
        let _ = writeln!(out, "{indent}memory space S({space}): {name}");
    } else {
        let _ = writeln!(
            out,
            "{indent}memory space 0: {}",
            memory_space_name(0).unwrap_or("")
        );
    }
    for split in layout.split_configs() {
        let indices = split
            .split_indices()
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "{indent}split: physical dimension {} (0 = most major) is split at {indices}",
            split.dimension()
        );
    }
    let prefix = layout.dynamic_shape_metadata_prefix_bytes();
    if prefix != 0 {
        let _ = writeln!(
            out,
            "{indent}M({prefix}): {prefix} bytes of dynamic-size metadata sit in front of the data"
        );
    }
    if let Some(padded) = layout.padded_dimensions() {
        let list = padded
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let _ = writeln!(
            out,
            "{indent}retired padding PD({list}): each dimension padded at its end to these sizes"
        );
    }
}

/// Element count and bytes of the elements (no tiling padding).
fn size_lines(array: &ArrayShape, indent: &str, out: &mut String) {
    match (array.element_count(), array.byte_size()) {
        (Some(count), Some(bytes)) => {
            let _ = writeln!(
                out,
                "{indent}{count} element(s), {bytes} byte(s) of elements (XLA's ByteSizeOf; tiling padding not counted)"
            );
        }
        _ => {
            let _ = writeln!(out, "{indent}size unknown: a dimension is unbounded");
        }
    }
}
