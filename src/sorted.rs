//! Lists gathered as they come and sorted once.

/// Sorts `list` by `key`, keeping of those with the same key the last given (as a
/// map's insert would). A list already in order (as XLA gives ids and numbers) is not
/// sorted again, so the sort's room (half the list) is not taken.
pub(crate) fn last_of_each<T: Copy, K: Ord>(list: &mut Vec<T>, key: impl Fn(&T) -> K) {
    // A stable sort keeps those of one key in the order given; of two alike side by
    // side, the later takes the earlier's place.
    if !list.is_sorted_by_key(&key) {
        list.sort_by_key(&key);
    }
    list.dedup_by(|later, kept| {
        let same = key(later) == key(kept);
        if same {
            *kept = *later;
        }
        same
    });
}

#[cfg(test)]
mod tests {
    /// The last given of each key is kept, in key order, whether or not the list came
    /// in order.
    #[test]
    fn the_last_given_of_each_key_is_kept_in_order() {
        let mut list = vec![(5, 'a'), (3, 'b'), (5, 'c'), (1, 'd'), (3, 'e'), (5, 'f')];
        super::last_of_each(&mut list, |&(k, _)| k);
        assert_eq!(list, [(1, 'd'), (3, 'e'), (5, 'f')]);
        let mut sorted = vec![(1, 'a'), (1, 'b'), (2, 'c'), (4, 'd'), (4, 'e')];
        super::last_of_each(&mut sorted, |&(k, _)| k);
        assert_eq!(sorted, [(1, 'b'), (2, 'c'), (4, 'e')]);
    }
}
