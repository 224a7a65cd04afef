//! `xla-shape shapes`, `diff` and `validate --policy` end to end on the real dumps of
//! `fixtures/dumps/`: outputs, formats, exit codes, atomic `-o`.

mod util;
use std::path::Path;

use util::{stderr, stdout, xla_shape as run};

const BASE: &str = "fixtures/dumps/base";
const TRANSPOSED: &str = "fixtures/dumps/transposed";
const AFTER: &str = "module_0000.jit_f.cpu_after_optimizations.txt";

fn path(dir: &str, file: &str) -> String {
    format!("{}/{dir}/{file}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shapes_lists_every_shape_and_reads_back_as_a_baseline() {
    let module = path(BASE, AFTER);
    let out = run(&["shapes", &module], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout(&out);
    assert_eq!(listing.lines().count(), 30, "{listing}");
    assert!(listing.contains(&format!(
        "{module}: ENTRY main.1/tuple.1: (f32[1024,1024]{{1,0}}, bf16[8,128]{{1,0}})\n"
    )));
    // JSON lines carry the byte size.
    let out = run(&["shapes", "--format", "json", &module], b"");
    let first: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(first["location"], "entry_computation_layout/parameter 0");
    assert_eq!(first["bytes"], 4_194_304);
    // -o writes the file; the listing is a baseline for diff: no difference, exit 0.
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("layouts.lock");
    let lock = lock.to_str().unwrap();
    let out = run(&["shapes", &path(BASE, ""), "-o", lock], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["diff", lock, &path("fixtures/dumps/base_again", "")], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(stderr(&out), "xla-shape: compared 4 files: no difference\n");
    // Standard input, and a missing file.
    let text = std::fs::read(path(BASE, AFTER)).unwrap();
    let out = run(&["shapes", "-"], &text);
    assert!(stdout(&out).starts_with("<stdin>: entry_computation_layout/parameter 0: "));
    let out = run(&["shapes", "no/such/file"], b"");
    assert_eq!(out.status.code(), Some(2));
    // Shapes are written as they are read; a file that cannot be listed leaves `-o`'s
    // file as it was.
    let bad = dir.path().join("bad.hlo");
    std::fs::write(
        &bad,
        "HloModule m\n\nENTRY e {\n  p = f32[2 parameter(0)\n}\n",
    )
    .unwrap();
    let before = std::fs::read(lock).unwrap();
    let out = run(&["shapes", &module, bad.to_str().unwrap(), "-o", lock], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bad.hlo"), "{}", stderr(&out));
    assert_eq!(std::fs::read(lock).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temporary file left"
    );
}

/// An input that cannot be read is said, the others are still listed in order, and the
/// run ends with exit 2; `-o`'s file is then not written.
#[test]
fn shapes_lists_past_an_input_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    for (name, text) in [
        ("a.txt", "f32[2]{0}\n"),
        (
            "b.hlo",
            "HloModule m\n\nENTRY e {\n  p = f32[2 parameter(0)\n}\n",
        ),
        ("c.txt", "s8[3]{0}\n"),
    ] {
        std::fs::write(files.join(name), text).unwrap();
    }
    let (dir_arg, missing) = (files.to_str().unwrap(), dir.path().join("missing.txt"));
    let module = path(BASE, AFTER);
    let args = ["shapes", dir_arg, missing.to_str().unwrap(), &module];
    let out = run(&args, b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let listed = stdout(&out);
    let a = listed.find("a.txt: f32[2]{0}\n").expect(&listed);
    let c = listed.find("c.txt: s8[3]{0}\n").expect(&listed);
    let m = listed
        .find(&format!("{module}: ENTRY main.1/tuple.1: "))
        .expect(&listed);
    assert!(a < c && c < m, "{listed}");
    let said = stderr(&out);
    assert_eq!(said.lines().count(), 2, "{said}");
    assert!(
        said.contains("b.hlo") && said.contains("missing.txt"),
        "{said}"
    );
    // With -o nothing is written, and the reason is said.
    let lock = dir.path().join("layouts.lock");
    let out = run(&[&args[..], &["-o", lock.to_str().unwrap()]].concat(), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(!lock.exists());
    assert!(
        stderr(&out).ends_with("layouts.lock: not written: 2 inputs could not be read\n"),
        "{}",
        stderr(&out)
    );
}

/// A gate never passes what it did not check: a directory in which the walk finds no
/// file (a dump written elsewhere, an `--include` that picks none of its files) is an
/// input that cannot be read for `validate` and `shapes` (exit 2, `-o`'s file not
/// written: an empty listing does not read back), and `diff` of two such directories
/// compared nothing (exit 2). Before, `shapes` wrote an empty listing and `diff` said
/// "no difference", both with exit 0.
#[test]
fn a_directory_with_nothing_to_read_is_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (empty, other, files) = (
        dir.path().join("empty"),
        dir.path().join("other"),
        dir.path().join("files"),
    );
    for d in [&empty, &other, &files] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(files.join("a.txt"), "f32[2]{0}\n").unwrap();
    std::fs::write(other.join("notes.md"), "not a dump\n").unwrap();
    let (empty, other, files) = (
        empty.to_str().unwrap(),
        other.to_str().unwrap(),
        files.to_str().unwrap(),
    );
    let said = "no file to read: the directory holds no file the walk picks";
    for d in [empty, other] {
        for command in ["validate", "shapes"] {
            let out = run(&[command, d], b"");
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} {d}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains(&format!("{d}: {said}")),
                "{}",
                stderr(&out)
            );
        }
    }
    // The other inputs are still checked and listed.
    let out = run(&["shapes", files, empty], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), format!("{files}/a.txt: f32[2]{{0}}\n"));
    let out = run(&["validate", "--format", "json", empty, files], b"");
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"][0]["status"], "unreadable");
    assert_eq!(report["files"][1]["status"], "valid");
    // An --include that picks nothing is said the same way.
    let out = run(&["validate", "--include", "*.pbtxt", files], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(said), "{}", stderr(&out));
    // `-o` is not written.
    let lock = dir.path().join("layouts.lock");
    let out = run(&["shapes", empty, "-o", lock.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(!lock.exists());
    // diff: nothing compared is exit 2; one side empty is files only in the other.
    let out = run(&["diff", empty, other], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "xla-shape: compared 0 files: nothing to compare (neither input holds a file the walk picks)\n"
    );
    for format in ["json", "sarif", "github"] {
        let out = run(&["diff", "--format", format, empty, empty], b"");
        assert_eq!(out.status.code(), Some(2), "{format}");
    }
    let out = run(&["diff", empty, files], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a.txt: only in ".to_string() + files + "\n");
    // A module text of no shape (a header alone) is said as `validate` says it, and as
    // a module proto of no shape was: `shapes` listed nothing with exit 0.
    let header = dir.path().join("header.hlo");
    std::fs::write(&header, "HloModule m\n").unwrap();
    let header = header.to_str().unwrap();
    for command in ["validate", "shapes"] {
        let out = run(&[command, header], b"");
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(
            stderr(&out).contains("header.hlo: no shape in the module"),
            "{}",
            stderr(&out)
        );
    }
    let out = run(&["diff", header, header], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn diff_exit_codes_and_formats() {
    let (old, new) = (path(BASE, AFTER), path(TRANSPOSED, AFTER));
    let out = run(&["diff", "--entry-only", &old, &new], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!("{new}: entry parameter 0 (x.1): f32[1024,1024]{{1,0}} -> f32[1024,1024]{{0,1}}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)\n")
    );
    let out = run(
        &[
            "diff",
            "--entry-only",
            "--ignore",
            "minor-to-major",
            &old,
            &new,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&["diff", "--format", "json", &old, &new], b"");
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["files"][0]["status"], "changed");
    assert_eq!(
        json["files"][0]["changes"][0]["aspects"][0]["kind"],
        "minor-to-major"
    );
    assert_eq!(json["summary"]["changes"], 6);
    let out = run(
        &["diff", "--format", "sarif", "--entry-only", &old, &new],
        b"",
    );
    let sarif: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "diff.changed");
    let out = run(
        &["diff", "--format", "github", "--entry-only", &old, &new],
        b"",
    );
    assert!(
        stdout(&out).starts_with("::warning file="),
        "{}",
        stdout(&out)
    );
    let out = run(&["diff", &old, "no/such/file"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("cannot compare"), "{}", stdout(&out));
    let out = run(&["diff", "--ignore", "nope", &old, &new], b"");
    assert_eq!(out.status.code(), Some(2));
}

/// `-` for one side of `diff` reads standard input (named `<stdin>`): a listing piped
/// from `shapes` against a baseline gives what the same listing in a file gives, and a
/// module as well; both sides cannot be standard input.
#[test]
fn diff_reads_one_side_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("layouts.lock");
    let lock = lock.to_str().unwrap();
    let out = run(&["shapes", &path(BASE, ""), "-o", lock], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = run(&["shapes", &path(TRANSPOSED, "")], b"").stdout;
    let piped = dir.path().join("transposed.lock");
    std::fs::write(&piped, &listed).unwrap();
    let from_file = run(
        &["diff", "--format", "json", lock, piped.to_str().unwrap()],
        b"",
    );
    let from_stdin = run(&["diff", "--format", "json", lock, "-"], &listed);
    assert_eq!(from_stdin.status.code(), Some(1), "{}", stderr(&from_stdin));
    let (file, stdin): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&from_file.stdout).unwrap(),
        serde_json::from_slice(&from_stdin.stdout).unwrap(),
    );
    assert_eq!(stdin["new"], "<stdin>");
    assert_eq!(stdin["files"], file["files"]);
    assert_eq!(stdin["summary"], file["summary"]);
    assert_eq!(stderr(&from_stdin), stderr(&from_file));
    // A module on standard input, the old side: named `<stdin>`, its file the new one.
    let (old, new) = (path(BASE, AFTER), path(TRANSPOSED, AFTER));
    let text = std::fs::read(&old).unwrap();
    let out = run(&["diff", "--entry-only", "-", &new], &text);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("{new}: entry parameter 0 (x.1): f32[1024,1024]{{1,0}} -> f32[1024,1024]{{0,1}}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)\n")
    );
    let out = run(&["diff", "--format", "json", "-", &old], &text);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (json["old"].as_str(), json["files"][0]["old"].as_str()),
        (Some("<stdin>"), Some("<stdin>"))
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["diff", "-", "-"], &text);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "xla-shape: OLD and NEW cannot both be standard input (-)\n"
    );
}

#[test]
fn validate_with_a_policy() {
    let policy = path("examples", "policy.toml");
    let out = run(&["validate", "--policy", &policy, &path(BASE, "")], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = run(
        &["validate", "--policy", &policy, &path(TRANSPOSED, AFTER)],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains(":1:64: error[policy.entry_layout]: entry parameter 0: "));
    for format in ["json", "github", "sarif"] {
        let out = run(
            &[
                "validate",
                "--format",
                format,
                "--policy",
                &policy,
                &path(TRANSPOSED, AFTER),
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(stdout(&out).contains("policy.entry_layout"), "{format}");
    }
    let dir = tempfile::tempdir().unwrap();
    for (text, says) in [
        (
            "[all]\nmax_array_byte = 3\n",
            "unknown field `max_array_byte`",
        ),
        ("[entry]\nlayout = \"row\"\n", "unknown variant `row`"),
        // An empty policy checks nothing: refused, not passed.
        ("", "the policy sets no rule"),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, text).unwrap();
        let out = run(
            &[
                "validate",
                "--policy",
                bad.to_str().unwrap(),
                &path(BASE, AFTER),
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}

/// A shape with no HLO text in either style (an element type without a name) is listed
/// with what stops it, in words, never as a debugging dump of the proto; it still
/// compares with a shape that has text.
#[test]
fn a_shape_with_no_text_is_listed_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    // A tuple of one empty element (element type 0), and of one f32[].
    let invalid = dir.path().join("invalid.binpb");
    std::fs::write(&invalid, [0x10, 13, 0x22, 0x00]).unwrap();
    let valid = dir.path().join("valid.binpb");
    std::fs::write(&valid, [0x10, 13, 0x22, 0x02, 0x10, 11]).unwrap();
    let out = run(&["shapes", invalid.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout(&out);
    assert!(listing.contains(": <no HLO text: "), "{listing}");
    assert!(listing.contains("element type"), "{listing}");
    assert!(!listing.contains("ShapeProto"), "{listing}");
    let out = run(
        &["diff", invalid.to_str().unwrap(), valid.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("-> (f32[])"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("{0}: element type 0 -> f32"),
        "{}",
        stdout(&out)
    );
}

/// JSON without `--message` is listed as the message its first key names, as `validate`
/// tells it: a program shape written by Google's runtime (both key styles) lists its
/// parameters and result with XLA's text of them; a layout alone is refused as one.
#[test]
fn json_messages_are_listed_as_their_kind() {
    let fixtures = std::fs::read_to_string(path("fixtures", "messages.jsonl")).unwrap();
    let record: serde_json::Value = fixtures
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|r| r["message"] == "program-shape" && r["xla"]["accepts"] == true)
        .expect("a program shape XLA reads");
    // XLA's text of the program shape: `(P0, P1)->R`.
    let text = record["xla"]["text"].as_str().unwrap();
    let (parameters, result) = text.split_once(")->").unwrap();
    let dir = tempfile::tempdir().unwrap();
    for style in ["json_camel", "json_proto"] {
        let file = dir.path().join(format!("{style}.json"));
        std::fs::write(&file, record["google"][style].to_string()).unwrap();
        let file = file.to_str().unwrap();
        let out = run(&["shapes", file], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let listed = stdout(&out);
        assert!(
            listed.ends_with(&format!("{file}: result: {result}\n")),
            "{listed}"
        );
        let first = parameters
            .trim_start_matches('(')
            .split(", ")
            .next()
            .unwrap();
        assert!(
            listed.starts_with(&format!("{file}: parameter 0: {first}\n")),
            "{listed}"
        );
    }
    let layout = dir.path().join("layout.json");
    std::fs::write(&layout, r#"{"minorToMajor": ["1", "0"]}"#).unwrap();
    let out = run(&["shapes", layout.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a LayoutProto alone"),
        "{}",
        stderr(&out)
    );
}

/// Shape lines are told line by line as `validate` tells them: a program shape's line
/// (XLA's text of a program shape from the fixtures) is listed as its parameters and
/// result, beside a shape's line, and compared so (they were refused as a shape with
/// "extra content after shape").
#[test]
fn program_shape_lines_are_listed_and_compared() {
    let fixtures = std::fs::read_to_string(path("fixtures", "messages.jsonl")).unwrap();
    let program = fixtures
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|r| {
            r["message"] == "program-shape"
                && r["xla"]["accepts"] == true
                && r["xla"]["text"].as_str().unwrap().starts_with("(f32")
        })
        .expect("a program shape XLA reads");
    let text = program["xla"]["text"].as_str().unwrap();
    let (_, result) = text.split_once(")->").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.txt");
    std::fs::write(&old, format!("f32[2,3]{{1,0}}\n{text}\n")).unwrap();
    let old = old.to_str().unwrap();
    let out = run(&["shapes", old], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.starts_with(&format!("{old}: f32[2,3]{{1,0}}\n{old}: parameter 0: f32")),
        "{listed}"
    );
    assert!(
        listed.ends_with(&format!("{old}: result: {result}\n")),
        "{listed}"
    );
    // As many shapes as `validate` counts.
    let out = run(&["validate", old], b"");
    let count = listed.lines().count();
    assert!(
        stderr(&out).contains(&format!("checked 1 file, {count} shapes")),
        "{}",
        stderr(&out)
    );
    let out = run(&["diff", old, old], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let new = dir.path().join("new.txt");
    std::fs::write(
        &new,
        format!("f32[2,3]{{1,0}}\n{text}\n").replace(")->f32", ")->s32"),
    )
    .unwrap();
    let out = run(&["diff", old, new.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains(": result: f32"), "{}", stdout(&out));
}

/// A listing written as JSON lines (`shapes --format json`) reads back as the text
/// listing does: a baseline for `diff` with the same report (it was read as one JSON
/// message and refused: "xla.ShapeProto has no field named \"file\"").
#[test]
fn json_listings_read_back_as_text_listings_do() {
    let dir = tempfile::tempdir().unwrap();
    let (json, text) = (dir.path().join("base.jsonl"), dir.path().join("base.lock"));
    let (json, text) = (json.to_str().unwrap(), text.to_str().unwrap());
    let base = path(BASE, "");
    let out = run(&["shapes", "--format", "json", &base, "-o", json], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["shapes", &base, "-o", text], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["diff", json, &path("fixtures/dumps/base_again", "")], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "xla-shape: compared 4 files: no difference\n");
    let against = |baseline: &str| run(&["diff", baseline, &path(TRANSPOSED, "")], b"");
    let (from_json, from_text) = (against(json), against(text));
    assert_eq!(from_json.status.code(), Some(1), "{}", stderr(&from_json));
    assert_eq!(stdout(&from_json), stdout(&from_text));
    assert_eq!(stderr(&from_json), stderr(&from_text));
    // Listed again, as the text listing lists.
    let (listed_json, listed_text) = (run(&["shapes", json], b""), run(&["shapes", text], b""));
    assert_eq!(stdout(&listed_json), stdout(&listed_text));
    // A line that is not one of a JSON listing is an error that says where.
    let mut lines = std::fs::read_to_string(json).unwrap();
    lines.push_str("{\"file\": 3}\n");
    std::fs::write(json, lines).unwrap();
    let out = run(&["shapes", json], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a line of a JSON listing"),
        "{}",
        stderr(&out)
    );
}

/// A listing read back may give an instruction's shapes apart (lines reordered by
/// hand or by a tool): compared with a module, it gives the same changes whatever the
/// order of its lines, in the order of its instructions (`diff` follows an
/// instruction's shapes from one to the next, and only where they stand apart keeps
/// where the next is). Each instruction here has three shapes: its result and two
/// operands written with theirs.
#[test]
fn a_listing_in_any_line_order_compares_as_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let module = |a: &str, b: &str| {
        format!(
            "HloModule m, entry_computation_layout={{(f32[8,128]{{1,0}}, f32[8,128]{{1,0}})->f32[8,128]{{1,0}}}}\n\n\
             ENTRY main {{\n  p0 = f32[8,128]{{1,0}} parameter(0)\n  p1 = f32[8,128]{{1,0}} parameter(1)\n  \
             a = f32[8,128]{a} add(f32[8,128]{{1,0}} p0, f32[8,128]{{1,0}} p1)\n  \
             b = f32[8,128]{{0,1}} multiply(f32[8,128]{a} a, f32[8,128]{b} p1)\n  \
             ROOT c = f32[8,128]{{1,0}} copy(f32[8,128]{{0,1}} b)\n}}\n"
        )
    };
    let old = dir.path().join("old.hlo");
    std::fs::write(&old, module("{1,0}", "{1,0}")).unwrap();
    let new = dir.path().join("new.hlo");
    std::fs::write(&new, module("{0,1}", "{0,1:T(8,128)}")).unwrap();
    let out = run(&["shapes", old.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout(&out);
    assert_eq!(listing.lines().count(), 13, "{listing}");
    let in_order = dir.path().join("in_order.txt");
    std::fs::write(&in_order, &listing).unwrap();
    let reversed = dir.path().join("reversed.txt");
    let mut lines: Vec<&str> = listing.lines().collect();
    lines.reverse();
    std::fs::write(&reversed, lines.join("\n") + "\n").unwrap();
    // Every third line first, then the rest: each instruction's shapes apart.
    let mut apart: Vec<&str> = listing.lines().step_by(3).collect();
    apart.extend(
        listing
            .lines()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, l)| l),
    );
    let shuffled = dir.path().join("apart.txt");
    std::fs::write(&shuffled, apart.join("\n") + "\n").unwrap();
    let compare = |old: &std::path::Path| {
        let args = [
            "diff",
            "--format",
            "json",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
        ];
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let mut report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        report["old"] = serde_json::Value::Null;
        // The changes stand in the order of the old side's instructions.
        let changes = report["files"][0]["changes"].as_array_mut().unwrap();
        changes.sort_by_key(|c| c["place"].as_str().unwrap().to_string());
        report
    };
    let want = compare(&in_order);
    assert_eq!(want["summary"]["changes"], 3, "{want}");
    assert_eq!(compare(&reversed), want);
    assert_eq!(compare(&shuffled), want);
}

/// A file whose name would not read back as itself from a listing line (it holds `: `
/// or a line break, starts with `#` (a comment), `"` or a space, ends with a space) is
/// listed with its name as a JSON string, and the lock file reads back: `diff` of it
/// against the directory found no difference. Such a listing read as "cannot tell what
/// this is" (exit 2) or lost the file's shapes (a `#` line is a comment).
#[test]
fn file_names_that_would_not_read_back_are_quoted_in_listings() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    std::fs::create_dir(&dump).unwrap();
    let module = "HloModule m\n\nENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n";
    let names = [
        "a: b.txt",
        "c: parameter 1: d.txt",
        "line\nbreak.txt",
        "#hash.txt",
        "\"quote.txt",
        " lead.txt",
        "back\\slash.txt",
        "plain.txt",
    ];
    for (i, name) in names.iter().enumerate() {
        let text = if i % 2 == 0 {
            module
        } else {
            "f32[2]{0}\ns32[]\n"
        };
        std::fs::write(dump.join(name), text).unwrap();
    }
    let dump = dump.to_str().unwrap();
    let lock = dir.path().join("layouts.lock");
    let lock = lock.to_str().unwrap();
    let out = run(&["shapes", dump, "-o", lock], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = std::fs::read_to_string(lock).unwrap();
    // A module lists one shape, a file of shape lines two.
    assert_eq!(listed.lines().count(), 4 + 2 * 4, "{listed}");
    assert!(listed.contains(&format!("{dump}/plain.txt: f32[2]{{0}}\n")));
    assert!(listed.contains(&format!("{dump}/back\\slash.txt: ENTRY e/p: f32[2]{{0}}\n")));
    assert!(listed.contains(&format!(
        "\"{dump}/line\\nbreak.txt\": ENTRY e/p: f32[2]{{0}}\n"
    )));
    assert!(listed.contains(&format!("\"{dump}/c: parameter 1: d.txt\": s32[]\n")));
    for listing in [lock.to_string(), format!("{lock}.json")] {
        if listing.ends_with(".json") {
            let out = run(&["shapes", "--format", "json", dump, "-o", &listing], b"");
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
        let out = run(&["diff", &listing, dump], b"");
        assert_eq!(out.status.code(), Some(0), "{listing}: {}", stdout(&out));
        assert_eq!(
            stderr(&out),
            format!("xla-shape: compared {} files: no difference\n", names.len())
        );
        // Read back, it lists as the directory does.
        let again = run(&["shapes", &listing], b"");
        assert_eq!(stdout(&again), listed, "{listing}");
    }
    // Named as given, relative to the directory: names that start with `#`, `"` or a
    // space are quoted too, and read back.
    let relative = std::process::Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .arg("shapes")
        .args(names)
        .current_dir(dump)
        .output()
        .unwrap();
    assert_eq!(relative.status.code(), Some(0), "{}", stderr(&relative));
    let relative = stdout(&relative);
    for quoted in [
        "\"#hash.txt\": s32[]\n",
        "\"\\\"quote.txt\": ENTRY e/p",
        "\" lead.txt\": s32[]\n",
    ] {
        assert!(relative.contains(quoted), "{quoted} in {relative}");
    }
    let relative_lock = dir.path().join("relative.lock");
    std::fs::write(&relative_lock, &relative).unwrap();
    let again = run(&["shapes", relative_lock.to_str().unwrap()], b"");
    assert_eq!(stdout(&again), relative);
    // diff's text names a file as a listing does, one line a change.
    let changed = dir.path().join("changed");
    std::fs::create_dir(&changed).unwrap();
    std::fs::write(
        changed.join("line\nbreak.txt"),
        module.replace("f32[2]", "f32[3]"),
    )
    .unwrap();
    let out = run(&["diff", lock, changed.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    let said = stdout(&out);
    let line = said
        .lines()
        .find(|l| l.starts_with("\"line\\nbreak.txt\": "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(line.contains("f32[2]{0} -> f32[3]{0}"), "{line}");
}

/// A module proto's names are any text: an instruction named `dot general.1` was
/// listed as instruction `dot` with an attribute, and `diff` of the lock file against
/// the module said one instruction removed and one added; names holding `: `, `/` or a
/// line break made a lock file that did not read back. Such names are written as JSON
/// strings in the location, and the lock file reads back as the module lists.
#[test]
fn module_proto_names_of_any_text_read_back_from_a_listing() {
    let module =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules/matmul.hlo.pb"))
            .unwrap();
    let replace = |from: &[u8], to: &[u8]| {
        assert_eq!(from.len(), to.len());
        let mut out = module.clone();
        let mut at = 0;
        while let Some(found) = out[at..].windows(from.len()).position(|w| w == from) {
            out[at + found..at + found + from.len()].copy_from_slice(to);
            at += found + from.len();
        }
        assert_ne!(out, module);
        out
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        replace(b"dot_general.1", b"dot general.1"),
        replace(b"dot_general.1", b"d: g/x\nl.1 (a"),
        replace(b"main.1", b"m: n/1"),
        replace(b"main.1", b"ma/n.1"),
        replace(b"a.1", b"a b"),
    ];
    for (i, bytes) in cases.iter().enumerate() {
        let path = dir.path().join(format!("m{i}.hlo.pb"));
        std::fs::write(&path, bytes).unwrap();
        let path = path.to_str().unwrap();
        let lock = format!("{path}.lock");
        let out = run(&["shapes", path, "-o", &lock], b"");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let listed = std::fs::read_to_string(&lock).unwrap();
        assert_eq!(listed.lines().count(), 9, "{listed}");
        let out = run(&["diff", &lock, path], b"");
        assert_eq!(out.status.code(), Some(0), "{listed}\n{}", stdout(&out));
        assert_eq!(stdout(&run(&["shapes", &lock], b"")), listed);
    }
}
