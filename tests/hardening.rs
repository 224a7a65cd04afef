//! Regression tests for the findings of the hardening pass (issue 15): each failed
//! before its fix.

use std::time::{Duration, Instant};

use xla_shape::codec::{decode_any, encode_any};
use xla_shape::index::LayoutPlan;
use xla_shape::text::{self, ParseOptions};
use xla_shape::validate::{validate_shape_with, Options};
use xla_shape::MessageKind;

fn bytes(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text.replace(' ', "")).expect("hex")
}

/// Decoding then encoding is a fixed point after one round, for any kind.
#[track_caller]
fn assert_fixed_point(kind: MessageKind, input: &[u8]) -> Vec<u8> {
    let decoded = decode_any(kind, input).expect("decodes");
    let once = encode_any(&decoded);
    let again = decode_any(kind, &once).expect("our own output decodes");
    assert_eq!(again, decoded, "{}", hex::encode(input));
    assert_eq!(
        hex::encode(encode_any(&again)),
        hex::encode(&once),
        "input {}",
        hex::encode(input)
    );
    once
}

/// Finding 1: an unknown field, then a retired layout field after a field above 5
/// that ends up default. The retired copy went to the end (after the unknown field);
/// decoded again it counted as leading and moved before the unknown field.
#[test]
fn retired_layout_field_after_an_unknown_field_is_a_fixed_point() {
    let once = assert_fixed_point(MessageKind::Layout, &bytes("0d 00000000 6001 2002 6000"));
    // Where Google's runtime keeps them: both unknown to it, in their order.
    assert_eq!(hex::encode(once), "0d000000002002");
    // The same without the field that ends up default, and inside a shape.
    for (kind, input, want) in [
        (MessageKind::Layout, "0d 00000000 2002", "0d000000002002"),
        (MessageKind::Layout, "6001 2002 6000", "2002"),
        (
            MessageKind::Layout,
            "0a0101 0d00000000 6001 2002 6000 3001",
            "0a01010d0000000020023001",
        ),
        (
            MessageKind::Shape,
            "2a0b 0d00000000 6001 2002 6000",
            "2a070d000000002002",
        ),
    ] {
        let once = assert_fixed_point(kind, &bytes(input));
        assert_eq!(hex::encode(once), want, "{input}");
    }
}

/// Finding 2: with `fill_missing_layouts` off, a scalar whose layout text holds only
/// defaults (`{:L(1)}`, or a `D(` group XLA reads and drops) has an empty layout,
/// printed as nothing, as XLA prints it. XLA's parser gives a scalar its default
/// layout with or without filling, so `f32[]` reads back with the same empty layout.
#[test]
fn scalar_with_an_empty_layout_round_trips_without_filling() {
    let off = ParseOptions {
        fill_missing_layouts: false,
    };
    for input in [
        "f32[]{:L(1)}",
        "f32[]{:D(}",
        "f32[]",
        "(f32[], s32[]{:L(1)})",
    ] {
        for options in [off, ParseOptions::default()] {
            let first = text::parse_shape_with(input, options).expect(input);
            let printed = text::print_shape(&first).expect(input);
            let second = text::parse_shape_with(&printed, options).expect(&printed);
            assert_eq!(second, first, "{input} -> {printed}");
        }
    }
    let scalar = text::parse_shape_with("f32[]", off).unwrap();
    assert!(scalar.layout.is_some());
    // An array still has no layout without filling.
    let array = text::parse_shape_with("f32[2]", off).unwrap();
    assert!(array.layout.is_none());
}

/// Finding 3: the elements in memory order of a layout that runs its tile stages
/// one by one (a tile that neither divides nor covers the one before) came by testing
/// every slot, padding included: `f32[64,1]{1,0:T(1,100000000)(3)}` has 64 elements in
/// 6.4 billion slots, `f32[1]{0:T(100000000)(3)}` took 16 s to find that its one
/// element is the last. (The issue's `f32[123,456,789]{0,1,2:T(2,*,128)}` was already
/// fast on this branch; it stays here with the other large `*` layouts.)
#[test]
fn physical_order_yields_first_elements_at_once() {
    for text in [
        "f32[64,1]{1,0:T(1,100000000)(3)}",
        "f32[1]{0:T(100000000)(3)}",
        "f32[3,5,2]{0,2,1:T(100000,7)(3,5)(2)}",
        "f32[123,456,789]{0,1,2:T(2,*,128)}",
        "bf16[123,456,789]{2,1,0:T(2,*,128)(2,1)}",
        "f32[123,456,789]{2,1,0:T(2,*,128)}",
        "f32[1000000,3,1000]{0,2,1:T(2,*,128)}",
    ] {
        let proto = text::parse_shape(text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
        let start = Instant::now();
        let first: Vec<(u64, u64)> = plan.physical_order().take(64).collect();
        let again: Vec<(u64, u64)> = plan.physical_order().take(64).collect();
        let elapsed = start.elapsed();
        let count = plan.element_count().min(64);
        assert_eq!(first.len() as u64, count, "{text}");
        assert_eq!(first, again);
        for &(slot, logical) in &first {
            let index = plan.multi_index(slot).unwrap().expect("an element's slot");
            assert_eq!(plan.linear_index(&index).unwrap(), slot, "{text}");
            let row_major = index
                .iter()
                .zip(plan.dimensions())
                .fold(0u64, |acc, (&e, &d)| acc * d + e);
            assert_eq!(row_major, logical, "{text}");
        }
        assert!(first.windows(2).all(|w| w[0].0 < w[1].0), "{text}");
        assert!(elapsed < Duration::from_secs(1), "{text}: {elapsed:?}");
    }
}
