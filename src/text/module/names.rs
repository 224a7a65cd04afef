//! [`Names`]: the names an instruction gives (its operands, the computations it calls),
//! held as one text and where each name ends.

use std::fmt;

/// Names in order, held as one text and the end of each name: four bytes a name
/// beside its bytes, where a `Vec<String>` takes some fifty (a line of a million
/// operands, `%p, %p, ...`, took some twenty-five times its bytes as strings, and
/// twice that in `diff`, which copies them).
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
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Names {
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
            .text
            .len()
            .checked_add(name.len())
            .and_then(|end| u32::try_from(end).ok())
        else {
            return false;
        };
        self.text.push_str(name);
        self.ends.push(end);
        true
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Name `i` (0 is the first).
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        self.text.get(start..end)
    }

    /// The names, in order.
    pub fn iter(&self) -> NamesIter<'_> {
        NamesIter {
            names: self,
            front: 0,
            back: self.len(),
        }
    }

    /// Removes every name (keeping the room they took).
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Gives back the room left to grow.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Keeps the first `len` names.
    pub fn truncate(&mut self, len: usize) {
        if len < self.ends.len() {
            let end = match len {
                0 => 0,
                _ => self.ends[len - 1] as usize,
            };
            self.text.truncate(end);
            self.ends.truncate(len);
        }
    }

    /// The names as strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
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
}
