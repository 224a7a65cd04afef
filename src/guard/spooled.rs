//! A list that keeps its first items in memory and the rest in a temporary file:
//! the changes and matches of a comparison ([`super::diff`]), of which there may be
//! millions (every shape of a module whose layouts all changed), each a few hundred
//! bytes with its strings (two files of a million shape lines that all differ took
//! 615 MB to compare, 23 times their text).
//!
//! [`Spooled`] keeps the first [`HELD`] items as a list and writes the rest, one JSON
//! document a line, to an anonymous temporary file that the system deletes when it is
//! dropped. Reading them back ([`Spooled::try_for_each`]) gives the same items in the
//! same order; an item that cannot be read back is an error, never a silent loss.

use std::fmt;
use std::io;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// How many items are kept in memory before the rest go to a temporary file.
pub const HELD: usize = 1024;

/// A list of items in order that can only grow at its end: the first [`HELD`] in
/// memory, the rest in a temporary file (see the module docs).
pub struct Spooled<T> {
    /// Boxed, made with the first item: a comparison of many files holds two lists a
    /// pair, most of them empty (each was 56 bytes, and is 8).
    parts: Option<Box<Parts<T>>>,
}

/// A list's items in memory, and what it has past them.
struct Parts<T> {
    held: Vec<T>,
    /// Boxed: most lists have none.
    rest: Option<Box<Rest>>,
}

/// What a list past its first [`HELD`] items has.
#[derive(Default)]
struct Rest {
    spill: Option<Spill>,
    /// Why some items could not be kept (their file could not be written or read
    /// back): reading the list fails at its end with it.
    lost: Option<String>,
}

/// The items past the first [`HELD`]: one JSON document and a newline each, as
/// records of a temporary file.
type Spill = crate::spool::Records;

impl<T> Default for Spooled<T> {
    fn default() -> Self {
        Spooled { parts: None }
    }
}

impl<T> Spooled<T> {
    /// The items held in memory: the first [`HELD`] (all of them when there are no
    /// more).
    pub fn held(&self) -> &[T] {
        self.parts.as_ref().map_or(&[], |parts| &parts.held)
    }

    /// Its parts, made if it has none yet.
    fn parts(&mut self) -> &mut Parts<T> {
        self.parts.get_or_insert_with(|| {
            Box::new(Parts {
                held: Vec::new(),
                rest: None,
            })
        })
    }

    /// What it has past its items in memory, if anything.
    fn rest(&self) -> Option<&Rest> {
        self.parts.as_ref()?.rest.as_deref()
    }

    /// The items past the first [`HELD`], if any.
    fn spill(&self) -> Option<&Spill> {
        self.rest()?.spill.as_ref()
    }

    /// Notes why some items were lost (the first reason kept).
    fn lose(&mut self, why: String) {
        self.parts()
            .rest
            .get_or_insert_with(Box::default)
            .lost
            .get_or_insert(why);
    }
}

impl<T: Serialize + DeserializeOwned> Spooled<T> {
    /// No items.
    pub fn new() -> Self {
        Spooled::default()
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.held().len() + self.spill().map_or(0, |spill| spill.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds an item at the end.
    pub fn push(&mut self, item: T) {
        if self.spill().is_none() && self.held().len() < HELD {
            self.parts().held.push(item);
            return;
        }
        if self.spill().is_none() {
            match Spill::new() {
                Ok(spill) => {
                    let rest = self.parts().rest.get_or_insert_with(Box::default);
                    rest.spill = Some(spill);
                }
                // No temporary file: the items stay in memory.
                Err(_) => {
                    self.parts().held.push(item);
                    return;
                }
            }
        }
        let rest = self.parts().rest.as_mut();
        if let Some(spill) = rest.and_then(|rest| rest.spill.as_mut()) {
            let mut encoded = Ok(());
            let pushed = spill.push(|out| {
                encoded = serde_json::to_writer(&mut *out, &item);
                out.push(b'\n');
            });
            if let Err(e) = encoded.map_err(io::Error::from).and(pushed) {
                self.lose(e.to_string());
            }
        }
    }

    /// Calls `each` on every item, in order, until it fails.
    ///
    /// # Errors
    /// The first error of `each`, or of reading the temporary file back (made into
    /// `E` by `io_error`).
    pub fn try_for_each<E>(
        &self,
        io_error: impl Fn(io::Error) -> E,
        mut each: impl FnMut(&T) -> Result<(), E>,
    ) -> Result<(), E> {
        for item in self.held() {
            each(item)?;
        }
        if let Some(spill) = self.spill() {
            let mut failed = None;
            let mut line = Vec::new();
            let read = spill.try_for_each(|record| {
                line.clear();
                record.read_until(b'\n', &mut line)?;
                let item: T = serde_json::from_slice(&line).map_err(io::Error::from)?;
                each(&item).map_err(|e| {
                    failed = Some(e);
                    io::Error::other("stopped")
                })
            });
            match (failed, read) {
                (Some(e), _) => return Err(e),
                (None, Err(e)) => return Err(io_error(e)),
                (None, Ok(())) => {}
            }
        }
        match self.rest().and_then(|rest| rest.lost.as_ref()) {
            Some(why) => Err(io_error(io::Error::other(format!(
                "some items could not be kept in their temporary file: {why}"
            )))),
            None => Ok(()),
        }
    }

    /// Every item, in order, in memory.
    ///
    /// # Errors
    /// When the temporary file cannot be read back.
    pub fn to_vec(&self) -> io::Result<Vec<T>>
    where
        T: Clone,
    {
        let mut all = Vec::with_capacity(self.len().min(HELD * 4));
        self.try_for_each(
            |e| e,
            |item| {
                all.push(item.clone());
                Ok(())
            },
        )?;
        Ok(all)
    }
}

impl<T: Serialize + DeserializeOwned + Clone> Clone for Spooled<T> {
    /// A copy, its items past the first [`HELD`] in a temporary file of its own.
    fn clone(&self) -> Self {
        let mut copy = Spooled::new();
        let read = self.try_for_each(
            |e| e,
            |item| {
                copy.push(item.clone());
                Ok(())
            },
        );
        if let Err(e) = read {
            copy.lose(e.to_string());
        }
        copy
    }
}

impl<T: Serialize + DeserializeOwned + Clone + PartialEq> PartialEq for Spooled<T> {
    /// The same items in the same order (both read back whole to be compared).
    fn eq(&self, other: &Self) -> bool {
        match (self.to_vec(), other.to_vec()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl<T: Serialize + DeserializeOwned + Clone + Eq> Eq for Spooled<T> {}

impl<T: fmt::Debug> fmt::Debug for Spooled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let more = self.spill().map_or(0, |spill| spill.len());
        let mut list = f.debug_list();
        list.entries(self.held());
        if more > 0 {
            list.entry(&format_args!("... {more} more in a temporary file"));
        }
        list.finish()
    }
}

impl<T: Serialize + DeserializeOwned> Serialize for Spooled<T> {
    /// The items as a sequence, read back from the temporary file as they are
    /// written; a read that fails is the serializer's error.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        self.try_for_each(
            |e| S::Error::custom(format!("reading the temporary file back: {e}")),
            |item| seq.serialize_element(item),
        )?;
        seq.end()
    }
}

impl<T: Serialize + DeserializeOwned> FromIterator<T> for Spooled<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut list = Spooled::new();
        items.into_iter().for_each(|item| list.push(item));
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the first [`HELD`], items go to the file and come back in order, the
    /// pending ones too; copies, comparisons and serialization see them all.
    #[test]
    fn items_past_the_held_ones_come_back_in_order() {
        for n in [0, 1, HELD, HELD + 1, HELD + 5000, 40_000] {
            let items: Vec<(usize, String)> = (0..n)
                .map(|i| (i, format!("item {i}\n\"quoted\"")))
                .collect();
            let list: Spooled<(usize, String)> = items.iter().cloned().collect();
            assert_eq!(list.len(), n);
            assert_eq!(list.to_vec().unwrap(), items);
            assert_eq!(list.held().len(), n.min(HELD));
            let copy = list.clone();
            assert!(copy == list);
            assert_eq!(
                serde_json::to_value(&list).unwrap(),
                serde_json::to_value(&items).unwrap()
            );
            // Stopping early stops there.
            let mut seen = 0;
            let stopped = list.try_for_each(
                |_| "io",
                |_| {
                    seen += 1;
                    if seen == n.min(HELD + 3) {
                        Err("stop")
                    } else {
                        Ok(())
                    }
                },
            );
            assert_eq!(stopped.is_err(), n > 0);
        }
    }
}
