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

/// A few steps of xorshift, for the places size-1 dimensions go.
fn draw(state: &mut u64, below: usize) -> usize {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % below.max(1) as u64) as usize
}

/// What [`with_ones`] puts in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Inserted {
    /// Dimensions of size 1.
    Ones,
    /// Dimensions of size 0 or 1.
    Zeros,
    /// Dimensions of size 1 under the layout's first tile, each with an entry `1` or
    /// `*` (as `Ones` when the layout has no tile).
    Tiled,
}

/// `proto` with `n` dimensions put in at logical and physical places drawn from `state`
/// (some dynamic, some padded one more when the layout pads); splits follow their
/// dimension.
fn with_ones(
    proto: &crate::proto::ShapeProto,
    n: usize,
    what: Inserted,
    state: &mut u64,
) -> crate::proto::ShapeProto {
    let zeros = what == Inserted::Zeros;
    let mut out = proto.clone();
    let rank = proto.dimensions.len();
    let layout_fits = proto.layout.as_ref().is_none_or(|l| {
        let mut seen = l.minor_to_major.clone();
        seen.sort_unstable();
        seen.iter().copied().eq(0..rank as i64)
    });
    if !layout_fits {
        return out;
    }
    let mut logical: Vec<Option<usize>> = (0..proto.dimensions.len()).map(Some).collect();
    for _ in 0..n {
        let at = draw(state, logical.len() + 1);
        logical.insert(at, None);
    }
    let new_of = |old: usize| logical.iter().position(|&k| k == Some(old));
    out.dimensions = logical
        .iter()
        .map(|k| match k {
            Some(k) => proto.dimensions[*k],
            None if zeros => draw(state, 2) as i64,
            None => 1,
        })
        .collect();
    if !proto.is_dynamic_dimension.is_empty() || draw(state, 3) == 0 {
        out.is_dynamic_dimension = logical
            .iter()
            .map(|k| match k {
                Some(k) => proto.is_dynamic_dimension.get(*k).copied().unwrap_or(false),
                None => draw(state, 4) == 0,
            })
            .collect();
    }
    if let (Some(layout), Some(old)) = (out.layout.as_mut(), proto.layout.as_ref()) {
        let rank = logical.len();
        let mut minor_to_major: Vec<i64> = old
            .minor_to_major
            .iter()
            .map(|&k| new_of(k as usize).unwrap() as i64)
            .collect();
        // The one tile's entries, when the new dimensions go under it.
        let mut tile = match &mut layout.tiles[..] {
            [tile, ..]
                if what == Inserted::Tiled && tile.dimensions.len() <= old.minor_to_major.len() =>
            {
                Some(&mut tile.dimensions)
            }
            _ => None,
        };
        for (k, _) in logical.iter().enumerate().filter(|(_, k)| k.is_none()) {
            match tile.as_deref_mut() {
                Some(entries) => {
                    // Among the most minor, as many as the tile covers, and an entry
                    // for it at the same place (the tile lists the most major first).
                    let covered = entries.len();
                    let at = draw(state, covered + 1);
                    minor_to_major.insert(at, k as i64);
                    let entry = if draw(state, 2) == 0 { 1 } else { i64::MIN };
                    entries.insert(covered - at, entry);
                }
                None => {
                    let at = draw(state, minor_to_major.len() + 1);
                    minor_to_major.insert(at, k as i64);
                }
            }
        }
        if !old.padded_dimensions.is_empty() {
            layout.padded_dimensions = logical
                .iter()
                .zip(&out.dimensions)
                .map(|(k, size)| match k {
                    Some(k) => old.padded_dimensions.get(*k).copied().unwrap_or(1),
                    None => size + (draw(state, 5) == 0) as i64,
                })
                .collect();
        }
        let old_rank = proto.dimensions.len();
        for split in &mut layout.split_configs {
            let Some(p) = usize::try_from(split.dimension)
                .ok()
                .filter(|&p| p < old_rank)
            else {
                continue;
            };
            let k = new_of(old.minor_to_major[old_rank - 1 - p] as usize).unwrap() as i64;
            let at = minor_to_major.iter().position(|&m| m == k).unwrap();
            split.dimension = (rank - 1 - at) as i64;
        }
        layout.minor_to_major = minor_to_major;
    }
    out
}

/// Every answer of `whole` (a plan over every dimension) and `part` (one that leaves
/// some out) on the same shape, compared.
fn agree(whole: &LayoutPlan, part: &LayoutPlan, what: &str) {
    let rank = whole.rank();
    assert_eq!(part.rank(), rank, "{what}");
    assert_eq!(part.dimensions(), whole.dimensions(), "{what}");
    let sizes = |p: &LayoutPlan| {
        [
            p.element_count(),
            p.element_bits(),
            p.allocated_elements(),
            p.allocated_bytes(),
            p.data_elements(),
            p.data_bytes(),
            p.xla_byte_size_of(),
            p.xla_array_size(),
            p.xla_array_data_size(),
        ]
    };
    assert_eq!(sizes(part), sizes(whole), "{what}");
    for dim in 0..=rank {
        assert_eq!(
            part.xla_dimension_stride(dim),
            whole.xla_dimension_stride(dim),
            "{what} {dim}"
        );
    }
    assert_eq!(
        part.xla_unpacked_byte_strides(),
        whole.xla_unpacked_byte_strides(),
        "{what}"
    );
    // Where the whole plan's digits are not plain (a `*` or a tile of 1 over a
    // dimension of size 1 makes them so), one without those may have strides and
    // plain digits: they are checked on every index below.
    let strides = part.element_strides();
    let digits = part.dimension_digits();
    let untiled = part.is_untiled_equivalent();
    if whole.element_strides().is_some() {
        assert_eq!(strides, whole.element_strides(), "{what}");
        assert_eq!(part.byte_strides(), whole.byte_strides(), "{what}");
    }
    if whole.dimension_digits().is_some() {
        assert_eq!(digits, whole.dimension_digits(), "{what}");
    }
    assert!(untiled || !whole.is_untiled_equivalent(), "{what}");
    let answers = |index: &[u64], slot: u64| {
        if let Some(strides) = &strides {
            let by_strides: u64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
            assert_eq!(by_strides, slot, "{what} {index:?}");
        }
        if let Some(digits) = &digits {
            let by_digits: u64 = index
                .iter()
                .zip(digits)
                .flat_map(|(&i, digits)| {
                    digits.iter().map(move |&(div, modulus, stride)| {
                        (i / div) % modulus.unwrap_or(u64::MAX) * stride
                    })
                })
                .sum();
            assert_eq!(by_digits, slot, "{what} {index:?}");
        }
        if untiled {
            let plain: u64 = (0..index.len())
                .map(|k| index[k] * part.xla_dimension_stride(k).unwrap())
                .sum();
            assert_eq!(plain, slot, "{what} {index:?}");
        }
    };
    // The first elements of both orders, with their indices, and each index's answers.
    let (mut a, mut b) = (whole.logical_order(), part.logical_order());
    let mut bumped = vec![0; rank];
    for step in 0..200 {
        let slot = a.next();
        assert_eq!(b.next(), slot, "{what} logical {step}");
        assert_eq!(b.index(), a.index(), "{what} logical {step}");
        let Some(slot) = slot else { break };
        let index = a.index().to_vec();
        answers(&index, slot);
        assert_eq!(part.linear_index(&index), Ok(slot), "{what} {index:?}");
        assert_eq!(
            part.multi_index(slot),
            Ok(Some(index.clone())),
            "{what} {slot}"
        );
        if step > 0 {
            let mut by_whole = bumped.clone();
            assert_eq!(
                part.bump_indices(&mut bumped),
                whole.bump_indices(&mut by_whole)
            );
            assert_eq!(bumped, by_whole, "{what} {step}");
        }
        assert_eq!(bumped, index, "{what} {step}");
        let mut out = vec![7; rank];
        assert_eq!(part.multi_index_into(slot, &mut out), Ok(true), "{what}");
        assert_eq!(out, index, "{what}");
    }
    let (mut a, mut b) = (whole.physical_order(), part.physical_order());
    for step in 0..200 {
        let next = a.next();
        assert_eq!(b.next(), next, "{what} physical {step}");
        if next.is_none() {
            break;
        }
        assert_eq!(b.index(), a.index(), "{what} physical {step}");
    }
    for slot in (0..whole.allocated_elements().min(64)).chain([whole.allocated_elements()]) {
        assert_eq!(
            part.multi_index(slot),
            whole.multi_index(slot),
            "{what} {slot}"
        );
    }
    // Refusals: a wrong rank either way, and each dimension one past its end.
    for len in [rank.saturating_sub(1), rank + 1] {
        let index = vec![0; len];
        assert_eq!(
            part.linear_index(&index),
            whole.linear_index(&index),
            "{what}"
        );
        let mut out = vec![0; len];
        assert_eq!(
            part.multi_index_into(0, &mut out),
            whole.multi_index_into(0, &mut out.clone()),
            "{what}"
        );
    }
    for dim in 0..rank {
        let mut index = vec![0; rank];
        index[dim] = whole.dimensions()[dim];
        assert_eq!(
            part.linear_index(&index),
            whole.linear_index(&index),
            "{what} {dim}"
        );
        assert_eq!(
            part.index_in_bounds(&index),
            whole.index_in_bounds(&index),
            "{what}"
        );
    }
}

/// A plan that leaves out the dimensions taking no part answers every question as the
/// plan over all of them, on every array shape of the XLA fixtures (the HLO texts and
/// the messages, whose legacy padding text cannot write) and on each with dimensions of
/// size 1 put in at places drawn at random.
#[test]
fn a_plan_leaving_dimensions_out_answers_as_the_whole_plan() {
    use crate::validate::{validate_shape_with, Options};
    use prost::Message;
    let fixture = |name: &str| {
        let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).unwrap()
    };
    let mut cases = Vec::new();
    for line in fixture("hlo_shapes.jsonl").lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(text) = case["text"].as_str().filter(|_| case["ok"] == true) {
            if let Ok(proto) = crate::text::parse_shape(text) {
                cases.push((text.to_string(), proto, Options::hlo_text()));
            }
        }
    }
    for line in fixture("messages.jsonl").lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if case["message"] != "shape" {
            continue;
        }
        let bytes = hex::decode(case["hex"].as_str().unwrap()).unwrap();
        if let Ok(proto) = crate::proto::ShapeProto::decode(bytes.as_slice()) {
            cases.push((case["id"].to_string(), proto, Options::proto()));
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15;
    let (mut compared, mut left_out, mut padded, mut split) = (0, 0, 0, 0);
    let (mut empty, mut tiled, mut nested) = (0, 0, 0);
    for (name, proto, options) in &cases {
        for (ones, what) in [
            (0, Inserted::Ones),
            (1, Inserted::Ones),
            (3, Inserted::Ones),
            (9, Inserted::Ones),
            (4, Inserted::Zeros),
            (1, Inserted::Tiled),
            (2, Inserted::Tiled),
            (4, Inserted::Tiled),
            (6, Inserted::Tiled),
        ] {
            let proto = with_ones(proto, ones, what, &mut state);
            let Ok(shape) = validate_shape_with(&proto, *options).into_result() else {
                continue;
            };
            let Some(array) = shape.as_array() else {
                continue;
            };
            let what = format!("{name} with {ones} ({what:?}): {shape}");
            match (
                LayoutPlan::new_keeping(array, usize::MAX),
                LayoutPlan::new_keeping(array, 0),
            ) {
                (Ok(whole), Ok(part)) => {
                    assert!(whole.squeeze().is_none());
                    if part.squeeze().is_some() {
                        left_out += 1;
                        padded += usize::from(part.has_legacy_padding());
                        split += usize::from(!part.spec.split_configs.is_empty());
                        empty += usize::from(part.element_count() == 0);
                        tiled += usize::from(part.spec.tiles != whole.spec.tiles);
                        nested += usize::from(
                            part.spec.tiles.len() > 1 && part.spec.tiles != whole.spec.tiles,
                        );
                    }
                    agree(&whole, &part, &what);
                    compared += 1;
                }
                (whole, part) => assert_eq!(part.err(), whole.err(), "{what}"),
            }
        }
    }
    let counts = [compared, left_out, padded, split, empty, tiled, nested];
    assert!(
        compared > 6_000
            && left_out > 4_000
            && padded > 20
            && split > 20
            && empty > 500
            && tiled > 120
            && nested > 20,
        "{counts:?}"
    );
}

/// A search step costs one unit of its budget on every plan of XLA's own shapes
/// (`fixtures/hlo_shapes.jsonl`, 934 plans, staged or not), so their searches go
/// as they always did. On a plan of 294 tiles over 65 dimensions (a fuzz find: 10 µs a
/// step, and 160 ms in release before its search gave way to sorted windows after its
/// only element) a step costs several, and the order still ends after that element.
#[test]
fn a_search_step_costs_by_the_sizes_the_plan_holds() {
    use crate::validate::{validate_shape_with, Options};
    let plan_of = |text: &str| {
        let proto = crate::text::parse_shape(text).ok()?;
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .ok()?;
        LayoutPlan::new(shape.as_array()?).ok()
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
    let mut plans = 0;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(plan) = case["text"].as_str().and_then(plan_of) {
            assert_eq!(plan.staged().step_cost, 1, "{line}");
            plans += 1;
        }
    }
    assert!(plans > 900, "{plans}");
    let found = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/artifacts/layout_plan/timeout-3a67733a2143583a5ac0d65f01ae422dc252deb9"
    );
    let found = std::fs::read_to_string(found).unwrap();
    let layout = found.trim().strip_prefix("f32[]{:").unwrap();
    let ones = vec!["1"; 65].join(",");
    let order: Vec<String> = (0..65).rev().map(|d| d.to_string()).collect();
    let plan = plan_of(&format!("f32[{ones}]{{{}:{layout}", order.join(","))).unwrap();
    // Its stages and final shape hold 4,262 sizes.
    assert_eq!(plan.staged().step_cost, 16);
    let elements: Vec<(u64, u64)> = plan.physical_order().collect();
    assert_eq!(elements, vec![(0, 0)]);
}
