//! `xla-shape validate`: check shapes, layouts and program shapes as XLA would, and
//! report every problem with its field path.
//!
//! Output (stdout), one line per problem:
//! - `text` (default): `FILE: PATH: message` for an error and `FILE: PATH: warning: message`
//!   for a warning (module scans: `FILE:LINE:COLUMN: message`, `FILE:LINE:COLUMN: warning:
//!   message`); nothing for a clean input. An
//!   input that cannot be read or decoded goes to stderr as `xla-shape: FILE: ...`.
//! - `json`: one report, `{"valid": bool, "inputs": [{"file", "status":
//!   "valid"|"invalid"|"unreadable", "errors", "warnings", "error"?, "problems":
//!   [{"severity", "path", "code", "message", "line"?, "column"?, "shape"?}]}]}`.
//! - `github`: workflow commands, `::error file=FILE::PATH: message` and
//!   `::warning file=FILE::PATH: message` (with `line=` and `col=` for module scans).
//!
//! Exit code: 0 when every input is valid, 1 when some input is invalid (or has
//! warnings under `--strict`), 2 when some input cannot be read or decoded at all.

use std::fmt::Write as _;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use xla_shape::text::{self, module};
use xla_shape::validate::{validate_decoded, validate_message, Options};
use xla_shape::{codec, json};
use xla_shape::{Issue, MessageKind, Report, Severity};

use super::{Failure, MessageArg};

/// Validate messages as XLA would, and report every problem with its field path.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 all valid, 1 some input invalid (or warnings with --strict), \
2 some input unreadable.\n\n\
Examples:\n  xla-shape validate shape.binpb other.binpb\n  \
xla-shape validate --message layout --format github layouts/*.binpb\n  \
xla-shape validate --from hlo-module --strict module.hlo.txt"
)]
pub struct ValidateArgs {
    /// The form of the inputs.
    #[arg(long, value_enum, default_value_t = From::Binary)]
    from: From,
    /// Which message each input holds (for `binary`, `json` and `hlo`; module scans
    /// find every shape themselves).
    #[arg(long, value_enum, default_value_t)]
    message: MessageArg,
    /// Treat warnings as failures (exit 1).
    #[arg(long)]
    strict: bool,
    /// How to write the report.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    /// Inputs; `-` or none reads standard input.
    files: Vec<PathBuf>,
}

/// The form of the inputs of `validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum From {
    /// One serialized message per file, exactly its bytes.
    Binary,
    /// One message per file in the proto3 JSON mapping.
    Json,
    /// HLO text, one shape, layout or program shape per line.
    Hlo,
    /// A whole HLO module in text form: every shape in it.
    HloModule,
    /// A serialized `HloModuleProto`: every shape in it.
    HloModuleProto,
}

/// How `validate` writes its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// `FILE: PATH: message` (`FILE: PATH: warning: message`), one line per problem.
    Text,
    /// One JSON object for the whole run.
    Json,
    /// GitHub Actions workflow commands (`::error file=FILE::PATH: message`).
    Github,
}

/// One problem, ready to print.
#[derive(Debug)]
struct Problem {
    severity: Severity,
    /// 1-based line and column, for module scans of text.
    position: Option<(usize, usize)>,
    /// The proto path; empty when the message carries its own place.
    path: String,
    /// The issue kind's stable name, when the problem comes from the gate directly.
    code: Option<&'static str>,
    message: String,
    /// The shape as written, for module scans of text.
    shape: Option<String>,
}

impl Problem {
    fn from_issue(issue: &Issue) -> Self {
        Problem {
            severity: issue.severity(),
            position: None,
            path: issue.path().to_string(),
            code: Some(issue.kind().code()),
            message: issue.kind().to_string(),
            shape: None,
        }
    }

    fn from_finding(finding: module::Finding) -> Self {
        let (position, path, shape) = if finding.line == 0 {
            (None, finding.place, None)
        } else {
            (
                Some((finding.line, finding.column)),
                String::new(),
                Some(finding.place).filter(|s| !s.is_empty()),
            )
        };
        Problem {
            severity: finding.severity,
            position,
            path,
            code: None,
            message: finding.message,
            shape,
        }
    }

    /// `PATH: message`, or the message alone.
    fn text(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }
}

/// What checking one input gave.
enum Outcome {
    Checked(Vec<Problem>),
    Unreadable(String),
}

pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    let inputs: Vec<Option<&PathBuf>> = if args.files.is_empty() {
        vec![None]
    } else {
        args.files.iter().map(Some).collect()
    };
    let kind = MessageKind::from(args.message);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut json_inputs = Vec::new();
    let (mut failed, mut unreadable) = (0usize, 0usize);
    for input in inputs {
        let name = super::input_name(input);
        let outcome = check(args.from, kind, input);
        let fails = match &outcome {
            Outcome::Unreadable(_) => {
                unreadable += 1;
                false
            }
            Outcome::Checked(problems) => problems
                .iter()
                .any(|p| p.severity == Severity::Error || args.strict),
        };
        failed += usize::from(fails);
        let written = match args.format {
            ReportFormat::Text => write_text(&mut out, &name, &outcome),
            ReportFormat::Github => write_github(&mut out, &name, &outcome),
            ReportFormat::Json => {
                json_inputs.push(json_input(&name, &outcome, fails));
                Ok(())
            }
        };
        if let Err(e) = written {
            return output_error(e);
        }
    }
    if args.format == ReportFormat::Json {
        let report = json!({
            "valid": failed == 0 && unreadable == 0,
            "inputs": json_inputs,
        });
        let written = serde_json::to_writer_pretty(&mut out, &report)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out));
        if let Err(e) = written {
            return output_error(e);
        }
    }
    if let Err(e) = out.flush() {
        return output_error(e);
    }
    if unreadable > 0 {
        let many = if unreadable == 1 { "input" } else { "inputs" };
        Err(Failure::unreadable(format!(
            "{unreadable} {many} could not be read"
        )))
    } else if failed > 0 {
        Err(Failure::Invalid)
    } else {
        Ok(())
    }
}

/// A closed pipe ends the run quietly (as `head` expects); any other write error is a
/// failure.
fn output_error(e: std::io::Error) -> Result<(), Failure> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::unreadable(format!("<stdout>: {e}")))
    }
}

/// Reads, decodes and validates one input. Each `--from` form is one arm.
fn check(from: From, kind: MessageKind, input: Option<&PathBuf>) -> Outcome {
    match from {
        From::Binary => {
            let bytes = match read(input) {
                Ok(bytes) => bytes,
                Err(e) => return Outcome::Unreadable(e),
            };
            match codec::decode_any(kind, &bytes) {
                Ok(decoded) => issues(&validate_decoded(&decoded, Options::proto())),
                Err(e) => Outcome::Unreadable(format!("cannot decode {}: {e}", kind.proto_name())),
            }
        }
        From::Json => {
            let bytes = match read(input) {
                Ok(bytes) => bytes,
                Err(e) => return Outcome::Unreadable(e),
            };
            match json::from_json(kind, &bytes, &json::ParseOptions::new()) {
                Ok(message) => issues(&validate_message(&message, Options::proto())),
                Err(e) => {
                    Outcome::Unreadable(format!("cannot read {} from json: {e}", kind.proto_name()))
                }
            }
        }
        From::Hlo => {
            let bytes = match read(input) {
                Ok(bytes) => bytes,
                Err(e) => return Outcome::Unreadable(e),
            };
            let Ok(source) = std::str::from_utf8(&bytes) else {
                return Outcome::Unreadable("the input is not utf-8 text".to_string());
            };
            hlo_lines(kind, source)
        }
        From::HloModule => scan(input, true),
        From::HloModuleProto => scan(input, false),
    }
}

/// `--from hlo`: one message per line (blank lines skipped). A line that does not parse
/// makes the input unreadable (exit 2), as bytes that do not decode do; the message says
/// where, with a caret. With more than one message, each problem carries its
/// `LINE:COLUMN`.
fn hlo_lines(kind: MessageKind, source: &str) -> Outcome {
    let lines: Vec<(usize, &str)> = source
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    let many = lines.len() > 1;
    let mut problems = Vec::new();
    for (index, line) in lines {
        match text::parse_message(kind, line) {
            Ok(message) => {
                let report = validate_message(&message, Options::hlo_text());
                for issue in report.issues() {
                    let mut problem = Problem::from_issue(issue);
                    if many {
                        problem.position = Some((index + 1, 1));
                        problem.shape = Some(line.trim().to_string());
                    }
                    problems.push(problem);
                }
            }
            Err(e) => {
                let column = line
                    .get(..e.span().start)
                    .map_or(e.span().start, |s| s.chars().count())
                    + 1;
                return Outcome::Unreadable(format!("{}:{column}: {}", index + 1, e.render(line)));
            }
        }
    }
    Outcome::Checked(problems)
}

fn read(input: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    super::read_input(input).map_err(|failure| match failure {
        Failure::Unreadable(message) => message,
        Failure::Invalid => "cannot read".to_string(),
    })
}

fn issues(report: &Report) -> Outcome {
    Outcome::Checked(report.issues().iter().map(Problem::from_issue).collect())
}

/// Scans a module (text or proto) with the validation gate on every shape.
fn scan(input: Option<&PathBuf>, is_text: bool) -> Outcome {
    let mut problems = Vec::new();
    let mut report = |finding: module::Finding| problems.push(Problem::from_finding(finding));
    let result = if is_text {
        let mut check = module::validate_text;
        match input.filter(|p| p.as_os_str() != "-") {
            Some(path) => match std::fs::File::open(path) {
                Ok(file) => {
                    let reader = BufReader::with_capacity(1 << 20, file);
                    module::scan_text(reader, &mut check, &mut report)
                }
                Err(e) => return Outcome::Unreadable(e.to_string()),
            },
            None => module::scan_text(std::io::stdin().lock(), &mut check, &mut report),
        }
    } else {
        let mut check = module::validate_proto;
        match read(input) {
            Ok(bytes) => module::scan_proto(&bytes, &mut check, &mut report),
            Err(e) => return Outcome::Unreadable(e),
        }
    };
    match result {
        Ok(_) => Outcome::Checked(problems),
        Err(e) => Outcome::Unreadable(e.to_string()),
    }
}

/// `FILE` or `FILE:LINE:COLUMN`.
fn location(name: &str, problem: &Problem) -> String {
    match problem.position {
        Some((line, column)) => format!("{name}:{line}:{column}"),
        None => name.to_string(),
    }
}

fn write_text(out: &mut impl Write, name: &str, outcome: &Outcome) -> std::io::Result<()> {
    match outcome {
        Outcome::Unreadable(message) => {
            let message = message
                .strip_prefix(&format!("{name}: "))
                .unwrap_or(message);
            writeln!(std::io::stderr(), "xla-shape: {name}: {message}")
        }
        Outcome::Checked(problems) => {
            for problem in problems {
                let mut line = location(name, problem);
                if !problem.path.is_empty() {
                    line.push_str(": ");
                    line.push_str(&problem.path);
                }
                if problem.severity == Severity::Warning {
                    line.push_str(": warning");
                }
                writeln!(out, "{line}: {}", problem.message)?;
            }
            Ok(())
        }
    }
}

/// Escapes workflow-command data: `%`, CR and LF.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value: as data, plus `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn write_github(out: &mut impl Write, name: &str, outcome: &Outcome) -> std::io::Result<()> {
    let file = escape_property(name);
    match outcome {
        Outcome::Unreadable(message) => {
            let message = message
                .strip_prefix(&format!("{name}: "))
                .unwrap_or(message);
            writeln!(out, "::error file={file}::{}", escape_data(message))
        }
        Outcome::Checked(problems) => {
            for problem in problems {
                let mut properties = format!("file={file}");
                if let Some((line, column)) = problem.position {
                    let _ = write!(properties, ",line={line},col={column}");
                }
                writeln!(
                    out,
                    "::{} {properties}::{}",
                    problem.severity,
                    escape_data(&problem.text())
                )?;
            }
            Ok(())
        }
    }
}

fn json_input(name: &str, outcome: &Outcome, fails: bool) -> Value {
    match outcome {
        Outcome::Unreadable(message) => {
            let message = message
                .strip_prefix(&format!("{name}: "))
                .unwrap_or(message);
            json!({
                "file": name,
                "status": "unreadable",
                "error": message,
                "errors": 0,
                "warnings": 0,
                "problems": [],
            })
        }
        Outcome::Checked(problems) => {
            let count = |s: Severity| problems.iter().filter(|p| p.severity == s).count();
            let problems: Vec<Value> = problems
                .iter()
                .map(|p| {
                    let mut object = json!({
                        "severity": p.severity.as_str(),
                        "path": p.path,
                        "code": p.code,
                        "message": p.message,
                    });
                    if let (Some((line, column)), Some(map)) = (p.position, object.as_object_mut())
                    {
                        map.insert("line".into(), line.into());
                        map.insert("column".into(), column.into());
                    }
                    if let (Some(shape), Some(map)) = (&p.shape, object.as_object_mut()) {
                        map.insert("shape".into(), shape.clone().into());
                    }
                    object
                })
                .collect();
            json!({
                "file": name,
                "status": if fails { "invalid" } else { "valid" },
                "errors": count(Severity::Error),
                "warnings": count(Severity::Warning),
                "problems": problems,
            })
        }
    }
}
