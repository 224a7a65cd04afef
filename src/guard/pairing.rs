//! The pairing of two sides' files by key for [`super::diff`], in a bounded memory.
//!
//! Each side's keys go to a [`Sorter`] as they are found, each with the side's record
//! of its file (bytes this module does not read) and its place in the side. The two
//! sorted runs are merged: files whose keys are the same pair there, the k-th old one
//! of a key with the k-th new one. The files left pair by the ends of their keys
//! ([`Finder`]): only the new ones that an old key's ends could find are held (one
//! more sort, of the keys left and their ends, tells them), the old ones looked up in
//! order as they come from a sort. Every pair then goes through one more sorter, and
//! comes out in the order of the report: by key, the pairs with an old file (in the
//! old side's order) before the new files alone (in the new side's order).
//!
//! Held whole (each side's keys, the sorted lists of the keys and their ends, and the
//! pairs), two listings naming 200,000 files each took some 25 MB for the pairing.

use std::io;

use super::held::{Strings, NONE};
use crate::spool::{Heap, Merged, Sortable, Sorter};

/// One file of a side: its key, its place in the side, and the side's record of it;
/// sorted by key, then place.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Keyed(String, u32, Vec<u8>);

/// A `u32`, then a length-prefixed part, as a record's bytes.
fn put_part(out: &mut Vec<u8>, part: &[u8]) {
    // A part is a key or a side's record of a file: under 4 GiB (`Keys::push`).
    out.extend_from_slice(&(part.len() as u32).to_le_bytes());
    out.extend_from_slice(part);
}

/// Reads a `u32` from the front of `bytes`.
fn take_u32(bytes: &mut &[u8]) -> Option<u32> {
    let (word, rest) = bytes.split_first_chunk::<4>()?;
    *bytes = rest;
    Some(u32::from_le_bytes(*word))
}

/// Reads a part [`put_part`] wrote from the front of `bytes`.
fn take_part(bytes: &mut &[u8]) -> Option<Vec<u8>> {
    let len = take_u32(bytes)? as usize;
    let (part, rest) = bytes.split_at_checked(len)?;
    *bytes = rest;
    Some(part.to_vec())
}

impl Sortable for Keyed {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.1.to_le_bytes());
        put_part(out, self.0.as_bytes());
        out.extend_from_slice(&self.2);
    }

    fn take(mut bytes: &[u8]) -> Option<Self> {
        let place = take_u32(&mut bytes)?;
        let key = String::from_utf8(take_part(&mut bytes)?).ok()?;
        Some(Keyed(key, place, bytes.to_vec()))
    }

    fn held_size(&self) -> usize {
        self.0.capacity() + self.2.capacity()
    }
}

/// A pair, in the order of the report: its key (the new file's, else the old one's),
/// whether it is a new file alone, its old file's place (else its new file's), its new
/// file's place ([`NONE`] for none), and the sides' records of its files.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Placed(String, bool, u32, u32, Option<Vec<u8>>, Option<Vec<u8>>);

impl Sortable for Placed {
    fn put(&self, out: &mut Vec<u8>) {
        let flags =
            u8::from(self.1) | u8::from(self.4.is_some()) << 1 | u8::from(self.5.is_some()) << 2;
        out.push(flags);
        out.extend_from_slice(&self.2.to_le_bytes());
        out.extend_from_slice(&self.3.to_le_bytes());
        put_part(out, self.0.as_bytes());
        for record in self.4.iter().chain(&self.5) {
            put_part(out, record);
        }
    }

    fn take(bytes: &[u8]) -> Option<Self> {
        let (&flags, mut bytes) = bytes.split_first()?;
        let first = take_u32(&mut bytes)?;
        let new = take_u32(&mut bytes)?;
        let key = String::from_utf8(take_part(&mut bytes)?).ok()?;
        let old_record = match flags & 2 {
            0 => None,
            _ => Some(take_part(&mut bytes)?),
        };
        let new_record = match flags & 4 {
            0 => None,
            _ => Some(take_part(&mut bytes)?),
        };
        let alone = flags & 1 != 0;
        (bytes.is_empty()).then_some(Placed(key, alone, first, new, old_record, new_record))
    }

    fn held_size(&self) -> usize {
        let record = |r: &Option<Vec<u8>>| r.as_ref().map_or(0, |r| r.capacity() + 16);
        self.0.capacity() + record(&self.4) + record(&self.5)
    }
}

/// One side's files, by key, as they are found.
#[derive(Default)]
pub(crate) struct Keys {
    sorter: Sorter<Keyed>,
    count: u32,
    full: bool,
}

impl Keys {
    /// Adds the next file, under `key`, with the side's `record` of it: `false` (and
    /// nothing added) once the side has `u32::MAX - 1` files, or for a key or record
    /// of 4 GiB or more.
    pub(crate) fn push(&mut self, key: &str, record: Vec<u8>) -> bool {
        let fits = |len: usize| u32::try_from(len).is_ok();
        if self.count == NONE - 1 || !fits(key.len()) || !fits(record.len()) {
            self.full = true;
            return false;
        }
        self.sorter.push(Keyed(key.to_string(), self.count, record));
        self.count += 1;
        true
    }

    /// How many files were added.
    pub(crate) fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether some file could not be added.
    pub(crate) fn full(&self) -> bool {
        self.full
    }

    /// The first file by key, and the side's record of it.
    ///
    /// # Errors
    /// The sorter's temporary file could not be read back.
    pub(crate) fn first(self) -> io::Result<Option<(String, Vec<u8>)>> {
        let first = self.sorter.sorted()?.next_record()?;
        Ok(first.map(|Keyed(key, _, record)| (key, record)))
    }
}

/// A pair of files: its key, and each side's place and record of its file (none on
/// the side that has no file).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Pair {
    /// The new file's key, else the old one's.
    pub(crate) key: String,
    /// The old file: its place in its side, and the side's record of it.
    pub(crate) old: Option<(u32, Vec<u8>)>,
    /// The new file, likewise.
    pub(crate) new: Option<(u32, Vec<u8>)>,
}

/// The pairs, in the order of the report ([`pair`]).
pub(crate) struct Paired(Merged<Placed>);

impl Paired {
    /// The next pair.
    ///
    /// # Errors
    /// A temporary file could not be read back.
    pub(crate) fn next_pair(&mut self) -> io::Result<Option<Pair>> {
        let Some(Placed(key, alone, first, new, old_record, new_record)) = self.0.next_record()?
        else {
            return Ok(None);
        };
        let (old, new) = match alone {
            true => (None, new_record.map(|record| (first, record))),
            false => (
                old_record.map(|record| (first, record)),
                new_record.map(|record| (new, record)),
            ),
        };
        Ok(Some(Pair { key, old, new }))
    }
}

/// A sorted run of one side's files, with its next file read ahead.
struct Ahead {
    merged: Merged<Keyed>,
    next: Option<Keyed>,
}

impl Ahead {
    fn new(keys: Keys) -> io::Result<Self> {
        let mut merged = keys.sorter.sorted()?;
        let next = merged.next_record()?;
        Ok(Ahead { merged, next })
    }

    fn peek(&self) -> Option<&str> {
        self.next.as_ref().map(|keyed| keyed.0.as_str())
    }

    fn take(&mut self) -> io::Result<Option<Keyed>> {
        let next = self.merged.next_record()?;
        Ok(std::mem::replace(&mut self.next, next))
    }
}

/// The pairs of two sides' files, by the sides' keys: first each old file with the new
/// file of the same key (the k-th old one of a key, in the side's order, with the k-th
/// new one); then each old file left, in order, with the first new file left that ends
/// with `/KEY` or is the end of `KEY` after a `/` ([`Finder`]); the files left are
/// alone. Same keys pair first, so that a file paired by an end does not take the file
/// another has the same key as (`a/x.hlo` took `b/a/x.hlo` from `b/a/x.hlo`, which was
/// then reported on one side only).
///
/// # Errors
/// A temporary file could not be read back, or the keys of the files left to pair by
/// their ends take 4 GiB or more.
pub(crate) fn pair(old: Keys, new: Keys) -> io::Result<Paired> {
    let (mut o, mut n) = (Ahead::new(old)?, Ahead::new(new)?);
    let mut placed = Sorter::default();
    // The files left, by their places (each side's in its own order).
    let (mut old_left, mut new_left) = (Sorter::default(), Sorter::default());
    // The keys of the files left and their ends, to tell the new files an old one's
    // key could find by the ends from those none could.
    let mut probes = Sorter::default();
    loop {
        let order = match (o.peek(), n.peek()) {
            (None, None) => break,
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Equal => {
                let (Some(a), Some(b)) = (o.take()?, n.take()?) else {
                    unreachable!("both sides have a file of the key")
                };
                placed.push(Placed(b.0, false, a.1, b.1, Some(a.2), Some(b.2)));
            }
            std::cmp::Ordering::Less => {
                let keyed = o.take()?;
                if let Some(keyed) = &keyed {
                    probes.extend(Probe::all(&keyed.0, OLD_KEY, 0));
                }
                old_left.extend(keyed.map(ByPlace));
            }
            std::cmp::Ordering::Greater => {
                let keyed = n.take()?;
                if let Some(keyed) = &keyed {
                    probes.extend(Probe::all(&keyed.0, NEW_KEY, keyed.1));
                }
                new_left.extend(keyed.map(ByPlace));
            }
        }
    }
    // Their runs' buffers given back before the files left are held.
    drop((o, n));
    // The new files left that some old file's key could find by the ends: held, in
    // order, for the look-ups (their keys end to end, their records in a heap, in
    // memory up to its size, then in a temporary file); the others are alone.
    let mut wanted = wanted(probes)?;
    let mut next_wanted = wanted.next_record()?;
    let mut left = Left::default();
    let mut new_left = new_left.sorted()?;
    while let Some(ByPlace(Keyed(key, at, record))) = new_left.next_record()? {
        while next_wanted.as_ref().is_some_and(|w| w.0 < at) {
            next_wanted = wanted.next_record()?;
        }
        match next_wanted.as_ref().is_some_and(|w| w.0 == at) {
            true => left.push(&key, at, &record)?,
            false => placed.push(Placed(key, true, at, NONE, None, Some(record))),
        }
    }
    drop((new_left, wanted));
    let mut finder = Finder::new(&left.keys);
    // Each old file left, in order, with the first new one left its key's ends find.
    let mut old_left = old_left.sorted()?;
    while let Some(ByPlace(Keyed(key, at, record))) = old_left.next_record()? {
        let pair = match finder.take_by_ends(&key) {
            Some(j) => {
                let (new_key, new_at, new_record) = left.get(j)?;
                Placed(new_key, false, at, new_at, Some(record), Some(new_record))
            }
            None => Placed(key, false, at, NONE, Some(record), None),
        };
        placed.push(pair);
    }
    for j in 0..left.keys.len() as u32 {
        if !finder.taken[j as usize] {
            let (key, at, record) = left.get(j)?;
            placed.push(Placed(key, true, at, NONE, None, Some(record)));
        }
    }
    Ok(Paired(placed.sorted()?))
}

/// A text the pairing by ends looks for or finds: a key of a file left or one of its
/// ends ([`key_ends`]), which of the four it is, and (for a new file's) the file's
/// place; sorted by text, then kind.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Probe(String, u8, u32);

/// An old file's key ([`Probe`]): it finds new keys that end with it after a `/`.
const OLD_KEY: u8 = 0;
/// An end of an old file's key: it finds new keys that are the same.
const OLD_END: u8 = 1;
/// A new file's key.
const NEW_KEY: u8 = 2;
/// An end of a new file's key.
const NEW_END: u8 = 3;

impl Probe {
    /// `key` as `kind` (an old or new key), and each of its ends as the end of that
    /// kind, with `place`.
    fn all(key: &str, kind: u8, place: u32) -> impl Iterator<Item = Probe> + '_ {
        let whole = std::iter::once(Probe(key.to_string(), kind, place));
        let ends = key_ends(key).map(move |at| Probe(key[at..].to_string(), kind + 1, place));
        whole.chain(ends)
    }
}

impl Sortable for Probe {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.1);
        out.extend_from_slice(&self.2.to_le_bytes());
        out.extend_from_slice(self.0.as_bytes());
    }

    fn take(bytes: &[u8]) -> Option<Self> {
        let (&kind, mut rest) = bytes.split_first()?;
        let place = take_u32(&mut rest)?;
        Some(Probe(String::from_utf8(rest.to_vec()).ok()?, kind, place))
    }

    fn held_size(&self) -> usize {
        self.0.capacity()
    }
}

/// A new file's place, wanted for the pairing by ends.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Wanted(u32);

impl Sortable for Wanted {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }

    fn take(mut bytes: &[u8]) -> Option<Self> {
        take_u32(&mut bytes).map(Wanted)
    }

    fn held_size(&self) -> usize {
        0
    }
}

/// The places of the new files some old file's key could find by the ends
/// ([`Finder::take_by_ends`]), in order (some more than once): a new key that ends with
/// an old key after a `/` (an end of the new key is the old key), or that is an end of
/// an old key.
fn wanted(probes: Sorter<Probe>) -> io::Result<Merged<Wanted>> {
    let mut probes = probes.sorted()?;
    let mut wanted = Sorter::default();
    // The text of the run of probes gone through, and whether it is an old key and
    // an end of one (which come first in a run).
    let (mut text, mut old_key, mut old_end) = (String::new(), false, false);
    while let Some(Probe(found, kind, place)) = probes.next_record()? {
        if found != text {
            (text, old_key, old_end) = (found, false, false);
        }
        match kind {
            OLD_KEY => old_key = true,
            OLD_END => old_end = true,
            NEW_KEY if old_end => wanted.push(Wanted(place)),
            NEW_END if old_key => wanted.push(Wanted(place)),
            _ => {}
        }
    }
    wanted.sorted()
}

/// A file sorted by its place in its side (then key).
#[derive(PartialEq, Eq)]
struct ByPlace(Keyed);

impl PartialOrd for ByPlace {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByPlace {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (&self.0, &other.0);
        (a.1, &a.0, &a.2).cmp(&(b.1, &b.0, &b.2))
    }
}

impl Sortable for ByPlace {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
    }

    fn take(bytes: &[u8]) -> Option<Self> {
        Keyed::take(bytes).map(ByPlace)
    }

    fn held_size(&self) -> usize {
        self.0.held_size()
    }
}

/// The new files left after the same keys paired, in order: their keys (end to end)
/// and, in a [`Heap`] (in memory up to its size, then in a temporary file), their
/// places and records: some 12 bytes and its key a file, besides the [`Finder`]'s
/// lists.
#[derive(Default)]
struct Left {
    keys: Strings,
    /// Where each file's place and record end in `records`.
    ends: Vec<u64>,
    records: Heap,
}

impl Left {
    /// Adds the next file.
    fn push(&mut self, key: &str, at: u32, record: &[u8]) -> io::Result<()> {
        self.keys.push(key).ok_or_else(|| {
            io::Error::other("the keys of the files left to pair take 4 GiB or more")
        })?;
        let mut placed = at.to_le_bytes().to_vec();
        placed.extend_from_slice(record);
        let start = self.records.push(&placed);
        self.ends.push(start + placed.len() as u64);
        Ok(())
    }

    /// File `j`'s key, place and record.
    fn get(&self, j: u32) -> io::Result<(String, u32, Vec<u8>)> {
        let j = j as usize;
        let start = match j.checked_sub(1) {
            Some(before) => self.ends[before],
            None => 0,
        };
        let mut record = self.records.get(start, (self.ends[j] - start) as usize)?;
        let place = take_u32(&mut record.as_slice()).ok_or_else(crate::spool::broken_run)?;
        record.drain(..4);
        Ok((self.keys.get(j as u32).to_string(), place, record))
    }
}

/// Finds the new file an old file's key pairs with by the ends of their keys
/// ([`pair`]): the first not yet taken whose key ends with `/KEY` or is the end of
/// `KEY` after a `/` (an end of fewer than [`KEY_ENDS`] `/`). Each key is looked up by
/// its own text and its ends (not compared with every key: two listings naming 40,000
/// files each took 14 s so).
struct Finder<'a> {
    keys: &'a Strings,
    /// The keys' indices, by key (then index).
    exact: Runs<u32>,
    /// Each end of each key after one of its last [`KEY_ENDS`] `/`, as (key index,
    /// where the end starts in it), by the end (then the key index).
    ends: Runs<(u32, u32)>,
    /// Whether each key is taken.
    taken: Vec<bool>,
}

/// Items sorted by a text, each standing for a key, with where to go on looking in
/// each run of the same text: at the run's first place, the first place not known to
/// stand for a key taken (each taken one is walked past once over all look-ups, not
/// once each).
struct Runs<T> {
    sorted: Vec<T>,
    next: Vec<u32>,
}

impl<T: Copy> Runs<T> {
    fn new(sorted: Vec<T>) -> Self {
        // Places in a list of keys' indices or their ends: fewer than `u32::MAX` each.
        let next = (0..sorted.len() as u32).collect();
        Runs { sorted, next }
    }

    /// The key (as `key_of` gives an item's) of the first item whose text (`text_of`)
    /// is `text` and whose key is not taken.
    fn first_untaken<'t>(
        &mut self,
        text: &str,
        text_of: impl Fn(T) -> &'t str,
        key_of: impl Fn(T) -> u32,
        taken: &[bool],
    ) -> Option<u32> {
        let sorted = &self.sorted;
        let start = sorted.partition_point(|&item| text_of(item) < text);
        let end = start + sorted[start..].partition_point(|&item| text_of(item) == text);
        let mut at = self
            .next
            .get(start)
            .map_or(start, |&at| at as usize)
            .max(start);
        while at < end && taken[key_of(sorted[at]) as usize] {
            at += 1;
        }
        if let Some(slot) = self.next.get_mut(start) {
            *slot = at as u32;
        }
        (at < end).then(|| key_of(sorted[at]))
    }
}

/// How many of a key's last `/` it is matched by the ends after: paths of real dumps
/// are a few directories deep; a name with a million `/` would cost its length for
/// each of them.
const KEY_ENDS: usize = 64;

/// Where each of the ends of `key` after each of its last [`KEY_ENDS`] `/` starts.
fn key_ends(key: &str) -> impl Iterator<Item = usize> + '_ {
    key.rmatch_indices('/').take(KEY_ENDS).map(|(i, _)| i + 1)
}

impl<'a> Finder<'a> {
    fn new(keys: &'a Strings) -> Self {
        // Fewer than `u32::MAX` keys; a key's length is a `u32` (`Strings`).
        let mut sorted: Vec<u32> = (0..keys.len() as u32).collect();
        sorted.sort_by(|&a, &b| keys.get(a).cmp(keys.get(b)).then(a.cmp(&b)));
        let mut ends: Vec<(u32, u32)> = sorted
            .iter()
            .flat_map(|&i| key_ends(keys.get(i)).map(move |at| (i, at as u32)))
            .collect();
        let end = |(i, at): (u32, u32)| &keys.get(i)[at as usize..];
        ends.sort_by(|&a, &b| end(a).cmp(end(b)).then(a.0.cmp(&b.0)));
        Finder {
            keys,
            exact: Runs::new(sorted),
            ends: Runs::new(ends),
            taken: vec![false; keys.len()],
        }
    }

    /// The first key equal to `key` not taken.
    fn exact(&mut self, key: &str) -> Option<u32> {
        let keys = self.keys;
        let text_of = |i: u32| keys.get(i);
        self.exact.first_untaken(key, text_of, |i| i, &self.taken)
    }

    /// The first key not taken that ends with `/KEY` or that `KEY` ends with after a
    /// `/`, now taken.
    fn take_by_ends(&mut self, key: &str) -> Option<u32> {
        // Keys that end with `/KEY`, and keys that `KEY` ends with after a `/`.
        let keys = self.keys;
        let end = |(i, at): (u32, u32)| &keys.get(i)[at as usize..];
        let longer = self.ends.first_untaken(key, end, |e| e.0, &self.taken);
        let shorter: Vec<u32> = key_ends(key)
            .filter_map(|at| self.exact(&key[at..]))
            .collect();
        let found = longer.into_iter().chain(shorter).min();
        if let Some(i) = found {
            self.taken[i as usize] = true;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::{pair, Keys, Pair, NONE};

    /// The pairing a linear search gives, in the report's order: each old key with the
    /// first new key not taken that is the same; then each old key left with the first
    /// new key not taken that ends with `/KEY` or that `KEY` ends with after a `/`, an
    /// end of fewer than `KEY_ENDS` `/`; then the new keys left; sorted (stably) by the
    /// pair's key, the new one's when it has one.
    fn linear(old: &[String], new: &[String]) -> Vec<(u32, u32)> {
        let mut taken = vec![false; new.len()];
        let take = |taken: &mut Vec<bool>, found: Option<usize>| {
            found.map_or(NONE, |j| {
                taken[j] = true;
                j as u32
            })
        };
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (i, key) in old.iter().enumerate() {
            let found = (0..new.len()).find(|&j| !taken[j] && new[j] == *key);
            pairs.push((i as u32, take(&mut taken, found)));
        }
        let end = |long: &str, short: &str| {
            long.ends_with(&format!("/{short}")) && short.matches('/').count() < super::KEY_ENDS
        };
        for (i, j) in &mut pairs {
            if *j == NONE {
                let key = &old[*i as usize];
                let found =
                    (0..new.len()).find(|&k| !taken[k] && (end(&new[k], key) || end(key, &new[k])));
                *j = take(&mut taken, found);
            }
        }
        let left = (0..new.len() as u32).filter(|&j| !taken[j as usize]);
        pairs.extend(left.map(|j| (NONE, j)).collect::<Vec<_>>());
        let key = |&(i, j): &(u32, u32)| match j {
            NONE => old[i as usize].clone(),
            j => new[j as usize].clone(),
        };
        pairs.sort_by_key(key);
        pairs
    }

    /// The pairs [`pair`] gives, as each side's place ([`NONE`] for none); each pair's
    /// key and records checked against the keys.
    fn paired(old: &[String], new: &[String]) -> Vec<(u32, u32)> {
        let keys = |side: &[String]| {
            let mut keys = Keys::default();
            for (at, key) in side.iter().enumerate() {
                // Each file's record: its place, and its key's length, as bytes.
                let record = format!("{at}:{}", key.len()).into_bytes();
                assert!(keys.push(key, record));
            }
            assert_eq!(keys.len(), side.len());
            keys
        };
        let mut paired = pair(keys(old), keys(new)).unwrap();
        let mut pairs = Vec::new();
        while let Some(Pair {
            key,
            old: o,
            new: n,
        }) = paired.next_pair().unwrap()
        {
            let check = |side: &[String], file: &Option<(u32, Vec<u8>)>| match file {
                Some((at, record)) => {
                    let known = &side[*at as usize];
                    assert_eq!(*record, format!("{at}:{}", known.len()).into_bytes());
                    *at
                }
                None => NONE,
            };
            let (i, j) = (check(old, &o), check(new, &n));
            let expected = if j == NONE {
                &old[i as usize]
            } else {
                &new[j as usize]
            };
            assert_eq!(key, *expected);
            pairs.push((i, j));
        }
        pairs
    }

    #[test]
    fn files_pair_as_a_linear_search_pairs_them() {
        let parts = ["a", "b", "x.txt", "", "a.b"];
        // Every key of up to three parts (some empty, so `//` and ends in `/`).
        let mut keys = Vec::new();
        for n in 1..=3u32 {
            for code in 0..parts.len().pow(n) {
                let mut rest = code;
                let key: Vec<&str> = (0..n)
                    .map(|_| {
                        let part = parts[rest % parts.len()];
                        rest /= parts.len();
                        part
                    })
                    .collect();
                keys.push(key.join("/"));
            }
        }
        // Keys deeper than the ends looked at: `d/d/…/x.txt` of 60 to 70 parts, under
        // `a/` and not.
        for n in 60..=70 {
            let deep = format!("{}x.txt", "d/".repeat(n - 1));
            keys.push(format!("a/{deep}"));
            keys.push(deep);
        }
        // New sides of several sizes and orders, old keys looked up in turn (each
        // side's keys through runs of the sorter merged in several passes).
        for step in [1, 3, 7, 11] {
            // Each key twice, in two orders.
            let once = keys.iter().step_by(step);
            let new: Vec<String> = once.clone().rev().chain(once).cloned().collect();
            let old: Vec<String> = keys.iter().chain(&keys).cloned().collect();
            assert_eq!(paired(&old, &new), linear(&old, &new), "step {step}");
            assert_eq!(
                paired(&new, &old),
                linear(&new, &old),
                "step {step}, reversed"
            );
        }
        // Sides that share few keys, so that most files are left to pair by their
        // ends: every third key against every other one, from other starts.
        for (skip, step) in [(0, 2), (1, 3), (2, 5)] {
            let old: Vec<String> = keys.iter().step_by(3).cloned().collect();
            let new: Vec<String> = keys
                .iter()
                .skip(skip)
                .step_by(step)
                .rev()
                .cloned()
                .collect();
            assert_eq!(paired(&old, &new), linear(&old, &new), "skip {skip}");
            assert_eq!(
                paired(&new, &old),
                linear(&new, &old),
                "skip {skip}, reversed"
            );
        }
        // A key alone on its side finds a longer key, and a shorter one.
        let (short, long) = (["k.hlo".to_string()], ["p/k.hlo".to_string()]);
        assert_eq!(paired(&short, &long), [(0, 0)]);
        assert_eq!(paired(&long, &short), [(0, 0)]);
        // A key matched by an end does not take the file another has the same key as.
        let (old, new) = (["a/x.hlo", "b/a/x.hlo"], ["b/a/x.hlo"]);
        let (old, new) = (old.map(String::from), new.map(String::from));
        assert_eq!(paired(&old, &new), [(0, NONE), (1, 0)]);
        // Empty sides.
        assert_eq!(paired(&[], &new), [(NONE, 0)]);
        assert_eq!(paired(&old, &[]), [(0, NONE), (1, NONE)]);
        assert!(paired(&[], &[]).is_empty());
    }

    #[test]
    fn a_side_gives_its_first_key() {
        let mut keys = Keys::default();
        for key in ["b", "c", "a", "a"] {
            keys.push(key, key.as_bytes().to_vec());
        }
        assert_eq!(
            keys.first().unwrap(),
            Some(("a".to_string(), b"a".to_vec()))
        );
        assert_eq!(Keys::default().first().unwrap(), None);
    }
}
