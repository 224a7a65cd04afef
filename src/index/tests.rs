//! Engine tests against the independent reference (`tests/reference/`), on every index
//! of small shapes and on random layouts.

use proptest::prelude::*;

use super::spec::{Spec, TileEntry};
use super::LayoutPlan;

#[path = "../../tests/reference/mod.rs"]
mod reference;

use reference::{all_indices, RefLayout};

fn spec_of(l: &RefLayout) -> Spec {
    Spec {
        dims: l.dims.iter().map(|&d| Some(d)).collect(),
        minor_to_major: l.minor_to_major.clone(),
        padded: l.padded.clone(),
        tiles: l
            .tiles
            .iter()
            .map(|t| {
                t.iter()
                    .map(|e| e.map_or(TileEntry::Combine, TileEntry::Size))
                    .collect()
            })
            .collect(),
        element_size_in_bits: 0,
        byte_width: 4,
        tail_padding: l.tail_padding,
        split_configs: Vec::new(),
    }
}

/// Checks every post-condition of the plan against the reference, on every index.
fn check_layout(l: &RefLayout) {
    let plan = LayoutPlan::from_spec(spec_of(l)).unwrap();
    let allocated = reference::allocated(l);
    assert_eq!(plan.allocated_elements(), allocated, "{l:?}");
    let indices = all_indices(&l.dims);
    let mut seen = std::collections::HashMap::new();
    for idx in &indices {
        let want = reference::nested_tiling_linear(l, idx);
        let got = plan.linear_index(idx).unwrap();
        assert_eq!(got, want, "{l:?} at {idx:?}");
        assert!(got < allocated);
        assert!(
            seen.insert(got, idx.clone()).is_none(),
            "not injective: {l:?}"
        );
    }
    for slot in 0..allocated {
        assert_eq!(
            plan.multi_index(slot).unwrap(),
            seen.get(&slot).cloned(),
            "{l:?} slot {slot}"
        );
    }
    assert!(plan.multi_index(allocated).is_err());
    // Logical order is bump order; physical order is increasing slots.
    let logical: Vec<u64> = plan.logical_order().collect();
    let want: Vec<u64> = indices
        .iter()
        .map(|i| reference::nested_tiling_linear(l, i))
        .collect();
    assert_eq!(logical, want, "{l:?}");
    let mut slots: Vec<(u64, Vec<u64>)> = seen.into_iter().collect();
    slots.sort();
    let mut physical = Vec::new();
    let mut it = plan.physical_order();
    while let Some((slot, position)) = it.next() {
        assert_eq!(it.index(), &indices[position as usize][..], "{l:?}");
        physical.push((slot, it.index().to_vec()));
    }
    assert_eq!(physical, slots, "{l:?}");
    let data = slots.last().map_or(0, |(s, _)| s + 1);
    assert_eq!(plan.data_elements(), data, "{l:?}");
    // Strides, where given, reproduce every linear index.
    if let Some(strides) = plan.element_strides() {
        for idx in &indices {
            let dot: u64 = idx.iter().zip(&strides).map(|(e, s)| e * s).sum();
            assert_eq!(
                dot,
                plan.linear_index(idx).unwrap(),
                "{l:?} strides {strides:?}"
            );
        }
    }
    if l.tiles.is_empty() && l.padded.is_none() {
        for idx in &indices {
            assert_eq!(
                plan.linear_index(idx).unwrap(),
                reference::index_util_linear(&l.dims, &l.minor_to_major, idx)
            );
        }
        assert!(plan.element_strides().is_some());
    }
}

fn layout(
    dims: &[u64],
    m2m: &[usize],
    tiles: &[&[Option<u64>]],
    padded: Option<&[u64]>,
    tail: u64,
) -> RefLayout {
    RefLayout {
        dims: dims.to_vec(),
        minor_to_major: m2m.to_vec(),
        padded: padded.map(<[u64]>::to_vec),
        tiles: tiles.iter().map(|t| t.to_vec()).collect(),
        tail_padding: tail,
    }
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

const S: fn(u64) -> Option<u64> = Some;

#[test]
fn exhaustive_small_shapes() {
    let tile_sets: Vec<Vec<Vec<Option<u64>>>> = vec![
        vec![],
        vec![vec![S(2)]],
        vec![vec![S(3)]],
        vec![vec![S(2), S(2)]],
        vec![vec![S(2), S(3)]],
        vec![vec![S(4), S(1)]],
        vec![vec![S(2), S(4)], vec![S(2), S(1)]],
        vec![vec![S(3)], vec![S(2)]],
        vec![vec![S(4)], vec![S(3)]],
        vec![vec![S(2), S(2)], vec![S(2), S(1), S(1), S(1)]],
        vec![vec![S(2), S(1), S(3)]],
        vec![vec![S(1), S(2), S(2), S(2)]],
        vec![vec![None, S(3)]],
        vec![vec![None, S(2)], vec![S(2)]],
        vec![vec![S(2), None, S(2)]],
        vec![vec![None, None, S(4)]],
        vec![vec![S(2)], vec![None, S(2)]],
        vec![vec![S(3), S(2)], vec![S(2), S(1)]],
    ];
    let shapes: Vec<Vec<u64>> = vec![
        vec![],
        vec![0],
        vec![1],
        vec![5],
        vec![2, 3],
        vec![3, 5],
        vec![4, 1],
        vec![1, 4],
        vec![0, 3],
        vec![2, 3, 4],
        vec![3, 1, 5],
        vec![2, 2, 2, 3],
    ];
    let mut checked = 0;
    for dims in &shapes {
        for m2m in permutations(dims.len()) {
            for tiles in &tile_sets {
                let refs: Vec<&[Option<u64>]> = tiles.iter().map(Vec::as_slice).collect();
                if refs.iter().any(|t| t.len() > dims.len() + 2) {
                    continue;
                }
                let combine_ok = refs.iter().all(|t| t.last() != Some(&None));
                if !combine_ok {
                    continue;
                }
                for tail in [1, 4] {
                    check_layout(&layout(dims, &m2m, &refs, None, tail));
                    checked += 1;
                }
            }
            let padded: Vec<u64> = dims.iter().map(|d| d + 1).collect();
            check_layout(&layout(dims, &m2m, &[], Some(&padded), 1));
        }
    }
    assert!(checked > 500);
}

fn arb_layout() -> impl Strategy<Value = RefLayout> {
    (0usize..=4)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(0u64..6, rank),
                Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec(
                    proptest::collection::vec(
                        prop_oneof![4 => (1u64..6).prop_map(Some), 1 => Just(None)],
                        1..=rank + 2,
                    ),
                    0..=3,
                ),
                proptest::option::of(proptest::collection::vec(0u64..3, rank)),
                1u64..5,
            )
        })
        .prop_map(|(dims, m2m, mut tiles, pad, tail)| {
            for t in &mut tiles {
                if let Some(last) = t.last_mut() {
                    last.get_or_insert(2);
                }
            }
            let padded = pad.map(|p| dims.iter().zip(p).map(|(d, x)| d + x).collect());
            RefLayout {
                dims,
                minor_to_major: m2m,
                padded,
                tiles,
                tail_padding: tail,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn engine_agrees_with_reference(l in arb_layout()) {
        check_layout(&l);
    }
}
