//! A listing held for comparison ([`super::diff`]): each distinct name and shape text
//! stored once, end to end, and the entries and instructions as small indices into
//! them. Held as [`Listing`]s, two modules of a million instructions took 3.7 GB
//! (twenty times their text); held thus, 452 MB (two and a half times).

use std::collections::HashSet;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::listing::{Back, Entry, Instruction, Item, Kind, Listing, ReadError};
use crate::spool::Table;
use crate::text::module::{Names, Role};

/// The index that stands for no value.
pub(crate) const NONE: u32 = u32::MAX;

/// Strings stored end to end ([`Names`]), by index; each distinct one once when
/// interned.
#[derive(Default)]
pub(crate) struct Strings {
    /// The strings (past 4 GiB of text, no more are stored).
    names: Names,
    table: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

/// String `id` of `names` (`""` for none).
fn get(names: &Names, id: u32) -> &str {
    names.get(id as usize).unwrap_or_default()
}

impl Strings {
    /// The string at `id` (`""` for [`NONE`]).
    pub(crate) fn get(&self, id: u32) -> &str {
        get(&self.names, id)
    }

    /// How many strings there are.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The string at `id`, `None` for [`NONE`].
    pub(crate) fn opt(&self, id: u32) -> Option<&str> {
        (id != NONE).then(|| self.get(id))
    }

    /// Drops the lookup table ([`Strings::intern`] makes it again if called after)
    /// and the room left to grow.
    pub(crate) fn seal(&mut self) {
        self.table = HashTable::new();
        self.names.shrink_to_fit();
    }

    fn clear(&mut self) {
        self.names.clear();
        self.table.clear();
    }

    /// Stores `s` without looking for it: its index, `None` past `u32::MAX - 1`
    /// strings or `u32::MAX` bytes.
    pub(crate) fn push(&mut self, s: &str) -> Option<u32> {
        let id = u32::try_from(self.names.len())
            .ok()
            .filter(|&id| id != NONE)?;
        self.names.push(s).then_some(id)
    }

    /// The index of `s`, stored if it is new; `None` past `u32::MAX - 1` strings.
    pub(crate) fn intern(&mut self, s: &str) -> Option<u32> {
        if self.table.len() < self.names.len() {
            // Sealed: the table made again.
            let (names, hasher) = (&self.names, &self.hasher);
            let hash = |&id: &u32| hasher.hash_one(get(names, id));
            self.table = HashTable::with_capacity(names.len());
            for id in 0..names.len() as u32 {
                self.table.insert_unique(hash(&id), id, hash);
            }
        }
        let hash = self.hasher.hash_one(s);
        let names = &self.names;
        if let Some(&id) = self.table.find(hash, |&id| get(names, id) == s) {
            return Some(id);
        }
        let id = self.push(s)?;
        let (names, hasher) = (&self.names, &self.hasher);
        self.table
            .insert_unique(hash, id, |&id| hasher.hash_one(get(names, id)));
        Some(id)
    }
}

/// Proto paths (`computations[3].instructions[17].shape`), each as its words interned
/// with its numbers taken out, and the numbers as varints: a module proto's shapes
/// each have a path, the same words with other numbers, some forty bytes of text
/// stored as about a dozen.
#[derive(Default)]
struct Paths {
    /// Each path's text with every number replaced by [`Paths::NUMBER`].
    words: Strings,
    /// Per path, its words' index ([`NONE`] never).
    path_words: Vec<u32>,
    /// Per path, where its numbers start in `numbers` (`VERBATIM`: its words are
    /// the path as given, which holds the marker itself).
    starts: Vec<usize>,
    numbers: Vec<u8>,
}

impl Paths {
    /// Stands for a number in a path's words.
    const NUMBER: char = '\0';
    const VERBATIM: usize = usize::MAX;

    /// Stores `path`: its index, `None` past `u32::MAX - 1` paths or words.
    fn push(&mut self, path: &str) -> Option<u32> {
        let id = u32::try_from(self.starts.len())
            .ok()
            .filter(|&id| id != NONE)?;
        let start = self.numbers.len();
        let words = if path.contains(Self::NUMBER) {
            self.starts.push(Self::VERBATIM);
            self.words.intern(path)
        } else {
            let mut words = String::with_capacity(path.len());
            let mut rest = path;
            while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
                words.push_str(&rest[..at]);
                let digits = &rest[at..];
                let run = digits
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(digits.len());
                // Only a number that prints back as its digits (no leading zero).
                match digits[..run].parse::<u64>() {
                    Ok(n) if n.to_string().len() == run => {
                        words.push(Self::NUMBER);
                        let mut n = n;
                        while n >= 0x80 {
                            self.numbers.push((n as u8) | 0x80);
                            n >>= 7;
                        }
                        self.numbers.push(n as u8);
                    }
                    _ => words.push_str(&digits[..run]),
                }
                rest = &digits[run..];
            }
            words.push_str(rest);
            self.starts.push(start);
            self.words.intern(&words)
        };
        self.path_words.push(words?);
        Some(id)
    }

    /// The path at `id`, `None` for [`NONE`].
    fn get(&self, id: u32) -> Option<String> {
        let i = id as usize;
        let words = self.words.get(*self.path_words.get(i)?);
        let mut at = *self.starts.get(i)?;
        if at == Self::VERBATIM {
            return Some(words.to_string());
        }
        let mut path = String::with_capacity(words.len() + 16);
        for (k, part) in words.split(Self::NUMBER).enumerate() {
            if k > 0 {
                let mut n = 0u64;
                let mut shift = 0;
                while let Some(&b) = self.numbers.get(at) {
                    at += 1;
                    n |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
                    shift += 7;
                    if b < 0x80 {
                        break;
                    }
                }
                path.push_str(&n.to_string());
            }
            path.push_str(part);
        }
        Some(path)
    }

    fn clear(&mut self) {
        self.words.clear();
        self.path_words.clear();
        self.starts.clear();
        self.numbers.clear();
    }
}

/// Values stored once each, by index: looked for among a few, by a table past them (a
/// listing of many files holds one of these a file, most with a value or two).
struct Distinct<T> {
    all: Vec<T>,
    table: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl<T> Default for Distinct<T> {
    fn default() -> Self {
        Distinct {
            all: Vec::new(),
            table: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }
}

impl<T: std::hash::Hash + Eq> Distinct<T> {
    /// How many are looked for one by one, before a table.
    const FEW: usize = 8;

    /// The index of `value`, stored if new; `None` past `u32::MAX - 1` values.
    fn index(&mut self, value: T) -> Option<u32> {
        let hash = self.hasher.hash_one(&value);
        let all = &self.all;
        let found = if all.len() <= Self::FEW {
            all.iter().position(|v| *v == value).map(|i| i as u32)
        } else {
            let same = |&id: &u32| all.get(id as usize) == Some(&value);
            self.table.find(hash, same).copied()
        };
        if found.is_some() {
            return found;
        }
        let id = u32::try_from(all.len()).ok().filter(|&id| id != NONE)?;
        if self.all.capacity() == 0 {
            // One slot first (a listing read back holds one of these a file).
            self.all.reserve_exact(1);
        }
        self.all.push(value);
        let (all, hasher) = (&self.all, &self.hasher);
        let rehash = |&id: &u32| all.get(id as usize).map_or(0, |v| hasher.hash_one(v));
        if all.len() == Self::FEW + 1 {
            // The first few, numbered from 0.
            for id in 0..all.len() as u32 {
                self.table.insert_unique(rehash(&id), id, rehash);
            }
        } else if all.len() > Self::FEW + 1 {
            self.table.insert_unique(hash, id, rehash);
        }
        Some(id)
    }

    /// The value at `id`.
    fn get(&self, id: u32) -> Option<&T> {
        self.all.get(id as usize)
    }

    fn clear(&mut self) {
        self.all.clear();
        self.table.clear();
    }
}

/// The index a role has (a parameter's, an operand's, a list attribute's position).
fn role_index(role: &mut Role) -> Option<&mut usize> {
    match role {
        Role::EntryParameter { index }
        | Role::Parameter { index, .. }
        | Role::Operand { index }
        | Role::Attribute { index, .. } => Some(index),
        Role::EntryResult | Role::ComputationResult | Role::Result => None,
    }
}

/// One entry: indices into its listing's strings (and the rest).
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    /// The computation's name, or [`NONE`].
    pub(crate) computation: u32,
    /// The instruction's name, or [`NONE`].
    pub(crate) instruction: u32,
    /// Into [`Held::role_keys`]: use [`Held::role`].
    role: u32,
    /// The shape's text.
    pub(crate) text: u32,
    /// Into the paths, or [`NONE`].
    path: u32,
    /// The line and column, [`NONE`] for none (or in `extra`, when too large).
    line: u32,
    column: u32,
    /// Into the extras, or [`NONE`].
    extra: u32,
}

impl crate::spool::Fixed for Slot {
    const SIZE: usize = 32;

    fn put(&self, out: &mut Vec<u8>) {
        let words = [
            self.computation,
            self.instruction,
            self.role,
            self.text,
            self.path,
            self.line,
            self.column,
            self.extra,
        ];
        crate::spool::put_words(out, &words);
    }

    fn take(bytes: &[u8]) -> Self {
        let field = |k| crate::spool::word(bytes, k);
        Slot {
            computation: field(0),
            instruction: field(1),
            role: field(2),
            text: field(3),
            path: field(4),
            line: field(5),
            column: field(6),
            extra: field(7),
        }
    }
}

/// What few entries have: a shape whose text does not read back as it, or a line or
/// column too large for a `u32`. Eight bytes, since each of a module proto's shapes
/// has one.
struct Extra {
    /// Into [`Held::kept`], or [`NONE`].
    held: u32,
    /// Into [`Held::wide`] (the line and column), or [`NONE`] when the slot holds them.
    wide: u32,
}

/// One instruction: indices into its listing's strings (its computation's name is
/// its run's: [`Held::ops`]).
#[derive(Clone, Copy)]
pub(crate) struct Op {
    /// Its name.
    pub(crate) name: u32,
    /// Its opcode.
    pub(crate) opcode: u32,
    /// Where its operands' names start in the listing's `operands`: they end where
    /// the next instruction's start.
    operands: u32,
}

impl crate::spool::Fixed for Op {
    const SIZE: usize = 12;

    fn put(&self, out: &mut Vec<u8>) {
        crate::spool::put_words(out, &[self.name, self.opcode, self.operands]);
    }

    fn take(bytes: &[u8]) -> Self {
        let field = |k| crate::spool::word(bytes, k);
        Op {
            name: field(0),
            opcode: field(1),
            operands: field(2),
        }
    }
}

/// The operands of one instruction ([`Held::operands`]), read from its listing's
/// table: each the index of its name in the listing's strings.
#[derive(Clone, Copy)]
pub(crate) struct Operands<'a> {
    table: &'a Table<u32>,
    start: usize,
    end: usize,
}

impl Operands<'_> {
    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// The operand at `at` ([`NONE`] past the last, or when it could not be read back:
    /// [`Held::lost`] then says so).
    pub(crate) fn get(&self, at: usize) -> u32 {
        if at >= self.len() {
            return NONE;
        }
        self.table.get(self.start + at).unwrap_or(NONE)
    }

    /// Each operand, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|at| self.get(at))
    }
}

/// The parts of a [`Held`] that only some listings have.
#[derive(Default)]
struct Rare {
    paths: Paths,
    extras: Vec<Extra>,
    /// Shapes kept as their bytes ([`Kept::Encoded`](super::listing::Kept)), each
    /// distinct one once: a module proto's shapes are mostly the same few.
    kept: Distinct<std::sync::Arc<[u8]>>,
    /// Lines and columns too large for a slot's `u32`s.
    wide: Vec<(Option<usize>, Option<usize>)>,
}

/// A listing held compactly (see the module docs).
pub(crate) struct Held {
    /// The file's name as given.
    pub(crate) file: String,
    /// Module or messages.
    pub(crate) kind: Kind,
    /// Names of computations, instructions and operands, opcodes and shape texts.
    pub(crate) strings: Strings,
    /// Each distinct role once, its index (if it has one) 0: the roles' kinds and
    /// names, which are few (found by hash, without a copy of each: a map keyed by a
    /// copy took each name twice, for signatures of millions of named parameters).
    roles: Distinct<Role>,
    /// Each distinct role once, as its kind's index in `roles` and its own index (an
    /// operand's, a parameter's, a list attribute's): eight bytes, where a `Role` each
    /// (and its name's copy) took some 150 (an instruction of a million
    /// `operand_shapes_with_layout` holds as many roles).
    role_keys: Distinct<(u32, u32)>,
    /// The shapes, in order: past the first [`Table::HELD`] in a temporary file (a
    /// module of a million instructions lists some three million shapes, 32 bytes
    /// each).
    pub(crate) entries: Table<Slot>,
    /// The instructions, in order (none for a listing read back): past the first
    /// [`Table::HELD`] in a temporary file (twelve bytes an instruction).
    pub(crate) instructions: Table<Op>,
    /// Where each run of instructions of one computation starts in `instructions`, and
    /// the computation's name: a module's computations are written whole, one after the
    /// other (a name an instruction took four bytes each).
    op_computations: Vec<(u32, u32)>,
    /// Each instruction's operands' names, in order: past the first [`Table::HELD`]
    /// in a temporary file (four bytes an operand; they are read only to match
    /// instructions whose names do not).
    operands: Table<u32>,
    /// The computations instructions call, by name (indices into the strings), in
    /// order; and for each instruction that calls any, where its calls start, as
    /// (instruction, start): most call none, and those that do, one.
    calls: Table<u32>,
    call_starts: Vec<(u32, u32)>,
    /// Each get-tuple-element's tuple index, as (instruction, index), in order: the
    /// elements of one tuple have the same operand, and often the same shape.
    tuple_indices: Vec<(u32, u64)>,
    /// What only some listings have (proto paths, shapes kept as bytes, large lines
    /// and columns), made when the first comes: a listing read back makes a `Held` a
    /// file it names, most with a shape or two and none of these.
    rare: Option<Box<Rare>>,
    /// The computations (their names' indices) some entry marks as the entry one.
    entry_computations: HashSet<u32>,
    /// Set when more strings, entries or operands came than `u32` indices reach.
    overflow: bool,
}

impl Held {
    /// An empty listing of `file`.
    pub(crate) fn new(file: &str, kind: Kind) -> Self {
        Held::keeping(file, kind, Table::<Slot>::HELD)
    }

    /// An empty listing of `file` that keeps its first `entries` entries (and as many
    /// instructions and operands) in memory, the rest in temporary files.
    pub(crate) fn keeping(file: &str, kind: Kind, entries: usize) -> Self {
        Held {
            file: file.to_string(),
            kind,
            strings: Strings::default(),
            roles: Distinct::default(),
            role_keys: Distinct::default(),
            entries: Table::new(entries),
            instructions: Table::new(entries),
            op_computations: Vec::new(),
            operands: Table::new(entries),
            calls: Table::new(entries),
            call_starts: Vec::new(),
            tuple_indices: Vec::new(),
            rare: None,
            entry_computations: HashSet::new(),
            overflow: false,
        }
    }

    /// `listing` held compactly, all in memory (as the listing is): its entries are
    /// read back without a file that could fail.
    pub(crate) fn of(listing: &Listing) -> Self {
        Held::of_keeping(listing, usize::MAX)
    }

    /// `listing` held compactly, its entries past the first `entries` in a temporary
    /// file.
    pub(crate) fn of_keeping(listing: &Listing, entries: usize) -> Self {
        let mut held = Held::keeping(&listing.file, listing.kind, entries);
        for entry in &listing.entries {
            held.push_entry(entry.clone());
        }
        for instruction in &listing.instructions {
            held.push_instruction(instruction);
        }
        held
    }

    fn intern(&mut self, s: Option<&str>) -> u32 {
        let Some(s) = s else { return NONE };
        self.strings.intern(s).unwrap_or_else(|| {
            self.overflow = true;
            NONE
        })
    }

    fn index(&mut self, len: usize) -> u32 {
        u32::try_from(len)
            .ok()
            .filter(|&i| i != NONE)
            .unwrap_or_else(|| {
                self.overflow = true;
                NONE
            })
    }

    /// Adds the next entry.
    pub(crate) fn push_entry(&mut self, mut entry: Entry) {
        // A shape kept beside its text (a module proto's, whose text drops what XLA's
        // text does not show) is held as its bytes: a decoded `ShapeProto` takes ten
        // times as much, and each of a module proto's shapes is one of these.
        let held = entry.take_held().map(|kept| match kept {
            super::listing::Kept::Shape(shape) => crate::codec::encode(&*shape).into(),
            super::listing::Kept::Encoded(bytes) => bytes,
        });
        let computation = self.intern(entry.computation.as_deref());
        let layout = matches!(entry.role, Role::EntryParameter { .. } | Role::EntryResult);
        if entry.entry && computation != NONE && !layout {
            self.entry_computations.insert(computation);
        }
        let instruction = self.intern(entry.instruction.as_deref());
        let role = self.role_key(entry.role);
        let text = self.intern(Some(&entry.text));
        let path = match entry.path.as_deref().map(|p| self.rare().paths.push(p)) {
            None => NONE,
            Some(Some(id)) => id,
            Some(None) => {
                self.overflow = true;
                NONE
            }
        };
        let small = |n: Option<usize>| match n {
            None => Some(NONE),
            Some(n) => u32::try_from(n).ok().filter(|&n| n != NONE),
        };
        let (line, column) = (small(entry.line), small(entry.column));
        let held = match held.map(|bytes| self.rare().kept.index(bytes)) {
            None => NONE,
            Some(Some(id)) => id,
            Some(None) => {
                self.overflow = true;
                NONE
            }
        };
        let wide = if line.is_none() || column.is_none() {
            let wide = &mut self.rare().wide;
            wide.push((entry.line, entry.column));
            let at = wide.len() - 1;
            self.index(at)
        } else {
            NONE
        };
        let extra = if held != NONE || wide != NONE {
            let extras = &mut self.rare().extras;
            extras.push(Extra { held, wide });
            let at = extras.len() - 1;
            self.index(at)
        } else {
            NONE
        };
        self.entries.push(Slot {
            computation,
            instruction,
            role,
            text,
            path,
            line: line.unwrap_or(NONE),
            column: column.unwrap_or(NONE),
            extra,
        });
        if self.entries.len() >= NONE as usize {
            self.overflow = true;
        }
    }

    /// The rare parts, made if none.
    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// The index of `role` in [`Held::role_keys`], stored if new.
    fn role_key(&mut self, mut role: Role) -> u32 {
        let index = role_index(&mut role).map_or(0, std::mem::take);
        let Ok(index) = u32::try_from(index) else {
            self.overflow = true;
            return NONE;
        };
        let kind = self.roles.index(role);
        let Some(key) = kind.and_then(|kind| self.role_keys.index((kind, index))) else {
            self.overflow = true;
            return NONE;
        };
        key
    }

    /// Adds the next instruction.
    pub(crate) fn push_instruction(&mut self, instruction: &Instruction) {
        let computation = self.intern(Some(&instruction.computation));
        let name = self.intern(Some(&instruction.name));
        let opcode = self.intern(Some(&instruction.opcode));
        let start = self.index(self.operands.len());
        for operand in &instruction.operands {
            let id = self.intern(Some(operand));
            self.operands.push(id);
        }
        if let Some(index) = instruction.tuple_index {
            let k = self.index(self.instructions.len());
            self.tuple_indices.push((k, index));
        }
        if self.op_computations.last().map(|&(_, c)| c) != Some(computation) {
            let first = self.index(self.instructions.len());
            self.op_computations.push((first, computation));
        }
        if !instruction.calls.is_empty() {
            let k = self.index(self.instructions.len());
            let start = self.index(self.calls.len());
            self.call_starts.push((k, start));
            for call in &instruction.calls {
                let id = self.intern(Some(call));
                self.calls.push(id);
            }
        }
        self.instructions.push(Op {
            name,
            opcode,
            operands: start,
        });
        // The end of the last one's operands.
        self.index(self.operands.len());
    }

    /// The role of entry `slot` as its kind (its index 0) and its index.
    pub(crate) fn role_parts(&self, slot: &Slot) -> (&Role, usize) {
        const RESULT: Role = Role::Result;
        let parts = self.role_keys.get(slot.role);
        match parts.and_then(|&(kind, index)| Some((self.roles.get(kind)?, index))) {
            Some((kind, index)) => (kind, index as usize),
            None => (&RESULT, 0),
        }
    }

    /// The role of entry `slot`.
    pub(crate) fn role(&self, slot: &Slot) -> Role {
        // Every role key was made by `push_entry` (none past an overflow, which the
        // listing is refused for).
        let (kind, index) = self.role_parts(slot);
        let mut role = kind.clone();
        if let Some(at) = role_index(&mut role) {
            *at = index;
        }
        role
    }

    /// The bytes of the shape kept beside the entry's text, if any.
    pub(crate) fn kept(&self, slot: &Slot) -> Option<&std::sync::Arc<[u8]>> {
        let rare = self.rare.as_ref()?;
        self.extra(slot).and_then(|e| rare.kept.get(e.held))
    }

    /// The entry's line and column when too large for its slot.
    fn wide(&self, slot: &Slot) -> Option<&(Option<usize>, Option<usize>)> {
        self.extra(slot)
            .and_then(|e| self.rare.as_ref()?.wide.get(e.wide as usize))
    }

    fn extra(&self, slot: &Slot) -> Option<&Extra> {
        self.rare.as_ref()?.extras.get(slot.extra as usize)
    }

    /// Whether the computation named by string `id` is the entry computation.
    pub(crate) fn is_entry_computation(&self, id: u32) -> bool {
        self.entry_computations.contains(&id)
    }

    /// The instructions in order, each with its computation's name.
    pub(crate) fn ops(&self) -> impl Iterator<Item = (u32, Op)> + '_ {
        let mut runs = self.op_computations.iter().peekable();
        let mut computation = NONE;
        self.instructions
            .iter_from(0)
            .zip(0u32..)
            .map(move |(op, k)| {
                while let Some(&&(first, name)) = runs.peek() {
                    if first > k {
                        break;
                    }
                    computation = name;
                    runs.next();
                }
                (computation, op)
            })
    }

    /// The operands of instruction `k` (none past the last).
    pub(crate) fn operands(&self, k: usize) -> Operands<'_> {
        // None past the last instruction, or when one could not be read back
        // (`Held::lost` then says so).
        let count = self.instructions.len();
        let end = match k.checked_add(1).filter(|&next| next <= count) {
            Some(next) if next == count => Some(self.operands.len()),
            Some(next) => self
                .instructions
                .get(next)
                .map(|next| next.operands as usize),
            None => None,
        };
        let (start, end) = match (self.instructions.get(k), end) {
            (Some(op), Some(end)) => (op.operands as usize, end),
            _ => (0, 0),
        };
        Operands {
            table: &self.operands,
            start,
            end: end.max(start),
        }
    }

    /// Whether any instruction calls a computation.
    pub(crate) fn has_calls(&self) -> bool {
        !self.call_starts.is_empty()
    }

    /// Every call's computation, by name, in order.
    pub(crate) fn called(&self) -> impl Iterator<Item = u32> + '_ {
        self.calls.iter_from(0)
    }

    /// The computations instruction `k` calls, by name (none past the last).
    pub(crate) fn calls(&self, k: usize) -> Operands<'_> {
        let none = Operands {
            table: &self.calls,
            start: 0,
            end: 0,
        };
        let Ok(k) = u32::try_from(k) else {
            return none;
        };
        let Ok(at) = self.call_starts.binary_search_by_key(&k, |&(i, _)| i) else {
            return none;
        };
        let start = self.call_starts[at].1 as usize;
        let end = (self.call_starts.get(at + 1)).map_or(self.calls.len(), |&(_, end)| end as usize);
        Operands {
            table: &self.calls,
            start,
            end: end.max(start),
        }
    }

    /// Instruction `k`'s tuple index, if it is a get-tuple-element
    /// ([`Instruction::tuple_index`]).
    pub(crate) fn tuple_index(&self, k: usize) -> Option<u64> {
        let k = u32::try_from(k).ok()?;
        let at = self
            .tuple_indices
            .binary_search_by_key(&k, |&(i, _)| i)
            .ok()?;
        Some(self.tuple_indices[at].1)
    }

    /// The first failure to keep or read back its entries, instructions or operands in
    /// their temporary files: some were lost.
    pub(crate) fn lost(&self) -> Option<&str> {
        let tables = [
            self.entries.lost(),
            self.instructions.lost(),
            self.operands.lost(),
            self.calls.lost(),
        ];
        tables.into_iter().flatten().next()
    }

    /// Entry `slot` as a listing entry.
    pub(crate) fn entry(&self, slot: &Slot) -> Entry {
        let small = |n: u32| (n != NONE).then_some(n as usize);
        let held = self.kept(slot).cloned().map(super::listing::Kept::Encoded);
        let mut entry = Entry::bare(
            self.role(slot),
            self.strings.get(slot.text).to_string(),
            held,
        );
        entry.computation = self.strings.opt(slot.computation).map(str::to_string);
        entry.entry = self.is_entry_computation(slot.computation);
        entry.instruction = self.strings.opt(slot.instruction).map(str::to_string);
        entry.path = self
            .rare
            .as_ref()
            .and_then(|rare| rare.paths.get(slot.path));
        (entry.line, entry.column) = match self.wide(slot) {
            Some(&wide) => wide,
            None => (small(slot.line), small(slot.column)),
        };
        entry
    }

    /// Empties the listing (its file and kind kept), keeping what it allocated, to be
    /// filled again.
    pub(crate) fn clear(&mut self) {
        self.strings.clear();
        self.roles.clear();
        self.role_keys.clear();
        self.entries.clear();
        self.instructions.clear();
        self.op_computations.clear();
        self.operands.clear();
        self.calls.clear();
        self.call_starts.clear();
        self.tuple_indices.clear();
        if let Some(rare) = &mut self.rare {
            rare.paths.clear();
            rare.extras.clear();
            rare.kept.clear();
            rare.wide.clear();
        }
        self.entry_computations.clear();
        self.overflow = false;
    }

    /// Adds an item of its read.
    fn push_item(&mut self, item: Item) {
        match item {
            Item::Entry(entry) => self.push_entry(entry),
            Item::Instruction(instruction) => self.push_instruction(&instruction),
        }
    }

    /// The one listing of a module or messages whose read ended with `single`: `held`,
    /// the items it handed on held (`None` when it handed on none), checked.
    fn of_single(held: Option<Held>, single: &Listing) -> Result<Held, ReadError> {
        held.unwrap_or_else(|| Held::new(&single.file, single.kind))
            .check()
    }

    /// An error if some index overflowed or some entry or instruction could not be kept; else the
    /// listing, its strings' lookup table dropped (nothing more is stored).
    fn check(mut self) -> Result<Self, ReadError> {
        self.finish()?;
        Ok(self)
    }

    /// [`Held::check`], boxed.
    fn check_boxed(mut self: Box<Self>) -> Result<Box<Self>, ReadError> {
        self.finish()?;
        Ok(self)
    }

    /// What [`Held::check`] checks and drops.
    fn finish(&mut self) -> Result<(), ReadError> {
        if let Some(why) = self.lost() {
            return Err(ReadError {
                file: self.file.clone(),
                code: "io_error",
                message: format!("its shapes or instructions could not be kept: {why}"),
            });
        }
        self.strings.seal();
        self.op_computations.shrink_to_fit();
        if let Some(rare) = &mut self.rare {
            rare.extras.shrink_to_fit();
        }
        if self.overflow {
            return Err(ReadError {
                file: self.file.clone(),
                code: "too_large",
                message: format!(
                    "more than {} names, shapes or operands, or more than 4 GiB of distinct names and shape texts, to compare",
                    NONE - 1
                ),
            });
        }
        Ok(())
    }
}

/// A file read for comparison ([`read_path`]).
pub(crate) enum Read {
    /// The one listing of a module or messages, held.
    One(Box<Held>),
    /// A listing file read back, held as where each file's lines stand: each file it
    /// names is held when it is compared ([`hold_listed`]).
    Back(std::sync::Arc<Back>),
}

/// Reads one file as [`super::listing::read_path`] does: a module or messages held
/// compactly as it is read, a listing file read back as where each file's lines stand
/// ([`Back`]; a `Held` a file it names, some 1 KB each with its tables, took 50 times a
/// listing of one short line a file).
pub(crate) fn read_path(
    path: &std::path::Path,
    name: &str,
    options: &super::listing::ReadOptions,
) -> Result<Read, ReadError> {
    let mut module: Option<Held> = None;
    let mut back: Option<Back> = None;
    let mut sink = |listing: &Listing, item| {
        module
            .get_or_insert_with(|| Held::new(&listing.file, listing.kind))
            .push_item(item);
    };
    let single =
        super::listing::stream_path_holding_back(path, name, options, &mut back, &mut sink)?;
    match (single, back) {
        (Some(single), _) => Ok(Read::One(Box::new(Held::of_single(module, &single)?))),
        (None, Some(back)) => Ok(Read::Back(std::sync::Arc::new(back))),
        // Not reached: a read that lists no one listing holds a listing file read back.
        (None, None) => Err(ReadError {
            file: name.to_string(),
            code: "decode_error",
            message: "read as neither one listing nor a listing file".to_string(),
        }),
    }
}

/// File `index` of the listing file read back `back`, held: its entries read again from
/// the listing's text, as the whole read held them.
pub(crate) fn hold_listed(back: &Back, index: usize) -> Result<Box<Held>, ReadError> {
    let files = &back.files;
    let mut held = Box::new(Held::new(&files.file(index), files.kind(index)));
    back.entries(index, &mut |entry| held.push_entry(entry))?;
    held.check_boxed()
}

/// What a file read on a thread of its own ([`read_on_thread`]) hands on, in order.
pub(crate) enum Event {
    /// The listing the items belong to, before the first: its file's name and kind, and
    /// whether it is the one listing of a module or messages (not a listing file read
    /// back).
    First {
        file: String,
        kind: Kind,
        single: bool,
    },
    /// The next items, in order.
    Items(Vec<Item>),
    /// The read ended, as [`super::listing::stream_path_with`] ends.
    Done(Result<Option<Listing>, ReadError>),
}

/// How many items a side read on its own thread hands on at once (fewer at its end):
/// handed on one by one, two files of two million shape lines took a third longer to
/// compare.
const BATCH: usize = 256;

/// How many batches a side read on its own thread may be ahead of the reader.
const AHEAD: usize = 4;

/// Reads the file at `path` (named `name`) on a thread of `scope`, handing on its
/// [`Event`]s as they come, at most [`AHEAD`] ahead of the receiver; `None` when no
/// thread can be started. Once the receiver is dropped, the read goes on to its end
/// handing on nothing.
pub(crate) fn read_on_thread<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    (path, name): (&'scope std::path::Path, &'scope str),
    options: &'scope super::listing::ReadOptions,
) -> Option<std::sync::mpsc::Receiver<Event>> {
    let (send, receive) = std::sync::mpsc::sync_channel(AHEAD);
    let read = move || {
        let (mut first, mut open, mut batch) = (true, true, Vec::with_capacity(BATCH));
        let mut sink = |listing: &Listing, item| {
            if first && open {
                first = false;
                let single = listing.form.is_some();
                let (file, kind) = (listing.file.clone(), listing.kind);
                open = send.send(Event::First { file, kind, single }).is_ok();
            }
            if open {
                batch.push(item);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    open = send.send(Event::Items(full)).is_ok();
                }
            }
        };
        let done = super::listing::stream_path_with(path, name, options, true, &mut sink);
        if !batch.is_empty() {
            let _ = send.send(Event::Items(batch));
        }
        let _ = send.send(Event::Done(done));
    };
    std::thread::Builder::new()
        .name("xla-shape-read".to_string())
        .spawn_scoped(scope, read)
        .ok()?;
    Some(receive)
}

/// One side's events as [`read_path`] holds them: the one listing of a module or
/// messages, or its read's error; `None` when the file lists as several listings.
pub(crate) fn hold_events(events: impl Iterator<Item = Event>) -> Option<Result<Held, ReadError>> {
    let mut held: Option<Held> = None;
    for event in events {
        match event {
            Event::First { file, kind, single } => {
                if !single {
                    return None;
                }
                held.get_or_insert_with(|| Held::new(&file, kind));
            }
            Event::Items(items) => {
                let held = held.as_mut()?;
                items.into_iter().for_each(|item| held.push_item(item));
            }
            Event::Done(Err(e)) => return Some(Err(e)),
            Event::Done(Ok(None)) => return None,
            Event::Done(Ok(Some(single))) => return Some(Held::of_single(held, &single)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_back_as_they_were_stored() {
        let all = [
            "computations[3].instructions[17].shape",
            "",
            "0",
            "tuple_shapes[0].tuple_shapes[10].layout.tiles[1]",
            // Leading zeros, a number past u64, digits at both ends, a marker.
            "a007b[00].c[18446744073709551615][18446744073709551616]9",
            "x\0[12]",
            "ü[٣]3",
        ];
        let mut paths = Paths::default();
        let ids: Vec<u32> = all.iter().map(|p| paths.push(p).unwrap()).collect();
        for (id, path) in ids.iter().zip(all) {
            assert_eq!(paths.get(*id).as_deref(), Some(path));
        }
        assert_eq!(paths.get(NONE), None);
        // The same words with other numbers are stored once.
        let words = paths.words.len();
        paths
            .push("computations[4].instructions[170].shape")
            .unwrap();
        assert_eq!(paths.words.len(), words);
    }

    /// Strings stored once each, before their lookup table is dropped and after (it is
    /// made again, so a string stored before keeps its index).
    #[test]
    fn strings_are_stored_once_also_after_sealing() {
        let mut strings = Strings::default();
        let (a, b) = (strings.intern("a.1").unwrap(), strings.intern("b").unwrap());
        assert_eq!(strings.intern("a.1"), Some(a));
        strings.seal();
        assert_eq!(strings.intern("b"), Some(b));
        let c = strings.intern("c").unwrap();
        assert_eq!(strings.len(), 3);
        assert_eq!(
            (strings.get(a), strings.get(b), strings.get(c)),
            ("a.1", "b", "c")
        );
    }

    /// Each instruction's operands and called computations read back as given, in
    /// order, wherever they are kept: all in memory, or past the first 0, 1 or 3 in the
    /// temporary file (with instructions of none, of one, of many, and after the last
    /// none); and so does the tuple index of those that have one.
    #[test]
    fn operands_calls_and_tuple_indices_read_back_as_given() {
        let given: Vec<Vec<String>> = (0..40)
            .map(|k| {
                (0..(k * 7) % 6)
                    .map(|at| format!("x{}.{at}", (k * 13 + at) % 9))
                    .collect()
            })
            .collect();
        // Calls of the instructions whose operands are those of instruction k / 2.
        let calls = |k: usize| {
            if k % 3 == 0 {
                given[k / 2].clone()
            } else {
                Vec::new()
            }
        };
        // Some take a tuple's element.
        let index = |k: usize| (k % 5 == 1).then_some(k as u64 * 3);
        for keep in [0, 1, 3, usize::MAX] {
            let mut held = Held::keeping("f", Kind::Module, keep);
            for (k, operands) in given.iter().enumerate() {
                held.push_instruction(&Instruction {
                    computation: format!("c{}", k / 10),
                    name: format!("i{k}"),
                    opcode: "add".to_string(),
                    operands: operands.clone().into(),
                    calls: calls(k).into(),
                    tuple_index: index(k),
                });
            }
            held.finish().unwrap();
            assert!(held.has_calls());
            for (k, operands) in given.iter().enumerate() {
                assert_eq!(
                    held.tuple_index(k),
                    index(k),
                    "keep {keep}, instruction {k}"
                );
                for (read, given) in [(held.operands(k), operands), (held.calls(k), &calls(k))] {
                    assert_eq!(read.len(), given.len(), "keep {keep}, instruction {k}");
                    let names: Vec<&str> = read.iter().map(|id| held.strings.get(id)).collect();
                    assert_eq!(names, *given, "keep {keep}, instruction {k}");
                    assert_eq!(read.get(given.len()), NONE);
                }
            }
            for past in [given.len(), usize::MAX] {
                assert_eq!(held.tuple_index(past), None);
                assert_eq!(held.operands(past).len(), 0);
                assert_eq!(held.calls(past).len(), 0);
            }
            assert!(held.lost().is_none());
        }
    }

    #[test]
    fn kept_shapes_are_stored_once_each() {
        // Among a few, and by the table past them.
        let mut kept: Distinct<std::sync::Arc<[u8]>> = Distinct::default();
        let a = kept.index(vec![8, 11].into()).unwrap();
        let b = kept.index(vec![8, 12].into()).unwrap();
        assert_ne!(a, b);
        assert_eq!(kept.index(vec![8, 11].into()), Some(a));
        assert_eq!(kept.all.len(), 2);
        let many: Vec<u32> = (0..20u8)
            .map(|k| kept.index(vec![k].into()).unwrap())
            .collect();
        for (k, id) in (0..20u8).zip(&many) {
            assert_eq!(kept.index(vec![k].into()), Some(*id));
            assert_eq!(kept.get(*id).map(|b| &b[..]), Some(&[k][..]));
        }
        assert_eq!(kept.index(vec![8, 11].into()), Some(a));
        assert_eq!(kept.all.len(), 22);
    }
}
