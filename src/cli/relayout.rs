//! `xla-shape relayout`: move an array's bytes from its layout to another, to an `.npy`
//! file, or from one ([`xla_shape::relayout`] does the work).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{ArgGroup, Args};
use xla_shape::relayout::{npy, Relayout};
use xla_shape::text::parse_layout;
use xla_shape::validate::{validate_shape_with, Options};
use xla_shape::{ArrayShape, Shape};

use super::input::{Input, Source, TextForm};
use super::{Failure, OutputArg};

/// Move an array's bytes between two layouts, or to and from an .npy file.
///
/// IN holds the raw bytes of one array laid out as --shape says: exactly the layout's
/// allocated size, padding included (`xla-shape explain SHAPE` shows it). With --to
/// LAYOUT the output is the same array in LAYOUT, padding written as zeros (or the
/// legacy padding value); with --to npy it is the logical array as an .npy file (C
/// order; bf16 and 8-bit floats as their raw bits in u2/u1, s4 as int8: README
/// "Relayout"). --from-npy reads an .npy file (C or Fortran order, the shape's
/// dimensions and dtype) and writes it laid out as --shape. Nothing is written when the
/// input does not fit. Binary output is not written to a terminal: use -o or a pipe.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("direction").required(true).args(["to", "from_npy"])),
    after_help = "Examples:\n  \
    xla-shape relayout --shape 'bf16[256,512]{1,0:T(8,128)(2,1)}' --to npy dump.bin -o x.npy\n  \
    xla-shape relayout --shape 'bf16[256,512]{1,0:T(8,128)(2,1)}' --from-npy x.npy -o dump.bin\n  \
    xla-shape relayout --shape 'f32[2,3]{1,0}' --to '{0,1:T(8,128)}' examples/f32_2x3.bin -o tiled.bin"
)]
pub struct RelayoutArgs {
    /// The array's shape in HLO text, with the layout of the input (or, with
    /// --from-npy, the layout to write).
    #[arg(long, value_name = "SHAPE")]
    shape: String,
    /// The layout to write (HLO layout text such as '{0,1:T(8,128)}'), or `npy` for the
    /// logical array as an .npy file.
    #[arg(long, value_name = "LAYOUT|npy")]
    to: Option<String>,
    /// The input is an .npy file holding the logical array; write it laid out as --shape.
    #[arg(long)]
    from_npy: bool,
    /// Move the bytes on this many threads (default: every core; arrays under 8 MiB
    /// are moved on one).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    jobs: usize,
    #[command(flatten)]
    output: OutputArg,
    /// The input file; `-` or absent reads standard input.
    input: Option<PathBuf>,
}

pub fn run(args: RelayoutArgs) -> Result<(), Failure> {
    if args.output.file().is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::unreadable(
            "binary output is not written to a terminal: use -o FILE, or a pipe (| xxd)",
        ));
    }
    let shape = array_shape(&args.shape)?;
    let source = Source::resolve(args.input.as_deref(), None, TextForm::None)?;
    let input = source.read_within(input_limit(&shape))?;
    let name = input.name.clone();
    let fail = |e: &dyn std::fmt::Display| Failure::unreadable(format!("{name}: {e}"));
    let relayout = || {
        if args.from_npy {
            return npy::from_npy(&shape, &input.bytes).map_err(|e| fail(&e));
        }
        match args.to.as_deref() {
            Some("npy") => npy::to_npy(&shape, &input.bytes).map_err(|e| fail(&e)),
            Some(layout) => {
                let to = with_layout(&shape, layout)?;
                let relayout = Relayout::new(&shape, &to).map_err(|e| fail(&e))?;
                guard_size(&relayout, input.bytes.len())?;
                relayout.to_vec(&input.bytes).map_err(|e| fail(&e))
            }
            None => Err(Failure::unreadable(
                "give --to LAYOUT, --to npy or --from-npy",
            )),
        }
    };
    // `Relayout::run` moves large arrays on the pool it is called in.
    // 0 (every core) is the global pool, started with as many threads as can be.
    let pool = xla_shape::threads::pool(args.jobs);
    let out = match pool {
        Some(pool) => pool.install(relayout),
        None => relayout(),
    }?;
    args.output.write(&out)
}

/// The most bytes an input for `shape` is read to: its allocated bytes or its
/// elements at 16 bytes each (the widest `.npy` item), whichever is more, and a MiB for
/// an `.npy` header. Past it, an input cannot be the array (an endless one,
/// `/dev/zero`, is refused once that much is read).
fn input_limit(shape: &ArrayShape) -> usize {
    let allocated = xla_shape::index::LayoutPlan::allocated_bytes_of(shape).unwrap_or(0);
    let logical = shape.element_count().unwrap_or(0).saturating_mul(16);
    let limit = allocated.max(logical).saturating_add(1 << 20);
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// `--shape`: one array shape, parsed and validated as `explain` does.
fn array_shape(text: &str) -> Result<ArrayShape, Failure> {
    let input = Input {
        name: "--shape".to_string(),
        bytes: text.as_bytes().to_vec(),
    };
    let not_an_array = |kind: &str| {
        Failure::unreadable(format!(
            "--shape: relayout moves one array, not {kind} shape"
        ))
    };
    match input.shape_for_array()? {
        Some(Shape::Array(array)) => Ok(array),
        Some(other) => Err(not_an_array(other.kind_phrase())),
        None => Err(not_an_array("a tuple")),
    }
}

/// The shape with the layout of `--to`, validated.
fn with_layout(shape: &ArrayShape, text: &str) -> Result<ArrayShape, Failure> {
    let text = text.trim();
    let layout =
        parse_layout(text).map_err(|e| Failure::unreadable(format!("--to: {}", e.render(text))))?;
    let mut proto = xla_shape::proto::ShapeProto::from(shape);
    proto.layout = Some(Box::new(layout));
    match validate_shape_with(&proto, Options::hlo_text()).into_result() {
        Ok(Shape::Array(array)) => Ok(array),
        Ok(_) => Err(Failure::unreadable("--to: not an array layout")),
        Err(e) => {
            let mut message = String::from("--to: the layout does not fit the shape:");
            for issue in e.errors() {
                message.push_str(&format!("\n  {issue}"));
            }
            Err(Failure::unreadable(message))
        }
    }
}

/// Refuses an output absurdly larger than the input (a layout of huge tiles), before
/// anything is allocated: at most 64 times the input, or 1 GiB.
fn guard_size(relayout: &Relayout, input: usize) -> Result<(), Failure> {
    let limit = input.saturating_mul(64).max(1 << 30);
    if relayout.destination_bytes() > limit {
        return Err(Failure::unreadable(format!(
            "--to: {} needs {} bytes, more than 64 times the input: refused",
            Shape::Array(relayout.to_shape().clone()),
            relayout.destination_bytes()
        )));
    }
    Ok(())
}
