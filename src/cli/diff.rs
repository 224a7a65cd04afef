//! `xla-shape diff`: a semantic difference of the shapes of two dumps. Wiring only:
//! reading, matching and comparing are `xla_shape::guard`'s.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::guard::diff::{self, ChangeKind};

use super::shapes::GuardInput;
use super::validate::ReportFormat;
use super::{Failure, OutputArg};

/// Compare the shapes of two modules, messages, listings or dump directories.
#[derive(Debug, Args)]
#[command(
    after_help = "OLD and NEW are each a shape, a program shape, a module (text or proto), \
a listing written by `xla-shape shapes`, or a directory (files matched by relative path). \
Computations and instructions are matched by name, and where XLA renumbered names \
(add.12 -> add.13) by position among the same-stem, same-opcode names, or by operands; \
the output notes every pair matched other than by name.\n\n\
Exit status: 0 no difference, 1 some difference, 2 some input could not be read or \
nothing was compared (two directories without a file the walk picks).\n\n\
Examples:\n  xla-shape diff layouts.lock dump/\n  \
xla-shape shapes dump/ | xla-shape diff layouts.lock -\n  \
xla-shape diff --entry-only old/module.txt new/module.txt\n  \
xla-shape diff --ignore memory-space --format sarif old/ new/ > diff.sarif"
)]
pub struct DiffArgs {
    #[command(flatten)]
    input: GuardInput,
    /// How to write the differences.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Compare only the entry computation layout (parameters and result).
    #[arg(long)]
    entry_only: bool,
    /// Leave out a kind of change (repeatable).
    #[arg(long, value_enum, value_name = "KIND")]
    ignore: Vec<KindArg>,
    #[command(flatten)]
    output: OutputArg,
    /// The old input (file or directory; `-` reads standard input).
    old: PathBuf,
    /// The new input (file or directory; `-` reads standard input).
    new: PathBuf,
}

/// `--ignore`: a kind of change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum KindArg {
    /// The element type.
    ElementType,
    /// Dimension sizes.
    Dimensions,
    /// Which dimensions are dynamic.
    Dynamic,
    /// minor_to_major.
    MinorToMajor,
    /// Tiles.
    Tiles,
    /// element_size_in_bits.
    ElementSize,
    /// The memory space S(n).
    MemorySpace,
    /// The tail padding alignment.
    TailPadding,
    /// Split configs.
    SplitConfigs,
    /// Other layout fields.
    LayoutOther,
    /// Array/tuple/token, or the number of tuple elements.
    Structure,
    /// Files, computations, instructions, parameters only in NEW.
    Added,
    /// Files, computations, instructions, parameters only in OLD.
    Removed,
}

impl KindArg {
    fn kind(self) -> ChangeKind {
        let name = self
            .to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        ChangeKind::from_name(&name).unwrap_or(ChangeKind::LayoutOther)
    }
}

pub fn run(args: DiffArgs) -> Result<(), Failure> {
    let walk = args.input.walk()?;
    let read = args.input.read_options();
    let options = diff::Options {
        entry_only: args.entry_only,
        ignore: args.ignore.iter().map(|k| k.kind()).collect(),
    };
    // Standard input (`-`, one side at most) is read from a copy in a temporary file,
    // named `<stdin>`.
    let stdin = |path: &PathBuf| path.as_os_str() == "-";
    if stdin(&args.old) && stdin(&args.new) {
        return Err(Failure::unreadable(
            "OLD and NEW cannot both be standard input (-)",
        ));
    }
    let (copy, _tidy) = match stdin(&args.old) || stdin(&args.new) {
        true => {
            let (copy, tidy) = stdin_copy()?;
            (Some(copy), Some(tidy))
        }
        false => (None, None),
    };
    let side = |path: &PathBuf| match (&copy, stdin(path)) {
        (Some(copy), true) => (copy.path().to_path_buf(), "<stdin>".to_string()),
        _ => (path.clone(), path.display().to_string()),
    };
    let ((old_path, old), (new_path, new)) = (side(&args.old), side(&args.new));
    // Written as each pair is compared: to a temporary file renamed into place, or
    // standard output.
    let mut out = args.output.stream()?;
    let mut errors = std::io::stderr();
    let mut writer = diff::DiffWriter::new(args.format.into(), &old, &new, &mut out);
    let sides = [
        (old_path.as_path(), old.as_str()),
        (new_path.as_path(), new.as_str()),
    ];
    let written = diff::diff_named_each(sides, &read, &walk, &options, &mut |file| {
        writer.file(&file)?;
        if let Some(e) = &file.error {
            if args.format != ReportFormat::Text {
                let _ = writeln!(errors, "xla-shape: {e}");
            }
        }
        Ok(())
    });
    let summary = written
        .and_then(|()| writer.finish())
        .map_err(|e| Failure::unreadable(format!("output: {e}")))?;
    out.finish()?;
    let _ = writeln!(errors, "xla-shape: {summary}");
    match summary.exit_code() {
        0 => Ok(()),
        1 => Err(Failure::Invalid),
        _ => Err(Failure::Quiet),
    }
}

/// Standard input copied to a temporary file (deleted when dropped), for `diff` to read
/// as a file: it may read a side twice (to tell its form, then to list it).
fn stdin_copy() -> Result<(tempfile::NamedTempFile, super::Tidy), Failure> {
    let failed =
        |e: std::io::Error| Failure::unreadable(format!("<stdin>: cannot keep a copy: {e}"));
    // Named for removal should the run be interrupted while it copies or compares.
    let (mut copy, tidy) = super::temporary_in(&std::env::temp_dir(), None).map_err(failed)?;
    let read = std::io::copy(&mut std::io::stdin().lock(), copy.as_file_mut());
    read.map_err(|e| Failure::unreadable(format!("<stdin>: cannot read: {e}")))?;
    copy.as_file_mut().flush().map_err(failed)?;
    Ok((copy, tidy))
}
