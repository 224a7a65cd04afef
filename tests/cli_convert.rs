//! `xla-shape convert` run as a program: bytes in, bytes out, exit codes, messages.

mod util;
use util::{bytes, xla_shape};

const BINARY: &[&str] = &["convert", "--from", "binary", "--to", "binary"];

#[test]
fn example_file_converts_to_itself() {
    // The README example: f32[2,3]{1,0} as XLA's C++ writes it (reference §8).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/f32_2x3.binpb");
    let expected = bytes("10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00");
    assert_eq!(std::fs::read(path).unwrap(), expected);
    let out = xla_shape(&[BINARY, &[path]].concat(), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, expected);
    assert!(out.stderr.is_empty());
}

/// The README's first command, and its `--to hlo` twin: Google's json_format of this
/// shape, compact (reference §10 and §8), and XLA's text `f32[2,3]{1,0}` (§8).
#[test]
fn readme_example_prints_googles_json_and_xla_text() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/f32_2x3.binpb");
    for (form, expected) in [
        (
            "json",
            r#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"],"tailPaddingAlignmentInElements":"1"},"isDynamicDimension":[false,false]}"#,
        ),
        ("hlo", "f32[2,3]{1,0}"),
    ] {
        let out = xla_shape(&["convert", "--from", "binary", "--to", form, path], b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), expected);
    }
}

#[test]
fn stdin_is_read_with_dash_or_no_path_and_canonicalized() {
    // Unknown field 99 in the layout, unpacked dimensions: Google's runtime writes
    // the dimensions packed and keeps the unknown field after the known ones.
    let input = bytes("2a 03 98 06 01 18 02 18 03 10 0b");
    let expected = bytes("10 0b 1a 02 02 03 2a 03 98 06 01");
    for args in [BINARY.to_vec(), [BINARY, &["-"]].concat()] {
        let out = xla_shape(&args, &input);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(out.stdout, expected);
    }
    let out = xla_shape(
        &[BINARY, &["--message", "layout"]].concat(),
        &bytes("08 01 08 00"),
    );
    assert_eq!(out.stdout, bytes("0a 02 01 00"));
    let out = xla_shape(
        &[BINARY, &["--message", "program-shape"]].concat(),
        &bytes("1a 01 61 0a 00"),
    );
    assert_eq!(out.stdout, bytes("0a 00 1a 01 61"));
}

#[test]
fn undecodable_input_exits_2_with_the_reason() {
    let out = xla_shape(BINARY, &bytes("10 0b 22 02 2a 05"));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "xla-shape: <stdin>: tuple_shapes[0].layout: length 5 runs past the end of the message (0 bytes left) at byte 5\n"
    );
    let out = xla_shape(&[BINARY, &["/nonexistent/shape.binpb"]].concat(), b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "xla-shape: no such file: /nonexistent/shape.binpb\n"
    );
}

#[test]
fn every_fixture_converts_to_what_googles_runtime_writes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let Ok(text) = std::fs::read_to_string(format!("{dir}/messages.jsonl")) else {
        return;
    };
    // With the messages the generator set aside for other parts of the crate.
    let pending =
        std::fs::read_to_string(format!("{dir}/pending/messages.jsonl")).unwrap_or_default();
    let mut count = 0;
    for line in text
        .lines()
        .chain(pending.lines())
        .filter(|l| !l.trim().is_empty())
    {
        let row: Row = serde_json::from_str(line).expect("fixture json");
        let (id, message) = (&row.id, row.message.as_str());
        let input = hex::decode(&row.hex).expect("hex");
        let out = xla_shape(&[BINARY, &["--message", message]].concat(), &input);
        let google = (row.google.reserialized_hex_legacy_schema.as_ref())
            .or(row.google.reserialized_hex.as_ref());
        match google {
            Some(google) => {
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{id}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(&hex::encode(&out.stdout), google, "{id}");
            }
            None => {
                assert_eq!(out.status.code(), Some(2), "{id}");
                assert!(String::from_utf8_lossy(&out.stderr).starts_with("xla-shape: <stdin>: "));
            }
        }
        count += 1;
    }
    assert!(count >= 500, "only {count} fixture messages");
}

/// The fields of a fixture line this test reads (typed: serde skips the rest,
/// however deeply nested, without a recursion limit).
#[derive(serde::Deserialize)]
struct Row {
    id: String,
    message: String,
    hex: String,
    google: GoogleColumns,
}

#[derive(serde::Deserialize)]
struct GoogleColumns {
    reserialized_hex: Option<String>,
    /// Google's runtime given a schema that declares the retired layout fields 2-5
    /// (as XLA's did in 2017-2022, and as ours does): it writes them in number order.
    reserialized_hex_legacy_schema: Option<String>,
}
