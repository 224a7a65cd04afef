//! The command line's HLO text parts: `convert --from/--to hlo`, `validate --from
//! hlo|hlo-module|hlo-module-proto` and `explain`.

use std::path::{Path, PathBuf};

mod util;
use util::{bytes, stderr, stdout, xla_shape as run};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

#[test]
fn hlo_to_binary_writes_xla_bytes() {
    // Reference §1.7: f32[2,3]{1,0} as XLA's Shape::ToProto writes it.
    let out = run(
        &["convert", "--from", "hlo", "--to", "binary"],
        b"f32[2,3]\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        out.stdout,
        bytes("10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00")
    );
    // Reference §8: a layout as C++ emits it.
    let out = run(
        &[
            "convert",
            "--from",
            "hlo",
            "--to",
            "binary",
            "--message",
            "layout",
        ],
        b"{1,0:T(8,128)(2,1)E(4)S(1)SC(1:512)}",
    );
    assert_eq!(
        out.stdout,
        bytes("0a 02 01 00 32 05 0a 03 08 80 01 32 04 0a 02 02 01 38 04 40 01 80 01 01 8a 01 06 08 01 12 02 80 04")
    );
}

/// A sample of `fixtures/hlo_shapes.jsonl` through the binary (the library test checks
/// every line; this checks the command wires it up the same way).
#[test]
fn hlo_shapes_fixture_through_the_cli() {
    let Ok(content) = std::fs::read_to_string(fixtures().join("hlo_shapes.jsonl")) else {
        return;
    };
    let records: Vec<serde_json::Value> = content
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(records.len() >= 500);
    let mut checked = 0;
    for record in records.iter().step_by(12) {
        let text = record["text"].as_str().unwrap();
        let out = run(
            &["convert", "--from", "hlo", "--to", "binary"],
            text.as_bytes(),
        );
        if record["ok"].as_bool().unwrap() {
            assert_eq!(out.status.code(), Some(0), "{text}: {}", stderr(&out));
            assert_eq!(
                hex::encode(&out.stdout),
                record["xla_hex"].as_str().unwrap(),
                "{text}"
            );
            // And back to text: XLA's text by default; the lossless text (which never
            // narrows or drops anything) reads back to the same bytes.
            let back = run(&["convert", "--from", "binary", "--to", "hlo"], &out.stdout);
            assert_eq!(back.status.code(), Some(0), "{text}: {}", stderr(&back));
            assert_eq!(
                stdout(&back).trim_end(),
                record["xla_text"].as_str().unwrap(),
                "{text}"
            );
            let back = run(
                &[
                    "convert",
                    "--from",
                    "binary",
                    "--to",
                    "hlo",
                    "--hlo-style",
                    "exact",
                ],
                &out.stdout,
            );
            assert_eq!(back.status.code(), Some(0), "{text}: {}", stderr(&back));
            let again = run(
                &["convert", "--from", "hlo", "--to", "binary"],
                &back.stdout,
            );
            assert_eq!(again.stdout, out.stdout, "{text}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{text}");
        }
        checked += 1;
    }
    assert!(checked >= 40);
}

#[test]
fn binary_to_hlo_prints_every_form() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&[], "f32[2,3]{1,0}", "f32[2,3]{1,0}\n"),
        (
            &[],
            "(f32[], token[], b(s8[4]))",
            "(f32[], token[], b(s8[4]{0}))\n",
        ),
        (
            &["--message", "layout"],
            "{0,1:T(8,128)L(1024)}",
            "{0,1:T(8,128)L(1024)}\n",
        ),
        (
            &["--message", "program-shape"],
            "{(f32[2]{0}, s32[])->(f32[], s32[])}",
            "(f32[2]{0}, s32[])->(f32[], s32[])\n",
        ),
    ];
    for (extra, input, want) in cases {
        let mut to_binary = vec!["convert", "--from", "hlo", "--to", "binary"];
        to_binary.extend_from_slice(extra);
        let binary = run(&to_binary, input.as_bytes());
        assert_eq!(
            binary.status.code(),
            Some(0),
            "{input}: {}",
            stderr(&binary)
        );
        let mut to_hlo = vec![
            "convert",
            "--from",
            "binary",
            "--to",
            "hlo",
            "--hlo-style",
            "exact",
        ];
        to_hlo.extend_from_slice(extra);
        let text = run(&to_hlo, &binary.stdout);
        assert_eq!(stdout(&text), *want);
    }
    // Reference §2.2: the retired fields print in our extension in the lossless text;
    // XLA ignores them, and so does its text.
    let old = bytes("10 0b 1a 02 02 03 2a 0c 0a 02 01 00 12 02 03 05 18 01 20 01");
    let out = run(
        &[
            "convert",
            "--from",
            "binary",
            "--to",
            "hlo",
            "--hlo-style",
            "exact",
        ],
        &old,
    );
    assert_eq!(stdout(&out), "f32[2,3]{1,0:PD(3,5)PV(zero)F(dense)}\n");
    let out = run(&["convert", "--from", "binary", "--to", "hlo"], &old);
    assert_eq!(stdout(&out), "f32[2,3]{1,0}\n");
}

/// Program shapes: XLA's `entry_computation_layout` has no parameter names (XLA's parser
/// rejects them there); the lossless text keeps them.
#[test]
fn program_shapes_print_without_names_unless_exact() {
    let named = "(a: f32[2]{0}, b: s32[])->f32[]";
    let args = [
        "convert",
        "--from",
        "hlo",
        "--to",
        "hlo",
        "--message",
        "program-shape",
    ];
    let out = run(&args, named.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(f32[2]{0}, s32[])->f32[]\n");
    let out = run(
        &[&args[..], &["--hlo-style", "exact"]].concat(),
        named.as_bytes(),
    );
    assert_eq!(stdout(&out), format!("{named}\n"));
}

/// Every fixture message XLA printed (`xla.text`: a shape's text, a layout's part after
/// `]`, a program shape's `entry_computation_layout`) converts from its bytes to exactly
/// that text, with no refusal; unknown fields are dropped with one warning each.
#[test]
fn every_fixture_converts_to_xlas_text() {
    let Ok(content) = std::fs::read_to_string(fixtures().join("messages.jsonl")) else {
        return;
    };
    let mut checked = 0;
    for line in content.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(want) = record["xla"]["text"].as_str() else {
            continue;
        };
        let id = record["id"].as_str().unwrap();
        let message = record["message"].as_str().unwrap();
        let input = hex::decode(record["hex"].as_str().unwrap()).unwrap();
        let out = run(
            &[
                "convert",
                "--from",
                "binary",
                "--to",
                "hlo",
                "--message",
                message,
            ],
            &input,
        );
        assert_eq!(out.status.code(), Some(0), "{id}: {}", stderr(&out));
        assert_eq!(stdout(&out), format!("{want}\n"), "{id}");
        let unknown = record["features"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "unknown-fields");
        let warnings = stderr(&out);
        assert!(
            warnings
                .lines()
                .all(|l| l.starts_with("xla-shape: warning: <stdin>: ")
                    && l.ends_with(" is not written: XLA's text has no form for it")),
            "{id}: {warnings}"
        );
        if !unknown {
            assert_eq!(warnings, "", "{id}");
        }
        checked += 1;
    }
    assert!(
        checked >= 1000,
        "only {checked} fixture messages with XLA text"
    );
}

#[test]
fn hlo_errors_show_a_caret_and_exit_2() {
    let out = run(
        &["convert", "--from", "hlo", "--to", "binary"],
        b"f32[123,456,789]{1:T(2, * , 128)}",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: dimensions size is 3, but minor to major size is 1\n  f32[123,456,789]{1:T(2, * , 128)}\n                  ^^^^^^^^^^^^^^^^^\n"
    );
    // Deep input: an error, never a crash.
    let deep = format!("{}f32[]{}", "(".repeat(100_000), ")".repeat(100_000));
    let out = run(
        &["convert", "--from", "hlo", "--to", "hlo"],
        deep.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nest deeper than 32768"),
        "{}",
        stderr(&out)
    );
    let out = run(
        &["convert", "--from", "hlo", "--to", "binary"],
        &deep.as_bytes()[..deep.len() / 2],
    );
    assert_eq!(out.status.code(), Some(2));
    // A value the lossless text cannot carry is refused, not dropped; XLA's text
    // narrows it as XLA does.
    let shape = bytes("10 0b 1a 01 02 2a 06 0a 01 00 40 ac 02"); // f32[2]{0:S(300)}
    let out = run(
        &[
            "convert",
            "--from",
            "binary",
            "--to",
            "hlo",
            "--hlo-style",
            "exact",
        ],
        &shape,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: layout.memory_space: memory space 300 does not fit XLA's 8 bits; text would read back as 44\n"
    );
    let out = run(&["convert", "--from", "binary", "--to", "hlo"], &shape);
    assert_eq!(stdout(&out), "f32[2]{0:S(44)}\n");
    // One message per error: no doubled phrase, no empty path.
    let negative = bytes("10 0b 1a 0a fb ff ff ff ff ff ff ff ff 01"); // f32[-5]
    let out = run(
        &[
            "convert",
            "--from",
            "binary",
            "--to",
            "hlo",
            "--hlo-style",
            "exact",
        ],
        &negative,
    );
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: dimensions[0]: dimension -5 has no text form\n"
    );
    let top_level_unknown = bytes("10 0b 08 01"); // f32[], then field 1 = 1
    let out = run(
        &[
            "convert",
            "--from",
            "binary",
            "--to",
            "hlo",
            "--hlo-style",
            "exact",
        ],
        &top_level_unknown,
    );
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: unknown field 1 has no text form (--hlo-style xla drops it with a warning)\n"
    );
    let out = run(
        &["convert", "--from", "binary", "--to", "hlo"],
        &top_level_unknown,
    );
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "f32[]\n")
    );
    assert_eq!(
        stderr(&out),
        "xla-shape: warning: <stdin>: unknown field 1 is not written: XLA's text has no form for it\n"
    );
}

#[test]
fn explain_says_what_a_shape_means() {
    let out = run(
        &["explain", "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}",
        "16-bit floating point, 2 bytes per element",
        "dimension 0 (z): 32",
        "dimension 2 (x): 4096",
        "dimension 2 (x) varies fastest in memory, dimension 0 (z) slowest",
        "tile (8,128)",
        "then tile (2,1)",
        "memory space S(1): generic fast memory (VMEM on TPU)",
        // 32 * 32 * 4096 elements of 2 bytes.
        "4194304 elements, 8388608 bytes (8 MiB) of elements",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let out = run(&["explain", "f32[2,3]{1,1}"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("layout.minor_to_major[1]"),
        "{}",
        stderr(&out)
    );
    let out = run(&["explain", "f32[2,3"], b"");
    assert_eq!(out.status.code(), Some(2));
}

fn modules(suffix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(fixtures().join("modules")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

#[test]
fn validate_hlo_lines() {
    let input = b"f32[2,3]{1,0}\nf32[2,3]{1,1}\n\nbf16[2,3,1004]{2,1,0:T(2,*,128)}\nu8[4]{1}\n";
    let out = run(&["validate", "--from", "hlo"], input);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "<stdin>:2:1: error[duplicate_dimension]: layout.minor_to_major[1]: dimension 1 is listed twice (first at minor_to_major[0])\n\
         <stdin>:5:1: error[dimension_out_of_range]: layout.minor_to_major[0]: dimension 1 is out of range for a shape with 1 dimension\n"
    );
    let out = run(
        &["validate", "--from", "hlo"],
        b"f32[2,3]\n(f32[], token[])\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(out.stdout.is_empty());
    // A line that does not parse is an error at its line and column.
    let out = run(&["validate", "--from", "hlo"], b"f32[2]\nf32[2,3\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "<stdin>:2:8: error[hlo_syntax]: expects ']' at the end of the dimensions\n"
    );
}

#[test]
fn every_real_module_validates_as_text_and_as_proto() {
    let texts = modules(".hlo.txt");
    let protos = modules(".hlo.pb");
    if texts.is_empty() {
        return;
    }
    assert!(texts.len() >= 5 && protos.len() >= 5);
    for (form, files) in [("hlo-module", &texts), ("hlo-module-proto", &protos)] {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        let mut args = vec!["validate", "--from", form];
        args.extend(names.iter().map(String::as_str));
        let out = run(&args, b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{form}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{form}: {}", stdout(&out));
    }
}

#[test]
fn a_corrupted_module_is_reported_where_the_corruption_is() {
    let Some((path, original)) = modules(".hlo.txt")
        .into_iter()
        .map(|p| (p.clone(), std::fs::read_to_string(p).unwrap()))
        .find(|(_, text)| text.contains("]{1,0}"))
    else {
        return;
    };
    // Corrupt the last `{1,0}` layout of the module (an instruction, not the header).
    let at = original.rfind("]{1,0}").expect("a {1,0} layout") + 1;
    let line = original[..at].matches('\n').count() + 1;
    let line_start = original[..at].rfind('\n').map_or(0, |i| i + 1);
    let open = original[..at].rfind('[').unwrap();
    let start = original[..open]
        .rfind(|c: char| !c.is_ascii_alphanumeric())
        .map_or(0, |i| i + 1);
    let column = original[line_start..start].chars().count() + 1;
    let corrupted = format!("{}{{1,1}}{}", &original[..at], &original[at + 5..]);
    let out = run(
        &["validate", "--from", "hlo-module", "-"],
        corrupted.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!("<stdin>:{line}:{column}: error[duplicate_dimension]: layout.minor_to_major[1]: dimension 1 is listed twice (first at minor_to_major[0]) (instruction broadcast_add_fusion, computation main.1)\n")
    );

    // The same corruption in the serialized module: minor_to_major [1,0] becomes [1,1].
    let proto = path.with_extension("pb");
    let mut bytes = std::fs::read(proto).unwrap();
    let pattern = [0x0a, 0x02, 0x01, 0x00];
    let at = bytes
        .windows(4)
        .position(|w| w == pattern)
        .expect("a [1,0] minor_to_major");
    bytes[at + 3] = 0x01;
    let out = run(&["validate", "--from", "hlo-module-proto", "-"], &bytes);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stdout(&out);
    assert_eq!(report.lines().count(), 1, "{report}");
    assert!(
        report.starts_with("<stdin>: error[duplicate_dimension]: computations[")
            || report.starts_with("<stdin>: error[duplicate_dimension]: host_program_shape."),
        "{report}"
    );
    assert!(
        report.contains(".layout.minor_to_major[1]: dimension 1 is listed twice"),
        "{report}"
    );
}

/// Shapes inside a serialized module are decoded by the crate's codec, so a field
/// from a newer XLA inside one is reported (a warning; an error under --strict), with
/// its proto path, as for a lone message.
#[test]
fn module_proto_scan_reports_unknown_fields_in_shapes() {
    // HloModuleProto { name: "m", computations { name: "main", instructions {
    //   name: "p0", shape: f32[2,3]{1,0} as XLA writes it, plus field 99 = 7 in the
    //   layout } } }
    let shape = "10 0b 1a 02 02 03 2a 0a 0a 02 01 00 80 01 01 98 06 07 32 02 00 00";
    let instruction = format!("0a 02 70 30 1a 16 {shape}");
    let computation = format!("0a 04 6d 61 69 6e 12 1c {instruction}");
    let module = bytes(&format!("0a 01 6d 1a 24 {computation}"));
    let warning =
        "<stdin>: warning[unknown_field]: computations[0].instructions[0].shape.layout.#99: \
                   unknown field 99 (varint); kept as is, but XLA ignores it \
                   (instruction p0, computation main)\n";
    let out = run(&["validate", "--from", "hlo-module-proto"], &module);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), warning);
    let out = run(
        &["validate", "--strict", "--from", "hlo-module-proto"],
        &module,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), warning);
}
