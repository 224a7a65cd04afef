//! [`Names`]: the names an instruction gives (its operands, the computations it calls),
//! held as one text and where each name ends, and a name given again as which it
//! repeats.

use std::fmt;

/// Names in order, held as one text and the end of each name: four bytes a name
/// beside its bytes, where a `Vec<String>` takes some fifty (a line of a million
/// operands, `%p, %p, ...`, took some twenty-five times its bytes as strings, and
/// twice that in `diff`, which copied them). A name given again with
/// [`Names::push_again`] takes a byte or a few: which name it repeats.
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
    /// The names stored, end to end.
    text: String,
    /// Where each stored name ends in `text`.
    ends: Vec<u32>,
    /// Once a name is given again ([`Names::push_again`]): which stored name each name
    /// is. `None`: the names are the stored ones, in order.
    order: Option<Order>,
}

/// Which stored name each name is, as a varint each (a byte for any of the first 128
/// stored names), and where every [`Order::STEP`]th name's varint starts: a module
/// proto names an operand by an id of a byte or two, and an instruction of millions of
/// repeats of one id took its name's bytes and four more for each.
#[derive(Clone, Default)]
struct Order {
    bytes: Vec<u8>,
    /// Where name `k * STEP` starts in `bytes`.
    marks: Vec<u32>,
    len: usize,
}

impl Parts {
    /// Which stored name name `i` is.
    #[inline]
    fn stored(&self, i: usize) -> Option<usize> {
        match &self.order {
            None => (i < self.ends.len()).then_some(i),
            Some(order) => order.stored(i),
        }
    }

    /// Stored name `k`.
    #[inline]
    fn name(&self, k: usize) -> Option<&str> {
        let end = *self.ends.get(k)? as usize;
        let start = match k {
            0 => 0,
            _ => self.ends[k - 1] as usize,
        };
        self.text.get(start..end)
    }
}

impl Order {
    const STEP: usize = 32;

    /// Which stored name name `i` is.
    fn stored(&self, i: usize) -> Option<usize> {
        if i >= self.len {
            return None;
        }
        let mut at = self.start(i);
        self.read(&mut at).map(|k| k as usize)
    }

    /// Adds stored name `stored`; false (and nothing added) past 4 GiB of varints.
    fn push(&mut self, stored: u32) -> bool {
        if self.len % Self::STEP == 0 {
            let Ok(at) = u32::try_from(self.bytes.len()) else {
                return false;
            };
            self.marks.push(at);
        }
        let mut v = stored;
        while v >= 0x80 {
            self.bytes.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
        self.len += 1;
        true
    }

    /// The stored name at byte `at`, and `at` moved past it (`None` past the end).
    fn read(&self, at: &mut usize) -> Option<u32> {
        let mut v = 0u32;
        for shift in (0..35).step_by(7) {
            let byte = *self.bytes.get(*at)?;
            *at += 1;
            v |= u32::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// Where name `i` starts in `bytes` (`i` at most `len`).
    fn start(&self, i: usize) -> usize {
        let Some(&mark) = self.marks.get(i / Self::STEP) else {
            return self.bytes.len();
        };
        let mut at = mark as usize;
        for _ in 0..i % Self::STEP {
            self.read(&mut at);
        }
        at
    }

    /// Keeps the first `len` names.
    fn truncate(&mut self, len: usize) {
        if len < self.len {
            let at = self.start(len);
            self.bytes.truncate(at);
            self.marks.truncate(len.div_ceil(Self::STEP));
            self.len = len;
        }
    }
}

impl Names {
    /// No names.
    pub fn new() -> Self {
        Names::default()
    }

    /// Adds `name` after the others; false (and nothing added) when the names' bytes
    /// would pass `u32::MAX`, which no input under 2 GiB gives.
    pub fn push(&mut self, name: &str) -> bool {
        let stored = self.ends().len();
        let Some(end) = self
            .text()
            .len()
            .checked_add(name.len())
            .and_then(|end| u32::try_from(end).ok())
            .filter(|_| u32::try_from(stored).is_ok())
        else {
            return false;
        };
        let parts = self.parts_mut();
        if let Some(order) = parts.order.as_mut() {
            if !order.push(stored as u32) {
                return false;
            }
        }
        parts.text.push_str(name);
        parts.ends.push(end);
        true
    }

    /// Adds name `i` again after the others, held as which name it repeats (a byte or
    /// a few, where [`Names::push`] takes the name's bytes and four more): false (and
    /// nothing added) when there is no name `i`, or past 4 GiB of names.
    ///
    /// ```
    /// use xla_shape::text::module::Names;
    ///
    /// let mut names: Names = ["p0", "p1"].into_iter().collect();
    /// assert!(names.push_again(1) && names.push_again(0) && !names.push_again(4));
    /// assert_eq!(names.to_vec(), ["p0", "p1", "p1", "p0"]);
    /// assert_eq!(names, Names::from_iter(["p0", "p1", "p1", "p0"]));
    /// ```
    pub fn push_again(&mut self, i: usize) -> bool {
        let Some(stored) = self.stored(i) else {
            return false;
        };
        let parts = self.parts_mut();
        let order = parts.order.get_or_insert_with(|| {
            let mut order = Order::default();
            // Each stored name is itself, and there are fewer than `u32::MAX`.
            for k in 0..parts.ends.len() as u32 {
                order.push(k);
            }
            order
        });
        order.push(stored as u32)
    }

    /// Which stored name name `i` is.
    fn stored(&self, i: usize) -> Option<usize> {
        self.shared.as_deref()?.stored(i)
    }

    /// Stored name `k`.
    fn stored_name(&self, k: usize) -> Option<&str> {
        self.shared.as_deref()?.name(k)
    }

    /// The text of every stored name, end to end.
    fn text(&self) -> &str {
        self.shared.as_ref().map_or("", |parts| &parts.text)
    }

    /// Where each stored name ends in [`Names::text`].
    fn ends(&self) -> &[u32] {
        self.shared.as_ref().map_or(&[], |parts| &parts.ends)
    }

    /// How many names are stored (a name given again is not).
    #[cfg(test)]
    pub(crate) fn stored_len(&self) -> usize {
        self.ends().len()
    }

    /// Which stored name each name is, once one is given again.
    fn order(&self) -> Option<&Order> {
        self.shared.as_ref().and_then(|parts| parts.order.as_ref())
    }

    /// The text and ends to change: copied first if a clone shares them.
    fn parts_mut(&mut self) -> &mut Parts {
        std::sync::Arc::make_mut(self.shared.get_or_insert_with(Default::default))
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        match self.order() {
            Some(order) => order.len,
            None => self.ends().len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Name `i` (0 is the first).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&str> {
        // Read through the parts once: `diff` reads every name it holds this way,
        // many times as it sorts them.
        let parts = self.shared.as_deref()?;
        parts.name(parts.stored(i)?)
    }

    /// The names, in order.
    pub fn iter(&self) -> NamesIter<'_> {
        NamesIter {
            names: self,
            front: 0,
            back: self.len(),
            at: 0,
        }
    }

    /// Removes every name (keeping the room they took, unless a clone shares them:
    /// the clone keeps them, and these start again from nothing).
    pub fn clear(&mut self) {
        match self.shared.as_mut().and_then(std::sync::Arc::get_mut) {
            Some(parts) => {
                parts.text.clear();
                parts.ends.clear();
                if let Some(order) = parts.order.as_mut() {
                    order.bytes.clear();
                    order.marks.clear();
                    order.len = 0;
                }
            }
            None => self.shared = None,
        }
    }

    /// Gives back the room left to grow.
    pub fn shrink_to_fit(&mut self) {
        if let Some(parts) = self.shared.as_mut().and_then(std::sync::Arc::get_mut) {
            parts.text.shrink_to_fit();
            parts.ends.shrink_to_fit();
            if let Some(order) = parts.order.as_mut() {
                order.bytes.shrink_to_fit();
                order.marks.shrink_to_fit();
            }
        }
    }

    /// Keeps the first `len` names.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len() {
            return;
        }
        let parts = self.parts_mut();
        match parts.order.as_mut() {
            // The stored names stay (a name given again may be any of them).
            Some(order) => order.truncate(len),
            None => {
                let end = match len {
                    0 => 0,
                    _ => parts.ends[len - 1] as usize,
                };
                parts.text.truncate(end);
                parts.ends.truncate(len);
            }
        }
    }

    /// The names as strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }
}

impl PartialEq for Names {
    fn eq(&self, other: &Self) -> bool {
        match (self.order(), other.order()) {
            (None, None) => (self.text(), self.ends()) == (other.text(), other.ends()),
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl Eq for Names {}

/// Name by name, however they are held.
impl std::hash::Hash for Names {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for name in self {
            name.hash(state);
        }
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
    /// Where name `front` starts in the names' order, once a name is given again.
    at: usize,
}

impl<'a> Iterator for NamesIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        match self.names.order() {
            // Read on from the last, not looked for from a mark each time.
            Some(order) => {
                let stored = order.read(&mut self.at)?;
                self.names.stored_name(stored as usize)
            }
            None => self.names.get(self.front - 1),
        }
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

    /// Names given again read back as given, however they are mixed with new ones:
    /// by index, forwards, backwards, cut short and added to, cleared and filled again,
    /// and equal (and hashed alike) to the same names each pushed in full. Past 128
    /// stored names a repeat takes two bytes, and every 32nd name is marked.
    #[test]
    fn names_given_again_read_back_as_given() {
        let hash = |n: &Names| {
            use std::hash::{BuildHasher, BuildHasherDefault};
            BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(n)
        };
        let check = |names: &Names, want: &[String]| {
            assert_eq!(names.len(), want.len());
            for (i, w) in want.iter().enumerate() {
                assert_eq!(names.get(i), Some(w.as_str()), "name {i}");
            }
            assert_eq!(names.get(want.len()), None);
            assert_eq!(names.to_vec(), want);
            let back: Vec<_> = names.iter().rev().collect();
            assert!(back.iter().rev().eq(want.iter()));
            let mut both = names.iter();
            if want.len() >= 2 {
                assert_eq!(both.next(), Some(want[0].as_str()));
                assert_eq!(both.next_back(), want.last().map(String::as_str));
                assert_eq!(both.len(), want.len() - 2);
                assert!(both.eq(want[1..want.len() - 1].iter().map(String::as_str)));
            }
            let plain: Names = want.iter().collect();
            assert_eq!(&plain, names);
            assert_eq!(hash(&plain), hash(names));
        };
        // A small linear congruential sequence: which earlier name to repeat, or a
        // new one.
        let mut state = 12345u64;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let (mut names, mut want) = (Names::new(), Vec::<String>::new());
        assert!(!names.push_again(0));
        for k in 0..2000 {
            if want.is_empty() || next(3) == 0 {
                let name = format!("n{k}");
                assert!(names.push(&name));
                want.push(name);
            } else {
                let i = next(want.len() as u64) as usize;
                assert!(names.push_again(i));
                want.push(want[i].clone());
            }
        }
        assert!(!names.push_again(want.len()));
        check(&names, &want);
        for len in [1999, 1000, 129, 64, 33, 32, 31, 1, 0] {
            let mut cut = names.clone();
            cut.truncate(len);
            check(&cut, &want[..len]);
            if len > 0 {
                assert!(cut.push_again(len - 1) && cut.push("z"));
                let mut more = want[..len].to_vec();
                more.extend([want[len - 1].clone(), "z".to_string()]);
                check(&cut, &more);
            }
        }
        check(&names, &want);
        let kept = names.clone();
        names.clear();
        check(&names, &[]);
        assert!(names.push("a") && names.push_again(0) && names.push("b"));
        check(&names, &["a".into(), "a".into(), "b".into()]);
        check(&kept, &want);
        // Unshared, cleared and filled again.
        let mut alone = kept.clone();
        drop(kept);
        alone.clear();
        assert!(alone.push("q") && alone.push_again(0) && alone.push_again(1));
        check(&alone, &["q".into(), "q".into(), "q".into()]);
        alone.shrink_to_fit();
        check(&alone, &["q".into(), "q".into(), "q".into()]);
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
