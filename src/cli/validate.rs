//! `xla-shape validate`: check shapes, layouts, program shapes and whole modules as XLA
//! would, in files, directories or standard input, and report every problem.
//!
//! Argument parsing and wiring only: deciding forms, checking and the report formats
//! are the library's (`xla_shape::check`, `xla_shape::report`).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::check::{self, Input, Walk};
use xla_shape::guard::Policy;
use xla_shape::report::{self, Form};

use super::{Failure, MessageArg};

/// Validate shapes and modules as XLA would, and report every problem.
#[derive(Debug, Args)]
#[command(
    after_help = "Forms are detected from the content unless --from is given.\n\
Directories are walked recursively in sorted order; by default they yield *.txt, *.hlo, \
*.pb, *.binpb and *.json files, leaving out the reports --xla_dump_to writes beside modules \
(buffer assignment, live ranges, memory usage).\n\n\
Exit status: 0 every input valid, 1 some input invalid (or warnings with --strict), \
2 some input could not be read or is not a form xla-shape reads (a directory in which the \
walk finds no file is one).\n\n\
Examples:\n  xla-shape validate examples/f32_2x3.binpb\n  \
xla-shape validate --format sarif dumps/ > xla-shape.sarif\n  \
xla-shape validate --strict examples/matmul.hlo.txt examples/matmul.hlo.pb\n  \
xla-shape validate --policy examples/policy.toml examples/matmul.hlo.txt"
)]
pub struct ValidateArgs {
    /// The form of the inputs (auto: decided per input from its content).
    #[arg(long, value_enum, default_value_t = FromArg::Auto)]
    from: FromArg,
    /// Which message one-message inputs hold (binary, json, hlo); decided from the
    /// content when not given.
    #[arg(long, value_enum)]
    message: Option<MessageArg>,
    /// Treat warnings as failures (exit 1).
    #[arg(long)]
    strict: bool,
    /// Drop findings with this code (repeatable); see docs/report.md for the codes.
    #[arg(long, value_name = "CODE")]
    allow: Vec<String>,
    /// How to write the report.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// The shape text in JSON and SARIF reports for binary, JSON and module-proto
    /// inputs: XLA's, or the lossless text (text inputs give the shape as written).
    #[arg(long, value_enum, default_value_t)]
    hlo_style: super::HloStyleArg,
    /// In directories, check only files matching this glob (repeatable; replaces the
    /// default *.txt *.hlo *.pb *.binpb *.json).
    #[arg(long, value_name = "GLOB")]
    include: Vec<String>,
    /// In directories, skip files matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Also check every input against this layout policy (TOML; see
    /// examples/policy.toml): violations are errors with `policy.<rule>` codes.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Check this many files at once (default: every core).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    jobs: usize,
    /// Files or directories; `-` or none reads standard input.
    paths: Vec<PathBuf>,
}

/// `--from` of `validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FromArg {
    /// Decide per input from its content (see docs/report.md).
    Auto,
    /// One serialized message per file, exactly its bytes.
    Binary,
    /// One message per file in the proto3 JSON mapping.
    Json,
    /// HLO text, one shape, layout or program shape per line.
    Hlo,
    /// A whole HLO module in text form: every shape in it.
    HloModule,
    /// A serialized HloModuleProto (or HloProto, HloSnapshot): every shape in it.
    HloModuleProto,
}

impl FromArg {
    fn form(self) -> Option<Form> {
        match self {
            FromArg::Auto => None,
            FromArg::Binary => Some(Form::Binary),
            FromArg::Json => Some(Form::Json),
            FromArg::Hlo => Some(Form::Hlo),
            FromArg::HloModule => Some(Form::HloModule),
            FromArg::HloModuleProto => Some(Form::HloModuleProto),
        }
    }
}

/// How `validate` writes its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// `FILE:LINE:COLUMN: error[CODE]: PATH: message`, one line per finding.
    Text,
    /// One versioned JSON document for the whole run.
    Json,
    /// GitHub Actions workflow commands (`::error file=...::...`).
    Github,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
}

impl From<ReportFormat> for report::Format {
    fn from(format: ReportFormat) -> Self {
        match format {
            ReportFormat::Text => report::Format::Text,
            ReportFormat::Json => report::Format::Json,
            ReportFormat::Github => report::Format::Github,
            ReportFormat::Sarif => report::Format::Sarif,
        }
    }
}

pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    for code in &args.allow {
        if report::codes::lookup(code).is_none() {
            return Err(Failure::unreadable(format!(
                "--allow {}: no such code (docs/report.md lists them)",
                xla_shape::error::Shown::plain(code)
            )));
        }
    }
    let walk = Walk::new(&args.include, &args.exclude).map_err(Failure::unreadable)?;
    let policy = match &args.policy {
        Some(path) => Some(std::sync::Arc::new(
            Policy::load(path).map_err(|e| Failure::unreadable(format!("policy {e}")))?,
        )),
        None => None,
    };
    let options = check::Options {
        from: args.from.form(),
        message: args.message.map(Into::into),
        allow: args.allow.clone(),
        hlo_style: args.hlo_style.into(),
        policy,
    };
    let stdin_only = args.paths.is_empty() || args.paths.iter().all(|p| p.as_os_str() == "-");
    // Directories are walked as their files are checked (a walk holds the listings of
    // the directories open on the way down, not every path).
    let mut inputs: Box<dyn Iterator<Item = Input> + Send> = if stdin_only {
        Box::new(std::iter::once(Input::Stdin))
    } else {
        if args.paths.iter().any(|p| p.as_os_str() == "-") {
            return Err(Failure::unreadable(
                "'-' (standard input) cannot be mixed with paths",
            ));
        }
        Box::new(check::expand_iter(&args.paths, &walk))
    };
    let first = inputs.next().ok_or_else(|| {
        Failure::unreadable(
            "no file to check: the directories hold no file the walk picks (see --include)",
        )
    })?;
    let inputs = std::iter::once(first).chain(inputs);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut errors = std::io::stderr();
    // Each input's report is written as soon as it and those before it are checked;
    // should standard output close early, the rest are still checked for the status.
    let mut writer = report::Writer::new(args.format.into(), args.strict, &mut out, &mut errors);
    let mut summary = report::Summary::default();
    let mut closed = false;
    let checked = check::check_each_of(inputs, &options, args.jobs, |file| {
        summary.add(&file, args.strict);
        if !closed {
            match writer.file(&file) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => closed = true,
                other => other?,
            }
        }
        Ok(())
    });
    let written = checked
        .and_then(|()| {
            if closed {
                Ok(())
            } else {
                writer.finish().map(drop)
            }
        })
        .and_then(|()| out.flush());
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(Failure::unreadable(format!("<stdout>: {e}"))),
    }
    let _ = writeln!(errors, "xla-shape: {summary}");
    match summary.exit_code() {
        report::EXIT_OK => Ok(()),
        report::EXIT_INVALID => Err(Failure::Invalid),
        _ => Err(Failure::Quiet),
    }
}
