//! `xla-shape shapes`: every shape of a dump, one per line, with where it stands (a
//! committable "layout lock file"). Wiring only: the listing is `xla_shape::guard`'s.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use xla_shape::check::Walk;
use xla_shape::guard::listing::{self, ReadOptions, Source};
use xla_shape::report::Form;

use super::{Failure, HloStyleArg, MessageArg, OutputArg, OutputStream};

/// List every shape of modules, protos and messages, one per line, with where it stands.
#[derive(Debug, Args)]
#[command(
    after_help = "Lines are `FILE: COMPUTATION/INSTRUCTION: SHAPE` for modules (the entry \
computation layout as `entry_computation_layout/parameter N` and `.../result`, signatures as \
`C/signature parameter N (NAME)`, `ENTRY ` before the entry computation) and `FILE: SHAPE` for \
single messages, in the order of the input; directories in sorted order. The listing is a \
snapshot `xla-shape diff` takes as either side.\n\n\
Exit status: 0 listed, 2 some input could not be read (each is said on standard error \
and the others are listed; `-o`'s file is then left as it was); a directory in which the \
walk finds no file is one.\n\n\
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

impl ListFormat {
    /// Writes the line of `entry`, one of `listing`'s shapes, in this format.
    fn write(self, listing: &listing::Listing, entry: &listing::Entry, out: &mut String) {
        match self {
            ListFormat::Text => listing.write_entry_text(entry, out),
            ListFormat::Json => listing.write_entry_json(entry, out),
        }
    }
}

pub fn run(args: ShapesArgs) -> Result<(), Failure> {
    let walk = args.input.walk()?;
    let options = args.input.read_options();
    let format = args.format;
    let mut out = args.output.stream()?;
    let mut text = String::new();
    let mut write = |listing: &listing::Listing, entry: listing::Entry, out: &mut OutputStream| {
        text.clear();
        if format == ListFormat::Text {
            // The shape's text written as it is, not copied (a long tuple's is as
            // large as its input).
            listing.write_entry_head(&entry, &mut text);
            out.write(text.as_bytes());
            out.write(entry.text.as_bytes());
            out.write(b"\n");
            return;
        }
        // One JSON line, serialised into the output (a long tuple's is as large as
        // its input). A line of strings and numbers always serialises.
        let _ = serde_json::to_writer(&mut *out, &listing::JsonLine::new(listing, &entry));
        out.write(b"\n");
    };
    // An input that cannot be read is said at once and the rest are listed (as
    // `validate` and `diff` go on past one); the run then ends with exit 2, and `-o`'s
    // file is left as it was.
    let mut unreadable = Unreadable::default();
    for path in &args.paths {
        if out.failed() {
            // Nothing more can be written: the write error ends the run.
            break;
        }
        if path.as_os_str() == "-" {
            // Module text and shape lines are listed as they are read.
            let stdin = std::io::BufReader::with_capacity(1 << 20, std::io::stdin().lock());
            if let Err(e) = listing::stream_reader(stdin, "<stdin>", &options, &mut |l, e| {
                write(l, e, &mut out);
            }) {
                unreadable.say(e);
            }
            continue;
        }
        // A directory is walked as its files are listed (the walk holds the listings of
        // the directories open on the way down, not every path).
        let mut files = walk.stream_path(path);
        // A file named alone (or the one file of a directory) is written as it is
        // read, whatever its size.
        let first = files.next();
        let second = files.next();
        let alone = matches!(first, Some(Ok(_))) && second.is_none();
        // Files of up to SIDE_BY_SIDE bytes are listed side by side, a batch at a time,
        // each into its own text; a larger one is written as it is read.
        let mut batch: Vec<PathBuf> = Vec::new();
        for found in first.into_iter().chain(second).chain(files) {
            if out.failed() {
                // Nothing more can be written: the write error ends the run.
                break;
            }
            let file = match found {
                Ok(file) => file,
                Err((file, e)) => {
                    // Said after the files before it, to keep the order of the walk.
                    list_side_by_side(&batch, &options, format, &mut out, &mut unreadable);
                    batch.clear();
                    unreadable.say(format_args!("{}: {e}", file.display()));
                    continue;
                }
            };
            let size = std::fs::metadata(&file).map_or(0, |m| m.len());
            if size <= SIDE_BY_SIDE && batch.len() < BATCH && !alone {
                batch.push(file);
                continue;
            }
            list_side_by_side(&batch, &options, format, &mut out, &mut unreadable);
            batch.clear();
            if size <= SIDE_BY_SIDE && !alone {
                batch.push(file);
                continue;
            }
            if let Err(e) =
                listing::stream_path(&file, &file.display().to_string(), &options, &mut |l, e| {
                    write(l, e, &mut out);
                })
            {
                unreadable.say(e);
            }
        }
        list_side_by_side(&batch, &options, format, &mut out, &mut unreadable);
    }
    if unreadable.count == 0 {
        return out.finish();
    }
    match out.replacing() {
        // Dropped, the temporary file goes and the file stays as it was.
        Some(file) => {
            use std::io::Write;
            let count = unreadable.count;
            let inputs = if count == 1 { "input" } else { "inputs" };
            let _ = writeln!(
                std::io::stderr(),
                "xla-shape: {}: not written: {count} {inputs} could not be read",
                file.display()
            );
        }
        None => out.finish()?,
    }
    Err(Failure::Quiet)
}

/// The inputs `shapes` could not read, each said on standard error as it comes.
#[derive(Default)]
struct Unreadable {
    count: usize,
}

impl Unreadable {
    /// Says why an input could not be read, and counts it.
    fn say(&mut self, reason: impl std::fmt::Display) {
        use std::io::Write;
        self.count += 1;
        let _ = writeln!(std::io::stderr(), "xla-shape: {reason}");
    }
}

/// The largest file listed beside others (its text held until its turn to be written:
/// a batch holds at most [`BATCH`] of them).
const SIDE_BY_SIDE: u64 = 4 << 20;

/// The most files listed side by side at once.
const BATCH: usize = 64;

/// Lists `files` on rayon's pool, each into a text of its own, and writes the texts in
/// order; a file that cannot be listed is said in its turn.
fn list_side_by_side(
    files: &[PathBuf],
    options: &ReadOptions,
    format: ListFormat,
    out: &mut OutputStream,
    unreadable: &mut Unreadable,
) {
    use rayon::prelude::*;
    if files.is_empty() || out.failed() {
        // Not even rayon's pool is started (its threads' allocator arenas reserve
        // address space that a large file listed alone could use).
        return;
    }
    let texts: Vec<Result<String, listing::ReadError>> = files
        .par_iter()
        .map(|file| {
            let mut text = String::new();
            listing::stream_path(file, &file.display().to_string(), options, &mut |l, e| {
                format.write(l, &e, &mut text);
            })
            .map(|()| text)
        })
        .collect();
    for text in texts {
        match text {
            Ok(text) => out.write(text.as_bytes()),
            Err(e) => unreadable.say(e),
        }
    }
}
