//! HLO text: printer and parser against XLA's own test cases (reference §7), XLA's
//! bytes (reference §1.7, §8), the fixtures generated with jaxlib, round trips, and
//! whole-module scans.

use std::path::Path as FsPath;

use proptest::prelude::*;
use prost::Message;
use xla_shape::proto::{
    LayoutProto, PrimitiveType, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto,
};
use xla_shape::text::{self, module, ParseOptions};

const MIN: i64 = i64::MIN;

#[track_caller]
fn shape(input: &str) -> ShapeProto {
    match text::parse_shape(input) {
        Ok(shape) => shape,
        Err(e) => panic!("{input:?} should parse: {}", e.render(input)),
    }
}

/// The parse error, lowercased and without a final period, for comparing with XLA's
/// messages (ours follow the crate's lowercase, no-period style).
#[track_caller]
fn parse_err(input: &str) -> String {
    match text::parse_shape(input) {
        Ok(shape) => panic!("{input:?} should not parse, got {shape:?}"),
        Err(e) => e.message().to_string(),
    }
}

#[track_caller]
fn assert_err(input: &str, xla_message: &str) {
    let ours = parse_err(input);
    let want = xla_message.trim_end_matches('.').to_lowercase();
    assert!(
        ours.to_lowercase().contains(&want),
        "{input:?}: got {ours:?}, want {want:?}"
    );
}

fn bytes(spaced_hex: &str) -> Vec<u8> {
    hex::decode(spaced_hex.replace(' ', "")).unwrap()
}

fn array(ty: PrimitiveType, dims: &[i64], m2m: Option<&[i64]>) -> ShapeProto {
    ShapeProto {
        element_type: ty as i32,
        dimensions: dims.to_vec(),
        is_dynamic_dimension: vec![false; dims.len()],
        layout: m2m.map(|m2m| Box::new(layout(m2m))),
        ..ShapeProto::default()
    }
}

fn layout(m2m: &[i64]) -> LayoutProto {
    LayoutProto {
        minor_to_major: m2m.to_vec(),
        tail_padding_alignment_in_elements: 1,
        ..LayoutProto::default()
    }
}

fn tiles(list: &[&[i64]]) -> Vec<TileProto> {
    list.iter()
        .map(|dims| TileProto {
            dimensions: dims.to_vec(),
        })
        .collect()
}

fn of(ty: PrimitiveType) -> ShapeProto {
    ShapeProto {
        element_type: ty as i32,
        ..ShapeProto::default()
    }
}

fn tuple(elements: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::Tuple as i32,
        tuple_shapes: elements,
        ..ShapeProto::default()
    }
}

fn print(shape: &ShapeProto) -> String {
    text::print_shape(shape).unwrap()
}

fn print_layout(layout: &LayoutProto) -> String {
    text::print_layout(layout).unwrap()
}

// Reference §7 rows 16-29: layout_test ToString.
#[test]
fn layout_to_string() {
    let base = layout(&[3, 2, 1, 0]);
    assert_eq!(print_layout(&LayoutProto::default()), "{}");
    assert_eq!(print_layout(&layout(&[1, 2, 0])), "{1,2,0}");
    let tiled = LayoutProto {
        tiles: tiles(&[&[42, 123], &[4, 5]]),
        ..base.clone()
    };
    assert_eq!(print_layout(&tiled), "{3,2,1,0:T(42,123)(4,5)}");
    let combined = LayoutProto {
        tiles: tiles(&[&[MIN, MIN, 42, 123]]),
        ..base.clone()
    };
    assert_eq!(print_layout(&combined), "{3,2,1,0:T(*,*,42,123)}");
    let tail = LayoutProto {
        tail_padding_alignment_in_elements: 100,
        ..base.clone()
    };
    assert_eq!(print_layout(&tail), "{3,2,1,0:L(100)}");
    let index = LayoutProto {
        index_primitive_type: PrimitiveType::U32 as i32,
        ..base.clone()
    };
    assert_eq!(print_layout(&index), "{3,2,1,0:#(u32)}");
    let pointer = LayoutProto {
        pointer_primitive_type: PrimitiveType::U16 as i32,
        ..base.clone()
    };
    assert_eq!(print_layout(&pointer), "{3,2,1,0:*(u16)}");
    let element = LayoutProto {
        element_size_in_bits: 42,
        ..base.clone()
    };
    assert_eq!(print_layout(&element), "{3,2,1,0:E(42)}");
    let memory = LayoutProto {
        memory_space: 3,
        ..base.clone()
    };
    assert_eq!(print_layout(&memory), "{3,2,1,0:S(3)}");
    let split = LayoutProto {
        split_configs: vec![
            SplitConfigProto {
                dimension: 0,
                split_indices: vec![3],
            },
            SplitConfigProto {
                dimension: 1,
                split_indices: vec![0, 4],
            },
        ],
        ..layout(&[0, 1])
    };
    assert_eq!(print_layout(&split), "{0,1:SC(0:3)(1:0,4)}");
    let physical = LayoutProto {
        physical_shape: Some(Box::new(array(
            PrimitiveType::S32,
            &[10, 20],
            Some(&[1, 0]),
        ))),
        ..layout(&[0, 1])
    };
    assert_eq!(print_layout(&physical), "{0,1:P(s32[10,20]{1,0})}");
    let prefix = LayoutProto {
        dynamic_shape_metadata_prefix_bytes: 123,
        ..layout(&[0, 1])
    };
    assert_eq!(print_layout(&prefix), "{0,1:M(123)}");
    let all = LayoutProto {
        tiles: tiles(&[&[42, 123], &[4, 5]]),
        tail_padding_alignment_in_elements: 100,
        element_size_in_bits: 42,
        ..base
    };
    assert_eq!(print_layout(&all), "{3,2,1,0:T(42,123)(4,5)L(100)E(42)}");
    // Row 29: a tile prints as `(7,8)`.
    let one_tile = LayoutProto {
        tiles: tiles(&[&[7, 8]]),
        ..LayoutProto::default()
    };
    assert_eq!(print_layout(&one_tile), "{:T(7,8)}");
}

// Reference §7 rows 30-34: layout_util_test HumanStringWithTiling.
#[test]
fn human_string_with_tiling() {
    let mut s = array(PrimitiveType::F32, &[2, 3, 4], Some(&[0, 1, 2]));
    assert_eq!(print(&s), "f32[2,3,4]{0,1,2}");
    s.layout.as_mut().unwrap().tiles = tiles(&[&[512, 1024]]);
    assert_eq!(print(&s), "f32[2,3,4]{0,1,2:T(512,1024)}");
    s.layout.as_mut().unwrap().tiles = tiles(&[&[512]]);
    assert_eq!(print(&s), "f32[2,3,4]{0,1,2:T(512)}");

    let mut s = array(PrimitiveType::Bf16, &[2, 3, 4], Some(&[1, 2, 0]));
    s.layout.as_mut().unwrap().tiles = tiles(&[&[16, 256], &[2, 1]]);
    assert_eq!(print(&s), "bf16[2,3,4]{1,2,0:T(16,256)(2,1)}");

    let mut s = array(PrimitiveType::Pred, &[8, 8, 8], Some(&[0, 2, 1]));
    s.layout.as_mut().unwrap().tiles = tiles(&[&[8, 128]]);
    assert_eq!(print(&s), "pred[8,8,8]{0,2,1:T(8,128)}");
    s.layout.as_mut().unwrap().element_size_in_bits = 32;
    assert_eq!(print(&s), "pred[8,8,8]{0,2,1:T(8,128)E(32)}");
    s.layout.as_mut().unwrap().tiles.clear();
    assert_eq!(print(&s), "pred[8,8,8]{0,2,1:E(32)}");

    let mut s = array(PrimitiveType::Bf16, &[2, 3, 1004], Some(&[2, 1, 0]));
    s.layout.as_mut().unwrap().tiles = tiles(&[&[2, MIN, 128]]);
    assert_eq!(print(&s), "bf16[2,3,1004]{2,1,0:T(2,*,128)}");
    let mut s = array(PrimitiveType::Bf16, &[8, 2, 3, 1004], Some(&[3, 2, 1, 0]));
    s.layout.as_mut().unwrap().tiles = tiles(&[&[2, MIN, MIN, 128]]);
    assert_eq!(print(&s), "bf16[8,2,3,1004]{3,2,1,0:T(2,*,*,128)}");
}

// Reference §7 rows 35-42: shape_test ShapeToString and friends.
#[test]
fn shape_to_string() {
    let opaque = of(PrimitiveType::OpaqueType);
    let token = of(PrimitiveType::Token);
    let scalar = array(PrimitiveType::F32, &[], Some(&[]));
    let matrix = array(PrimitiveType::U32, &[1, 2], Some(&[1, 0]));
    let matrix_col = array(PrimitiveType::S32, &[3, 4], Some(&[0, 1]));
    let plain = |s: &ShapeProto| text::print_shape_without_layout(s).unwrap();
    assert_eq!(plain(&opaque), "opaque[]");
    assert_eq!(plain(&token), "token[]");
    assert_eq!(plain(&scalar), "f32[]");
    assert_eq!(plain(&matrix), "u32[1,2]");
    assert_eq!(plain(&matrix_col), "s32[3,4]");
    assert_eq!(print(&opaque), "opaque[]");
    assert_eq!(print(&token), "token[]");
    assert_eq!(print(&scalar), "f32[]");
    assert_eq!(print(&matrix), "u32[1,2]{1,0}");
    assert_eq!(print(&matrix_col), "s32[3,4]{0,1}");

    let mut tiled_scalar = scalar.clone();
    tiled_scalar.layout.as_mut().unwrap().tiles = tiles(&[&[256]]);
    assert_eq!(print(&tiled_scalar), "f32[]{:T(256)}");

    let buffer = ShapeProto {
        element_type: PrimitiveType::Buffer as i32,
        tuple_shapes: vec![array(PrimitiveType::S32, &[3, 4], Some(&[1, 0]))],
        ..ShapeProto::default()
    };
    assert_eq!(print(&buffer), "b(s32[3,4]{1,0})");

    let four = tuple(vec![opaque, scalar, matrix.clone(), matrix_col]);
    assert_eq!(plain(&four), "(opaque[], f32[], u32[1,2], s32[3,4])");
    assert_eq!(
        print(&four),
        "(opaque[], f32[], u32[1,2]{1,0}, s32[3,4]{0,1})"
    );
    let nested = tuple(vec![four.clone(), matrix.clone(), token]);
    assert_eq!(
        plain(&nested),
        "((opaque[], f32[], u32[1,2], s32[3,4]), u32[1,2], token[])"
    );

    let mut dynamic = array(PrimitiveType::F32, &[23, 44, 55], None);
    dynamic.is_dynamic_dimension = vec![true, false, true];
    assert_eq!(print(&dynamic), "f32[<=23,44,<=55]");
    dynamic.is_dynamic_dimension[2] = false;
    assert_eq!(print(&dynamic), "f32[<=23,44,55]");
    let mut unbounded = array(PrimitiveType::F32, &[MIN, 784], None);
    unbounded.is_dynamic_dimension = vec![true, false];
    assert_eq!(print(&unbounded), "f32[?,784]");

    // Row 42: ProgramShape::ToString with six unnamed parameters.
    let program = ProgramShapeProto {
        parameters: vec![
            of(PrimitiveType::OpaqueType),
            array(PrimitiveType::F32, &[], Some(&[])),
            matrix.clone(),
            array(PrimitiveType::S32, &[3, 4], Some(&[0, 1])),
            four.clone(),
            matrix,
        ],
        result: Some(nested),
        parameter_names: vec![String::new(); 6],
    };
    let printed = text::program_shape_to_string(&program).unwrap();
    assert!(
        printed.starts_with("((unknown): opaque[], (unknown): f32[], "),
        "{printed}"
    );
    assert!(
        printed.ends_with(") -> ((opaque[], f32[], u32[1,2], s32[3,4]), u32[1,2], token[])"),
        "{printed}"
    );
}

// The `/*index=i*/` annotation before every fifth tuple element (reference §4.1).
#[test]
fn tuple_index_comments() {
    let six = tuple(vec![array(PrimitiveType::F32, &[], Some(&[])); 6]);
    assert_eq!(
        print(&six),
        "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])"
    );
    assert_eq!(text::parse_shape(&print(&six)).unwrap(), six);
}

// Reference §7 rows 43-59: hlo_parser_test shapes.
#[test]
fn parser_cases() {
    assert_eq!(
        shape("f32[123,456]"),
        array(PrimitiveType::F32, &[123, 456], Some(&[1, 0]))
    );
    let unbounded = shape("f32[?,784]");
    assert_eq!(unbounded.dimensions, [MIN, 784]);
    assert_eq!(unbounded.is_dynamic_dimension, [true, false]);
    let pair = shape("(f32[1572864],s8[5120,1024])");
    assert_eq!(pair.element_type, PrimitiveType::Tuple as i32);
    assert_eq!(pair.tuple_shapes.len(), 2);
    assert_eq!(pair.tuple_shapes[1].dimensions, [5120, 1024]);
    assert_eq!(
        shape("f32[123,456]{0,1}").layout.unwrap().minor_to_major,
        [0, 1]
    );
    let combined = shape("f32[123,456,789]{0,1,2:T(2, * , 128)}");
    assert_eq!(combined.layout.unwrap().tiles, tiles(&[&[2, MIN, 128]]));
    let two = shape("bf16[123,456,789]{2,1,0:T(2,*,128)(2,1)}");
    assert_eq!(two.layout.unwrap().tiles, tiles(&[&[2, MIN, 128], &[2, 1]]));
    assert_err(
        "f32[123,456,789]{1:T(2, * , 128)}",
        "Dimensions size is 3, but minor to major size is 1.",
    );
    let packed = shape("s4[123,456]{1,0:T(2,128)E(4)}").layout.unwrap();
    assert_eq!(packed.tiles, tiles(&[&[2, 128]]));
    assert_eq!(packed.element_size_in_bits, 4);
    assert_eq!(
        shape("pred[123,456]{1,0:T(2,128)S(3)}")
            .layout
            .unwrap()
            .memory_space,
        3
    );
    assert_eq!(
        shape("pred[123,456]{1,0:S(3)}")
            .layout
            .unwrap()
            .memory_space,
        3
    );
    assert_eq!(
        shape("f32[123,456]{1,0:T(16,128)M(1024)}")
            .layout
            .unwrap()
            .dynamic_shape_metadata_prefix_bytes,
        1024
    );
    let split = |dimension, indices: &[i64]| SplitConfigProto {
        dimension,
        split_indices: indices.to_vec(),
    };
    assert_eq!(
        shape("pred[123,456]{1,0:T(2,128)S(3)SC(1:200)}")
            .layout
            .unwrap()
            .split_configs,
        [split(1, &[200])]
    );
    assert_eq!(
        shape("pred[123,456]{1,0:S(3)SC(0:10)(1:4,5)}")
            .layout
            .unwrap()
            .split_configs,
        [split(0, &[10]), split(1, &[4, 5])]
    );
    assert_eq!(
        shape("pred[123,456]{1,0:SC(1:50,200)}")
            .layout
            .unwrap()
            .split_configs,
        [split(1, &[50, 200])]
    );
    for bad in [
        "f32[123,456]foobar{0,1}",
        "f32[123,456]{foo}",
        "f32[123,456]dense{foo}",
    ] {
        parse_err(bad);
    }
    assert_eq!(shape("f32[123,<=456]").is_dynamic_dimension, [false, true]);
    let dynamic_pair = shape("(f32[42], u32[<=123,<=456])");
    assert_eq!(
        dynamic_pair.tuple_shapes[1].is_dynamic_dimension,
        [true, true]
    );
    assert_err("b()", "expected primitive type");
    assert_err("b(s32[], f32[])", "expects ')' at the end of buffer shape");
    let buffer = shape("b(s32[])");
    assert_eq!(buffer.element_type, PrimitiveType::Buffer as i32);
    assert_eq!(
        buffer.tuple_shapes[0].element_type,
        PrimitiveType::S32 as i32
    );
    assert_err(
        "f32[10,10]{1,0:D(X,C)}",
        "expected a DimLevelType abbreviation",
    );
    assert_err(
        "f32[10,10]{1,0:T(128,8)P(f32[10,10])}",
        "Layout has physical shape, but is not for a sparse array",
    );
    let spaced = shape("f32[ 1, 2,3, 4, 5]{0, 1, 2,3, 4 }");
    assert_eq!(spaced.dimensions, [1, 2, 3, 4, 5]);
    assert_eq!(spaced.layout.unwrap().minor_to_major, [0, 1, 2, 3, 4]);
}

// Reference §7 rows 80-81 are 2023-24 behaviour; HEAD XLA parses the `D(...)` group and
// drops it (reference §4.2), so these now parse, keeping everything else.
#[test]
fn dim_level_types_are_parsed_and_dropped() {
    let unique = shape("f32[123]{0:D(D+~)}");
    assert_eq!(unique, array(PrimitiveType::F32, &[123], Some(&[0])));
    assert_eq!(
        shape("f32[10,10]{1,0:D(C)}"),
        array(PrimitiveType::F32, &[10, 10], Some(&[1, 0]))
    );
    let tiled = shape("f32[10,10]{1,0:D(D,C)T(128,8)}");
    assert_eq!(tiled.layout.as_ref().unwrap().tiles, tiles(&[&[128, 8]]));
    assert!(tiled.layout.unwrap().dim_level_types.is_empty());
    // D comes first; after T it is out of order.
    assert_err("f32[1]{0:T(1)D(D)}", "expects layout to end with '}'");
}

// Reference §4.2: fixed attribute order, the `{` rule, `#`/`*` types, scalars.
#[test]
fn parser_rules() {
    assert_err("f32[3]{0:S(1)L(2)}", "expects layout to end with '}'");
    assert_err("f32[3]{0:E(4)E(4)}", "expects layout to end with '}'");
    assert_err("f32[2]{}", "extra content after shape");
    assert!(text::parse_layout("{}").is_ok());
    assert_eq!(
        shape("f32[]").layout.unwrap().minor_to_major,
        Vec::<i64>::new()
    );
    assert_eq!(shape("u32[]{:S(2)}").layout.unwrap().memory_space, 2);
    assert_eq!(
        shape("f32[2,3]{1,0:#(u32)*(u16)}")
            .layout
            .unwrap()
            .pointer_primitive_type,
        PrimitiveType::U16 as i32
    );
    assert_err("f32[2]{0:#(bogus)}", "expected primitive type");
    assert_err("tuple[]", "expected primitive type");
    assert_err("buffer[]", "expected primitive type");
    assert_err("opaque_type[]", "expected primitive type");
    assert_eq!(shape("opaque[]"), of(PrimitiveType::OpaqueType));
    assert_eq!(shape("token[]"), of(PrimitiveType::Token));
    assert_err("f32[-1]", "invalid dimension size -1");
    assert_err(
        "f32[2]{0:L(0)}",
        "tail padding alignment must be at least 1",
    );
    assert_err("f32[2]{0:T(-3)}", "tile dimension -3 is negative");
    // Comments anywhere between tokens, including XLA's tuple index comments.
    let commented = shape("( f32[2] /* a */ , // rest of line\n /*index=1*/s8[] )");
    assert_eq!(commented.tuple_shapes.len(), 2);
    assert_err("f32[1]/* open", "unterminated '/*' comment");
}

// Reference §1.7 and §8: the bytes XLA's ToProto writes.
#[test]
fn bytes_as_xla_writes_them() {
    assert_eq!(
        shape("f32[2,3]{1,0}").encode_to_vec(),
        bytes("10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00")
    );
    assert_eq!(shape("token[]").encode_to_vec(), bytes("10 11"));
    let layout = text::parse_layout("{1,0:T(8,128)(2,1)E(4)S(1)SC(1:512)}").unwrap();
    assert_eq!(
        layout.encode_to_vec(),
        bytes("0a 02 01 00 32 05 0a 03 08 80 01 32 04 0a 02 02 01 38 04 40 01 80 01 01 8a 01 06 08 01 12 02 80 04")
    );
    assert_eq!(
        text::print_layout(&layout).unwrap(),
        "{1,0:T(8,128)(2,1)E(4)S(1)SC(1:512)}"
    );
}

// Reference §2.2: an old-schema layout with padding and format, through our extension.
#[test]
fn legacy_fields_round_trip() {
    let old = ShapeProto::decode(
        &bytes("10 0b 1a 02 02 03 2a 0c 0a 02 01 00 12 02 03 05 18 01 20 01")[..],
    )
    .unwrap();
    let printed = print(&old);
    assert_eq!(printed, "f32[2,3]{1,0:PD(3,5)PV(zero)F(dense)}");
    let back = shape(&printed);
    let (a, b) = (back.layout.unwrap(), old.layout.clone().unwrap());
    assert_eq!(
        (a.padded_dimensions, a.padding_value, a.format),
        (b.padded_dimensions, b.padding_value, b.format)
    );
    // XLA ignores retired fields, so its printer shows the modern part only.
    assert_eq!(text::print_shape_as_xla(&old).unwrap(), "f32[2,3]{1,0}");
    let sparse = ShapeProto::decode(&bytes("10 0b 1a 01 64 2a 04 20 02 28 0a")[..]).unwrap();
    assert_eq!(print(&sparse), "f32[100]{:F(sparse)MS(10)}");
    let back = shape("f32[100]{:F(sparse)MS(10)}").layout.unwrap();
    assert_eq!((back.format, back.max_sparse_elements), (2, 10));
    let levels = shape("f32[2,3]{0,1:PD(3,5)PV(zero)DL(C,S)DU(1,0)DO(0,1)}");
    let levels = levels.layout.unwrap();
    assert_eq!(levels.dim_level_types, [1, 2]);
    assert_eq!(
        (levels.dim_unique, levels.dim_ordered),
        (vec![true, false], vec![false, true])
    );
}

#[test]
fn errors_render_with_a_caret() {
    let input = "f32[2,3]{0}";
    let err = text::parse_shape(input).unwrap_err();
    assert_eq!(err.span(), 8..11);
    assert_eq!(
        err.render(input),
        "dimensions size is 2, but minor to major size is 1\n  f32[2,3]{0}\n          ^^^"
    );
}

#[test]
fn program_shapes() {
    let entry = "{(f32[4,8]{1,0}, f32[8,4]{1,0}, f32[3]{0}, s8[2]{0}, bf16[], /*index=5*/f32[5,5]{1,0})->(f32[4,4]{1,0}, s8[2]{0})}";
    let program = text::parse_program_shape(entry).unwrap();
    assert_eq!(program.parameters.len(), 6);
    assert_eq!(program.parameter_names, vec![String::new(); 6]);
    assert_eq!(
        text::print_program_shape(&program).unwrap(),
        entry.trim_start_matches('{').trim_end_matches('}')
    );
    let named = text::parse_program_shape("(a.1: f32[2], b: s32[]) -> f32[]").unwrap();
    assert_eq!(named.parameter_names, ["a.1", "b"]);
    assert_eq!(
        text::print_program_shape(&named).unwrap(),
        "(a.1: f32[2]{0}, b: s32[])->f32[]"
    );
    assert!(text::parse_program_shape("(f32[2], b: s32[])->f32[]").is_err());
}

// Nesting: XLA's limit of 32768, with no recursion in the parser or printer.
#[test]
fn deep_nesting_is_safe() {
    let deep = |n: usize| format!("{}f32[]{}", "(".repeat(n), ")".repeat(n));
    let err = text::parse_shape(&deep(100_000)).unwrap_err();
    assert!(err.message().contains("nest deeper than 32768"), "{err}");
    let err = text::parse_shape(&"b(".repeat(100_000)).unwrap_err();
    assert!(err.message().contains("nest deeper than 32768"), "{err}");
    // The deepest accepted input parses and prints back; dropping the nested protos
    // recurses in prost's generated code, so do it on a thread with room for that.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let input = deep(text::MAX_NESTING);
            let parsed = text::parse_shape(&input).unwrap();
            assert_eq!(text::print_shape(&parsed).unwrap(), input);
            assert!(text::parse_shape(&deep(text::MAX_NESTING + 1)).is_err());
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn exact_printer_refuses_what_text_cannot_carry() {
    let mut s = array(PrimitiveType::F32, &[2], Some(&[0]));
    s.layout.as_mut().unwrap().memory_space = 300;
    let err = text::print_shape(&s).unwrap_err();
    assert_eq!(err.path().to_string(), "layout.memory_space");
    // XLA narrows it to 8 bits, and prints that.
    assert_eq!(text::print_shape_as_xla(&s).unwrap(), "f32[2]{0:S(44)}");
    let bad_type = ShapeProto {
        element_type: 2000,
        ..ShapeProto::default()
    };
    assert!(text::print_shape(&bad_type).is_err());
    let nested = tuple(vec![tuple(vec![bad_type])]);
    // Inside a tuple, XLA's parser would reject it as an invalid element.
    let err = text::print_shape(&nested).unwrap_err();
    assert_eq!(err.path().to_string(), "tuple_shapes[0].tuple_shapes[0]");
    assert!(err.message().contains("unknown element type 2000"), "{err}");
}

// --- Round trips over generated shapes ---------------------------------------------

fn type_strategy() -> impl Strategy<Value = i32> {
    prop::sample::select(
        (1..=36)
            .filter(|&t| ![13, 14, 17, 34].contains(&t))
            .collect::<Vec<i32>>(),
    )
}

fn layout_strategy(rank: usize) -> impl Strategy<Value = LayoutProto> {
    let m2m = Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle();
    let tile = prop::collection::vec(prop_oneof![1i64..300, Just(MIN)], 0..3)
        .prop_map(|dimensions| TileProto { dimensions });
    let split =
        (0i64..4, prop::collection::vec(0i64..100, 0..3)).prop_map(|(dimension, split_indices)| {
            SplitConfigProto {
                dimension,
                split_indices,
            }
        });
    (
        m2m,
        prop::collection::vec(tile, 0..3),
        1i64..5,
        prop_oneof![Just(0), Just(6), Just(8)],
        -2i64..40,
        -128i64..128,
        prop::collection::vec(split, 0..2),
        -3i64..2000,
        prop::collection::vec(0i64..50, 0..3),
        0i32..7,
        0i32..4,
    )
        .prop_map(
            move |(
                m2m,
                tiles,
                tail,
                index,
                element,
                memory,
                splits,
                prefix,
                padded,
                pad,
                format,
            )| {
                LayoutProto {
                    minor_to_major: m2m,
                    tiles,
                    tail_padding_alignment_in_elements: tail,
                    index_primitive_type: index,
                    pointer_primitive_type: index,
                    element_size_in_bits: element,
                    memory_space: memory,
                    split_configs: splits,
                    dynamic_shape_metadata_prefix_bytes: prefix,
                    padded_dimensions: padded,
                    padding_value: pad,
                    format,
                    ..LayoutProto::default()
                }
            },
        )
}

fn array_strategy() -> impl Strategy<Value = ShapeProto> {
    (
        type_strategy(),
        prop::collection::vec((0i64..5000, 0u8..4), 0..5),
    )
        .prop_flat_map(|(ty, dims)| {
            let rank = dims.len();
            (Just(ty), Just(dims), layout_strategy(rank)).prop_map(|(ty, dims, layout)| {
                ShapeProto {
                    element_type: ty,
                    dimensions: dims
                        .iter()
                        .map(|&(d, kind)| if kind == 3 { MIN } else { d })
                        .collect(),
                    is_dynamic_dimension: dims.iter().map(|&(_, kind)| kind >= 2).collect(),
                    layout: Some(Box::new(layout)),
                    ..ShapeProto::default()
                }
            })
        })
}

/// An array XLA's validation accepts (XLA's parser validates tuple elements): a
/// permutation, positive tiles, no sparse-only or retired fields.
fn valid_array_strategy() -> impl Strategy<Value = ShapeProto> {
    array_strategy().prop_map(|mut array| {
        // Small enough that the byte size fits in int64.
        for size in &mut array.dimensions {
            if *size != MIN {
                *size %= 100;
            }
        }
        if let Some(layout) = array.layout.as_deref_mut() {
            *layout = LayoutProto {
                minor_to_major: std::mem::take(&mut layout.minor_to_major),
                tiles: std::mem::take(&mut layout.tiles)
                    .into_iter()
                    .filter(|t| !t.dimensions.is_empty())
                    .collect(),
                tail_padding_alignment_in_elements: layout.tail_padding_alignment_in_elements,
                element_size_in_bits: layout.element_size_in_bits.max(0),
                memory_space: layout.memory_space,
                ..LayoutProto::default()
            };
        }
        array
    })
}

fn buffer(array: ShapeProto) -> ShapeProto {
    ShapeProto {
        element_type: PrimitiveType::Buffer as i32,
        tuple_shapes: vec![array],
        ..ShapeProto::default()
    }
}

/// Any printable shape: a top-level array or buffer may hold anything (XLA's parser
/// does not validate them), tuple elements are valid.
fn shape_strategy() -> impl Strategy<Value = ShapeProto> {
    let leaf = prop_oneof![
        4 => valid_array_strategy(),
        1 => Just(of(PrimitiveType::Token)),
        1 => Just(of(PrimitiveType::OpaqueType)),
        1 => valid_array_strategy().prop_map(buffer),
    ];
    let tuples = leaf.prop_recursive(3, 24, 7, |inner| {
        prop::collection::vec(inner, 0..7).prop_map(tuple)
    });
    prop_oneof![
        2 => array_strategy(),
        1 => array_strategy().prop_map(buffer),
        3 => tuples,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn print_then_parse_is_identity(s in shape_strategy()) {
        let printed = text::print_shape(&s).unwrap();
        let parsed = text::parse_shape(&printed)
            .map_err(|e| TestCaseError::fail(e.render(&printed)))?;
        prop_assert_eq!(&parsed, &s, "{}", printed);
        prop_assert_eq!(text::print_shape(&parsed).unwrap(), printed);
    }

    #[test]
    fn any_text_parses_or_errors_with_a_renderable_span(input in "\\PC{0,60}") {
        for result in [
            text::parse_shape(&input).map(|_| ()),
            text::parse_layout(&input).map(|_| ()),
            text::parse_program_shape(&input).map(|_| ()),
        ] {
            if let Err(e) = result {
                prop_assert!(e.span().start <= input.len());
                let rendered = e.render(&input);
                prop_assert!(rendered.starts_with(e.message()));
            }
        }
    }

    #[test]
    fn module_scans_never_panic(
        lines in prop::collection::vec("[a-z0-9%\\[\\]{}(),:<=?*#/\" =TSLEPM.-]{0,50}", 0..8),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let input = lines.join("\n");
        let line_count = lines.len().max(1);
        let (_, findings) = scan_text(&input);
        for finding in findings {
            let line = finding.line.unwrap_or(0);
            prop_assert!(line >= 1 && line <= line_count + 1, "{finding:?}");
            prop_assert!(finding.column.unwrap_or(0) >= 1);
        }
        let mut check = module::validate_proto;
        let _ = module::scan_proto(&bytes, &mut check, &mut |_| {});
    }

    #[test]
    fn parsing_never_panics(input in "[a-z0-9\\[\\]{}(),:<=?*#/ TLESCPMD+~-]{0,40}") {
        if let Ok(parsed) = text::parse_shape(&input) {
            // What parses prints back to text that parses to the same proto.
            if let Ok(printed) = text::print_shape(&parsed) {
                prop_assert_eq!(text::parse_shape(&printed).unwrap(), parsed);
            }
        }
    }
}

// --- Fixtures generated with jaxlib ------------------------------------------------

fn fixture_lines(name: &str) -> Option<Vec<serde_json::Value>> {
    let path = FsPath::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let content = std::fs::read_to_string(path).ok()?;
    Some(
        content
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect(),
    )
}

/// Every string in `fixtures/hlo_shapes.jsonl`: XLA's bytes where XLA accepts it, an
/// error where XLA rejects it, and XLA's text when printed back.
#[test]
fn hlo_shapes_fixture_matches_xla() {
    let Some(records) = fixture_lines("hlo_shapes.jsonl") else {
        return;
    };
    assert!(records.len() >= 500, "only {} hlo shapes", records.len());
    let mut failures = Vec::new();
    for record in &records {
        let input = record["text"].as_str().unwrap();
        let ok = record["ok"].as_bool().unwrap();
        match (text::parse_shape(input), ok) {
            (Ok(parsed), true) => {
                if let Some(want) = record["xla_hex"].as_str() {
                    let got = hex::encode(parsed.encode_to_vec());
                    if got != want {
                        failures.push(format!("{input:?}: bytes {got} != xla {want}"));
                    }
                }
                if let Some(want) = record["xla_text"].as_str() {
                    match text::print_shape_as_xla(&parsed) {
                        Ok(got) if got == want => {}
                        got => failures.push(format!("{input:?}: text {got:?} != xla {want:?}")),
                    }
                }
            }
            (Err(e), true) => failures.push(format!("{input:?}: xla accepts, we say {e}")),
            (Ok(parsed), false) => failures.push(format!(
                "{input:?}: xla rejects ({}), we parse {parsed:?}",
                record["error"]
            )),
            (Err(_), false) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// For every fixture message XLA printed, our XLA-mode printer gives the same text.
#[test]
fn messages_fixture_text_matches_xla() {
    let Some(records) = fixture_lines("messages.jsonl") else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for record in &records {
        let Some(want) = record["xla"]["text"].as_str() else {
            continue;
        };
        let raw = hex::decode(record["hex"].as_str().unwrap()).unwrap();
        let got = match record["message"].as_str().unwrap() {
            "shape" => ShapeProto::decode(&raw[..])
                .map_err(|e| e.to_string())
                .and_then(|s| text::print_shape_as_xla(&s).map_err(|e| e.to_string())),
            "layout" => LayoutProto::decode(&raw[..])
                .map_err(|e| e.to_string())
                .and_then(|l| text::print_layout_as_xla(&l).map_err(|e| e.to_string())),
            "program-shape" => ProgramShapeProto::decode(&raw[..])
                .map_err(|e| e.to_string())
                .and_then(|p| text::print_program_shape_as_xla(&p).map_err(|e| e.to_string())),
            _ => continue,
        };
        checked += 1;
        if got.as_deref() != Ok(want) {
            failures.push(format!("{}: {got:?} != xla {want:?}", record["id"]));
        }
    }
    assert!(
        checked >= 50,
        "only {checked} fixture messages with XLA text"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn module_files(suffix: &str) -> Vec<std::path::PathBuf> {
    let dir = FsPath::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

fn scan_text(input: &str) -> (module::Summary, Vec<xla_shape::report::Finding>) {
    let mut findings = Vec::new();
    let mut check = module::validate_text;
    let summary =
        module::scan_text(input.as_bytes(), &mut check, &mut |f| findings.push(f)).unwrap();
    (summary, findings)
}

#[test]
fn real_modules_validate() {
    for path in module_files(".hlo.txt") {
        let input = std::fs::read_to_string(&path).unwrap();
        let (summary, findings) = scan_text(&input);
        assert!(summary.shapes > 0, "{}: no shapes found", path.display());
        assert!(findings.is_empty(), "{}: {findings:?}", path.display());
    }
    for path in module_files(".hlo.pb") {
        let input = std::fs::read(&path).unwrap();
        let mut findings = Vec::new();
        let mut check = module::validate_proto;
        let summary = module::scan_proto(&input, &mut check, &mut |f| findings.push(f)).unwrap();
        assert!(summary.shapes > 0, "{}: no shapes found", path.display());
        assert!(findings.is_empty(), "{}: {findings:?}", path.display());
    }
}

/// A module as `compiled.as_text()` printed it (jax 0.10.2, CPU), used when the
/// fixtures' modules are not there.
const SMALL_MODULE: &str = r#"HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0}, f32[8,4]{1,0}, f32[3]{0}, s8[2]{0}, bf16[], /*index=5*/f32[5,5]{1,0})->(f32[4,4]{1,0}, s8[2]{0})}

%fused_computation (param_0: f32[4,8], param_1: f32[8,4]) -> f32[4,4] {
  %param_0 = f32[4,8]{1,0} parameter(0)
  %param_1 = f32[8,4]{1,0} parameter(1)
  ROOT %dot_general.0 = f32[4,4]{1,0} dot(%param_0, %param_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general f32[9]{0:" stack_frame_id=3}
}

ENTRY %main.2 (a.1: f32[4,8], b.1: f32[8,4], c.1: f32[3], d.1: s8[2], e.1: bf16[], g.1: f32[5,5]) -> (f32[4,4], s8[2]) {
  %a.1 = f32[4,8]{1,0} parameter(0), metadata={op_name="a"}
  %b.1 = f32[8,4]{1,0} parameter(1), metadata={op_name="b"}
  %c.1 = f32[3]{0} parameter(2), metadata={op_name="c"}
  %d.1 = s8[2]{0} parameter(3), metadata={op_name="d"}
  %e.1 = bf16[] parameter(4), metadata={op_name="e"}
  %g.1 = f32[5,5]{1,0} parameter(5), metadata={op_name="g"}
  %ynn_fusion = f32[4,4]{1,0} fusion(f32[4,8]{1,0} %a.1, f32[8,4]{1,0} %b.1), kind=kCustom, calls=%fused_computation
  ROOT %tuple = (f32[4,4]{1,0}, s8[2]{0}) tuple(%ynn_fusion, %d.1) /* f32[2]{7} */
}
"#;

#[test]
fn corrupted_layout_is_reported_at_its_line_and_column() {
    let real = module_files(".hlo.txt");
    let modules: Vec<String> = if real.is_empty() {
        vec![SMALL_MODULE.to_string()]
    } else {
        real.iter()
            .take(5)
            .map(|p| std::fs::read_to_string(p).unwrap())
            .chain([SMALL_MODULE.to_string()])
            .collect()
    };
    for original in modules {
        let (_, findings) = scan_text(&original);
        assert!(findings.is_empty(), "{findings:?}");
        // Corrupt the first `{1,0}` layout on an instruction line into `{1,1}`.
        let Some((line_index, line)) = original
            .lines()
            .enumerate()
            .find(|(_, l)| l.starts_with("  ") && l.contains(" = ") && l.contains("]{1,0}"))
        else {
            continue;
        };
        let brace = line.find("]{1,0}").unwrap() + 1;
        // The shape starts at the type word before the dimensions' '['.
        let open = line[..brace].rfind('[').unwrap();
        let start = line[..open]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        let corrupted_line = format!("{}{{1,1}}{}", &line[..brace], &line[brace + 5..]);
        let corrupted: String = original
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i == line_index {
                    corrupted_line.clone()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let (_, findings) = scan_text(&corrupted);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(
            (findings[0].line, findings[0].column),
            (Some(line_index + 1), Some(start + 1)),
            "{findings:?}"
        );
        assert!(
            findings[0].path_and_message().contains("minor_to_major[1]"),
            "{findings:?}"
        );

        // A broken layout is a parse error at the layout.
        let broken_line = format!("{}{{1,0,2}}{}", &line[..brace], &line[brace + 5..]);
        let broken = original.replacen(line, &broken_line, 1);
        let (_, findings) = scan_text(&broken);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(
            (findings[0].line, findings[0].column),
            (Some(line_index + 1), Some(brace + 1))
        );
    }
}

#[test]
fn module_scan_ignores_strings_and_comments() {
    let (summary, findings) = scan_text(SMALL_MODULE);
    assert!(findings.is_empty(), "{findings:?}");
    // One shape per place (a tuple is one shape): header 6 parameters + 1 result;
    // signatures 2 + 1 and 6 + 1; instructions 3 results; 8 results + 2 operand shapes.
    assert_eq!(summary.shapes, 7 + 3 + 7 + 3 + 10);
    // The short form (HloPrintOptions::ShortParsable) has no `%` before names.
    let (short, findings) = scan_text(&SMALL_MODULE.replace('%', ""));
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(short.shapes, summary.shapes);
    let options = ParseOptions {
        fill_missing_layouts: false,
    };
    assert!(text::parse_shape_with("f32[4,8]", options)
        .unwrap()
        .layout
        .is_none());
}

/// `Display` of a validated shape is XLA's text; `FromStr` parses and validates.
#[test]
fn domain_types_display_as_xla_prints() {
    use xla_shape::{Layout, ProgramShape, Shape};
    let Some(records) = fixture_lines("hlo_shapes.jsonl") else {
        return;
    };
    let mut shown = 0;
    for record in &records {
        let (Some(input), Some(want)) = (record["text"].as_str(), record["xla_text"].as_str())
        else {
            continue;
        };
        if let Ok(shape) = input.parse::<Shape>() {
            let text = shape.to_string();
            if text != want && text.contains("M(-") {
                // XLA stores a negative M(n) but does not print it (its text loses
                // it); `Display` keeps it, so that it reads back.
                continue;
            }
            assert_eq!(shape.to_string(), want, "{input}");
            assert_eq!(want.parse::<Shape>().unwrap(), shape);
            shown += 1;
        }
    }
    assert!(shown >= 500, "only {shown} valid fixture shapes");
    let layout: Layout = "{1,0:T(8,128)(2,1)}".parse().unwrap();
    assert_eq!(layout.to_string(), "{1,0:T(8,128)(2,1)}");
    let program: ProgramShape = "(f32[2]{0}, s32[])->(f32[], token[])".parse().unwrap();
    assert_eq!(program.to_string(), "(f32[2]{0}, s32[])->(f32[], token[])");
    // Parses, but is invalid: a permutation is required.
    let err = "f32[2,3]{1,1}".parse::<Shape>().unwrap_err();
    assert!(matches!(err, text::FromTextError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains("layout.minor_to_major[1]"),
        "{err}"
    );
}

/// Inputs where our parser and XLA's disagree, with the reason. Each must still
/// disagree (so a fix elsewhere shows up here and the entry is removed).
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// `tests/data/xla_parser_cases.jsonl`: hand-written probes of XLA's parser corners and
/// random (partly mutated) shape strings, with XLA's verdict, bytes and text, from
/// `tests/data/xla_parser_cases.py` (jaxlib 0.10.2).
#[test]
fn xla_parser_cases() {
    let path = FsPath::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/xla_parser_cases.jsonl");
    let content = std::fs::read_to_string(path).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in content.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let input = record["text"].as_str().unwrap();
        count += 1;
        let agrees = match (text::parse_shape(input), record["ok"].as_bool().unwrap()) {
            (Ok(parsed), true) => {
                let bytes = hex::encode(parsed.encode_to_vec());
                let printed = text::print_shape_as_xla(&parsed).ok();
                let want_bytes = record["xla_hex"].as_str().unwrap();
                let want_text = record["xla_text"].as_str().unwrap();
                if bytes != want_bytes || printed.as_deref() != Some(want_text) {
                    failures.push(format!(
                        "{input:?}: {bytes} {printed:?} != xla {want_bytes} {want_text:?}"
                    ));
                }
                bytes == want_bytes
            }
            (Err(_), false) => true,
            (Ok(_), false) => false,
            (Err(_), true) => false,
        };
        let known = KNOWN_DIFFERENCES.iter().find(|(known, _)| *known == input);
        match (agrees, known) {
            (true, Some((_, why))) => {
                failures.push(format!("{input:?} now agrees with xla ({why})"))
            }
            (false, None) => failures.push(format!("{input:?}: xla ok={}", record["ok"])),
            _ => {}
        }
    }
    assert!(count >= 2000, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `--xla_dump_hlo_as_proto` writes an `HloProto` (the module in field 1); an
/// `HloSnapshot` wraps that again. The scan finds the module inside either.
#[test]
fn module_protos_inside_hlo_proto_and_snapshot() {
    fn wrap(field: u8, inner: &[u8]) -> Vec<u8> {
        let mut out = vec![field << 3 | 2];
        let mut len = inner.len();
        while len >= 0x80 {
            out.push((len as u8 & 0x7f) | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
        out.extend_from_slice(inner);
        out
    }
    let scan = |bytes: &[u8]| {
        let mut findings = Vec::new();
        let mut check = module::validate_proto;
        module::scan_proto(bytes, &mut check, &mut |f| findings.push(f)).unwrap();
        findings
    };
    // Corrupt a minor_to_major [1,0] into [1,1] (the first place where those bytes are
    // a layout's).
    let pattern = [0x0a, 0x02, 0x01, 0x00];
    let Some((module, direct)) = module_files(".hlo.pb")
        .into_iter()
        .map(|p| std::fs::read(p).unwrap())
        .flat_map(|bytes| {
            let spots: Vec<usize> = (0..bytes.len().saturating_sub(3))
                .filter(|&i| bytes[i..i + 4] == pattern)
                .collect();
            spots.into_iter().map(move |at| {
                let mut corrupted = bytes.clone();
                corrupted[at + 3] = 0x01;
                corrupted
            })
        })
        .map(|corrupted| {
            let findings = scan(&corrupted);
            (corrupted, findings)
        })
        .find(|(_, findings)| !findings.is_empty())
    else {
        assert!(
            module_files(".hlo.pb").is_empty(),
            "no [1,0] layout to corrupt"
        );
        return;
    };
    assert!(
        direct[0].path.contains(".layout.minor_to_major[1]"),
        "{direct:?}"
    );
    // An HloProto: hlo_module = 1, plus a buffer_assignment = 3 the scan must skip.
    let mut hlo_proto = wrap(1, &module);
    hlo_proto.extend(wrap(3, &[0x0a, 0x00]));
    let wrapped = scan(&hlo_proto);
    assert_eq!(wrapped.len(), direct.len());
    for (a, b) in direct.iter().zip(&wrapped) {
        assert_eq!(format!("hlo_module.{}", a.path), b.path);
    }
    let snapshot = wrap(1, &hlo_proto);
    let wrapped = scan(&snapshot);
    assert_eq!(wrapped.len(), direct.len());
    assert!(
        wrapped[0].path.starts_with("hlo.hlo_module.computations["),
        "{wrapped:?}"
    );
}

/// What XLA's parser would reject is refused by the exact printer, so `convert --to
/// hlo` never writes text that does not read back.
#[test]
fn exact_printer_refuses_what_does_not_parse_back() {
    // minor_to_major of the wrong length (an empty layout message on f32[2,3]).
    let mut s = array(PrimitiveType::F32, &[2, 3], Some(&[]));
    let err = text::print_shape(&s).unwrap_err();
    assert_eq!(err.path().to_string(), "layout.minor_to_major");
    // XLA's printer prints it anyway (`f32[2,3]{}`), and so does ours in XLA mode.
    assert_eq!(text::print_shape_as_xla(&s).unwrap(), "f32[2,3]{}");
    // A physical shape on an array.
    s.layout = Some(Box::new(LayoutProto {
        physical_shape: Some(Box::new(array(PrimitiveType::S32, &[10], Some(&[0])))),
        ..layout(&[1, 0])
    }));
    let err = text::print_shape(&s).unwrap_err();
    assert_eq!(err.path().to_string(), "layout.physical_shape");
    // An invalid tuple element (XLA's parser validates tuple elements).
    let bad = tuple(vec![array(PrimitiveType::F32, &[2], Some(&[0])), {
        let mut a = array(PrimitiveType::F32, &[2], Some(&[0]));
        a.layout.as_mut().unwrap().tiles = tiles(&[&[0]]);
        a
    }]);
    let err = text::print_shape(&bad).unwrap_err();
    assert_eq!(err.path().to_string(), "tuple_shapes[1]");
    assert!(text::parse_shape("(f32[2]{0}, f32[2]{0:T(0)})").is_err());
    // The same array alone prints and parses (XLA does not validate it).
    let alone = bad.tuple_shapes[1].clone();
    assert_eq!(text::print_shape(&alone).unwrap(), "f32[2]{0:T(0)}");
    assert_eq!(text::parse_shape("f32[2]{0:T(0)}").unwrap(), alone);
}

/// `scan_text_validated` (what `validate` runs: each distinct shape text validated
/// once) reports exactly what `scan_text` with `validate_text` reports, shape by shape:
/// over every real module, and over a module whose bad shapes repeat on other lines.
#[test]
fn cached_validation_reports_what_validating_every_shape_reports() {
    let repeated = "HloModule m, entry_computation_layout={(f32[2,3]{0,0})->f32[2,3]{1,0}}\n\
        ENTRY e {\n  p = f32[2,3]{0,0} parameter(0)\n  q = f32[2,3]{0,0} negate(f32[2,3]{0,0} p)\n  \
        r = s4[4]{0:E(2)} constant({1,2,3,4})\n  s = s4[4]{0:E(2)} negate(s4[4]{0:E(2)} r)\n  \
        ROOT t = f32[2,3]{1,0} copy(f32[2,3]{0,0} q)\n}\n"
        .to_string();
    let mut inputs = vec![repeated];
    for path in module_files(".hlo.txt") {
        inputs.push(std::fs::read_to_string(path).unwrap());
    }
    let mut compared = 0;
    for input in &inputs {
        let (summary, findings) = scan_text(input);
        let mut cached = Vec::new();
        let cached_summary =
            module::scan_text_validated(input.as_bytes(), &mut |f| cached.push(f)).unwrap();
        assert_eq!(cached_summary, summary);
        assert_eq!(cached, findings);
        compared += findings.len();
    }
    assert!(
        compared >= 6,
        "the repeated bad shapes are reported each time"
    );
}
