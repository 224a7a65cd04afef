//! Proto3 JSON: printing and parsing against Google's `json_format` (Python protobuf
//! 7.36.2), the reference facts of `/work/shared/xla-reference.md` §8, and the fixtures.
//!
//! Expected JSON and bytes come from Google's runtime: either quoted from the reference
//! (§8) or produced by `json_format` with a descriptor of XLA's schema ("G") or of this
//! crate's schema with the legacy LayoutProto fields 2-5 ("L"). Error messages are this
//! crate's own wording; which inputs are errors is Google's verdict.

use proptest::prelude::*;
use prost::Message;
use serde_json::Value as Json;
use xla_shape::json::{self, FieldNames, JsonErrorKind, ParseOptions, PrintOptions, ProtoJson};
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto, SplitConfigProto, TileProto};
use xla_shape::{AnyMessage, MessageKind};

fn kind(name: &str) -> MessageKind {
    match name {
        "shape" => MessageKind::Shape,
        "layout" => MessageKind::Layout,
        "program-shape" => MessageKind::ProgramShape,
        other => panic!("unknown message kind {other:?}"),
    }
}

fn encode(message: &AnyMessage) -> Vec<u8> {
    match message {
        AnyMessage::Shape(m) => m.encode_to_vec(),
        AnyMessage::Layout(m) => m.encode_to_vec(),
        AnyMessage::ProgramShape(m) => m.encode_to_vec(),
    }
}

fn decode(kind: MessageKind, bytes: &[u8]) -> Result<AnyMessage, prost::DecodeError> {
    Ok(match kind {
        MessageKind::Shape => AnyMessage::Shape(ShapeProto::decode(bytes)?),
        MessageKind::Layout => AnyMessage::Layout(LayoutProto::decode(bytes)?),
        MessageKind::ProgramShape => AnyMessage::ProgramShape(ProgramShapeProto::decode(bytes)?),
    })
}

/// JSON text to serialized bytes (hex), or our error message.
fn json_to_hex(
    kind: MessageKind,
    text: &str,
    ignore_unknown_fields: bool,
) -> Result<String, String> {
    let options = ParseOptions::new().ignore_unknown_fields(ignore_unknown_fields);
    json::from_json(kind, text.as_bytes(), &options)
        .map(|m| hex::encode(encode(&m)))
        .map_err(|e| e.to_string())
}

fn hex_to_json(kind: MessageKind, hex_bytes: &str, options: &PrintOptions) -> String {
    let message = decode(kind, &hex::decode(hex_bytes.replace(' ', "")).unwrap()).unwrap();
    json::to_json(&message, options)
}

fn parsed(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

// ---------------------------------------------------------------------------------
// Printing: reference §8 and Google's output
// ---------------------------------------------------------------------------------

/// (message, binary from §8 or Google, `MessageToJson(indent=None)` camelCase,
/// the same with `preserving_proto_field_name=True`).
const PRINTED: &[(&str, &str, &str, &str)] = &[
    (
        // §8: f32[2,3]{1,0}, minimal proto.
        "shape",
        "10 0b 1a 02 02 03 2a 04 0a 02 01 00",
        r#"{"elementType": "F32", "dimensions": ["2", "3"], "layout": {"minorToMajor": ["1", "0"]}}"#,
        r#"{"element_type": "F32", "dimensions": ["2", "3"], "layout": {"minor_to_major": ["1", "0"]}}"#,
    ),
    (
        // §8: f32[2,3]{1,0} as XLA HEAD's Shape::ToProto writes it.
        "shape",
        "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00",
        r#"{"elementType": "F32", "dimensions": ["2", "3"], "layout": {"minorToMajor": ["1", "0"], "tailPaddingAlignmentInElements": "1"}, "isDynamicDimension": [false, false]}"#,
        r#"{"element_type": "F32", "dimensions": ["2", "3"], "layout": {"minor_to_major": ["1", "0"], "tail_padding_alignment_in_elements": "1"}, "is_dynamic_dimension": [false, false]}"#,
    ),
    // §8: token.
    ("shape", "10 11", r#"{"elementType": "TOKEN"}"#, r#"{"element_type": "TOKEN"}"#),
    // §8: opaque.
    ("shape", "10 0e", r#"{"elementType": "OPAQUE_TYPE"}"#, r#"{"element_type": "OPAQUE_TYPE"}"#),
    (
        // §8: unbounded f32[?,784].
        "shape",
        "10 0b 1a 0c 80 80 80 80 80 80 80 80 80 01 90 06 32 02 01 00",
        r#"{"elementType": "F32", "dimensions": ["-9223372036854775808", "784"], "isDynamicDimension": [true, false]}"#,
        r#"{"element_type": "F32", "dimensions": ["-9223372036854775808", "784"], "is_dynamic_dimension": [true, false]}"#,
    ),
    (
        // §8: {1,0:T(8,128)(2,1)E(4)S(1)SC(1:512)} as C++ would emit it.
        "layout",
        "0a 02 01 00 32 05 0a 03 08 80 01 32 04 0a 02 02 01 38 04 40 01 80 01 01 8a 01 06 08 01 12 02 80 04",
        r#"{"minorToMajor": ["1", "0"], "tiles": [{"dimensions": ["8", "128"]}, {"dimensions": ["2", "1"]}], "elementSizeInBits": "4", "memorySpace": "1", "tailPaddingAlignmentInElements": "1", "splitConfigs": [{"dimension": "1", "splitIndices": ["512"]}]}"#,
        r#"{"minor_to_major": ["1", "0"], "tiles": [{"dimensions": ["8", "128"]}, {"dimensions": ["2", "1"]}], "element_size_in_bits": "4", "memory_space": "1", "tail_padding_alignment_in_elements": "1", "split_configs": [{"dimension": "1", "split_indices": ["512"]}]}"#,
    ),
    // Google (G): an element_type the schema does not name prints as a bare number (§8: 2000).
    ("shape", "10 d0 0f", r#"{"elementType": 2000}"#, r#"{"element_type": 2000}"#),
    ("shape", "10 ff ff ff ff ff ff ff ff ff 01", r#"{"elementType": -1}"#, r#"{"element_type": -1}"#),
    // Google (G): a set but empty message prints as {}; an empty message as {}.
    ("shape", "2a 00", r#"{"layout": {}}"#, r#"{"layout": {}}"#),
    ("shape", "", r#"{}"#, r#"{}"#),
    (
        // Google (G): sparse-era layout fields and an unknown DimLevelType number.
        "layout",
        "4a 03 00 01 07 52 02 10 04 58 08 60 09 6a 01 01 72 01 00 78 80 08",
        r#"{"dimLevelTypes": ["DIM_DENSE", "DIM_COMPRESSED", 7], "physicalShape": {"elementType": "S32"}, "indexPrimitiveType": "U32", "pointerPrimitiveType": "U64", "dimUnique": [true], "dimOrdered": [false], "dynamicShapeMetadataPrefixBytes": "1024"}"#,
        r#"{"dim_level_types": ["DIM_DENSE", "DIM_COMPRESSED", 7], "physical_shape": {"element_type": "S32"}, "index_primitive_type": "U32", "pointer_primitive_type": "U64", "dim_unique": [true], "dim_ordered": [false], "dynamic_shape_metadata_prefix_bytes": "1024"}"#,
    ),
    (
        // Google (G): a program shape; strings escaped to ASCII.
        "program-shape",
        "0a 02 10 0b 0a 05 10 02 1a 01 04 12 02 10 0d 1a 01 78 1a 06 c3 a9 f0 9f 98 80 1a 02 7f 0a",
        r#"{"parameters": [{"elementType": "F32"}, {"elementType": "S8", "dimensions": ["4"]}], "result": {"elementType": "TUPLE"}, "parameterNames": ["x", "\u00e9\ud83d\ude00", "\u007f\n"]}"#,
        r#"{"parameters": [{"element_type": "F32"}, {"element_type": "S8", "dimensions": ["4"]}], "result": {"element_type": "TUPLE"}, "parameter_names": ["x", "\u00e9\ud83d\ude00", "\u007f\n"]}"#,
    ),
    (
        // Google (L, this crate's schema): the §2.2 old-schema f32[2,3] with
        // format=DENSE, padded_dimensions=[3,5], padding_value=ZERO_PAD.
        "shape",
        "10 0b 1a 02 02 03 2a 0c 0a 02 01 00 12 02 03 05 18 01 20 01",
        r#"{"elementType": "F32", "dimensions": ["2", "3"], "layout": {"minorToMajor": ["1", "0"], "paddedDimensions": ["3", "5"], "paddingValue": "ZERO_PAD", "format": "DENSE"}}"#,
        r#"{"element_type": "F32", "dimensions": ["2", "3"], "layout": {"minor_to_major": ["1", "0"], "padded_dimensions": ["3", "5"], "padding_value": "ZERO_PAD", "format": "DENSE"}}"#,
    ),
    (
        // Google (L): the §2.2 old sparse layout for f32[100].
        "shape",
        "10 0b 1a 01 64 2a 04 20 02 28 0a",
        r#"{"elementType": "F32", "dimensions": ["100"], "layout": {"format": "SPARSE", "maxSparseElements": "10"}}"#,
        r#"{"element_type": "F32", "dimensions": ["100"], "layout": {"format": "SPARSE", "max_sparse_elements": "10"}}"#,
    ),
];

/// Python's `json.dumps` default separators (`", "`, `": "`) removed outside strings:
/// our compact form. None of the expected texts has `", "` or `": "` inside a string.
fn compact(python: &str) -> String {
    python.replace(", ", ",").replace(": ", ":")
}

#[test]
fn prints_as_google_does() {
    for &(message, bytes, camel, proto) in PRINTED {
        let kind = kind(message);
        let ours = hex_to_json(kind, bytes, &PrintOptions::new());
        assert_eq!(ours, compact(camel), "{bytes}");
        assert_eq!(parsed(&ours), parsed(camel), "{bytes}");
        let ours = hex_to_json(
            kind,
            bytes,
            &PrintOptions::new().field_names(FieldNames::Proto),
        );
        assert_eq!(ours, compact(proto), "{bytes}");
    }
}

#[test]
fn reads_back_what_google_prints() {
    for &(message, bytes, camel, proto) in PRINTED {
        let want = bytes.replace(' ', "");
        assert_eq!(
            json_to_hex(kind(message), camel, false).as_deref(),
            Ok(want.as_str())
        );
        assert_eq!(
            json_to_hex(kind(message), proto, false).as_deref(),
            Ok(want.as_str())
        );
    }
}

/// §9.10: the exact compact text for f32[2,3]{1,0} from C++.
#[test]
fn compact_form_of_reference_9_10() {
    let ours = hex_to_json(
        MessageKind::Shape,
        "100b1a0202032a070a02010080010132020000",
        &PrintOptions::new(),
    );
    assert_eq!(
        ours,
        r#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"],"tailPaddingAlignmentInElements":"1"},"isDynamicDimension":[false,false]}"#
    );
}

/// `json_format.MessageToJson` with its default indent of 2, byte for byte.
#[test]
fn pretty_form_matches_message_to_json() {
    let pretty = PrintOptions::new().pretty(true);
    // §8, verbatim.
    assert_eq!(
        hex_to_json(MessageKind::Shape, "100b1a0202032a070a02010080010132020000", &pretty),
        "{\n  \"elementType\": \"F32\",\n  \"dimensions\": [\n    \"2\",\n    \"3\"\n  ],\n  \"layout\": {\n    \"minorToMajor\": [\n      \"1\",\n      \"0\"\n    ],\n    \"tailPaddingAlignmentInElements\": \"1\"\n  },\n  \"isDynamicDimension\": [\n    false,\n    false\n  ]\n}"
    );
    // Google (G).
    assert_eq!(
        hex_to_json(
            MessageKind::ProgramShape,
            "0a02100b0a0510021a01041202100d1a01781a06c3a9f09f98801a027f0a",
            &pretty
        ),
        "{\n  \"parameters\": [\n    {\n      \"elementType\": \"F32\"\n    },\n    {\n      \"elementType\": \"S8\",\n      \"dimensions\": [\n        \"4\"\n      ]\n    }\n  ],\n  \"result\": {\n    \"elementType\": \"TUPLE\"\n  },\n  \"parameterNames\": [\n    \"x\",\n    \"\\u00e9\\ud83d\\ude00\",\n    \"\\u007f\\n\"\n  ]\n}"
    );
    assert_eq!(
        hex_to_json(MessageKind::Shape, "10d00f", &pretty),
        "{\n  \"elementType\": 2000\n}"
    );
    assert_eq!(
        hex_to_json(MessageKind::Shape, "2a00", &pretty),
        "{\n  \"layout\": {}\n}"
    );
    assert_eq!(hex_to_json(MessageKind::Shape, "", &pretty), "{}");
}

/// Unknown fields of the binary are not printed (§8: "dropped by the JSON printer").
#[test]
fn unknown_binary_fields_are_dropped() {
    // Field 1 of ShapeProto ("rank", reserved) = 3, then element_type F32; a field 99
    // varint inside the layout. Google (G) prints the same.
    let bytes = "0803 100b 2a03 98063f";
    let ours = hex_to_json(MessageKind::Shape, bytes, &PrintOptions::new());
    assert_eq!(ours, r#"{"elementType":"F32","layout":{}}"#);
}

// ---------------------------------------------------------------------------------
// Parsing: Google's verdicts
// ---------------------------------------------------------------------------------

/// (message, JSON, ignore_unknown_fields, Google's bytes (G) for inputs it accepts).
const ACCEPTED: &[(&str, &str, bool, &str)] = &[
    (
        "shape",
        r#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"]}}"#,
        false,
        "100b1a0202032a040a020100",
    ),
    (
        "shape",
        r#"{"element_type":"F32","is_dynamic_dimension":[true,false],"dimensions":[2,3]}"#,
        false,
        "100b1a02020332020100",
    ),
    (
        "shape",
        r#"{"dimensions":[1e3, "1e3", 1.0, "1.0", "-0", -0, "007", "+7", "1_000", "\t5", "5\n", "10e-1", "9223372036854775807", -9223372036854775808]}"#,
        false,
        "1a22e807e807010100000707e807050501ffffffffffffffff7f80808080808080808001",
    ),
    ("shape", r#"{"dimensions":["١٢"]}"#, false, "1a010c"),
    (
        "shape",
        r#"{"dimensions":null,"layout":null,"elementType":null}"#,
        false,
        "",
    ),
    ("shape", r#"{"elementType":"F99"}"#, true, ""),
    ("shape", r#"{"elementType":"11.0"}"#, true, ""),
    ("shape", r#"{"elementType":11}"#, false, "100b"),
    ("shape", r#"{"elementType":"11"}"#, false, "100b"),
    ("shape", r#"{"elementType":" 11"}"#, false, "100b"),
    ("shape", r#"{"elementType":11.0}"#, false, "100b"),
    ("shape", r#"{"elementType":2000}"#, false, "10d00f"),
    (
        "shape",
        r#"{"elementType":-1}"#,
        false,
        "10ffffffffffffffffff01",
    ),
    ("shape", r#"{"elementType":"OPAQUE_TYPE"}"#, false, "100e"),
    (
        "shape",
        r#"{"foo":{"bar":[1,2,{"x":null}]},"elementType":"PRED"}"#,
        true,
        "1001",
    ),
    ("shape", r#"{"foo":NaN}"#, true, ""),
    ("shape", r#"{"layout":{}}"#, false, "2a00"),
    (
        "shape",
        r#"{"layout":{"tiles":[{}, {"dimensions":["2","-9223372036854775808","128"]}]}}"#,
        false,
        "2a133200320f0a0d02808080808080808080018001",
    ),
    (
        "shape",
        r#"{"tupleShapes":[{"elementType":"TOKEN"},{}]}"#,
        false,
        "220210112200",
    ),
    (
        "shape",
        r#"{"layout":{"dimLevelTypes":["DIM_DENSE","DIM_COMPRESSED",7,"BOGUS"]}}"#,
        true,
        "2a054a03000107",
    ),
    (
        "layout",
        r#"{"minorToMajor":["1","0"],"tiles":[{"dimensions":["8","128"]},{"dimensions":["2","1"]}],"elementSizeInBits":"4","memorySpace":"1","tailPaddingAlignmentInElements":"1","splitConfigs":[{"dimension":"1","splitIndices":["512"]}]}"#,
        false,
        "0a02010032050a0308800132040a020201380440018001018a0106080112028004",
    ),
    (
        "layout",
        r#"{"physicalShape":{"elementType":"S32"},"indexPrimitiveType":"U32","pointerPrimitiveType":"U64","dimUnique":[true],"dimOrdered":[false],"dynamicShapeMetadataPrefixBytes":"1024"}"#,
        false,
        "52021004580860096a0101720100788008",
    ),
    (
        "program-shape",
        r#"{"parameters":[{"elementType":"F32"},{"elementType":"S8","dimensions":["4"]}],"result":{"elementType":"TUPLE"},"parameterNames":["x","\u00e9\ud83d\ude00"]}"#,
        false,
        "0a02100b0a0510021a01041202100d1a01781a06c3a9f09f9880",
    ),
    ("program-shape", r#"{"result":{}}"#, false, "1200"),
];

#[test]
fn accepts_what_google_accepts_with_the_same_bytes() {
    for &(message, text, ignore, bytes) in ACCEPTED {
        assert_eq!(
            json_to_hex(kind(message), text, ignore).as_deref(),
            Ok(bytes),
            "{text}"
        );
    }
}

/// The legacy LayoutProto keys are this crate's fields; Google's parser with XLA's
/// schema rejects them (or drops them under `ignore_unknown_fields`). The bytes are
/// Google's with this crate's schema (L).
#[test]
fn accepts_the_legacy_keys() {
    for (text, ignore, bytes) in [
        (
            r#"{"layout":{"paddedDimensions":["3","5"]}}"#,
            false,
            "2a0412020305",
        ),
        (r#"{"layout":{"format":"DENSE"}}"#, true, "2a022001"),
        (
            r#"{"layout":{"padded_dimensions":[3,5],"padding_value":"ZERO_PAD","format":1,"max_sparse_elements":"10"}}"#,
            false,
            "2a0a1202030518012001280a",
        ),
    ] {
        let want = bytes.replace(' ', "");
        assert_eq!(
            json_to_hex(MessageKind::Shape, text, ignore),
            Ok(want),
            "{text}"
        );
    }
}

/// (message, JSON, ignore_unknown_fields, our message). Google rejects every one.
const REJECTED: &[(&str, &str, bool, &str)] = &[
    ("shape", r#"{"dimensions":["1 000"]}"#, false, r#"dimensions[0]: "1 000" is not an integer at line 1 column 16"#),
    ("shape", r#"{"dimensions":[" 5"]}"#, false, r#"dimensions[0]: " 5" is not an integer at line 1 column 16"#),
    ("shape", r#"{"dimensions":[1.5]}"#, false, "dimensions[0]: 1.5 is not an integer at line 1 column 16"),
    ("shape", r#"{"dimensions":["1.5"]}"#, false, r#"dimensions[0]: "1.5" is not an integer at line 1 column 16"#),
    (
        "shape",
        r#"{"dimensions":[9223372036854775808]}"#,
        false,
        "dimensions[0]: 9223372036854775808 is out of range for int64 at line 1 column 16",
    ),
    (
        "shape",
        r#"{"dimensions":["9223372036854775808"]}"#,
        false,
        r#"dimensions[0]: "9223372036854775808" is out of range for int64 at line 1 column 16"#,
    ),
    (
        "shape",
        r#"{"dimensions":[-9223372036854775809]}"#,
        false,
        "dimensions[0]: -9223372036854775809 is out of range for int64 at line 1 column 16",
    ),
    (
        // Through a double this is 2^63.
        "shape",
        r#"{"dimensions":[9223372036854775807.0]}"#,
        false,
        "dimensions[0]: 9223372036854775807.0 is out of range for int64 at line 1 column 16",
    ),
    ("shape", r#"{"dimensions":[1e400]}"#, false, "dimensions[0]: 1e400 is not an integer at line 1 column 16"),
    ("shape", r#"{"dimensions":["inf"]}"#, false, r#"dimensions[0]: "inf" is not an integer at line 1 column 16"#),
    ("shape", r#"{"dimensions":["NaN"]}"#, false, r#"dimensions[0]: "NaN" is not an integer at line 1 column 16"#),
    ("shape", r#"{"dimensions":[NaN]}"#, false, "dimensions[0]: NaN is not an integer at line 1 column 16"),
    ("shape", r#"{"dimensions":["0x10"]}"#, false, r#"dimensions[0]: "0x10" is not an integer at line 1 column 16"#),
    ("shape", r#"{"dimensions":[""]}"#, false, r#"dimensions[0]: "" is not an integer at line 1 column 16"#),
    (
        "shape",
        r#"{"dimensions":[true]}"#,
        false,
        "dimensions[0]: expected an integer (a number or a string), found boolean at line 1 column 16",
    ),
    (
        "shape",
        r#"{"dimensions":[[2]]}"#,
        false,
        "dimensions[0]: expected an integer (a number or a string), found array at line 1 column 16",
    ),
    ("shape", r#"{"dimensions":[null]}"#, false, "dimensions[0]: null is not allowed in a list at line 1 column 16"),
    ("shape", r#"{"dimensions":"2"}"#, false, "dimensions: expected an array, found string at line 1 column 15"),
    (
        "shape",
        r#"{"elementType":"F99"}"#,
        false,
        r#"element_type: "F99" is not a value of xla.PrimitiveType at line 1 column 16"#,
    ),
    (
        "shape",
        r#"{"elementType":"f32"}"#,
        false,
        r#"element_type: "f32" is not a value of xla.PrimitiveType at line 1 column 16"#,
    ),
    (
        // The name before 2019-04-24.
        "shape",
        r#"{"elementType":"OPAQUE"}"#,
        false,
        r#"element_type: "OPAQUE" is not a value of xla.PrimitiveType at line 1 column 16"#,
    ),
    (
        "shape",
        r#"{"elementType":"11.0"}"#,
        false,
        r#"element_type: "11.0" is not a value of xla.PrimitiveType at line 1 column 16"#,
    ),
    (
        "shape",
        r#"{"elementType":2147483648}"#,
        false,
        "element_type: 2147483648 is out of range for int32 at line 1 column 16",
    ),
    ("shape", r#"{"elementType":"F32","elementType":"S32"}"#, false, r#"duplicate key "elementType" at line 1 column 22"#),
    ("shape", r#"{"foo":1}"#, false, r#"xla.ShapeProto has no field named "foo" at line 1 column 2"#),
    ("shape", r#"{"ElementType":"F32"}"#, false, r#"xla.ShapeProto has no field named "ElementType" at line 1 column 2"#),
    (
        "shape",
        r#"{"isDynamicDimension":["true"]}"#,
        false,
        "is_dynamic_dimension[0]: expected true or false, found string at line 1 column 24",
    ),
    (
        "shape",
        r#"{"isDynamicDimension":[1]}"#,
        false,
        "is_dynamic_dimension[0]: expected true or false, found number at line 1 column 24",
    ),
    ("shape", r#"{"layout":{"tiles":[null]}}"#, false, "layout.tiles[0]: null is not allowed in a list at line 1 column 21"),
    (
        "shape",
        r#"{"layout":{"dimLevelTypes":["DIM_DENSE","BOGUS"]}}"#,
        false,
        r#"layout.dim_level_types[1]: "BOGUS" is not a value of xla.DimLevelType at line 1 column 41"#,
    ),
    (
        "program-shape",
        r#"{"parameterNames":["\ud800"]}"#,
        false,
        "parameter_names[0]: string holds an unpaired surrogate at line 1 column 20",
    ),
    ("program-shape", r#"{"parameterNames":[5]}"#, false, "parameter_names[0]: expected a string, found number at line 1 column 20"),
    ("shape", r#"{"dimensions":[1,2,]}"#, false, "expected a value at line 1 column 20"),
    ("shape", r#"{"dimensions":[01]}"#, false, "expected ',' or ']' at line 1 column 17"),
    ("shape", "", false, "unexpected end of input, expected a value at line 1 column 1"),
    ("shape", "{} x", false, "trailing characters after the value at line 1 column 4"),
    ("shape", "5", false, "expected an object, found number at line 1 column 1"),
    ("shape", "null", false, "expected an object, found null at line 1 column 1"),
    ("shape", r#"{"elementType":"F32""#, false, "unexpected end of input in an object at line 1 column 21"),
    (
        // Google (G) rejects the legacy key; this crate knows it, so the error is inside.
        "shape",
        "{\n  \"layout\": {\n    \"paddedDimensions\": [\"3\", 5.5]\n  }\n}",
        false,
        "layout.padded_dimensions[1]: 5.5 is not an integer at line 3 column 31",
    ),
    (
        "shape",
        "{\"tupleShapes\": [{}, {\"layout\": {\"tiles\": [{\"dimensions\": [\"8\", \"x\"]}]}}]}",
        false,
        r#"tuple_shapes[1].layout.tiles[0].dimensions[1]: "x" is not an integer at line 1 column 65"#,
    ),
];

#[test]
fn rejects_what_google_rejects_saying_where_and_why() {
    for &(message, text, ignore, error) in REJECTED {
        assert_eq!(
            json_to_hex(kind(message), text, ignore),
            Err(error.to_string()),
            "{text}"
        );
    }
}

/// Inputs Google's Python parser accepts that this crate refuses on purpose (see the
/// `json` module docs): wrong JSON types that Python happens to iterate over or
/// convert, and one field under both its names. Google's C++, Go and Java parsers
/// refuse them all too.
#[test]
fn refuses_python_quirks_on_purpose() {
    for (message, text, error) in [
        // Python: an empty message.
        (
            "shape",
            "[]",
            "expected an object, found array at line 1 column 1",
        ),
        (
            "shape",
            "\"\"",
            "expected an object, found string at line 1 column 1",
        ),
        // Python: an empty layout.
        (
            "shape",
            r#"{"layout":[]}"#,
            "layout: expected an object, found array at line 1 column 11",
        ),
        // Python: PRED (int(True) == 1) and F32 (int(11.5) == 11).
        (
            "shape",
            r#"{"elementType":true}"#,
            "element_type: expected an enum name or number, found boolean at line 1 column 16",
        ),
        (
            "shape",
            r#"{"elementType":11.5}"#,
            "element_type: 11.5 is not an integer at line 1 column 16",
        ),
        // Python (upb): 0 and DIM_COMPRESSED (the low 32 bits), though 2^31 is refused.
        (
            "shape",
            r#"{"elementType":4294967296}"#,
            "element_type: 4294967296 is out of range for int32 at line 1 column 16",
        ),
        (
            "layout",
            r#"{"dimLevelTypes":["-9223372036854775807"]}"#,
            r#"dim_level_types[0]: "-9223372036854775807" is out of range for int32 at line 1 column 19"#,
        ),
        // Python: the last one wins. C++: "has already been set"; Go: "duplicate field".
        (
            "shape",
            r#"{"elementType":"F32","element_type":"S32"}"#,
            r#"element_type: "element_type" sets the same field as "elementType" again at line 1 column 22"#,
        ),
    ] {
        assert_eq!(
            json_to_hex(kind(message), text, false),
            Err(error.to_string()),
            "{text}"
        );
    }
}

#[test]
fn errors_carry_path_line_and_column() {
    let text = "{\n  \"tupleShapes\": [\n    {\"dimensions\": [\"2\"]},\n    {\"dimensions\": [true]}\n  ]\n}";
    let error = ShapeProto::from_json(text, &ParseOptions::new()).unwrap_err();
    assert_eq!(error.path().to_string(), "tuple_shapes[1].dimensions[0]");
    assert_eq!((error.line(), error.column()), (4, 21));
    assert!(matches!(
        error.kind(),
        JsonErrorKind::WrongType {
            found: "boolean",
            ..
        }
    ));

    let error = ShapeProto::from_json_slice(b"{\"a\xff\": 1}", &ParseOptions::new()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "input is not valid utf-8 at line 1 column 4"
    );
}

// ---------------------------------------------------------------------------------
// Depth: never a stack overflow
// ---------------------------------------------------------------------------------

/// `levels` shapes nested through `tuple_shapes`.
fn nested_tuples(levels: usize) -> String {
    "{\"tupleShapes\":[".repeat(levels - 1) + "{}" + &"]}".repeat(levels - 1)
}

/// `levels` messages nested through layout.physical_shape (shape, layout, shape, ...).
fn nested_layouts(levels: usize) -> String {
    let mut text = String::new();
    for i in 0..levels - 1 {
        text.push_str(if i % 2 == 0 {
            "{\"layout\":"
        } else {
            "{\"physicalShape\":"
        });
    }
    text + "{}" + &"}".repeat(levels - 1)
}

#[test]
fn message_depth_is_limited_like_google() {
    // Python's json_format.Parse: max_recursion_depth=100 counts the top message.
    let options = ParseOptions::new();
    assert!(ShapeProto::from_json(&nested_tuples(100), &options).is_ok());
    assert!(ShapeProto::from_json(&nested_layouts(100), &options).is_ok());
    let error = ShapeProto::from_json(&nested_layouts(101), &options).unwrap_err();
    assert_eq!(error.kind(), &JsonErrorKind::MessageTooDeep { limit: 100 });
    assert!(error
        .path()
        .to_string()
        .starts_with("layout.physical_shape.layout"));
    let error = ShapeProto::from_json(&nested_tuples(101), &options).unwrap_err();
    assert_eq!(error.kind(), &JsonErrorKind::MessageTooDeep { limit: 100 });
}

#[test]
fn hostile_nesting_is_an_error_not_a_crash() {
    let options = ParseOptions::new().ignore_unknown_fields(true);
    for text in [
        "[".repeat(100_000),
        "{\"a\":".repeat(100_000),
        format!("{{\"x\":{}}}", "[".repeat(600) + &"]".repeat(600)),
        nested_tuples(50_000),
    ] {
        let error = ShapeProto::from_json(&text, &options).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                JsonErrorKind::NestingTooDeep { .. } | JsonErrorKind::MessageTooDeep { .. }
            ),
            "{error}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------

fn int64() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0i64),
        Just(i64::MIN),
        Just(i64::MAX),
        -3i64..200,
        any::<i64>()
    ]
}

fn enum_number() -> impl Strategy<Value = i32> {
    prop_oneof![0i32..40, any::<i32>()]
}

fn int64_list() -> BoxedStrategy<Vec<i64>> {
    prop::collection::vec(int64(), 0..4).boxed()
}

fn bool_list() -> BoxedStrategy<Vec<bool>> {
    prop::collection::vec(any::<bool>(), 0..3).boxed()
}

/// Layouts; every group is boxed so that generating deep values stays light on the
/// stack in debug builds.
fn layout_strategy(shape: BoxedStrategy<ShapeProto>) -> BoxedStrategy<LayoutProto> {
    let legacy = (int64_list(), enum_number(), enum_number(), int64()).boxed();
    let tiles = prop::collection::vec(
        int64_list().prop_map(|dimensions| TileProto { dimensions }),
        0..3,
    )
    .boxed();
    let sparse = (
        prop::collection::vec(enum_number(), 0..3),
        prop::option::of(shape),
        enum_number(),
        enum_number(),
        bool_list(),
        bool_list(),
    )
        .boxed();
    let splits = prop::collection::vec(
        (int64(), int64_list()).prop_map(|(dimension, split_indices)| SplitConfigProto {
            dimension,
            split_indices,
        }),
        0..2,
    )
    .boxed();
    let scalars = (int64(), int64(), int64(), int64()).boxed();
    (int64_list(), legacy, tiles, sparse, splits, scalars)
        .prop_map(
            |(minor_to_major, legacy, tiles, sparse, split_configs, scalars)| LayoutProto {
                minor_to_major,
                padded_dimensions: legacy.0,
                padding_value: legacy.1,
                format: legacy.2,
                max_sparse_elements: legacy.3,
                tiles,
                element_size_in_bits: scalars.0,
                memory_space: scalars.1,
                dim_level_types: sparse.0,
                physical_shape: sparse.1.map(Box::new),
                index_primitive_type: sparse.2,
                pointer_primitive_type: sparse.3,
                dim_unique: sparse.4,
                dim_ordered: sparse.5,
                dynamic_shape_metadata_prefix_bytes: scalars.2,
                tail_padding_alignment_in_elements: scalars.3,
                split_configs,
            },
        )
        .boxed()
}

fn shape_strategy() -> BoxedStrategy<ShapeProto> {
    let leaf = (enum_number(), int64_list(), bool_list())
        .prop_map(
            |(element_type, dimensions, is_dynamic_dimension)| ShapeProto {
                element_type,
                dimensions,
                is_dynamic_dimension,
                ..ShapeProto::default()
            },
        )
        .boxed();
    leaf.prop_recursive(3, 12, 3, |inner| {
        (
            inner.clone(),
            prop::collection::vec(inner.clone(), 0..3).boxed(),
            prop::option::of(layout_strategy(inner)).boxed(),
        )
            .prop_map(|(mut shape, tuple_shapes, layout)| {
                shape.tuple_shapes = tuple_shapes;
                shape.layout = layout.map(Box::new);
                shape
            })
            .boxed()
    })
    .boxed()
}

fn program_strategy() -> impl Strategy<Value = ProgramShapeProto> {
    (
        prop::collection::vec(shape_strategy(), 0..3),
        prop::option::of(shape_strategy()),
        prop::collection::vec(any::<String>(), 0..3),
    )
        .prop_map(|(parameters, result, parameter_names)| ProgramShapeProto {
            parameters,
            result,
            parameter_names,
        })
}

fn all_print_options() -> [PrintOptions; 4] {
    let base = PrintOptions::new();
    [
        base,
        base.pretty(true),
        base.field_names(FieldNames::Proto),
        base.pretty(true).field_names(FieldNames::Proto),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn shape_round_trips(shape in shape_strategy()) {
        for options in all_print_options() {
            let text = shape.to_json(&options);
            let back = ShapeProto::from_json(&text, &ParseOptions::new()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert_eq!(&back, &shape);
            // serde_json reads it too, and sees the same value whatever the options.
            prop_assert_eq!(parsed(&text), parsed(&shape.to_json(&options.pretty(false))));
        }
    }

    #[test]
    fn program_shape_round_trips(program in program_strategy()) {
        for options in all_print_options() {
            let text = program.to_json(&options);
            prop_assert!(text.is_ascii());
            let back = ProgramShapeProto::from_json(&text, &ParseOptions::new()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
            prop_assert_eq!(&back, &program);
        }
    }

    /// Whatever the bytes, reading them never panics (errors are fine).
    #[test]
    fn arbitrary_input_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        for ignore in [false, true] {
            let _ = json::from_json(MessageKind::Shape, &bytes, &ParseOptions::new().ignore_unknown_fields(ignore));
        }
    }

    /// Mutations of a valid text never panic either.
    #[test]
    fn mutated_text_never_panics(shape in shape_strategy(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = shape.to_json(&PrintOptions::new()).into_bytes();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = json::from_json(MessageKind::Shape, &bytes, &ParseOptions::new());
    }
}

// ---------------------------------------------------------------------------------
// Fixtures generated from XLA and Google's runtime
// ---------------------------------------------------------------------------------

fn fixture_lines(name: &str) -> Option<Vec<Json>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(parsed)
            .collect(),
    )
}

/// The rows of a fixture file and of its `pending/` twin (records other modules'
/// tests do not handle yet, which this module's tests do).
fn fixture_rows(name: &str) -> Option<Vec<Json>> {
    let mut rows = fixture_lines(name)?;
    rows.extend(fixture_lines(&format!("pending/{name}")).unwrap_or_default());
    Some(rows)
}

/// The LayoutProto keys Google's printer never writes under XLA's schema.
const LEGACY_KEYS: [&str; 7] = [
    "paddedDimensions",
    "padded_dimensions",
    "paddingValue",
    "padding_value",
    "format",
    "maxSparseElements",
    "max_sparse_elements",
];

/// Removes the legacy keys from every layout object in `value`; returns how many.
fn strip_legacy(value: &mut Json) -> usize {
    match value {
        Json::Object(map) => {
            let mut removed = 0;
            if let Some(Json::Object(layout)) = map.get_mut("layout") {
                for key in LEGACY_KEYS {
                    removed += usize::from(layout.remove(key).is_some());
                }
            }
            removed + map.values_mut().map(strip_legacy).sum::<usize>()
        }
        Json::Array(items) => items.iter_mut().map(strip_legacy).sum(),
        _ => 0,
    }
}

/// Every fixture message prints as Google prints it and reads back to Google's bytes.
///
/// Messages with the legacy LayoutProto fields 2-5 carry Google's output under this
/// crate's schema too (`*_legacy_schema`: the same runtime given a descriptor with
/// those fields), which is what this crate must match.
#[test]
fn fixture_messages_print_and_read_as_google() {
    let Some(lines) = fixture_rows("messages.jsonl") else {
        eprintln!("fixtures/messages.jsonl not there yet; skipped");
        return;
    };
    let mut compared = 0;
    let mut bytes_compared = 0;
    let mut legacy_compared = 0;
    for line in &lines {
        let id = line["id"].as_str().unwrap_or("?");
        let kind = kind(line["message"].as_str().unwrap());
        let google = &line["google"];
        let (Json::Object(_), Some(hex_bytes)) = (&google["json_camel"], line["hex"].as_str())
        else {
            continue;
        };
        let Ok(message) = decode(kind, &hex::decode(hex_bytes).unwrap()) else {
            panic!("{id}: google printed JSON for bytes prost cannot decode");
        };
        let legacy_schema = google["json_camel_legacy_schema"].is_object();
        for (field, options) in [
            ("json_camel", PrintOptions::new()),
            (
                "json_proto",
                PrintOptions::new().field_names(FieldNames::Proto),
            ),
        ] {
            let expected = if legacy_schema {
                &google[format!("{field}_legacy_schema").as_str()]
            } else {
                &google[field]
            };
            for options in [options, options.pretty(true)] {
                let mut ours = parsed(&json::to_json(&message, &options));
                if !legacy_schema {
                    let legacy = strip_legacy(&mut ours);
                    assert_eq!(
                        legacy, 0,
                        "{id}: legacy keys printed, but the fixture has no legacy-schema JSON"
                    );
                }
                assert_eq!(&ours, expected, "{id}: {field}");
            }
            // Google's JSON read back gives Google's bytes: under this crate's schema
            // for the legacy messages; otherwise when Google's schema holds every field.
            let text = expected.to_string();
            let ours = json::from_json(kind, text.as_bytes(), &ParseOptions::new())
                .unwrap_or_else(|e| panic!("{id}: {field}: {e}"));
            let ours = hex::encode(encode(&ours));
            let reencoded = hex::encode(encode(&message));
            let google_hex = match google["reserialized_hex_legacy_schema"].as_str() {
                Some(legacy_hex) => Some(legacy_hex),
                None if legacy_schema => google["reserialized_hex"].as_str(),
                None => google["reserialized_hex"]
                    .as_str()
                    .filter(|&h| h == reencoded),
            };
            if let Some(google_hex) = google_hex {
                assert_eq!(ours, google_hex, "{id}: {field}");
                bytes_compared += 1;
                legacy_compared += usize::from(legacy_schema);
            }
        }
        // Our own JSON reads back to the message exactly.
        let ours = json::to_json(&message, &PrintOptions::new());
        let back = json::from_json(kind, ours.as_bytes(), &ParseOptions::new()).unwrap();
        assert_eq!(encode(&back), encode(&message), "{id}");
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} fixture messages compared");
    // Most fixtures hold no field unknown to Google's schema.
    assert!(
        bytes_compared >= compared,
        "bytes compared only {bytes_compared} times for {compared} messages"
    );
    if lines
        .iter()
        .any(|l| l["google"]["json_camel_legacy_schema"].is_object())
    {
        assert!(legacy_compared > 0, "no legacy-schema bytes compared");
    }
}

/// Inputs Google's Python parser accepts and this crate refuses on purpose (see the
/// `json` module docs), by fixture id (without `-ignore-unknown`).
const DELIBERATE_DIFFERENCES: &[(&str, &str)] = &[
    (
        "enum-fraction",
        "Python truncates 11.5 to 11; never a silent truncation",
    ),
    (
        "enum-bool",
        "Python reads true as 1 (a bool is an int there); never a silent change of type",
    ),
    (
        "enum-int64-min-string",
        "Python drops an enum number below int32's range without a word; refused as out of range",
    ),
    (
        "duplicate-camel-snake",
        "one field under both names; C++, Go and Java refuse it too",
    ),
    (
        "layout-json-name-only",
        "one field under both names; C++, Go and Java refuse it too",
    ),
    (
        "wrong-type-array-for-message",
        "Python iterates over [] as over an empty object",
    ),
    (
        "top-level-string",
        "Python iterates over a string's characters as over keys",
    ),
];

/// Every JSON input gets Google's verdict, with Google's bytes; under this crate's
/// schema (`legacy_schema`) where the verdict depends on the legacy fields.
#[test]
fn fixture_json_inputs_get_googles_verdict() {
    let Some(lines) = fixture_rows("json_inputs.jsonl") else {
        eprintln!("fixtures/json_inputs.jsonl not there yet; skipped");
        return;
    };
    assert!(lines.len() >= 40, "only {} JSON inputs", lines.len());
    let mut deliberate = 0;
    for line in &lines {
        let id = line["id"].as_str().unwrap_or("?");
        let kind = kind(line["message"].as_str().unwrap());
        let text = line["json"].as_str().unwrap();
        let ignore = line["ignore_unknown_fields"].as_bool().unwrap_or(false);
        let verdict = if line["legacy_schema"].is_object() {
            &line["legacy_schema"]
        } else {
            line
        };
        let ours = json_to_hex(kind, text, ignore);
        let base = id.trim_end_matches("-ignore-unknown");
        if let Some((_, why)) = DELIBERATE_DIFFERENCES.iter().find(|(d, _)| *d == base) {
            if verdict["ok"] == true {
                assert!(
                    ours.is_err(),
                    "{id}: accepted, though refused on purpose ({why})"
                );
                deliberate += 1;
                continue;
            }
        }
        match (verdict["ok"].as_bool().unwrap(), &ours) {
            (true, Ok(bytes)) => assert_eq!(
                Some(bytes.as_str()),
                verdict["hex"].as_str(),
                "{id}: {text}"
            ),
            (false, Err(message)) => assert!(!message.is_empty()),
            (true, Err(message)) => panic!("{id}: google accepts {text:?}, we say {message}"),
            (false, Ok(_)) => panic!(
                "{id}: google rejects {text:?} ({}), we accept",
                verdict["error"]
            ),
        }
    }
    eprintln!("{} inputs, {deliberate} refused on purpose", lines.len());
}

/// Large objects (past the 16 keys compared one by one) still find a key given twice,
/// written alike or with escapes, in a message or in a value stepped over, and
/// accept distinct ones.
#[test]
fn large_objects_find_a_key_given_twice() {
    use xla_shape::json::{from_json, ParseOptions};
    use xla_shape::MessageKind;
    let keys: Vec<String> = (0..200).map(|i| format!("\"k{i}\":{i}")).collect();
    let read = |json: &str| {
        from_json(
            MessageKind::Shape,
            json.as_bytes(),
            &ParseOptions::new().ignore_unknown_fields(true),
        )
    };
    let plain = format!("{{\"elementType\":\"F32\",{}}}", keys.join(","));
    assert!(read(&plain).is_ok(), "{:?}", read(&plain));
    for (again, at_end) in [
        ("\"k7\":1", true),
        ("\"\\u006b7\":1", true),
        ("\"k199\":1", false),
    ] {
        let mut all = keys.clone();
        if at_end {
            all.push(again.to_string());
        } else {
            all.insert(150, again.to_string());
        }
        let json = format!("{{\"elementType\":\"F32\",{}}}", all.join(","));
        let error = read(&json).unwrap_err().to_string();
        assert!(error.contains("duplicate"), "{again}: {error}");
        // The same object as a value stepped over (an unknown field's value).
        let nested = format!("{{\"elementType\":\"F32\",\"x\":{{{}}}}}", all.join(","));
        let error = read(&nested).unwrap_err().to_string();
        assert!(error.contains("duplicate"), "{again}: {error}");
    }
    // An escaped key among many, given once.
    let mut escaped = keys.clone();
    escaped.push("\"\\u0078y\":1".into());
    let json = format!("{{\"elementType\":\"F32\",{}}}", escaped.join(","));
    assert!(read(&json).is_ok());
}
