//! The `xla_shape` Python module: the xla-shape crate as a native extension.
//!
//! This crate holds no logic of its own beyond converting between the library's types
//! and Python's: the codec is `xla_shape::convert`, validation `xla_shape::check` and
//! `xla_shape::report`, module scans `xla_shape::text::module`, the layout engine
//! `xla_shape::index`. Every input goes through those functions, which return errors
//! for bad input instead of panicking, so no input reaches a panic; the exceptions are
//! `xla_shape.Error` and its subclasses (`ParseError`, `DecodeError`,
//! `ValidationError`), `TypeError`, `IndexError` and `OSError`.
//!
//! Tested by pytest (`python/tests`, run by `./test`), not by `cargo test`.

// pyo3's macros expand to `unsafe` blocks, so `forbid` cannot apply here; this crate
// writes no `unsafe` of its own.
#![deny(unsafe_code)]

use std::ffi::CString;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use xla_shape::check;
use xla_shape::codec;
use xla_shape::convert::{self, ConvertError};
use xla_shape::describe;
use xla_shape::guard::diff;
use xla_shape::index::{layout_for_byte_strides, StrideError};
use xla_shape::index::{IndexError, LayoutPlan, PlanError};
use xla_shape::proto::{self as raw, ShapeProto};
use xla_shape::report::{self, Document, FileReport, Form};
use xla_shape::text::module::{self as module, Role};
use xla_shape::text::{FromTextError, HloStyle};
use xla_shape::validate::{self, Options as GateOptions};
use xla_shape::{json, Issue, MessageKind, PrimitiveType};

create_exception!(
    xla_shape,
    Error,
    PyValueError,
    "Base class of xla_shape's errors (a ValueError)."
);
create_exception!(
    xla_shape,
    ParseError,
    Error,
    "HLO text that does not parse.\n\nAttributes: `message` (the reason alone), `span` \
     ((start, end) byte offsets into `text`), `text` (the input) and `rendered` (the \
     reason, then the line with carets under the span, as the command line prints it)."
);
create_exception!(
    xla_shape,
    DecodeError,
    Error,
    "Input that cannot be decoded or read: malformed protobuf bytes, JSON that is not \
     the message, a form that cannot be told.\n\nAttributes: `message`, and `code` (the \
     report code, e.g. `undecodable`, `empty_input`, `unknown_form`) where there is one."
);
create_exception!(
    xla_shape,
    ValidationError,
    Error,
    "A message that reads but is not valid as XLA reads it.\n\nAttribute `report`: the \
     `Report` with every finding."
);

// ---------------------------------------------------------------------------------
// Errors

fn exception<E: pyo3::PyTypeInfo>(
    py: Python<'_>,
    message: String,
    attrs: &[(&str, Py<PyAny>)],
) -> PyErr {
    let err = PyErr::new::<E, _>(message.clone());
    let value = err.value(py);
    let _ = value.setattr("message", message);
    for (name, attr) in attrs {
        let _ = value.setattr(*name, attr);
    }
    err
}

fn decode_error(py: Python<'_>, message: String, code: Option<&str>) -> PyErr {
    let code = code
        .map(|c| PyString::new(py, c).into_any().unbind())
        .unwrap_or_else(|| py.None());
    exception::<DecodeError>(py, in_python_words(&message), &[("code", code)])
}

/// A message of the library's in the words of this package: the command line's
/// `--from FORM`, `--message KIND` and `--hlo-style STYLE`, which the library's
/// messages name, are this package's `src=`, `message=` and `hlo_style=` arguments.
fn in_python_words(message: &str) -> String {
    message
        .replace(" (or no --from)", " (or src=\"auto\")")
        .replace("--from ", "src=")
        .replace("--message ", "message=")
        .replace("--hlo-style ", "hlo_style=")
}

fn parse_error(
    py: Python<'_>,
    error: &xla_shape::text::ParseError,
    text: &str,
    rendered: String,
) -> PyErr {
    let span = error.span();
    let attrs = [
        (
            "span",
            (span.start, span.end)
                .into_pyobject(py)
                .map(|t| t.into_any().unbind())
                .unwrap_or_else(|_| py.None()),
        ),
        ("text", PyString::new(py, text).into_any().unbind()),
        ("rendered", PyString::new(py, &rendered).into_any().unbind()),
    ];
    let err = exception::<ParseError>(py, rendered, &attrs);
    let _ = err.value(py).setattr("message", error.message());
    err
}

fn convert_error(py: Python<'_>, error: ConvertError, text: &str) -> PyErr {
    match error {
        ConvertError::Parse { error, rendered } => parse_error(py, &error, text, rendered),
        e @ (ConvertError::Decode(_)
        | ConvertError::Json(_)
        | ConvertError::NotUtf8(_)
        | ConvertError::TooDeep { .. }) => decode_error(py, e.to_string(), Some("undecodable")),
        other => exception::<Error>(py, in_python_words(&other.to_string()), &[]),
    }
}

/// A `ValidationError` carrying a report of the issues of one message.
fn validation_error(py: Python<'_>, name: &str, form: Form, issues: &[Issue]) -> PyErr {
    let mut file = FileReport::new(name, Some(form));
    file.shapes = 1;
    file.findings = issues.iter().map(report::Finding::from_issue).collect();
    let text = issues
        .iter()
        .map(Issue::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let report = Report::new(file, false);
    match Py::new(py, report) {
        Ok(report) => exception::<ValidationError>(py, text, &[("report", report.into_any())]),
        Err(e) => e,
    }
}

fn from_text_error(py: Python<'_>, error: FromTextError, text: &str) -> PyErr {
    match error {
        FromTextError::Parse(e) => {
            let rendered = e.render(text);
            parse_error(py, &e, text, rendered)
        }
        FromTextError::Invalid(e) => validation_error(py, "<text>", Form::Hlo, e.report().issues()),
    }
}

/// Python's repr of an optional string: `'x'` or `None`.
fn repr_opt(value: Option<&str>) -> String {
    value.map_or_else(|| "None".to_string(), |v| format!("{v:?}"))
}

fn index_error(error: IndexError) -> PyErr {
    PyIndexError::new_err(error.to_string())
}

fn plan_error(py: Python<'_>, error: PlanError) -> PyErr {
    exception::<Error>(py, error.to_string(), &[])
}

// ---------------------------------------------------------------------------------
// Arguments

fn message_kind(name: &str) -> PyResult<MessageKind> {
    match name {
        "shape" => Ok(MessageKind::Shape),
        "layout" => Ok(MessageKind::Layout),
        "program-shape" | "program_shape" => Ok(MessageKind::ProgramShape),
        other => Err(PyValueError::new_err(format!(
            "message must be 'shape', 'layout' or 'program-shape', not {other:?}"
        ))),
    }
}

fn convert_form(name: &str, what: &str) -> PyResult<convert::Form> {
    match name {
        "binary" => Ok(convert::Form::Binary),
        "json" => Ok(convert::Form::Json),
        "hlo" => Ok(convert::Form::Hlo),
        other => Err(PyValueError::new_err(format!(
            "{what} must be 'binary', 'json' or 'hlo', not {other:?}"
        ))),
    }
}

fn hlo_style(name: &str) -> PyResult<HloStyle> {
    match name {
        "xla" => Ok(HloStyle::Xla),
        "exact" => Ok(HloStyle::Exact),
        other => Err(PyValueError::new_err(format!(
            "hlo_style must be 'xla' or 'exact', not {other:?}"
        ))),
    }
}

fn json_names(name: &str) -> PyResult<convert::JsonNames> {
    match name {
        "camel" => Ok(convert::JsonNames::Camel),
        "proto" => Ok(convert::JsonNames::Proto),
        other => Err(PyValueError::new_err(format!(
            "json_names must be 'camel' or 'proto', not {other:?}"
        ))),
    }
}

fn validate_form(name: &str) -> PyResult<Option<Form>> {
    Ok(Some(match name {
        "auto" => return Ok(None),
        "binary" => Form::Binary,
        "json" => Form::Json,
        "hlo" => Form::Hlo,
        "hlo-module" | "hlo_module" => Form::HloModule,
        "hlo-module-proto" | "hlo_module_proto" => Form::HloModuleProto,
        other => {
            return Err(PyValueError::new_err(format!(
                "src must be 'auto', 'binary', 'json', 'hlo', 'hlo-module' or \
                 'hlo-module-proto', not {other:?}"
            )))
        }
    }))
}

/// An input given as `bytes` (or another bytes-like object), `str` (the text itself)
/// or an `os.PathLike` (a file).
enum Input {
    Bytes(Vec<u8>),
    Text(String),
    Path(PathBuf),
}

impl Input {
    fn extract(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(text) = data.cast::<PyString>() {
            return Ok(Input::Text(text.extract::<String>()?));
        }
        if let Ok(bytes) = data.cast::<PyBytes>() {
            return Ok(Input::Bytes(bytes.as_bytes().to_vec()));
        }
        if data.hasattr("__fspath__")? {
            return Ok(Input::Path(data.extract()?));
        }
        if let Ok(bytes) = data.extract::<Vec<u8>>() {
            return Ok(Input::Bytes(bytes));
        }
        Err(PyTypeError::new_err(format!(
            "expected bytes, str or an os.PathLike, not {}",
            data.get_type().name()?
        )))
    }

    /// For a `str` of one line that names a file or a directory, which is read as the
    /// text it is: the words that say how a path is given, for the error it makes.
    fn path_hint(&self) -> String {
        match self {
            Input::Text(text)
                if !text.contains('\n')
                    && text.len() <= 4096
                    && std::fs::symlink_metadata(text).is_ok() =>
            {
                format!(
                    " (a str is the text itself; to read the file {text:?}, give \
                     pathlib.Path({text:?}))"
                )
            }
            _ => String::new(),
        }
    }

    fn name(&self) -> String {
        match self {
            Input::Bytes(_) => "<bytes>".to_string(),
            Input::Text(_) => "<text>".to_string(),
            Input::Path(path) => path.display().to_string(),
        }
    }

    fn into_bytes(self) -> PyResult<Vec<u8>> {
        match self {
            Input::Bytes(bytes) => Ok(bytes),
            Input::Text(text) => Ok(text.into_bytes()),
            Input::Path(path) => Ok(read_path(&path)?),
        }
    }
}

/// The bytes of the file at `path`, read as one message is
/// ([`xla_shape::input::read_message`]: at most 2 GiB, and `/dev/zero` refused at
/// once rather than read without end).
fn read_path(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata().map_or(0, |m| m.len());
    xla_shape::input::read_message(file, size)
}

/// `data` as Python `bytes`; a `MemoryError` when Python has no room for them (pyo3's
/// `PyBytes::new` panics then).
fn py_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, data.len(), |out| {
        out.copy_from_slice(data);
        Ok(())
    })
}

fn bytes_arg(data: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if data.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} is binary: give bytes, not str"
        )));
    }
    data.extract::<Vec<u8>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} is binary: give bytes, not {}",
            data.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

fn text_arg(data: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match data.cast::<PyString>() {
        Ok(text) => Ok(text.extract::<String>()?),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} is text: give str, not {}",
            data.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))),
    }
}

fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let message = CString::new(message.replace('\0', " "))?;
    PyErr::warn(
        py,
        &py.get_type::<pyo3::exceptions::PyUserWarning>(),
        &message,
        2,
    )
}

// ---------------------------------------------------------------------------------
// convert

/// convert(data, src, dst, message="shape", *, json_names="camel", pretty=False,
///         ignore_unknown_fields=False, hlo_style="xla")
/// --
///
/// Converts one message between forms, as `xla-shape convert` does: the faithful
/// codec, no validation.
///
/// `src` and `dst` are `"binary"` (protobuf bytes; `data` and the result are
/// `bytes`), `"json"` (proto3 JSON) or `"hlo"` (HLO text; `str`). `message` is
/// `"shape"`, `"layout"` or `"program-shape"`. Options as on the command line:
/// `json_names` (`"camel"` or `"proto"` keys), `pretty` (indented JSON),
/// `ignore_unknown_fields` (JSON input), `hlo_style` (`"xla"`: XLA's text;
/// `"exact"`: the lossless text). Text output has no final newline. Unknown fields
/// that JSON or XLA's text drop are reported with `warnings.warn`.
///
/// Raises `DecodeError` (binary or JSON input that does not read), `ParseError` (HLO
/// text), `Error` (a value the output form cannot express), `TypeError` (`str` for
/// binary or `bytes` for text).
///
/// >>> import xla_shape
/// >>> xla_shape.convert("f32[2,3]", "hlo", "binary").hex()
/// '100b1a0202032a070a02010080010132020000'
/// >>> xla_shape.convert(bytes.fromhex("100b1a0202032a040a020100"), "binary", "hlo")
/// 'f32[2,3]{1,0}'
/// >>> xla_shape.convert("f32[2]{0}", "hlo", "json", json_names="proto")
/// '{"element_type":"F32","dimensions":["2"],"layout":{"minor_to_major":["0"],"tail_padding_alignment_in_elements":"1"},"is_dynamic_dimension":[false]}'
#[pyfunction]
#[pyo3(signature = (data, src, dst, message = "shape", *, json_names = "camel", pretty = false, ignore_unknown_fields = false, hlo_style = "xla"))]
#[pyo3(name = "convert")]
#[allow(clippy::too_many_arguments)]
fn py_convert(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    src: &str,
    dst: &str,
    message: &str,
    json_names: &str,
    pretty: bool,
    ignore_unknown_fields: bool,
    hlo_style: &str,
) -> PyResult<Py<PyAny>> {
    let from = convert_form(src, "src")?;
    let to = convert_form(dst, "dst")?;
    let kind = message_kind(message)?;
    let options = convert::Options {
        json_names: self::json_names(json_names)?,
        pretty,
        ignore_unknown_fields,
        hlo_style: self::hlo_style(hlo_style)?,
    };
    let (bytes, text) = match from {
        convert::Form::Binary => (bytes_arg(data, "binary input")?, String::new()),
        _ => {
            let text = text_arg(data, &format!("{src} input"))?;
            (text.clone().into_bytes(), text)
        }
    };
    let decoded =
        convert::read(from, kind, &bytes, &options).map_err(|e| convert_error(py, e, &text))?;
    let output = convert::write(to, &decoded, &options).map_err(|e| convert_error(py, e, &text))?;
    let dropped_by = match (to, options.hlo_style) {
        (convert::Form::Json, _) => Some("JSON"),
        (convert::Form::Hlo, HloStyle::Xla) => Some("XLA's text"),
        _ => None,
    };
    if let Some(target) = dropped_by {
        // The first fields named, the rest counted: a message may hold millions.
        let (dropped, more) = convert::dropped_fields(&decoded);
        for field in dropped {
            warn(
                py,
                &format!(
                    "{}unknown field {} is not written: {target} has no form for it",
                    convert::at(&field.path),
                    field.number
                ),
            )?;
        }
        if more > 0 {
            warn(
                py,
                &format!(
                    "{more} more unknown fields are not written: {target} has no form for them"
                ),
            )?;
        }
    }
    Ok(match to {
        convert::Form::Binary => py_bytes(py, &output)?.into_any().unbind(),
        _ => {
            let mut text = String::from_utf8_lossy(&output).into_owned();
            if text.ends_with('\n') {
                text.pop();
            }
            PyString::new(py, &text).into_any().unbind()
        }
    })
}

// ---------------------------------------------------------------------------------
// validate and the report

/// One problem found in an input (see the repository's docs/report.md for every
/// code).
///
/// Attributes: `code` (stable identifier, e.g. `"duplicate_dimension"`), `severity`
/// (`"error"` or `"warning"`), `path` (the proto path inside the message, `""` for the
/// message itself), `message`, `line` and `column` (1-based, text inputs, else
/// `None`), `instruction` and `computation` (module inputs, else `None`), `shape` (the
/// shape's text, when known). A text or name longer than 1 KiB is given with the first
/// finding of its shape only (`None` in the others), as in the JSON report. `str()` is
/// the line `xla-shape validate` prints.
#[pyclass(module = "xla_shape", name = "Finding", frozen, eq)]
#[derive(Clone, PartialEq)]
struct Finding {
    inner: report::Finding,
    file: String,
}

#[pymethods]
impl Finding {
    #[getter]
    fn code(&self) -> &'static str {
        self.inner.code
    }
    #[getter]
    fn severity(&self) -> &'static str {
        self.inner.severity.as_str()
    }
    #[getter]
    fn path(&self) -> &str {
        &self.inner.path
    }
    #[getter]
    fn message(&self) -> &str {
        &self.inner.message
    }
    #[getter]
    fn line(&self) -> Option<usize> {
        self.inner.line
    }
    #[getter]
    fn column(&self) -> Option<usize> {
        self.inner.column
    }
    #[getter]
    fn instruction(&self) -> Option<&str> {
        self.inner.instruction.as_deref()
    }
    #[getter]
    fn computation(&self) -> Option<&str> {
        self.inner.computation.as_deref()
    }
    #[getter]
    fn shape(&self) -> Option<&str> {
        self.inner.shape.as_deref()
    }
    fn __str__(&self) -> String {
        report::text::line(&self.file, &self.inner)
    }
    fn __repr__(&self) -> String {
        format!(
            "Finding(code={:?}, severity={:?}, path={:?}, message={:?}, line={}, column={})",
            self.inner.code,
            self.inner.severity.as_str(),
            self.inner.path,
            self.inner.message,
            self.inner
                .line
                .map_or("None".to_string(), |l| l.to_string()),
            self.inner
                .column
                .map_or("None".to_string(), |c| c.to_string())
        )
    }
}

/// What validating one input found: the library's report model.
///
/// Attributes: `ok` (no error, and no warning either when `strict`), `findings` (a
/// list of `Finding`, in input order), `errors` and `warnings` (the findings of each
/// severity), `shapes` (how many shapes were checked), `form` (what the input was read
/// as: `"binary"`, `"json"`, `"hlo"`, `"hlo-module"`, `"hlo-module-proto"`), `message`
/// (`"shape"`, `"layout"`, `"program-shape"` for one-message inputs, else `None`),
/// `name` (the path, `"<bytes>"` or `"<text>"`), `strict`.
///
/// >>> import xla_shape
/// >>> report = xla_shape.validate("f32[2,3]{1,1}")
/// >>> report.ok, [f.code for f in report.findings]
/// (False, ['duplicate_dimension'])
/// >>> print(report.findings[0])
/// <text>:1:1: error[duplicate_dimension]: layout.minor_to_major[1]: dimension 1 is listed twice (first at minor_to_major[0])
#[pyclass(module = "xla_shape", name = "Report", frozen)]
#[derive(Clone)]
struct Report {
    file: FileReport,
    strict: bool,
}

impl Report {
    fn new(file: FileReport, strict: bool) -> Self {
        Self { file, strict }
    }

    fn document(&self) -> Document {
        Document {
            files: vec![self.file.clone()],
            strict: self.strict,
        }
    }

    /// The findings for which `keep` is true (those past the first
    /// `report::findings::HELD` read back from their temporary file).
    fn wrap(&self, keep: impl Fn(&report::Finding) -> bool) -> PyResult<Vec<Finding>> {
        let mut found = Vec::new();
        self.file
            .findings
            .try_for_each(
                |e| e,
                |inner| {
                    if keep(inner) {
                        found.push(Finding {
                            inner: inner.clone(),
                            file: self.file.path.clone(),
                        });
                    }
                    Ok(())
                },
            )
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        Ok(found)
    }
}

#[pymethods]
impl Report {
    #[getter]
    fn ok(&self) -> bool {
        self.file.status(self.strict) == report::Status::Valid
    }
    #[getter]
    fn findings(&self) -> PyResult<Vec<Finding>> {
        self.wrap(|_| true)
    }
    #[getter]
    fn errors(&self) -> PyResult<Vec<Finding>> {
        self.wrap(|f| f.severity == xla_shape::Severity::Error)
    }
    #[getter]
    fn warnings(&self) -> PyResult<Vec<Finding>> {
        self.wrap(|f| f.severity == xla_shape::Severity::Warning)
    }
    #[getter]
    fn shapes(&self) -> usize {
        self.file.shapes
    }
    #[getter]
    fn form(&self) -> Option<&'static str> {
        self.file.form.map(Form::name)
    }
    #[getter]
    fn message(&self) -> Option<&'static str> {
        self.file.message
    }
    #[getter]
    fn name(&self) -> &str {
        &self.file.path
    }
    #[getter]
    fn strict(&self) -> bool {
        self.strict
    }
    /// The text report `xla-shape validate` prints: one line per finding, each ending
    /// in a newline (`""` for a clean input).
    fn to_text(&self) -> PyResult<String> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        report::render(
            report::Format::Text,
            &self.document(),
            &mut out,
            &mut errors,
        )?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
    /// The report in `format` (`"text"`, `"json"`, `"github"` or `"sarif"`), as
    /// `xla-shape validate --format FORMAT` writes it for this one input.
    #[pyo3(signature = (format = "text"))]
    fn render(&self, format: &str) -> PyResult<String> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        report::render(
            report_format(format)?,
            &self.document(),
            &mut out,
            &mut errors,
        )?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
    /// Raises `ValidationError` (carrying this report) unless `ok`.
    fn raise_for_errors(slf: &Bound<'_, Self>) -> PyResult<()> {
        let this = slf.get();
        if this.ok() {
            return Ok(());
        }
        let text = this.to_text()?;
        Err(exception::<ValidationError>(
            slf.py(),
            text.trim_end().to_string(),
            &[("report", slf.clone().into_any().unbind())],
        ))
    }
    fn __len__(&self) -> usize {
        self.file.findings.len()
    }
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = PyList::new(py, self.findings()?)?;
        Ok(list.try_iter()?.into_any().unbind())
    }
    fn __repr__(&self) -> String {
        format!(
            "Report(name={:?}, form={}, ok={}, shapes={}, errors={}, warnings={})",
            self.file.path,
            repr_opt(self.file.form.map(Form::name)),
            if self.ok() { "True" } else { "False" },
            self.file.shapes,
            self.file.errors(),
            self.file.warnings()
        )
    }
}

/// validate(data, src="auto", message=None, policy=None, *, strict=False, allow=(),
///          hlo_style="xla")
/// --
///
/// Validates one input as `xla-shape validate` does and returns its `Report`.
///
/// `data` is `bytes` (a serialized message or module proto), `str` (the text itself:
/// HLO text, one shape per line, a whole module, or JSON) or an `os.PathLike` (a
/// file, read streaming). `src` is `"auto"` (decided from the content), `"binary"`,
/// `"json"`, `"hlo"`, `"hlo-module"` or `"hlo-module-proto"`; `message` (`"shape"`,
/// `"layout"`, `"program-shape"`) is decided from the content when `None`. `strict`
/// makes warnings fail `report.ok`; `allow` drops findings with these codes;
/// `hlo_style` is how finding shapes of non-text inputs print.
///
/// `policy` is a layout policy (`xla-shape validate --policy`): the TOML text itself
/// (`str`) or a file (`os.PathLike`); its violations are findings with `policy.<rule>`
/// codes. A policy that does not read raises `ValueError` naming the key or value.
///
/// Raises `DecodeError` when the input cannot be checked at all (its `code` says
/// why: `undecodable`, `empty_input`, `unknown_form`, `wrong_form`, ...), `OSError`
/// when a file cannot be read.
///
/// >>> import xla_shape
/// >>> xla_shape.validate("f32[2,3]{1,0}").ok
/// True
/// >>> xla_shape.validate(bytes.fromhex("100b1a0202032a040a020100")).form
/// 'binary'
#[pyfunction]
#[pyo3(signature = (data, src = "auto", message = None, policy = None, *, strict = false, allow = Vec::new(), hlo_style = "xla"))]
#[pyo3(name = "validate")]
#[allow(clippy::too_many_arguments)]
fn py_validate(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    src: &str,
    message: Option<&str>,
    policy: Option<&Bound<'_, PyAny>>,
    strict: bool,
    allow: Vec<String>,
    hlo_style: &str,
) -> PyResult<Report> {
    // A policy: an os.PathLike is a file, a str is the TOML text itself.
    let policy = match policy.filter(|p| !p.is_none()) {
        None => None,
        Some(p) => {
            let loaded = if let Ok(text) = p.extract::<String>() {
                xla_shape::guard::Policy::from_toml(&text)
            } else if let Ok(path) = p.extract::<PathBuf>() {
                xla_shape::guard::Policy::load(&path)
            } else {
                return Err(PyTypeError::new_err(
                    "policy: expected TOML text (str) or a path (os.PathLike)",
                ));
            };
            let loaded = loaded.map_err(|e| PyValueError::new_err(format!("policy {}", e.0)))?;
            Some(std::sync::Arc::new(loaded))
        }
    };
    for code in &allow {
        if report::codes::lookup(code).is_none() {
            return Err(PyValueError::new_err(format!(
                "allow: no such code {} (docs/report.md lists them)",
                xla_shape::error::Shown::quoted(code)
            )));
        }
    }
    let options = check::Options {
        from: validate_form(src)?,
        message: message.map(message_kind).transpose()?,
        allow,
        hlo_style: self::hlo_style(hlo_style)?,
        policy,
    };
    let input = Input::extract(data)?;
    let name = input.name();
    let hint = input.path_hint();
    let file = match input {
        Input::Path(path) => {
            if path.is_dir() {
                return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
                    "{name}: validate checks one file"
                )));
            }
            std::fs::metadata(&path)?;
            py.detach(|| check::check_path(&path, &name, &options))
        }
        other => {
            let bytes = other.into_bytes()?;
            py.detach(|| check::check_bytes(&name, &bytes, &options))
        }
    };
    if let Some(unreadable) = &file.unreadable {
        return Err(decode_error(
            py,
            format!("{name}: {}{hint}", unreadable.message),
            Some(unreadable.code),
        ));
    }
    Ok(Report::new(file, strict))
}

// ---------------------------------------------------------------------------------
// diff

/// One difference of a `diff` (`xla-shape diff` prints each as a line).
#[pyclass(module = "xla_shape", name = "Change", frozen, get_all)]
struct Change {
    /// `"changed"`, `"added"` or `"removed"`.
    what: &'static str,
    /// Where, in words (`entry parameter 0 (x.1)`, `main.1/add.13 (was add.12)`).
    place: String,
    /// The computation (its new name, or the old one if removed).
    computation: Option<String>,
    /// The instruction (its new name, or the old one if removed).
    instruction: Option<String>,
    /// The old shape's text.
    old: Option<String>,
    /// The new shape's text.
    new: Option<String>,
    /// What changed: (kind, words) pairs, kinds as `ignore=` names them.
    aspects: Vec<(&'static str, String)>,
    /// Allocated bytes of the old shape.
    old_bytes: Option<u64>,
    /// Allocated bytes of the new shape.
    new_bytes: Option<u64>,
    /// The shape's line in the new input (the old one if removed), for text.
    line: Option<usize>,
    /// Its 1-based column, for text.
    column: Option<usize>,
    /// The shape's proto path, for protos.
    path: Option<String>,
    /// The change in words, as a line of `xla-shape diff` (without the file).
    words: String,
}

#[pymethods]
impl Change {
    fn __str__(&self) -> String {
        self.words.clone()
    }
    fn __repr__(&self) -> String {
        format!("Change({:?})", self.words)
    }
}

impl Change {
    fn of(change: &diff::Change) -> Self {
        let what = match change.what {
            diff::What::Changed => "changed",
            diff::What::Added => "added",
            diff::What::Removed => "removed",
        };
        let aspects = change.aspects.iter();
        Change {
            what,
            place: change.place.clone(),
            computation: change.computation.clone(),
            instruction: change.instruction.clone(),
            old: change.old.clone(),
            new: change.new.clone(),
            aspects: aspects.map(|a| (a.kind.name(), a.words.clone())).collect(),
            old_bytes: change.old_bytes,
            new_bytes: change.new_bytes,
            line: change.line,
            column: change.column,
            path: change.path.clone(),
            words: change.words(),
        }
    }
}

/// A pair a `diff` matched other than by name (`xla-shape diff` prints each as a
/// `note:` line).
#[pyclass(module = "xla_shape", name = "Match", frozen, get_all)]
struct Match {
    /// The old computation, for an instruction; `None` for a computation.
    computation: Option<String>,
    /// The old name.
    old: String,
    /// The new name.
    new: String,
    /// How: `"entry"`, `"position"`, `"operands"`, `"signature"` or `"caller"`.
    how: String,
    /// The match in words.
    words: String,
}

#[pymethods]
impl Match {
    fn __str__(&self) -> String {
        self.words.clone()
    }
    fn __repr__(&self) -> String {
        format!("Match({:?})", self.words)
    }
}

/// One pair of files of a `diff` (or a file on one side only).
#[pyclass(module = "xla_shape", name = "FileDiff", frozen)]
struct FileDiff {
    inner: diff::FileDiff,
}

#[pymethods]
impl FileDiff {
    /// The key the files were paired by (relative path), or the new file's name.
    #[getter]
    fn key(&self) -> &str {
        &self.inner.key
    }
    /// The old file, `None` when only in the new input.
    #[getter(old)]
    fn old_file(&self) -> Option<&str> {
        self.inner.old.as_deref()
    }
    /// The new file, `None` when only in the old input.
    #[getter(new)]
    fn new_file(&self) -> Option<&str> {
        self.inner.new.as_deref()
    }
    /// `"same"`, `"changed"`, `"only_old"`, `"only_new"` or `"unreadable"`.
    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status()
    }
    /// The differences, in order.
    #[getter]
    fn changes(&self) -> PyResult<Vec<Change>> {
        // Those past the held ones read back from their temporary file.
        Ok(self
            .inner
            .changes
            .to_vec()?
            .iter()
            .map(Change::of)
            .collect())
    }
    /// The pairs matched other than by name.
    #[getter]
    fn matches(&self) -> PyResult<Vec<Match>> {
        let matches = self.inner.matches.to_vec()?.into_iter();
        Ok(matches
            .map(|m| Match {
                words: m.words(),
                how: serde_json::to_value(m.how)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                computation: m.computation,
                old: m.old,
                new: m.new,
            })
            .collect())
    }
    /// Why the pair cannot be compared (`{"file", "code", "message"}`), else `None`.
    #[getter]
    fn error(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(e) = &self.inner.error else {
            return Ok(None);
        };
        let error = pyo3::types::PyDict::new(py);
        error.set_item("file", &e.file)?;
        error.set_item("code", e.code)?;
        error.set_item("message", &e.message)?;
        Ok(Some(error.into_any().unbind()))
    }
    fn __repr__(&self) -> String {
        format!(
            "FileDiff(key={:?}, status={:?}, changes={})",
            self.inner.key,
            self.inner.status(),
            self.inner.changes.len()
        )
    }
}

/// The difference of two inputs, as `xla-shape diff` reports it.
#[pyclass(module = "xla_shape", name = "DiffReport", frozen)]
struct DiffReport {
    inner: diff::DiffReport,
}

#[pymethods]
impl DiffReport {
    /// The old input's name.
    #[getter(old)]
    fn old_input(&self) -> &str {
        &self.inner.old
    }
    /// The new input's name.
    #[getter(new)]
    fn new_input(&self) -> &str {
        &self.inner.new
    }
    /// One `FileDiff` per pair of files and per file on one side only, by key.
    #[getter]
    fn files(&self) -> Vec<FileDiff> {
        let files = self.inner.files.iter().cloned();
        files.map(|inner| FileDiff { inner }).collect()
    }
    /// The counts: `files`, `changed`, `changes`, `only_old`, `only_new`,
    /// `unreadable`.
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let s = self.inner.summary();
        let summary = pyo3::types::PyDict::new(py);
        for (key, value) in [
            ("files", s.files),
            ("changed", s.changed),
            ("changes", s.changes),
            ("only_old", s.only_old),
            ("only_new", s.only_new),
            ("unreadable", s.unreadable),
        ] {
            summary.set_item(key, value)?;
        }
        Ok(summary.into_any().unbind())
    }
    /// `xla-shape diff`'s exit status: 0 no difference, 1 some difference, 2 some
    /// input cannot be read or nothing was compared (two directories without a file).
    #[getter]
    fn exit_code(&self) -> u8 {
        self.inner.exit_code()
    }
    /// Whether there is no difference, every input was read and some file was
    /// compared (`exit_code == 0`).
    #[getter]
    fn ok(&self) -> bool {
        self.inner.exit_code() == 0
    }
    /// The report in `format` (`"text"`, `"json"`, `"github"` or `"sarif"`), as
    /// `xla-shape diff --format FORMAT` writes it.
    #[pyo3(signature = (format = "text"))]
    fn render(&self, format: &str) -> PyResult<String> {
        let mut out = Vec::new();
        self.inner.write(report_format(format)?, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
    fn __len__(&self) -> usize {
        self.inner.files.len()
    }
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = PyList::new(py, self.files())?;
        Ok(list.try_iter()?.into_any().unbind())
    }
    fn __repr__(&self) -> String {
        format!(
            "DiffReport(old={:?}, new={:?}, exit_code={}, {})",
            self.inner.old,
            self.inner.new,
            self.inner.exit_code(),
            self.inner.summary()
        )
    }
}

/// A report format by name.
fn report_format(format: &str) -> PyResult<report::Format> {
    Ok(match format {
        "text" => report::Format::Text,
        "json" => report::Format::Json,
        "github" => report::Format::Github,
        "sarif" => report::Format::Sarif,
        other => {
            return Err(PyValueError::new_err(format!(
                "format must be 'text', 'json', 'github' or 'sarif', not {other:?}"
            )))
        }
    })
}

/// diff(old, new, *, entry_only=False, ignore=())
/// --
///
/// Compares the shapes of two inputs as `xla-shape diff` does and returns its
/// `DiffReport`: what changed, in words, with both texts and both allocated sizes.
///
/// `old` and `new` are each an `os.PathLike` (a module, a message, a listing `shapes`
/// wrote, or a directory: files are paired by relative path), `str` (the text
/// itself) or `bytes`. Given as text or bytes, a side is named `<old>` or `<new>`
/// and must list as one module or set of messages. `entry_only` compares only the
/// entry computation layout; `ignore` leaves out kinds of change (`"tiles"`,
/// `"memory-space"`, ...: the names `xla-shape diff --ignore` takes).
///
/// An input that cannot be read is a pair with status `"unreadable"` (and
/// `exit_code` 2). Raises `OSError` when a path does not exist, `ValueError` for an
/// unknown kind of change.
///
/// >>> import xla_shape
/// >>> old = "HloModule m\nENTRY e {\n  ROOT p = f32[8,128]{1,0} parameter(0)\n}\n"
/// >>> report = xla_shape.diff(old, old.replace("{1,0}", "{0,1}"))
/// >>> report.exit_code, [str(c) for c in report.files[0].changes]
/// (1, ['e/p: f32[8,128]{1,0} -> f32[8,128]{0,1}: minor_to_major changed (allocated 4096 -> 4096 bytes)'])
#[pyfunction]
#[pyo3(signature = (old, new, *, entry_only = false, ignore = Vec::new()))]
#[pyo3(name = "diff")]
fn py_diff(
    py: Python<'_>,
    old: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    entry_only: bool,
    ignore: Vec<String>,
) -> PyResult<DiffReport> {
    let ignore = ignore
        .iter()
        .map(|name| {
            diff::ChangeKind::from_name(name).ok_or_else(|| {
                let kinds = diff::ChangeKind::ALL.map(diff::ChangeKind::name).join(", ");
                PyValueError::new_err(format!("ignore: no kind of change {name:?} ({kinds})"))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let options = diff::Options { entry_only, ignore };
    let read = xla_shape::guard::listing::ReadOptions::default();
    let (old, new) = (Input::extract(old)?, Input::extract(new)?);
    for input in [&old, &new] {
        if let Input::Path(path) = input {
            std::fs::metadata(path)?;
        }
    }
    if let (Input::Path(o), Input::Path(n)) = (&old, &new) {
        let walk = check::Walk::new(&[], &[]).map_err(PyValueError::new_err)?;
        let inner = py.detach(|| diff::diff_paths(o, n, &read, &walk, &options));
        return Ok(DiffReport { inner });
    }
    let side = |input: Input, shown: &str| -> PyResult<(String, _)> {
        let listed = match input {
            Input::Path(path) => {
                if path.is_dir() {
                    return Err(pyo3::exceptions::PyIsADirectoryError::new_err(format!(
                        "{}: a directory is compared with a directory: give both as paths",
                        path.display()
                    )));
                }
                let name = path.display().to_string();
                let listed = xla_shape::guard::listing::read_path(&path, &name, &read);
                (name, listed)
            }
            data => {
                let bytes = data.into_bytes()?;
                let listed = xla_shape::guard::listing::read_bytes(shown, &bytes, &read);
                (shown.to_string(), listed)
            }
        };
        Ok(listed)
    };
    let (old_name, old_listed) = side(old, "<old>")?;
    let (new_name, new_listed) = side(new, "<new>")?;
    let mut file = diff::FileDiff {
        key: new_name.clone(),
        old: Some(old_name.clone()),
        new: Some(new_name.clone()),
        ..diff::FileDiff::default()
    };
    // A side read whole: its one listing, or why it cannot be read.
    type Read = Result<xla_shape::guard::Listing, xla_shape::guard::listing::ReadError>;
    let one = |listed: Result<Vec<xla_shape::guard::Listing>, _>, name: &str| -> PyResult<Read> {
        match listed {
            Ok(mut listings) if listings.len() == 1 => Ok(Ok(listings.remove(0))),
            Ok(listings) => Err(PyValueError::new_err(format!(
                "{name} lists {} files: give a listing of several files as a path",
                listings.len()
            ))),
            Err(e) => Ok(Err(e)),
        }
    };
    match (one(old_listed, &old_name)?, one(new_listed, &new_name)?) {
        (Err(e), _) | (_, Err(e)) => file.error = Some(Box::new(e)),
        (Ok(o), Ok(n)) => {
            let found = py.detach(|| diff::diff_listings(&o, &n, &options));
            file.changes = found.changes;
            file.matches = found.matches;
        }
    }
    Ok(DiffReport {
        inner: diff::DiffReport {
            old: old_name,
            new: new_name,
            files: vec![file],
        },
    })
}

// ---------------------------------------------------------------------------------
// Shape and Layout

fn tuple<'py, T: IntoPyObject<'py>>(
    py: Python<'py>,
    items: impl IntoIterator<Item = T, IntoIter: ExactSizeIterator>,
) -> PyResult<Py<PyTuple>> {
    Ok(PyTuple::new(py, items)?.unbind())
}

/// A validated layout: `minor_to_major`, tiles and the other fields of XLA's
/// `Layout`. `str()` is the layout text (`{1,0:T(8,128)(2,1)}`).
///
/// >>> import xla_shape
/// >>> layout = xla_shape.Shape.parse("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}").layout
/// >>> layout.minor_to_major, layout.tiles, layout.memory_space
/// ((1, 0), ((8, 128), (2, 1)), 1)
#[pyclass(module = "xla_shape", name = "Layout", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
struct Layout {
    inner: xla_shape::Layout,
}

#[pymethods]
impl Layout {
    /// Parses a layout (`"{1,0:T(8,128)}"`); raises `ParseError` or `ValidationError`.
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str) -> PyResult<Self> {
        match text.parse::<xla_shape::Layout>() {
            Ok(inner) => Ok(Self { inner }),
            Err(FromTextError::Parse(e)) => Err(parse_error(py, &e, text, e.render(text))),
            Err(FromTextError::Invalid(e)) => Err(validation_error(
                py,
                "<text>",
                Form::Hlo,
                e.report().issues(),
            )),
        }
    }
    /// Dimension numbers from most minor to most major.
    #[getter]
    fn minor_to_major(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        tuple(py, self.inner.minor_to_major().iter().copied())
    }
    /// The tiles, each a tuple of sizes; a combined dimension (`*`) is
    /// `COMBINE_DIMENSION` (-2**63, XLA's `kCombineDimension`).
    #[getter]
    fn tiles(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let tiles: PyResult<Vec<Py<PyTuple>>> = self
            .inner
            .tiles()
            .iter()
            .map(|t| tuple(py, t.dimensions().iter().map(|d| d.to_i64())))
            .collect();
        tuple(py, tiles?)
    }
    #[getter]
    fn tail_padding_alignment_in_elements(&self) -> u64 {
        self.inner.tail_padding_alignment_in_elements()
    }
    /// Bits per element when set (`E(4)`), else 0.
    #[getter]
    fn element_size_in_bits(&self) -> u64 {
        self.inner.element_size_in_bits()
    }
    #[getter]
    fn memory_space(&self) -> i64 {
        self.inner.memory_space()
    }
    /// XLA's name for the memory space (`"host"` for 5), or `None`.
    #[getter]
    fn memory_space_name(&self) -> Option<&'static str> {
        self.inner.memory_space_name()
    }
    /// `(dimension, split_indices)` pairs.
    #[getter]
    fn split_configs(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let configs: PyResult<Vec<(i64, Py<PyTuple>)>> = self
            .inner
            .split_configs()
            .iter()
            .map(|c| Ok((c.dimension(), tuple(py, c.split_indices().iter().copied())?)))
            .collect();
        tuple(py, configs?)
    }
    #[getter]
    fn dynamic_shape_metadata_prefix_bytes(&self) -> i64 {
        self.inner.dynamic_shape_metadata_prefix_bytes()
    }
    /// The retired `padded_dimensions` of 2017-2018 layouts, or `None`.
    #[getter]
    fn padded_dimensions(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        self.inner
            .padded_dimensions()
            .map(|p| tuple(py, p.iter().copied()))
            .transpose()
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        format!("Layout({:?})", self.inner.to_string())
    }
}

/// A validated XLA shape: an array, a tuple, a token, an opaque value or a buffer.
///
/// Build one with `Shape(text)` / `Shape.parse(text)` (HLO text, as XLA's parser
/// reads it: a missing layout becomes the default one), `Shape.from_proto(bytes)` (a
/// serialized `ShapeProto`, as XLA's `Shape::FromProto` reads it),
/// `Shape.from_json(text)` or `Shape.from_numpy(array)`. Invalid input raises
/// `ParseError`, `DecodeError` or `ValidationError`.
///
/// `str()` is XLA's text (`ShapeUtil::HumanStringWithLayout`); shapes compare and hash
/// by value.
///
/// >>> import xla_shape
/// >>> shape = xla_shape.Shape.parse("bf16[8,128]{1,0:T(8,128)(2,1)}")
/// >>> shape.element_type, shape.dimensions, shape.byte_size()
/// ('bf16', (8, 128), 2048)
/// >>> xla_shape.Shape.parse("f32[24,128]{1,0:T(8,128)}").strides()
/// (512, 4)
/// >>> xla_shape.Shape.parse("f32[3,5]{1,0:T(2,2)}").linear_index((2, 3))
/// 17
/// >>> str(xla_shape.Shape.from_proto(shape.to_proto())) == str(shape)
/// True
#[pyclass(module = "xla_shape", name = "Shape", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
struct Shape {
    inner: xla_shape::Shape,
}

impl Shape {
    fn array(&self) -> Option<&xla_shape::ArrayShape> {
        match &self.inner {
            xla_shape::Shape::Array(a) | xla_shape::Shape::Buffer(a) => Some(a),
            _ => None,
        }
    }

    fn array_or_err(&self, what: &str) -> PyResult<&xla_shape::ArrayShape> {
        self.array().ok_or_else(|| {
            PyTypeError::new_err(format!(
                "{what}: {} is {}, not an array",
                self.text(),
                self.inner.kind_phrase()
            ))
        })
    }

    fn plan(&self, py: Python<'_>, what: &str) -> PyResult<LayoutPlan> {
        LayoutPlan::new(self.array_or_err(what)?).map_err(|e| plan_error(py, e))
    }

    fn text(&self) -> String {
        describe::shape_text(&self.inner, HloStyle::Xla)
    }

    fn from_proto_bytes(py: Python<'_>, bytes: &[u8]) -> PyResult<Self> {
        let validated = validate::decode_validated_shape(bytes, GateOptions::proto())
            .map_err(|e| decode_error(py, e.to_string(), Some("undecodable")))?;
        let (value, report) = validated.into_parts();
        match value {
            Some(inner) => Ok(Self { inner }),
            None => Err(validation_error(
                py,
                "<bytes>",
                Form::Binary,
                report.issues(),
            )),
        }
    }

    fn from_raw(py: Python<'_>, proto: &ShapeProto, name: &str, form: Form) -> PyResult<Self> {
        let (value, report) =
            validate::validate_shape_with(proto, GateOptions::proto()).into_parts();
        match value {
            Some(inner) => Ok(Self { inner }),
            None => Err(validation_error(py, name, form, report.issues())),
        }
    }
}

/// The XLA element type of a numpy dtype name, and back.
const NUMPY_TYPES: &[(&str, &str)] = &[
    ("bool", "pred"),
    ("int8", "s8"),
    ("int16", "s16"),
    ("int32", "s32"),
    ("int64", "s64"),
    ("uint8", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("float16", "f16"),
    ("float32", "f32"),
    ("float64", "f64"),
    ("complex64", "c64"),
    ("complex128", "c128"),
    // ml_dtypes
    ("bfloat16", "bf16"),
    ("int2", "s2"),
    ("uint2", "u2"),
    ("int4", "s4"),
    ("uint4", "u4"),
    ("float8_e5m2", "f8e5m2"),
    ("float8_e4m3fn", "f8e4m3fn"),
    ("float8_e4m3b11fnuz", "f8e4m3b11fnuz"),
    ("float8_e5m2fnuz", "f8e5m2fnuz"),
    ("float8_e4m3fnuz", "f8e4m3fnuz"),
    ("float8_e4m3", "f8e4m3"),
    ("float8_e3m4", "f8e3m4"),
    ("float8_e8m0fnu", "f8e8m0fnu"),
    ("float4_e2m1fn", "f4e2m1fn"),
    ("float6_e3m2fn", "f6e3m2fn"),
    ("float6_e2m3fn", "f6e2m3fn"),
];

fn stride_error(error: &StrideError) -> String {
    format!("the strides are not an XLA layout: {error}")
}

#[pymethods]
impl Shape {
    /// `Shape(text)` is `Shape.parse(text)`.
    #[new]
    fn new(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = text_arg(text, "Shape(text)")?;
        Self::parse(py, &text)
    }

    /// Parses HLO text as XLA's parser does (`ShapeUtil::ParseShapeString`; a missing
    /// layout becomes the default one) and validates it.
    ///
    /// Raises `ParseError` (with `span` and the caret rendering) or
    /// `ValidationError` (with the report).
    ///
    /// >>> import xla_shape
    /// >>> str(xla_shape.Shape.parse("f32[2,3]"))
    /// 'f32[2,3]{1,0}'
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str) -> PyResult<Self> {
        text.parse::<xla_shape::Shape>()
            .map(|inner| Self { inner })
            .map_err(|e| from_text_error(py, e, text))
    }

    /// Decodes a serialized `ShapeProto` and validates it as XLA's `Shape::FromProto`
    /// does. Raises `DecodeError` or `ValidationError`.
    #[staticmethod]
    fn from_proto(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_arg(data, "Shape.from_proto(data)")?;
        Self::from_proto_bytes(py, &bytes)
    }

    /// Reads a `ShapeProto` in proto3 JSON and validates it. Raises `DecodeError` or
    /// `ValidationError`.
    ///
    /// >>> import xla_shape
    /// >>> str(xla_shape.Shape.from_json('{"elementType": "S8", "dimensions": ["4"]}'))
    /// 's8[4]'
    #[staticmethod]
    #[pyo3(signature = (text, *, ignore_unknown_fields = false))]
    fn from_json(py: Python<'_>, text: &str, ignore_unknown_fields: bool) -> PyResult<Self> {
        let options = json::ParseOptions::new().ignore_unknown_fields(ignore_unknown_fields);
        let proto = json::from_json(MessageKind::Shape, text.as_bytes(), &options)
            .map_err(|e| decode_error(py, e.to_string(), Some("undecodable")))?;
        match proto {
            xla_shape::AnyMessage::Shape(proto) => Self::from_raw(py, &proto, "<text>", Form::Json),
            _ => Err(decode_error(py, "not a shape".to_string(), None)),
        }
    }

    /// The shape of a numpy array (or anything with numpy's `shape`, `strides` and
    /// `dtype`): the element type from the dtype (bfloat16, int4, float8 and the other
    /// ml_dtypes types included), the dimensions from the shape, and `minor_to_major`
    /// from the strides.
    ///
    /// An empty array (a dimension of size 0) gets XLA's default layout: numpy's
    /// strides mean nothing for it.
    ///
    /// Raises `TypeError` for a dtype with no XLA element type (or not in native byte
    /// order) and `Error` when the strides are no XLA layout: broadcast (stride 0),
    /// reversed (negative), or with gaps (a sliced view; copy it first, e.g. with
    /// `numpy.ascontiguousarray`).
    ///
    /// >>> import numpy as np, xla_shape
    /// >>> str(xla_shape.Shape.from_numpy(np.zeros((2, 3), np.float32, order="F")))
    /// 'f32[2,3]{0,1}'
    #[staticmethod]
    fn from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Self> {
        let dtype = array.getattr("dtype")?;
        let name: String = dtype.getattr("name")?.extract()?;
        let byteorder: String = dtype.getattr("byteorder")?.extract()?;
        let element = NUMPY_TYPES
            .iter()
            .find(|(numpy, _)| *numpy == name)
            .map(|(_, xla)| *xla)
            .ok_or_else(|| {
                PyTypeError::new_err(format!("numpy dtype {name} has no XLA element type"))
            })?;
        if byteorder == ">" {
            return Err(PyTypeError::new_err(format!(
                "numpy dtype {name} is big-endian; XLA arrays are little-endian \
                 (use array.astype(array.dtype.newbyteorder('<')))"
            )));
        }
        let itemsize: u64 = dtype.getattr("itemsize")?.extract()?;
        let dims: Vec<u64> = array.getattr("shape")?.extract()?;
        let strides: Vec<i64> = array.getattr("strides")?.extract()?;
        // An empty array has no element to place, and numpy's strides for it mean
        // nothing (an F-ordered (0, 3) array has strides (4, 0)): XLA's default layout.
        let strides = if dims.contains(&0) {
            let mut dense = vec![0i64; dims.len()];
            let mut step = itemsize as i64;
            for (d, stride) in dense.iter_mut().enumerate().rev() {
                *stride = step;
                step = step.saturating_mul(dims[d].max(1) as i64);
            }
            dense
        } else {
            strides
        };
        let layout = layout_for_byte_strides(&dims, &strides, itemsize)
            .map_err(|e| exception::<Error>(py, stride_error(&e), &[]))?;
        if layout.padded_dimensions.is_some() {
            return Err(exception::<Error>(
                py,
                format!(
                    "the strides {strides:?} leave gaps between elements (a sliced view): \
                     XLA layouts have none; copy the array first (numpy.ascontiguousarray)"
                ),
                &[],
            ));
        }
        let element_type = PrimitiveType::from_name(element).ok_or_else(|| {
            PyTypeError::new_err(format!("numpy dtype {name} has no XLA element type"))
        })?;
        let proto = ShapeProto {
            element_type: element_type.as_i32(),
            dimensions: dims.iter().map(|&d| d as i64).collect(),
            is_dynamic_dimension: vec![false; dims.len()],
            layout: Some(Box::new(raw::LayoutProto {
                minor_to_major: layout.minor_to_major.iter().map(|&d| d as i64).collect(),
                tail_padding_alignment_in_elements: 1,
                ..Default::default()
            })),
            ..Default::default()
        };
        Self::from_raw(py, &proto, "<numpy>", Form::Binary)
    }

    /// The numpy dtype of the element type (bfloat16, int4, float8... need
    /// `ml_dtypes`). Raises `TypeError` for tuples, tokens and opaque shapes,
    /// `ImportError` without numpy (or ml_dtypes when needed).
    #[getter]
    fn numpy_dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let array = self.array_or_err("numpy_dtype")?;
        let element = array.element_type().name();
        let numpy_name = NUMPY_TYPES
            .iter()
            .find(|(_, xla)| *xla == element)
            .map(|(numpy, _)| *numpy)
            .ok_or_else(|| PyTypeError::new_err(format!("{element} has no numpy dtype")))?;
        let numpy = py.import("numpy")?;
        let index = NUMPY_TYPES
            .iter()
            .position(|(n, _)| *n == numpy_name)
            .unwrap_or(0);
        if index < 14 {
            numpy.getattr("dtype")?.call1((numpy_name,))
        } else {
            let ml_dtypes = py.import("ml_dtypes")?;
            numpy
                .getattr("dtype")?
                .call1((ml_dtypes.getattr(numpy_name)?,))
        }
    }

    /// The array in a device buffer laid out as this shape (tiles, padding, `E(n)`
    /// packing and all: exactly `allocated_bytes()` long), as a numpy array in C order
    /// of `numpy_dtype`. Needs numpy (and ml_dtypes for bf16, f8 and 4-bit types).
    /// Raises `ValueError` when the buffer's length is not the layout's.
    ///
    /// >>> import xla_shape
    /// >>> shape = xla_shape.Shape.parse("s8[2,3]{0,1}")
    /// >>> shape.from_device_bytes(bytes([0, 3, 1, 4, 2, 5])).tolist()
    /// [[0, 1, 2], [3, 4, 5]]
    // The issue's name for it: `shape.from_device_bytes(data)` reads the buffer.
    #[allow(clippy::wrong_self_convention)]
    fn from_device_bytes<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = self.array_or_err("from_device_bytes")?;
        let dtype = self.numpy_dtype(py)?;
        let bytes = bytes_arg(data, "from_device_bytes(data)")?;
        let logical = xla_shape::relayout::row_major(array);
        let out = parallel(py, || {
            xla_shape::relayout::relayout(array, &logical, &bytes)
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let numpy = py.import("numpy")?;
        let flat = numpy
            .getattr("frombuffer")?
            .call1((py_bytes(py, &out)?, dtype))?;
        let dims = self.plan(py, "from_device_bytes")?.dimensions().to_vec();
        flat.call_method1("reshape", (dims,))?.call_method0("copy")
    }

    /// The inverse of `from_device_bytes`: a numpy array with this shape's dimensions
    /// and `numpy_dtype`, laid out in this shape's layout, padding slots zero (or the
    /// legacy padding value). Raises `ValueError` when the array's dimensions or
    /// dtype differ.
    ///
    /// >>> import numpy, xla_shape
    /// >>> shape = xla_shape.Shape.parse("s8[2,3]{0,1}")
    /// >>> list(shape.to_device_bytes(numpy.arange(6, dtype=numpy.int8).reshape(2, 3)))
    /// [0, 3, 1, 4, 2, 5]
    fn to_device_bytes<'py>(
        &self,
        py: Python<'py>,
        array: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let shape = self.array_or_err("to_device_bytes")?;
        let dtype = self.numpy_dtype(py)?;
        let dims = self.plan(py, "to_device_bytes")?.dimensions().to_vec();
        let given: Vec<u64> = array.getattr("shape")?.extract()?;
        if given != dims {
            return Err(PyValueError::new_err(format!(
                "to_device_bytes: the array has dimensions {given:?}, {} needs {dims:?}",
                self.text()
            )));
        }
        if !array.getattr("dtype")?.eq(&dtype)? {
            return Err(PyValueError::new_err(format!(
                "to_device_bytes: the array's dtype is {}, {} needs {}",
                array.getattr("dtype")?.str()?,
                self.text(),
                dtype.str()?
            )));
        }
        let numpy = py.import("numpy")?;
        let contiguous = numpy.getattr("ascontiguousarray")?.call1((array,))?;
        let bytes: Vec<u8> = contiguous.call_method0("tobytes")?.extract()?;
        let logical = xla_shape::relayout::row_major(shape);
        let out = parallel(py, || {
            xla_shape::relayout::relayout(&logical, shape, &bytes)
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        py_bytes(py, &out)
    }

    /// The serialized `ShapeProto`, as XLA's `Shape::ToProto` writes it.
    fn to_proto<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let proto = ShapeProto::from(&self.inner);
        py_bytes(py, &codec::encode(&proto))
    }

    /// The `ShapeProto` in proto3 JSON (`json_names`: `"camel"` or `"proto"`).
    #[pyo3(signature = (*, pretty = false, json_names = "camel"))]
    fn to_json(&self, pretty: bool, json_names: &str) -> PyResult<String> {
        let names = match self::json_names(json_names)? {
            convert::JsonNames::Camel => json::FieldNames::Json,
            convert::JsonNames::Proto => json::FieldNames::Proto,
        };
        let options = json::PrintOptions::new().pretty(pretty).field_names(names);
        let message = xla_shape::AnyMessage::Shape(ShapeProto::from(&self.inner));
        Ok(json::to_json(&message, &options))
    }

    /// The HLO text in `style`: `"xla"` (XLA's, as `str()`) or `"exact"` (the
    /// lossless text, with the retired layout fields).
    #[pyo3(signature = (style = "xla"))]
    fn to_text(&self, style: &str) -> PyResult<String> {
        Ok(describe::shape_text(&self.inner, hlo_style(style)?))
    }

    /// What the shape means, in words (as `xla-shape explain` prints it).
    fn explain(&self) -> String {
        let text = describe::describe(&self.inner, HloStyle::Xla).to_string();
        text.trim_end_matches('\n').to_string()
    }

    /// The element type's name: `"f32"`, `"bf16"`, ...; `"tuple"`, `"token"`,
    /// `"opaque"` for those shapes; a buffer's is its array's.
    #[getter]
    fn element_type(&self) -> &'static str {
        match &self.inner {
            xla_shape::Shape::Buffer(a) => a.element_type().name(),
            other => other.element_type().name(),
        }
    }

    /// `"array"`, `"tuple"`, `"token"`, `"opaque"` or `"buffer"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind_name()
    }

    #[getter]
    fn is_array(&self) -> bool {
        matches!(self.inner, xla_shape::Shape::Array(_))
    }

    #[getter]
    fn is_tuple(&self) -> bool {
        matches!(self.inner, xla_shape::Shape::Tuple(_))
    }

    /// The dimension sizes; a dynamic dimension with a bound (`<=8`) gives its bound,
    /// an unbounded one (`?`) `None`. `()` for tuples, tokens and opaque shapes.
    #[getter]
    fn dimensions(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let dims: Vec<Option<u64>> = self
            .array()
            .map(|a| a.dimensions().iter().map(|d| d.bound()).collect())
            .unwrap_or_default();
        tuple(py, dims)
    }

    /// Whether each dimension is dynamic (`<=N` or `?`).
    #[getter]
    fn dynamic_dimensions(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let flags: Vec<bool> = self
            .array()
            .map(|a| a.dimensions().iter().map(|d| d.is_dynamic()).collect())
            .unwrap_or_default();
        tuple(py, flags)
    }

    /// Whether some dimension is dynamic (in a tuple: of some element).
    #[getter]
    fn is_dynamic(&self) -> bool {
        fn dynamic(shape: &xla_shape::Shape) -> bool {
            match shape {
                xla_shape::Shape::Array(a) | xla_shape::Shape::Buffer(a) => a.is_dynamic(),
                xla_shape::Shape::Tuple(elements) => elements.iter().any(dynamic),
                _ => false,
            }
        }
        dynamic(&self.inner)
    }

    /// The number of dimensions (0 for non-arrays).
    #[getter]
    fn rank(&self) -> usize {
        self.array().map_or(0, |a| a.number_of_dimensions())
    }

    /// XLA's `TrueNumDimensions`: how many dimensions have a size greater than 1.
    #[getter]
    fn true_rank(&self) -> usize {
        self.array().map_or(0, |a| a.true_number_of_dimensions())
    }

    /// The conventional letter of each dimension for 1 to 4 dimensions (`('y', 'x')`),
    /// else `None`.
    #[getter]
    fn dimension_letters(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        self.array()
            .and_then(|a| a.dimension_letters())
            .map(|letters| tuple(py, letters.iter().map(|c| c.to_string())))
            .transpose()
    }

    /// The elements of a tuple shape, else `()`.
    #[getter]
    fn tuple_shapes(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let elements: Vec<Shape> = self
            .inner
            .as_tuple()
            .unwrap_or_default()
            .iter()
            .map(|s| Shape { inner: s.clone() })
            .collect();
        tuple(py, elements)
    }

    /// The layout of an array (or buffer), or `None` when it has none.
    #[getter]
    fn layout(&self) -> Option<Layout> {
        self.array()
            .and_then(|a| a.layout())
            .map(|l| Layout { inner: l.clone() })
    }

    /// The number of elements (bounded dimensions at their bound); `None` with an
    /// unbounded dimension or for non-arrays.
    fn element_count(&self) -> Option<u64> {
        self.array().and_then(|a| a.element_count())
    }

    /// The size of the elements in bytes, without padding or tiling (XLA's
    /// `ByteSizeOfElements`); `None` with an unbounded dimension or for non-arrays.
    fn byte_size(&self) -> Option<u64> {
        self.array().and_then(|a| a.byte_size())
    }

    /// The bytes the layout allocates, padding and every tile level included.
    fn allocated_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        LayoutPlan::allocated_bytes_of(self.array_or_err("allocated_bytes")?)
            .map_err(|e| plan_error(py, e))
    }

    /// Byte strides per dimension in numpy's sense, or `None` when the layout has none
    /// (tiles that reorder elements, sub-byte elements).
    fn strides(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        self.plan(py, "strides")?
            .byte_strides()
            .map(|s| tuple(py, s))
            .transpose()
    }

    /// Strides per dimension in elements, or `None` when the layout has none.
    fn element_strides(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        self.plan(py, "element_strides")?
            .element_strides()
            .map(|s| tuple(py, s))
            .transpose()
    }

    /// The slot in memory (in elements, padding and tiles included) of the element at
    /// `index` (one integer per dimension). Raises `IndexError` when out of range.
    fn linear_index(&self, py: Python<'_>, index: Vec<u64>) -> PyResult<u64> {
        self.plan(py, "linear_index")?
            .linear_index(&index)
            .map_err(index_error)
    }

    /// The element at memory slot `linear` as a tuple of indices, or `None` for a
    /// padding slot. Raises `IndexError` past the allocation.
    fn multi_index(&self, py: Python<'_>, linear: u64) -> PyResult<Option<Py<PyTuple>>> {
        self.plan(py, "multi_index")?
            .multi_index(linear)
            .map_err(index_error)?
            .map(|index| tuple(py, index))
            .transpose()
    }

    fn __str__(&self) -> String {
        self.text()
    }

    fn __repr__(&self) -> String {
        format!(
            "Shape({:?})",
            describe::shape_text(&self.inner, HloStyle::Exact)
        )
    }
}

// ---------------------------------------------------------------------------------
// shapes()

/// One shape of a module, and where it stands.
///
/// Attributes: `shape` (a `Shape`, or `None` when the shape is invalid), `text` (as
/// written in module text; XLA's text for a module proto), `role` (`"result"`,
/// `"operand"`, `"parameter"`, `"computation_result"`, `"entry_parameter"`,
/// `"entry_result"`, `"attribute"`), `index` (the operand or parameter number, else
/// `None`), `name` (a parameter's or attribute's name, else `None`), `computation`,
/// `instruction`, `line` and `column` (module text) or `path` (module proto).
#[pyclass(module = "xla_shape", name = "ShapeSite", frozen, get_all)]
struct ShapeSite {
    shape: Option<Py<Shape>>,
    text: String,
    role: &'static str,
    index: Option<usize>,
    name: Option<String>,
    computation: Option<String>,
    instruction: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    path: Option<String>,
}

#[pymethods]
impl ShapeSite {
    fn __repr__(&self) -> String {
        let at = match (self.line, self.column, &self.path) {
            (Some(l), Some(c), _) => format!("line={l}, column={c}"),
            (_, _, Some(p)) => format!("path={p:?}"),
            _ => String::new(),
        };
        format!(
            "ShapeSite(text={:?}, role={:?}, computation={}, instruction={}, {at})",
            self.text,
            self.role,
            repr_opt(self.computation.as_deref()),
            repr_opt(self.instruction.as_deref())
        )
    }
}

fn role_fields(role: &Role) -> (&'static str, Option<usize>, Option<String>) {
    match role {
        Role::EntryParameter { index } => ("entry_parameter", Some(*index), None),
        Role::EntryResult => ("entry_result", None, None),
        Role::Parameter { index, name } => ("parameter", Some(*index), Some(name.clone())),
        Role::ComputationResult => ("computation_result", None, None),
        Role::Result => ("result", None, None),
        Role::Operand { index } => ("operand", Some(*index), None),
        Role::Attribute { name, index } => ("attribute", Some(*index), Some(name.clone())),
    }
}

/// The `Shape` of `proto` when it is valid, `None` when not; an error only when the
/// Python object cannot be made.
fn valid_shape(
    py: Python<'_>,
    proto: &ShapeProto,
    options: GateOptions,
) -> PyResult<Option<Py<Shape>>> {
    let value = validate::validate_shape_each(proto, options, &mut drop);
    value.map(|inner| Py::new(py, Shape { inner })).transpose()
}

/// shapes(data)
/// --
///
/// Every shape of an HLO module (text, as `--xla_dump_to` writes it, or a serialized
/// `HloModuleProto`), in order, each a `ShapeSite` with where it stands. `data` is
/// `bytes`, `str` (module text) or an `os.PathLike`. Structural problems of the
/// module are not reported here: `validate()` reports them.
///
/// Raises `DecodeError` when the input is not a module.
///
/// >>> import xla_shape
/// >>> text = "HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"
/// >>> [(s.text, s.role, s.instruction, s.line) for s in xla_shape.shapes(text)]
/// [('f32[2]{0}', 'result', 'p', 3)]
#[pyfunction]
fn shapes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<ShapeSite>> {
    let input = Input::extract(data)?;
    let (name, hint) = (input.name(), input.path_hint());
    sites_of(py, &name, &input.into_bytes()?, &hint)
}

/// The shapes of a module held whole, for [`shapes`]; `hint` ends the message of an
/// input that is no module ([`Input::path_hint`]).
fn sites_of(py: Python<'_>, name: &str, bytes: &[u8], hint: &str) -> PyResult<Vec<ShapeSite>> {
    match check::detect(bytes) {
        Ok(Form::HloModule) => {
            let mut sites = Vec::new();
            let mut on_shape = |site: &module::Site<'_>, proto: &ShapeProto| {
                sites.push(Scanned::of(site, proto).into_site(py));
            };
            module::scan_text_with(bytes, &mut on_shape, &mut |_| {})
                .map_err(|e| decode_error(py, format!("{name}: {e}"), Some("undecodable")))?;
            sites.into_iter().collect()
        }
        Ok(Form::HloModuleProto) => {
            // The layout guard's listing: every shape, with its role and proto path.
            let listing =
                xla_shape::guard::listing::module_proto_listing(name, bytes, HloStyle::Xla)
                    .map_err(|e| decode_error(py, e.to_string(), Some(e.code)))?;
            listing
                .entries
                .into_iter()
                .map(|entry| {
                    let (role, index, role_name) = role_fields(&entry.role);
                    Ok(ShapeSite {
                        shape: valid_shape(py, &entry.shape(), GateOptions::proto())?,
                        text: entry.text,
                        role,
                        index,
                        name: role_name,
                        computation: entry.computation,
                        instruction: entry.instruction,
                        line: None,
                        column: None,
                        path: entry.path,
                    })
                })
                .collect()
        }
        Ok(other) => Err(decode_error(
            py,
            format!(
                "{name}: not an HLO module: it reads as {}{hint}",
                other.name()
            ),
            Some("wrong_form"),
        )),
        Err(reason) => Err(decode_error(
            py,
            format!("{name}: not an HLO module: {reason}{hint}"),
            Some("unknown_form"),
        )),
    }
}

/// iter_shapes(data)
/// --
///
/// The shapes `shapes(data)` lists, one at a time: an iterator of `ShapeSite`s. Module
/// text in a file is read as the iterator goes (on a thread of its own, at most a few
/// thousand shapes ahead), so a dump of any size takes the memory of those shapes, not
/// of the module; other inputs are read whole, as `shapes()` reads them.
///
/// Raises `DecodeError` when the input is not a module (at once), or where a module
/// read as it goes cannot be read on (after the shapes before that place).
///
/// >>> import xla_shape
/// >>> text = "HloModule m\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"
/// >>> [s.text for s in xla_shape.iter_shapes(text)]
/// ['f32[2]{0}']
#[pyfunction]
fn iter_shapes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<ShapeIterator> {
    let input = Input::extract(data)?;
    let (name, hint) = (input.name(), input.path_hint());
    let Input::Path(path) = input else {
        let sites = sites_of(py, &name, &input.into_bytes()?, &hint)?;
        return Ok(ShapeIterator::whole(sites));
    };
    let file = std::fs::File::open(&path)?;
    let head = check::Head::read(std::io::BufReader::with_capacity(1 << 20, file))?;
    if head.form() == Ok(Form::HloModule) {
        let (sender, receiver) = std::sync::mpsc::sync_channel(SHAPES_AHEAD);
        let reader = head.into_reader();
        let scan = move || scan_on_thread(reader, &sender);
        let spawned = std::thread::Builder::new()
            .name("xla-shape-iter-shapes".to_string())
            .spawn(scan);
        if spawned.is_ok() {
            let state = Sites::Streamed {
                receiver,
                batch: Vec::new().into_iter(),
                name,
            };
            return Ok(ShapeIterator {
                state: std::sync::Mutex::new(state),
            });
        }
        // No thread to be had (a limited address space): read whole.
        let bytes = read_path(&path)?;
        return Ok(ShapeIterator::whole(sites_of(py, &name, &bytes, "")?));
    }
    let bytes = xla_shape::input::read_message(head.into_reader(), 0)?;
    Ok(ShapeIterator::whole(sites_of(py, &name, &bytes, "")?))
}

/// Batches of shapes a scan on its own thread may be ahead of the iterator.
const SHAPES_AHEAD: usize = 4;

/// Shapes a batch holds.
const SHAPES_A_BATCH: usize = 256;

/// A shape of module text read on the scan's thread, with where it stands (a
/// [`ShapeSite`] less the Python objects, made on the iterator's thread).
struct Scanned {
    shape: Option<xla_shape::Shape>,
    text: String,
    role: &'static str,
    index: Option<usize>,
    name: Option<String>,
    computation: Option<String>,
    instruction: Option<String>,
    line: usize,
    column: usize,
}

impl Scanned {
    /// The shape `proto` at `site`, validated (with the rules of HLO text).
    fn of(site: &module::Site<'_>, proto: &ShapeProto) -> Self {
        let (role, index, name) = role_fields(&site.role);
        let shape = validate::validate_shape_each(proto, GateOptions::hlo_text(), &mut drop);
        Scanned {
            shape,
            text: site.text.to_string(),
            role,
            index,
            name,
            computation: site.computation.map(str::to_string),
            instruction: site.instruction.map(str::to_string),
            line: site.line,
            column: site.column,
        }
    }

    /// The site, its Python objects made.
    fn into_site(self, py: Python<'_>) -> PyResult<ShapeSite> {
        let shape = self.shape.map(|inner| Py::new(py, Shape { inner }));
        Ok(ShapeSite {
            shape: shape.transpose()?,
            text: self.text,
            role: self.role,
            index: self.index,
            name: self.name,
            computation: self.computation,
            instruction: self.instruction,
            line: Some(self.line),
            column: Some(self.column),
            path: None,
        })
    }
}

/// What the scan's thread hands on: shapes, or why it cannot read on.
enum Batch {
    Shapes(Vec<Scanned>),
    Failed(String),
}

/// Reads `reader` as module text, handing its shapes on in batches until the end, a
/// failure, or the iterator being dropped (then the reader fails, which ends the scan).
fn scan_on_thread<R: std::io::BufRead>(reader: R, sender: &std::sync::mpsc::SyncSender<Batch>) {
    let dropped = std::cell::Cell::new(false);
    let mut batch = Vec::with_capacity(SHAPES_A_BATCH);
    let mut on_shape = |site: &module::Site<'_>, proto: &ShapeProto| {
        if dropped.get() {
            return;
        }
        batch.push(Scanned::of(site, proto));
        if batch.len() == SHAPES_A_BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(SHAPES_A_BATCH));
            dropped.set(sender.send(Batch::Shapes(full)).is_err());
        }
    };
    let reader = UntilDropped {
        reader,
        dropped: &dropped,
    };
    let scanned = module::scan_text_with(reader, &mut on_shape, &mut |_| {});
    if dropped.get() {
        return;
    }
    let _ = sender.send(Batch::Shapes(batch));
    if let Err(e) = scanned {
        let _ = sender.send(Batch::Failed(e.to_string()));
    }
}

/// A reader that fails once the iterator it reads for is dropped.
struct UntilDropped<'a, R> {
    reader: R,
    dropped: &'a std::cell::Cell<bool>,
}

impl<R: std::io::BufRead> std::io::Read for UntilDropped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = std::io::BufRead::fill_buf(self)?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for UntilDropped<'_, R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.dropped.get() {
            return Err(std::io::Error::other("the iterator was dropped"));
        }
        self.reader.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount);
    }
}

/// Where an iterator's shapes come from.
enum Sites {
    /// Read whole.
    Whole(std::vec::IntoIter<ShapeSite>),
    /// From a scan on its own thread: the batch being handed out, and the file's name.
    Streamed {
        receiver: std::sync::mpsc::Receiver<Batch>,
        batch: std::vec::IntoIter<Scanned>,
        name: String,
    },
    /// Past the end, or past a failure.
    Done,
}

/// An iterator of `ShapeSite`s, as `iter_shapes()` gives.
#[pyclass(module = "xla_shape", name = "ShapeIterator")]
struct ShapeIterator {
    state: std::sync::Mutex<Sites>,
}

impl ShapeIterator {
    fn whole(sites: Vec<ShapeSite>) -> Self {
        ShapeIterator {
            state: std::sync::Mutex::new(Sites::Whole(sites.into_iter())),
        }
    }
}

#[pymethods]
impl ShapeIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<ShapeSite>> {
        // Not waited for: the thread advancing it waits for the scan without the GIL,
        // and takes it again before it lets go of the state (a generator raises so too).
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(PyValueError::new_err("ShapeIterator already executing"));
            }
            Err(std::sync::TryLockError::Poisoned(_)) => {
                return Err(PyValueError::new_err(
                    "the iterator failed in another thread",
                ));
            }
        };
        loop {
            match &mut *state {
                Sites::Whole(sites) => return Ok(sites.next()),
                Sites::Done => return Ok(None),
                Sites::Streamed {
                    receiver,
                    batch,
                    name,
                } => {
                    if let Some(scanned) = batch.next() {
                        return scanned.into_site(py).map(Some);
                    }
                    let receiver: &mut std::sync::mpsc::Receiver<Batch> = receiver;
                    match py.detach(move || receiver.recv()) {
                        Ok(Batch::Shapes(next)) => *batch = next.into_iter(),
                        Ok(Batch::Failed(e)) => {
                            let message = format!("{name}: {e}");
                            *state = Sites::Done;
                            return Err(decode_error(py, message, Some("undecodable")));
                        }
                        Err(_) => {
                            *state = Sites::Done;
                            return Ok(None);
                        }
                    }
                }
            }
        }
    }
}

/// relayout(data, shape, to)
/// --
///
/// The bytes of one array moved from `shape`'s layout to another layout of the same
/// array, as `xla-shape relayout` does: `shape` is a `Shape` or its text, `to` a
/// `Layout`, layout text (`"{0,1:T(8,128)}"`) or a `Shape` with the same element type
/// and dimensions. `data` is exactly the source layout's `allocated_bytes()` long; the
/// result is the destination's, padding slots zero (or the legacy padding value).
/// Raises `ValueError` when lengths, element types or dimensions do not match.
///
/// >>> import xla_shape
/// >>> list(xla_shape.relayout(bytes(range(6)), "s8[2,3]{1,0}", "{0,1}"))
/// [0, 3, 1, 4, 2, 5]
#[pyfunction]
#[pyo3(name = "relayout")]
fn py_relayout<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let shape_of = |value: &Bound<'py, PyAny>, what: &str| -> PyResult<xla_shape::ArrayShape> {
        let parsed = if let Ok(shape) = value.cast::<Shape>() {
            shape.get().inner.clone()
        } else if let Ok(text) = value.extract::<String>() {
            text.parse::<xla_shape::Shape>()
                .map_err(|e| from_text_error(py, e, &text))?
        } else {
            return Err(PyTypeError::new_err(format!(
                "relayout: {what} is a Shape or shape text"
            )));
        };
        match parsed {
            xla_shape::Shape::Array(array) => Ok(array),
            other => Err(PyTypeError::new_err(format!(
                "relayout: {what} {other} is not an array"
            ))),
        }
    };
    let from = shape_of(shape, "shape")?;
    let to = if let Ok(layout) = to.cast::<Layout>() {
        xla_shape::relayout::with_layout(&from, &layout.get().inner)
            .map_err(|e| PyValueError::new_err(format!("relayout: {e}")))?
    } else if let Ok(text) = to.extract::<String>() {
        if text.trim_start().starts_with('{') {
            let layout = Layout::parse(py, &text)?;
            xla_shape::relayout::with_layout(&from, &layout.inner)
                .map_err(|e| PyValueError::new_err(format!("relayout: {e}")))?
        } else {
            shape_of(to, "to")?
        }
    } else {
        shape_of(to, "to")?
    };
    let bytes = bytes_arg(data, "relayout(data)")?;
    let out = parallel(py, || xla_shape::relayout::relayout(&from, &to, &bytes))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    py_bytes(py, &out)
}

// ---------------------------------------------------------------------------------
// The module

/// XLA array shapes and layouts: the xla-shape crate from Python.
///
/// - `convert(data, src, dst, ...)`: the faithful codec between protobuf bytes, proto3
///   JSON and HLO text.
/// - `validate(data, ...)`: check a message, module text or module proto as XLA
///   would; a `Report` of `Finding`s.
/// - `Shape`: a validated shape, with its layout, sizes, strides and indexing.
/// - `shapes(data)`: every shape of an HLO module, with where it stands;
///   `iter_shapes(data)` one at a time, reading module text from a file as it goes.
///
/// Errors: `Error` (a `ValueError`) and its subclasses `ParseError`, `DecodeError`,
/// `ValidationError`.
/// Runs `work`, which may run parallel loops, without the GIL, rayon's global pool
/// started first ([`xla_shape::threads::start`]: no more threads than a limited
/// address space has room for, so that a loop never panics for want of them).
fn parallel<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> T {
    static START: std::sync::Once = std::sync::Once::new();
    START.call_once(xla_shape::threads::start);
    py.detach(work)
}

#[pymodule]
#[pyo3(name = "xla_shape")]
fn xla_shape_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMBINE_DIMENSION", i64::MIN)?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("ValidationError", py.get_type::<ValidationError>())?;
    m.add_class::<Shape>()?;
    m.add_class::<Layout>()?;
    m.add_class::<Report>()?;
    m.add_class::<Finding>()?;
    m.add_class::<ShapeSite>()?;
    m.add_class::<ShapeIterator>()?;
    m.add_function(wrap_pyfunction!(py_convert, m)?)?;
    m.add_function(wrap_pyfunction!(py_validate, m)?)?;
    m.add_function(wrap_pyfunction!(shapes, m)?)?;
    m.add_function(wrap_pyfunction!(iter_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(py_relayout, m)?)?;
    m.add_function(wrap_pyfunction!(py_diff, m)?)?;
    m.add_class::<DiffReport>()?;
    m.add_class::<FileDiff>()?;
    m.add_class::<Change>()?;
    m.add_class::<Match>()?;
    Ok(())
}
