//! Relayout: the seeds' pictures byte for byte (expected bytes written from the figures,
//! not from the engine), the fast path against the element-by-element reference on
//! random shapes and layout pairs, round trips, errors and `.npy` files.

use proptest::prelude::*;
use xla_shape::relayout::npy::{dtype_descr, from_npy, to_npy, NpyError};
use xla_shape::relayout::{column_major, row_major, Relayout, RelayoutError};
use xla_shape::{ArrayShape, PrimitiveType, Shape};

#[track_caller]
fn array(text: &str) -> ArrayShape {
    match text.parse::<Shape>() {
        Ok(Shape::Array(a)) => a,
        other => panic!("{text}: {other:?}"),
    }
}

/// Both paths, checked equal; the fast path's bytes.
#[track_caller]
fn move_both(from: &str, to: &str, src: &[u8]) -> Vec<u8> {
    let r = Relayout::new(&array(from), &array(to)).unwrap();
    let fast = r.to_vec(src).unwrap();
    let mut reference = vec![0xA5; r.destination_bytes()];
    r.run_reference(src, &mut reference).unwrap();
    assert_eq!(
        fast,
        reference,
        "{from} -> {to}: fast path vs reference ({})",
        r.strategy()
    );
    // Cut into pieces moved on several threads: the same bytes, whatever the count.
    for parts in [2, 3, 7, usize::MAX] {
        let mut pieces = vec![0x3C; r.destination_bytes()];
        r.run_in_parts(src, &mut pieces, parts).unwrap();
        assert_eq!(pieces, reference, "{from} -> {to} in {parts} parts");
    }
    fast
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

// ------------------------------------------------------------------ the seeds' pictures

/// shapes.md: `[2 x 3]` with `minor_to_major` `[0, 1]` is `a d b e c f`; `[1, 0]` is
/// `a b c d e f`.
#[test]
fn seeds_minor_to_major() {
    let row = b"abcdef";
    assert_eq!(move_both("u8[2,3]{1,0}", "u8[2,3]{0,1}", row), b"adbecf");
    assert_eq!(move_both("u8[2,3]{0,1}", "u8[2,3]{1,0}", b"adbecf"), row);
    assert_eq!(move_both("u8[2,3]{1,0}", "u8[2,3]{1,0}", row), row);
}

/// The 2017 shapes.md padding example: `[2 x 3]`, padded_dimensions `[3, 5]`, padding
/// value 0, column-major: `a d 0 b e 0 c f 0 0 0 0 0 0 0`.
#[test]
fn seeds_padding_example() {
    let expected = b"ad\0be\0cf\0\0\0\0\0\0\0";
    for pv in ["", "PV(zero)"] {
        let to = format!("u8[2,3]{{0,1:PD(3,5){pv}}}");
        assert_eq!(move_both("u8[2,3]{1,0}", &to, b"abcdef"), expected, "{to}");
        // And back: the padding is dropped.
        assert_eq!(move_both(&to, "u8[2,3]{1,0}", expected), b"abcdef");
    }
    // "Equivalent to the layout of [a b c 0 0 / d e f 0 0 / 0 0 0 0 0]" with the same
    // minor-to-major order, i.e. the padded array column-major.
    let picture = b"abc\0\0def\0\0\0\0\0\0\0";
    assert_eq!(move_both("u8[3,5]{1,0}", "u8[3,5]{0,1}", picture), expected);
    // A legacy padding value other than zero fills the padding slots with it.
    let ones = move_both("s16[2,3]{1,0}", "s16[2,3]{0,1:PD(3,5)PV(one)}", &[0; 12]);
    let slots: Vec<i16> = ones
        .chunks(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(slots, [0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
}

/// tiled_layout.md figure 1: `F32[3,5]{1,0:T(2,2)}`; the figure numbers each element's
/// place: rows `[0,1,4,5,8] / [2,3,6,7,10] / [12,13,16,17,20]`, 24 slots.
#[test]
fn tiled_layout_figure_1() {
    let places = [[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]];
    let values: Vec<f32> = (0..15).map(|v| v as f32 + 1.0).collect();
    let mut expected = vec![0f32; 24];
    for (i, row) in places.iter().enumerate() {
        for (j, &slot) in row.iter().enumerate() {
            expected[slot] = values[i * 5 + j];
        }
    }
    let src = f32_bytes(&values);
    let tiled = move_both("f32[3,5]{1,0}", "f32[3,5]{1,0:T(2,2)}", &src);
    assert_eq!(tiled, f32_bytes(&expected));
    assert_eq!(
        move_both("f32[3,5]{1,0:T(2,2)}", "f32[3,5]{1,0}", &tiled),
        src
    );
    // Element (2,3) is at 17.
    assert_eq!(&tiled[17 * 4..18 * 4], &values[2 * 5 + 3].to_le_bytes());
}

/// tiled_layout.md figure 2: 4x8 with `T(2,4)(2,1)` ("BF16 packing"): rows
/// `[0,2,...,14] / [1,3,...,15] / [16,18,...,30] / [17,19,...,31]`.
#[test]
fn tiled_layout_figure_2() {
    let mut expected = [0u16; 32];
    let mut src = Vec::new();
    for i in 0..4u16 {
        for j in 0..8u16 {
            let value = 0x100 + i * 8 + j;
            src.extend(value.to_le_bytes());
            let slot = (i / 2) * 16 + j * 2 + (i % 2);
            expected[usize::from(slot)] = value;
        }
    }
    let expected: Vec<u8> = expected.iter().flat_map(|v| v.to_le_bytes()).collect();
    let out = move_both("bf16[4,8]{1,0}", "bf16[4,8]{1,0:T(2,4)(2,1)}", &src);
    assert_eq!(out, expected);
    assert_eq!(
        move_both("bf16[4,8]{1,0:T(2,4)(2,1)}", "bf16[4,8]{1,0}", &out),
        src
    );
}

/// The doc draft's alternative BF16 packing: 8x8 with `T(2,4)(2,1,1,1)`, element (6,5)
/// at 51.
#[test]
fn tiled_layout_alternative_packing() {
    let src: Vec<u8> = (0..64u16).flat_map(|v| (v + 1).to_le_bytes()).collect();
    let out = move_both("bf16[8,8]{1,0}", "bf16[8,8]{1,0:T(2,4)(2,1,1,1)}", &src);
    assert_eq!(&out[51 * 2..52 * 2], &(6 * 8 + 5 + 1u16).to_le_bytes());
}

/// Sub-byte packing (xla-reference.md §5.4): element 0 is the low nibble. A 2x3 s4 array
/// transposed under E(4), and unpacked to one sign-extended byte per element.
#[test]
fn s4_packing_order() {
    // Row-major values 1, 2, 3 / -1, -2, 7: nibbles 1 2 3 F E 7.
    let packed_rows = [0x21, 0xF3, 0x7E];
    // Column-major: 1 -1 2 -2 3 7: nibbles 1 F 2 E 3 7.
    let packed_cols = [0xF1, 0xE2, 0x73];
    assert_eq!(
        move_both("s4[2,3]{1,0:E(4)}", "s4[2,3]{0,1:E(4)}", &packed_rows),
        packed_cols
    );
    assert_eq!(
        move_both("s4[2,3]{1,0:E(4)}", "s4[2,3]{1,0}", &packed_rows),
        [1, 2, 3, 0xFF, 0xFE, 7]
    );
    assert_eq!(
        move_both(
            "s4[2,3]{1,0}",
            "s4[2,3]{0,1:E(4)}",
            &[1, 2, 3, 0xFF, 0xFE, 7]
        ),
        packed_cols
    );
    // u4 zero-extends; an odd count leaves the last high nibble 0.
    assert_eq!(
        move_both("u4[3]{0:E(4)}", "u4[3]{0}", &[0xF1, 0xFE]),
        [1, 0xF, 0xE]
    );
    assert_eq!(
        move_both("u4[3]{0}", "u4[3]{0:E(4)}", &[1, 0xF, 0xE]),
        [0xF1, 0x0E]
    );
}

/// The seeds' HLO example layout, with partial tiles: moved there and back.
#[test]
fn tpu_layouts_with_partial_tiles() {
    for (from, to) in [
        (
            "bf16[3,37,300]{2,1,0}",
            "bf16[3,37,300]{2,1,0:T(8,128)(2,1)}",
        ),
        ("f32[70,130]{1,0}", "f32[70,130]{0,1:T(8,128)}"),
        ("s8[33,200]{1,0}", "s8[33,200]{1,0:T(8,128)(4,1)}"),
        ("s4[50,300]{1,0:E(4)}", "s4[50,300]{1,0:T(64,128)(8,1)E(4)}"),
        ("pred[9,20]{1,0}", "pred[9,20]{0,1:T(8,128)E(1)}"),
        ("f32[5,6,7,8]{3,2,1,0}", "f32[5,6,7,8]{1,3,0,2}"),
        ("c64[9,10]{1,0}", "c64[9,10]{0,1:T(4,4)L(3)}"),
        ("bf16[2,3,1004]{2,1,0}", "bf16[2,3,1004]{2,1,0:T(2,*,128)}"),
        ("f32[12]{0}", "f32[12]{0:T(4)(3)}"),
        ("u8[100,3]{1,0}", "u8[100,3]{1,0:T(4)(3)}"),
    ] {
        let r = Relayout::new(&array(from), &array(to)).unwrap();
        let src: Vec<u8> = (0..r.source_bytes()).map(|i| (i * 7 + 3) as u8).collect();
        let there = move_both(from, to, &src);
        let back = move_both(to, from, &there);
        // A narrower destination keeps the low bits only (pred's 8 bits to E(1)).
        if array(from).storage_bits_per_element() <= array(to).storage_bits_per_element() {
            let again = move_both(from, from, &src);
            assert_eq!(back, again, "{from} -> {to} -> {from}");
        }
    }
}

#[test]
fn fast_path_kernels_on_larger_arrays() {
    for (from, to) in [
        ("f32[300,257]{1,0}", "f32[300,257]{0,1}"),
        ("f64[40,50,6]{2,1,0}", "f64[40,50,6]{0,2,1}"),
        ("bf16[100,300]{1,0}", "bf16[100,300]{1,0:T(8,128)(2,1)}"),
        ("s4[70,90]{1,0:E(4)}", "s4[70,90]{0,1:E(4)}"),
        ("s4[300,270]{1,0:E(4)}", "s4[300,270]{0,1:E(4)}"),
        ("s4[2,257,258]{2,1,0:E(4)}", "s4[2,257,258]{2,0,1:E(4)}"),
        ("u2[33,65]{1,0:E(2)}", "u2[33,65]{0,1:T(4,32)E(2)}"),
        ("u8[64,64,3]{2,1,0}", "u8[64,64,3]{0,1,2}"),
        ("c128[20,30]{1,0}", "c128[20,30]{0,1}"),
        ("u8[130,70]{1,0}", "u8[130,70]{0,1}"),
        ("bf16[40,70]{1,0}", "bf16[40,70]{0,1}"),
        ("s8[20,300]{1,0}", "s8[20,300]{1,0:T(8,128)(4,1)}"),
        ("f32[3,40,5,33]{3,2,1,0}", "f32[3,40,5,33]{1,3,0,2}"),
        ("s4[40,50]{1,0}", "s4[40,50]{0,1:E(4)}"),
        ("f32[48,80]{1,0:T(8,128)}", "f32[48,80]{1,0:T(8,128)}"),
        ("f32[48,80]{1,0:T(8,16)}", "f32[48,80]{0,1:T(8,16)}"),
    ] {
        let r = Relayout::new(&array(from), &array(to)).unwrap();
        let src: Vec<u8> = (0..r.source_bytes())
            .map(|i| (i * 31 + i / 251) as u8)
            .collect();
        move_both(from, to, &src);
    }
}

#[test]
fn identical_tiles_copy_whole_tiles() {
    let r = Relayout::new(
        &array("f32[64,256]{1,0:T(8,128)}"),
        &array("f32[64,256]{0,1:T(8,128)}"),
    )
    .unwrap();
    // Tile-major order changes, each 8x128 tile is one run.
    assert!(r.strategy().contains("1 box"), "{}", r.strategy());
}

// ------------------------------------------------------------------ errors

#[test]
fn wrong_lengths_and_mismatches() {
    let r = Relayout::new(
        &array("bf16[3,5]{1,0}"),
        &array("bf16[3,5]{1,0:T(8,128)(2,1)}"),
    )
    .unwrap();
    assert_eq!(r.destination_bytes(), 2048);
    let e = r.to_vec(&[0; 29]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input has 29 bytes, but bf16[3,5]{1,0} needs exactly 30 bytes (every slot of the layout, padding included)"
    );
    let mut out = vec![7u8; 2047];
    let e = r.run(&[0; 30], &mut out).unwrap_err();
    assert!(matches!(
        e,
        RelayoutError::Length {
            which: "output",
            expected: 2048,
            got: 2047,
            ..
        }
    ));
    assert!(out.iter().all(|&b| b == 7), "nothing written on error");
    let e = Relayout::new(&array("f32[2,3]"), &array("f32[3,2]")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot relayout f32[2,3]{1,0} as f32[3,2]{1,0}: the element type and dimensions must be the same"
    );
    assert!(Relayout::new(&array("f32[2,3]"), &array("s32[2,3]")).is_err());
    assert!(matches!(
        Relayout::new(&array("f32[?,3]"), &array("f32[?,3]")),
        Err(RelayoutError::Plan { .. })
    ));
    // Huge shapes are refused before anything is allocated.
    let huge = Relayout::new(
        &array("u8[1000000,1000000,1000]"),
        &array("u8[1000000,1000000,1000]{0,1,2}"),
    );
    if let Ok(r) = huge {
        assert!(r.to_vec(&[0; 10]).is_err());
    }
    // Empty arrays: nothing to move, the buffer is 0 bytes (or all padding).
    assert_eq!(
        move_both("f32[0,3]{1,0}", "f32[0,3]{0,1:T(8,128)}", &[]),
        Vec::<u8>::new()
    );
}

// ------------------------------------------------------------------ logical arrays, npy

#[test]
fn row_and_column_major() {
    let s = array("f32[2,3]{0,1:T(2,2)}");
    assert_eq!(Shape::Array(row_major(&s)).to_string(), "f32[2,3]{1,0}");
    assert_eq!(Shape::Array(column_major(&s)).to_string(), "f32[2,3]{0,1}");
    assert_eq!(
        Shape::Array(row_major(&array("s4[4]{0:E(4)}"))).to_string(),
        "s4[4]{0}"
    );
}

#[test]
fn npy_round_trip_and_dtypes() {
    let shape = array("bf16[4,8]{1,0:T(2,4)(2,1)}");
    let logical: Vec<u8> = (0..32u16)
        .flat_map(|v| (0x3F80 + v).to_le_bytes())
        .collect();
    let device = move_both("bf16[4,8]{1,0}", "bf16[4,8]{1,0:T(2,4)(2,1)}", &logical);
    let npy = to_npy(&shape, &device).unwrap();
    assert!(npy.starts_with(b"\x93NUMPY"));
    let header = String::from_utf8_lossy(&npy[10..npy.len() - 64]).to_string();
    assert!(header.contains("'descr': '<u2'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    assert!(header.contains("'shape': (4, 8"), "{header}");
    assert_eq!(&npy[npy.len() - 64..], logical.as_slice());
    assert_eq!(from_npy(&shape, &npy).unwrap(), device);

    // Wrong dtype or dimensions: errors that say what is needed.
    let f32_shape = array("f32[4,8]");
    let e = from_npy(&f32_shape, &npy).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the .npy file holds dtype <u2, but f32[4,8]{1,0} needs <f4"
    );
    let e = from_npy(&array("bf16[8,4]"), &npy).unwrap_err();
    assert!(matches!(e, NpyError::Dimensions { .. }), "{e}");
    assert!(from_npy(&shape, b"not npy").is_err());
    let mut short = npy.clone();
    short.pop();
    assert!(matches!(
        from_npy(&shape, &short),
        Err(NpyError::DataLength { .. })
    ));

    assert_eq!(dtype_descr(PrimitiveType::S4), Some("|i1"));
    assert_eq!(dtype_descr(PrimitiveType::F8e4m3fn), Some("|u1"));
    assert_eq!(dtype_descr(PrimitiveType::C128), Some("<c16"));
    assert_eq!(dtype_descr(PrimitiveType::Tuple), None);
}

/// A Fortran-order, big-endian file written by hand (the header as numpy writes it).
#[test]
fn npy_fortran_order_and_big_endian() {
    fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let fortran = if fortran { "True" } else { "False" };
        npy_file(
            &format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"),
            data,
        )
    }
    // [[1, 2, 3], [4, 5, 6]] as >i2 in Fortran order: 1 4 2 5 3 6.
    let data: Vec<u8> = [1i16, 4, 2, 5, 3, 6]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let file = npy(">i2", true, "(2, 3)", &data);
    let out = from_npy(&array("s16[2,3]{1,0}"), &file).unwrap();
    let row: Vec<u8> = [1i16, 2, 3, 4, 5, 6]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(out, row);
    // s4: values must fit; the error names the element.
    let file = npy("|i1", false, "(2, 2)", &[1, 2, 0xF8, 8]);
    let e = from_npy(&array("s4[2,2]{1,0:E(4)}"), &file).unwrap_err();
    assert_eq!(
        e.to_string(),
        "element [1, 1] of the .npy file is 8, which does not fit s4"
    );
    let file = npy("|i1", false, "(2, 2)", &[1, 2, 0xF8, 7]);
    assert_eq!(
        from_npy(&array("s4[2,2]{1,0:E(4)}"), &file).unwrap(),
        [0x21, 0x78]
    );
    // ml_dtypes' bfloat16 saved by numpy: |V2.
    let file = npy("|V2", false, "(2,)", &[0x80, 0x3F, 0, 0x40]);
    assert_eq!(
        from_npy(&array("bf16[2]"), &file).unwrap(),
        [0x80, 0x3F, 0, 0x40]
    );
}

/// A header that does not parse is refused with its position and reason, in a few
/// short lines: the parser's message quoted the header's line whole (220 KB for a
/// header of 200,000 brackets). Such a header is now refused before the parser sees
/// it, as not what NumPy writes.
#[test]
fn a_long_header_that_does_not_parse_is_refused_in_a_short_message() {
    let shape = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    let file = npy_file_of(2, &header, &[]);
    let e = from_npy(&array("f32[2]"), &file).unwrap_err();
    assert!(matches!(e, NpyError::Format(_)), "{e:?}");
    let message = e.to_string();
    assert!(message.len() < 2000, "{} bytes", message.len());
    assert!(message.contains("where a dimension belongs"), "{message}");
    assert!(
        message.lines().all(|line| line.chars().count() <= 220),
        "{message}"
    );
}

/// A file cut short inside its header's length or its header says so.
#[test]
fn a_file_that_ends_inside_its_header_says_so() {
    let whole = to_npy(&array("f32[2]"), &[0; 8]).unwrap();
    for len in [8, 9, 20, 127] {
        let e = from_npy(&array("f32[2]"), &whole[..len]).unwrap_err();
        let said = e.to_string();
        let short = format!(
            "not an .npy file this tool can read: the file ends inside its header ({len} bytes"
        );
        assert!(said.starts_with(&short), "{len}: {said}");
        // Past the header's length, how long the header says it is.
        if len >= 10 {
            assert!(said.ends_with("bytes long after its first 10)"), "{said}");
        }
    }
}

// ------------------------------------------------------------------ properties

const TYPES: &[(&str, u32)] = &[
    ("u8", 8),
    ("bf16", 16),
    ("f32", 32),
    ("f64", 64),
    ("c128", 128),
    ("s4", 4),
    ("u2", 2),
    ("pred", 1),
    ("s16", 16),
];

fn arb_tile(rank: usize) -> impl Strategy<Value = String> {
    let entry = prop_oneof![
        4 => prop::sample::select(vec![1u64, 2, 3, 4, 8]).prop_map(|n| n.to_string()),
        1 => Just("*".to_string()),
    ];
    prop::collection::vec(entry, 1..=rank + 1).prop_map(|e| format!("({})", e.join(",")))
}

/// A layout for `rank` dimensions of sizes `dims` and an element of `bits` bits.
fn arb_layout(dims: Vec<u64>, bits: u32) -> impl Strategy<Value = String> {
    let rank = dims.len();
    let perm = Just((0..rank).collect::<Vec<_>>()).prop_shuffle();
    let tiles = prop::collection::vec(arb_tile(rank), 0..=2);
    let tail = prop::option::weighted(0.2, 2u64..=5);
    let packed = any::<bool>();
    let pad = prop::option::weighted(0.2, prop::collection::vec(0u64..=2, rank));
    (perm, tiles, tail, packed, pad).prop_map(move |(perm, tiles, tail, packed, pad)| {
        let m2m: Vec<String> = perm.iter().map(|k| k.to_string()).collect();
        let mut attrs = String::new();
        if !tiles.is_empty() {
            attrs.push('T');
            attrs.push_str(&tiles.concat());
        }
        if let Some(l) = tail {
            attrs.push_str(&format!("L({l})"));
        }
        if packed && bits < 8 {
            attrs.push_str(&format!("E({bits})"));
        }
        if let (Some(pad), true) = (pad, tiles.is_empty()) {
            let padded: Vec<String> = dims
                .iter()
                .zip(&pad)
                .map(|(d, p)| (d + p).to_string())
                .collect();
            attrs.push_str(&format!("PD({})", padded.join(",")));
        }
        if attrs.is_empty() {
            format!("{{{}}}", m2m.join(","))
        } else {
            format!("{{{}:{attrs}}}", m2m.join(","))
        }
    })
}

fn arb_pair() -> impl Strategy<Value = (String, String)> {
    (
        prop::collection::vec(0u64..=9, 1..=4),
        prop::sample::select(TYPES),
    )
        .prop_flat_map(|(mut dims, (ty, bits))| {
            // Mostly non-empty arrays.
            for d in &mut dims {
                if *d == 0 {
                    *d = 1 + (*d % 3);
                }
            }
            let text: Vec<String> = dims.iter().map(u64::to_string).collect();
            let base = format!("{ty}[{}]", text.join(","));
            (arb_layout(dims.clone(), bits), arb_layout(dims, bits))
                .prop_map(move |(a, b)| (format!("{base}{a}"), format!("{base}{b}")))
        })
}

fn parse(text: &str) -> Option<ArrayShape> {
    match text.parse::<Shape>() {
        Ok(Shape::Array(a)) => Some(a),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// The fast path writes exactly the reference's bytes, whatever the source holds
    /// (its padding included).
    #[test]
    fn fast_path_equals_reference((from, to) in arb_pair(), seed in any::<u64>(), parts in 2usize..9) {
        let (Some(a), Some(b)) = (parse(&from), parse(&to)) else { return Ok(()) };
        let r = Relayout::new(&a, &b).unwrap();
        prop_assume!(r.source_bytes() <= 1 << 20 && r.destination_bytes() <= 1 << 20);
        let mut x = seed | 1;
        let src: Vec<u8> = (0..r.source_bytes()).map(|_| {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            x as u8
        }).collect();
        let mut fast = vec![0x5A; r.destination_bytes()];
        r.run(&src, &mut fast).unwrap();
        let mut reference = vec![0xC3; r.destination_bytes()];
        r.run_reference(&src, &mut reference).unwrap();
        prop_assert_eq!(&fast, &reference, "{} -> {}: {}", from, to, r.strategy());
        let mut pieces = vec![0x96; r.destination_bytes()];
        r.run_in_parts(&src, &mut pieces, parts).unwrap();
        prop_assert_eq!(pieces, reference, "{} -> {} in {} parts: {}", from, to, parts, r.strategy());
    }

    /// A -> B -> A restores every element's bytes (as A -> A writes them: padding
    /// zeroed), when B's slots are at least as wide as A's.
    #[test]
    fn there_and_back((from, to) in arb_pair(), seed in any::<u8>()) {
        let (Some(a), Some(b)) = (parse(&from), parse(&to)) else { return Ok(()) };
        prop_assume!(a.storage_bits_per_element() <= b.storage_bits_per_element());
        let there = Relayout::new(&a, &b).unwrap();
        prop_assume!(there.source_bytes() <= 1 << 20 && there.destination_bytes() <= 1 << 20);
        let src: Vec<u8> = (0..there.source_bytes()).map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(seed)).collect();
        let b_bytes = there.to_vec(&src).unwrap();
        let back = Relayout::new(&b, &a).unwrap().to_vec(&b_bytes).unwrap();
        let same = Relayout::new(&a, &a).unwrap().to_vec(&src).unwrap();
        prop_assert_eq!(back, same, "{} -> {}", from, to);
    }
}

/// `data` behind `header` (padded as NumPy pads it) in an `.npy` file of format
/// version 1.0.
fn npy_file(header: &str, data: &[u8]) -> Vec<u8> {
    npy_file_of(1, header, data)
}

/// [`npy_file`] in format `version` (1.0 or 2.0).
fn npy_file_of(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
    let length = if version == 1 { 2 } else { 4 };
    let mut header = header.to_string();
    while (8 + length + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut file = vec![0x93, b'N', b'U', b'M', b'P', b'Y', version, 0];
    file.extend(&(header.len() as u32).to_le_bytes()[..length]);
    file.extend(header.as_bytes());
    file.extend(data);
    file
}

/// `f32[2]` data, `[1.5, -2.0]`, behind `header`.
fn npy_with_header(header: &str) -> Vec<u8> {
    npy_file(
        header,
        &[1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat(),
    )
}

/// Only a header of the form NumPy writes for a plain dtype reaches the header parser,
/// whose time grows some three times with each level of brackets: 150 bytes of `{` 14
/// deep took 14 s, of `[` 21 deep 60 s (the `npy` fuzz target's timeout), and 3,000
/// groups of `{` 6 deep (42 KB) 9.5 s. Each is refused at once as not that form;
/// the forms NumPy and older writers use still read.
#[test]
fn only_headers_of_numpys_form_reach_the_parser() {
    let base = "'descr': '<f4', 'fortran_order': False, 'shape': (2,)";
    for header in [
        format!("{{{base}, {}}}", "{".repeat(14)),
        format!("{{{base}, {}}}", "[".repeat(21)),
        format!("{{{base}, 'x': [{}]}}", "{{{{{{1}}}}}},".repeat(300)),
        format!(
            "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (2,)}}",
            "(".repeat(30),
            ")".repeat(30)
        ),
        "{'descr': '<f4', 'fortran_order': False}".to_string(),
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}".to_string(),
        "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}".to_string(),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}".to_string(),
        format!("{{{base}}} x"),
        // The reader multiplies the dimensions unchecked (the fuzz target's panic).
        "{'descr': '|u1', 'fortran_order': True, 'shape': (00012409149615695639775, 2), }"
            .to_string(),
        "{'descr': '|u1', 'fortran_order': True, 'shape': (4294967296, 4294967296), }".to_string(),
        "{'descr': '|b1', 'fortran_order': False, 'shape': (0, 4414, 4414444444444444444), }"
            .to_string(),
    ] {
        let e = from_npy(&array("f32[2]"), &npy_with_header(&header)).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("the header is not the dict of 'descr', 'fortran_order' and 'shape'"),
            "{header}: {said}"
        );
        assert!(said.len() < 300, "{said}");
    }
    let expected = [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat();
    for header in [
        format!("{{{base}, }}"),
        format!("{{{base}}}"),
        "{'shape': (2,), 'fortran_order': True, 'descr': '<f4'}".to_string(),
        "{\"descr\": \"<f4\", 'fortran_order' : False ,\t'shape':(2,)}".to_string(),
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, ), }".to_string(),
        // The last given of a key, as Python's dict literal keeps it.
        format!("{{{base}, 'shape': (2,)}}"),
    ] {
        let read = from_npy(&array("f32[2]"), &npy_with_header(&header));
        assert_eq!(read, Ok(expected.clone()), "{header}");
    }
}

/// The JSON lines of `fixtures/{name}`.
fn fixture_cases(name: &str) -> Vec<serde_json::Value> {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The bytes of a hex string.
fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Headers written by hand, in forms Python reads and forms it does not, in format
/// versions 1.0, 2.0 and 3.0 (`fixtures/npy_headers.jsonl`, `fixtures/generate_npy.py
/// headers`): each reads as the array `np.load` made of it, or is refused where
/// `np.load` refused it. Line breaks, comments and `\\` line ends inside the dict,
/// Python 2's `3L` (in 1.0 and 2.0 only, as NumPy reads it), a key given twice, `u''`
/// strings, `_` in a number and `0x`, `0o`, `0b` integers all read; `03`, `2l`, `2_`,
/// lists, floats, other keys and a string over a line break do not. The `npyz`
/// reader refused the line breaks, comments, `3L`, a key given twice and the
/// prefixed integers, all of which NumPy reads.
#[test]
fn npy_headers_read_as_numpy_reads_them() {
    let (mut read, mut refused) = (0, 0);
    for case in fixture_cases("npy_headers.jsonl") {
        let (text, header) = (case["shape"].as_str().unwrap(), &case["header"]);
        let version = &case["version"];
        let got = from_npy(&array(text), &hex(case["npy"].as_str().unwrap()));
        match case["data"].as_str() {
            Some(data) => {
                assert_eq!(got, Ok(hex(data)), "{header} (version {version})");
                read += 1;
            }
            None => {
                let said = got.expect_err(&format!("{header} (version {version}) reads"));
                let said = said.to_string();
                assert!(
                    said.starts_with("not an .npy file this tool can read"),
                    "{said}"
                );
                assert!(said.len() < 300, "{said}");
                refused += 1;
            }
        }
    }
    assert_eq!((read, refused), (65, 46));
}

/// `.npy` files NumPy wrote (`fixtures/npy_cases.jsonl`, `fixtures/generate_npy.py`):
/// each reads as the array NumPy held, whatever its order, byte order or format
/// version, and the file `np.save` writes of the array in the tool's dtype is the file
/// `to_npy` writes, byte for byte.
#[test]
fn npy_files_numpy_writes_read_and_are_written_as_numpy_writes_them() {
    let (mut read, mut written) = (0, 0);
    for case in fixture_cases("npy_cases.jsonl") {
        let text = case["shape"].as_str().unwrap();
        let how = case["how"].as_str().unwrap();
        let (npy, data) = (
            hex(case["npy"].as_str().unwrap()),
            hex(case["data"].as_str().unwrap()),
        );
        let shape = array(text);
        assert_eq!(from_npy(&shape, &npy).as_ref(), Ok(&data), "{text} ({how})");
        read += 1;
        if how == "save" {
            let ours = to_npy(&shape, &data).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours[..ours.len() - data.len()]),
                String::from_utf8_lossy(&npy[..npy.len() - data.len()]),
                "{text}"
            );
            assert_eq!(ours, npy, "{text}");
            written += 1;
        }
    }
    assert_eq!((read, written), (419, 129));
    // Past NumPy's rank, a header longer than version 1.0 holds is written as 2.0,
    // aligned as NumPy aligns it, and reads back.
    let shape = array(&format!("s8[{}2]", "1,".repeat(22_000)));
    let npy = to_npy(&shape, &[7, 9]).unwrap();
    assert_eq!(&npy[..8], b"\x93NUMPY\x02\x00");
    let len = u32::from_le_bytes(npy[8..12].try_into().unwrap()) as usize;
    assert_eq!((12 + len) % 64, 0);
    assert_eq!(npy[12 + len - 1], b'\n');
    assert_eq!(from_npy(&shape, &npy), Ok(vec![7, 9]));
}
