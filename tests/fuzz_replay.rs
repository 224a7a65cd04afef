//! Replays every committed fuzz input (the minimised corpora in `fuzz/corpus/TARGET/`
//! and the crash inputs in `fuzz/artifacts/TARGET/`) through the properties the fuzz
//! targets check (`tests/props/mod.rs`), without a fuzzer, so that they guard CI.

mod props;

use std::path::Path;

#[test]
fn every_committed_fuzz_input_keeps_its_properties() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut total = 0;
    for &(target, property) in props::TARGETS {
        let mut inputs = 0;
        for dir in ["corpus", "artifacts"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
                continue;
            };
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths {
                if path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                {
                    continue;
                }
                let data = std::fs::read(&path).expect("readable input");
                let outcome = std::panic::catch_unwind(|| property(&data));
                assert!(outcome.is_ok(), "{target}: {} fails", path.display());
                inputs += 1;
            }
        }
        assert!(inputs > 0, "no committed inputs for fuzz target {target}");
        total += inputs;
    }
    eprintln!("replayed {total} fuzz inputs");
}

/// The committed `relayout` corpus holds many pairs that move bytes, not only inputs
/// the property skips (too large, or not two layouts of one array: the minimised corpus
/// keeps those too, for the parsers' coverage).
#[test]
fn relayout_corpus_moves_bytes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/relayout");
    let mut moved = 0;
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("the relayout corpus") {
        let data = std::fs::read(entry.expect("an entry").path()).expect("readable input");
        total += 1;
        moved += usize::from(props::relayout_moved(&data));
    }
    assert!(
        moved >= 100,
        "only {moved} of {total} relayout inputs move bytes"
    );
}

/// JSON read a shape at a time (plain tuples that nest opened) gives the whole read's
/// message or first error, and so do conversions of it, on tuples that nest, are not
/// plain for a key before or after their elements, hold brackets and quotes in
/// strings, fail inside a nested tuple or after it, or nest too deep.
#[test]
fn nested_json_tuples_read_leaf_by_leaf_agree_with_the_whole_read() {
    let deep = |n: usize| {
        let open = r#"{"elementType":"TUPLE","tupleShapes":["#.repeat(n);
        format!(r#"{open}{{"elementType":"F32"}}{}"#, "]}".repeat(n))
    };
    let (deep, deeper) = (deep(99), deep(100));
    let f32 = r#"{"elementType":"F32","dimensions":["2"],"layout":{"minorToMajor":[0]}}"#;
    let inputs = [
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{f32},{{"elementType":"TUPLE","tupleShapes":[{f32},{{"elementType":"S32"}}]}}]}}"#
        ),
        // Keys in any order; a nested tuple with a layout after its elements; one
        // given as a number; an element type that is not TUPLE; an empty one.
        format!(
            r#"{{"tupleShapes":[{{"tupleShapes":[{f32}],"elementType":"TUPLE"}},{{"elementType":"TUPLE","tupleShapes":[{f32}],"layout":{{}}}}],"elementType":"TUPLE"}}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":13,"tupleShapes":[{f32}]}},{{"elementType":"F32","tupleShapes":[{f32}]}},{{"elementType":"TUPLE","tupleShapes":[]}}]}}"#
        ),
        // Both spellings of one field; an unknown key; a duplicate key.
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}],"tuple_shapes":[{f32}]}}]}}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}],"x]}}"{{[":1}}]}}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}],"tupleShapes":[]}}]}}"#
        ),
        // Errors inside a nested tuple, after it, and a text cut short.
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32},{{"elementType":"F33"}}]}},{f32}]}}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}]}},null]}}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}]}}]}} x"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":[{f32}"#
        ),
        format!(
            r#"{{"elementType":"TUPLE","tupleShapes":[{{"elementType":"TUPLE","tupleShapes":["a"]}}",{f32}]}}]}}"#
        ),
        deep,
        deeper,
    ];
    for input in &inputs {
        props::json_leaves_agree(input.as_bytes());
    }
}

/// Lines of HLO text checked a tuple element (or a program shape's part) at a time,
/// as lines of `LONG_INPUT` bytes or more are, report what the whole check reports
/// (`props::checked_lines_agree`), on every shape of `fixtures/hlo_shapes.jsonl` (XLA's
/// own and hostile ones) as a tuple element, nested, and in a program shape. Before
/// session 35, 746 of them did not: a line that did not parse counted a shape and kept
/// the findings of the elements before its error.
#[test]
fn fixture_lines_checked_an_element_at_a_time_agree_with_the_whole_check() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
    let content = std::fs::read_to_string(path).expect("fixtures/hlo_shapes.jsonl");
    let mut lines = Vec::new();
    for record in content.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(record).unwrap();
        let shape = record["text"].as_str().unwrap();
        lines.push(format!("(f32[2], ({shape}), {shape})"));
        lines.push(format!("(pred[], ({shape}, f32[1]{{0}}))"));
        lines.push(format!("(f32[2], {shape}) -> ({shape})"));
        lines.push(format!("(a: ({shape}), b: s32[]) -> {shape}"));
    }
    assert!(lines.len() > 5000);
    // Each line alone, then all of them as one input.
    for line in &lines {
        props::checked_lines_agree(line);
    }
    props::checked_lines_agree(&lines.join("\n"));
}

/// Nested tuples read leaf by leaf (`text::parse_shape_leaves`): the leaves of the
/// whole parse at their paths, and its first error, on tuples that nest, hold empty
/// tuples, fail inside a nested tuple or after it, or nest too deep.
#[test]
fn nested_tuples_read_leaf_by_leaf_agree_with_the_whole_parse() {
    let deep = |n| format!("{}f32[]{}", "(".repeat(n), ")".repeat(n));
    let (deep, deeper) = (deep(32_768), deep(32_769));
    let inputs = [
        "(f32[2,3]{1,0}, (s32[], f32[4]), token[], b(f32[2]))",
        "((f32[2]{5}), s32[])",
        "((f32[2]{0}, (), ((u8[3]), ())), s32[])",
        "(((f32[2]{7}, f32[3]), s32[]) , f32[)",
        "((f32[2], f32[3]{1}), s32[)",
        "((f32[2]), s32[]",
        "((f32[2])",
        "(() , ())",
        "(( ), f32[2]) extra",
        "((b(f32[2]{0}), opaque[]), (f32[2]{1,0}))",
        &deep,
        &deeper,
    ];
    // The deepest shapes compare and drop recursively: a thread with room for them.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(scope, || {
                for input in inputs {
                    for fill in [true, false] {
                        let options = xla_shape::text::ParseOptions {
                            fill_missing_layouts: fill,
                        };
                        props::leaves_agree(input, options);
                    }
                }
            })
            .expect("a test thread")
            .join()
            .expect("the leaves agree");
    });
}

/// Binary tuples whose shapes (and the tuple itself) may hold unknown fields, before,
/// between or after the known ones, nested or not, and shapes HLO text cannot carry:
/// the decode property converts each a shape at a time into every form (binary keeping
/// the fields; JSON and XLA's text dropping them with their paths; the lossless text
/// refusing the first; the refusals of either text those of the whole tuple's
/// printing) and compares with the whole conversion.
mod tuples_with_unknown_fields {
    use proptest::prelude::*;

    /// A varint.
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A length-delimited field.
    fn field(number: u64, body: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | 2, out);
        varint(body.len() as u64, out);
        out.extend_from_slice(body);
    }

    /// An unknown varint field (numbers XLA's ShapeProto does not use).
    fn unknown(number: u64, value: u64, out: &mut Vec<u8>) {
        varint(number << 3, out);
        varint(value, out);
    }

    /// A message body: known fields with an unknown one at a drawn place.
    fn with_unknown(known: &[Vec<u8>], at: Option<(usize, u64)>) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, part) in known.iter().enumerate() {
            if let Some((j, number)) = at {
                if j % (known.len() + 1) == i {
                    unknown(number, 7, &mut out);
                }
            }
            out.extend_from_slice(part);
        }
        if let Some((j, number)) = at {
            if j % (known.len() + 1) == known.len() {
                unknown(number, 7, &mut out);
            }
        }
        out
    }

    /// An array shape `f32[d...]{...}`, perhaps with an unknown field; `broken` 1
    /// makes its element type 0 (no text name), 2 its `minor_to_major` repeat a
    /// dimension (a layout XLA's parser rejects in a tuple).
    fn array(dims: &[u64], unknown_at: Option<(usize, u64)>, broken: u8) -> Vec<u8> {
        let mut element_type = Vec::new();
        varint(2 << 3, &mut element_type); // element_type = F32 (11)
        varint(if broken == 1 { 0 } else { 11 }, &mut element_type);
        let mut packed = Vec::new();
        for &d in dims {
            varint(d, &mut packed);
        }
        let mut dimensions = Vec::new();
        field(3, &packed, &mut dimensions);
        let mut minor_to_major = Vec::new();
        for i in (0..dims.len() as u64).rev() {
            varint(if broken == 2 { 0 } else { i }, &mut minor_to_major);
        }
        let mut layout_body = Vec::new();
        field(1, &minor_to_major, &mut layout_body);
        let mut layout = Vec::new();
        field(5, &layout_body, &mut layout);
        with_unknown(&[element_type, dimensions, layout], unknown_at)
    }

    /// A tuple of the given element bodies, perhaps with an unknown field of its own.
    fn tuple(elements: &[Vec<u8>], unknown_at: Option<(usize, u64)>) -> Vec<u8> {
        tuple_with_own(elements, unknown_at, (0, 0))
    }

    /// [`tuple`], with a field of its own besides its elements (`own.0`: 1 dimensions,
    /// 2 a layout, 3 dynamic flags; none otherwise) at place `own.1` among its parts.
    fn tuple_with_own(
        elements: &[Vec<u8>],
        unknown_at: Option<(usize, u64)>,
        own: (u8, usize),
    ) -> Vec<u8> {
        let mut parts = Vec::new();
        let mut element_type = Vec::new();
        varint(2 << 3, &mut element_type); // TUPLE (13)
        varint(13, &mut element_type);
        parts.push(element_type);
        for body in elements {
            let mut part = Vec::new();
            field(4, body, &mut part);
            parts.push(part);
        }
        let mut extra = Vec::new();
        match own.0 {
            1 => field(3, &[2], &mut extra),
            2 => {
                let mut minor_to_major = Vec::new();
                field(1, &[0], &mut minor_to_major);
                field(5, &minor_to_major, &mut extra);
            }
            3 => field(6, &[1], &mut extra),
            _ => {}
        }
        if !extra.is_empty() {
            parts.insert(own.1 % (parts.len() + 1), extra);
        }
        with_unknown(&parts, unknown_at)
    }

    fn unknown_at() -> impl Strategy<Value = Option<(usize, u64)>> {
        prop::option::weighted(0.4, (0usize..8, prop::sample::select(vec![7u64, 99, 1000])))
    }

    fn element() -> impl Strategy<Value = Vec<u8>> {
        let broken = prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]);
        let leaf = (prop::collection::vec(1u64..5, 0..3), unknown_at(), broken)
            .prop_map(|(dims, at, broken)| array(&dims, at, broken));
        let own = (prop::sample::select(vec![0u8, 0, 0, 1, 2, 3]), 0usize..6);
        leaf.prop_recursive(2, 12, 4, move |inner| {
            (
                prop::collection::vec(inner, 1..4),
                unknown_at(),
                own.clone(),
            )
                .prop_map(|(elements, at, own)| tuple_with_own(&elements, at, own))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn streamed_conversions_equal_the_whole(
            elements in prop::collection::vec(element(), 1..5),
            at in unknown_at(),
        ) {
            let mut input = vec![0u8]; // the decode property's selector: a ShapeProto
            input.extend(tuple(&elements, at));
            super::props::decode_roundtrip(&input);
        }
    }
}

/// Program shapes converted a parameter at a time agree with the whole conversion from
/// every form into every form: named, unnamed and `(unknown)` parameters, tuples, a
/// name XLA's text cannot carry, names that are not one per parameter, no result, a
/// retired layout field (whose copy places it in binary), an unknown field in a
/// parameter, at the top level or in the result, and broken input.
#[test]
fn program_shapes_converted_a_parameter_at_a_time_agree_with_the_whole() {
    use xla_shape::codec::{decode_program_shape, encode};
    use xla_shape::convert::Form;
    use xla_shape::text;
    let texts = [
        "(a: f32[2,3]{1,0}, b: (s32[], (f32[4], ())), c: token[], d: b(f32[2]))->(f32[], ())",
        "(f32[2], s32[3]{0:T(2)}, pred[], u8[1,2,3,4,5,6])->f32[]",
        "((unknown): f32[2], x: f32[3])->f32[]",
        "()->()",
        "{(f32[2]{0:PD(3)})->f32[2]{0:PD(4)}}",
        "(f32[2], f32[)->f32[]",
        "(f32[2])->",
        "(a: f32[2], f32[3])->f32[]",
    ];
    for input in texts {
        props::program_conversions_agree(Form::Hlo, input.as_bytes());
        let Ok(program) = text::parse_program_shape(input) else {
            continue;
        };
        let mut variants = vec![program.clone()];
        let mut odd = program.clone();
        odd.parameter_names = vec!["not a name".into(); odd.parameters.len()];
        variants.push(odd);
        let mut fewer = program.clone();
        fewer.parameter_names.pop();
        fewer.parameter_names.push("z".into());
        fewer.parameter_names.push("y".into());
        variants.push(fewer);
        let mut resultless = program.clone();
        resultless.result = None;
        variants.push(resultless);
        for variant in variants {
            let bytes = encode(&variant);
            props::program_conversions_agree(Form::Binary, &bytes);
            // The result before the parameters (protobuf reads fields in any order): the
            // parameters are still printed, or refused, first.
            let mut result_first = encode(&xla_shape::proto::ProgramShapeProto {
                result: variant.result.clone(),
                ..Default::default()
            });
            result_first.extend(encode(&xla_shape::proto::ProgramShapeProto {
                result: None,
                ..variant.clone()
            }));
            props::program_conversions_agree(Form::Binary, &result_first);
            let message = xla_shape::AnyMessage::ProgramShape(variant);
            let json = xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new());
            props::program_conversions_agree(Form::Json, json.as_bytes());
            props::program_conversions_agree(Form::Json, &json.as_bytes()[1..]);
            // An unknown field (100, varint 1) at the top level, in the first
            // parameter's layout, or in the result.
            let mut top = bytes.clone();
            top.extend([0xa0, 0x06, 0x01]);
            props::program_conversions_agree(Form::Binary, &top);
            props::program_conversions_agree(Form::Binary, &top[..top.len().saturating_sub(4)]);
        }
        // The retired field's copy in a parameter and in the result: re-encoded as the
        // whole message is.
        let decoded = decode_program_shape(&encode(&program)).unwrap();
        props::program_conversions_agree(Form::Binary, &decoded.encode_to_vec());
    }
    // Unknown fields inside a parameter and inside the result (field 100 of the shape).
    let shape = encode(&text::parse_shape("f32[2]{0}").unwrap());
    let with_unknown = [shape.clone(), vec![0xa0, 0x06, 0x01]].concat();
    let field =
        |number: u8, body: &[u8]| [vec![number << 3 | 2, body.len() as u8], body.to_vec()].concat();
    // A retired field (padded_dimensions) after memory_space in a layout: its copy
    // keeps that place when the shape is encoded again.
    let layout = [0x40, 0x01, 0x12, 0x01, 0x03, 0x0a, 0x01, 0x00];
    let retired = [
        vec![0x10, 0x0b, 0x1a, 0x01, 0x02],
        field(5, &layout),
        vec![0x32, 0x01, 0x00],
    ]
    .concat();
    let retired = xla_shape::codec::decode_shape(&retired)
        .unwrap()
        .encode_to_vec();
    let decoded = xla_shape::codec::decode_shape(&retired).unwrap();
    assert_eq!(decoded.encode_to_vec(), retired);
    assert_ne!(encode(&decoded.message), retired);
    for (parameter, result) in [(&retired, &shape), (&shape, &retired)] {
        let bytes = [field(1, parameter), field(1, &shape), field(2, result)].concat();
        assert_eq!(decode_program_shape(&bytes).unwrap().encode_to_vec(), bytes);
        props::program_conversions_agree(Form::Binary, &bytes);
    }
    for (parameter, result) in [(&with_unknown, &shape), (&shape, &with_unknown)] {
        let bytes = [field(1, parameter), field(1, &shape), field(2, result)].concat();
        assert!(decode_program_shape(&bytes).is_ok());
        props::program_conversions_agree(Form::Binary, &bytes);
    }
}

/// A program shape's parameters and result handed on a shape at a time
/// (`text::parse_program_shape_leaves`) are those of the whole parse, opened into their
/// tuples, and the first error is the whole parse's, at the same place: named,
/// unnamed and `(unknown)` parameters, nested and empty tuples, braces, and each way
/// the frame can break.
#[test]
fn program_shapes_read_leaf_by_leaf_agree_with_the_whole_parse() {
    for input in [
        "(f32[2,3]{1,0}, (s32[], (f32[4], ())), token[], b(f32[2]))->(f32[], ())",
        "()->f32[]",
        " { ( a: f32[2] , b: () ) -> (f32[3]{7}) } ",
        "(a: f32[2], s32[])->f32[]",
        "(f32[2], b: s32[])->f32[]",
        "((f32[2]{7}, f32[))->f32[]",
        "((f32[2]{7}, f32[3]))->f32[]",
        "(f32[2])->",
        "(f32[2]) f32[]",
        "(f32[2])->f32[] extra",
        "{(f32[2])->f32[]",
        "(",
        "(unknown): f32[2], (unknown): f32[3])->f32[]",
        "((unknown): f32[2], (unknown): f32[3])->f32[]",
    ] {
        for fill in [true, false] {
            let options = xla_shape::text::ParseOptions {
                fill_missing_layouts: fill,
            };
            props::program_leaves_agree(input, options);
        }
    }
}

/// Tuples with fields of their own besides their elements (dimensions, a layout,
/// dynamic flags, unknown fields at every level) converted a shape at a time from
/// binary and JSON into every form give the whole conversion's bytes, dropped fields
/// (in its order) or refusal: the decode and JSON properties compare the two.
#[test]
fn tuples_with_fields_of_their_own_convert_as_the_whole() {
    use xla_shape::codec::wire::{put_tag, put_varint, WireType};
    use xla_shape::convert::Form;
    use xla_shape::proto::{LayoutProto, PrimitiveType, ShapeProto};
    use xla_shape::text;
    let unknown = [0xa0u8, 0x06, 0x01]; // field 100, varint 1
    let field = |out: &mut Vec<u8>, number: u32, body: &[u8]| {
        put_tag(out, number, WireType::LengthDelimited);
        put_varint(out, body.len() as u64);
        out.extend_from_slice(body);
    };
    let elements = [
        "f32[2]{0}",
        "(s32[], (f32[4], ()))",
        "token[]",
        "bf16[8,128]{1,0:T(8,128)(2,1)}",
        "f32[3]",
        "(f32[1], f32[2])",
    ];
    let element_bytes: Vec<Vec<u8>> = elements
        .iter()
        .map(|e| xla_shape::codec::encode(&text::parse_shape(e).unwrap()))
        .collect();
    let layouts = [
        None,
        Some(LayoutProto::default()),
        Some(LayoutProto {
            minor_to_major: vec![0],
            ..Default::default()
        }),
    ];
    let mut inputs = Vec::new();
    for dims in [vec![], vec![5], vec![2, 3]] {
        for layout in &layouts {
            for dynamic in [vec![], vec![true]] {
                for unknown_at in 0..5 {
                    let mut out = Vec::new();
                    put_tag(&mut out, 2, WireType::Varint);
                    put_varint(&mut out, PrimitiveType::Tuple as u64);
                    if !dims.is_empty() {
                        let own = ShapeProto {
                            dimensions: dims.clone(),
                            ..Default::default()
                        };
                        out.extend(xla_shape::codec::encode(&own));
                    }
                    for (i, body) in element_bytes.iter().enumerate() {
                        let mut body = body.clone();
                        if unknown_at == 1 && i % 2 == 1 {
                            body.extend(unknown);
                        }
                        field(&mut out, 4, &body);
                    }
                    if let Some(layout) = layout {
                        let mut body = xla_shape::codec::encode(layout);
                        if unknown_at == 2 {
                            body.extend(unknown);
                        }
                        field(&mut out, 5, &body);
                    }
                    if !dynamic.is_empty() {
                        let own = ShapeProto {
                            is_dynamic_dimension: dynamic.clone(),
                            ..Default::default()
                        };
                        out.extend(xla_shape::codec::encode(&own));
                    }
                    if unknown_at == 3 {
                        out.extend(unknown);
                    }
                    if unknown_at == 4 {
                        // Cut inside the last field: the decode error comes first.
                        out.truncate(out.len() - 2);
                    }
                    inputs.push(out);
                }
            }
        }
    }
    let mut own_fields = 0;
    for bytes in &inputs {
        own_fields += usize::from(xla_shape::codec::is_tuple_with_own_fields(bytes));
        let data: Vec<u8> = [0].iter().chain(bytes).copied().collect();
        props::decode_roundtrip(&data);
        if let Ok(decoded) = xla_shape::codec::decode_shape(bytes) {
            let message = xla_shape::AnyMessage::Shape(decoded.message);
            for pretty in [false, true] {
                let options = xla_shape::json::PrintOptions::new().pretty(pretty);
                let json = xla_shape::json::to_json(&message, &options);
                props::json_leaves_agree(json.as_bytes());
                props::json_leaves_agree(&json.as_bytes()[..json.len() - 1]);
            }
        }
    }
    assert!(own_fields >= 60, "{own_fields} of {}", inputs.len());
    // The same tuples as a program shape's parts: a parameter, the result, a tuple
    // inside a plain parameter, beside an array, the result given twice (merged), and
    // an unknown field at the program shape's own level.
    let array = element_bytes[0].clone();
    for (i, tuple) in inputs.iter().enumerate() {
        let mut plain = Vec::new();
        put_tag(&mut plain, 2, WireType::Varint);
        put_varint(&mut plain, PrimitiveType::Tuple as u64);
        field(&mut plain, 4, &array);
        field(&mut plain, 4, tuple);
        let mut program = Vec::new();
        field(&mut program, 1, &array);
        field(&mut program, 1, tuple);
        field(&mut program, 2, tuple);
        field(&mut program, 1, &plain);
        field(&mut program, 3, b"a");
        if i % 3 == 0 {
            field(&mut program, 2, &plain);
        }
        if i % 2 == 0 {
            program.extend(unknown);
        }
        props::program_conversions_agree(Form::Binary, &program);
        let data: Vec<u8> = [2].iter().chain(&program).copied().collect();
        props::decode_roundtrip(&data);
        if let Ok(decoded) = xla_shape::codec::decode_program_shape(&program) {
            let message = xla_shape::AnyMessage::ProgramShape(decoded.message);
            for pretty in [false, true] {
                let options = xla_shape::json::PrintOptions::new().pretty(pretty);
                let json = xla_shape::json::to_json(&message, &options);
                props::program_conversions_agree(Form::Json, json.as_bytes());
            }
        }
    }
}
