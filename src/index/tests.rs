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

/// The digit form and the staged form agree with each other and with the reference,
/// on every index and slot (the public surface is tested in `tests/index.rs`).
fn check_layout(l: &RefLayout) {
    let plan = LayoutPlan::from_spec(spec_of(l)).unwrap();
    let staged = plan.staged();
    let rank = l.dims.len();
    for idx in all_indices(&l.dims) {
        let want = reference::nested_tiling_linear(l, &idx);
        assert_eq!(staged.linear(&idx), want, "{l:?} at {idx:?}");
        assert_eq!(plan.linear_checked(&idx), want, "{l:?} at {idx:?}");
    }
    let inverse = reference::inverse_map(l);
    // The largest slot of an element, by branch and bound (exact when it finishes).
    let largest = inverse.keys().max().copied();
    if let Some(found) = super::largest_slot_searched(staged, &l.dims) {
        assert_eq!(Some(found), largest, "{l:?}");
    }
    if let Ok(found) = staged.largest_slot(&mut (1 << 20)) {
        assert_eq!(found, largest, "{l:?}");
    }
    assert_eq!(plan.data_elements(), largest.map_or(0, |s| s + 1), "{l:?}");
    // XLA's sizes from the first tile only, by a plan of that tile alone (a plan of at
    // most one tile answers from itself).
    let mut first = spec_of(l);
    first.tiles.truncate(1);
    let first = LayoutPlan::from_spec(first).unwrap();
    assert_eq!(plan.xla_array_size(), first.allocated_bytes(), "{l:?}");
    let last: Vec<u64> = l.dims.iter().map(|&d| d.saturating_sub(1)).collect();
    let data = match rank {
        _ if l.dims.contains(&0) => 0,
        0 => 4,
        1 => 4 * (last[0] + 1),
        _ => 4 * (first.staged().linear(&last) + 1),
    };
    assert_eq!(plan.xla_array_data_size(), data, "{l:?}");
    for slot in 0..staged.grid {
        let mut a = vec![0; rank];
        let found = staged.delinear(slot, &mut a).is_some();
        assert_eq!(
            found.then_some(a),
            inverse.get(&slot).cloned(),
            "{l:?} {slot}"
        );
        if let Some(d) = plan.digits() {
            let mut b = vec![0; rank];
            let found = super::delinearize_digits(d, &l.dims, slot, &mut b);
            assert_eq!(
                found.then_some(b),
                inverse.get(&slot).cloned(),
                "{l:?} {slot}"
            );
        }
    }
}

#[test]
fn exhaustive_small_shapes() {
    let layouts = reference::small_layouts();
    for layout in &layouts {
        check_layout(layout);
        if layout.padded.is_some() {
            // Legacy padding under tiles: validation refuses it, the engine copes.
            check_layout(&RefLayout {
                tiles: vec![vec![Some(2), Some(2)]],
                ..layout.clone()
            });
        }
    }
    assert!(layouts.len() > 500);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn engine_agrees_with_reference(l in reference::arb_layout(true)) {
        check_layout(&l);
    }
}

proptest! {
    // Cheap (no slot-by-slot inverse), so many more layouts than above: a piece the
    // carried-forward search drops shows on a few layouts in a thousand.
    #![proptest_config(ProptestConfig::with_cases(4096))]
    #[test]
    fn carried_search_finds_the_largest_slot(l in reference::arb_layout(true)) {
        let plan = LayoutPlan::from_spec(spec_of(&l)).unwrap();
        let want = all_indices(&l.dims)
            .iter()
            .map(|idx| reference::nested_tiling_linear(&l, idx))
            .max();
        prop_assert_eq!(plan.staged().largest_slot(&mut { u64::MAX }), Ok(want));
    }
}

/// `data_elements()` of layouts whose sources combine dimensions: the branch and bound
/// finishes within its budget (before, `explain` walked every element: 32 s for
/// `f32[30000,30000]{1,0:T(*,128)}`) and agrees with the walk.
#[test]
fn largest_slot_search_finishes_on_combined_tilings() {
    use crate::validate::{validate_shape_with, Options};
    let plan = |text: &str| {
        let proto = crate::text::parse_shape(text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        LayoutPlan::new(shape.as_array().unwrap()).unwrap()
    };
    for text in [
        "f32[300,3000]{1,0:T(*,128)}",
        "f32[301,299]{1,0:T(2,*,128)}",
        "f32[301,299]{0,1:T(1,1000)(3)}",
        "bf16[61,70]{0,1:T(*,8,128)(2,1)}",
        "f32[7,6]{1,0:T(*,1,11,*,*,*,11,*,*,*)(1,*,*,*,*,1)(21,11,*,*,*,61,*,*,*)(1,*,*,*,*,*,*,*)(1,*)}",
    ] {
        let plan = plan(text);
        let walked = plan.physical_order().map(|(slot, _)| slot).max();
        let searched = super::largest_slot_searched(plan.staged(), plan.dimensions());
        assert_eq!(searched, walked, "{text}");
        let exact = plan.staged().largest_slot(&mut { super::LARGEST_SLOT_BUDGET });
        assert_eq!(exact, Ok(walked), "{text}");
    }
    for text in [
        "f32[30000,30000]{1,0:T(*,128)}",
        "f32[30000,3000]{1,0:T(2,*,128)}",
        "f32[3000,3000]{0,1:T(1,100000)(3)}",
    ] {
        let plan = plan(text);
        assert!(
            super::largest_slot_searched(plan.staged(), plan.dimensions()).is_some(),
            "{text}"
        );
        assert!(
            plan.staged()
                .largest_slot(&mut { super::LARGEST_SLOT_BUDGET })
                .is_ok(),
            "{text}"
        );
    }
}

/// The carried-forward search finishes where ranges of logical indices lose the link
/// between a tile's quotient and remainder: on this deep plan (a fuzz find, 3.5 million
/// elements) the search over logical boxes ran out of its budget and the walk over
/// every element took 1.3 s in release. The expected slot is that walk's (the logical
/// order, run once in release; the walk is checked against the reference above).
#[test]
fn carried_search_finishes_on_deep_plans_of_tiles_that_do_not_nest() {
    use crate::validate::{validate_shape_with, Options};
    let text = "f16[3162,1122]{1,0:T(*)(2652,613,331,*)(2,*,11232,13,*)\
                (91,3,*,11232,13,*)(91,32,12,13)}";
    let proto = crate::text::parse_shape(text).unwrap();
    let shape = validate_shape_with(&proto, Options::hlo_text())
        .into_result()
        .unwrap();
    let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
    assert_eq!(
        super::largest_slot_searched(plan.staged(), plan.dimensions()),
        None
    );
    let mut budget = super::LARGEST_SLOT_BUDGET;
    let found = plan.staged().largest_slot(&mut budget);
    assert_eq!(found, Ok(Some(1_074_495_576_046_464)));
    assert!(super::LARGEST_SLOT_BUDGET - budget < 1000, "{budget}");
    assert_eq!(plan.data_elements(), 1_074_495_576_046_465);
}

/// A `*` that merges a range with one minor value makes values that step by the
/// minor size, and a later tile cuts them by a size neither dividing nor divided by
/// that step (fuzz finds, about 600,000 elements each). Carried as ranges, every
/// piece was split down to single values and both searches ran out of budget; the
/// walk over every element took 110-270 ms in release and over 1 s under the fuzzer.
/// Carried as progressions, split by remainder, they finish inside the budget. The
/// expected slots are that walk's (the logical order, run once in release).
#[test]
fn carried_search_follows_values_that_step_through_tiles() {
    use crate::validate::{validate_shape_with, Options};
    for (text, largest, most_steps) in [
        (
            "f32[666038]{0:T(4662,*)(1,*,2142)(2,8,1,80000001,11,4)}",
            28_385_344_137_612u64,
            100,
        ),
        (
            "f32[606639]{0:T(2110,2)(1,*,1,1,16,*,54206,2)(1,*,816116,*,5,16,*,5,1)}",
            7_077_688_971_602,
            // One piece for each of the 27,103 remainders of steps of 2,110 in tiles
            // of 54,206.
            30_000,
        ),
    ] {
        let proto = crate::text::parse_shape(text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
        let mut budget = super::LARGEST_SLOT_BUDGET;
        assert_eq!(
            plan.staged().largest_slot(&mut budget),
            Ok(Some(largest)),
            "{text}"
        );
        assert!(
            super::LARGEST_SLOT_BUDGET - budget < most_steps,
            "{text}: {budget}"
        );
        assert_eq!(plan.data_elements(), largest + 1, "{text}");
    }
}
