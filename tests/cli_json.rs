//! `xla-shape convert --from json` / `--to json` run as a program. Expected JSON is
//! Google's (`json_format`, reference §8 and the fixtures).

use std::process::Output;

mod util;
use util::{bytes, xla_shape};

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

fn unreadable(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr.clone()).expect("utf-8 stderr")
}

/// f32[2,3]{1,0} as XLA HEAD's C++ writes it (reference §8).
const F32_2X3: &str = "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00";

const TO_JSON: &[&str] = &["convert", "--from", "binary", "--to", "json"];
const FROM_JSON: &[&str] = &["convert", "--from", "json", "--to", "binary"];

#[test]
fn binary_to_json_in_every_style() {
    let input = bytes(F32_2X3);
    // Reference §9.10, compact.
    assert_eq!(
        ok(&xla_shape(TO_JSON, &input)),
        "{\"elementType\":\"F32\",\"dimensions\":[\"2\",\"3\"],\"layout\":{\"minorToMajor\":[\"1\",\"0\"],\"tailPaddingAlignmentInElements\":\"1\"},\"isDynamicDimension\":[false,false]}\n"
    );
    // Reference §8, MessageToJson's indent of 2.
    assert_eq!(
        ok(&xla_shape(&[TO_JSON, &["--pretty"]].concat(), &input)),
        "{\n  \"elementType\": \"F32\",\n  \"dimensions\": [\n    \"2\",\n    \"3\"\n  ],\n  \"layout\": {\n    \"minorToMajor\": [\n      \"1\",\n      \"0\"\n    ],\n    \"tailPaddingAlignmentInElements\": \"1\"\n  },\n  \"isDynamicDimension\": [\n    false,\n    false\n  ]\n}\n"
    );
    // Google, preserving_proto_field_name=True.
    assert_eq!(
        ok(&xla_shape(&[TO_JSON, &["--json-names", "proto"]].concat(), &input)),
        "{\"element_type\":\"F32\",\"dimensions\":[\"2\",\"3\"],\"layout\":{\"minor_to_major\":[\"1\",\"0\"],\"tail_padding_alignment_in_elements\":\"1\"},\"is_dynamic_dimension\":[false,false]}\n"
    );
}

#[test]
fn json_to_binary_gives_the_bytes_back() {
    for json in [
        // Google's compact and proto-name forms, and numbers instead of strings.
        r#"{"elementType": "F32", "dimensions": ["2", "3"], "layout": {"minorToMajor": ["1", "0"], "tailPaddingAlignmentInElements": "1"}, "isDynamicDimension": [false, false]}"#,
        r#"{"element_type": "F32", "dimensions": [2, 3], "layout": {"minor_to_major": [1, 0], "tail_padding_alignment_in_elements": 1}, "is_dynamic_dimension": [false, false]}"#,
    ] {
        let out = xla_shape(FROM_JSON, json.as_bytes());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, bytes(F32_2X3));
    }
    // A file argument, a layout.
    let dir = std::env::temp_dir().join(format!("xla-shape-cli-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("layout.json");
    std::fs::write(&path, r#"{"minorToMajor": ["1", "0"], "tiles": [{"dimensions": ["8", "128"]}, {"dimensions": ["2", "1"]}], "elementSizeInBits": "4", "memorySpace": "1", "tailPaddingAlignmentInElements": "1", "splitConfigs": [{"dimension": "1", "splitIndices": ["512"]}]}"#).unwrap();
    let out = xla_shape(
        &[FROM_JSON, &["--message", "layout", path.to_str().unwrap()]].concat(),
        b"",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Reference §8.
    assert_eq!(
        out.stdout,
        bytes("0a 02 01 00 32 05 0a 03 08 80 01 32 04 0a 02 02 01 38 04 40 01 80 01 01 8a 01 06 08 01 12 02 80 04")
    );
}

#[test]
fn json_and_hlo_text_convert_both_ways() {
    let out = xla_shape(
        &["convert", "--from", "json", "--to", "hlo"],
        br#"{"elementType":"BF16","dimensions":["32","32","4096"],"layout":{"minorToMajor":["2","1","0"],"tiles":[{"dimensions":["8","128"]},{"dimensions":["2","1"]}],"memorySpace":"1"}}"#,
    );
    assert_eq!(ok(&out), "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}\n");
    let out = xla_shape(
        &["convert", "--from", "hlo", "--to", "json"],
        b"(f32[], token[])",
    );
    assert_eq!(
        ok(&out),
        "{\"elementType\":\"TUPLE\",\"tupleShapes\":[{\"elementType\":\"F32\",\"layout\":{\"tailPaddingAlignmentInElements\":\"1\"}},{\"elementType\":\"TOKEN\"}]}\n"
    );
}

#[test]
fn unknown_binary_fields_are_dropped_from_json() {
    // A field 99 in the layout: Google's printer drops it; we say so on stderr.
    let out = xla_shape(TO_JSON, &bytes("10 0b 2a 03 98 06 01"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"elementType\":\"F32\",\"layout\":{}}\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "xla-shape: warning: <stdin>: layout: unknown field 99 is not written: JSON has no form for it\n"
    );
}

#[test]
fn unreadable_json_says_where_and_why() {
    for (input, message) in [
        (
            "{\"elementType\": \"F32\",\n \"dimensions\": [2, 1.5]}",
            "xla-shape: <stdin>: dimensions[1]: 1.5 is not an integer at line 2 column 20\n",
        ),
        (
            "{\"elementType\": \"F32\", \"rank\": 2}",
            "xla-shape: <stdin>: xla.ShapeProto has no field named \"rank\" at line 1 column 24\n",
        ),
        (
            "{\"layout\": {\"minorToMajor\": [0], \"minorToMajor\": [1]}}",
            "xla-shape: <stdin>: duplicate key \"minorToMajor\" at line 1 column 34\n",
        ),
        (
            "{\"elementType\": \"F32\"",
            "xla-shape: <stdin>: unexpected end of input in an object at line 1 column 22\n",
        ),
    ] {
        assert_eq!(
            unreadable(&xla_shape(FROM_JSON, input.as_bytes())),
            message,
            "{input}"
        );
    }
    for (input, message) in [
        (
            &b"\xff"[..],
            "xla-shape: <stdin>: input is not valid utf-8 at line 1 column 1\n",
        ),
        (
            &b"{\"a\":\n \"\xc3\"}"[..],
            "xla-shape: <stdin>: input is not valid utf-8 at line 2 column 3\n",
        ),
    ] {
        assert_eq!(unreadable(&xla_shape(FROM_JSON, input)), message);
    }
}

#[test]
fn unknown_keys_can_be_ignored() {
    let json = br#"{"elementType": "TOKEN", "rank": 0, "layout": null, "futureField": {"a": [1]}}"#;
    let out = xla_shape(&[FROM_JSON, &["--ignore-unknown-fields"]].concat(), json);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Reference §8: token.
    assert_eq!(out.stdout, bytes("10 11"));
}

#[test]
fn fixture_messages_convert_to_googles_json() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/messages.jsonl");
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("fixtures/messages.jsonl not there yet; skipped");
        return;
    };
    // A spread of the fixtures: every kind and origin, without a process per line.
    let mut seen = std::collections::HashSet::new();
    let mut converted = 0;
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("fixture json");
        let key = (row["message"].to_string(), row["origin"].to_string());
        // Messages with retired layout fields: Google's runtime given a schema that
        // declares them, as ours does.
        let google = &row["google"];
        let legacy = google["json_camel_legacy_schema"].is_object();
        let expected = if legacy {
            &google["json_camel_legacy_schema"]
        } else {
            &google["json_camel"]
        };
        if expected.is_null() || !seen.insert(key) {
            continue;
        }
        let message = row["message"].as_str().unwrap();
        let input = bytes(row["hex"].as_str().unwrap());
        let out = ok(&xla_shape(
            &[TO_JSON, &["--message", message]].concat(),
            &input,
        ));
        let ours: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(&ours, expected, "{}", row["id"]);
        let back = xla_shape(
            &[
                "convert",
                "--from",
                "json",
                "--to",
                "binary",
                "--message",
                message,
            ],
            out.as_bytes(),
        );
        assert_eq!(back.status.code(), Some(0));
        // JSON carries no unknown fields, so only a message without any comes back
        // as Google's runtime wrote it.
        let has_unknown = row["features"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == "unknown-fields"));
        if !has_unknown {
            let hex_key = if legacy {
                "reserialized_hex_legacy_schema"
            } else {
                "reserialized_hex"
            };
            assert_eq!(
                Some(hex::encode(&back.stdout)),
                google[hex_key].as_str().map(str::to_owned),
                "{}",
                row["id"]
            );
        }
        converted += 1;
    }
    assert!(converted >= 4, "only {converted} fixture kinds converted");
}

/// JSON that decodes but is invalid goes through the validation gate like any input.
#[test]
fn validate_reads_json() {
    let validate = ["validate", "--from", "json"];
    // XLA's C++ form of f32[2,3]{1,0} (reference §8, §9.10): valid.
    let valid = br#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"],"tailPaddingAlignmentInElements":"1"},"isDynamicDimension":[false,false]}"#;
    let out = xla_shape(&validate, valid);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // minor_to_major must be a permutation (reference §9.4): invalid, exit 1, with the path.
    let invalid =
        br#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["0","0"]}}"#;
    let out = xla_shape(&validate, invalid);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("layout.minor_to_major[1]"));
    // Not readable as a ShapeProto: exit 2, with the JSON error.
    let out = xla_shape(
        &validate,
        br#"{"elementType":"F32","dimensions":["2",true]}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    let all =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(all.contains("dimensions[1]: expected an integer (a number or a string), found boolean at line 1 column 40"), "{all}");
    // A program shape (token) -> pred[], the result as XLA writes a scalar (see the
    // (f32[], token[]) parse above).
    let program = br#"{"parameters":[{"elementType":"TOKEN"}],"result":{"elementType":"PRED","layout":{"tailPaddingAlignmentInElements":"1"}},"parameterNames":["t"]}"#;
    let out = xla_shape(
        &[&validate[..], &["--message", "program-shape"]].concat(),
        program,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Every unknown field dropped from JSON is named, top level and nested; nothing is
/// said of a message without any.
#[test]
fn unknown_fields_dropped_from_json_are_named_on_stderr() {
    // token with field 23 = 11.
    let out = xla_shape(TO_JSON, &bytes("10 11 b8 01 0b"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"{\"elementType\":\"TOKEN\"}\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "xla-shape: warning: <stdin>: unknown field 23 is not written: JSON has no form for it\n"
    );
    assert!(xla_shape(TO_JSON, &bytes("10 11")).stderr.is_empty());
}
