//! The findings of one input, in memory up to a bound and in a temporary file beyond.
//!
//! An input can hold millions of invalid shapes (a file of bad lines, a tuple of a
//! million bad elements), and each finding is a few hundred bytes with its strings.
//! [`Findings`] keeps the first [`HELD`] in memory, as a list, and writes the rest,
//! in a compact binary form, to an anonymous temporary file that the system deletes
//! when it is dropped. Reading them back ([`Findings::try_for_each`]) gives the same
//! findings in the same order, so a report of any size costs a fixed amount of memory
//! and is written a finding at a time.

use std::fmt;
use std::io::{self, Read};

use super::Finding;
use crate::error::Severity;

/// How many findings are kept in memory before the rest go to a temporary file.
pub const HELD: usize = 1024;

/// The findings of one input, in order, with their counts by severity.
///
/// Behaves as a list that can only grow at its end (or be filtered into a new one):
/// [`push`](Findings::push), [`append`](Findings::append), [`len`](Findings::len),
/// [`try_for_each`](Findings::try_for_each) and [`to_vec`](Findings::to_vec).
#[derive(Default)]
pub struct Findings {
    held: Vec<Finding>,
    spill: Option<Box<Spill>>,
    errors: usize,
    warnings: usize,
    /// Why some findings could not be read back from another list's temporary file
    /// when they were copied here: reading these fails at their end with it, so that
    /// a loss is never silent.
    lost: Option<String>,
}

/// The findings past the first [`HELD`], as records of a temporary file.
struct Spill {
    records: crate::spool::Records,
    /// The codes seen, each written as its index here (codes are `'static`).
    codes: Vec<&'static str>,
}

impl Findings {
    /// No findings.
    pub fn new() -> Self {
        Findings::default()
    }

    /// How many findings there are.
    pub fn len(&self) -> usize {
        self.held.len() + self.spill.as_ref().map_or(0, |s| s.records.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many are errors.
    pub fn errors(&self) -> usize {
        self.errors
    }

    /// How many are warnings.
    pub fn warnings(&self) -> usize {
        self.warnings
    }

    /// Whether some findings are in the temporary file.
    pub fn spilled(&self) -> bool {
        self.spill.is_some()
    }

    /// The findings held in memory: all of them unless [`spilled`](Findings::spilled).
    pub fn held(&self) -> &[Finding] {
        &self.held
    }

    /// Adds a finding at the end.
    pub fn push(&mut self, finding: Finding) {
        match finding.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.spill.is_none() && self.held.len() < HELD {
            self.held.push(finding);
            return;
        }
        if self.spill.is_none() {
            match crate::spool::Records::new() {
                Ok(records) => {
                    self.spill = Some(Box::new(Spill {
                        records,
                        codes: Vec::new(),
                    }));
                }
                // No temporary file: the findings stay in memory.
                Err(_) => {
                    self.held.push(finding);
                    return;
                }
            }
        }
        if let Some(spill) = &mut self.spill {
            if let Err(finding) = spill.push(finding) {
                // The file could not be written: what was written stays readable, and
                // this finding and those after it are kept in memory instead.
                self.unspill_into_memory(*finding);
            }
        }
    }

    /// Reads the spilled findings back into memory after a write to the file failed,
    /// then adds `finding`: nothing is lost, only the bound on memory.
    fn unspill_into_memory(&mut self, finding: Finding) {
        if let Some(spill) = self.spill.take() {
            // A file that cannot be read back either gives what could be read.
            let _ = spill.try_for_each(|f| {
                self.held.push(f);
                Ok(())
            });
        }
        self.held.push(finding);
    }

    /// Adds every finding of `other` at the end, in its order. Should `other`'s
    /// temporary file not read back, reading these fails at their end.
    pub fn append(&mut self, other: Findings) {
        let Findings {
            held, spill, lost, ..
        } = other;
        for finding in held {
            self.push(finding);
        }
        if let Some(spill) = spill {
            let read = spill.try_for_each(|f| {
                self.push(f);
                Ok(())
            });
            if let Err(e) = read {
                self.lose(e.to_string());
            }
        }
        if let Some(lost) = lost {
            self.lose(lost);
        }
    }

    fn lose(&mut self, why: String) {
        self.lost.get_or_insert(why);
    }

    /// Calls `each` on every finding, in order, until it fails.
    ///
    /// # Errors
    /// The first error of `each`, or of reading the temporary file back (made into
    /// `E` by `io_error`).
    pub fn try_for_each<E>(
        &self,
        io_error: impl Fn(io::Error) -> E,
        mut each: impl FnMut(&Finding) -> Result<(), E>,
    ) -> Result<(), E> {
        for finding in &self.held {
            each(finding)?;
        }
        let lost = || {
            let why = self.lost.as_deref().unwrap_or_default();
            io_error(io::Error::other(format!(
                "some findings could not be read back from their temporary file: {why}"
            )))
        };
        let Some(spill) = &self.spill else {
            return match self.lost {
                Some(_) => Err(lost()),
                None => Ok(()),
            };
        };
        let mut failed = None;
        let read = spill.try_for_each(|f| match each(&f) {
            Ok(()) => Ok(()),
            Err(e) => {
                failed = Some(e);
                Err(io::Error::other("stopped"))
            }
        });
        match (failed, read) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(io_error(e)),
            (None, Ok(())) if self.lost.is_some() => Err(lost()),
            (None, Ok(())) => Ok(()),
        }
    }

    /// Every finding, in order, in memory.
    ///
    /// # Errors
    /// When the temporary file cannot be read back.
    pub fn to_vec(&self) -> io::Result<Vec<Finding>> {
        let mut all = Vec::with_capacity(self.len().min(HELD * 4));
        self.try_for_each(
            |e| e,
            |f| {
                all.push(f.clone());
                Ok(())
            },
        )?;
        Ok(all)
    }

    /// The findings for which `keep` is true, in order. Should the temporary file
    /// not read back, reading the result fails at its end.
    pub fn filtered(&self, mut keep: impl FnMut(&Finding) -> bool) -> Findings {
        let mut kept = Findings::new();
        let read = self.try_for_each(
            |e| e,
            |f| {
                if keep(f) {
                    kept.push(f.clone());
                }
                Ok(())
            },
        );
        if let Err(e) = read {
            kept.lose(e.to_string());
        }
        kept
    }
}

impl Spill {
    /// Encodes `finding` as a record; the finding back when the file cannot be written.
    fn push(&mut self, finding: Finding) -> Result<(), Box<Finding>> {
        let code = match self.codes.iter().position(|c| *c == finding.code) {
            Some(i) => i,
            None => {
                self.codes.push(finding.code);
                self.codes.len() - 1
            }
        };
        match self.records.push(|out| encode(out, code, &finding)) {
            Ok(()) => Ok(()),
            Err(_) => Err(Box::new(finding)),
        }
    }

    /// Decodes every finding, in order.
    fn try_for_each(&self, mut each: impl FnMut(Finding) -> io::Result<()>) -> io::Result<()> {
        self.records
            .try_for_each(|mut record| each(decode(&mut record, &self.codes)?))
    }
}

const LINE: u8 = 1;
const COLUMN: u8 = 2;
const INSTRUCTION: u8 = 4;
const COMPUTATION: u8 = 8;
const SHAPE: u8 = 16;
const WARNING: u8 = 32;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// One finding: its code's index, a byte of flags (which optional parts follow, and
/// the severity), then the line and column as varints and the strings, each its
/// length and its bytes.
fn encode(out: &mut Vec<u8>, code: usize, f: &Finding) {
    put_varint(out, code as u64);
    let flags = [
        (f.line.is_some(), LINE),
        (f.column.is_some(), COLUMN),
        (f.instruction.is_some(), INSTRUCTION),
        (f.computation.is_some(), COMPUTATION),
        (f.shape.is_some(), SHAPE),
        (f.severity == Severity::Warning, WARNING),
    ]
    .into_iter()
    .filter(|(set, _)| *set)
    .fold(0, |flags, (_, bit)| flags | bit);
    out.push(flags);
    for n in [f.line, f.column].into_iter().flatten() {
        put_varint(out, n as u64);
    }
    put_str(out, &f.message);
    put_str(out, &f.path);
    for text in [&f.instruction, &f.computation, &f.shape]
        .into_iter()
        .flatten()
    {
        put_str(out, text);
    }
}

fn corrupt() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the temporary file of findings does not read back",
    )
}

fn get_varint(input: &mut impl Read) -> io::Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0u8];
        input.read_exact(&mut byte)?;
        value |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] < 0x80 {
            return Ok(value);
        }
    }
    Err(corrupt())
}

fn get_usize(input: &mut impl Read) -> io::Result<usize> {
    usize::try_from(get_varint(input)?).map_err(|_| corrupt())
}

fn get_str(input: &mut impl Read) -> io::Result<String> {
    let len = get_usize(input)?;
    let mut bytes = Vec::new();
    input.take(len as u64).read_to_end(&mut bytes)?;
    if bytes.len() != len {
        return Err(corrupt());
    }
    String::from_utf8(bytes).map_err(|_| corrupt())
}

fn decode(input: &mut impl Read, codes: &[&'static str]) -> io::Result<Finding> {
    let code = *codes.get(get_usize(input)?).ok_or_else(corrupt)?;
    let mut flags = [0u8];
    input.read_exact(&mut flags)?;
    let flags = flags[0];
    let line = if flags & LINE != 0 {
        Some(get_usize(input)?)
    } else {
        None
    };
    let column = if flags & COLUMN != 0 {
        Some(get_usize(input)?)
    } else {
        None
    };
    let severity = if flags & WARNING != 0 {
        Severity::Warning
    } else {
        Severity::Error
    };
    let message = get_str(input)?;
    let path = get_str(input)?;
    let mut optional = |bit: u8| -> io::Result<Option<String>> {
        if flags & bit != 0 {
            get_str(input).map(Some)
        } else {
            Ok(None)
        }
    };
    let instruction = optional(INSTRUCTION)?;
    let computation = optional(COMPUTATION)?;
    let shape = optional(SHAPE)?;
    Ok(Finding {
        code,
        severity,
        message,
        path,
        line,
        column,
        instruction,
        computation,
        shape,
    })
}

impl From<Vec<Finding>> for Findings {
    fn from(findings: Vec<Finding>) -> Self {
        findings.into_iter().collect()
    }
}

impl FromIterator<Finding> for Findings {
    fn from_iter<I: IntoIterator<Item = Finding>>(iter: I) -> Self {
        let mut findings = Findings::new();
        findings.extend(iter);
        findings
    }
}

impl Extend<Finding> for Findings {
    fn extend<I: IntoIterator<Item = Finding>>(&mut self, iter: I) {
        for finding in iter {
            self.push(finding);
        }
    }
}

impl Clone for Findings {
    /// A copy; spilled findings are copied into a temporary file of the copy's own
    /// (should they not read back, reading the copy fails at its end).
    fn clone(&self) -> Self {
        self.filtered(|_| true)
    }
}

impl PartialEq for Findings {
    /// The same findings in the same order (false when either cannot be read back).
    fn eq(&self, other: &Self) -> bool {
        if self.len() != other.len() {
            return false;
        }
        match (self.to_vec(), other.to_vec()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Findings {}

impl fmt::Debug for Findings {
    /// The list when it is all in memory; its counts otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.spill.is_none() {
            f.debug_list().entries(&self.held).finish()
        } else {
            f.debug_struct("Findings")
                .field("len", &self.len())
                .field("errors", &self.errors)
                .field("warnings", &self.warnings)
                .field("held", &self.held.len())
                .finish()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(i: usize) -> Finding {
        let mut f = Finding::new(
            if i % 3 == 0 {
                "duplicate_dimension"
            } else {
                "unknown_field"
            },
            if i % 5 == 0 {
                Severity::Warning
            } else {
                Severity::Error
            },
            format!("message {i} é"),
        );
        f.path = format!("tuple_shapes[{i}]");
        if i % 2 == 0 {
            f = f.at(i + 1, 7);
        }
        if i % 7 == 0 {
            f.instruction = Some(format!("add.{i}"));
            f.computation = Some(String::new());
        }
        if i % 4 == 1 {
            f.shape = Some("f32[2]{0}".into());
        }
        f
    }

    #[test]
    fn findings_past_the_bound_read_back_the_same_in_order() {
        let all: Vec<Finding> = (0..HELD * 3 + 17).map(finding).collect();
        let findings: Findings = all.clone().into();
        assert!(findings.spilled());
        assert_eq!(findings.held().len(), HELD);
        assert_eq!(findings.len(), all.len());
        assert_eq!(findings.to_vec().unwrap(), all);
        // Read twice: the file is read from its start each time.
        assert_eq!(findings.to_vec().unwrap(), all);
        let warnings = all
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        assert_eq!(findings.warnings(), warnings);
        assert_eq!(findings.errors(), all.len() - warnings);
    }

    #[test]
    fn appending_and_filtering_keep_the_order() {
        let mut first: Findings = (0..HELD + 5).map(finding).collect();
        let second: Findings = (HELD + 5..HELD * 2 + 600).map(finding).collect();
        first.append(second);
        let all: Vec<Finding> = (0..HELD * 2 + 600).map(finding).collect();
        assert_eq!(first.to_vec().unwrap(), all);
        let kept = first.filtered(|f| f.code != "unknown_field");
        let expected: Vec<Finding> = all
            .into_iter()
            .filter(|f| f.code != "unknown_field")
            .collect();
        assert_eq!(kept.to_vec().unwrap(), expected);
        assert_eq!(kept.clone(), kept);
    }

    #[test]
    fn a_failing_callback_stops_the_walk_with_its_error() {
        let findings: Findings = (0..HELD + 100).map(finding).collect();
        let mut seen = 0;
        let result = findings.try_for_each(
            |_| "io",
            |_| {
                seen += 1;
                if seen == HELD + 10 {
                    Err("stop")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(result, Err("stop"));
        assert_eq!(seen, HELD + 10);
    }
}
