//! Layout policies: constraints a team sets beyond XLA's validity, in a small TOML
//! file (`validate --policy FILE`; `examples/policy.toml` is a commented example).
//!
//! ```toml
//! [entry]                          # the entry computation layout's parameters and result
//! layout = "default"               # every array in XLA's default minor_to_major (n-1, ..., 0)
//! max_total_bytes = 8589934592     # the entry parameters together (allocated bytes)
//!
//! [all]                            # every shape of the input
//! deny_element_types = ["f64", "c128"]
//! max_array_bytes = 1073741824     # allocated bytes of one array, tiling and padding included
//! memory_spaces = [0, 1]           # allowed S(n)
//!
//! [computations."fused_*"]         # shapes in computations whose names match the glob
//! allow_element_types = ["bf16", "f32", "s32", "pred"]
//! require_tiling = ["bf16"]        # arrays of these types must have tiles
//! dynamic_dimensions = false       # no dynamic dimension
//! ```
//!
//! Every rule may stand in every table, except `layout` and `max_total_bytes`, which
//! are about the entry computation layout and stand only in `[entry]`. An unknown key,
//! a value of the wrong type, an unknown element type or a bad glob is an error naming
//! it. Each violation is a [`Finding`] with code `policy.<rule>` and severity error, at
//! the shape's place (line and column in text, proto path in a proto, computation and
//! instruction). Arrays inside tuples are checked one by one. Layout rules
//! (`layout`, `memory_spaces`, `require_tiling`) skip shapes written without a layout,
//! as XLA writes computation signatures in text. A program shape given alone counts as
//! an entry computation layout.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::listing::{allocated_bytes, Entry, Listing};
use crate::error::{Severity, Shown};
use crate::primitive::PrimitiveType;
use crate::report::{repeated_text, Finding, Findings};
use crate::shape::Shape;
use crate::text::module::Role;

/// `[entry] layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryLayout {
    /// XLA's default layout: `minor_to_major` = `n-1, ..., 1, 0` (dimension 0 major).
    Default,
    /// Any layout (the same as leaving the key out).
    Any,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    entry: Option<TableFile>,
    all: Option<TableFile>,
    #[serde(default)]
    computations: BTreeMap<String, TableFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    layout: Option<EntryLayout>,
    max_total_bytes: Option<u64>,
    deny_element_types: Option<Vec<String>>,
    allow_element_types: Option<Vec<String>>,
    max_array_bytes: Option<u64>,
    memory_spaces: Option<Vec<i64>>,
    require_tiling: Option<Vec<String>>,
    dynamic_dimensions: Option<bool>,
}

/// The rules of one table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// `deny_element_types`.
    pub deny_element_types: Vec<PrimitiveType>,
    /// `allow_element_types` (`None`: every type).
    pub allow_element_types: Option<Vec<PrimitiveType>>,
    /// `max_array_bytes`.
    pub max_array_bytes: Option<u64>,
    /// `memory_spaces` (`None`: every memory space).
    pub memory_spaces: Option<Vec<i64>>,
    /// `require_tiling`.
    pub require_tiling: Vec<PrimitiveType>,
    /// `dynamic_dimensions` (`Some(false)`: no dynamic dimension allowed).
    pub dynamic_dimensions: Option<bool>,
}

impl Rules {
    /// Whether no rule is set.
    fn sets_nothing(&self) -> bool {
        self.deny_element_types.is_empty()
            && self.allow_element_types.is_none()
            && self.max_array_bytes.is_none()
            && self.memory_spaces.is_none()
            && self.require_tiling.is_empty()
            && self.dynamic_dimensions.is_none()
    }
}

/// A parsed, checked policy.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// `[entry] layout`.
    pub entry_layout: Option<EntryLayout>,
    /// `[entry] max_total_bytes`.
    pub max_total_bytes: Option<u64>,
    /// The other rules of `[entry]`.
    pub entry: Rules,
    /// `[all]`.
    pub all: Rules,
    /// `[computations."GLOB"]`, in the order of their globs.
    pub computations: Vec<(String, globset::GlobMatcher, Rules)>,
}

/// The most bytes a policy's text may have: a policy is written by hand (the example
/// is 2 KB; a thousand computation tables take some 100 KB), and the `toml` crate's
/// table of a file of many small tables takes up to forty times its size.
pub const MAX_POLICY_BYTES: usize = 256 << 10;

/// How deep `{...}` alternations may nest in a computation glob: globset turns each level
/// into groups of a regex, whose parser allows 250, and panics when building the matcher
/// of a glob past that ("regex compilation shouldn't fail": 500 levels exited 101).
pub const MAX_GLOB_NESTING: usize = 32;

/// The matcher of a computation glob, or why there is none: a bad glob, one that nests
/// `{` deeper than [`MAX_GLOB_NESTING`], or one whose regex cannot be built (too large).
fn matcher(pattern: &str) -> Result<globset::GlobMatcher, String> {
    let mut depth = 0usize;
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => {
                depth += 1;
                if depth > MAX_GLOB_NESTING {
                    return Err(format!(
                        "bad glob: alternations nest more than {MAX_GLOB_NESTING} deep"
                    ));
                }
            }
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let glob = globset::Glob::new(pattern).map_err(|e| format!("bad glob: {e}"))?;
    // A set of the glob builds its regex as the matcher does, but says when it cannot
    // (the matcher panics).
    globset::GlobSetBuilder::new()
        .add(glob.clone())
        .build()
        .map_err(|e| format!("bad glob: {e}"))?;
    Ok(glob.compile_matcher())
}

/// The most `[computations."GLOB"]` tables a policy may have: each glob is compiled to
/// a matcher of its own, some 7 KB, and every shape's computation is matched against
/// each.
pub const MAX_COMPUTATION_GLOBS: usize = 1024;

/// A policy that cannot be used: what is wrong, naming the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

fn types(
    table: &str,
    key: &str,
    names: Option<Vec<String>>,
) -> Result<Option<Vec<PrimitiveType>>, PolicyError> {
    names
        .map(|names| {
            names
                .iter()
                .map(|name| {
                    PrimitiveType::from_name(name)
                        .filter(|t| t.is_array())
                        .ok_or_else(|| {
                            PolicyError(format!(
                                "{table} {key}: {} is not an array element type (f32, bf16, s8, pred, ...)",
                                Shown::single(name)
                            ))
                        })
                })
                .collect()
        })
        .transpose()
}

fn rules(table: &str, file: TableFile, entry: bool) -> Result<Rules, PolicyError> {
    if !entry {
        for (key, set) in [
            ("layout", file.layout.is_some()),
            ("max_total_bytes", file.max_total_bytes.is_some()),
        ] {
            if set {
                return Err(PolicyError(format!(
                    "{table} {key}: this key is about the entry computation layout and stands only in [entry]"
                )));
            }
        }
    }
    Ok(Rules {
        deny_element_types: types(table, "deny_element_types", file.deny_element_types)?
            .unwrap_or_default(),
        allow_element_types: types(table, "allow_element_types", file.allow_element_types)?,
        max_array_bytes: file.max_array_bytes,
        memory_spaces: file.memory_spaces,
        require_tiling: types(table, "require_tiling", file.require_tiling)?.unwrap_or_default(),
        dynamic_dimensions: file.dynamic_dimensions,
    })
}

fn too_large() -> PolicyError {
    PolicyError(format!(
        "more than {MAX_POLICY_BYTES} bytes: a policy file holds at most 256 KiB"
    ))
}

impl Policy {
    /// Parses a policy from TOML text.
    ///
    /// # Errors
    /// An unknown key, a value of the wrong type, an unknown element type or a bad glob,
    /// in words naming it; a text of more than [`MAX_POLICY_BYTES`], or more than
    /// [`MAX_COMPUTATION_GLOBS`] computation tables.
    pub fn from_toml(text: &str) -> Result<Self, PolicyError> {
        if text.len() > MAX_POLICY_BYTES {
            return Err(too_large());
        }
        let file: PolicyFile = toml::from_str(text).map_err(|e| {
            // A key or line of the file is cut in the message when long (the file
            // may hold one line of 256 KiB); the parser's own words, which name the
            // keys a table takes, are cut only past 1 KiB.
            let message = match e.message() {
                long if long.len() > 1024 => Shown::plain(long).to_string(),
                message => message.to_string(),
            };
            match e.span() {
                Some(span) => {
                    let start = span.start.min(text.len());
                    let line = text[..start].matches('\n').count() + 1;
                    let whole = Shown::plain(text.lines().nth(line - 1).unwrap_or("").trim());
                    PolicyError(format!("line {line}: {message} (in `{whole}`)"))
                }
                None => PolicyError(message),
            }
        })?;
        let mut policy = Policy::default();
        if let Some(entry) = file.entry {
            policy.entry_layout = entry.layout;
            policy.max_total_bytes = entry.max_total_bytes;
            policy.entry = rules("[entry]", entry, true)?;
        }
        if let Some(all) = file.all {
            policy.all = rules("[all]", all, false)?;
        }
        if file.computations.len() > MAX_COMPUTATION_GLOBS {
            return Err(PolicyError(format!(
                "[computations]: {} tables; a policy has at most {MAX_COMPUTATION_GLOBS}",
                file.computations.len()
            )));
        }
        for (pattern, table) in file.computations {
            let name = format!("[computations.\"{}\"]", Shown::plain(&pattern));
            let glob = matcher(&pattern).map_err(|e| PolicyError(format!("{name}: {e}")))?;
            let rules = rules(&name, table, false)?;
            policy.computations.push((pattern, glob, rules));
        }
        if policy.sets_nothing() {
            // An empty file, or tables without a key: a gate that checks nothing would
            // pass every input (a policy path that names the wrong file, say).
            return Err(PolicyError(
                "the policy sets no rule: give at least one key in [entry], [all] or \
                 [computations.\"GLOB\"] (see examples/policy.toml)"
                    .to_string(),
            ));
        }
        Ok(policy)
    }

    /// Whether no table of the policy sets any rule.
    fn sets_nothing(&self) -> bool {
        self.entry_layout.is_none()
            && self.max_total_bytes.is_none()
            && self.entry.sets_nothing()
            && self.all.sets_nothing()
            && self
                .computations
                .iter()
                .all(|(_, _, rules)| rules.sets_nothing())
    }

    /// Reads and parses a policy file.
    ///
    /// # Errors
    /// The file cannot be read, or [`Policy::from_toml`] fails; the message starts with
    /// the file's name.
    pub fn load(path: &std::path::Path) -> Result<Self, PolicyError> {
        use std::io::Read;
        let failed = |e: std::io::Error| PolicyError(format!("{}: {e}", path.display()));
        // Read to one byte past the limit, so that a huge file is not read whole (as
        // bytes: the limit may fall inside a character, and the file is too large then,
        // whatever it holds).
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(failed)?
            .take(MAX_POLICY_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        let named = |e: PolicyError| PolicyError(format!("{}: {}", path.display(), e.0));
        if bytes.len() > MAX_POLICY_BYTES {
            return Err(named(too_large()));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            failed(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ))
        })?;
        Self::from_toml(&text).map_err(named)
    }

    /// Every violation in a listing, in the order of its shapes.
    pub fn check(&self, listing: &Listing) -> Findings {
        let mut check = self.checker();
        for entry in &listing.entries {
            check.entry(entry);
        }
        check.finish()
    }

    /// A check of one listing's shapes handed on one at a time ([`PolicyCheck::entry`]),
    /// as a listing is streamed: the findings of [`Policy::check`].
    pub fn checker(&self) -> PolicyCheck<'_> {
        PolicyCheck {
            policy: self,
            findings: Findings::new(),
            total: 0,
            total_known: true,
            first_parameter: None,
        }
    }
}

/// A policy check of one listing, a shape at a time ([`Policy::checker`]).
#[derive(Debug)]
pub struct PolicyCheck<'p> {
    policy: &'p Policy,
    findings: Findings,
    /// The entry parameters' allocated bytes so far, and whether each was known.
    total: u64,
    total_known: bool,
    /// Where the first entry parameter stands: its line, column and proto path.
    first_parameter: Option<(Option<usize>, Option<usize>, Option<String>)>,
}

impl PolicyCheck<'_> {
    /// Checks the next shape of the listing. A tuple kept as its long text (or as the
    /// bytes of a long binary tuple) is read a shape at a time (twice: once to know it
    /// valid and its size, once to check its arrays), and its findings carry their
    /// array's own text.
    pub fn entry(&mut self, entry: &Entry) {
        let long = entry.is_long_tuple_text();
        // A long binary tuple kept as its bytes, read a shape at a time when no tuple
        // in it has fields of its own.
        let encoded = entry
            .encoded()
            .and_then(|bytes| Some((bytes, super::listing::long_encoded_size(bytes)?)));
        let (valid, bytes) = if long {
            match super::listing::long_tuple_size(&entry.text) {
                Some(bytes) => (None, bytes),
                None => return,
            }
        } else if let Some((_, size)) = encoded {
            match size {
                Some(bytes) => (None, bytes),
                None => return,
            }
        } else {
            match entry.validated() {
                Some(shape) => {
                    let bytes = allocated_bytes(&shape);
                    (Some(shape), bytes)
                }
                None => return,
            }
        };
        let policy = self.policy;
        let is_entry = matches!(entry.role, Role::EntryParameter { .. } | Role::EntryResult);
        let mut scopes: Vec<(String, &Rules)> = vec![("[all]".to_string(), &policy.all)];
        if is_entry {
            scopes.push(("[entry]".to_string(), &policy.entry));
        }
        if let Some(computation) = entry.computation.as_deref() {
            for (pattern, glob, rules) in &policy.computations {
                if glob.is_match(computation) {
                    scopes.push((format!("[computations.\"{pattern}\"]"), rules));
                }
            }
        }
        if matches!(entry.role, Role::EntryParameter { .. }) {
            self.first_parameter
                .get_or_insert_with(|| (entry.line, entry.column, entry.path.clone()));
            match bytes {
                Some(bytes) => self.total = self.total.saturating_add(bytes),
                None => self.total_known = false,
            }
        }
        let findings = &mut self.findings;
        // The entry's findings so far: its names come with the first (see `finding`).
        let first = findings.len();
        let mut check = |index: &[usize], array: &crate::ArrayShape, text: Option<String>| {
            // The codes already reported for this array (each array of the entry is
            // checked once: a set of every array's, kept for the whole entry, took
            // 130 bytes an array of a long tuple).
            let mut seen: Vec<&'static str> = Vec::new();
            let mut report = |code: &'static str, message: String| {
                if !seen.contains(&code) {
                    seen.push(code);
                    let nth = findings.len() - first;
                    let found = finding(entry, index, text.as_deref(), code, message, nth);
                    findings.push(found);
                }
            };
            if is_entry && policy.entry_layout == Some(EntryLayout::Default) {
                if let Some(layout) = array.layout() {
                    let rank = array.number_of_dimensions();
                    let default: Vec<usize> = (0..rank).rev().collect();
                    if layout.minor_to_major() != default.as_slice() {
                        report(
                            "policy.entry_layout",
                            format!(
                                "minor_to_major {{{}}} is not the default layout {{{}}} the policy requires ([entry] layout = \"default\")",
                                join(layout.minor_to_major()),
                                join(&default)
                            ),
                        );
                    }
                }
            }
            for (table, rules) in &scopes {
                check_array(table, rules, array, &mut report);
            }
        };
        match valid {
            Some(shape) => {
                let mut leaves = Vec::new();
                arrays(&shape, &mut Vec::new(), &mut leaves);
                for (index, array) in leaves {
                    check(&index, array, None);
                }
            }
            None => match encoded {
                Some((bytes, _)) => {
                    super::listing::for_each_long_encoded_array(bytes, &mut |index, array, text| {
                        check(index, array, Some(text))
                    })
                }
                None => super::listing::for_each_long_tuple_array(
                    &entry.text,
                    &mut |index, array, text| check(index, array, Some(text)),
                ),
            },
        }
    }

    /// The findings, with the entry parameters' total last.
    pub fn finish(mut self) -> Findings {
        if let (Some(max), Some((line, column, path))) =
            (self.policy.max_total_bytes, self.first_parameter)
        {
            if self.total_known && self.total > max {
                let total = self.total;
                let mut f = Finding::new(
                    "policy.max_total_bytes",
                    Severity::Error,
                    format!(
                        "the entry parameters allocate {total} bytes in all, above the policy's {max} ([entry] max_total_bytes)"
                    ),
                );
                f.line = line;
                f.column = column;
                f.path = path.unwrap_or_default();
                self.findings.push(f);
            }
        }
        self.findings
    }
}

fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A finding about the array at `index` of `entry`, with `shape` for its text (the
/// entry's own when `None`), the entry's `nth` (from 0): the entry's text and names as
/// [`repeated_text`] gives them (each finding of a long tuple's arrays carried the
/// tuple's text and a long name whole).
fn finding(
    entry: &Entry,
    index: &[usize],
    shape: Option<&str>,
    code: &'static str,
    message: String,
    nth: usize,
) -> Finding {
    let message = match entry.role {
        Role::EntryParameter { index } => format!("entry parameter {index}: {message}"),
        Role::EntryResult => format!("entry result: {message}"),
        _ => message,
    };
    let mut f = Finding::new(code, Severity::Error, message);
    f.line = entry.line;
    f.column = entry.column.or(entry.line.map(|_| 1));
    let tuple: String = index
        .iter()
        .map(|i| format!(".tuple_shapes[{i}]"))
        .collect();
    f.path = match &entry.path {
        Some(path) => format!("{path}{tuple}"),
        None => tuple.trim_start_matches('.').to_string(),
    };
    f.computation = repeated_text(entry.computation.as_deref(), nth);
    f.instruction = repeated_text(entry.instruction.as_deref(), nth);
    f.shape = match shape {
        Some(shape) => Some(shape.to_string()),
        None => repeated_text(Some(&entry.text), nth),
    };
    f
}

/// The arrays of a shape, with their tuple index.
fn arrays<'s>(
    shape: &'s Shape,
    index: &mut Vec<usize>,
    out: &mut Vec<(Vec<usize>, &'s crate::ArrayShape)>,
) {
    match shape {
        Shape::Array(array) | Shape::Buffer(array) => out.push((index.clone(), array)),
        Shape::Tuple(elements) => {
            for (k, element) in elements.iter().enumerate() {
                index.push(k);
                arrays(element, index, out);
                index.pop();
            }
        }
        Shape::Token | Shape::Opaque => {}
    }
}

fn check_array(
    table: &str,
    rules: &Rules,
    array: &crate::ArrayShape,
    report: &mut dyn FnMut(&'static str, String),
) {
    let element_type = array.element_type();
    let name = element_type.name();
    if rules.deny_element_types.contains(&element_type) {
        report(
            "policy.deny_element_types",
            format!("element type {name} is denied by the policy ({table} deny_element_types)"),
        );
    }
    if let Some(allowed) = &rules.allow_element_types {
        if !allowed.contains(&element_type) {
            report(
                "policy.allow_element_types",
                format!("element type {name} is not allowed by the policy ({table} allow_element_types)"),
            );
        }
    }
    if let Some(max) = rules.max_array_bytes {
        if let Ok(bytes) = crate::LayoutPlan::allocated_bytes_of(array) {
            if bytes > max {
                report(
                    "policy.max_array_bytes",
                    format!("the array allocates {bytes} bytes, above the policy's {max} ({table} max_array_bytes)"),
                );
            }
        }
    }
    if rules.dynamic_dimensions == Some(false) && array.is_dynamic() {
        report(
            "policy.dynamic_dimensions",
            format!("the array has dynamic dimensions, which the policy forbids ({table} dynamic_dimensions = false)"),
        );
    }
    let Some(layout) = array.layout() else { return };
    if let Some(spaces) = &rules.memory_spaces {
        if !spaces.contains(&layout.memory_space()) {
            report(
                "policy.memory_spaces",
                format!(
                    "memory space S({}) is not one the policy allows ({table} memory_spaces = {spaces:?})",
                    layout.memory_space()
                ),
            );
        }
    }
    if rules.require_tiling.contains(&element_type) && layout.tiles().is_empty() {
        report(
            "policy.require_tiling",
            format!(
                "a {name} array without tiles, which the policy requires ({table} require_tiling)"
            ),
        );
    }
}
