//! A semantic difference of the shapes of two inputs: what changed, in words, with
//! both texts and both allocated sizes.
//!
//! # What is compared
//!
//! - Modules: the entry computation layout parameter by parameter and for the result;
//!   computations (the entry computation with the entry computation); in each pair of
//!   computations the signature (parameter by parameter, the result) and the
//!   instructions, whose shapes (result, operand shapes, shape-valued attributes) are
//!   compared one by one. With [`Options::entry_only`], only the entry computation
//!   layout.
//! - Single messages: shape by shape (program shapes parameter by parameter), in
//!   order.
//! - Tuples element by element (`{2}: added`).
//! - Within one array: element type, dimensions, which dimensions are dynamic,
//!   `minor_to_major`, tiles, element size, memory space, tail padding alignment, split
//!   configs and the rest of the layout. A shape written without a layout (as XLA
//!   writes computation signatures in text) is compared by type and dimensions only.
//!
//! # Matching renumbered names
//!
//! XLA numbers names (`add.12`); an unrelated change elsewhere renumbers them
//! (`add.13`). Computations, and the instructions of two matched computations, are
//! matched thus:
//!
//! 1. The entry computation with the entry computation, whatever their names.
//! 2. The rest are grouped by *stem* (the name without a trailing `.N`) and, for
//!    instructions, opcode (when both inputs name opcodes; a listing read back does not).
//!    In a group with as many old as new members: by name when the names are the same
//!    on both sides; otherwise by **position**: the k-th old member with the k-th new
//!    one, in the order of the numbers XLA gave their names as it made them (`add`,
//!    `add.1`, `add.2`, ...; a module's text and its proto list them in different
//!    orders), then of the input. Every step below takes a group's members in that
//!    order too.
//! 3. In a group whose sizes differ, one member added or removed has renumbered the
//!    later ones, so the same name on both sides may be two different things.
//!    Instructions, taken in input order: by name when their operands correspond (each
//!    old operand matched to the new operand at the same position, or both unmatched
//!    and of the same stem); else **by operands**: with the first new instruction left
//!    of the group whose operands correspond; those left then look again, and at last
//!    take their name's pair if it is still free. Computations: by name when their
//!    **signatures** (parameter and result shapes) are the same; else with the first
//!    new computation left of the group with the same signature; at last by name.
//!    Instructions whose operands are not known (a listing read back names none) are
//!    matched as computations are, their signature being their shapes.
//!
//! 4. When both sides are modules whose instructions call computations (`calls`,
//!    `to_apply`, `body`, ...; `called_computation_ids` in a proto), a computation that
//!    an instruction calls is matched **by its caller** instead: once two computations
//!    are matched, and their instructions, the computations a matched pair of
//!    instructions calls are matched place by place (the first such pair wins), and so
//!    on through the pairs this makes. Steps 2 and 3 match only the computations no
//!    instruction calls. A computation left then is matched with the computation of
//!    its name on the other side, if that is left too, unless both are called by
//!    instructions left unmatched: then each goes with its caller, removed or added,
//!    rather than being compared with another one that happens to take its number.
//!
//! Whatever is left is removed (old) or added (new). Every pair matched other than by
//! name is reported in [`FileDiff::matches`], with how.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::{self, Write};
use std::path::Path as FsPath;

use hashbrown::HashTable;
use serde::{Deserialize, Serialize};

use super::held::{self, Held, Slot, NONE};
use super::listing::{self, clean_name, Back, Entry, Kind, Listing, ReadError, ReadOptions};
use super::pairing;
use super::spooled::Spooled;
use crate::proto::{same_layout, same_list, LayoutProto, ShapeProto};
use crate::report::{end_array, next_item, pretty_at, Document, FileReport, Finding, Form};
use crate::spool::Table;
use crate::text::module::Role;

/// A kind of change, for `--ignore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// The element type (`bf16` -> `f16`).
    ElementType,
    /// Dimension sizes.
    Dimensions,
    /// Which dimensions are dynamic.
    Dynamic,
    /// `minor_to_major`.
    MinorToMajor,
    /// Tiles.
    Tiles,
    /// `element_size_in_bits`.
    ElementSize,
    /// `memory_space` (`S(n)`).
    MemorySpace,
    /// `tail_padding_alignment_in_elements`.
    TailPadding,
    /// Split configs (`SC(...)`).
    SplitConfigs,
    /// Any other layout field (dynamic shape metadata prefix, legacy padding, ...).
    LayoutOther,
    /// The kind of shape (array, tuple, token) or the number of tuple elements.
    Structure,
    /// Something only in the new input (file, computation, instruction, parameter,
    /// shape).
    Added,
    /// Something only in the old input.
    Removed,
}

impl ChangeKind {
    /// Every kind.
    pub const ALL: [ChangeKind; 13] = [
        ChangeKind::ElementType,
        ChangeKind::Dimensions,
        ChangeKind::Dynamic,
        ChangeKind::MinorToMajor,
        ChangeKind::Tiles,
        ChangeKind::ElementSize,
        ChangeKind::MemorySpace,
        ChangeKind::TailPadding,
        ChangeKind::SplitConfigs,
        ChangeKind::LayoutOther,
        ChangeKind::Structure,
        ChangeKind::Added,
        ChangeKind::Removed,
    ];

    /// The name `--ignore` takes (`memory-space`).
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::ElementType => "element-type",
            ChangeKind::Dimensions => "dimensions",
            ChangeKind::Dynamic => "dynamic",
            ChangeKind::MinorToMajor => "minor-to-major",
            ChangeKind::Tiles => "tiles",
            ChangeKind::ElementSize => "element-size",
            ChangeKind::MemorySpace => "memory-space",
            ChangeKind::TailPadding => "tail-padding",
            ChangeKind::SplitConfigs => "split-configs",
            ChangeKind::LayoutOther => "layout-other",
            ChangeKind::Structure => "structure",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One thing that changed in a shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aspect {
    /// Its kind.
    pub kind: ChangeKind,
    /// In words (`minor_to_major changed`, `{2}: added`).
    pub words: String,
}

/// Whether something changed, was added or was removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// In both inputs, different.
    Changed,
    /// Only in the new input.
    Added,
    /// Only in the old input.
    Removed,
}

/// One difference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Changed, added or removed.
    pub what: What,
    /// Where, in words (`entry parameter 0 (x.1)`, `main.1/add.13 (was add.12)`).
    pub place: String,
    /// The computation (its new name, or the old one if removed).
    pub computation: Option<String>,
    /// The instruction (its new name, or the old one if removed).
    pub instruction: Option<String>,
    /// The old shape's text.
    pub old: Option<String>,
    /// The new shape's text.
    pub new: Option<String>,
    /// What changed.
    pub aspects: Vec<Aspect>,
    /// Allocated bytes of the old shape ([`super::listing::allocated_bytes`]).
    pub old_bytes: Option<u64>,
    /// Allocated bytes of the new shape.
    pub new_bytes: Option<u64>,
    /// The line of the shape in the new input (in the old one if removed), if text.
    pub line: Option<usize>,
    /// Its 1-based column, if text.
    pub column: Option<usize>,
    /// The proto path of the shape in the new input (old if removed), if a proto.
    pub path: Option<String>,
}

impl Change {
    /// The change in words, as one line of `diff`'s text output (without the file).
    pub fn words(&self) -> String {
        let aspects = self
            .aspects
            .iter()
            .map(|a| a.words.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let bytes = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
        match (self.what, &self.old, &self.new) {
            (What::Changed, Some(old), Some(new)) => format!(
                "{}: {old} -> {new}: {aspects} (allocated {} -> {} bytes)",
                self.place,
                bytes(self.old_bytes),
                bytes(self.new_bytes)
            ),
            (What::Added, _, Some(new)) => format!(
                "{}: {aspects}: {new} (allocated {} bytes)",
                self.place,
                bytes(self.new_bytes)
            ),
            (What::Removed, Some(old), _) => format!(
                "{}: {aspects}: {old} (allocated {} bytes)",
                self.place,
                bytes(self.old_bytes)
            ),
            _ => format!("{}: {aspects}", self.place),
        }
    }
}

/// How a pair was matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The same name.
    Name,
    /// Both are the entry computation.
    Entry,
    /// The same position among the members of a group (same stem and opcode) of the
    /// same size on both sides.
    Position,
    /// Corresponding operands, in a group whose sizes differ.
    Operands,
    /// The same signature, in a group whose sizes differ: for computations, their
    /// parameter and result shapes; for instructions whose operands are not known (a
    /// listing read back), their shapes.
    Signature,
    /// Called by a matched pair of instructions, in the same place among the
    /// computations each calls.
    Caller,
}

impl How {
    fn words(self) -> &'static str {
        match self {
            How::Name => "by name",
            How::Entry => "as the entry computation",
            How::Position => "by position among same-stem, same-opcode names",
            How::Operands => "by operands",
            How::Signature => "by signature among same-stem names",
            How::Caller => "as called by matched instructions",
        }
    }
}

/// A pair matched other than by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    /// The old computation, for an instruction; `None` for a computation.
    pub computation: Option<String>,
    /// The old name.
    pub old: String,
    /// The new name.
    pub new: String,
    /// How.
    pub how: How,
}

impl Match {
    /// The match in words.
    pub fn words(&self) -> String {
        match &self.computation {
            Some(c) => format!(
                "matched instruction {c}/{} with {} {}",
                self.old,
                self.new,
                self.how.words()
            ),
            None => format!(
                "matched computation {} with {} {}",
                self.old,
                self.new,
                self.how.words()
            ),
        }
    }
}

/// The difference of one pair of files (or one file only on one side).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The key the files were matched by (relative path), or the new file's name.
    pub key: String,
    /// The old file, if any.
    pub old: Option<String>,
    /// The new file, if any.
    pub new: Option<String>,
    /// The differences.
    pub changes: Spooled<Change>,
    /// Pairs matched other than by name.
    pub matches: Spooled<Match>,
    /// Why a file cannot be compared (then nothing else is filled in); boxed, as most
    /// pairs have none (unboxed, it took 64 bytes of every pair's report).
    #[serde(serialize_with = "serialize_error")]
    pub error: Option<Box<ReadError>>,
}

fn serialize_error<S: serde::Serializer>(
    error: &Option<Box<ReadError>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match error {
        None => serializer.serialize_none(),
        Some(e) => {
            let mut map = serializer.serialize_map(Some(3))?;
            map.serialize_entry("file", &e.file)?;
            map.serialize_entry("code", e.code)?;
            map.serialize_entry("message", &e.message)?;
            map.end()
        }
    }
}

impl FileDiff {
    /// Compares two listings held compactly into this pair's report; an error instead
    /// when some entry, instruction or operand of either could not be kept or read back
    /// in its temporary file.
    fn compare(&mut self, old: &Held, new: &Held, options: &Options) {
        let (d, arranged) = diff_held(old, new, options);
        let lost = [old, new]
            .into_iter()
            .find_map(|held| Some((held, held.lost()?.to_string())))
            .or(arranged);
        match lost {
            Some((held, why)) => {
                self.error = Some(Box::new(ReadError {
                    file: held.file.clone(),
                    code: "io_error",
                    message: format!("its shapes or instructions could not be read back: {why}"),
                }));
            }
            None => {
                self.changes = d.changes;
                self.matches = d.matches;
            }
        }
    }

    /// The file's object in the JSON document, with its status.
    fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        value["status"] = self.status().into();
        value
    }

    /// [`FileDiff::to_json`] pretty-printed as an element of the document's `files`,
    /// its changes and matches written one at a time.
    fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        const KEYS: &str = "      ";
        const ITEMS: &str = "        ";
        let rest = FileDiff {
            changes: Spooled::new(),
            matches: Spooled::new(),
            key: self.key.clone(),
            old: self.old.clone(),
            new: self.new.clone(),
            error: self.error.clone(),
        };
        let mut rest = serde_json::to_value(rest).map_err(io::Error::from)?;
        rest["status"] = self.status().into();
        let serde_json::Value::Object(fields) = rest else {
            return Err(io::Error::other("a file's difference is not a JSON object"));
        };
        out.write_all(b"{")?;
        // A JSON value's keys are sorted: the order they print in.
        for (i, (key, value)) in fields.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            write!(
                out,
                "{comma}\n{KEYS}{}: ",
                serde_json::Value::from(key.as_str())
            )?;
            let each = |out: &mut dyn Write, item: serde_json::Result<serde_json::Value>| {
                pretty_at(out, ITEMS, &item.map_err(io::Error::from)?)
            };
            match key.as_str() {
                "changes" => streamed_list(out, (KEYS, ITEMS), &self.changes, |out, c| {
                    each(out, serde_json::to_value(c))
                })?,
                "matches" => streamed_list(out, (KEYS, ITEMS), &self.matches, |out, m| {
                    each(out, serde_json::to_value(m))
                })?,
                _ => pretty_at(out, KEYS, value)?,
            }
        }
        out.write_all(b"\n    }")
    }

    /// `same`, `changed`, `only_old`, `only_new` or `unreadable`.
    pub fn status(&self) -> &'static str {
        if self.error.is_some() {
            "unreadable"
        } else if self.old.is_none() {
            "only_new"
        } else if self.new.is_none() {
            "only_old"
        } else if self.changes.is_empty() {
            "same"
        } else {
            "changed"
        }
    }

    /// Its lines of the text output (inputs named `old` and `new`): one per change, for
    /// a file on one side only, and per pair matched other than by name, each starting
    /// with the file (`KEY: `, written as a listing writes a file's name:
    /// [`listed_name`](super::listing::listed_name)). Each is one line: control
    /// characters in what it says are escaped ([`one_line`](crate::report::text::one_line)).
    fn write_text(&self, (old, new): (&str, &str), out: &mut dyn Write) -> io::Result<()> {
        use crate::report::text::one_line;
        let key = super::listing::listed_name(&self.key);
        let mut line = |said: &str| writeln!(out, "{key}: {}", one_line(said));
        if let Some(e) = &self.error {
            return line(&format!("cannot compare: {e}"));
        }
        match (&self.old, &self.new) {
            (None, Some(_)) => line(&format!("only in {new}"))?,
            (Some(_), None) => line(&format!("only in {old}"))?,
            _ => {}
        }
        self.changes
            .try_for_each(|e| e, |change| line(&change.words()))?;
        self.matches
            .try_for_each(|e| e, |m| line(&format!("note: {}", m.words())))
    }

    /// Its report in `validate`'s model (inputs named `old` and `new`), to render as
    /// GitHub workflow commands or SARIF: named by the new file, one finding per change
    /// (`diff.changed`, `diff.added`, `diff.removed`, warnings), an unreadable input as
    /// an unreadable report.
    fn report(&self, (old, new): (&str, &str)) -> FileReport {
        let name = self
            .new
            .clone()
            .or_else(|| self.old.clone())
            .unwrap_or_default();
        if let Some(e) = &self.error {
            return FileReport::unreadable(e.file.clone(), None, e.code, e.message.clone());
        }
        let mut report = FileReport::new(name, None::<Form>);
        match (&self.old, &self.new) {
            (None, Some(_)) => report.findings.push(Finding::new(
                "diff.added",
                crate::Severity::Warning,
                format!("only in {new}"),
            )),
            (Some(_), None) => report.findings.push(Finding::new(
                "diff.removed",
                crate::Severity::Warning,
                format!("only in {old}"),
            )),
            _ => {}
        }
        let read = self.changes.try_for_each(
            |e| e,
            |change| {
                let code = match change.what {
                    What::Changed => "diff.changed",
                    What::Added => "diff.added",
                    What::Removed => "diff.removed",
                };
                let mut finding = Finding::new(code, crate::Severity::Warning, change.words());
                finding.line = change.line;
                finding.column = change.column.or(change.line.map(|_| 1));
                finding.path = change.path.clone().unwrap_or_default();
                finding.computation = change.computation.clone();
                finding.instruction = change.instruction.clone();
                finding.shape = change.new.clone().or_else(|| change.old.clone());
                report.findings.push(finding);
                Ok(())
            },
        );
        if let Err(e) = read {
            // Never a silent loss: the changes that could not be read back.
            let message = format!("cannot read the changes back: {e}");
            let lost = Finding::new("io_error", crate::Severity::Error, message);
            report.findings.push(lost);
        }
        report.shapes = self.changes.len();
        report
    }
}

/// The JSON document's `tool`.
fn tool() -> serde_json::Value {
    serde_json::json!({"name": "xla-shape", "version": env!("CARGO_PKG_VERSION")})
}

/// Writes a [`Spooled`] list as a pretty-printed JSON array whose brackets stand at a
/// depth of `indent` and items at `item_indent` (`[]` when empty), each read back and
/// written by `item` in turn.
fn streamed_list<T: Serialize + serde::de::DeserializeOwned>(
    out: &mut dyn Write,
    (indent, item_indent): (&str, &str),
    items: &Spooled<T>,
    mut item: impl FnMut(&mut dyn Write, &T) -> io::Result<()>,
) -> io::Result<()> {
    out.write_all(b"[")?;
    let mut written = 0;
    items.try_for_each(
        |e| e,
        |each| {
            next_item(out, &mut written, item_indent)?;
            item(out, each)
        },
    )?;
    end_array(out, written, indent)
}

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only the entry computation layout (and single messages).
    pub entry_only: bool,
    /// Kinds of change to leave out.
    pub ignore: Vec<ChangeKind>,
}

/// The whole difference of two inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DiffReport {
    /// The old input as given.
    pub old: String,
    /// The new input as given.
    pub new: String,
    /// One per pair of files, and per file on one side only, sorted by key.
    pub files: Vec<FileDiff>,
}

/// Counts of a [`DiffReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DiffSummary {
    /// Pairs and lone files.
    pub files: usize,
    /// Pairs with changes.
    pub changed: usize,
    /// Changes in all.
    pub changes: usize,
    /// Files only in the old input.
    pub only_old: usize,
    /// Files only in the new input.
    pub only_new: usize,
    /// Files that cannot be compared.
    pub unreadable: usize,
}

impl std::fmt::Display for DiffSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "compared {}: {}",
            plural(self.files, "file", "files"),
            if self.files == 0 {
                "nothing to compare (neither input holds a file the walk picks)".to_string()
            } else if self.changes == 0 && self.only_old == 0 && self.only_new == 0 {
                "no difference".to_string()
            } else {
                plural(self.changes, "change", "changes")
            }
        )?;
        if self.only_old > 0 {
            write!(
                f,
                ", {} only in the old input",
                plural(self.only_old, "file", "files")
            )?;
        }
        if self.only_new > 0 {
            write!(
                f,
                ", {} only in the new input",
                plural(self.only_new, "file", "files")
            )?;
        }
        if self.unreadable > 0 {
            write!(f, ", {} unreadable", self.unreadable)?;
        }
        Ok(())
    }
}

impl DiffSummary {
    /// Counts one more pair (or lone file).
    pub fn add(&mut self, file: &FileDiff) {
        self.files += 1;
        self.changes += file.changes.len();
        match file.status() {
            "changed" => self.changed += 1,
            "only_old" => self.only_old += 1,
            "only_new" => self.only_new += 1,
            "unreadable" => self.unreadable += 1,
            _ => {}
        }
    }

    /// 0 no difference, 1 some difference, 2 some input cannot be read, or nothing was
    /// compared (two directories that hold no file the walk picks: a gate that
    /// compared nothing has not passed).
    pub fn exit_code(&self) -> u8 {
        if self.unreadable > 0 || self.files == 0 {
            2
        } else if self.changes > 0 || self.only_old > 0 || self.only_new > 0 {
            1
        } else {
            0
        }
    }
}

impl DiffReport {
    /// The counts.
    pub fn summary(&self) -> DiffSummary {
        let mut s = DiffSummary::default();
        for file in &self.files {
            s.add(file);
        }
        s
    }

    /// 0 no difference, 1 some difference, 2 some input cannot be read or nothing was
    /// compared ([`DiffSummary::exit_code`]).
    pub fn exit_code(&self) -> u8 {
        self.summary().exit_code()
    }

    /// Writes the report in `format` through a [`DiffWriter`]: what
    /// [`DiffWriter::file`] says of each pair.
    ///
    /// # Errors
    /// Writing fails, or changes kept in a temporary file cannot be read back.
    pub fn write(&self, format: crate::report::Format, out: &mut dyn Write) -> io::Result<()> {
        let mut writer = DiffWriter::new(format, &self.old, &self.new, out);
        for file in &self.files {
            writer.file(file)?;
        }
        writer.finish().map(drop)
    }

    /// The text output: one line per change, per file on one side only, and per pair
    /// matched other than by name, each starting with the file (`KEY: `), written as
    /// it goes.
    ///
    /// # Errors
    /// Writing fails.
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write(crate::report::Format::Text, out)
    }

    /// The JSON document (`diff --format json`).
    pub fn to_json(&self) -> serde_json::Value {
        let files: Vec<serde_json::Value> = self.files.iter().map(FileDiff::to_json).collect();
        serde_json::json!({
            "version": 1,
            "tool": tool(),
            "old": self.old,
            "new": self.new,
            "files": files,
            "summary": self.summary(),
        })
    }

    /// [`DiffReport::to_json`] pretty-printed with a final newline, the same bytes,
    /// written a change at a time (a value of the whole took fifteen times the text
    /// it prints).
    ///
    /// # Errors
    /// Writing fails.
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write(crate::report::Format::Json, out)
    }

    /// The report model of `validate`, to render as GitHub workflow commands or SARIF:
    /// one file report per pair (named by the new file), one finding per change
    /// (`diff.changed`, `diff.added`, `diff.removed`, warnings), unreadable inputs as
    /// unreadable reports.
    pub fn to_document(&self) -> Document {
        let names = (self.old.as_str(), self.new.as_str());
        Document {
            files: self.files.iter().map(|file| file.report(names)).collect(),
            strict: false,
        }
    }
}

/// Writes a diff report a pair at a time, as [`diff_paths_each`] hands them on: the same
/// bytes as [`DiffReport::write`] of the report that holds the same pairs, with one
/// pair's report in memory at a time (a report of 200,000 pairs that each changed,
/// held whole, took 40 times the listings compared).
///
/// Text is [`DiffReport::write_text`]'s lines, JSON [`DiffReport::write_json`]'s
/// document, GitHub workflow commands and SARIF's results those of
/// [`render`](crate::report::render) of [`DiffReport::to_document`]. SARIF's invocation
/// gives `diff`'s exit status ([`DiffSummary::exit_code`]) and, when nothing was
/// compared, a notification that says so.
pub struct DiffWriter<'a> {
    format: crate::report::Format,
    old: String,
    new: String,
    out: &'a mut dyn Write,
    summary: DiffSummary,
    started: bool,
    /// Entries written so far in the array the document streams (JSON's files,
    /// SARIF's results).
    items: usize,
    /// SARIF's invocation, written at the end.
    invocation: crate::report::sarif::Invocation,
}

impl std::fmt::Debug for DiffWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiffWriter")
            .field("format", &self.format)
            .field("old", &self.old)
            .field("new", &self.new)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl<'a> DiffWriter<'a> {
    /// A report in `format` of the inputs given as `old` and `new`; nothing is written
    /// before the first pair or [`finish`](DiffWriter::finish).
    pub fn new(
        format: crate::report::Format,
        old: &str,
        new: &str,
        out: &'a mut dyn Write,
    ) -> Self {
        DiffWriter {
            format,
            old: old.to_string(),
            new: new.to_string(),
            out,
            summary: DiffSummary::default(),
            started: false,
            items: 0,
            invocation: Default::default(),
        }
    }

    fn start(&mut self) -> io::Result<()> {
        use crate::report::{sarif, Format};
        if !self.started {
            self.started = true;
            match self.format {
                // The keys in the order a JSON value prints them: sorted.
                Format::Json => self.out.write_all(b"{\n  \"files\": [")?,
                Format::Sarif => sarif::start(self.out)?,
                Format::Text | Format::Github => {}
            }
        }
        Ok(())
    }

    /// Writes the report of the next pair (or lone file).
    ///
    /// # Errors
    /// Writing fails, or changes kept in a temporary file cannot be read back.
    pub fn file(&mut self, file: &FileDiff) -> io::Result<()> {
        use crate::report::{github, sarif, Format};
        self.start()?;
        let names = (self.old.as_str(), self.new.as_str());
        match self.format {
            Format::Text => file.write_text(names, self.out)?,
            Format::Json => {
                next_item(self.out, &mut self.items, "    ")?;
                file.write_json(self.out)?;
            }
            Format::Github => github::file(&file.report(names), self.out)?,
            Format::Sarif => {
                let report = file.report(names);
                sarif::file(&report, &mut self.items, self.out)?;
                self.invocation.file(&report)?;
            }
        }
        self.summary.add(file);
        Ok(())
    }

    /// The counts so far.
    pub fn summary(&self) -> DiffSummary {
        self.summary
    }

    /// Ends the report, and gives the counts over every pair.
    ///
    /// # Errors
    /// Writing fails.
    pub fn finish(mut self) -> io::Result<DiffSummary> {
        use crate::report::{sarif, Format};
        self.start()?;
        match self.format {
            Format::Json => {
                end_array(self.out, self.items, "  ")?;
                let summary = serde_json::to_value(self.summary).map_err(io::Error::from)?;
                for (key, value) in [
                    ("new", serde_json::Value::from(self.new.as_str())),
                    ("old", serde_json::Value::from(self.old.as_str())),
                    ("summary", summary),
                    ("tool", tool()),
                    ("version", serde_json::Value::from(1)),
                ] {
                    write!(self.out, ",\n  \"{key}\": ")?;
                    pretty_at(self.out, "  ", &value)?;
                }
                self.out.write_all(b"\n}\n")?;
            }
            Format::Sarif => {
                let mut invocation = std::mem::take(&mut self.invocation);
                if self.summary.files == 0 {
                    // No input to name: the run as a whole checked nothing.
                    invocation.note(&self.summary.to_string())?;
                }
                sarif::end(self.items, invocation, self.summary.exit_code(), self.out)?
            }
            Format::Text | Format::Github => {}
        }
        Ok(self.summary)
    }
}

// ----- reading both sides -----

/// One side of a diff: its files by key, each as the side's record of it (the keys
/// and records sorted through temporary files, [`pairing::Keys`]: held, with a `File`
/// each, they took some 40 bytes a file).
struct Side {
    single: bool,
    keys: pairing::Keys,
    /// The listing files read back whose files the side names, by the records'
    /// numbers.
    backs: Vec<std::sync::Arc<Back>>,
    /// The files read (or that cannot be), held until they are compared, by the
    /// records' numbers.
    kept: Vec<Option<File>>,
}

/// What a side's record of a file starts with: file `.1` of listing file read back
/// `.0` ([`File::Listed`]).
const RECORD_LISTED: u8 = 0;
/// A path to read later ([`File::Later`]).
const RECORD_LATER: u8 = 1;
/// A file held ([`Side::kept`]).
const RECORD_KEPT: u8 = 2;

impl Side {
    /// No file yet.
    fn new(single: bool) -> Self {
        Side {
            single,
            keys: pairing::Keys::default(),
            backs: Vec::new(),
            kept: Vec::new(),
        }
    }

    /// One file, `file`, under `key`.
    fn one(key: &str, file: File) -> Self {
        let mut side = Side::new(true);
        side.add(key, file);
        side
    }

    /// Adds `file` under `key` (past `u32::MAX - 1` files, it is left out and the keys
    /// are [`full`](pairing::Keys::full)).
    fn add(&mut self, key: &str, file: File) {
        let number = |len: usize| u32::try_from(len).unwrap_or(NONE).to_le_bytes();
        let record = match file {
            File::Listed(back, index) => {
                let same = self
                    .backs
                    .last()
                    .is_some_and(|last| std::sync::Arc::ptr_eq(last, &back));
                if !same {
                    self.backs.push(back);
                }
                let mut record = vec![RECORD_LISTED];
                record.extend_from_slice(&number(self.backs.len() - 1));
                record.extend_from_slice(&index.to_le_bytes());
                record
            }
            File::Later(path) => {
                let mut record = vec![RECORD_LATER];
                record.extend_from_slice(&crate::spool::os_bytes(path.as_os_str()));
                record
            }
            file @ (File::Held(_) | File::Unreadable(_)) => {
                self.kept.push(Some(file));
                let mut record = vec![RECORD_KEPT];
                record.extend_from_slice(&number(self.kept.len() - 1));
                record
            }
        };
        self.keys.push(key, record);
    }

    /// The file the side's `record` stands for (a file held is taken: each is
    /// compared once); a file that cannot be read when the record does not read back.
    fn file(&mut self, key: &str, record: &[u8]) -> File {
        let number = |bytes: &[u8]| Some(u32::from_le_bytes(bytes.try_into().ok()?) as usize);
        let file = match record.split_first() {
            Some((&RECORD_LISTED, rest)) if rest.len() == 8 => {
                let back = number(&rest[..4]).and_then(|at| self.backs.get(at));
                let index = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
                back.map(|back| File::Listed(back.clone(), index))
            }
            Some((&RECORD_LATER, rest)) => {
                let path = crate::spool::os_string(rest.to_vec());
                Some(File::Later(Box::new(path.into())))
            }
            Some((&RECORD_KEPT, rest)) => number(rest).and_then(|at| self.kept.get_mut(at)?.take()),
            _ => None,
        };
        file.unwrap_or_else(|| {
            File::Unreadable(Box::new(ReadError {
                file: key.to_string(),
                code: "io_error",
                message: crate::spool::broken_run().to_string(),
            }))
        })
    }

    /// Itself; a file that cannot be read in its stead (named `name`) when some of
    /// its files could not be added.
    fn checked(self, name: &str) -> Self {
        if !self.keys.full() {
            return self;
        }
        let error = ReadError {
            file: name.to_string(),
            code: "too_large",
            message: format!(
                "it has more than {} files, or a file's name of 4 GiB or more",
                NONE - 1
            ),
        };
        Side::one(name, File::Unreadable(Box::new(error)))
    }
}

/// A file of a side: read; one of the files a listing file read back names, held when
/// it is compared; or, when it is one listing of its own, left to be read when it is
/// compared, so that two directories of many modules are compared a pair of files at a
/// time, not held whole.
enum File {
    /// Read and held.
    Held(Box<Held>),
    /// Why it cannot be read.
    Unreadable(Box<ReadError>),
    /// File `.1` of a listing file read back.
    Listed(std::sync::Arc<Back>, u32),
    /// A file's path, to be read (boxed, so that a `File` is 16 bytes: a side of many
    /// files holds one each). Its name is the path shown, made when asked for.
    Later(Box<std::path::PathBuf>),
}

impl File {
    /// The file's name as the report shows it.
    fn name(&self) -> String {
        match self {
            File::Held(held) => held.file.clone(),
            File::Unreadable(e) => e.file.clone(),
            File::Listed(back, index) => back.files.file(*index as usize),
            File::Later(path) => path.display().to_string(),
        }
    }

    /// The file read; `None` when a file left for later does not list as one listing
    /// after all (it changed since it was told to).
    fn read(self, options: &ReadOptions) -> Option<Result<Box<Held>, ReadError>> {
        match self {
            File::Held(held) => Some(Ok(held)),
            File::Unreadable(e) => Some(Err(*e)),
            File::Listed(back, index) => Some(held::hold_listed(&back, index as usize)),
            File::Later(path) => match held::read_path(&path, &path.display().to_string(), options)
            {
                Ok(held::Read::One(held)) => Some(Ok(held)),
                Ok(held::Read::Back(back)) if back.files.len() == 1 => {
                    Some(held::hold_listed(&back, 0))
                }
                Ok(held::Read::Back(_)) => None,
                Err(e) => Some(Err(e)),
            },
        }
    }
}

/// The key of a file a listing file read back names, when it names several.
enum ListedKey<'a> {
    /// The file's name past this many bytes (a directory all share).
    Past(usize),
    /// The file's name after the key of the listing file (in a directory) and a `:`.
    In(&'a str),
}

/// The files of one file read: itself under `key`; or each file a listing file read
/// back names, under `key` when it names one, else under the key `key_of` says; each
/// handed to `add`.
fn files_of(
    read: Result<held::Read, ReadError>,
    key: &str,
    key_of: ListedKey<'_>,
    add: &mut dyn FnMut(&str, File),
) {
    match read {
        Ok(held::Read::One(held)) => add(key, File::Held(held)),
        Ok(held::Read::Back(back)) if back.files.len() == 1 => add(key, File::Listed(back, 0)),
        Ok(held::Read::Back(back)) => {
            for index in 0..back.files.len() {
                // A file's index is a string's in the listing's names: a `u32`.
                let file = File::Listed(back.clone(), index as u32);
                let name = back.files.file(index);
                match key_of {
                    ListedKey::Past(prefix) => add(name.get(prefix..).unwrap_or(&name), file),
                    ListedKey::In(key) => add(&format!("{key}:{name}"), file),
                }
            }
        }
        Err(e) => add(key, File::Unreadable(Box::new(e))),
    }
}

/// Reads one side (at `path`, named `name`): a file now, a directory's files now or
/// (each that lists as one listing of its own) when compared.
fn read_side((path, name): (&FsPath, &str), read: &ReadOptions, walk: &crate::check::Walk) -> Side {
    use rayon::prelude::*;
    let name = name.to_string();
    let failed = |name: String, e: std::io::Error| {
        let error = ReadError {
            file: name.clone(),
            code: "io_error",
            message: e.to_string(),
        };
        Side::one(&name, File::Unreadable(Box::new(error)))
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            // The files as the walk finds them, a few at a time each read (or told to
            // list as one listing of their own) on the threads, in order: the paths of
            // the whole walk, and then every file's key and read, were held at once.
            let mut side = Side::new(false);
            let mut found = walk.stream(path);
            let at_a_time = at_a_time();
            loop {
                let mut files = Vec::with_capacity(at_a_time);
                for file in found.by_ref().take(at_a_time) {
                    match file {
                        Ok(file) => files.push(file),
                        // A directory below that cannot be listed: the side cannot be
                        // compared (its files would be taken for files on one side).
                        Err((dir, e)) if dir != path => {
                            let e = io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
                            return failed(name, e);
                        }
                        Err((_, e)) => return failed(name, e),
                    }
                }
                if files.is_empty() {
                    break;
                }
                // Each path moved, not copied, to a file left for later.
                let read: Vec<(String, File)> = files
                    .into_par_iter()
                    .flat_map_iter(|file| {
                        let key = relative_key(file.strip_prefix(path).unwrap_or(&file));
                        if listing::lists_as_one(&file, read) {
                            return vec![(key, File::Later(Box::new(file)))];
                        }
                        let shown = file.display().to_string();
                        let mut files = Vec::new();
                        let read = held::read_path(&file, &shown, read);
                        files_of(read, &key, ListedKey::In(&key), &mut |key, file| {
                            files.push((key.to_string(), file));
                        });
                        files
                    })
                    .collect();
                for (key, file) in read {
                    side.add(&key, file);
                }
            }
            side.checked(&name)
        }
        Ok(_) => {
            let read = held::read_path(path, &name, read);
            let prefix = match &read {
                Ok(held::Read::Back(back)) => {
                    common_dir((0..back.files.len()).map(|index| back.files.file(index)))
                }
                _ => 0,
            };
            let key = match &read {
                Ok(held::Read::One(held)) => held.file.clone(),
                Ok(held::Read::Back(back)) => back.files.file(0),
                Err(_) => name.clone(),
            };
            let mut side = Side::new(false);
            let key_of = ListedKey::Past(prefix);
            files_of(read, &key, key_of, &mut |key, file| side.add(key, file));
            side.single = side.keys.len() == 1;
            side.checked(&name)
        }
        Err(e) => failed(name, e),
    }
}

fn relative_key(path: &FsPath) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The length of the longest directory prefix (through a `/`) all names share.
fn common_dir<S: AsRef<str>>(mut names: impl Iterator<Item = S>) -> usize {
    let Some(first) = names.next() else { return 0 };
    let first = first.as_ref();
    let mut len = first.rfind('/').map_or(0, |i| i + 1);
    for name in names {
        let name = name.as_ref();
        while len > 0 && !(name.len() >= len && name.as_bytes()[..len] == first.as_bytes()[..len]) {
            len = first[..len - 1].rfind('/').map_or(0, |i| i + 1);
        }
    }
    len
}

/// Compares two inputs given by path: files (modules, messages, listings) or
/// directories, files matched by relative path (see the module docs). The report holds
/// every pair: [`diff_paths_each`] hands each on as it is compared instead.
pub fn diff_paths(
    old: &FsPath,
    new: &FsPath,
    read: &ReadOptions,
    walk: &crate::check::Walk,
    options: &Options,
) -> DiffReport {
    let mut files = Vec::new();
    let kept = diff_paths_each((old, new), read, walk, options, &mut |file| {
        files.push(file);
        Ok(())
    });
    // Keeping a pair does not fail.
    debug_assert!(kept.is_ok());
    DiffReport {
        old: old.display().to_string(),
        new: new.display().to_string(),
        files,
    }
}

/// How many pairs of files a thread compares at a time: [`diff_paths_each`] compares
/// this many a thread, hands them on in order, then compares the next.
const PAIRS_A_THREAD: usize = 16;

/// How many files or pairs are handled at a time on the threads: [`PAIRS_A_THREAD`]
/// each.
fn at_a_time() -> usize {
    PAIRS_A_THREAD * rayon::current_num_threads().max(1)
}

/// [`diff_paths`], each pair's report (sorted by key) handed to `each` as soon as it
/// and those before it are compared, so that a comparison of any number of pairs holds
/// the reports of a few (those of 200,000 pairs that each changed, held until all were
/// compared, took 40 times the listings compared). A directory's file that lists as
/// one listing of its own is read when its pair is compared (should it no longer list
/// as one then, it changed while it was compared: its pair is reported unreadable).
///
/// # Errors
/// The first error `each` returns: no pair is compared after it.
pub fn diff_paths_each(
    (old, new): (&FsPath, &FsPath),
    read: &ReadOptions,
    walk: &crate::check::Walk,
    options: &Options,
    each: &mut dyn FnMut(FileDiff) -> io::Result<()>,
) -> io::Result<()> {
    let (old_name, new_name) = (old.display().to_string(), new.display().to_string());
    let sides = [(old, old_name.as_str()), (new, new_name.as_str())];
    diff_named_each(sides, read, walk, options, each)
}

/// [`diff_paths_each`] of two inputs each given as (path, the name the report gives
/// it): a file read from a copy (of standard input, say) named as its source.
///
/// # Errors
/// The first error `each` returns: no pair is compared after it.
pub fn diff_named_each(
    sides: [(&FsPath, &str); 2],
    read: &ReadOptions,
    walk: &crate::check::Walk,
    options: &Options,
    each: &mut dyn FnMut(FileDiff) -> io::Result<()>,
) -> io::Result<()> {
    // Two files, each one listing: read as they are compared.
    if let Some(file) = diff_files_streamed(sides, read, options) {
        return each(file);
    }
    let [old, new] = sides;
    let (mut old_side, mut new_side) =
        rayon::join(|| read_side(old, read, walk), || read_side(new, read, walk));
    // A pair's report, named (its names made here, not as the pairs are compared on
    // threads: made there, between each pair's own allocations, they held on to pages
    // of memory the comparisons had freed, some 17 MB for 200,000 pairs).
    let named = |key: String, o: &Option<File>, n: &Option<File>| FileDiff {
        key,
        old: o.as_ref().map(File::name),
        new: n.as_ref().map(File::name),
        ..FileDiff::default()
    };
    // Compares a pair into its report.
    let compare = |file: &mut FileDiff, o: Option<File>, n: Option<File>| {
        let read = |side: Option<File>, name: &Option<String>| {
            let changed = || Err(changed(name.clone().unwrap_or_default()));
            side.map(|side| side.read(read).unwrap_or_else(changed))
        };
        let (o, n) = (read(o, &file.old), read(n, &file.new));
        match (o, n) {
            (Some(Err(e)), _) | (_, Some(Err(e))) => file.error = Some(Box::new(e)),
            (Some(Ok(o)), Some(Ok(n))) => file.compare(&o, &n, options),
            _ => {}
        }
    };
    if old_side.single && new_side.single {
        // A side of one file: its key and record.
        let first = |side: &mut Side| {
            let keys = std::mem::take(&mut side.keys);
            let (key, record) = keys.first()?.ok_or_else(|| io::Error::other("no file"))?;
            io::Result::Ok((side.file(&key, &record), key))
        };
        let ((o, _), (n, key)) = match (first(&mut old_side), first(&mut new_side)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => return each(unpaired(sides, &e)),
        };
        let (o, n) = (Some(o), Some(n));
        let mut file = named(key, &o, &n);
        compare(&mut file, o, n);
        return each(file);
    }
    let mut paired = match pairing::pair(
        std::mem::take(&mut old_side.keys),
        std::mem::take(&mut new_side.keys),
    ) {
        Ok(paired) => paired,
        Err(e) => return each(unpaired(sides, &e)),
    };
    let at_a_time = at_a_time();
    loop {
        let mut files = Vec::with_capacity(at_a_time);
        let mut sides_of = Vec::with_capacity(at_a_time);
        let mut failed = None;
        while files.len() < at_a_time {
            let pair = match paired.next_pair() {
                Ok(Some(pair)) => pair,
                Ok(None) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            let file = |side: &mut Side, of: Option<(u32, Vec<u8>)>| {
                of.map(|(_, record)| side.file(&pair.key, &record))
            };
            let (o, n) = (file(&mut old_side, pair.old), file(&mut new_side, pair.new));
            files.push(named(pair.key, &o, &n));
            sides_of.push((o, n));
        }
        if files.is_empty() && failed.is_none() {
            return Ok(());
        }
        {
            use rayon::prelude::*;
            // A pair at a time on each thread: each pair's files read, compared,
            // dropped, its report filled in its place.
            let compared = files.par_iter_mut().zip(sides_of);
            compared.for_each(|(file, (o, n))| compare(file, o, n));
        }
        for file in files {
            each(file)?;
        }
        if let Some(e) = failed {
            return each(unpaired(sides, &e));
        }
    }
}

/// The report of two sides whose files could not be paired (a temporary file of the
/// pairing did not read back): unreadable, so that what was not compared does not
/// pass.
fn unpaired([(_, old), (_, new)]: [(&FsPath, &str); 2], e: &io::Error) -> FileDiff {
    FileDiff {
        key: new.to_string(),
        old: Some(old.to_string()),
        new: Some(new.to_string()),
        error: Some(Box::new(ReadError {
            file: new.to_string(),
            code: "io_error",
            message: format!("its files could not be paired with {old}'s: {e}"),
        })),
        ..FileDiff::default()
    }
}

/// Why a directory's file, told to list as one listing of its own when the directory
/// was read, cannot be compared: it no longer does (it changed since).
fn changed(name: String) -> ReadError {
    ReadError {
        file: name,
        code: "io_error",
        message: "it changed while it was compared: it no longer lists as one listing of its own"
            .to_string(),
    }
}

/// Compares two files that each list as one listing (a module, or messages), one of
/// them shape lines, each read on a thread of its own as it is compared: shape by
/// shape as they come, in the memory of a few shapes (both were held whole: two files
/// of two million shape lines, 54 MB each, took 132 MB). A side whose read ends before
/// its first shape (an error, no shape) is compared as [`read_side`] holds it. The
/// report is [`diff_paths_each`]'s. `None` when either is no such file (a directory, a
/// listing file read back, neither is shape lines) or no thread can be started (or
/// fit in a limited address space, [`crate::threads::room_for`]): the caller reads
/// them as before.
fn diff_files_streamed(
    [(old, old_name), (new, new_name)]: [(&FsPath, &str); 2],
    read: &ReadOptions,
    options: &Options,
) -> Option<FileDiff> {
    // Two modules are held whole all the same: they are left to `read_side`, which
    // reads them on rayon's threads (handed from thread to thread here, a module of a
    // million instructions took half as long again).
    let head = |path: &FsPath| match path.is_file() {
        true => listing::head_of(path, read),
        false => (false, false),
    };
    let ((old_one, old_lines), (new_one, new_lines)) = (head(old), head(new));
    // Two reading threads, and one that holds a side read whole.
    if !(old_one && new_one && (old_lines || new_lines)) || !crate::threads::room_for(3) {
        return None;
    }
    std::thread::scope(|scope| {
        let old_events = held::read_on_thread(scope, (old, old_name), read)?;
        let new_events = held::read_on_thread(scope, (new, new_name), read)?;
        let mut sides = [SideRead::new(old_events)?, SideRead::new(new_events)?];
        let messages = sides.iter().any(|side| side.kind() == Some(Kind::Messages));
        let singles = sides.iter().all(SideRead::single);
        if sides.iter().any(SideRead::failed) {
            // A read that failed before its first shape: the other is read to its end
            // for its own error (the old one's is reported first), holding nothing.
            return ended(sides, None);
        }
        if !(messages && singles) {
            // A read that ended before its first shape: held whole, as `read_side`
            // holds them, each as it is read.
            let [o, n] = sides;
            let n = std::thread::Builder::new()
                .spawn_scoped(scope, move || held::hold_events(n.events()))
                .ok()?;
            let o = held::hold_events(o.events());
            let (o, n) = (o?, n.join().ok()??);
            let name = |side: &Result<Held, ReadError>| match side {
                Ok(held) => held.file.clone(),
                Err(e) => e.file.clone(),
            };
            let mut file = FileDiff {
                key: name(&n),
                old: Some(name(&o)),
                new: Some(name(&n)),
                ..FileDiff::default()
            };
            match (o, n) {
                (Err(e), _) | (_, Err(e)) => file.error = Some(Box::new(e)),
                (Ok(o), Ok(n)) => file.compare(&o, &n, options),
            }
            return Some(file);
        }
        let mut out = Differ {
            options,
            result: ListingDiff::default(),
        };
        let [old_side, new_side] = &mut sides;
        let mut step = InStep::new(old_side.name(), new_side.name());
        loop {
            let (o, n) = (old_side.next_entry(), new_side.next_entry());
            if (o.is_none() && n.is_none()) || old_side.failed() || new_side.failed() {
                break;
            }
            step.push(&mut out, o, n);
        }
        step.finish(&mut out);
        ended(sides, Some(out.result.changes))
    })
}

/// The report of two files compared as they were read, with their `changes` (`None`
/// when a read failed before its first shape): each read to its end, the old one's
/// error reported first; `None` when a read ended without a listing of its own.
fn ended(sides: [SideRead; 2], changes: Option<Spooled<Change>>) -> Option<FileDiff> {
    let [o, n] = sides.map(SideRead::end);
    let (o, n) = (o?, n?);
    let mut file = FileDiff {
        key: n.name(),
        old: Some(o.name()),
        new: Some(n.name()),
        ..FileDiff::default()
    };
    match (o, n, changes) {
        (Ended::Failed(e), _, _) | (_, Ended::Failed(e), _) => file.error = Some(Box::new(e)),
        (_, _, Some(changes)) => file.changes = changes,
        (_, _, None) => return None,
    }
    Some(file)
}

/// One side of [`diff_files_streamed`]: the events of its read, the first (its
/// listing, or the end) already received.
struct SideRead {
    events: std::sync::mpsc::Receiver<held::Event>,
    first: Option<held::Event>,
    /// The listing's file name as the report shows it (told by the first event).
    file: String,
    /// The end of the read, once received.
    done: Option<Result<Option<Listing>, ReadError>>,
    /// The items received and not yet taken.
    batch: std::vec::IntoIter<listing::Item>,
}

/// How a side's read ended.
enum Ended {
    /// Read to its end: the file's name.
    Read(String),
    /// Its error.
    Failed(ReadError),
}

impl Ended {
    fn name(&self) -> String {
        match self {
            Ended::Read(file) => file.clone(),
            Ended::Failed(e) => e.file.clone(),
        }
    }
}

impl SideRead {
    /// The side whose read hands on `events`, once its first event is received; `None`
    /// when the read stopped without ending.
    fn new(events: std::sync::mpsc::Receiver<held::Event>) -> Option<Self> {
        let (first, file, done) = match events.recv().ok()? {
            held::Event::First { file, kind, single } => {
                let name = file.clone();
                (Some(held::Event::First { file, kind, single }), name, None)
            }
            // Ended before its first shape.
            held::Event::Done(done) => {
                let file = match &done {
                    Ok(Some(listing)) => listing.file.clone(),
                    Err(e) => e.file.clone(),
                    Ok(None) => String::new(),
                };
                (None, file, Some(done))
            }
            items => (Some(items), String::new(), None),
        };
        Some(SideRead {
            events,
            first,
            file,
            done,
            batch: Vec::new().into_iter(),
        })
    }

    /// The listing's kind, when its first event told it.
    fn kind(&self) -> Option<Kind> {
        match &self.first {
            Some(held::Event::First { kind, .. }) => Some(*kind),
            _ => None,
        }
    }

    /// Whether the read is of one listing with entries (not a listing file read back,
    /// nor a read that ended before its first entry).
    fn single(&self) -> bool {
        matches!(&self.first, Some(held::Event::First { single: true, .. }))
    }

    /// The listing's file name as the report shows it.
    fn name(&self) -> String {
        self.file.clone()
    }

    /// Every event, the first included.
    fn events(self) -> impl Iterator<Item = held::Event> {
        let done = self.done.map(held::Event::Done);
        self.first.into_iter().chain(done).chain(self.events)
    }

    /// The next entry; `None` once the read has ended (or failed).
    fn next_entry(&mut self) -> Option<Entry> {
        self.first = None;
        loop {
            for item in self.batch.by_ref() {
                if let listing::Item::Entry(entry) = item {
                    return Some(entry);
                }
            }
            if self.done.is_some() {
                return None;
            }
            match self.events.recv() {
                Ok(held::Event::Items(items)) => self.batch = items.into_iter(),
                Ok(held::Event::First { .. }) => {}
                Ok(held::Event::Done(done)) => {
                    self.done = Some(done);
                    return None;
                }
                Err(_) => {
                    self.done = Some(Ok(None));
                    return None;
                }
            }
        }
    }

    /// Whether the read ended with an error.
    fn failed(&self) -> bool {
        matches!(self.done, Some(Err(_)))
    }

    /// How the read ended (read on to its end if need be); `None` when it stopped
    /// without ending or read as several listings.
    fn end(mut self) -> Option<Ended> {
        let name = self.name();
        while self.done.is_none() {
            self.next_entry();
        }
        match self.done? {
            Ok(Some(_)) => Some(Ended::Read(name)),
            Ok(None) => None,
            Err(e) => Some(Ended::Failed(e)),
        }
    }
}

/// Two listings of messages compared shape by shape as they are read
/// ([`Differ::messages`] as the entries come): a pair is compared as soon as its place
/// is known. The places of shapes (`shape` or `shape N`) depend on whether the two
/// hold more than two shapes in all, so pairs from the first shape on wait until a
/// third is seen or both end.
struct InStep {
    /// Shapes (entries of role [`Role::Result`]) seen on both sides.
    shapes: usize,
    shape_number: usize,
    waiting: std::collections::VecDeque<(Option<Entry>, Option<Entry>)>,
    /// Each side's pair, held for comparison (emptied and filled for each pair).
    held: [Held; 2],
}

impl InStep {
    fn new(old: String, new: String) -> Self {
        InStep {
            shapes: 0,
            shape_number: 0,
            waiting: std::collections::VecDeque::new(),
            held: [
                Held::new(&old, Kind::Messages),
                Held::new(&new, Kind::Messages),
            ],
        }
    }

    /// Whether the place of a pair is a shape's (which waits for the count of shapes).
    fn numbered((o, n): &(Option<Entry>, Option<Entry>)) -> bool {
        let role = n.as_ref().or(o.as_ref()).map(|e| &e.role);
        !matches!(role, Some(Role::EntryParameter { .. } | Role::EntryResult))
    }

    fn push(&mut self, out: &mut Differ<'_>, o: Option<Entry>, n: Option<Entry>) {
        let shapes = [&o, &n].into_iter().flatten();
        self.shapes += shapes.filter(|e| e.role == Role::Result).count();
        self.waiting.push_back((o, n));
        if self.shapes > 2 {
            self.flush(out);
            return;
        }
        // Those ahead of the first shape need no count.
        while self
            .waiting
            .front()
            .is_some_and(|pair| !Self::numbered(pair))
        {
            if let Some(pair) = self.waiting.pop_front() {
                self.compare(out, pair);
            }
        }
    }

    /// Both sides ended: the rest compared.
    fn finish(&mut self, out: &mut Differ<'_>) {
        self.flush(out);
    }

    fn flush(&mut self, out: &mut Differ<'_>) {
        while let Some(pair) = self.waiting.pop_front() {
            self.compare(out, pair);
        }
    }

    fn compare(&mut self, out: &mut Differ<'_>, (o, n): (Option<Entry>, Option<Entry>)) {
        let role = n.as_ref().or(o.as_ref()).map(|e| &e.role);
        let at = At::message(role, &mut self.shape_number, self.shapes);
        let [old, new] = &mut self.held;
        for (held, entry) in [(&mut *old, o), (&mut *new, n)] {
            held.clear();
            if let Some(entry) = entry {
                held.push_entry(entry);
            }
        }
        fn listed(held: &Held) -> Option<Listed<'_>> {
            held.entries.get(0).map(|slot| Listed { held, slot })
        }
        let (o, n) = (listed(&self.held[0]), listed(&self.held[1]));
        out.pair(&at, o, n);
    }
}

// ----- comparing two listings -----

/// The changes and non-name matches between two listings of one file each.
#[derive(Clone, Debug, Default)]
pub struct ListingDiff {
    /// The differences.
    pub changes: Spooled<Change>,
    /// Pairs matched other than by name.
    pub matches: Spooled<Match>,
}

/// Compares two listings (see the module docs).
pub fn diff_listings(old: &Listing, new: &Listing, options: &Options) -> ListingDiff {
    // Held in memory, as the listings are: nothing is lost.
    diff_held(&Held::of(old), &Held::of(new), options).0
}

/// [`diff_listings`] of two listings held compactly; with it, the side whose
/// instructions, once arranged, could not be kept or read back in their temporary
/// file, and why (then the changes are not to be trusted).
fn diff_held<'h>(
    old: &'h Held,
    new: &'h Held,
    options: &Options,
) -> (ListingDiff, Option<(&'h Held, String)>) {
    let mut out = Differ {
        options,
        result: ListingDiff::default(),
    };
    if old.kind == Kind::Messages || new.kind == Kind::Messages {
        out.messages(old, new);
        return (out.result, None);
    }
    let (o, n) = (Module::new(old), Module::new(new));
    out.entry_layout(&o, &n);
    if !options.entry_only {
        let opcodes = old.instructions.len() > 0 && new.instructions.len() > 0;
        out.computations(&o, &n, opcodes);
    }
    let lost = [(old, &o), (new, &n)]
        .into_iter()
        .find_map(|(held, module)| Some((held, module.lost()?.to_string())));
    (out.result, lost)
}

/// One shape of one side.
#[derive(Clone, Copy)]
struct Listed<'a> {
    held: &'a Held,
    slot: Slot,
}

impl<'a> Listed<'a> {
    fn text(&self) -> &'a str {
        self.held.strings.get(self.slot.text)
    }

    fn role(&self) -> Role {
        self.held.role(&self.slot)
    }

    /// Its name, cleaned, when it is a computation's named parameter.
    fn parameter_name(&self) -> Option<String> {
        match self.role() {
            Role::Parameter { name, .. } => Some(clean_name(&name).to_string()),
            _ => None,
        }
    }

    /// Whether two shapes have the same role (compared as their kinds and indices,
    /// neither copied).
    fn same_role(&self, other: &Listed<'_>) -> bool {
        self.held.role_parts(&self.slot) == other.held.role_parts(&other.slot)
    }

    /// Where the shape stands on its instruction.
    fn key(&self) -> ShapeKey<'a> {
        let (kind, index) = self.held.role_parts(&self.slot);
        ShapeKey::of(kind, index)
    }

    /// Whether two shapes are the same, known from their texts alone (both read back
    /// from their texts, and the texts are the same), or from the same text and the
    /// same bytes of a long binary tuple kept beside it (which would be decoded whole
    /// to be compared).
    fn same_text(&self, other: &Listed<'_>) -> bool {
        self.text() == other.text() && self.held.kept(&self.slot) == other.held.kept(&other.slot)
    }

    /// The listing entry, made when a change is reported.
    fn entry(&self) -> Entry {
        self.held.entry(&self.slot)
    }
}

/// A module's shapes arranged for comparison.
struct Module<'a> {
    held: &'a Held,
    entry_parameters: Parameters,
    /// The entry of the entry computation layout's result.
    entry_result: Option<u32>,
    computations: Vec<Computation>,
    /// Every computation's parameters, one computation after the other (a list in
    /// each computation's record took 24 bytes a computation, and room for four).
    parameters: Vec<(u32, u32)>,
    /// The next entry of the same instruction after an entry, where it is not the entry
    /// right after it (an instruction's entries stand together in module text; a
    /// listing read back may give them apart): a list of the next entry of every entry
    /// took four bytes an entry.
    jumps: HashMap<u32, u32>,
    /// Per name (an index into the side's strings), the index of the instruction that
    /// has it in the first computation that has it, [`NONE`] for none: four bytes a
    /// string, where a map of each computation's names took some twenty an
    /// instruction, twice that as it grew (and the computation beside it, eight). A
    /// computation has the name there when its instruction there has it (names are
    /// distinct within a computation).
    named: Vec<u32>,
    /// The instruction of a (computation, name) whose name another computation has
    /// first (instruction names are unique in a module XLA writes; a listing need not
    /// keep them so), as (computation, name, instruction), sorted: twelve bytes each,
    /// where a map took twice that as it grew.
    clashes: Vec<(u32, u32, u32)>,
    /// Every computation's instructions, one computation after the other, once
    /// arranged: past the side's first [`Table::HELD`](crate::spool::Table) records in a
    /// temporary file (sixteen bytes an instruction, held for both sides while they are
    /// matched, were a third of what `diff` of two modules held).
    instrs: Table<Instr>,
    /// Each computation's place in `computations`, found by its name (an index into
    /// the side's strings) through its record: four bytes a computation, where a map
    /// of names to places took twice that.
    by_name: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

struct Computation {
    /// Its place in [`Module::computations`].
    at: u32,
    /// Its name's index into the side's strings ([`Module::name_of`]).
    name: u32,
    entry: bool,
    /// Where its parameters start in [`Module::parameters`], and how many there are
    /// ([`Module::parameters_of`]).
    parameters: (u32, u32),
    /// The entry of its result, [`NONE`] for none ([`Computation::result`]; an
    /// `Option` took four bytes more).
    result: u32,
    /// Where its instructions start in [`Module::instrs`], once arranged.
    first: u32,
    /// How many instructions it has.
    count: u32,
    /// Whether an instruction of the module calls it.
    called: bool,
}

impl Computation {
    /// The entry of its result, if it has one.
    fn result(&self) -> Option<u32> {
        (self.result != NONE).then_some(self.result)
    }
}

/// Parameters by number (a computation's, the entry computation layout's), in order
/// once [`Parameters::finish`]ed (most have one or two: a `BTreeMap` each took a node
/// of eleven). They are gathered as they come and sorted once: kept sorted as they
/// came, a listing that gives them in reverse took time with the square of their
/// number.
///
/// Each is its number and its entry's (a role's number and an entry's index are
/// `u32`s in a side): eight bytes a parameter, for signatures of hundreds of thousands.
#[derive(Default)]
struct Parameters(Vec<(u32, u32)>);

impl Parameters {
    /// Sets parameter `index` to entry `entry` (the last given wins, as a map's insert,
    /// once finished).
    fn insert(&mut self, index: usize, entry: usize) {
        // Both came from `u32`s: a role's index, an entry's place in its table.
        self.0.push((index as u32, entry as u32));
    }

    /// Sorts them by number, the last given of a number kept.
    fn finish(&mut self) {
        crate::sorted::last_of_each(&mut self.0, |&(i, _)| i);
        self.0.shrink_to_fit();
    }

    /// The parameters, once finished.
    fn list(&self) -> ParameterList<'_> {
        ParameterList(&self.0)
    }

    /// Each parameter's number and entry.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.0.iter().map(|&(i, entry)| (i as usize, entry))
    }
}

/// Parameters by number, in order: each its number and its entry.
#[derive(Clone, Copy)]
struct ParameterList<'p>(&'p [(u32, u32)]);

impl<'p> ParameterList<'p> {
    /// The entry of parameter `index`.
    fn get(self, index: usize) -> Option<u32> {
        let index = u32::try_from(index).ok()?;
        let at = self.0.binary_search_by_key(&index, |&(i, _)| i).ok()?;
        Some(self.0[at].1)
    }

    fn keys(self) -> impl Iterator<Item = usize> + 'p {
        self.0.iter().map(|&(i, _)| i as usize)
    }
}

/// The numbers of two increasing lists, each once, in order.
fn union(
    a: impl Iterator<Item = usize>,
    b: impl Iterator<Item = usize>,
) -> impl Iterator<Item = usize> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek().copied(), b.peek().copied()) {
        (Some(x), Some(y)) if x == y => {
            a.next();
            b.next();
            Some(x)
        }
        (Some(x), Some(y)) if x < y => a.next(),
        (Some(_), Some(_)) => b.next(),
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

/// An instruction: its name's index, its instruction record's (for its opcode and
/// operands; [`NONE`] for none, in a listing read back) and its entries.
#[derive(Clone, Copy)]
struct Instr {
    name: u32,
    op: u32,
    /// The first and last of its entries (each the one after the other, but for
    /// [`Module::jumps`]), [`NONE`] for none.
    shapes: (u32, u32),
}

impl crate::spool::Fixed for Instr {
    const SIZE: usize = 16;

    fn put(&self, out: &mut Vec<u8>) {
        let words = [self.name, self.op, self.shapes.0, self.shapes.1];
        crate::spool::put_words(out, &words);
    }

    fn take(bytes: &[u8]) -> Self {
        let field = |k| crate::spool::word(bytes, k);
        Instr {
            name: field(0),
            op: field(1),
            shapes: (field(2), field(3)),
        }
    }
}

/// A module's instructions as [`Module::new`] finds them, before they are arranged
/// one computation after the other: in the order found, with the runs of that order
/// that belong to one computation. A list for each computation took some 100 bytes a
/// computation (its record, and room for four instructions), for modules of hundreds
/// of thousands of small computations.
#[derive(Default)]
struct Found {
    instrs: Vec<Instr>,
    /// Each run of `instrs` of one computation: where it starts, the computation's
    /// place, and how many of the computation's instructions come before it.
    runs: Vec<(u32, u32, u32)>,
    /// The runs of the last two instructions looked for, the last first.
    hints: std::cell::Cell<[usize; 2]>,
}

impl Found {
    /// Adds instruction `name`, the `before`-th of computation `at`: its place.
    fn push(&mut self, at: u32, before: u32, name: u32) -> u32 {
        // Fewer than `u32::MAX`: each has an entry or a record, which are `u32`-indexed.
        let f = self.instrs.len() as u32;
        if self.runs.last().is_none_or(|&(_, run_at, _)| run_at != at) {
            self.runs.push((f, at, before));
        }
        self.instrs.push(Instr {
            name,
            op: NONE,
            shapes: (NONE, NONE),
        });
        f
    }

    /// The key of an instruction whose name another computation has first, kept as
    /// its place `f` and its computation's `at`: the computation and the name.
    fn clash_key(&self, &(f, at): &(u32, u32)) -> (u32, u32) {
        (at, self.instrs[f as usize].name)
    }

    /// The computation of the instruction at `f`, and its place in it.
    fn place(&self, f: u32) -> (u32, u32) {
        // Most are looked for in the run of one of the last two looked for, or the run
        // after it (a module's instructions are looked for in order once found, and
        // beside them the first of a name another computation has too), else searched
        // for.
        let holds = |r: usize| {
            let start = self.runs.get(r).map(|run| run.0);
            let end = self.runs.get(r + 1).map_or(u32::MAX, |run| run.0);
            start.is_some_and(|start| start <= f && f < end)
        };
        let [last, other] = self.hints.get();
        let near = [last, last + 1, other, other + 1];
        let run = match near.into_iter().find(|&r| holds(r)) {
            Some(run) => run,
            None => {
                let after = self.runs.partition_point(|&(start, _, _)| start <= f);
                let Some(run) = after.checked_sub(1) else {
                    return (NONE, NONE);
                };
                run
            }
        };
        if run != last {
            self.hints.set([run, last]);
        }
        let (start, at, before) = self.runs[run];
        (at, before + (f - start))
    }

    /// The places in `instrs` of each computation's instructions, one computation
    /// after the other, as runs.
    fn by_computation(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let mut order: Vec<u32> = (0..self.runs.len() as u32).collect();
        // Stable: a computation's runs stay in the order found.
        if !self.runs.is_sorted_by_key(|&(_, at, _)| at) {
            order.sort_by_key(|&r| self.runs[r as usize].1);
        }
        order.into_iter().map(move |r| {
            let start = self.runs[r as usize].0 as usize;
            let end = self
                .runs
                .get(r as usize + 1)
                .map_or(self.instrs.len(), |next| next.0 as usize);
            start..end
        })
    }
}

impl<'a> Module<'a> {
    fn new(held: &'a Held) -> Self {
        let mut module = Module {
            held,
            entry_parameters: Parameters::default(),
            entry_result: None,
            computations: Vec::new(),
            parameters: Vec::new(),
            jumps: HashMap::new(),
            named: vec![NONE; held.strings.len()],
            clashes: Vec::new(),
            // As many held as the side's entries: all for a listing held in memory.
            instrs: Table::new(held.entries.keep()),
            by_name: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
        };
        fn computation(module: &mut Module<'_>, name: u32) -> usize {
            if let Some(at) = module.computation_named(name) {
                return at;
            }
            let at = module.computations.len();
            module.computations.push(Computation {
                at: at as u32,
                name,
                entry: false,
                parameters: (0, 0),
                result: NONE,
                first: 0,
                count: 0,
                called: false,
            });
            let (all, hasher) = (&module.computations, &module.hasher);
            let hash = |&at: &u32| hasher.hash_one(all[at as usize].name);
            module
                .by_name
                .insert_unique(hasher.hash_one(name), at as u32, hash);
            at
        }
        /// The place in `found` of computation `at`'s instruction named `name`, added
        /// if new; `clashing` holds those whose name another computation has first, each
        /// as its place in `found` and its computation's.
        fn instr(
            module: &mut Module<'_>,
            (found, clashing): (&mut Found, &mut HashTable<(u32, u32)>),
            at: usize,
            name: u32,
        ) -> usize {
            let at32 = at as u32;
            let first = module.named.get(name as usize).copied().unwrap_or(NONE);
            if first != NONE && found.place(first).0 == at32 {
                return first as usize;
            }
            let hash = module.hasher.hash_one((at32, name));
            let same = |clash: &(u32, u32)| found.clash_key(clash) == (at32, name);
            if let Some(&(f, _)) = clashing.find(hash, same) {
                return f as usize;
            }
            let c = &mut module.computations[at];
            let f = found.push(at32, c.count, name);
            c.count += 1;
            match module.named.get_mut(name as usize) {
                Some(slot) if *slot == NONE => *slot = f,
                _ => {
                    let rehash = |clash: &_| module.hasher.hash_one(found.clash_key(clash));
                    clashing.insert_unique(hash, (f, at32), rehash);
                }
            }
            f as usize
        }
        let mut found = Found::default();
        let mut clashing = HashTable::new();
        // Each computation's parameters as they come: its place, the number, the entry.
        let mut parameters: Vec<(u32, u32, u32)> = Vec::new();
        for (k, slot) in held.entries.iter_from(0).enumerate() {
            // The role's kind and index, borrowed (a role with a name is not copied).
            let (role, number) = held.role_parts(&slot);
            match (role, slot.computation) {
                (Role::EntryParameter { .. }, _) => {
                    module.entry_parameters.insert(number, k);
                }
                (Role::EntryResult, _) => module.entry_result = Some(k as u32),
                (_, NONE) => {}
                (role, name) => {
                    let at = computation(&mut module, name);
                    let c = &mut module.computations[at];
                    c.entry |= held.is_entry_computation(name);
                    match role {
                        Role::Parameter { .. } => {
                            // A role's index, an entry's place: `u32`s in a side.
                            parameters.push((at as u32, number as u32, k as u32));
                        }
                        Role::ComputationResult => c.result = k as u32,
                        _ => {
                            if slot.instruction == NONE {
                                continue;
                            }
                            let f = instr(
                                &mut module,
                                (&mut found, &mut clashing),
                                at,
                                slot.instruction,
                            );
                            let ins = &mut found.instrs[f];
                            let k = k as u32;
                            match ins.shapes {
                                (NONE, _) => ins.shapes = (k, k),
                                (_, last) => {
                                    if k != last + 1 {
                                        module.jumps.insert(last, k);
                                    }
                                    ins.shapes.1 = k;
                                }
                            }
                        }
                    }
                }
            }
        }
        for (k, (name, op)) in held.ops().enumerate() {
            let at = computation(&mut module, name);
            let f = instr(&mut module, (&mut found, &mut clashing), at, op.name);
            found.instrs[f].op = k as u32;
        }
        module.entry_parameters.finish();
        module.arrange_parameters(parameters);
        let mut first = 0u32;
        for c in &mut module.computations {
            // Fewer than `u32::MAX` instructions: each has an entry or a record.
            c.first = first;
            first += c.count;
        }
        // Each instruction named by its place in its computation, not in `found`.
        for f in module.named.iter_mut() {
            if *f != NONE {
                *f = found.place(*f).1;
            }
        }
        // Taken in the order found, each looked up in the run of the one before.
        let mut clashes: Vec<u32> = clashing.into_iter().map(|(f, _)| f).collect();
        clashes.sort_unstable();
        let clash = |&f: &u32| {
            let (at, i) = found.place(f);
            (at, found.instrs[f as usize].name, i)
        };
        module.clashes = clashes.iter().map(clash).collect();
        module.clashes.sort_unstable();
        // Into the table, one computation after the other.
        for run in found.by_computation() {
            for ins in &found.instrs[run] {
                module.instrs.push(*ins);
            }
        }
        module.computations.shrink_to_fit();
        for name in held.called() {
            if let Some(at) = module.computation_named(name) {
                module.computations[at].called = true;
            }
        }
        module
    }

    /// The place of the computation named by string `name`.
    fn computation_named(&self, name: u32) -> Option<usize> {
        let all = &self.computations;
        let hash = self.hasher.hash_one(name);
        let found = self.by_name.find(hash, |&at| all[at as usize].name == name);
        found.map(|&at| at as usize)
    }

    /// Sorts the computations' `parameters` (each its computation's place, its
    /// number and its entry, as they came) into [`Module::parameters`], by
    /// computation and then number, the last given of a number kept (as
    /// [`Parameters::finish`]).
    fn arrange_parameters(&mut self, mut parameters: Vec<(u32, u32, u32)>) {
        crate::sorted::last_of_each(&mut parameters, |&(at, number, _)| (at, number));
        let mut list = Vec::with_capacity(parameters.len());
        for (at, number, entry) in parameters {
            let c = &mut self.computations[at as usize];
            if c.parameters.1 == 0 {
                c.parameters.0 = list.len() as u32;
            }
            c.parameters.1 += 1;
            list.push((number, entry));
        }
        self.parameters = list;
    }

    /// Computation `c`'s parameters.
    fn parameters_of(&self, c: &Computation) -> ParameterList<'_> {
        let (start, len) = (c.parameters.0 as usize, c.parameters.1 as usize);
        ParameterList(self.parameters.get(start..start + len).unwrap_or_default())
    }

    /// Computation `c`'s name.
    fn name_of(&self, c: &Computation) -> &'a str {
        self.held.strings.get(c.name)
    }

    /// The computations `ins` calls (their places in [`Module::computations`]), in
    /// order; a name that names none of the module's is left out.
    fn calls(&self, ins: &Instr) -> impl Iterator<Item = usize> + '_ {
        let calls = self.held.calls(ins.op as usize);
        (0..calls.len()).filter_map(move |at| self.computation_named(calls.get(at)))
    }

    /// The index of computation `at`'s instruction named by string `name`.
    fn index_of(&self, at: u32, name: u32) -> Option<u32> {
        let i = *self.named.get(name as usize)?;
        if i == NONE {
            return None;
        }
        let here = self.instr(self.computations.get(at as usize)?, i as usize);
        match here {
            Some(ins) if ins.name == name => Some(i),
            _ => {
                let clash = self
                    .clashes
                    .binary_search_by_key(&(at, name), |&(a, n, _)| (a, n));
                clash.ok().map(|k| self.clashes[k].2)
            }
        }
    }

    /// Instruction `i` of computation `c` (`None` past its last, or when it could not
    /// be read back: [`Module::lost`] then says so).
    fn instr(&self, c: &Computation, i: usize) -> Option<Instr> {
        if i >= c.count as usize {
            return None;
        }
        self.instrs.get(c.first as usize + i)
    }

    /// The instructions of computation `c`, in order.
    fn instrs_of(&self, c: &Computation) -> impl Iterator<Item = Instr> + '_ {
        self.instrs
            .iter_from(c.first as usize)
            .take(c.count as usize)
    }

    /// The first failure to keep or read back its instructions in their temporary
    /// file.
    fn lost(&self) -> Option<&str> {
        self.instrs.lost()
    }

    fn name(&self, ins: &Instr) -> &'a str {
        self.held.strings.get(ins.name)
    }

    /// Its opcode's index into the side's strings ([`NONE`] for none).
    fn opcode(&self, ins: &Instr) -> u32 {
        let op = self.held.instructions.get(ins.op as usize);
        op.map_or(NONE, |op| op.opcode)
    }

    fn operands(&self, ins: &Instr) -> held::Operands<'a> {
        self.held.operands(ins.op as usize)
    }

    /// Its tuple index, for a get-tuple-element.
    fn tuple_index(&self, ins: &Instr) -> Option<u64> {
        self.held.tuple_index(ins.op as usize)
    }

    /// The entries of `ins`, in order.
    fn shapes(&self, ins: &Instr) -> impl Iterator<Item = Listed<'a>> + '_ {
        let (mut at, last) = ins.shapes;
        std::iter::from_fn(move || {
            let slot = self.held.entries.get(at as usize)?;
            let shape = Listed {
                held: self.held,
                slot,
            };
            at = match at {
                _ if at == last => NONE,
                _ => self.jumps.get(&at).copied().unwrap_or(at + 1),
            };
            Some(shape)
        })
    }

    /// The shape of entry `entry`.
    fn shape(&self, entry: Option<u32>) -> Option<Listed<'a>> {
        let slot = self.held.entries.get(entry? as usize)?;
        Some(Listed {
            held: self.held,
            slot,
        })
    }
}

/// Whether two computations have the same signature: the same parameters, each of
/// the same shape, and the same result shape.
fn same_signature(
    (om, oc): (&Module<'_>, &Computation),
    (nm, nc): (&Module<'_>, &Computation),
) -> bool {
    let same = |o: Option<Listed<'_>>, n: Option<Listed<'_>>| match (o, n) {
        (Some(o), Some(n)) => o.same_text(&n),
        (None, None) => true,
        _ => false,
    };
    let (op, np) = (om.parameters_of(oc), nm.parameters_of(nc));
    op.keys().eq(np.keys())
        && op
            .keys()
            .all(|k| same(om.shape(op.get(k)), nm.shape(np.get(k))))
        && same(om.shape(oc.result()), nm.shape(nc.result()))
}

/// A hash of a computation's signature (its parameters' numbers and texts, its result's
/// text): computations of the same signature have the same one.
fn signature_hash(m: &Module<'_>, c: &Computation) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    let parameters = m.parameters_of(c);
    for k in parameters.keys() {
        k.hash(&mut h);
        m.shape(parameters.get(k)).map(|s| s.text()).hash(&mut h);
    }
    m.shape(c.result()).map(|s| s.text()).hash(&mut h);
    h.finish()
}

/// Where a shape stands on its instruction, as its place says it (`operand 2`,
/// `outfeed_shape`, `operand_layout_constraints 3`; nothing for the result): a role's
/// kind (borrowed from its listing) and index, so that the shapes of an instruction
/// of many are keyed without a string each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum ShapeKey<'a> {
    Plain,
    Operand(usize),
    Named(&'a str),
    Indexed(&'a str, usize),
}

impl<'a> ShapeKey<'a> {
    /// The key of a role of kind `kind` (its index 0) and `index`.
    fn of(kind: &'a Role, index: usize) -> Self {
        match kind {
            Role::Operand { .. } => ShapeKey::Operand(index),
            Role::Attribute { name, .. } if index > 0 || name == "operand_layout_constraints" => {
                ShapeKey::Indexed(name, index)
            }
            Role::Attribute { name, .. } => ShapeKey::Named(name),
            _ => ShapeKey::Plain,
        }
    }
}

/// The shapes of one instruction, found by their keys ([`ShapeKey`]): positions sorted
/// by key, equal keys in their order (an instruction of hundreds of thousands of shapes
/// took some 250 bytes a shape in maps of its keys; this takes 20).
struct ByKey<'a> {
    shapes: Vec<Listed<'a>>,
    sorted: Vec<u32>,
}

impl<'a> ByKey<'a> {
    fn new(shapes: Vec<Listed<'a>>) -> Self {
        let mut sorted: Vec<u32> = (0..shapes.len() as u32).collect();
        sorted.sort_by_key(|&i| shapes[i as usize].key());
        ByKey { shapes, sorted }
    }

    /// The first shape of `key`, and its position.
    fn first_at(&self, key: ShapeKey<'_>) -> Option<(usize, Listed<'a>)> {
        let at = self
            .sorted
            .partition_point(|&i| self.shapes[i as usize].key() < key);
        let i = *self.sorted.get(at)? as usize;
        let shape = self.shapes[i];
        (shape.key() == key).then_some((i, shape))
    }

    /// The first shape of `key`.
    fn first(&self, key: ShapeKey<'_>) -> Option<Listed<'a>> {
        self.first_at(key).map(|(_, shape)| shape)
    }

    /// Each key's first shape, in their order.
    fn firsts(&self) -> impl Iterator<Item = Listed<'a>> + '_ {
        self.shapes
            .iter()
            .enumerate()
            .filter(|(i, shape)| self.first_at(shape.key()).is_some_and(|(at, _)| at == *i))
            .map(|(_, shape)| *shape)
    }
}

impl std::fmt::Display for ShapeKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShapeKey::Plain => Ok(()),
            ShapeKey::Operand(index) => write!(f, "operand {index}"),
            ShapeKey::Named(name) => f.write_str(name),
            ShapeKey::Indexed(name, index) => write!(f, "{name} {index}"),
        }
    }
}

/// The name without a trailing `.N`.
pub fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, digits))
            if !stem.is_empty()
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            stem
        }
        _ => name,
    }
}

/// The number XLA gave a name after its stem ([`stem`]): `None` for a name without
/// one (the first of its stem), then by value (`add.2` before `add.10`).
fn name_number(name: &str) -> Option<(usize, &str)> {
    let digits = &name[stem(name).len()..].strip_prefix('.')?;
    // By value: a longer run of digits (leading zeros aside) is the larger number.
    let trimmed = digits.trim_start_matches('0');
    Some((trimmed.len(), trimmed))
}

/// A name's number ([`name_number`]) as a key in its order: 0 for none, the number and
/// one for a number of up to 19 digits, `u64::MAX` for a longer one (whose order among
/// the longer ones [`name_number`] gives).
fn number_key(name: &str) -> u64 {
    match name_number(name) {
        None => 0,
        Some((len, digits)) if len <= 19 => digits
            .bytes()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))
            .saturating_add(1),
        Some(_) => u64::MAX,
    }
}

/// Two names in the order of their numbers ([`name_number`]), each given as its
/// [`number_key`] and what reads the name: by the keys, and by the numbers themselves
/// only where both are past 19 digits.
fn by_number<'n>(
    (ka, a): (u64, impl FnOnce() -> &'n str),
    (kb, b): (u64, impl FnOnce() -> &'n str),
) -> std::cmp::Ordering {
    // The names are read only where the keys cannot tell (a sort compares many times).
    ka.cmp(&kb)
        .then_with(|| match ka == u64::MAX && kb == u64::MAX {
            true => name_number(a()).cmp(&name_number(b())),
            false => std::cmp::Ordering::Equal,
        })
}

/// What the matching sees of one side: computations by name, or the instructions of
/// one computation.
enum Names<'a> {
    /// Computations: each one's place in the module's computations.
    Computations(&'a [u32], &'a Module<'a>),
    Instructions {
        module: &'a Module<'a>,
        computation: &'a Computation,
        opcodes: bool,
    },
}

/// The items of one side, with what reads their operands: the side's strings (and,
/// through the module, item index by name index).
struct Items<'a> {
    names: Names<'a>,
    held: &'a Held,
    /// Each instruction's name (an index into the side's strings), read once from
    /// its module's table while they are matched: the sorts compare names many times.
    ids: Vec<u32>,
}

impl<'a> Items<'a> {
    /// The instructions of `computation` of `module`.
    fn instructions(module: &'a Module<'a>, computation: &'a Computation, opcodes: bool) -> Self {
        Items {
            names: Names::Instructions {
                module,
                computation,
                opcodes,
            },
            held: module.held,
            ids: module.instrs_of(computation).map(|ins| ins.name).collect(),
        }
    }

    fn len(&self) -> usize {
        match &self.names {
            Names::Computations(list, _) => list.len(),
            Names::Instructions { computation, .. } => computation.count as usize,
        }
    }

    fn name(&self, i: usize) -> &'a str {
        match &self.names {
            Names::Computations(list, m) => m.name_of(&m.computations[list[i] as usize]),
            Names::Instructions { .. } => self.held.strings.get(self.name_id(i)),
        }
    }

    /// Instruction `i` (`None` for a computation, or one not read back).
    fn instr(&self, i: usize) -> Option<(&'a Module<'a>, Instr)> {
        match &self.names {
            Names::Computations(..) => None,
            Names::Instructions {
                module,
                computation,
                ..
            } => Some((*module, module.instr(computation, i)?)),
        }
    }

    /// The group: the stem and, for instructions when both sides name them, the opcode.
    fn group(&self, i: usize) -> (&'a str, Option<&'a str>) {
        self.group_of(i, self.opcode(i))
    }

    /// The group of item `i` whose [`Items::opcode`] is `opcode`.
    fn group_of(&self, i: usize, opcode: u32) -> (&'a str, Option<&'a str>) {
        (stem(self.name(i)), self.held.strings.opt(opcode))
    }

    /// Its opcode's index into the side's strings, for instructions when both sides
    /// name them ([`NONE`] else).
    fn opcode(&self, i: usize) -> u32 {
        match &self.names {
            // The instruction read only when its opcode is wanted.
            Names::Instructions { opcodes: true, .. } => self
                .instr(i)
                .map_or(NONE, |(module, ins)| module.opcode(&ins)),
            _ => NONE,
        }
    }

    /// Its operands' names, by index into the side's strings.
    fn operands(&self, i: usize) -> held::Operands<'a> {
        match self.instr(i) {
            Some((module, ins)) => module.operands(&ins),
            None => self.held.operands(usize::MAX),
        }
    }

    /// Its tuple index, for a get-tuple-element.
    fn tuple_index(&self, i: usize) -> Option<u64> {
        self.instr(i)
            .and_then(|(module, ins)| module.tuple_index(&ins))
    }

    /// The index of the item named by string `name` (instructions only).
    fn by_name(&self, name: u32) -> Option<usize> {
        match &self.names {
            Names::Computations(..) => None,
            Names::Instructions {
                module,
                computation,
                ..
            } => module.index_of(computation.at, name).map(|i| i as usize),
        }
    }

    /// Its operands' stems, in order.
    fn stems(&self, i: usize) -> impl Iterator<Item = &'a str> + '_ {
        let strings = &self.held.strings;
        let operands = self.operands(i);
        (0..operands.len()).map(move |at| stem(strings.get(operands.get(at))))
    }

    /// Its name, by index into the side's strings ([`NONE`] for a computation).
    fn name_id(&self, i: usize) -> u32 {
        self.ids.get(i).copied().unwrap_or(NONE)
    }
}

/// Matches old and new items (see the module docs). Indices are `u32`s, as a side's
/// are ([`Held`] holds fewer than `u32::MAX` of anything): four bytes an item for its
/// group order and its match, where `usize`s and `Option<usize>`s took twice and four
/// times that for a computation of a million instructions.
fn match_items<'a>(old: &Items<'a>, new: &Items<'a>, by_operands: bool) -> Matching {
    match_items_looking(old, new, by_operands, Look::Indexed)
}

/// Each old item's match and how it was made: five bytes an old item and one a new
/// one, where a list of the pairs took twelve bytes a pair beside them.
struct Matching {
    /// Each old item's new item, [`NONE`] for none.
    to: Vec<u32>,
    /// How each old item was matched (where it was).
    how: Vec<How>,
    /// Whether each new item is matched.
    taken: Vec<bool>,
    /// Old items paired by name only for now (a bit each): a name pair in a group
    /// whose sizes differ waits for its operands to be matched ([`match_items`]), its
    /// new item not yet taken.
    tentative: Vec<u64>,
}

impl Matching {
    /// No item matched, of `old` and `new` items.
    fn new(old: usize, new: usize) -> Self {
        Matching {
            to: vec![NONE; old],
            how: vec![How::Name; old],
            taken: vec![false; new],
            tentative: Vec::new(),
        }
    }

    /// Whether old item `i` is paired by name only for now.
    fn is_tentative(&self, i: usize) -> bool {
        self.tentative
            .get(i / 64)
            .is_some_and(|word| word >> (i % 64) & 1 != 0)
    }

    /// Makes old item `i`'s pair by name one for now: its new item is not taken.
    fn make_tentative(&mut self, i: usize) {
        if self.tentative.is_empty() {
            self.tentative = vec![0; self.to.len().div_ceil(64)];
        }
        self.tentative[i / 64] |= 1 << (i % 64);
        self.taken[self.to[i] as usize] = false;
    }

    /// Ends old item `i`'s pair for now: the new item it was paired with, if any.
    fn settle(&mut self, i: usize) -> Option<usize> {
        if !self.is_tentative(i) {
            return None;
        }
        self.tentative[i / 64] &= !(1 << (i % 64));
        let j = std::mem::replace(&mut self.to[i], NONE);
        Some(j as usize)
    }

    /// Matches old item `i` to new item `j`.
    fn pair(&mut self, i: usize, j: usize, how: How) {
        self.to[i] = j as u32;
        self.how[i] = how;
        self.taken[j] = true;
    }

    /// Takes back old item `i`'s match, if any.
    fn unpair(&mut self, i: usize) {
        let j = std::mem::replace(&mut self.to[i], NONE);
        if j != NONE {
            self.taken[j as usize] = false;
        }
    }

    /// The new item matched to old item `k`, if any.
    fn of(&self, k: usize) -> Option<usize> {
        let j = self.to[k];
        (j != NONE && !self.is_tentative(k)).then_some(j as usize)
    }

    /// The pairs (old index, new index, how), in the order of the old.
    fn pairs(&self) -> impl Iterator<Item = (u32, u32, How)> + '_ {
        let matched = self.to.iter().zip(&self.how).zip(0u32..);
        matched.filter_map(|((&j, &how), i)| (j != NONE).then_some((i, j, how)))
    }
}

/// The matchings of computation pairs made before they are reported, one after the
/// other, each as its old items' matches and how: five bytes an old instruction,
/// where each pair's [`Matching`] took four lists (some 200 bytes a computation of two
/// instructions).
#[derive(Default)]
struct Settled {
    to: Vec<u32>,
    how: Vec<How>,
    /// Where each matching starts in `to` and `how`.
    starts: Vec<usize>,
}

impl Settled {
    /// Keeps the next pair's matching (settled: no pair in it is tentative).
    fn keep(&mut self, matching: &Matching) {
        self.starts.push(self.to.len());
        self.to.extend_from_slice(&matching.to);
        self.how.extend_from_slice(&matching.how);
    }

    /// Pair `k`'s matching, of `new` new items, made again (`None` if none was kept).
    fn get(&self, k: usize, new: usize) -> Option<Matching> {
        let start = *self.starts.get(k)?;
        let end = self.starts.get(k + 1).copied().unwrap_or(self.to.len());
        let mut matching = Matching::new(0, new);
        matching.to = self.to[start..end].to_vec();
        matching.how = self.how[start..end].to_vec();
        for &j in &matching.to {
            if let Some(taken) = matching.taken.get_mut(j as usize) {
                *taken = true;
            }
        }
        Some(matching)
    }
}

/// How an old item looks for its candidate when matching by operands.
#[derive(Clone, Copy)]
enum Look {
    /// In the candidates that could fit it ([`Candidates`]).
    Indexed,
    /// At every candidate of its group in turn: what the index must agree with.
    #[cfg(test)]
    Scan,
}

/// [`match_items`], looking for candidates as `look` says.
fn match_items_looking<'a>(
    old: &Items<'a>,
    new: &Items<'a>,
    by_operands: bool,
    look: Look,
) -> Matching {
    // Each side's indices by group, in the order of their names' numbers within a
    // group (XLA numbers the names of a stem as it makes them: `add`, `add.1`, ...;
    // a module's text and its proto list them in different orders), then in input
    // order.
    let grouped = |items: &Items<'_>| {
        // Each item's opcode read once from its side's table, not at each comparison.
        let opcodes: Vec<u32> = (0..items.len()).map(|i| items.opcode(i)).collect();
        let group = |i: usize| items.group_of(i, opcodes[i]);
        // Each name's number read once, not at each comparison, as eight bytes
        // ([`number_key`]; the number itself took 24).
        let numbers: Vec<u64> = (0..items.len())
            .map(|i| number_key(items.name(i)))
            .collect();
        let number = |i: usize| (numbers[i], move || items.name(i));
        let mut order: Vec<u32> = (0..items.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            (group(a).cmp(&group(b)))
                .then_with(|| by_number(number(a), number(b)))
                .then(a.cmp(&b))
        });
        order
    };
    let (old_order, new_order) = (grouped(old), grouped(new));
    let mut matching = Matching::new(old.len(), new.len());
    // Groups whose sizes differ or whose names are not the same: (old, new) ranges.
    let mut uneven: Vec<(&[u32], &[u32])> = Vec::new();
    let (mut a, mut b) = (0, 0);
    while a < old_order.len() && b < new_order.len() {
        let (go, gn) = (
            old.group(old_order[a] as usize),
            new.group(new_order[b] as usize),
        );
        if go < gn {
            a = run_end(old, &old_order, a, go);
            continue;
        }
        if gn < go {
            b = run_end(new, &new_order, b, gn);
            continue;
        }
        let a_end = run_end(old, &old_order, a, go);
        let b_end = run_end(new, &new_order, b, go);
        let (o, n) = (&old_order[a..a_end], &new_order[b..b_end]);
        (a, b) = (a_end, b_end);
        // Names are distinct within a side: pairs of the same name, by sorting both.
        let by_name = |group: &[u32], items: &Items<'_>| {
            let mut sorted = group.to_vec();
            sorted.sort_unstable_by_key(|&i| items.name(i as usize));
            sorted
        };
        let (o_names, n_names) = (by_name(o, old), by_name(n, new));
        // Pairs of the same name are matched at once (a list of their own took twelve
        // bytes an instruction more), taken back if matched by position after all.
        let mut same = 0;
        let (mut x, mut y) = (0, 0);
        while x < o_names.len() && y < n_names.len() {
            let (i, j) = (o_names[x] as usize, n_names[y] as usize);
            match old.name(i).cmp(new.name(j)) {
                std::cmp::Ordering::Less => x += 1,
                std::cmp::Ordering::Greater => y += 1,
                std::cmp::Ordering::Equal => {
                    matching.pair(i, j, How::Name);
                    same += 1;
                    (x, y) = (x + 1, y + 1);
                }
            }
        }
        let same_names = o.len() == n.len() && same == n.len();
        if o.len() == n.len() && !same_names {
            o.iter().for_each(|&i| matching.unpair(i as usize));
            for (&i, &j) in o.iter().zip(n) {
                matching.pair(i as usize, j as usize, How::Position);
            }
            continue;
        }
        if !same_names {
            if by_operands {
                // XLA numbers names as it makes instructions: one added or removed
                // renumbers the later ones of its stem, and a name on both sides may be
                // two instructions. A pair by name waits for its operands.
                for &i in o {
                    if matching.to[i as usize] != NONE {
                        matching.make_tentative(i as usize);
                    }
                }
            }
            uneven.push((o, n));
        }
    }
    if !by_operands {
        for &(o, n) in &uneven {
            by_shapes(old, new, (o, n), &mut matching);
        }
    }
    if by_operands {
        // Old items in input order, so operands defined earlier are matched first.
        let mut left: Vec<(u32, u32)> = uneven
            .iter()
            .zip(0u32..)
            .flat_map(|((o, _), g)| o.iter().map(move |&i| (i, g)))
            .filter(|&(i, _)| matching.to[i as usize] == NONE || matching.is_tentative(i as usize))
            .collect();
        left.sort_unstable();
        let mut indexed: Vec<Option<Candidates>> = Vec::new();
        indexed.resize_with(uneven.len(), || None);
        // Those whose operands fit no instruction, with their name's pair: looked for
        // again once every other is matched, then given that pair if it is free (given
        // it at once, one could take the instruction whose operands fit a later one).
        let mut again: Vec<(u32, u32, u32)> = Vec::new();
        let mut scan = ScanBudget::new(old.len() + new.len());
        let mut look_for =
            |matching: &mut Matching, indexed: &mut [Option<Candidates>], at, only| {
                by_operands_of(
                    old,
                    new,
                    matching,
                    indexed,
                    &uneven,
                    at,
                    (look, &mut scan),
                    only,
                )
            };
        for (i, g) in left {
            let named = matching.settle(i as usize);
            // The same name, when its operands fit: the pair it was, unless it has other
            // shapes and an instruction whose operands fit has the same ones.
            if let Some(j) = named.filter(|&j| {
                !matching.taken[j]
                    && old.operands(i as usize).len() == new.operands(j).len()
                    && fits(old, new, &matching, i as usize, j)
            }) {
                let other = !same_shapes(old, new, i as usize, j);
                match other.then(|| look_for(&mut matching, &mut indexed, (i, g), true)) {
                    Some(Some(k)) => matching.pair(i as usize, k, How::Operands),
                    _ => matching.pair(i as usize, j, How::Name),
                }
                continue;
            }
            match look_for(&mut matching, &mut indexed, (i, g), false) {
                Some(j) => matching.pair(i as usize, j, How::Operands),
                None => again.push((i, g, named.map_or(NONE, |j| j as u32))),
            }
        }
        for (i, g, named) in again {
            match look_for(&mut matching, &mut indexed, (i, g), false) {
                Some(j) => matching.pair(i as usize, j, How::Operands),
                None if named != NONE && !matching.taken[named as usize] => {
                    // No instruction's operands fit: the same name is the best guess left.
                    matching.pair(i as usize, named as usize, How::Name);
                }
                None => {}
            }
        }
    }
    matching
}

/// Whether items `i` (old) and `j` (new) have the same shapes: for instructions, the
/// same roles with the same texts, in order; for computations, the same signature.
fn same_shapes(old: &Items<'_>, new: &Items<'_>, i: usize, j: usize) -> bool {
    if let (Names::Computations(ol, om), Names::Computations(nl, nm)) = (&old.names, &new.names) {
        let (oc, nc) = (
            &om.computations[ol[i] as usize],
            &nm.computations[nl[j] as usize],
        );
        return same_signature((om, oc), (nm, nc));
    }
    match (old.instr(i), new.instr(j)) {
        (Some((om, oi)), Some((nm, ni))) => same_instr_shapes((om, &oi), (nm, &ni)),
        _ => false,
    }
}

/// Whether two instructions have the same roles with the same texts, in order.
fn same_instr_shapes((om, oi): (&Module<'_>, &Instr), (nm, ni): (&Module<'_>, &Instr)) -> bool {
    let (mut o, mut n) = (om.shapes(oi), nm.shapes(ni));
    loop {
        match (o.next(), n.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.same_role(&b) && a.same_text(&b) => {}
            _ => return false,
        }
    }
}

/// A hash of item `i`'s shapes (an instruction's roles and texts, a computation's
/// signature): items of the same shapes have the same one.
fn shapes_hash(items: &Items<'_>, i: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    if let Names::Computations(list, m) = &items.names {
        return signature_hash(m, &m.computations[list[i] as usize]);
    }
    let mut h = std::hash::DefaultHasher::new();
    if let Some((m, ins)) = items.instr(i) {
        for shape in m.shapes(&ins) {
            shape.key().hash(&mut h);
            shape.text().hash(&mut h);
        }
    }
    h.finish()
}

/// Matches the items of one group whose sizes differ (`o` old, `n` new, each in input
/// order) when their operands are not known: computations, and the instructions of a
/// listing read back (which names none). One item added or removed renumbers the later
/// ones of its stem, so a name on both sides may be two items: a pair by name stands
/// when their shapes (a computation's signature) are the same; each old item left then
/// takes, in order, the first new one left with the same shapes (its **signature**); one
/// still left takes its name's pair back if that is free.
fn by_shapes(old: &Items<'_>, new: &Items<'_>, (o, n): (&[u32], &[u32]), matching: &mut Matching) {
    // Pairs by name whose shapes differ wait, their new instructions not taken.
    let mut left_old = false;
    for &i in o {
        match matching.of(i as usize) {
            Some(j) if !same_shapes(old, new, i as usize, j) => {
                matching.make_tentative(i as usize);
                left_old = true;
            }
            Some(_) => {}
            None => left_old = true,
        }
    }
    if !left_old {
        return;
    }
    // The new instructions left, by the hash of their shapes (32 bits: one that two
    // shapes share costs a comparison), then in input order.
    let mut left: Vec<(u32, u32)> = n
        .iter()
        .filter(|&&j| !matching.taken[j as usize])
        .map(|&j| (shapes_hash(new, j as usize) as u32, j))
        .collect();
    if !left.is_empty() {
        left.sort_unstable();
        let mut candidates = Unmatched::new(left);
        for &i in o {
            let i = i as usize;
            if matching.of(i).is_some() {
                continue;
            }
            let hash = shapes_hash(old, i) as u32;
            let start = candidates.items.partition_point(|&(h, _)| h < hash);
            let end = candidates.items.partition_point(|&(h, _)| h <= hash);
            let fits = |j: usize| same_shapes(old, new, i, j);
            let taken = &matching.taken;
            if let Some(j) = candidates.first(start..end, taken, |(_, j)| j as usize, fits) {
                matching.settle(i);
                matching.pair(i, j, How::Signature);
            }
        }
    }
    // Then the pairs by name whose new instruction no other took.
    for &i in o {
        let i = i as usize;
        if let Some(j) = matching.settle(i) {
            if !matching.taken[j] {
                matching.pair(i, j, How::Name);
            }
        }
    }
}

/// Whether new item `j` fits old item `i` by their operands: each old operand matched
/// to the new operand at its place, or both unmatched and of the same stem.
fn fits(old: &Items<'_>, new: &Items<'_>, matching: &Matching, i: usize, j: usize) -> bool {
    old.operands(i)
        .iter()
        .zip(new.operands(j).iter())
        .all(|(a, b)| {
            let a_match = old.by_name(a).and_then(|k| matching.of(k));
            let b_index = new.by_name(b);
            let (a, b) = (old.held.strings.get(a), new.held.strings.get(b));
            match (a_match, b_index) {
                (Some(k), Some(b)) => k == b,
                (Some(_), None) => false,
                (None, Some(b)) => !matching.taken[b] && stem(a) == stem(new.name(b)),
                (None, None) => stem(a) == stem(b),
            }
        })
}

/// How many new items whose operands fit an old one are looked at for one that has its
/// shapes too.
const SAME_SHAPES_LOOK: usize = 16;

/// The first new item not matched of old item `i`'s group `g` (of `uneven`) whose
/// operands fit `i`'s, looked for as `look` says; when it has other shapes, one of the
/// next [`SAME_SHAPES_LOOK`] that fit and has `i`'s shapes, if any (instructions of the
/// same operands, a broadcast of one constant to several shapes, are renumbered too).
/// With `same_shapes_only`, only one of the first [`SAME_SHAPES_LOOK`] that has them.
/// A get-tuple-element looks for one of its tuple index first, among those.
#[allow(clippy::too_many_arguments)]
fn by_operands_of<'a>(
    old: &Items<'a>,
    new: &Items<'a>,
    matching: &mut Matching,
    indexed: &mut [Option<Candidates>],
    uneven: &[(&[u32], &[u32])],
    (i, g): (u32, u32),
    (look, scan): (Look, &mut ScanBudget),
    same_shapes_only: bool,
) -> Option<usize> {
    let (i, g) = (i as usize, g as usize);
    let operands = old.operands(i);
    let matching = &*matching;
    // Where the candidates of `i`'s operands' stems stand, found once for every look-up
    // below (comparing stems reads every operand of a candidate). An operand matched
    // to `k` needs `k`'s name at its place: of those, the one with the fewest
    // candidates picks the list to look in. Every candidate that fits is in each such
    // list, in the same order, so any of them finds the same one; the first one's list
    // was every candidate of the group when it was a parameter that all share, and a
    // group of 200,000 was matched in time with the square of its size.
    let (place, exact) = match look {
        Look::Indexed => {
            let candidates = indexed[g].get_or_insert_with(|| Candidates::new(new, uneven[g].1));
            let stems: Vec<&'a str> = old.stems(i).collect();
            let place = candidates.of_stems(new, &stems);
            let matched = operands.iter().enumerate().filter_map(|(at, a)| {
                let k = old.by_name(a).and_then(|k| matching.of(k))?;
                Some((at, new.name_id(k)))
            });
            let exact = candidates.narrowest(new, &place, matched);
            (place, exact)
        }
        #[cfg(test)]
        Look::Scan => (OfStems::default(), None),
    };
    let fit = |j: usize| fits(old, new, matching, i, j);
    let same = |j: usize| same_shapes(old, new, i, j);
    let mut lookup = |want: &dyn Fn(usize) -> bool, limit: usize| match look {
        Look::Indexed => {
            let candidates = indexed[g].get_or_insert_with(|| Candidates::new(new, uneven[g].1));
            let mut room = scan.room();
            let found = candidates.first(
                new,
                (&place, exact),
                &matching.taken,
                (fit, want),
                (limit, &mut room),
            );
            scan.spent(room);
            found
        }
        #[cfg(test)]
        Look::Scan => {
            let group = uneven[g].1.iter().map(|&j| j as usize);
            group
                .filter(|&j| !matching.taken[j] && operands.len() == new.operands(j).len())
                .filter(|&j| fit(j))
                .take(limit)
                .find(|&j| want(j))
        }
    };
    // What is looked for among the next that fit, best first: its shapes; for a
    // get-tuple-element, which takes a tuple's element by its index, its index and
    // shapes, then its shapes (the element moved when the tuple grew), and last its
    // index alone (the element's shape changed).
    let index = old.tuple_index(i);
    let same_index = |j: usize| new.tuple_index(j) == index;
    let both = |j: usize| same(j) && same_index(j);
    type Wants<'w> = &'w [&'w dyn Fn(usize) -> bool];
    let (by_shapes, by_index): (Wants<'_>, Wants<'_>) = match index {
        Some(_) => (&[&both, &same], &[&same_index]),
        None => (&[&same], &[]),
    };
    if same_shapes_only {
        return by_shapes
            .iter()
            .find_map(|want| lookup(want, SAME_SHAPES_LOOK));
    }
    let first = lookup(&|_| true, usize::MAX)?;
    if by_shapes[0](first) {
        return Some(first);
    }
    (by_shapes.iter().chain(by_index))
        .find_map(|want| lookup(want, SAME_SHAPES_LOOK))
        .or(Some(first))
}

/// The end of the run of `order` (items sorted by group) from `start`, whose item is
/// of group `group`: found by galloping, so that a run costs the logarithm of its length
/// in look-ups of a group (each reads an instruction's records), not its length.
fn run_end(items: &Items<'_>, order: &[u32], start: usize, group: (&str, Option<&str>)) -> usize {
    let of = |at: usize| items.group(order[at] as usize) == group;
    // `known` is in the run; `probe` past it or at the end.
    let (mut known, mut step) = (start, 1);
    let probe = loop {
        let probe = start.saturating_add(step).min(order.len());
        if probe == order.len() || !of(probe) {
            break probe;
        }
        known = probe;
        step *= 2;
    };
    known + 1 + order[known + 1..probe].partition_point(|&i| items.group(i as usize) == group)
}

/// The new side's candidates of one group whose sizes differ, indexed for matching by
/// operands, so that each old item looks only at those that could fit it (in input
/// order, as it would look at all of them). A pair's operands have the same stems,
/// place by place (a matched operand's pair is in its group, so it has its stem), and
/// an old operand matched to `k` has `k`'s name at its place: the candidates are
/// ordered by their operands' stems, and their operands by the stems, the place and
/// the name, each then in input order, and an old item looks in the range of its
/// stems (and of its first matched operand's place and name). Each list skips the
/// candidates matched since it was last looked at.
struct Candidates {
    /// Candidates, by their operands' stems.
    all: Unmatched<u32>,
    /// Per candidate of `all`, in its order, the rank of its operands' stems among
    /// those of the group (the same stems, the same rank).
    ranks: Vec<u32>,
    /// (candidate, place, its stems' rank) of each operand of each candidate, by the
    /// rank, the place and the operand's name. Ordered by the stems themselves, each
    /// comparison read every operand of two candidates: 1,000 instructions of 2,000
    /// operands each took two minutes to sort.
    exact: Unmatched<(u32, u32, u32)>,
}

/// Where the candidates whose operands have an old item's stems stand
/// ([`Candidates::of_stems`]): their places in [`Candidates::all`] and in
/// [`Candidates::exact`] (both empty when no candidate has those stems).
#[derive(Clone, Default)]
struct OfStems {
    all: std::ops::Range<usize>,
    exact: std::ops::Range<usize>,
}

/// Candidates in an order that skips those matched: each points on past the ones found
/// matched after it (matched items stay matched), so a list is walked past each
/// matched candidate at most once over all look-ups, not once each.
struct Unmatched<T> {
    items: Vec<T>,
    /// For a candidate found matched, a later place to go on from; its own place else.
    next: Vec<u32>,
}

impl<T: Copy> Unmatched<T> {
    fn new(items: Vec<T>) -> Self {
        let next = (0..items.len() as u32).collect();
        Unmatched { items, next }
    }

    /// The place of the first candidate not matched in `from..end` (`end` for none);
    /// `of` gives an item's candidate.
    fn find(&mut self, from: usize, end: usize, matched: &[bool], of: fn(T) -> usize) -> usize {
        let mut at = from;
        while at < end && (self.next[at] as usize != at || matched[of(self.items[at])]) {
            if self.next[at] as usize == at {
                self.next[at] += 1;
            }
            at = self.next[at] as usize;
        }
        let mut x = from;
        while x < at.min(end) {
            let on = self.next[x] as usize;
            self.next[x] = at as u32;
            x = on;
        }
        at.min(end)
    }

    /// The first candidate in `range` not matched that `fits`.
    fn first(
        &mut self,
        range: std::ops::Range<usize>,
        matched: &[bool],
        of: fn(T) -> usize,
        fits: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut room = usize::MAX;
        self.first_of(
            range,
            matched,
            of,
            (fits, |_| true),
            (usize::MAX, &mut room),
        )
    }

    /// The first of the first `limit` candidates in `range` not matched that `fit`,
    /// that `want` takes, asking `fit` of at most `room` candidates (`room` is left
    /// with what was not used).
    fn first_of(
        &mut self,
        range: std::ops::Range<usize>,
        matched: &[bool],
        of: fn(T) -> usize,
        (fits, want): (impl Fn(usize) -> bool, impl Fn(usize) -> bool),
        (mut limit, room): (usize, &mut usize),
    ) -> Option<usize> {
        let mut at = self.find(range.start, range.end, matched, of);
        while at < range.end && limit > 0 && *room > 0 {
            *room -= 1;
            let j = of(self.items[at]);
            if fits(j) {
                if want(j) {
                    return Some(j);
                }
                limit -= 1;
            }
            at = self.find(at + 1, range.end, matched, of);
        }
        None
    }
}

impl Candidates {
    fn new(new: &Items<'_>, group: &[u32]) -> Self {
        let stems = |j: u32| {
            #[cfg(test)]
            STEMS_READ.with(|read| read.set(read.get() + 1));
            new.stems(j as usize)
        };
        // Sorted stably: input order within the same key.
        let mut all: Vec<u32> = group.to_vec();
        all.sort_by(|&x, &y| stems(x).cmp(stems(y)));
        let mut ranks = Vec::with_capacity(all.len());
        let mut rank = 0u32;
        for (at, &j) in all.iter().enumerate() {
            if at > 0 && stems(all[at - 1]).ne(stems(j)) {
                rank += 1;
            }
            ranks.push(rank);
        }
        let mut exact: Vec<(u32, u32, u32)> = (all.iter().zip(&ranks))
            .flat_map(|(&j, &rank)| {
                (0..new.operands(j as usize).len() as u32).map(move |at| (j, at, rank))
            })
            .collect();
        let name = |(j, at, _): (u32, u32, u32)| new.operands(j as usize).get(at as usize);
        // Stably, from the order of `all`: as the stems themselves ordered them.
        exact.sort_by(|&x, &y| {
            (x.2.cmp(&y.2))
                .then(x.1.cmp(&y.1))
                .then(name(x).cmp(&name(y)))
        });
        Candidates {
            all: Unmatched::new(all),
            ranks,
            exact: Unmatched::new(exact),
        }
    }

    /// The first candidate not matched that `fits` an old item whose operands' stems
    /// stand at `place` ([`Candidates::of_stems`]), and whose operand at a place needs
    /// the name given (`exact`).
    fn first(
        &mut self,
        new: &Items<'_>,
        (place, exact): (&OfStems, Option<(usize, u32)>),
        matched: &[bool],
        fits: (impl Fn(usize) -> bool, impl Fn(usize) -> bool),
        limit: (usize, &mut usize),
    ) -> Option<usize> {
        match exact {
            None => self
                .all
                .first_of(place.all.clone(), matched, |j| j as usize, fits, limit),
            Some(exact) => {
                let range = self.exact_range(new, place.exact.clone(), exact);
                self.exact
                    .first_of(range, matched, |x| x.0 as usize, fits, limit)
            }
        }
    }

    /// Where the candidates whose operands have `stems` stand in both lists: the
    /// stems' place among the candidates (comparing stems reads every operand of a
    /// candidate), then the entries of their rank (nowhere when no candidate has them).
    fn of_stems(&self, new: &Items<'_>, stems: &[&str]) -> OfStems {
        use std::cmp::Ordering;
        let by_stems = |&j: &u32| new.stems(j as usize).cmp(stems.iter().copied());
        let all = &self.all.items;
        let at = all.partition_point(|j| by_stems(j) == Ordering::Less);
        if all.get(at).is_none_or(|j| by_stems(j) != Ordering::Equal) {
            return OfStems::default();
        }
        let rank = self.ranks[at];
        let all_end = at + self.ranks[at..].partition_point(|&r| r == rank);
        let items = &self.exact.items;
        let start = items.partition_point(|x| x.2 < rank);
        let end = start + items[start..].partition_point(|x| x.2 == rank);
        OfStems {
            all: at..all_end,
            exact: start..end,
        }
    }

    /// The places, within `of_stems` (an [`OfStems::exact`]), of the candidates whose
    /// operand at `place` is `name`.
    fn exact_range(
        &self,
        new: &Items<'_>,
        of_stems: std::ops::Range<usize>,
        (place, name): (usize, u32),
    ) -> std::ops::Range<usize> {
        use std::cmp::Ordering;
        let key = |&(j, at, _): &(u32, u32, u32)| {
            let operand = new.operands(j as usize).get(at as usize);
            (at as usize).cmp(&place).then(operand.cmp(&name))
        };
        let items = &self.exact.items[of_stems.clone()];
        let start = items.partition_point(|x| key(x) == Ordering::Less);
        let end = start + items[start..].partition_point(|x| key(x) != Ordering::Greater);
        of_stems.start + start..of_stems.start + end
    }

    /// Of the (place, name) each operand of an old item matched so far asks of its
    /// candidates, the one with the fewest candidates (`None` when there is none): a
    /// binary search each, within the entries of the item's stems (`place`).
    fn narrowest(
        &self,
        new: &Items<'_>,
        place: &OfStems,
        exacts: impl Iterator<Item = (usize, u32)>,
    ) -> Option<(usize, u32)> {
        let mut best: Option<((usize, u32), usize)> = None;
        for exact in exacts {
            let count = self.exact_range(new, place.exact.clone(), exact).len();
            if best.is_none_or(|(_, fewest)| count < fewest) {
                best = Some((exact, count));
                if count <= 1 {
                    break;
                }
            }
        }
        best.map(|(exact, _)| exact)
    }
}

/// How many candidates matching by operands may still ask whether they fit, in all,
/// for the items of one pairing ([`match_items`]): [`ScanBudget::PER_ITEM`] an item of
/// either side, and 65,536 more. A look-up asks candidates in order until one fits; in
/// a group of 200,000 renumbered instructions of one stem, whose operands each fit
/// few, each look-up asked a good part of the group, in time with the square of its
/// size (53 s). Once the budget is spent, each look-up asks at most
/// [`ScanBudget::LATE`], and an item none of those fit is left to the later passes
/// (its name's pair, if free). The pairs of XLA's modules in `fixtures/` ask fewer
/// than one candidate an item (at most 157 for 758 items), well within the 65,536.
struct ScanBudget {
    left: usize,
}

impl ScanBudget {
    /// Asks an item, to spend in all.
    const PER_ITEM: usize = 8;
    /// Asks a look-up may make once the budget is spent.
    const LATE: usize = 4;

    fn new(items: usize) -> Self {
        ScanBudget {
            left: items.saturating_mul(Self::PER_ITEM).saturating_add(1 << 16),
        }
    }

    /// The asks the next look-up may make.
    fn room(&self) -> usize {
        self.left.max(Self::LATE)
    }

    /// Counts what a look-up given [`ScanBudget::room`] left of it as `unused`.
    fn spent(&mut self, unused: usize) {
        let used = self.room() - unused;
        #[cfg(test)]
        ASKED.with(|asked| asked.set(asked.get() + used));
        self.left = self.left.saturating_sub(used);
    }
}

#[cfg(test)]
thread_local! {
    /// Every ask [`ScanBudget::spent`] counted on this thread.
    static ASKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Every candidate's stems [`Candidates::new`] read on this thread.
    static STEMS_READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

struct Differ<'o> {
    options: &'o Options,
    result: ListingDiff,
}

/// Where a change is, for [`Change`].
struct At<'a> {
    place: String,
    computation: Option<&'a str>,
    instruction: Option<&'a str>,
}

impl At<'_> {
    /// The place of a pair of single messages' shapes whose role (the new one's, else
    /// the old one's) is `role`: an entry parameter, the result, or the next shape
    /// (`shape N` when the two hold more than two `shapes` in all, else `shape`).
    fn message(role: Option<&Role>, shape_number: &mut usize, shapes: usize) -> Self {
        let place = match role {
            Some(Role::EntryParameter { index }) => format!("parameter {index}"),
            Some(Role::EntryResult) => "result".to_string(),
            _ => {
                *shape_number += 1;
                if shapes > 2 {
                    format!("shape {shape_number}")
                } else {
                    "shape".to_string()
                }
            }
        };
        At {
            place,
            computation: None,
            instruction: None,
        }
    }
}

impl Differ<'_> {
    fn keep(&self, kind: ChangeKind) -> bool {
        !self.options.ignore.contains(&kind)
    }

    fn changed(&mut self, at: &At<'_>, old: Listed<'_>, new: Listed<'_>) {
        if old.same_text(&new) {
            return;
        }
        let (old, new) = (old.entry(), new.entry());
        let mut aspects = Aspects::new(&self.options.ignore);
        let long = TupleSide::of(&old)
            .zip(TupleSide::of(&new))
            .filter(|(o, n)| o.is_long_tuple() && n.is_long_tuple());
        if long
            .is_none_or(|(o, n)| compare_long_tuples(o, n, &mut Vec::new(), &mut aspects).is_none())
        {
            aspects = Aspects::new(&self.options.ignore);
            compare(&old.shape(), &new.shape(), &mut Vec::new(), &mut aspects);
        }
        let aspects = aspects.finish();
        if aspects.is_empty() {
            return;
        }
        self.result.changes.push(Change {
            what: What::Changed,
            place: at.place.clone(),
            computation: at.computation.map(str::to_string),
            instruction: at.instruction.map(str::to_string),
            old_bytes: old.bytes(),
            new_bytes: new.bytes(),
            old: Some(old.text),
            new: Some(new.text),
            aspects,
            line: new.line,
            column: new.column,
            path: new.path,
        });
    }

    fn lone(&mut self, at: &At<'_>, what: What, entry: Option<Listed<'_>>, words: String) {
        let kind = if what == What::Added {
            ChangeKind::Added
        } else {
            ChangeKind::Removed
        };
        if !self.keep(kind) {
            return;
        }
        let entry = entry.map(|e| e.entry());
        let bytes = entry.as_ref().and_then(Entry::bytes);
        let (line, column) = (
            entry.as_ref().and_then(|e| e.line),
            entry.as_ref().and_then(|e| e.column),
        );
        let path = entry.as_ref().and_then(|e| e.path.clone());
        let text = entry.map(|e| e.text);
        self.result.changes.push(Change {
            what,
            place: at.place.clone(),
            computation: at.computation.map(str::to_string),
            instruction: at.instruction.map(str::to_string),
            old: if what == What::Removed {
                text.clone()
            } else {
                None
            },
            new: if what == What::Added { text } else { None },
            aspects: vec![Aspect { kind, words }],
            old_bytes: if what == What::Removed { bytes } else { None },
            new_bytes: if what == What::Added { bytes } else { None },
            line,
            column,
            path,
        });
    }

    fn pair(&mut self, at: &At<'_>, old: Option<Listed<'_>>, new: Option<Listed<'_>>) {
        match (old, new) {
            (Some(o), Some(n)) => self.changed(at, o, n),
            (None, Some(n)) => self.lone(at, What::Added, Some(n), "added".to_string()),
            (Some(o), None) => self.lone(at, What::Removed, Some(o), "removed".to_string()),
            (None, None) => {}
        }
    }

    fn messages<'h>(&mut self, old: &'h Held, new: &'h Held) {
        let count = old.entries.len().max(new.entries.len());
        let shapes = [old, new]
            .iter()
            .flat_map(|h| {
                h.entries
                    .iter_from(0)
                    .map(|slot| *h.role_parts(&slot).0 == Role::Result)
            })
            .filter(|&result| result)
            .count();
        let at_k = |held: &'h Held, k: usize| {
            let slot = held.entries.get(k)?;
            Some(Listed { held, slot })
        };
        let mut shape_number = 0;
        for k in 0..count {
            let (o, n) = (at_k(old, k), at_k(new, k));
            let role = n.or(o).map(|e| e.role());
            let at = At::message(role.as_ref(), &mut shape_number, shapes);
            self.pair(&at, o, n);
        }
    }

    fn entry_layout(&mut self, old: &Module<'_>, new: &Module<'_>) {
        // A parameter's name, from the entry computation's signature (looked up as it
        // is needed: a map of them all took some 60 bytes a parameter).
        let entry = |m: &Module<'_>| m.computations.iter().position(|c| c.entry);
        let entries = (entry(old), entry(new));
        let entry_name = |m: &Module<'_>, at: Option<usize>, index: usize| -> Option<String> {
            let parameter = m.parameters_of(&m.computations[at?]).get(index);
            m.shape(parameter)?.parameter_name()
        };
        let (old_entry, new_entry) = (old.entry_parameters.list(), new.entry_parameters.list());
        let indices = union(old_entry.keys(), new_entry.keys());
        for index in indices {
            let name =
                entry_name(new, entries.1, index).or_else(|| entry_name(old, entries.0, index));
            let place = match name {
                Some(name) => format!("entry parameter {index} ({name})"),
                None => format!("entry parameter {index}"),
            };
            let at = At {
                place,
                computation: None,
                instruction: None,
            };
            self.pair(
                &at,
                old.shape(old_entry.get(index)),
                new.shape(new_entry.get(index)),
            );
        }
        let at = At {
            place: "entry result".to_string(),
            computation: None,
            instruction: None,
        };
        self.pair(
            &at,
            old.shape(old.entry_result),
            new.shape(new.entry_result),
        );
    }

    fn computations<'a>(&mut self, old: &Module<'a>, new: &Module<'a>, opcodes: bool) {
        // Computations by their places in their modules' lists, and pairs of places as
        // `u32`s (fewer than `u32::MAX` of them, as of anything a side holds): lists of
        // each one's name and place, and pairs of `usize`s, took some 70 bytes a
        // computation and side beside its record.
        let (o_all, n_all) = (&old.computations, &new.computations);
        let mut pairs: Vec<(u32, u32, How)> = Vec::new();
        let old_entry = o_all.iter().position(|c| c.entry);
        let new_entry = n_all.iter().position(|c| c.entry);
        if let (Some(i), Some(j)) = (old_entry, new_entry) {
            let how = if old.name_of(&o_all[i]) == new.name_of(&n_all[j]) {
                How::Name
            } else {
                How::Entry
            };
            pairs.push((i as u32, j as u32, how));
        }
        // With calls on both sides, a computation an instruction calls is matched by
        // the match of its caller (below); the others by name and signature.
        let by_callers = opcodes && old.held.has_calls() && new.held.has_calls();
        let uncalled = |c: &Computation| !(by_callers && c.called);
        let rest = |all: &[Computation], entry: Option<usize>, other: Option<usize>| {
            (0..all.len())
                .filter(|&i| Some(i) != entry || other.is_none())
                .filter(|&i| uncalled(&all[i]))
                .map(|i| i as u32)
                .collect::<Vec<u32>>()
        };
        let o_named = rest(o_all, old_entry, new_entry);
        let n_named = rest(n_all, new_entry, old_entry);
        {
            let o_view = Items {
                names: Names::Computations(&o_named, old),
                held: old.held,
                ids: Vec::new(),
            };
            let n_view = Items {
                names: Names::Computations(&n_named, new),
                held: new.held,
                ids: Vec::new(),
            };
            for (i, j, how) in match_items(&o_view, &n_view, false).pairs() {
                pairs.push((o_named[i as usize], n_named[j as usize], how));
            }
        }
        drop((o_named, n_named));
        let mut old_done = vec![false; o_all.len()];
        let mut new_done = vec![false; n_all.len()];
        for &(i, j, _) in &pairs {
            old_done[i as usize] = true;
            new_done[j as usize] = true;
        }
        // Each pair's instructions matched, and the computations each matched pair
        // of instructions calls paired in turn (the first pair of callers that names
        // them wins), through the pairs so made too.
        let mut matchings = Settled::default();
        if by_callers {
            let mut k = 0;
            // Computations an instruction left unmatched calls.
            let mut old_disowned = vec![false; o_all.len()];
            let mut new_disowned = vec![false; n_all.len()];
            // The pairs followed through their calls, then the computations left paired
            // by name once, then those pairs followed in turn (a second pass by name
            // would find none: what kept a computation from its name's counterpart,
            // being done or disowned, stays).
            for by_name in [true, false] {
                while let Some(&(i, j, _)) = pairs.get(k) {
                    let (oc, nc) = (&o_all[i as usize], &n_all[j as usize]);
                    let matching = match_items(
                        &Items::instructions(old, oc, opcodes),
                        &Items::instructions(new, nc, opcodes),
                        opcodes,
                    );
                    // What an instruction left unmatched calls goes with it; what a matched
                    // pair calls is paired.
                    for (j, ins) in new.instrs_of(nc).enumerate() {
                        if !matching.taken[j] {
                            new.calls(&ins).for_each(|at| new_disowned[at] = true);
                        }
                    }
                    for (a, oi) in old.instrs_of(oc).enumerate() {
                        let mut calls = old.calls(&oi).peekable();
                        if calls.peek().is_none() {
                            continue;
                        }
                        let b = matching.to[a];
                        if b == NONE {
                            calls.for_each(|at| old_disowned[at] = true);
                            continue;
                        }
                        let Some(ni) = new.instr(nc, b as usize) else {
                            continue;
                        };
                        for (oc, nc) in calls.zip(new.calls(&ni)) {
                            if old_done[oc] || new_done[nc] {
                                continue;
                            }
                            (old_done[oc], new_done[nc]) = (true, true);
                            let how = if old.name_of(&o_all[oc]) == new.name_of(&n_all[nc]) {
                                How::Name
                            } else {
                                How::Caller
                            };
                            pairs.push((oc as u32, nc as u32, how));
                        }
                    }
                    matchings.keep(&matching);
                    k += 1;
                }
                if !by_name {
                    break;
                }
                // Those left: with their name's counterpart, if it is left too, unless an
                // instruction left unmatched calls each (then both go with their callers,
                // removed and added); so a computation called through one the other side
                // does not have (text hides the computation a `call-start` calls
                // through) is still matched. And on through their calls.
                let left: HashMap<&str, usize> = (0..n_all.len())
                    .filter(|&j| !new_done[j])
                    .map(|j| (new.name_of(&n_all[j]), j))
                    .collect();
                for i in 0..o_all.len() {
                    let Some(&j) = left.get(old.name_of(&o_all[i])).filter(|_| !old_done[i]) else {
                        continue;
                    };
                    let disowned = old_disowned[i] && new_disowned[j];
                    if !new_done[j] && !disowned {
                        (old_done[i], new_done[j]) = (true, true);
                        pairs.push((i as u32, j as u32, How::Name));
                    }
                }
            }
        }
        // The entry computation's pair first, then the others in the old side's order
        // (the order the pairs by name and signature come in already).
        let first = usize::from(old_entry.is_some() && new_entry.is_some());
        let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
        order[first..].sort_by_key(|&k| pairs[k as usize].0);
        for k in order {
            let (i, j, how) = pairs[k as usize];
            let (oc, nc) = (&o_all[i as usize], &n_all[j as usize]);
            if how != How::Name {
                self.result.matches.push(Match {
                    computation: None,
                    old: old.name_of(oc).to_string(),
                    new: new.name_of(nc).to_string(),
                    how,
                });
            }
            let matching = matchings.get(k as usize, nc.count as usize);
            self.computation_pair((old, oc), (new, nc), opcodes, matching);
        }
        for (i, c) in old.computations.iter().enumerate() {
            if !old_done[i] {
                let name = old.name_of(c);
                let at = At {
                    place: format!("computation {name}"),
                    computation: Some(name),
                    instruction: None,
                };
                let words = format!("computation removed ({} instructions)", c.count);
                self.lone(&at, What::Removed, None, words);
            }
        }
        for (j, c) in new.computations.iter().enumerate() {
            if !new_done[j] {
                let name = new.name_of(c);
                let at = At {
                    place: format!("computation {name}"),
                    computation: Some(name),
                    instruction: None,
                };
                let words = format!("computation added ({} instructions)", c.count);
                self.lone(&at, What::Added, None, words);
            }
        }
    }

    fn computation_pair(
        &mut self,
        (om, old): (&Module<'_>, &Computation),
        (nm, new): (&Module<'_>, &Computation),
        opcodes: bool,
        matching: Option<Matching>,
    ) {
        let name = nm.name_of(new);
        let (old_parameters, new_parameters) = (om.parameters_of(old), nm.parameters_of(new));
        let indices = union(old_parameters.keys(), new_parameters.keys());
        for index in indices {
            let (o, n) = (
                om.shape(old_parameters.get(index)),
                nm.shape(new_parameters.get(index)),
            );
            let pname = n.or(o).and_then(|e| e.parameter_name());
            let place = match pname {
                Some(p) => format!("{name} parameter {index} ({p})"),
                None => format!("{name} parameter {index}"),
            };
            let at = At {
                place,
                computation: Some(name),
                instruction: None,
            };
            self.pair(&at, o, n);
        }
        let at = At {
            place: format!("{name} result"),
            computation: Some(name),
            instruction: None,
        };
        self.pair(&at, om.shape(old.result()), nm.shape(new.result()));

        let matching = matching.unwrap_or_else(|| {
            match_items(
                &Items::instructions(om, old, opcodes),
                &Items::instructions(nm, new, opcodes),
                opcodes,
            )
        });
        for (i, j, how) in matching.pairs() {
            let (i, j) = (i as usize, j as usize);
            // Each read back (else the pair's error says what was lost).
            let (Some(oi), Some(ni)) = (om.instr(old, i), nm.instr(new, j)) else {
                continue;
            };
            let (oi, ni) = (&oi, &ni);
            let (oi_name, ni_name) = (om.name(oi), nm.name(ni));
            if how != How::Name {
                self.result.matches.push(Match {
                    computation: Some(om.name_of(old).to_string()),
                    old: oi_name.to_string(),
                    new: ni_name.to_string(),
                    how,
                });
            }
            // The same roles with the same texts: nothing to report (the common case).
            if same_instr_shapes((om, oi), (nm, ni)) {
                continue;
            }
            let (o_shapes, n_shapes) = (
                ByKey::new(om.shapes(oi).collect()),
                ByKey::new(nm.shapes(ni).collect()),
            );
            let base = if oi_name == ni_name {
                format!("{name}/{ni_name}")
            } else {
                format!("{name}/{ni_name} (was {oi_name})")
            };
            // The new side's keys, then the old side's others, in order; each key's
            // first shape on each side.
            let new_keys = (n_shapes.firsts()).map(|n| (n.key(), o_shapes.first(n.key()), Some(n)));
            let old_keys = (o_shapes.firsts())
                .filter(|o| n_shapes.first(o.key()).is_none())
                .map(|o| (o.key(), Some(o), None));
            for (key, o, n) in new_keys.chain(old_keys) {
                let place = if key == ShapeKey::Plain {
                    base.clone()
                } else {
                    format!("{base} {key}")
                };
                let at = At {
                    place,
                    computation: Some(name),
                    instruction: Some(ni_name),
                };
                self.pair(&at, o, n);
            }
        }
        let old_done: Vec<bool> = matching.to.iter().map(|&j| j != NONE).collect();
        for (done, module, comp, what) in [
            (&old_done, om, old, What::Removed),
            (&matching.taken, nm, new, What::Added),
        ] {
            for (i, ins) in module.instrs_of(comp).enumerate() {
                if done[i] {
                    continue;
                }
                let ins = &ins;
                let ins_name = module.name(ins);
                let at = At {
                    place: format!(
                        "{}/{}",
                        if what == What::Added {
                            name
                        } else {
                            om.name_of(old)
                        },
                        ins_name
                    ),
                    computation: Some(if what == What::Added {
                        name
                    } else {
                        om.name_of(old)
                    }),
                    instruction: Some(ins_name),
                };
                let result = module.shapes(ins).find(|s| s.key() == ShapeKey::Plain);
                let words = if what == What::Added {
                    "instruction added"
                } else {
                    "instruction removed"
                };
                self.lone(&at, what, result, words.to_string());
            }
        }
    }
}

// ----- comparing two shapes -----

const TUPLE: i32 = crate::proto::PrimitiveType::Tuple as i32;

fn type_name(element_type: i32) -> String {
    crate::text::type_name(element_type)
        .map_or_else(|| format!("type {element_type}"), str::to_string)
}

fn prefix(index: &[usize]) -> String {
    if index.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = index.iter().map(usize::to_string).collect();
        format!("{{{}}}: ", parts.join(","))
    }
}

/// One side of two long tuples compared an element at a time: a tuple's text (which
/// reads back as it), or the bytes of a binary tuple (kept because its text does not).
#[derive(Clone, Copy, Debug)]
enum TupleSide<'a> {
    Text(&'a str),
    Encoded(&'a [u8]),
}

impl<'a> TupleSide<'a> {
    /// The entry as a side, when it is a long tuple kept as its text or its bytes.
    fn of(entry: &'a Entry) -> Option<Self> {
        match entry.encoded() {
            Some(bytes) => Some(TupleSide::Encoded(bytes)),
            None => entry
                .is_long_tuple_text()
                .then_some(TupleSide::Text(&entry.text)),
        }
    }

    /// Whether this is a long tuple, compared an element at a time.
    fn is_long_tuple(self) -> bool {
        match self {
            TupleSide::Text(text) => listing::long_tuple(text),
            TupleSide::Encoded(bytes) => bytes.len() >= listing::LONG_TEXT && encoded_tuple(bytes),
        }
    }

    /// The elements of the tuple, in order.
    fn elements(self) -> Box<dyn Iterator<Item = TupleSide<'a>> + 'a> {
        match self {
            TupleSide::Text(text) => Box::new(listing::tuple_elements(text).map(TupleSide::Text)),
            TupleSide::Encoded(bytes) => Box::new(encoded_elements(bytes).map(TupleSide::Encoded)),
        }
    }

    /// Whether two sides are known to be the same shape without reading them: the same
    /// text, or the same bytes.
    fn same(self, other: TupleSide<'_>) -> bool {
        match (self, other) {
            (TupleSide::Text(a), TupleSide::Text(b)) => a == b,
            (TupleSide::Encoded(a), TupleSide::Encoded(b)) => a == b,
            _ => false,
        }
    }

    /// The shape, read whole.
    fn read(self) -> Option<ShapeProto> {
        match self {
            TupleSide::Text(text) => listing::read_back(text).ok(),
            TupleSide::Encoded(bytes) => crate::codec::decode_shape(bytes)
                .ok()
                .map(|decoded| decoded.message),
        }
    }
}

/// Whether the `ShapeProto` of `bytes` (which decode) is a tuple: its last element
/// type, read from its top-level fields, is `TUPLE`.
fn encoded_tuple(bytes: &[u8]) -> bool {
    use crate::codec::wire::{Reader, WireType};
    let mut reader = Reader::new(bytes);
    let mut element_type = None;
    while !reader.is_at_end() {
        let Ok((number, wire_type)) = reader.read_tag() else {
            return false;
        };
        if (number, wire_type) == (2, WireType::Varint) {
            // An enum is an int32 on the wire: its low 32 bits.
            element_type = reader.read_varint().ok().map(|v| v as i32);
        } else if reader.skip_value(number, wire_type, 0).is_err() {
            return false;
        }
    }
    element_type == Some(TUPLE)
}

/// The bytes of each `tuple_shapes` element of the `ShapeProto` of `bytes`, in order.
fn encoded_elements(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    use crate::codec::wire::{Reader, WireType};
    let mut reader = Reader::new(bytes);
    std::iter::from_fn(move || loop {
        if reader.is_at_end() {
            return None;
        }
        let (number, wire_type) = reader.read_tag().ok()?;
        if (number, wire_type) == (4, WireType::LengthDelimited) {
            return reader.read_length_delimited().ok();
        }
        reader.skip_value(number, wire_type, 0).ok()?;
    })
}

/// A change lists at most this many aspects (those not ignored); the rest are counted
/// in one more aspect, so that two tuples of millions of shapes that all differ make a
/// change of their own size at most (a million aspects took 58 times the tuple's text
/// to write as JSON).
pub const MAX_ASPECTS: usize = 1000;

/// The aspects of one change as they are found: those of kinds not ignored, the first
/// [`MAX_ASPECTS`] listed and the rest counted.
struct Aspects<'i> {
    ignore: &'i [ChangeKind],
    list: Vec<Aspect>,
    /// How many more, and the kind of the first of them.
    more: Option<(usize, ChangeKind)>,
}

impl<'i> Aspects<'i> {
    fn new(ignore: &'i [ChangeKind]) -> Self {
        Aspects {
            ignore,
            list: Vec::new(),
            more: None,
        }
    }

    fn push(&mut self, aspect: Aspect) {
        if self.ignore.contains(&aspect.kind) {
            return;
        }
        if self.list.len() < MAX_ASPECTS {
            self.list.push(aspect);
            return;
        }
        let (more, _) = self.more.get_or_insert((0, aspect.kind));
        *more += 1;
    }

    /// The aspects listed, then one that counts the rest (of the kind of the first of
    /// them).
    fn finish(mut self) -> Vec<Aspect> {
        if let Some((more, kind)) = self.more {
            self.list.push(Aspect {
                kind,
                words: format!(
                    "{more} more differences, not listed (a change lists {MAX_ASPECTS})"
                ),
            });
        }
        self.list
    }
}

/// [`compare`] of two long tuples, each kept as its text (which reads back as its
/// shapes) or its bytes, an element at a time: elements of the same text or bytes are
/// the same shape, and only those that differ are read (a long one that is a tuple
/// again an element at a time), so that two tuples of millions of shapes are never
/// held (read whole, two 20 MB tuples took 1 GB to compare). `None` when an element
/// does not read back, which the whole comparison then says.
fn compare_long_tuples(
    old: TupleSide<'_>,
    new: TupleSide<'_>,
    index: &mut Vec<usize>,
    out: &mut Aspects<'_>,
) -> Option<()> {
    let (mut olds, mut news) = (old.elements(), new.elements());
    for k in 0.. {
        let (o, n) = (olds.next(), news.next());
        index.push(k);
        match (o, n) {
            (Some(o), Some(n)) if o.same(n) => {}
            (Some(o), Some(n)) if o.is_long_tuple() && n.is_long_tuple() => {
                compare_long_tuples(o, n, index, out)?;
            }
            (Some(o), Some(n)) => compare(&o.read()?, &n.read()?, index, out),
            (None, Some(n)) => out.push(Aspect {
                kind: ChangeKind::Structure,
                words: format!("{}added {}", prefix(index), print(&n.read()?)),
            }),
            (Some(o), None) => out.push(Aspect {
                kind: ChangeKind::Structure,
                words: format!("{}removed {}", prefix(index), print(&o.read()?)),
            }),
            (None, None) => {
                index.pop();
                return Some(());
            }
        }
        index.pop();
    }
    Some(())
}

/// The aspects in which `new` differs from `old` (`index`: the tuple index so far).
fn compare(old: &ShapeProto, new: &ShapeProto, index: &mut Vec<usize>, out: &mut Aspects<'_>) {
    let mut push = |kind, words: String| {
        out.push(Aspect {
            kind,
            words: format!("{}{words}", prefix(index)),
        });
    };
    if old.element_type != new.element_type {
        if old.element_type == TUPLE || new.element_type == TUPLE {
            push(
                ChangeKind::Structure,
                format!(
                    "{} -> {}",
                    type_name(old.element_type),
                    type_name(new.element_type)
                ),
            );
            return;
        }
        // A type with no name by its number: `element type 0 -> f32`.
        let bare = |t: i32| crate::text::type_name(t).map_or_else(|| t.to_string(), str::to_string);
        push(
            ChangeKind::ElementType,
            format!(
                "element type {} -> {}",
                bare(old.element_type),
                bare(new.element_type)
            ),
        );
    }
    if old.element_type == TUPLE && new.element_type == TUPLE {
        let count = old.tuple_shapes.len().max(new.tuple_shapes.len());
        for k in 0..count {
            index.push(k);
            match (old.tuple_shapes.get(k), new.tuple_shapes.get(k)) {
                (Some(o), Some(n)) => compare(o, n, index, out),
                (None, Some(n)) => out.push(Aspect {
                    kind: ChangeKind::Structure,
                    words: format!("{}added {}", prefix(index), print(n)),
                }),
                (Some(o), None) => out.push(Aspect {
                    kind: ChangeKind::Structure,
                    words: format!("{}removed {}", prefix(index), print(o)),
                }),
                (None, None) => {}
            }
            index.pop();
        }
        return;
    }
    // Lists compared without `memcmp` of empty ones (`proto::same_list`).
    if !same_list(&old.dimensions, &new.dimensions) {
        push(
            ChangeKind::Dimensions,
            format!("dimensions {:?} -> {:?}", old.dimensions, new.dimensions).replace(' ', ""),
        );
    }
    let flags = |s: &ShapeProto| -> Vec<bool> {
        (0..s.dimensions.len())
            .map(|i| s.is_dynamic_dimension.get(i).copied().unwrap_or(false))
            .collect()
    };
    if old.dimensions.len() == new.dimensions.len() && !same_list(&flags(old), &flags(new)) {
        push(
            ChangeKind::Dynamic,
            "dynamic dimensions changed".to_string(),
        );
    }
    if let (Some(o), Some(n)) = (&old.layout, &new.layout) {
        compare_layouts(o, n, &mut push);
    }
}

fn print(shape: &ShapeProto) -> String {
    crate::text::print_shape_as_xla(shape)
        .or_else(|_| crate::text::print_shape(shape))
        .unwrap_or_else(|_| "?".to_string())
}

fn compare_layouts(old: &LayoutProto, new: &LayoutProto, push: &mut dyn FnMut(ChangeKind, String)) {
    // Lists compared without `memcmp` of empty ones (`proto::same_list`).
    if !same_list(&old.minor_to_major, &new.minor_to_major) {
        push(
            ChangeKind::MinorToMajor,
            "minor_to_major changed".to_string(),
        );
    }
    if !same_list(&old.tiles, &new.tiles) {
        let words = match (old.tiles.is_empty(), new.tiles.is_empty()) {
            (true, false) => "tiles added",
            (false, true) => "tiles removed",
            _ => "tiles changed",
        };
        push(ChangeKind::Tiles, words.to_string());
    }
    if old.element_size_in_bits != new.element_size_in_bits {
        push(
            ChangeKind::ElementSize,
            format!(
                "element size {} -> {} bits",
                old.element_size_in_bits, new.element_size_in_bits
            ),
        );
    }
    if old.memory_space != new.memory_space {
        push(
            ChangeKind::MemorySpace,
            format!(
                "memory space S({}) -> S({})",
                old.memory_space, new.memory_space
            ),
        );
    }
    let tail = |l: &LayoutProto| l.tail_padding_alignment_in_elements.max(1);
    if tail(old) != tail(new) {
        push(
            ChangeKind::TailPadding,
            format!(
                "tail padding alignment {} -> {} elements",
                tail(old),
                tail(new)
            ),
        );
    }
    if !same_list(&old.split_configs, &new.split_configs) {
        push(
            ChangeKind::SplitConfigs,
            "split configs changed".to_string(),
        );
    }
    let rest = |l: &LayoutProto| {
        let mut l = l.clone();
        l.minor_to_major.clear();
        l.tiles.clear();
        l.element_size_in_bits = 0;
        l.memory_space = 0;
        l.tail_padding_alignment_in_elements = 0;
        l.split_configs.clear();
        l
    };
    if !same_layout(&rest(old), &rest(new)) {
        push(
            ChangeKind::LayoutOther,
            "other layout fields changed".to_string(),
        );
    }
}

#[cfg(test)]
mod tests {

    /// Parameters given in any order, some numbers twice, are found by number in order,
    /// the last given of a number kept (as a map's insert).
    #[test]
    fn parameters_are_sorted_once_the_last_given_kept() {
        let mut parameters = super::Parameters::default();
        for (index, entry) in [(5, 0), (1, 1), (3, 2), (1, 3), (0, 4), (5, 5), (1, 6)] {
            parameters.insert(index, entry);
        }
        parameters.finish();
        let got: Vec<(usize, u32)> = parameters.iter().collect();
        assert_eq!(got, [(0, 4), (1, 6), (3, 2), (5, 5)]);
        assert_eq!(parameters.list().get(3), Some(2));
        assert!(parameters.list().get(2).is_none());
        assert!(parameters.list().keys().eq([0, 1, 3, 5]));
        // Two sides' numbers, each once, in order.
        let union = |a: &[usize], b: &[usize]| -> Vec<usize> {
            super::union(a.iter().copied(), b.iter().copied()).collect()
        };
        assert_eq!(union(&[0, 2, 5], &[1, 2, 6, 7]), [0, 1, 2, 5, 6, 7]);
        assert_eq!(union(&[], &[3]), [3]);
        assert_eq!(union(&[4], &[]), [4]);
    }

    /// Names sort by the numbers after their stems, by value, a name without one first.
    #[test]
    fn names_are_ordered_by_the_numbers_xla_gave_them() {
        let mut names = [
            "add.10", "add.2", "add", "add.02", "add.1", "add.x", "add.0",
        ];
        names.sort_by_key(|n| super::name_number(n));
        assert_eq!(
            names,
            ["add", "add.x", "add.0", "add.1", "add.2", "add.02", "add.10"]
        );
        // The keys the matching sorts by, the longer numbers by their digits: the same
        // order, past 19 digits and at the largest numbers of 19 and 20.
        let mut more = vec![
            "a.9999999999999999999".to_string(),
            "a.10000000000000000000".into(),
            "a.18446744073709551615".into(),
            "a.18446744073709551616".into(),
            "a.0000000000000000000000000007".into(),
            "a.99999999999999999999999999".into(),
            "a.1000000000000000000".into(),
            "a".into(),
            "a.0".into(),
        ];
        more.extend(names.iter().map(|n| n.to_string()));
        let mut by_key = more.clone();
        by_key.sort_by(|a, b| {
            let (a, b) = (a.as_str(), b.as_str());
            super::by_number((super::number_key(a), || a), (super::number_key(b), || b))
        });
        more.sort_by(|a, b| super::name_number(a).cmp(&super::name_number(b)));
        assert_eq!(by_key, more);
    }

    /// A change lists the first `MAX_ASPECTS` aspects not ignored and counts the rest in
    /// one more, of the kind of the first not listed.
    #[test]
    fn a_change_lists_a_bounded_number_of_aspects() {
        let tuple = |layout: &str| {
            let elements = vec![format!("f32[2,3]{layout}"); super::MAX_ASPECTS + 500];
            crate::text::parse_shape(&format!("({})", elements.join(", "))).unwrap()
        };
        let (old, new) = (tuple("{1,0}"), tuple("{0,1}"));
        let mut aspects = super::Aspects::new(&[]);
        super::compare(&old, &new, &mut Vec::new(), &mut aspects);
        let aspects = aspects.finish();
        assert_eq!(aspects.len(), super::MAX_ASPECTS + 1);
        assert_eq!(aspects[0].words, "{0}: minor_to_major changed");
        let last = aspects.last().unwrap();
        assert_eq!(last.kind, super::ChangeKind::MinorToMajor);
        assert_eq!(
            last.words,
            "500 more differences, not listed (a change lists 1000)"
        );
        // Ignored aspects are neither listed nor counted.
        let mut aspects = super::Aspects::new(&[super::ChangeKind::MinorToMajor]);
        super::compare(&old, &new, &mut Vec::new(), &mut aspects);
        assert!(aspects.finish().is_empty());
    }

    /// Two listings whose entries are kept in temporary files past the first few
    /// compare as the same listings held in memory: every pair of fixture modules (text
    /// and proto), and random modules against mutated copies (layouts and types
    /// changed, instructions renumbered, removed and swapped, operand shapes given or
    /// not).
    #[test]
    fn entries_kept_in_a_file_compare_as_entries_held() {
        use super::{diff_held, ListingDiff, Options};
        use crate::guard::held::Held;
        use crate::guard::listing::{read_bytes, Listing, ReadOptions};
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/modules");
        let mut listings: Vec<Listing> = Vec::new();
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        for path in names {
            let bytes = std::fs::read(&path).unwrap();
            let name = path.display().to_string();
            listings.extend(read_bytes(&name, &bytes, &ReadOptions::default()).unwrap());
        }
        assert!(listings.len() >= 20, "{} fixture listings", listings.len());
        let mut next = crate::guard::draws(0x2545_f491_4f6c_dd1du64);
        let shapes = [
            "f32[8,128]{1,0}",
            "f32[8,128]{0,1}",
            "f32[8,128]{1,0:T(8,128)}",
            "bf16[8,128]{1,0}",
            "s32[4]{0}",
        ];
        let module = |next: &mut dyn FnMut(usize) -> usize, lines: &[String]| {
            let mut text = String::from("HloModule m\n\nENTRY main {\n");
            text += "  p.0 = f32[8,128]{1,0} parameter(0)\n";
            for line in lines {
                text += line;
            }
            text += &format!("  ROOT r = {} copy(p.0)\n}}\n", shapes[next(shapes.len())]);
            text
        };
        let mut random = Vec::new();
        for _ in 0..60 {
            let count = 1 + next(40);
            let mut lines: Vec<String> = Vec::new();
            let mut defined = vec!["p.0".to_string()];
            for k in 0..count {
                let name = format!("{}.{}", ["a", "b", "c"][next(3)], k + next(3) * 100);
                if defined.contains(&name) {
                    continue;
                }
                let operands: Vec<String> = (0..1 + next(3))
                    .map(|_| {
                        let operand = defined[next(defined.len())].clone();
                        match next(2) {
                            0 => format!("{} {operand}", shapes[next(shapes.len())]),
                            _ => operand,
                        }
                    })
                    .collect();
                let opcode = ["add", "multiply"][next(2)];
                let shape = shapes[next(shapes.len())];
                lines.push(format!(
                    "  {name} = {shape} {opcode}({})\n",
                    operands.join(", ")
                ));
                defined.push(name);
            }
            let old = module(&mut next, &lines);
            for _ in 0..1 + next(4) {
                let at = next(lines.len());
                match next(4) {
                    0 => {
                        let changed = shapes[next(shapes.len())];
                        let line = &lines[at];
                        let (head, rest) = line.split_once(" = ").unwrap();
                        let (_, tail) = rest.split_once(' ').unwrap();
                        lines[at] = format!("{head} = {changed} {tail}");
                    }
                    1 => lines[at] = lines[at].replacen('.', ".9", 1),
                    2 if lines.len() > 1 => {
                        lines.remove(at);
                    }
                    _ => {
                        let other = next(lines.len());
                        lines.swap(at, other);
                    }
                }
            }
            let new = module(&mut next, &lines);
            for text in [old, new] {
                let read = read_bytes("m", text.as_bytes(), &ReadOptions::default());
                random.extend(read.unwrap());
            }
        }
        let render = |d: ListingDiff| {
            let changes = d.changes.to_vec().unwrap();
            let matches = d.matches.to_vec().unwrap();
            serde_json::to_string(&(changes, matches)).unwrap()
        };
        let options = Options::default();
        let mut compared = 0;
        let mut changed = 0;
        let pairs = (0..listings.len())
            .flat_map(|i| (0..listings.len()).map(move |j| (i, j)))
            .map(|(i, j)| (&listings[i], &listings[j]))
            .chain(random.chunks(2).map(|pair| (&pair[0], &pair[1])));
        for (old, new) in pairs {
            let held = render(diff_held(&Held::of(old), &Held::of(new), &options).0);
            for keep in [0, 1, 3] {
                let (o, n) = (Held::of_keeping(old, keep), Held::of_keeping(new, keep));
                let (kept, lost) = diff_held(&o, &n, &options);
                assert!(lost.is_none());
                let kept = render(kept);
                assert_eq!(kept, held, "{} against {}, {keep} held", old.file, new.file);
                assert!(o.lost().is_none() && n.lost().is_none());
            }
            compared += 1;
            changed += usize::from(held.len() > 10);
        }
        assert!(
            changed > compared / 2,
            "{changed} of {compared} pairs differ"
        );
    }

    /// The listing of module text `text`, held.
    fn held_module(text: &str) -> crate::guard::held::Held {
        use crate::guard::listing::{read_bytes, ReadOptions};
        let listing = read_bytes("m", text.as_bytes(), &ReadOptions::default()).unwrap();
        crate::guard::held::Held::of(&listing[0])
    }

    /// Each computation of `module` by name: its instructions' names in order, its
    /// parameters' numbers and texts in order, and its result's text.
    #[allow(clippy::type_complexity)]
    fn arranged(
        module: &super::Module<'_>,
    ) -> Vec<(String, Vec<String>, Vec<(usize, String)>, String)> {
        let text = |entry| {
            module
                .shape(entry)
                .map_or(String::new(), |s| s.text().to_string())
        };
        let mut all: Vec<_> = (module.computations.iter())
            .map(|c| {
                let names = module.instrs_of(c).map(|i| module.name(&i).to_string());
                let parameters = module.parameters_of(c);
                let parameters = parameters.keys().map(|k| (k, text(parameters.get(k))));
                let name = module.name_of(c).to_string();
                (
                    name,
                    names.collect(),
                    parameters.collect(),
                    text(c.result()),
                )
            })
            .collect();
        all.sort();
        all
    }

    /// A listing that gives its computations' lines apart, interleaved, and a
    /// parameter twice (as a listing read back may) is arranged as the module it lists:
    /// each computation's instructions in the order given, its parameters by number
    /// (the last given of a number kept).
    #[test]
    fn computations_given_apart_are_arranged_as_given_together() {
        use crate::guard::listing::{read_bytes, ReadOptions};
        let module = held_module(
            "HloModule m\n\n%c (a: f32[2], b: s32[]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n  \
             %b = s32[] parameter(1)\n  ROOT %x = f32[2]{0} add(%a, %a)\n}\n\n\
             %d (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n  \
             ROOT %x = f32[2]{0} negate(%a)\n}\n\n\
             ENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  \
             ROOT %r = f32[2]{0} call(%p), to_apply=%c\n}\n",
        );
        let listing = "m: ENTRY e/signature parameter 0 (p): f32[2]\n\
            m: c/signature parameter 1 (b): f32[9]\n\
            m: d/a: f32[2]{0}\n\
            m: c/a: f32[2]{0}\n\
            m: d/signature parameter 0 (a): f32[2]\n\
            m: ENTRY e/p: f32[2]{0}\n\
            m: d/x: f32[2]{0}\n\
            m: c/signature parameter 0 (a): f32[2]\n\
            m: c/signature parameter 1 (b): f32[8]\n\
            m: c/b: s32[]\n\
            m: ENTRY e/signature result: f32[2]\n\
            m: c/signature result: f32[2]\n\
            m: d/signature result: f32[2]\n\
            m: ENTRY e/r: f32[2]{0}\n\
            m: c/x: f32[2]{0}\n\
            m: c/signature parameter 1 (b): s32[]\n";
        let read = read_bytes("m", listing.as_bytes(), &ReadOptions::default()).unwrap();
        let listed = crate::guard::held::Held::of(&read[0]);
        let (module, listed) = (super::Module::new(&module), super::Module::new(&listed));
        let want = arranged(&module);
        assert_eq!(want.len(), 3);
        assert_eq!(want[0].1, ["a", "b", "x"]);
        assert_eq!(want[1].1, ["a", "x"]);
        assert_eq!(arranged(&listed), want);
        // Each instruction found by its name in its computation, whichever has the
        // name first.
        for module in [&module, &listed] {
            for c in &module.computations {
                for (i, ins) in module.instrs_of(c).enumerate() {
                    assert_eq!(module.index_of(c.at, ins.name), Some(i as u32));
                }
            }
        }
    }

    /// The instructions of `module`'s entry computation, to match.
    fn entry_items<'a>(module: &'a super::Module<'a>) -> super::Items<'a> {
        let computation = module.computations.iter().find(|c| c.entry).unwrap();
        super::Items::instructions(module, computation, true)
    }

    /// Matching by operands through the index of candidates makes the pairs that
    /// looking at every candidate in turn makes: random modules whose instructions share
    /// a few stems and opcodes, in groups of uneven sizes, with operands defined before,
    /// undefined, and of every stem, each compared with another.
    #[test]
    fn operand_matching_through_the_index_is_matching_by_looking_at_every_candidate() {
        use super::{match_items_looking, Look, Module};
        let mut next = crate::guard::draws(0x9e37_79b9_7f4a_7c15u64);
        let module = |next: &mut dyn FnMut(usize) -> usize| {
            let count = 1 + next(60);
            let pool = count + [3, 20, 100][next(3)];
            let mut defined = vec!["p".to_string(), "q".to_string()];
            let mut text = String::from("HloModule m\n\nENTRY main {\n");
            text += "  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n";
            while defined.len() < count + 2 {
                let name = format!("{}.{}", ["a", "b", "c"][next(3)], next(pool));
                if defined.contains(&name) {
                    continue;
                }
                let operands: Vec<String> = (0..1 + next(3))
                    .map(|_| match next(5) {
                        0 => format!("{}.{}", ["a", "b", "z"][next(3)], next(pool)),
                        _ => defined[next(defined.len())].clone(),
                    })
                    .collect();
                let opcode = ["add", "multiply"][next(2)];
                text += &format!("  {name} = f32[] {opcode}({})\n", operands.join(", "));
                defined.push(name);
            }
            text + "  ROOT r = f32[] add(p, q)\n}\n"
        };
        let mut operand_pairs = 0;
        for _ in 0..600 {
            let (old, new) = (module(&mut next), module(&mut next));
            let (old, new) = (held_module(&old), held_module(&new));
            let (om, nm) = (Module::new(&old), Module::new(&new));
            let (o, n) = (entry_items(&om), entry_items(&nm));
            let indexed = match_items_looking(&o, &n, true, Look::Indexed);
            let scanned = match_items_looking(&o, &n, true, Look::Scan);
            assert!(indexed.pairs().eq(scanned.pairs()));
            operand_pairs += indexed
                .pairs()
                .filter(|p| p.2 == super::How::Operands)
                .count();
        }
        assert!(
            operand_pairs > 300,
            "{operand_pairs} pairs matched by operands"
        );
    }

    /// Matching by operands asks a number of candidates linear in a group's size,
    /// however few of them fit: 12,000 renumbered `add`s of one stem (one more at the
    /// start of the new side), each of an earlier one and a parameter that all share,
    /// asked 2,313,094 candidates without the budget, some 190 an item, a number that
    /// grows with the square of the group's size (the parameter's list is the whole
    /// group, and most of it no longer fits once matched); with it, about a million at
    /// most.
    #[test]
    fn matching_by_operands_asks_a_budget_of_candidates() {
        use super::{match_items_looking, Look, Module, ScanBudget, ASKED};
        let count = 12_000;
        let module = |shift: usize| {
            let mut next = crate::guard::draws(0x5851_f42d_4c95_7f2du64);
            let mut text = String::from("HloModule m\n\nENTRY main {\n  p = f32[] parameter(0)\n");
            if shift > 0 {
                text += "  add.0 = f32[] add(p, p)\n";
            }
            for i in 0..count {
                let operand = match i {
                    0 => "p".to_string(),
                    _ => format!("add.{}", i - 1 - next(i.min(50)) + shift),
                };
                text += &format!("  add.{} = f32[] add({operand}, p)\n", i + shift);
            }
            text + "}\n"
        };
        let (old, new) = (held_module(&module(0)), held_module(&module(1)));
        let (om, nm) = (Module::new(&old), Module::new(&new));
        let (o, n) = (entry_items(&om), entry_items(&nm));
        ASKED.with(|asked| asked.set(0));
        let matching = match_items_looking(&o, &n, true, Look::Indexed);
        let asked = ASKED.with(|asked| asked.get());
        let items = o.len() + n.len();
        let budget = items * ScanBudget::PER_ITEM + (1 << 16);
        // The budget was spent (the group asks more than it), and no more than it and
        // a few a look-up after.
        assert!(asked > budget, "{asked} asks");
        assert!(
            asked <= budget + items * 8 * ScanBudget::LATE,
            "{asked} asks"
        );
        // Every item is matched once at most.
        let mut taken = vec![false; n.len()];
        for (_, j, _) in matching.pairs() {
            assert!(!std::mem::replace(&mut taken[j as usize], true));
        }
        assert!(matching.pairs().count() > count / 2);
    }

    /// The candidates of a group are indexed reading each one's operands' stems a
    /// number of times that grows as the group's size times its logarithm, not as its
    /// operands: 300 renumbered custom-calls of 300 operands each (90,000 operands)
    /// read 6,014 stems lists, where sorting each of the 90,000 index entries by its
    /// candidate's whole stems list read 186,014 (and 1,000 instructions of 2,000
    /// operands took 127 s, now 0.6 s). The pairs are those of looking at every
    /// candidate in turn.
    #[test]
    fn candidates_are_indexed_by_the_rank_of_their_stems() {
        use super::{match_items_looking, Look, Module, STEMS_READ};
        let (count, width) = (300, 300);
        let module = |shift: usize| {
            let mut next = crate::guard::draws(0x94d0_49bb_1331_11ebu64);
            let mut text = String::from("HloModule m\n\nENTRY main {\n");
            for k in 0..10 {
                text += &format!("  p{k} = f32[] parameter({k})\n");
            }
            if shift > 0 {
                text += "  cc.0 = f32[] custom-call(p0), custom_call_target=\"x\"\n";
            }
            for i in 0..count {
                let operands: Vec<String> = (0..width)
                    .map(|_| match next(8) {
                        0 if i > 0 => format!("cc.{}", next(i) + shift),
                        _ => format!("p{}", next(10)),
                    })
                    .collect();
                let operands = operands.join(", ");
                text += &format!(
                    "  cc.{} = f32[] custom-call({operands}), custom_call_target=\"x\"\n",
                    i + shift
                );
            }
            text + "}\n"
        };
        let (old, new) = (held_module(&module(0)), held_module(&module(1)));
        let (om, nm) = (Module::new(&old), Module::new(&new));
        let (o, n) = (entry_items(&om), entry_items(&nm));
        STEMS_READ.with(|read| read.set(0));
        let indexed = match_items_looking(&o, &n, true, Look::Indexed);
        let read = STEMS_READ.with(|read| read.get());
        assert!(read < 10 * count * 9, "{read} stems lists read");
        let scanned = match_items_looking(&o, &n, true, Look::Scan);
        assert!(indexed.pairs().eq(scanned.pairs()));
        assert!(indexed.pairs().count() >= count);
    }

    /// Two tuples compared an element at a time from their texts give the aspects of
    /// the whole comparison of their shapes, in order: random tuples of shapes that
    /// nest, with elements changed, added and removed (each printed as a listing
    /// prints it, `/*index=N*/` comments included).
    #[test]
    fn tuples_compared_an_element_at_a_time_agree_with_the_whole() {
        let shapes = [
            "f32[8,128]{1,0:T(8,128)}",
            "f32[8,128]{0,1}",
            "bf16[2,3]{1,0}",
            "s32[]",
            "pred[4]{0}",
            "token[]",
            "(f32[2]{0}, s32[3]{0})",
            "((f32[1]{0}, pred[]), u8[4]{0:T(2)})",
            "()",
            "f32[<=4,?]{1,0}",
            "b(f32[2]{0})",
        ];
        let mut next = crate::guard::draws(0x2545_f491_4f6c_dd1du64);
        for _ in 0..400 {
            let length = 1 + next(12);
            let old: Vec<&str> = (0..length).map(|_| shapes[next(shapes.len())]).collect();
            let mut new = old.clone();
            for _ in 0..next(4) {
                let k = next(new.len() + 1);
                match next(3) {
                    0 if k < new.len() => new[k] = shapes[next(shapes.len())],
                    1 => new.insert(k.min(new.len()), shapes[next(shapes.len())]),
                    _ if !new.is_empty() => {
                        new.remove(k.min(new.len() - 1));
                    }
                    _ => {}
                }
            }
            let text = |elements: &[&str]| {
                let tuple = crate::text::parse_shape(&format!("({})", elements.join(", ")));
                let tuple = tuple.expect("parses");
                crate::text::print_shape_as_xla(&tuple).expect("prints")
            };
            let (old, new) = (text(&old), text(&new));
            let read = |t: &str| super::super::listing::read_back(t).expect("reads back");
            let mut whole = super::Aspects::new(&[]);
            super::compare(&read(&old), &read(&new), &mut Vec::new(), &mut whole);
            let whole = whole.finish();
            let words = |aspects: &[super::Aspect]| {
                aspects
                    .iter()
                    .map(|a| format!("{:?} {}", a.kind, a.words))
                    .collect::<Vec<_>>()
            };
            // Each side as its text, or as its bytes (a binary tuple kept as them).
            let (old_bytes, new_bytes) = (
                crate::codec::encode(&read(&old)),
                crate::codec::encode(&read(&new)),
            );
            use super::TupleSide::{Encoded, Text};
            for (o, n) in [
                (Text(&old), Text(&new)),
                (Encoded(&old_bytes), Encoded(&new_bytes)),
                (Encoded(&old_bytes), Text(&new)),
                (Text(&old), Encoded(&new_bytes)),
            ] {
                let mut each = super::Aspects::new(&[]);
                super::compare_long_tuples(o, n, &mut Vec::new(), &mut each)
                    .expect("every element reads back");
                let each = each.finish();
                assert_eq!(words(&each), words(&whole), "{old} -> {new} ({o:?})");
            }
        }
    }
}
