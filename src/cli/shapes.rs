//! `xla-shape shapes`: every shape of a dump, one per line, with where it stands (a
//! committable "layout lock file"). Wiring only: the listing is `xla_shape::guard`'s.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::check::Walk;
use xla_shape::guard::listing::{self, ReadOptions, Source};
use xla_shape::report::Form;

use super::{Failure, HloStyleArg, MessageArg, OutputArg};

/// List every shape of modules, protos and messages, one per line, with where it stands.
#[derive(Debug, Args)]
#[command(
    after_help = "Lines are `FILE: COMPUTATION/INSTRUCTION: SHAPE` for modules (the entry \
computation layout as `entry_computation_layout/parameter N` and `.../result`, signatures as \
`C/signature parameter N (NAME)`, `ENTRY ` before the entry computation) and `FILE: SHAPE` for \
single messages, in the order of the input; directories in sorted order. The listing is a \
snapshot `xla-shape diff` takes as either side.\n\n\
Exit status: 0 listed, 2 some input could not be read.\n\n\
Examples:\n  xla-shape shapes examples/matmul.hlo.txt\n  \
xla-shape shapes dump/ -o layouts.lock\n  \
xla-shape shapes --format json examples/matmul.hlo.pb"
)]
pub struct ShapesArgs {
    #[command(flatten)]
    pub input: GuardInput,
    /// Text lines, or one JSON object per line (with byte sizes) for scripts.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
    #[command(flatten)]
    output: OutputArg,
    /// Files or directories; `-` reads standard input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

/// Options `shapes` and `diff` share: how to read inputs.
#[derive(Debug, Args)]
pub struct GuardInput {
    /// The form of the inputs (auto: decided per input from its content).
    #[arg(long, value_enum, default_value_t = GuardFrom::Auto)]
    pub from: GuardFrom,
    /// Which message one-message inputs hold; decided from the content when not given.
    #[arg(long, value_enum)]
    pub message: Option<MessageArg>,
    /// The text of shapes: XLA's, or the lossless one.
    #[arg(long, value_enum, default_value_t = HloStyleArg::Xla)]
    pub hlo_style: HloStyleArg,
    /// In directories, read only files matching this glob (repeatable; replaces the
    /// default *.txt *.hlo *.pb *.binpb *.json).
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// In directories, skip files matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
}

impl GuardInput {
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            source: self.from.source(),
            message: self.message.map(Into::into),
            style: self.hlo_style.into(),
        }
    }

    pub fn walk(&self) -> Result<Walk, Failure> {
        Walk::new(&self.include, &self.exclude).map_err(Failure::unreadable)
    }
}

/// `--from` of `shapes` and `diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GuardFrom {
    /// Decide per input from its content.
    Auto,
    /// One serialized message per file.
    Binary,
    /// One message per file in the proto3 JSON mapping.
    Json,
    /// HLO text, one shape or program shape per line.
    Hlo,
    /// A whole HLO module in text form.
    HloModule,
    /// A serialized HloModuleProto (or HloProto, HloSnapshot).
    HloModuleProto,
    /// A listing written by `xla-shape shapes`.
    Listing,
}

impl GuardFrom {
    fn source(self) -> Source {
        match self {
            GuardFrom::Auto => Source::Auto,
            GuardFrom::Binary => Source::Form(Form::Binary),
            GuardFrom::Json => Source::Form(Form::Json),
            GuardFrom::Hlo => Source::Form(Form::Hlo),
            GuardFrom::HloModule => Source::Form(Form::HloModule),
            GuardFrom::HloModuleProto => Source::Form(Form::HloModuleProto),
            GuardFrom::Listing => Source::Listing,
        }
    }
}

/// `--format` of `shapes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// `FILE: LOCATION: SHAPE` lines.
    Text,
    /// One JSON object per line: file, location, computation, instruction, role, shape,
    /// bytes, line, path.
    Json,
}

pub fn run(args: ShapesArgs) -> Result<(), Failure> {
    let walk = args.input.walk()?;
    let options = args.input.read_options();
    let mut listings = Vec::new();
    for path in &args.paths {
        if path.as_os_str() == "-" {
            let bytes = super::read_input(None)?;
            listings.extend(
                listing::read_bytes("<stdin>", &bytes, &options).map_err(Failure::unreadable)?,
            );
            continue;
        }
        let files = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk
                .files(path)
                .map_err(|e| Failure::unreadable(format!("{}: {e}", path.display())))?,
            Ok(_) => vec![path.clone()],
            Err(e) => return Err(Failure::unreadable(format!("{}: {e}", path.display()))),
        };
        let read: Vec<_> = {
            use rayon::prelude::*;
            files
                .par_iter()
                .map(|file| listing::read_path(file, &file.display().to_string(), &options))
                .collect()
        };
        for result in read {
            listings.extend(result.map_err(Failure::unreadable)?);
        }
    }
    let mut out = String::new();
    for listing in &listings {
        match args.format {
            ListFormat::Text => listing.write_text(&mut out),
            ListFormat::Json => listing.write_json_lines(&mut out),
        }
    }
    args.output.write(out.as_bytes())
}
