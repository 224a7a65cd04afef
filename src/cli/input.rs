//! One way to give a message, the same in every subcommand that reads one: a path, `-`
//! (or nothing) for standard input, or the text itself.
//!
//! - `--text TEXT` is the message itself and never touches the filesystem.
//! - A positional argument that names an existing file is that file.
//! - Otherwise, where the form is text (HLO text, JSON), an argument that looks like
//!   that text (HLO: it has a `[`, `{` or `(`; JSON: it starts with `{`) is the text.
//! - Anything else is "no such file: X" (exit 2).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use xla_shape::validate::{validate_shape_each, Options};
use xla_shape::Shape;

use super::Failure;

/// What the text of an inline message looks like, for telling it from a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextForm {
    /// Binary input: the argument is always a path.
    None,
    /// HLO text: a shape, layout or program shape.
    Hlo,
    /// Proto3 JSON: an object.
    Json,
}

impl TextForm {
    fn example(self) -> &'static str {
        match self {
            TextForm::None | TextForm::Hlo => "f32[2,3]",
            TextForm::Json => r#"{"elementType":"F32"}"#,
        }
    }

    fn looks_like(self, arg: &str) -> bool {
        match self {
            TextForm::None => false,
            TextForm::Hlo => arg.contains(['[', '{', '(']),
            TextForm::Json => arg.trim_start().starts_with('{'),
        }
    }
}

/// Texts of at least this many bytes that are a tuple are not built where an array is
/// asked for ([`Input::shape_for_array`]).
pub const LONG_TUPLE: usize = xla_shape::LONG_INPUT;

/// One message's input, read whole.
#[derive(Debug)]
pub struct Input {
    /// The name in messages: the path, `<stdin>` or `<text>`.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl Input {
    /// The input as UTF-8 text (HLO text, index lists); an error names the input.
    pub fn text(&self) -> Result<&str, Failure> {
        std::str::from_utf8(&self.bytes)
            .map_err(|e| Failure::unreadable(format!("{}: not UTF-8 text: {e}", self.name)))
    }

    /// The input as one shape in HLO text (surrounding whitespace allowed), parsed as XLA's
    /// standalone parser does (a missing layout is the default one) and validated with
    /// the HLO text rules (`*` tiles accepted). A parse error shows the text with a caret
    /// (exit 2); an invalid shape lists every error on standard error (exit 1).
    pub fn shape(&self) -> Result<Shape, Failure> {
        let name = &self.name;
        let text = self.text()?.trim();
        let proto = xla_shape::text::parse_shape(text)
            .map_err(|e| Failure::unreadable(format!("{name}: {}", e.render(text))))?;
        self.validated(&proto)
    }

    /// [`Input::shape`] where only an array or buffer shape will do (`index`,
    /// `relayout`): a tuple of [`LONG_TUPLE`] bytes or more is read a shape at a time
    /// for its syntax errors only, and refused as a tuple (`Ok(None)`), not built (a
    /// 17 MB tuple built whole to be refused took 750 MB).
    pub fn shape_for_array(&self) -> Result<Option<Shape>, Failure> {
        let text = self.text()?.trim();
        if text.len() < LONG_TUPLE || !text.starts_with('(') {
            return self.shape().map(Some);
        }
        let options = xla_shape::text::ParseOptions::default();
        let parsed = xla_shape::text::parse_shape_streaming(text, options, &mut |_, _, _| {})
            .map_err(|e| Failure::unreadable(format!("{}: {}", self.name, e.render(text))))?;
        match parsed {
            xla_shape::text::Streamed::Shape(proto) => self.validated(&proto).map(Some),
            xla_shape::text::Streamed::Tuple { .. } => Ok(None),
        }
    }

    /// `proto` validated with the HLO text rules; every error on standard error, as it
    /// is found.
    fn validated(&self, proto: &xla_shape::proto::ShapeProto) -> Result<Shape, Failure> {
        let name = &self.name;
        let mut stderr = std::io::BufWriter::new(std::io::stderr().lock());
        let shape = validate_shape_each(proto, Options::hlo_text(), &mut |issue| {
            if issue.severity() == xla_shape::Severity::Error {
                let _ = writeln!(stderr, "xla-shape: {name}: {issue}");
            }
        });
        drop(stderr);
        shape.ok_or(Failure::Invalid)
    }
}

/// Where one message comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-` or no argument).
    Stdin,
    /// A file.
    File(PathBuf),
    /// The text itself (`--text`, or an inline argument).
    Text(String),
}

impl Source {
    /// Decides what `positional` (or `text`, from `--text`) means; see the module docs.
    /// The caller's argument definitions make `positional` and `text` exclusive.
    pub fn resolve(
        positional: Option<&Path>,
        text: Option<&str>,
        form: TextForm,
    ) -> Result<Source, Failure> {
        if let Some(text) = text {
            return Ok(Source::Text(text.to_string()));
        }
        let Some(path) = positional.filter(|p| p.as_os_str() != "-") else {
            return Ok(Source::Stdin);
        };
        // A broken symlink or a file we may not stat still "exists" as a path: reading
        // it gives the real reason.
        if path.symlink_metadata().is_ok() {
            return Ok(Source::File(path.to_path_buf()));
        }
        match path.to_str() {
            Some(arg) if form.looks_like(arg) => Ok(Source::Text(arg.to_string())),
            _ if form == TextForm::None => Err(Failure::unreadable(format!(
                "no such file: {}",
                path.display()
            ))),
            _ => Err(Failure::unreadable(format!(
                "no such file: {} (to give the text itself, write it inline, like '{}', or use --text)",
                path.display(),
                form.example()
            ))),
        }
    }

    /// The name in messages: the path, `<stdin>` or `<text>`.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(path) => path.display().to_string(),
            Source::Text(_) => "<text>".to_string(),
        }
    }

    /// Whether the message comes from standard input.
    pub fn is_stdin(&self) -> bool {
        *self == Source::Stdin
    }

    /// Reads the whole input, one message ([`xla_shape::input::read_message`]).
    pub fn read(self) -> Result<Input, Failure> {
        self.read_with(None)
    }

    /// Reads the whole input, raw bytes of at most `limit`.
    pub fn read_within(self, limit: usize) -> Result<Input, Failure> {
        self.read_with(Some(limit))
    }

    fn read_with(self, limit: Option<usize>) -> Result<Input, Failure> {
        let name = self.name();
        let bytes = match self {
            Source::Text(text) => text.into_bytes(),
            Source::Stdin => super::read_input(None, limit)?,
            Source::File(path) => super::read_input(Some(&path), limit)?,
        };
        Ok(Input { name, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(arg: Option<&str>, text: Option<&str>, form: TextForm) -> Result<Source, String> {
        Source::resolve(arg.map(Path::new), text, form).map_err(|f| match f {
            Failure::Unreadable(message) => message,
            Failure::Invalid => "invalid".to_string(),
            Failure::Quiet => "quiet".to_string(),
        })
    }

    #[test]
    fn paths_stdin_and_text() {
        let manifest = env!("CARGO_MANIFEST_DIR");
        let file = format!("{manifest}/Cargo.toml");
        assert_eq!(
            resolve(Some(&file), None, TextForm::Hlo),
            Ok(Source::File(PathBuf::from(&file)))
        );
        assert_eq!(resolve(None, None, TextForm::Hlo), Ok(Source::Stdin));
        assert_eq!(resolve(Some("-"), None, TextForm::None), Ok(Source::Stdin));
        assert_eq!(
            resolve(Some("f32[2,3]"), None, TextForm::Hlo),
            Ok(Source::Text("f32[2,3]".into()))
        );
        assert_eq!(
            resolve(Some(" {\"elementType\":\"F32\"}"), None, TextForm::Json),
            Ok(Source::Text(" {\"elementType\":\"F32\"}".into()))
        );
        // --text never looks at the filesystem, even for an existing path.
        assert_eq!(
            resolve(None, Some(&file), TextForm::Hlo),
            Ok(Source::Text(file.clone()))
        );
        assert_eq!(
            resolve(Some("f32[2,3]"), None, TextForm::None),
            Err("no such file: f32[2,3]".into())
        );
        assert!(resolve(Some("nonexistent.txt"), None, TextForm::Hlo)
            .unwrap_err()
            .starts_with("no such file: nonexistent.txt (to give the text itself"));
    }
}
