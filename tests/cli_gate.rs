//! `validate` as a CI gate: nothing passes unchecked. One test per row of the table of
//! inputs that used to pass, one per kind of non-shape text in a shape position, the
//! forms decided without `--from` (each fixture form, and a directory holding them
//! all), and SARIF's required structure.
//!
//! The module texts here are small hand-written modules in the form XLA prints; what
//! XLA says of each row is quoted from `hlo_module_from_text` (jaxlib 0.10.2, see
//! `fixtures/module_cases.jsonl` for the recorded verdicts on real modules).

mod util;

use std::path::{Path, PathBuf};

use util::{bytes, stderr, stdout, xla_shape};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validate(args: &[&str], stdin: &[u8]) -> std::process::Output {
    xla_shape(&[&["validate"][..], args].concat(), stdin)
}

/// Writes `text` to `name` in a fresh temporary directory and validates it.
fn validate_text(name: &str, text: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_string();
    let out = validate(&[args, &[path.as_str()]].concat(), b"");
    // Report lines name the file by the path given; make them relative to it.
    let stdout = stdout(&out).replace(&path, name);
    let stderr = stderr(&out).replace(&path, name);
    (out.status.code(), stdout, stderr)
}

const MODULE: &str = "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}

ENTRY %e (x: f32[2,3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  ROOT %n = f32[2,3]{1,0} negate(f32[2,3]{1,0} %x)
}
";

#[test]
fn the_base_module_is_valid() {
    let (code, out, err) = validate_text("m.hlo", MODULE, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        err,
        "xla-shape: checked 1 file, 7 shapes: 0 errors, 0 warnings\n"
    );
}

/// The issue's table, row by row: each is an error at its line and column, with XLA's
/// words beside ours.
#[test]
fn each_row_of_the_table_is_an_error_where_it_stands() {
    let rows: &[(&str, &str, &str, &str)] = &[
        // (what, module text, expected first line of the report, XLA's words)
        (
            "a typo in a signature's type word",
            "HloModule m\n\nENTRY %e (x: g32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n",
            "m.hlo:3:14: error[unknown_type_word]: 'g32' is not an element type; did you mean s32? ",
            "expected primitive type",
        ),
        (
            "a misspelled result type",
            "HloModule m\n\nENTRY %e (x: f32[3,4]) -> f32[3,4] {\n  %x = f32[3,4]{1,0} parameter(0)\n  ROOT %b.1 = flaot32[3,4]{1,0} negate(%x)\n}\n",
            "m.hlo:5:15: error[unknown_type_word]: 'flaot32' is not an element type; did you mean f32? ",
            "expects opcode but sees: flaot32",
        ),
        (
            "an upper-case result type",
            "HloModule m\n\nENTRY %e (x: f32[2,3]) -> f32[2,3] {\n  ROOT %b.1 = F32[2,3] parameter(0)\n}\n",
            "m.hlo:4:15: error[unknown_type_word]: 'F32' is not an element type; did you mean f32? ",
            "expects opcode but sees: F32",
        ),
        (
            "a truncated result type",
            "HloModule m\n\nENTRY %e (x: f32[2]) -> f32[2] {\n  ROOT %b.1 = f3[2] parameter(0)\n}\n",
            "m.hlo:4:15: error[unknown_type_word]: 'f3' is not an element type; did you mean f32? ",
            "expects opcode but sees: f3",
        ),
        (
            "a layout on a scalar that has none to give",
            "HloModule m\n\nENTRY %e (x: f32[]) -> f32[] {\n  ROOT %x = f32[]{} parameter(0)\n}\n",
            "m.hlo:4:18: error[module_syntax]: expects opcode, saw '{' ",
            "",
        ),
        (
            "first lines starting with #",
            "# generated\n# by hand\nHloModule m\n\nENTRY %e (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n",
            "m.hlo:1:1: error[module_syntax]: expects HloModule, ENTRY or a computation name, saw '#'",
            "",
        ),
        (
            "parameter names inside entry_computation_layout",
            "HloModule m, entry_computation_layout={(p0: f32[2]{0})->f32[2]{0}}\n\nENTRY %e (p0: f32[2]) -> f32[2] {\n  ROOT %x = f32[2]{0} parameter(0)\n}\n",
            "m.hlo:1:41: error[not_a_shape]: expects a shape, saw 'p0' ",
            "",
        ),
    ];
    for (what, text, first, xla) in rows {
        let (code, out, err) = validate_text("m.hlo", text, &[]);
        assert_eq!(code, Some(1), "{what}: {out}{err}");
        let line = out.lines().next().unwrap_or("");
        assert!(line.starts_with(first), "{what}:\n{out}");
        assert!(line.contains(xla), "{what}: no XLA wording '{xla}':\n{out}");
        // One error, not a cascade of them.
        assert_eq!(out.lines().count(), 1, "{what}:\n{out}");
        // The same verdict when the form is given.
        let (given, again, _) = validate_text("m.hlo", text, &["--from", "hlo-module"]);
        assert_eq!((given, &again), (Some(1), &out), "{what}");
    }
}

#[test]
fn inputs_that_are_no_module_exit_2_and_say_what_they_are() {
    let cargo_toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for (text, says) in [
        ("", "m.hlo: the input is empty"),
        (cargo_toml.as_str(), "m.hlo: not an HLO module: "),
        ("// only a comment\n", "m.hlo: not an HLO module: "),
    ] {
        let (code, out, err) = validate_text("m.hlo", text, &["--from", "hlo-module"]);
        assert_eq!(code, Some(2), "{out}{err}");
        assert_eq!(out, "");
        assert!(err.starts_with(&format!("xla-shape: {says}")), "{err}");
        assert!(err.ends_with(", 1 unreadable\n"), "{err}");
    }
    // The same without --from: the text is no form we read.
    let (code, _, err) = validate_text("Cargo.toml", &cargo_toml, &[]);
    assert_eq!(code, Some(2), "{err}");

    let report = std::fs::read(root().join(
        "fixtures/dumps/base/module_0000.jit_f.cpu_after_optimizations-memory-usage-report.pb",
    ))
    .unwrap();
    for (input, says) in [
        (&b""[..], "<stdin>: the input is empty"),
        (
            &report[..],
            "<stdin>: not an HloModuleProto, HloProto or HloSnapshot (",
        ),
    ] {
        let out = validate(&["--from", "hlo-module-proto", "-"], input);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(stdout(&out), "");
        let err = stderr(&out);
        assert!(err.starts_with(&format!("xla-shape: {says}")), "{err}");
    }
}

#[test]
fn forms_given_wrong_are_named_right() {
    // A shape in text on stdin, no --from.
    let out = validate(&[], b"f32[2,3]{1,0}\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "xla-shape: checked 1 file, 1 shape: 0 errors, 0 warnings\n"
    );
    // An HloModuleProto without --from: checked as a module, nothing invented.
    let proto = root().join("fixtures/modules/conv_bf16.hlo.pb");
    let proto = proto.to_str().unwrap();
    let out = validate(&[proto], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "");
    // A module proto given as module text: one error naming the right option.
    let out = validate(&["--from", "hlo-module", proto], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.contains("give --from hlo-module-proto"), "{err}");
    // Module text given as a binary message, and as one shape per line.
    let text = root().join("fixtures/modules/conv_bf16.hlo.txt");
    let text = text.to_str().unwrap();
    for from in ["binary", "hlo"] {
        let out = validate(&["--from", from, text], b"");
        assert_eq!(out.status.code(), Some(2), "--from {from}");
        assert!(
            stderr(&out).contains("--from hlo-module"),
            "--from {from}: {}",
            stderr(&out)
        );
    }
}

/// Each kind of text that is not a shape, in each place XLA's parser expects one.
#[test]
fn every_kind_of_non_shape_in_every_shape_position() {
    // Where shapes stand in MODULE: (line, byte offset of the shape, its text, role).
    let positions: Vec<(usize, usize, &str)> = {
        let mut found = Vec::new();
        for (index, line) in MODULE.lines().enumerate() {
            let mut from = 0;
            while let Some(at) = line[from..].find("f32[2,3]") {
                let start = from + at;
                let end = start + line[start..].find(['}', ')', ' ']).unwrap();
                let end = if line[start..].starts_with("f32[2,3]{") {
                    end + 1
                } else {
                    end
                };
                found.push((index + 1, start, &line[start..end]));
                from = end;
            }
        }
        found
    };
    assert_eq!(positions.len(), 7, "{positions:?}");
    // (replacement, code, whether the error is at the replacement's first column)
    let kinds: &[(&str, &str, bool)] = &[
        ("foo", "not_a_shape", true),
        ("42", "not_a_shape", true),
        ("\"f32\"", "not_a_shape", true),
        ("[2,3]{1,0}", "not_a_shape", true),
        ("f23[2,3]{1,0}", "unknown_type_word", true),
        ("F32[2,3]{1,0}", "unknown_type_word", true),
        ("float32[2,3]{1,0}", "unknown_type_word", true),
        ("f32[2,3", "hlo_syntax", false),
        ("f32[2,3]{1;0}", "hlo_syntax", false),
        ("f32[2,x]{1,0}", "hlo_syntax", false),
        ("f32[2,3]{1,1}", "duplicate_dimension", true),
        ("f32[2,3]{0,2}", "dimension_out_of_range", true),
        ("f32[2,3]{1,0:T(0)}", "zero_tile_dimension", true),
    ];
    let codes: Vec<&str> = xla_shape::report::codes::CODES
        .iter()
        .map(|c| c.id)
        .collect();
    for &(replacement, code, at_start) in kinds {
        assert!(codes.contains(&code), "{code} is not a known code");
        for &(line_no, start, original) in &positions {
            let mut lines: Vec<String> = MODULE.lines().map(str::to_string).collect();
            let line = &mut lines[line_no - 1];
            line.replace_range(start..start + original.len(), replacement);
            let text = lines.join("\n") + "\n";
            let (status, out, err) = validate_text("m.hlo", &text, &["--from", "hlo-module"]);
            let what = format!(
                "{replacement} at {line_no}:{}\n{text}\n{out}{err}",
                start + 1
            );
            assert_eq!(status, Some(1), "{what}");
            let first = out.lines().next().unwrap_or("");
            let place = format!("m.hlo:{line_no}:");
            assert!(first.starts_with(&place), "{what}");
            assert!(first.contains(&format!(": error[{code}]: ")), "{what}");
            if at_start {
                assert!(
                    first.starts_with(&format!("{place}{}:", start + 1)),
                    "{what}"
                );
            }
        }
    }
}

/// Real files of every form, picked out of the fixtures XLA and Google's runtime wrote.
fn fixture_forms(dir: &Path) -> Vec<(String, &'static str, &'static str)> {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
        origin: String,
        hex: String,
        xla: Verdict,
    }
    #[derive(serde::Deserialize)]
    struct Verdict {
        accepts: Option<bool>,
        text: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Json {
        message: String,
        json: String,
        ok: bool,
        ignore_unknown_fields: bool,
    }
    let messages: Vec<Message> = std::fs::read_to_string(root().join("fixtures/messages.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pick = |message: &str| {
        messages
            .iter()
            .find(|m| m.message == message && m.origin == "compiled" && m.xla.accepts == Some(true))
            .unwrap()
    };
    let mut files = Vec::new();
    let mut put = |name: &str, contents: &[u8], form: &'static str, message: &'static str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        files.push((name.to_string(), form, message));
    };
    put(
        "messages/shape.binpb",
        &bytes(&pick("shape").hex),
        "binary",
        "xla.ShapeProto",
    );
    put(
        "messages/layout.pb",
        &bytes(&pick("layout").hex),
        "binary",
        "xla.LayoutProto",
    );
    put(
        "messages/program_shape.binpb",
        &bytes(&pick("program-shape").hex),
        "binary",
        "xla.ProgramShapeProto",
    );
    let json: Vec<Json> = std::fs::read_to_string(root().join("fixtures/json_inputs.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (kind, name, proto) in [
        ("shape", "json/shape.json", "xla.ShapeProto"),
        ("layout", "json/layout.json", "xla.LayoutProto"),
        (
            "program-shape",
            "json/program_shape.json",
            "xla.ProgramShapeProto",
        ),
    ] {
        let row = json
            .iter()
            .find(|j| j.message == kind && j.ok && !j.ignore_unknown_fields)
            .unwrap();
        put(name, row.json.as_bytes(), "json", proto);
    }
    let lines: Vec<&str> = messages
        .iter()
        .filter(|m| m.message == "shape" && m.origin == "hlo-text" && m.xla.accepts == Some(true))
        .filter_map(|m| m.xla.text.as_deref())
        .take(20)
        .collect();
    assert_eq!(lines.len(), 20);
    put(
        "text/shapes.txt",
        format!("// shapes XLA printed\n{}\n", lines.join("\n")).as_bytes(),
        "hlo",
        "xla.ShapeProto",
    );
    for (from, name, form, message) in [
        (
            "fixtures/modules/conv_bf16.hlo.txt",
            "modules/conv_bf16.hlo.txt",
            "hlo-module",
            "",
        ),
        (
            "fixtures/modules/int4_e4.hlo.txt",
            "modules/int4_e4.hlo",
            "hlo-module",
            "",
        ),
        (
            "fixtures/modules/conv_bf16.hlo.pb",
            "modules/conv_bf16.hlo.pb",
            "hlo-module-proto",
            "xla.HloModuleProto",
        ),
        (
            "fixtures/dumps/transposed/module_0000.jit_f.cpu_after_optimizations.hlo.pb",
            "dump/module_0000.jit_f.cpu_after_optimizations.hlo.pb",
            "hlo-module-proto",
            "xla.HloProto",
        ),
        (
            "fixtures/dumps/transposed/module_0000.jit_f.cpu_after_optimizations.txt",
            "dump/module_0000.jit_f.cpu_after_optimizations.txt",
            "hlo-module",
            "",
        ),
    ] {
        put(
            name,
            &std::fs::read(root().join(from)).unwrap(),
            form,
            message,
        );
    }
    files
}

#[test]
fn every_fixture_form_is_recognized_alone_and_in_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let files = fixture_forms(dir.path());
    // Alone, without --from.
    for (name, form, message) in &files {
        let path = dir.path().join(name);
        let out = validate(&["--format", "json", path.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stdout(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let file = &report["files"][0];
        assert_eq!(file["form"], *form, "{name}");
        if message.is_empty() {
            assert!(file["message"].is_null(), "{name}");
        } else {
            assert_eq!(file["message"], *message, "{name}");
        }
        assert!(file["shapes"].as_u64().unwrap() >= 1, "{name}");
    }
    // An invalid shape deep inside, and files a walk leaves out.
    let bad = "100b1a0202032a070a02010380010132020000"; // f32[2,3]{1,3}
    let deep = dir.path().join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("bad.binpb"), bytes(bad)).unwrap();
    std::fs::copy(
        root().join(
            "fixtures/dumps/base/module_0000.jit_f.cpu_after_optimizations-memory-usage-report.pb",
        ),
        dir.path()
            .join("dump/module_0000.jit_f.cpu_after_optimizations-memory-usage-report.pb"),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.md"), "# not checked\n").unwrap();

    let root_dir = dir.path().to_str().unwrap();
    let run = |jobs: &str| {
        let out = validate(&["--format", "json", "-j", jobs, root_dir], b"");
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        out
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one.stdout, two.stdout, "-j changes the report");
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    let listed: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            Path::new(path)
                .strip_prefix(root_dir)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // Every file checked, in sorted order, and nothing else.
    let mut expected: Vec<String> = files.iter().map(|(n, _, _)| n.clone()).collect();
    expected.push("a/b/c/bad.binpb".to_string());
    expected.sort();
    assert_eq!(listed, expected);
    let summary = &report["summary"];
    assert_eq!(summary["files"], expected.len());
    assert_eq!(summary["errors"], 1);
    assert_eq!(summary["invalid"], 1);
    assert_eq!(summary["unreadable"], 0);
    let bad_file = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("bad.binpb"))
        .unwrap();
    assert_eq!(bad_file["findings"][0]["code"], "dimension_out_of_range");
    assert_eq!(bad_file["findings"][0]["path"], "layout.minor_to_major[1]");
    // The summary line counts what the JSON counts.
    let err = stderr(&one);
    assert_eq!(
        err,
        format!(
            "xla-shape: checked {} files, {} shapes: 1 error, 0 warnings\n",
            expected.len(),
            summary["shapes"]
        )
    );
}

/// SARIF 2.1.0's required properties, as GitHub code scanning reads them.
#[test]
fn sarif_has_the_structure_code_scanning_requires() {
    let text = "HloModule m\n\nENTRY %e (x: f32[2,3]) -> f32[2,3] {\n  %x = f32[2,3]{1,0} parameter(0)\n  %y = f32[2,3]{0,5} negate(%x)\n  ROOT %z = flaot32[2,3]{1,0} negate(%y)\n}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.hlo.txt"), text).unwrap();
    std::fs::write(
        dir.path().join("bad.binpb"),
        bytes("100b1a0202032a070a02010380010132020000"),
    )
    .unwrap();
    // Run inside the directory, so that artifact URIs are relative, as code scanning
    // wants them.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .args(["validate", "--format", "sarif", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = sarif["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "xla-shape");
    let rules = driver["rules"].as_array().unwrap();
    let rule_ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for rule in rules {
        assert!(!rule["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .is_empty());
        let level = rule["defaultConfiguration"]["level"].as_str().unwrap();
        assert!(["error", "warning"].contains(&level), "{rule}");
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{results:#?}");
    let mut seen = Vec::new();
    for result in results {
        let rule = result["ruleId"].as_str().unwrap();
        seen.push(rule);
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rule_ids[index], rule);
        assert!(["error", "warning", "note"].contains(&result["level"].as_str().unwrap()));
        assert!(!result["message"]["text"].as_str().unwrap().is_empty());
        let locations = result["locations"].as_array().unwrap();
        assert!(!locations.is_empty());
        let physical = &locations[0]["physicalLocation"];
        let uri = physical["artifactLocation"]["uri"].as_str().unwrap();
        assert!(["m.hlo.txt", "bad.binpb"].contains(&uri), "{uri}");
        if uri == "m.hlo.txt" {
            let region = &physical["region"];
            assert!(region["startLine"].as_u64().unwrap() >= 5);
            assert!(region["startColumn"].as_u64().unwrap() >= 1);
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "dimension_out_of_range",
            "dimension_out_of_range",
            "unknown_type_word"
        ]
    );
    // One rule per code the tool has, sorted, each once: the results are written as
    // the inputs are checked, before it is known which codes occur.
    let mut sorted = rule_ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(rule_ids, sorted);
    assert_eq!(rule_ids.len(), xla_shape::report::CODES.len());
    // Every input was checked: the run succeeded, with the exit status for findings.
    let invocations = run["invocations"].as_array().unwrap();
    assert_eq!(invocations.len(), 1);
    assert_eq!(invocations[0]["executionSuccessful"], true);
    assert_eq!(invocations[0]["exitCode"], 1);
    assert!(invocations[0].get("toolExecutionNotifications").is_none());
}

/// A SARIF log says when its results are not complete (SARIF 2.1.0, appendix I): the
/// invocation did not succeed, and each input that could not be checked is an
/// error-level notification, beside its result. A consumer that reads only the
/// invocation does not take a partial run for a clean one.
#[test]
fn sarif_says_which_inputs_were_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.txt"), "f32[2,3]{1,0}\n").unwrap();
    std::fs::write(dir.path().join("junk.txt"), "garbage(\n").unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let sarif = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_xla-shape"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), log["runs"][0].clone())
    };
    let (code, run) = sarif(&[
        "validate", "--format", "sarif", "ok.txt", "junk.txt", "empty",
    ]);
    assert_eq!(code, Some(2));
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(invocation["exitCode"], 2);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let mut uris = Vec::new();
    for note in notes {
        assert_eq!(note["level"], "error");
        assert!(!note["message"]["text"].as_str().unwrap().is_empty());
        let uri = note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        uris.push(uri);
        // The same rule and words as the input's result.
        let rule = &note["associatedRule"];
        let index = rule["index"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], rule["id"]);
        let result = results
            .iter()
            .find(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri)
            .unwrap();
        assert_eq!(result["ruleId"], rule["id"]);
        assert_eq!(result["message"], note["message"]);
    }
    assert_eq!(uris, ["junk.txt", "empty"]);
    // diff: two directories with nothing to compare did not run; a change is a success
    // that exits 1.
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let (code, run) = sarif(&["diff", "--format", "sarif", "empty", "other"]);
    assert_eq!(code, Some(2));
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 1);
    assert!(notes[0]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("nothing to compare"));
    std::fs::write(dir.path().join("new.txt"), "f32[2,3]{0,1}\n").unwrap();
    let (code, run) = sarif(&["diff", "--format", "sarif", "ok.txt", "new.txt"]);
    assert_eq!(code, Some(1));
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert_eq!(run["invocations"][0]["exitCode"], 1);
    assert!(run["invocations"][0]
        .get("toolExecutionNotifications")
        .is_none());
}

/// Findings about binary messages and module protos carry the shape's text: XLA's by
/// default, the lossless text with `--hlo-style exact`.
#[test]
fn findings_carry_the_shape_text_in_the_chosen_style() {
    let finding = |args: &[&str], input: &[u8]| {
        let out = validate(&[&["--format", "json"][..], args, &["-"]].concat(), input);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["files"][0]["findings"][0].clone()
    };
    // f32[2,3]{1,3}: XLA prints what it holds.
    let bad = bytes("100b1a0202032a070a02010380010132020000");
    assert_eq!(finding(&[], &bad)["shape"], "f32[2,3]{1,3}");
    // The seeds' legacy padding: XLA's text has no form for it, the exact text does.
    // f32[2,3]{0,1} padded to [3] (one entry for two dimensions: an error), in JSON.
    let legacy = br#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["0","1"],"paddedDimensions":["3"]}}"#;
    assert_eq!(finding(&[], legacy)["shape"], "f32[2,3]{0,1}");
    let exact = finding(&["--hlo-style", "exact"], legacy);
    assert_eq!(exact["code"], "padded_dimensions_length");
    assert_eq!(exact["shape"], "f32[2,3]{0,1:PD(3)}");

    // A real module proto with one layout broken: minor_to_major {1,0} -> {1,5}.
    let mut proto = std::fs::read(root().join("fixtures/modules/custom_layout.hlo.pb")).unwrap();
    let at = proto
        .windows(4)
        .position(|w| w == [0x0a, 0x02, 0x01, 0x00])
        .expect("a {1,0} layout");
    proto[at + 3] = 0x05;
    let found = finding(&[], &proto);
    assert_eq!(found["code"], "dimension_out_of_range");
    assert_eq!(found["shape"], "f32[3,5]{1,5}");
    assert!(found["instruction"].is_string(), "{found}");
}
