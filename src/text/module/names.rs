//! [`Names`]: the names an instruction gives (its operands, the computations it calls),
//! held as one text and where each name ends.

use std::fmt;

/// Names in order, held as one text and the end of each name: four bytes a name
/// beside its bytes, where a `Vec<String>` takes some fifty (a line of a million
/// operands, `%p, %p, ...`, took some twenty-five times its bytes as strings, and
/// twice that in `diff`, which copied them).
///
/// ```
/// use xla_shape::text::module::Names;
///
/// let names: Names = ["add.1", "p0", ""].into_iter().collect();
/// assert_eq!(names.len(), 3);
/// assert_eq!(names.get(1), Some("p0"));
/// assert_eq!(names.get(3), None);
/// assert_eq!(names.iter().collect::<Vec<_>>(), ["add.1", "p0", ""]);
/// assert_eq!(names, Names::from(vec!["add.1".to_string(), "p0".into(), "".into()]));
/// ```
///
/// The names of one instruction come from one line or one message, both under 2 GiB,
/// so that their ends fit in four bytes: a name that would end past 4 GiB is not
/// added ([`Names::push`] says so).
///
/// A clone shares the names (one count a clone), until either side changes: the
/// scanners hand each instruction's names on by reference, `diff` keeps them, and a
/// copy of a line of a million operands took as much again as the names.
#[derive(Clone, Default)]
pub struct Names {
    /// The text and ends, shared by clones; `None` for none yet.
    shared: Option<std::sync::Arc<Parts>>,
}

#[derive(Clone, Default)]
struct Parts {
    text: String,
    ends: Vec<u32>,
}

impl Names {
    /// No names.
    pub fn new() -> Self {
        Names::default()
    }

    /// Adds `name` after the others; false (and nothing added) when the names' bytes
    /// would pass `u32::MAX`, which no input under 2 GiB gives.
    pub fn push(&mut self, name: &str) -> bool {
        let Some(end) = self
            .text()
            .len()
            .checked_add(name.len())
            .and_then(|end| u32::try_from(end).ok())
        else {
            return false;
        };
        let parts = self.parts_mut();
        parts.text.push_str(name);
        parts.ends.push(end);
        true
    }

    /// The text of every name, end to end.
    fn text(&self) -> &str {
        self.shared.as_ref().map_or("", |parts| &parts.text)
    }

    /// Where each name ends in [`Names::text`].
    fn ends(&self) -> &[u32] {
        self.shared.as_ref().map_or(&[], |parts| &parts.ends)
    }

    /// The text and ends to change: copied first if a clone shares them.
    fn parts_mut(&mut self) -> &mut Parts {
        std::sync::Arc::make_mut(self.shared.get_or_insert_with(Default::default))
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends().is_empty()
    }

    /// Name `i` (0 is the first).
    pub fn get(&self, i: usize) -> Option<&str> {
        let ends = self.ends();
        let end = *ends.get(i)? as usize;
        let start = match i {
            0 => 0,
            _ => ends[i - 1] as usize,
        };
        self.text().get(start..end)
    }

    /// The names, in order.
    pub fn iter(&self) -> NamesIter<'_> {
        NamesIter {
            names: self,
            front: 0,
            back: self.len(),
        }
    }

    /// Removes every name (keeping the room they took, unless a clone shares them:
    /// the clone keeps them, and these start again from nothing).
    pub fn clear(&mut self) {
        match self.shared.as_mut().and_then(std::sync::Arc::get_mut) {
            Some(parts) => {
                parts.text.clear();
                parts.ends.clear();
            }
            None => self.shared = None,
        }
    }

    /// Gives back the room left to grow.
    pub fn shrink_to_fit(&mut self) {
        if let Some(parts) = self.shared.as_mut().and_then(std::sync::Arc::get_mut) {
            parts.text.shrink_to_fit();
            parts.ends.shrink_to_fit();
        }
    }

    /// Keeps the first `len` names.
    pub fn truncate(&mut self, len: usize) {
        let ends = self.ends();
        if len < ends.len() {
            let end = match len {
                0 => 0,
                _ => ends[len - 1] as usize,
            };
            let parts = self.parts_mut();
            parts.text.truncate(end);
            parts.ends.truncate(len);
        }
    }

    /// The names as strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        (self.text(), self.ends()) == (other.text(), other.ends())
    }
}

impl Eq for Names {}

impl std::hash::Hash for Names {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text().hash(state);
        self.ends().hash(state);
    }
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Name by name, as the strings would be.
impl Ord for Names {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.iter().cmp(other.iter())
    }
}

impl PartialOrd for Names {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A list of strings, as a `Vec<String>` is.
impl serde::Serialize for Names {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<S: AsRef<str>> FromIterator<S> for Names {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut names = Names::new();
        names.extend(iter);
        names
    }
}

impl<S: AsRef<str>> Extend<S> for Names {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for name in iter {
            self.push(name.as_ref());
        }
    }
}

impl From<Vec<String>> for Names {
    fn from(names: Vec<String>) -> Self {
        names.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Names {
    type Item = &'a str;
    type IntoIter = NamesIter<'a>;

    fn into_iter(self) -> NamesIter<'a> {
        self.iter()
    }
}

/// The names of a [`Names`], in order ([`Names::iter`]).
#[derive(Clone, Debug)]
pub struct NamesIter<'a> {
    names: &'a Names,
    front: usize,
    back: usize,
}

impl<'a> Iterator for NamesIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        self.names.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl DoubleEndedIterator for NamesIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.names.get(self.back)
    }
}

impl ExactSizeIterator for NamesIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_pushed_and_truncated() {
        let given = ["a", "", "fused_computation.3", "", "x"];
        let mut names = Names::new();
        for name in given {
            assert!(names.push(name));
        }
        assert_eq!(names.to_vec(), given);
        assert_eq!(
            names.iter().rev().collect::<Vec<_>>(),
            ["x", "", "fused_computation.3", "", "a"]
        );
        let mut both = names.iter();
        assert_eq!(
            (both.next(), both.next_back(), both.len()),
            (Some("a"), Some("x"), 3)
        );
        for len in (0..=6).rev() {
            let mut cut = names.clone();
            cut.truncate(len);
            assert_eq!(cut.to_vec(), given[..len.min(5)]);
            cut.push("z");
            assert_eq!(cut.get(len.min(5)), Some("z"));
        }
        names.clear();
        assert!(names.is_empty());
        assert_eq!(names.get(0), None);
        let (ab, b) = (Names::from_iter(["a", "b"]), Names::from_iter(["b"]));
        assert_eq!(format!("{ab:?}"), r#"["a", "b"]"#);
        assert_eq!(serde_json::to_string(&ab).unwrap(), r#"["a","b"]"#);
        // As the strings order: "ab" alone is after "a", "b".
        assert!(ab < b && Names::from_iter(["ab"]) > ab && Names::new() < ab);
    }

    /// A clone shares the names until either side changes: clearing, truncating or
    /// adding to one leaves the other as it was, and the scanners' pattern (hand a
    /// clone on, then clear and fill again) leaves the clone its own names without a
    /// copy.
    #[test]
    fn a_clone_shares_the_names_until_either_side_changes() {
        let mut names: Names = ["add.1", "p0", ""].into_iter().collect();
        let kept = names.clone();
        assert!(
            std::ptr::eq(kept.text(), names.text()),
            "shared, not copied"
        );
        names.clear();
        assert!(names.is_empty());
        assert_eq!(kept.to_vec(), ["add.1", "p0", ""]);
        names.push("q");
        assert_eq!((names.to_vec(), kept.len()), (vec!["q".to_string()], 3));
        let mut other = kept.clone();
        other.push("r");
        assert_eq!(other.to_vec(), ["add.1", "p0", "", "r"]);
        assert_eq!(kept.to_vec(), ["add.1", "p0", ""]);
        let mut cut = kept.clone();
        cut.truncate(1);
        assert_eq!((cut.to_vec(), kept.len()), (vec!["add.1".to_string()], 3));
        // Equal, and hashed alike, whether shared, copied or never filled.
        let copy: Names = kept.iter().collect();
        assert_eq!(copy, kept);
        let hash = |n: &Names| {
            use std::hash::{BuildHasher, BuildHasherDefault};
            BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(n)
        };
        assert_eq!(hash(&copy), hash(&kept));
        let mut emptied = kept.clone();
        emptied.clear();
        assert_eq!(emptied, Names::new());
        assert_eq!(hash(&emptied), hash(&Names::new()));
        // Unshared, a cleared one keeps its room.
        let mut alone: Names = ["x"; 100].into_iter().collect();
        alone.clear();
        alone.push("y");
        assert_eq!(alone.to_vec(), ["y"]);
    }
}
