//! `xla-shape explain`: what a shape means, in words or as JSON
//! ([`xla_shape::describe`] builds both).

use std::path::PathBuf;

use clap::Args;
use std::io::Write as _;

use xla_shape::describe::{explain, ExplainError, ExplainFormat};

use super::input::{Source, TextForm};
use super::{Failure, FormatArg, HloStyleArg, OutputArg};

/// Say what a shape means: element type, dimensions, layout, sizes, strides.
///
/// Sizes and strides come from the layout engine, which follows XLA's nested tiling;
/// `--format json` gives every fact as data (docs/explain-index-json.md).
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    xla-shape explain 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'\n  \
    xla-shape explain --format json --pretty 'f32[3,5]{1,0:T(2,2)}'\n  \
    xla-shape explain examples/shape.txt    # a file holding one shape")]
pub struct ExplainArgs {
    /// The shape: HLO text (e.g. 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'), a file
    /// holding it, or `-` (or nothing) for standard input.
    shape: Option<PathBuf>,
    /// The shape in HLO text; never read as a path.
    #[arg(long, value_name = "SHAPE", conflicts_with = "shape")]
    text: Option<String>,
    /// Words, or one JSON document.
    #[arg(long, value_enum, default_value_t)]
    format: FormatArg,
    /// Indent JSON output.
    #[arg(long)]
    pretty: bool,
    /// Shape text: XLA's, or the lossless text.
    #[arg(long, value_enum, default_value_t)]
    hlo_style: HloStyleArg,
    #[command(flatten)]
    output: OutputArg,
}

pub fn run(args: ExplainArgs) -> Result<(), Failure> {
    let source = Source::resolve(args.shape.as_deref(), args.text.as_deref(), TextForm::Hlo)?;
    let input = source.read()?;
    let name = &input.name;
    let text = input.text()?.trim();
    let format = match (args.format, args.pretty) {
        (FormatArg::Text, _) => ExplainFormat::Text,
        (FormatArg::Json, false) => ExplainFormat::Json,
        (FormatArg::Json, true) => ExplainFormat::PrettyJson,
    };
    // Every error of an invalid shape on standard error, as it is found.
    let mut stderr = std::io::BufWriter::new(std::io::stderr().lock());
    let explained = explain(text, args.hlo_style.into(), format, &mut |issue| {
        let _ = writeln!(stderr, "xla-shape: {name}: {issue}");
    });
    let _ = stderr.flush();
    drop(stderr);
    match explained {
        Ok(out) => args.output.write_spool(out),
        Err(ExplainError::Syntax(e)) => {
            Err(Failure::unreadable(format!("{name}: {}", e.render(text))))
        }
        Err(ExplainError::Invalid { .. }) => Err(Failure::Invalid),
        Err(e @ ExplainError::Output(_)) => Err(Failure::unreadable(e.to_string())),
    }
}
