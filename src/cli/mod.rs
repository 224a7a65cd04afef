//! Argument definitions and dispatch. Exit codes: 0 success, 1 some input is invalid,
//! 2 some input cannot be read or decoded, or the command line is wrong.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use xla_shape::text::HloStyle;
use xla_shape::MessageKind;

mod convert;
mod diff;
mod docs;
mod explain;
mod index;
mod input;
mod relayout;
mod shapes;
mod validate;

/// XLA array shapes and layouts: decode, encode, convert, validate and index them.
#[derive(Debug, Parser)]
#[command(
    name = "xla-shape",
    version,
    propagate_version = true,
    about,
    long_about = None,
    after_help = "Examples:\n  \
        xla-shape convert --from binary --to hlo examples/f32_2x3.binpb\n  \
        xla-shape validate --from hlo-module examples/matmul.hlo.txt\n  \
        xla-shape explain 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'\n  \
        xla-shape index 'f32[3,5]{1,0:T(2,2)}' 2,3\n  \
        xla-shape shapes dump/ -o layouts.lock\n  \
        xla-shape diff layouts.lock dump/\n  \
        xla-shape relayout --shape 'bf16[256,512]{1,0:T(8,128)(2,1)}' --to npy dump.bin -o x.npy\n\n\
        Exit status: 0 success, 1 some input is invalid, 2 some input cannot be read or the \
        command line is wrong. `xla-shape help COMMAND` shows a command's options and examples."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Convert(convert::ConvertArgs),
    Validate(validate::ValidateArgs),
    Index(index::IndexArgs),
    Explain(explain::ExplainArgs),
    Shapes(shapes::ShapesArgs),
    Diff(diff::DiffArgs),
    Relayout(relayout::RelayoutArgs),
    Completions(docs::CompletionsArgs),
    Man(docs::ManArgs),
}

/// `--message`: which top-level message the input holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum MessageArg {
    /// xla.ShapeProto
    #[default]
    Shape,
    /// xla.LayoutProto
    Layout,
    /// xla.ProgramShapeProto
    ProgramShape,
}

impl From<MessageArg> for MessageKind {
    fn from(arg: MessageArg) -> Self {
        match arg {
            MessageArg::Shape => MessageKind::Shape,
            MessageArg::Layout => MessageKind::Layout,
            MessageArg::ProgramShape => MessageKind::ProgramShape,
        }
    }
}

/// `--hlo-style`: which HLO text to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum HloStyleArg {
    /// Exactly what XLA prints (fields XLA ignores are left out, as XLA leaves them out).
    #[default]
    Xla,
    /// The lossless text: parameter names, retired fields as PD(...) etc.; refuses
    /// what cannot read back to the same message.
    Exact,
}

impl From<HloStyleArg> for HloStyle {
    fn from(arg: HloStyleArg) -> Self {
        match arg {
            HloStyleArg::Xla => HloStyle::Xla,
            HloStyleArg::Exact => HloStyle::Exact,
        }
    }
}

/// `--format` of `explain` and `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
    /// Words, for people.
    #[default]
    Text,
    /// One JSON document, for scripts (docs/explain-index-json.md).
    Json,
}

/// `-o/--output`, shared by every command that writes data.
#[derive(Debug, Args)]
pub struct OutputArg {
    /// Write to FILE instead of standard output, atomically: a temporary file in the same
    /// directory is renamed into place, so a failed run leaves FILE as it was (through a
    /// symbolic link, its file is replaced; a device or named pipe is written as it is).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

impl OutputArg {
    /// The file to write, unless the output goes to standard output (no `-o`, or `-o -`).
    pub fn file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| p.as_os_str() != "-")
    }

    /// Writes the whole output, as [`Self::stream`] writes it: to the file atomically,
    /// to a device, pipe or socket as it is, or to standard output.
    pub fn write(&self, bytes: &[u8]) -> Result<(), Failure> {
        let mut stream = self.stream()?;
        stream.write(bytes);
        stream.finish()
    }
}

impl OutputArg {
    /// Writes output held in a [`Spool`](xla_shape::spool::Spool) (in memory, or past a
    /// few megabytes in a temporary file), as [`Self::write`] writes bytes: to the file
    /// atomically, or to standard output.
    pub fn write_spool(&self, spool: xla_shape::spool::Spool) -> Result<(), Failure> {
        let mut stream = self.stream()?;
        let target = match self.file() {
            Some(path) => path.display().to_string(),
            None => "<stdout>".to_string(),
        };
        // A temporary file that cannot be read back is said before anything is
        // written (the destination file is then left as it was).
        spool
            .write_to(&mut stream)
            .map_err(|e| Failure::unreadable(format!("{target}: cannot write: {e}")))?;
        stream.finish()
    }

    /// Output written as it comes: to a temporary file in the same directory, renamed
    /// into place by [`OutputStream::finish`] only once everything is written (on any
    /// failure, or dropped, it leaves the file as it was and the temporary file is
    /// removed; a new file gets the usual permissions, 0666 less the umask, a replaced
    /// file keeps its own); to a device, pipe or socket as it is; or to standard output.
    pub fn stream(&self) -> Result<OutputStream, Failure> {
        let sink = match self.file() {
            Some(path) => {
                let cannot = cannot_write(path);
                match destination(path).map_err(&cannot)? {
                    Destination::Replace(target) => {
                        let (file, tidy) = temporary_beside(&target).map_err(&cannot)?;
                        Sink::File(
                            std::io::BufWriter::with_capacity(1 << 16, file),
                            target,
                            path.to_path_buf(),
                            tidy,
                        )
                    }
                    Destination::Direct => Sink::Direct(
                        std::io::BufWriter::with_capacity(
                            1 << 16,
                            open_direct(path).map_err(cannot)?,
                        ),
                        path.to_path_buf(),
                    ),
                }
            }
            None => Sink::Stdout(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            )),
        };
        Ok(OutputStream { sink, error: None })
    }
}

/// Output written as it comes ([`OutputArg::stream`]).
pub struct OutputStream {
    sink: Sink,
    /// The first write error; later writes are skipped.
    error: Option<std::io::Error>,
}

enum Sink {
    /// A temporary file, the file it replaces (links followed), the path as given, and
    /// the temporary file's name for removal on an interrupt.
    File(
        std::io::BufWriter<tempfile::NamedTempFile>,
        PathBuf,
        PathBuf,
        Tidy,
    ),
    /// A device, pipe or socket, written as it is, and the path as given.
    Direct(std::io::BufWriter<std::fs::File>, PathBuf),
    Stdout(std::io::BufWriter<std::io::Stdout>),
}

impl OutputStream {
    /// Writes `bytes` (an error is kept for [`Self::finish`]).
    pub fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let written = match &mut self.sink {
            Sink::File(file, ..) => file.write_all(bytes),
            Sink::Direct(file, _) => file.write_all(bytes),
            Sink::Stdout(out) => out.write_all(bytes),
        };
        if let Err(e) = written {
            self.error = Some(e);
        }
    }

    /// Whether a write has failed (later writes are skipped; [`Self::finish`] says why).
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The file as given, when the output replaces a file only once it is finished (so
    /// that dropping the stream leaves the file as it was).
    pub fn replacing(&self) -> Option<&Path> {
        match &self.sink {
            Sink::File(_, _, path, _) => Some(path),
            Sink::Direct(..) | Sink::Stdout(_) => None,
        }
    }

    /// Flushes, and renames the file into place. A reader of standard output that has
    /// gone (a broken pipe, as with `| head`) is no failure.
    pub fn finish(self) -> Result<(), Failure> {
        match self.sink {
            Sink::File(file, target, path, _tidy) => {
                let cannot = cannot_write(&path);
                if let Some(e) = self.error {
                    return Err(cannot(e));
                }
                let file = file.into_inner().map_err(|e| cannot(e.into_error()))?;
                file.as_file().sync_all().map_err(&cannot)?;
                file.persist(&target).map_err(|e| cannot(e.error))?;
                Ok(())
            }
            Sink::Direct(file, path) => flushed(file, self.error).map_err(cannot_write(&path)),
            Sink::Stdout(out) => match flushed(out, self.error) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                flushed => flushed.map_err(|e| Failure::unreadable(format!("<stdout>: {e}"))),
            },
        }
    }
}

/// The first write error of a stream written as it is, or else its flush's.
fn flushed<W: Write>(mut out: W, error: Option<std::io::Error>) -> std::io::Result<()> {
    error.map_or_else(|| out.flush(), Err)
}

/// The failure to write `path`, with the system's reason.
fn cannot_write(path: &Path) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| Failure::unreadable(format!("{}: cannot write: {e}", path.display()))
}

impl Write for OutputStream {
    /// Writes all of `bytes` (an error is kept for [`OutputStream::finish`]).
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        OutputStream::write(self, bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The temporary files this run has made and not yet renamed or removed: removed by the
/// handler [`remove_temporary_files_when_interrupted`] starts, so that an interrupted
/// run leaves no `.xla-shape-*.tmp` beside its output.
static TEMPORARY: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// [`TEMPORARY`], held (a thread that panicked holding it left the list whole).
fn temporary_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A temporary file named in [`TEMPORARY`] while this lives.
pub(crate) struct Tidy(PathBuf);

impl Tidy {
    /// Names `path` for removal should the run be interrupted (the handler that
    /// removes it started with the first).
    pub(crate) fn new(path: &Path) -> Self {
        static HANDLER: std::sync::Once = std::sync::Once::new();
        HANDLER.call_once(remove_temporary_files_when_interrupted);
        let mut files = temporary_files();
        files.push(path.to_path_buf());
        Tidy(path.to_path_buf())
    }
}

impl Drop for Tidy {
    fn drop(&mut self) {
        let mut files = temporary_files();
        if let Some(at) = files.iter().rposition(|p| *p == self.0) {
            files.swap_remove(at);
        }
    }
}

/// On Ctrl-C, SIGTERM or SIGHUP: removes the temporary files of [`TEMPORARY`] and exits
/// with 130 (the process was killed on the spot, and a file being written, possibly of
/// gigabytes, stayed beside the output). Where no handler can be set, the signal kills
/// the process as before.
///
/// Started with the first temporary file ([`Tidy::new`]), not for every run: the
/// handler's thread takes a malloc arena of 64 MB of address space, and under an
/// address-space limit (`ulimit -v`) that room was missing from the work (`explain` of
/// a 2.9 MB shape aborted in 150 MB, and ran in 100 MB, where the arena could not be
/// made). A run without one is ended by the signal, as any command is.
fn remove_temporary_files_when_interrupted() {
    let _ = ctrlc::set_handler(|| {
        let files = temporary_files();
        for path in files.iter() {
            let _ = std::fs::remove_file(path);
        }
        eprintln!("xla-shape: interrupted");
        std::process::exit(130);
    });
}

/// Where `-o PATH` is written.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// A regular file, or none yet: replaced by renaming a temporary file onto this
    /// path, the file's own once symbolic links are followed (renamed onto the link, the
    /// temporary file would replace the link, not the file it names).
    Replace(PathBuf),
    /// A device (`/dev/null`, a terminal), a named pipe or a socket (`/dev/stdout`,
    /// `/dev/fd/N`): written as it is. Renamed onto, it would be replaced by a file.
    Direct,
}

/// How `path` is written: see [`Destination`]. A directory is an error.
fn destination(path: &Path) -> std::io::Result<Destination> {
    // Dangling links are followed by hand (to the file the link would create), at most
    // as many as the kernel follows in one look-up.
    let mut target = path.to_path_buf();
    for _ in 0..=40 {
        match std::fs::metadata(&target) {
            Ok(meta) if meta.is_dir() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "is a directory",
                ))
            }
            Ok(meta) if meta.is_file() => {
                let linked = std::fs::symlink_metadata(&target)?.file_type().is_symlink();
                return Ok(Destination::Replace(if linked {
                    std::fs::canonicalize(&target)?
                } else {
                    target
                }));
            }
            Ok(_) => return Ok(Destination::Direct),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let Ok(meta) = std::fs::symlink_metadata(&target) else {
                    return Ok(Destination::Replace(target));
                };
                if !meta.file_type().is_symlink() {
                    return Err(e);
                }
                let link = std::fs::read_link(&target)?;
                target = match target.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Opens a device, pipe or socket to write to.
fn open_direct(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open(path)
}

/// A temporary file in the directory of `path`, with the permissions `path` has (or
/// would get), to be renamed into place; named for removal on an interrupt
/// ([`temporary_in`]).
fn temporary_beside(path: &Path) -> std::io::Result<(tempfile::NamedTempFile, Tidy)> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    #[cfg(unix)]
    let permissions = {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o666, |m| m.permissions().mode() & 0o7777);
        Some(std::fs::Permissions::from_mode(mode))
    };
    #[cfg(not(unix))]
    let permissions = None;
    temporary_in(dir, permissions)
}

/// A temporary file `.xla-shape-*.tmp` in `dir` (with `permissions`, else tempfile's
/// 0600), its path named in [`TEMPORARY`] before the file is made: an interrupt at any
/// point leaves none behind (named once made, a file made just before the signal
/// stayed). The name is the process's, a count and the time's nanoseconds; one taken
/// already is passed over.
pub(crate) fn temporary_in(
    dir: &Path,
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<(tempfile::NamedTempFile, Tidy)> {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut taken = None;
    for _ in 0..64 {
        let count = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!(".xla-shape-{}-{count}-{nanos:08x}.tmp", std::process::id());
        let tidy = Tidy::new(&dir.join(&name));
        // Exactly this name, made only if no file has it (`O_EXCL`).
        let mut builder = tempfile::Builder::new();
        builder.prefix(&name).suffix("").rand_bytes(0);
        if let Some(permissions) = &permissions {
            builder.permissions(permissions.clone());
        }
        match builder.tempfile_in(dir) {
            Ok(file) => return Ok((file, tidy)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => taken = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(taken.unwrap_or_else(|| std::io::Error::other("no temporary file name was free")))
}

/// A failure that ends a command, with the exit code it maps to.
#[derive(Debug)]
pub enum Failure {
    /// Some input is invalid (exit 1); the report has already been printed.
    Invalid,
    /// Input that cannot be read or decoded, or a wrong command line (exit 2).
    Unreadable(String),
    /// Exit 2, with the reasons already written.
    Quiet,
}

impl Failure {
    /// An input that cannot be read or decoded.
    pub fn unreadable(message: impl std::fmt::Display) -> Self {
        Failure::Unreadable(message.to_string())
    }
}

/// Parses the command line, runs the command and maps the outcome to an exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return parse_failure(&e),
    };
    // The commands that run parallel loops (walking directories, checking or listing
    // files side by side, comparing two inputs, moving large arrays).
    if matches!(
        cli.command,
        Command::Validate(_) | Command::Shapes(_) | Command::Diff(_) | Command::Relayout(_)
    ) {
        xla_shape::threads::start();
    }
    let outcome = match cli.command {
        Command::Convert(args) => convert::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Index(args) => index::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Shapes(args) => shapes::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Relayout(args) => relayout::run(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Invalid) => ExitCode::from(1),
        Err(Failure::Quiet) => ExitCode::from(2),
        Err(Failure::Unreadable(message)) => {
            let _ = writeln!(std::io::stderr(), "xla-shape: {message}");
            ExitCode::from(2)
        }
    }
}

/// Says what parsing the command line gave instead of a command: the help or the
/// version (on standard output, exit 0) or a usage error (on standard error, exit 2),
/// as clap does, but with a failure to write said and exit 2: `xla-shape --help >
/// /dev/full` exited 0 with nothing written. A closed pipe is not a failure.
fn parse_failure(e: &clap::Error) -> ExitCode {
    let written = e.print().and_then(|()| {
        std::io::stdout().flush()?;
        std::io::stderr().flush()
    });
    match written {
        // A reader that has gone (`| head`) is no failure, as for every command.
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            let stream = if e.use_stderr() {
                "<stderr>"
            } else {
                "<stdout>"
            };
            let _ = writeln!(std::io::stderr(), "xla-shape: {stream}: {error}");
            ExitCode::from(2)
        }
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    }
}

/// Reads a whole input: a file path, or standard input for `-` or no path. One
/// message is read as [`xla_shape::input::read_message`] reads it (at most 2 GiB,
/// `/dev/zero` refused at once); with `limit`, raw bytes of at most that many.
pub fn read_input(path: Option<&PathBuf>, limit: Option<usize>) -> Result<Vec<u8>, Failure> {
    let read = |reader: &mut dyn std::io::Read, size| match limit {
        Some(limit) => xla_shape::input::read_whole_within(reader, size, limit),
        None => xla_shape::input::read_message(reader, size),
    };
    match path {
        Some(path) if path.as_os_str() != "-" => {
            let failed =
                |e: std::io::Error| Failure::unreadable(format!("{}: {e}", path.display()));
            let mut file = std::fs::File::open(path).map_err(failed)?;
            let size = file.metadata().map_or(0, |m| m.len());
            read(&mut file, size).map_err(failed)
        }
        _ => read(&mut std::io::stdin().lock(), 0)
            .map_err(|e| Failure::unreadable(format!("<stdin>: {e}"))),
    }
}
