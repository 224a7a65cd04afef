//! `xla-shape validate` end to end: output formats, exit codes, stdin, many files,
//! module scans. Byte strings come from /work/shared/xla-reference.md §8 (what XLA's
//! C++ writes) or are those bytes with one field changed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::io::Write;

/// f32[2,3]{1,0} as XLA's C++ writes it.
const GOOD: &str = "100b1a0202032a070a02010080010132020000";
/// The same with minor_to_major [1, 3].
const BAD: &str = "100b1a0202032a070a02010380010132020000";
/// The same as GOOD with an unknown varint field 99 in the layout.
const UNKNOWN: &str = "100b1a0202032a0a0a02010080010198060732020000";
/// Not a protobuf message: a truncated varint.
const JUNK: &str = "ffff";

struct Dir(PathBuf);

impl Dir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "xla-shape-cli-validate-{}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn file(&self, name: &str, hex_bytes: &str) -> String {
        self.raw(name, &hex::decode(hex_bytes.replace(' ', "")).unwrap())
    }

    fn raw(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .arg("validate")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn valid_inputs_exit_0_and_print_nothing() {
    let dir = Dir::new("valid");
    let good = dir.file("good.binpb", GOOD);
    let output = run(&[&good, &good], b"");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    // The summary of what was checked, on standard error.
    assert_eq!(
        stderr(&output),
        "xla-shape: checked 2 files, 2 shapes: 0 errors, 0 warnings\n"
    );
}

#[test]
fn text_report_and_exit_codes() {
    let dir = Dir::new("text");
    let good = dir.file("good.binpb", GOOD);
    let bad = dir.file("bad.binpb", BAD);
    let unknown = dir.file("unknown.binpb", UNKNOWN);
    let output = run(&[&good, &bad, &unknown], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!(
            "{bad}: error[dimension_out_of_range]: layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions\n\
             {unknown}: warning[unknown_field]: layout.#99: unknown field 99 (varint); kept as is, but XLA ignores it\n"
        )
    );
    // Warnings alone pass, unless --strict.
    assert_eq!(run(&[&unknown], b"").status.code(), Some(0));
    assert_eq!(run(&["--strict", &unknown], b"").status.code(), Some(1));
}

#[test]
fn unreadable_inputs_exit_2_and_the_rest_is_still_checked() {
    let dir = Dir::new("unreadable");
    let junk = dir.file("junk.binpb", JUNK);
    let bad = dir.file("bad.binpb", BAD);
    let missing = dir.0.join("missing.binpb");
    let missing = missing.to_str().unwrap();
    let output = run(&[&junk, missing, &bad], b"");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stdout(&output),
        format!("{bad}: error[dimension_out_of_range]: layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions\n")
    );
    let err = stderr(&output);
    assert!(
        err.contains(&format!(
            "xla-shape: {junk}: protobuf bytes, but not a ShapeProto"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("xla-shape: {missing}: ")));
    assert!(
        err.ends_with("xla-shape: checked 3 files, 1 shape: 1 error, 0 warnings, 2 unreadable\n"),
        "{err}"
    );
    // Read as a shape on purpose, the bytes do not decode.
    let output = run(&["--from", "binary", &junk], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(&format!(
        "xla-shape: {junk}: cannot decode xla.ShapeProto: truncated varint at byte 0\n"
    )));
}

#[test]
fn standard_input() {
    let output = run(&[], &hex::decode(BAD).unwrap());
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output)
        .starts_with("<stdin>: error[dimension_out_of_range]: layout.minor_to_major[1]: "));
    let output = run(&["-"], &hex::decode(GOOD).unwrap());
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn message_kinds() {
    let dir = Dir::new("kinds");
    // A lone layout {1,0:T(8,128)(2,1)E(4)S(1)SC(1:512)} as C++ writes it (§8).
    let layout = dir.file(
        "layout.binpb",
        "0a02010032050a0308800132040a020201380440018001018a0106080112028004",
    );
    assert_eq!(
        run(&["--message", "layout", &layout], b"").status.code(),
        Some(0)
    );
    // A lone layout whose minor_to_major is not a permutation.
    let layout = dir.file("bad-layout.binpb", "0a020101");
    let output = run(&["--message", "layout", &layout], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!("{layout}: error[duplicate_dimension]: minor_to_major[1]: dimension 1 is listed twice (first at minor_to_major[0])\n")
    );
    // A program shape with two parameters and one name.
    let program = dir.file(
        "program.binpb",
        "0a13100b1a0202032a070a020100800101320200000a13100b1a0203042a070a020100800101320200001213100b1a0202042a070a020100800101320200001a027030",
    );
    let output = run(&["--message", "program-shape", &program], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!("{program}: error[parameter_names_count]: parameter_names: 1 entry for 2 parameters; there must be one name per parameter\n")
    );
}

#[test]
fn github_format() {
    let dir = Dir::new("github");
    let bad = dir.file("bad,1.binpb", BAD);
    let unknown = dir.file("unknown.binpb", UNKNOWN);
    let junk = dir.file("junk.binpb", JUNK);
    let output = run(&["--format", "github", &bad, &unknown, &junk], b"");
    assert_eq!(output.status.code(), Some(2));
    let escaped = bad.replace(':', "%3A").replace(',', "%2C");
    assert_eq!(
        stdout(&output),
        format!(
            "::error file={escaped},title=dimension_out_of_range::layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions\n\
             ::warning file={unknown},title=unknown_field::layout.#99: unknown field 99 (varint); kept as is, but XLA ignores it\n\
             ::error file={junk},title=unknown_form::protobuf bytes, but not a ShapeProto, ProgramShapeProto, LayoutProto or HloModuleProto; give --from binary --message shape|layout|program-shape to check it as one\n"
        )
    );
}

#[test]
fn json_format() {
    let dir = Dir::new("json");
    let good = dir.file("good.binpb", GOOD);
    let bad = dir.file("bad.binpb", BAD);
    let junk = dir.file("junk.binpb", JUNK);
    let output = run(&["--format", "json", &good, &bad, &junk], b"");
    assert_eq!(output.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["summary"]["valid"], false);
    assert_eq!(report["summary"]["files"], 3);
    assert_eq!(report["summary"]["shapes"], 2);
    assert_eq!(report["summary"]["unreadable"], 1);
    let inputs = report["files"].as_array().unwrap();
    assert_eq!(inputs.len(), 3);
    assert_eq!(inputs[0]["path"], good.as_str());
    assert_eq!(inputs[0]["form"], "binary");
    assert_eq!(inputs[0]["shapes"], 1);
    assert_eq!(inputs[0]["status"], "valid");
    assert_eq!(inputs[1]["status"], "invalid");
    assert_eq!(inputs[1]["errors"], 1);
    let problem = &inputs[1]["findings"][0];
    for key in ["line", "column", "instruction", "computation"] {
        assert!(problem[key].is_null(), "{key}");
    }
    assert_eq!(problem["severity"], "error");
    assert_eq!(problem["path"], "layout.minor_to_major[1]");
    assert_eq!(problem["code"], "dimension_out_of_range");
    assert_eq!(
        problem["message"],
        "dimension 3 is out of range for a shape with 2 dimensions"
    );
    assert_eq!(inputs[2]["status"], "unreadable");
    assert_eq!(inputs[2]["error"]["code"], "unknown_form");
    // All valid: "valid": true and exit 0.
    let output = run(&["--format", "json", &good], b"");
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["valid"], true);
}

#[test]
fn hlo_text_inputs() {
    // XLA's parser reads `*` tiles, so --from hlo accepts them.
    let output = run(&["--from", "hlo"], b"bf16[2,3,1004]{2,1,0:T(2,*,128)}\n");
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let output = run(&["--from", "hlo"], b"f32[2,3]{0,3}");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "<stdin>:1:1: error[dimension_out_of_range]: layout.minor_to_major[1]: dimension 3 is out of range for a shape with 2 dimensions\n"
    );
    // Every line that does not parse is reported where it breaks, and the rest is
    // still checked; blank and `//` lines are skipped.
    let output = run(
        &["--from", "hlo"],
        b"// shapes\nf32[2,3\n\nf32[2]{0}\nflaot32[2]\nf32[2,3]{0,3}\n",
    );
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].starts_with("<stdin>:2:8: error[hlo_syntax]: "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("<stdin>:5:1: error[hlo_syntax]: "),
        "{out}"
    );
    assert!(
        lines[2].starts_with("<stdin>:6:1: error[dimension_out_of_range]: "),
        "{out}"
    );
}

#[test]
fn module_scans() {
    let dir = Dir::new("modules");
    let module = dir.raw(
        "m.hlo.txt",
        b"HloModule m\n\nENTRY e {\n  ROOT p = f32[2,3]{0,5} parameter(0)\n}\n",
    );
    let output = run(&["--from", "hlo-module", &module], b"");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!("{module}:4:12: error[dimension_out_of_range]: layout.minor_to_major[1]: dimension 5 is out of range for a shape with 2 dimensions (instruction p, computation e)\n")
    );
    let output = run(
        &["--from", "hlo-module", "--format", "github", &module],
        b"",
    );
    assert_eq!(
        stdout(&output),
        format!("::error file={module},line=4,col=12,title=dimension_out_of_range::layout.minor_to_major[1]: dimension 5 is out of range for a shape with 2 dimensions (instruction p, computation e)\n")
    );
    // The real modules XLA wrote are valid, as text and as protos.
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules");
    if let Ok(entries) = std::fs::read_dir(&modules) {
        let mut text = Vec::new();
        let mut protos = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path().to_str().unwrap().to_string();
            if path.ends_with(".hlo.txt") {
                text.push(path);
            } else if path.ends_with(".hlo.pb") {
                protos.push(path);
            }
        }
        assert!(!text.is_empty() && !protos.is_empty());
        let text: Vec<&str> = text.iter().map(String::as_str).collect();
        let output = run(&[&["--from", "hlo-module"][..], &text].concat(), b"");
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
        let protos: Vec<&str> = protos.iter().map(String::as_str).collect();
        let output = run(
            &[&["--from", "hlo-module-proto"][..], &protos].concat(),
            b"",
        );
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    }
}

#[test]
fn many_fixture_files_in_one_run() {
    #[derive(serde::Deserialize)]
    struct Row {
        message: String,
        origin: String,
        hex: String,
        xla: Verdict,
    }
    #[derive(serde::Deserialize)]
    struct Verdict {
        accepts: Option<bool>,
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/messages.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    let dir = Dir::new("many");
    let mut files = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let row: Row = serde_json::from_str(line).unwrap();
        // Legacy messages are the one place we are stricter than today's XLA.
        let legacy = row.origin == "legacy";
        if row.message == "shape" && row.xla.accepts == Some(true) && !legacy {
            if refused_by_own_checks_only(&row.hex) {
                continue;
            }
            files.push(dir.file(&format!("{i}.binpb"), &row.hex));
        }
    }
    assert!(files.len() >= 200, "only {} accepted shapes", files.len());
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let output = run(&args, b"");
    // Every modern shape XLA accepts is valid here (warnings allowed).
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn json_inputs() {
    // The seeds' legacy example in proto3 JSON: padded to [3,5] is fine, [3] is not.
    let valid = br#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["0","1"],"paddedDimensions":["3","5"]}}"#;
    let output = run(&["--from", "json"], valid);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let invalid = br#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["0","1"],"paddedDimensions":["3"]}}"#;
    let output = run(&["--from", "json"], invalid);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "<stdin>: error[padded_dimensions_length]: layout.padded_dimensions: 1 entry for a shape with 2 dimensions; legacy padding needs one padded size per dimension\n"
    );
    // JSON that is not a ShapeProto cannot be read.
    let output = run(&["--from", "json"], br#"{"elementType":"F32","rank":2}"#);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("xla-shape: <stdin>: cannot read xla.ShapeProto from JSON: ")
    );
}

/// Whether the crate's own size checks (the size in bits of `E(n)`, the tiled
/// allocation: docs/report.md), which XLA does not make, are all that refuse a shape.
fn refused_by_own_checks_only(hex: &str) -> bool {
    use xla_shape::validate::{validate_decoded, Options};
    use xla_shape::{codec, MessageKind};
    let bytes = hex::decode(hex).unwrap();
    let Ok(decoded) = codec::decode_any(MessageKind::Shape, &bytes) else {
        return false;
    };
    let report = validate_decoded(&decoded, Options::proto());
    !report.is_valid() && report.errors().all(|e| e.kind().is_own_check())
}
