//! Regression tests for the findings of the hardening pass (issue 15): each failed
//! before its fix.

use std::time::{Duration, Instant};

use xla_shape::codec::{decode_any, encode_any};
use xla_shape::index::LayoutPlan;
use xla_shape::text::{self, ParseOptions};
use xla_shape::validate::{validate_shape_with, Options};
use xla_shape::MessageKind;

fn bytes(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text.replace(' ', "")).expect("hex")
}

/// Decoding then encoding is a fixed point after one round, for any kind.
#[track_caller]
fn assert_fixed_point(kind: MessageKind, input: &[u8]) -> Vec<u8> {
    let decoded = decode_any(kind, input).expect("decodes");
    let once = encode_any(&decoded);
    let again = decode_any(kind, &once).expect("our own output decodes");
    assert_eq!(again, decoded, "{}", hex::encode(input));
    assert_eq!(
        hex::encode(encode_any(&again)),
        hex::encode(&once),
        "input {}",
        hex::encode(input)
    );
    once
}

/// Finding 1: an unknown field, then a retired layout field after a field above 5
/// that ends up default. The retired copy went to the end (after the unknown field);
/// decoded again it counted as leading and moved before the unknown field.
#[test]
fn retired_layout_field_after_an_unknown_field_is_a_fixed_point() {
    let once = assert_fixed_point(MessageKind::Layout, &bytes("0d 00000000 6001 2002 6000"));
    // Where Google's runtime keeps them: both unknown to it, in their order.
    assert_eq!(hex::encode(once), "0d000000002002");
    // The same without the field that ends up default, and inside a shape.
    for (kind, input, want) in [
        (MessageKind::Layout, "0d 00000000 2002", "0d000000002002"),
        (MessageKind::Layout, "6001 2002 6000", "2002"),
        (
            MessageKind::Layout,
            "0a0101 0d00000000 6001 2002 6000 3001",
            "0a01010d0000000020023001",
        ),
        (
            MessageKind::Shape,
            "2a0b 0d00000000 6001 2002 6000",
            "2a070d000000002002",
        ),
    ] {
        let once = assert_fixed_point(kind, &bytes(input));
        assert_eq!(hex::encode(once), want, "{input}");
    }
}

/// Finding 2: with `fill_missing_layouts` off, a scalar whose layout text holds only
/// defaults (`{:L(1)}`, or a `D(` group XLA reads and drops) has an empty layout,
/// printed as nothing, as XLA prints it. XLA's parser gives a scalar its default
/// layout with or without filling, so `f32[]` reads back with the same empty layout.
#[test]
fn scalar_with_an_empty_layout_round_trips_without_filling() {
    let off = ParseOptions {
        fill_missing_layouts: false,
    };
    for input in [
        "f32[]{:L(1)}",
        "f32[]{:D(}",
        "f32[]",
        "(f32[], s32[]{:L(1)})",
    ] {
        for options in [off, ParseOptions::default()] {
            let first = text::parse_shape_with(input, options).expect(input);
            let printed = text::print_shape(&first).expect(input);
            let second = text::parse_shape_with(&printed, options).expect(&printed);
            assert_eq!(second, first, "{input} -> {printed}");
        }
    }
    let scalar = text::parse_shape_with("f32[]", off).unwrap();
    assert!(scalar.layout.is_some());
    // An array still has no layout without filling.
    let array = text::parse_shape_with("f32[2]", off).unwrap();
    assert!(array.layout.is_none());
}

/// Finding 3: the elements in memory order of a layout that runs its tile stages
/// one by one (a tile that neither divides nor covers the one before) came by testing
/// every slot, padding included: `f32[64,1]{1,0:T(1,100000000)(3)}` has 64 elements in
/// 6.4 billion slots, `f32[1]{0:T(100000000)(3)}` took 16 s to find that its one
/// element is the last. (The issue's `f32[123,456,789]{0,1,2:T(2,*,128)}` was already
/// fast on this branch; it stays here with the other large `*` layouts.)
#[test]
fn physical_order_yields_first_elements_at_once() {
    for text in [
        "f32[64,1]{1,0:T(1,100000000)(3)}",
        "f32[1]{0:T(100000000)(3)}",
        "f32[3,5,2]{0,2,1:T(100000,7)(3,5)(2)}",
        "f32[123,456,789]{0,1,2:T(2,*,128)}",
        "bf16[123,456,789]{2,1,0:T(2,*,128)(2,1)}",
        "f32[123,456,789]{2,1,0:T(2,*,128)}",
        "f32[1000000,3,1000]{0,2,1:T(2,*,128)}",
    ] {
        let proto = text::parse_shape(text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
        let start = Instant::now();
        let first: Vec<(u64, u64)> = plan.physical_order().take(64).collect();
        let again: Vec<(u64, u64)> = plan.physical_order().take(64).collect();
        let elapsed = start.elapsed();
        let count = plan.element_count().min(64);
        assert_eq!(first.len() as u64, count, "{text}");
        assert_eq!(first, again);
        for &(slot, logical) in &first {
            let index = plan.multi_index(slot).unwrap().expect("an element's slot");
            assert_eq!(plan.linear_index(&index).unwrap(), slot, "{text}");
            let row_major = index
                .iter()
                .zip(plan.dimensions())
                .fold(0u64, |acc, (&e, &d)| acc * d + e);
            assert_eq!(row_major, logical, "{text}");
        }
        assert!(first.windows(2).all(|w| w[0].0 < w[1].0), "{text}");
        assert!(elapsed < Duration::from_secs(1), "{text}: {elapsed:?}");
    }
}

fn cli() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_xla-shape"))
}

/// Finding 4: a million nested `(` as module text is an error, never a silent pass,
/// however it comes (alone, after a header, in an instruction, in an attribute, in
/// the entry layout, on stdin). (Already an error on this branch when the hardening
/// pass started; kept as its regression test.)
#[test]
fn deeply_nested_module_text_is_an_error() {
    let deep = "(".repeat(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        deep.clone(),
        format!("HloModule m\n{deep}\n"),
        format!("HloModule m\nENTRY e {{\n  x = {deep}\n}}\n"),
        format!(
            "HloModule m\nENTRY e {{\n  x = f32[] parameter(0), metadata={}\n}}\n",
            "{".repeat(1_000_000)
        ),
        format!("HloModule m, entry_computation_layout={{{deep}}}\n"),
        format!("HloModule m\nENTRY e {{\n  ROOT x = f32[] parameter(0)\n}}\n{deep}"),
    ];
    for (i, text) in cases.iter().enumerate() {
        let path = dir.path().join(format!("case{i}.txt"));
        std::fs::write(&path, text).unwrap();
        for from in ["hlo-module", "hlo"] {
            let output = cli()
                .args(["validate", "--from", from])
                .arg(&path)
                .output()
                .unwrap();
            assert_ne!(output.status.code(), Some(0), "case {i} --from {from}");
            assert!(!output.stderr.is_empty() || !output.stdout.is_empty());
        }
    }
    let mut child = cli()
        .args(["validate", "--from", "hlo-module"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(deep.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_ne!(output.status.code(), Some(0));
}

/// A one-line tuple of `n` copies of `element`.
fn one_line_tuple(element: &str, n: usize) -> String {
    let mut line = String::with_capacity((element.len() + 2) * n + 2);
    line.push('(');
    for i in 0..n {
        if i > 0 {
            line.push_str(", ");
        }
        line.push_str(element);
    }
    line.push_str(")\n");
    line
}

/// Finding 5, the parser's side: a top-level tuple streamed element by element reads
/// the same elements and fails with the same first error as the whole parse.
#[test]
fn streamed_tuple_parse_agrees_with_the_whole_parse() {
    for input in [
        "(f32[2,3]{1,0}, (s32[], f32[4]), token[], b(f32[2]))",
        "()",
        " ( f32[2] ) ",
        "f32[2,3]",
        "(f32[2]{7}, f32[)",
        "(f32[2]{7}, f32[3])",
        "(f32[2], f32[3]",
        "(f32[2]) extra",
        "(",
        "((f32[2]{5}), s32[])",
    ] {
        for fill in [true, false] {
            let options = ParseOptions {
                fill_missing_layouts: fill,
            };
            let whole = text::parse_shape_with(input, options);
            let mut elements = Vec::new();
            let streamed = text::parse_shape_streaming(input, options, &mut |i, span, e| {
                assert_eq!(i, elements.len());
                assert!(input.get(span).is_some());
                elements.push(e);
            });
            match (whole, streamed) {
                (Ok(shape), Ok(text::Streamed::Shape(streamed))) => assert_eq!(shape, streamed),
                (Ok(shape), Ok(text::Streamed::Tuple { elements: n })) => {
                    assert_eq!(n, elements.len());
                    assert_eq!(shape.tuple_shapes, elements, "{input}");
                }
                (Err(a), Err(b)) => {
                    assert_eq!((a.message(), a.span()), (b.message(), b.span()), "{input}")
                }
                (a, b) => panic!("{input}: {a:?} vs {b:?}"),
            }
        }
    }
}

/// A line of shape or program-shape text is checked alike whether it is short (parsed
/// whole) or at least `LONG_INPUT` long (checked a tuple element at a time): the same
/// findings (code, message, path, line, column), the same count of shapes. Before
/// the fix a long line that did not parse still counted a shape, and kept the
/// findings of the elements read before its syntax error (`(f32[2], f32[3]{1})` gave
/// a `dimension_out_of_range` beside XLA's "invalid tuple element").
#[test]
fn a_long_line_is_checked_as_the_same_line_short() {
    use xla_shape::check::{check_bytes, Options as CheckOptions};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
    let content = std::fs::read_to_string(path).expect("fixtures/hlo_shapes.jsonl");
    let options = CheckOptions {
        from: Some(xla_shape::report::Form::Hlo),
        ..CheckOptions::default()
    };
    // Spaces after the first `(`: the line's own text, past the streaming length.
    let pad = " ".repeat(xla_shape::LONG_INPUT);
    let summary = |bytes: &[u8], padded: bool| {
        let report = check_bytes("line", bytes, &options);
        let findings = report.findings.to_vec().unwrap();
        let findings: Vec<_> = findings
            .into_iter()
            .map(|f| {
                let column = match f.column {
                    Some(c) if padded && c > pad.len() => Some(c - pad.len()),
                    c => c,
                };
                (f.code, f.message, f.path, f.line, column)
            })
            .collect();
        (report.shapes, findings)
    };
    let (mut compared, mut with_findings) = (0, 0);
    for record in content.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(record).unwrap();
        let shape = record["text"].as_str().unwrap();
        for line in [
            format!("(f32[2], ({shape}), {shape})"),
            format!("(f32[2], {shape}) -> ({shape})"),
        ] {
            let short = summary(line.as_bytes(), false);
            // Lines without findings are the common case; a sample of them will do.
            if short.1.is_empty() && compared % 16 != 0 {
                compared += 1;
                continue;
            }
            with_findings += usize::from(!short.1.is_empty());
            let long = format!("({pad}{}", &line[1..]);
            assert_eq!(short, summary(long.as_bytes(), true), "{line}");
            compared += 1;
        }
    }
    assert!(
        compared > 2000 && with_findings >= 250,
        "{compared} {with_findings}"
    );
}

/// Writes `bytes` to `dir/name` and validates the file in the 200 MB address space
/// ([`limited`]): exit 1, with findings at exactly the `expected` paths. Returns the
/// file's path.
fn validated_in_bounded_memory(
    dir: &std::path::Path,
    name: &str,
    bytes: &[u8],
    expected: &[String],
) -> std::path::PathBuf {
    let input = dir.join(name);
    std::fs::write(&input, bytes).unwrap();
    assert_eq!(
        findings_in_bounded_memory("", &input, Some(1)),
        expected,
        "{name}"
    );
    input
}

/// The paths of the findings of `validate ARGS --format json INPUT` run in the 200 MB
/// address space ([`limited`]), which exits with `status`.
fn findings_in_bounded_memory(
    args: &str,
    input: &std::path::Path,
    status: Option<i32>,
) -> Vec<String> {
    paths_of(&report_in_bounded_memory(args, input, status))
}

/// The report of `validate ARGS --format json INPUT` run in the 200 MB address space
/// ([`limited`]), which exits with `status`.
fn report_in_bounded_memory(
    args: &str,
    input: &std::path::Path,
    status: Option<i32>,
) -> serde_json::Value {
    let validate = limited(&format!(
        "validate {args} --format json {}",
        input.display()
    ));
    assert_eq!(
        validate.status.code(),
        status,
        "{}: {}{}",
        input.display(),
        String::from_utf8_lossy(&validate.stderr),
        String::from_utf8_lossy(&validate.stdout)
            .chars()
            .take(3000)
            .filter(|c| *c != '\n')
            .collect::<String>()
    );
    serde_json::from_slice(&validate.stdout).unwrap()
}

/// The JSON document that the command line with `args` writes in the 200 MB address
/// space ([`limited`]), which exits with `status`.
fn json_in_bounded_memory(args: &str, status: i32) -> serde_json::Value {
    let run = limited(args);
    assert_eq!(
        run.status.code(),
        Some(status),
        "{args}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

/// Runs the command line with `args` (a shell word list) in a 200 MB address space.
/// glibc's allocator gives each thread that allocates an arena of its own, reserving
/// 64 MB of address space (not memory) each: one arena for all keeps the limit about
/// the memory used, whichever of rayon's threads happen to allocate. Each thread's
/// stack reserves address space too (2 MB): rayon's threads are held to two
/// ([`limited_command`]), so that the limit means the same on a machine of any number
/// of cores.
fn limited(args: &str) -> std::process::Output {
    limited_to(200_000, args)
}

/// [`limited`] in an address space of `kb` KB.
fn limited_to(kb: u64, args: &str) -> std::process::Output {
    limited_command(&format!("ulimit -v {kb} && exec \"$0\" {args}"))
        .output()
        .unwrap()
}

/// Runs `args` as [`limited_to`] does and checks that it exits with `code`: its
/// standard output.
#[track_caller]
fn limited_exit(kb: u64, args: &str, code: i32) -> Vec<u8> {
    let run = limited_to(kb, args);
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(code), "{args}: {said}");
    run.stdout
}

/// A shell running `script` with `$0` the command line's binary, one malloc arena and
/// two rayon threads (see [`limited`]).
fn limited_command(script: &str) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .env("MALLOC_ARENA_MAX", "1")
        .env("RAYON_NUM_THREADS", "2")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_xla-shape"));
    command
}

/// A tuple of `n` `f32[8,128]{1,0:T(8,128)}` with two broken elements (at 1 and at
/// the end), and the paths of the two findings of the whole message.
fn tuple_with_two_broken_elements(n: usize) -> (xla_shape::proto::ShapeProto, Vec<String>) {
    let line = one_line_tuple("f32[8,128]{1,0:T(8,128)}", n);
    let mut whole = text::parse_shape(&line).unwrap();
    for (i, m2m) in [(1, vec![0, 0]), (n - 1, vec![1, 1])] {
        whole.tuple_shapes[i]
            .layout
            .as_mut()
            .unwrap()
            .minor_to_major = m2m;
    }
    let expected = issue_paths(&whole);
    assert_eq!(expected.len(), 2, "{expected:?}");
    (whole, expected)
}

/// The paths of the issues of the whole shape, as the validator reports them.
fn issue_paths(shape: &xla_shape::proto::ShapeProto) -> Vec<String> {
    xla_shape::validate::validate_shape(shape)
        .report()
        .issues()
        .iter()
        .map(|i| i.path().to_string())
        .collect()
}

/// The paths of the findings of the one file of a `validate --format json` report.
fn finding_paths(stdout: &[u8]) -> Vec<String> {
    paths_of(&serde_json::from_slice(stdout).unwrap())
}

/// The paths of the findings of the one file of a JSON report.
fn paths_of(report: &serde_json::Value) -> Vec<String> {
    report["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Finding 5: a big one-line tuple through `convert --from hlo --to binary` and
/// `validate --from hlo` in a bounded address space. Built whole it took about 25
/// times the line (a 6 MB line aborted under 200 MB; 200 MB took 5.2 and 7.5 GB).
#[test]
fn one_line_tuple_is_converted_and_validated_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let line = one_line_tuple("f32[8,128]{1,0:T(8,128)}", 240_000);
    assert!(line.len() > 6_000_000);
    let input = dir.path().join("tuple.txt");
    std::fs::write(&input, &line).unwrap();
    let out = dir.path().join("tuple.bin");
    let convert = limited(&format!(
        "convert --from hlo --to binary {} -o {}",
        input.display(),
        out.display()
    ));
    assert!(
        convert.status.success(),
        "{}",
        String::from_utf8_lossy(&convert.stderr)
    );
    // The same bytes as the whole message encoded.
    let small = one_line_tuple("f32[8,128]{1,0:T(8,128)}", 3);
    let whole = xla_shape::codec::encode(&text::parse_shape(&small).unwrap());
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes[..2], whole[..2]);
    let element_len = (whole.len() - 2) / 3;
    assert_eq!(bytes.len(), 2 + element_len * 240_000);
    assert_eq!(bytes[2..2 + element_len], whole[2..2 + element_len]);
    let validate = limited(&format!("validate --from hlo {}", input.display()));
    assert!(
        validate.status.success(),
        "{}",
        String::from_utf8_lossy(&validate.stderr)
    );

    // The JSON report of `validate --from hlo` on `line`, which exits with `status`
    // and has one finding.
    let validated = |line: &str, status| {
        std::fs::write(&input, line).unwrap();
        let output = cli()
            .args(["validate", "--from", "hlo", "--format", "json"])
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(status));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let findings = report["files"][0]["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{findings:?}");
        report
    };
    // Findings of a long line name the element, as the whole tuple's would, and give
    // the element's text.
    let mut line = one_line_tuple("f32[2]{0}", 200_000);
    line = line.replacen("f32[2]{0}, f32[2]{0}", "f32[2]{0}, s8[4]{0:E(4)}", 1);
    let report = validated(&line, 0);
    let finding = &report["files"][0]["findings"][0];
    assert_eq!(
        finding["path"],
        "tuple_shapes[1].layout.element_size_in_bits"
    );
    assert_eq!(finding["shape"], "s8[4]{0:E(4)}");
    // An element XLA's parser refuses makes the line a syntax error, and only that
    // (the element's own finding came too before session 35).
    line = line.replacen("s8[4]{0:E(4)}", "f32[2,3]{0,0}", 1);
    let report = validated(&line, 1);
    assert_eq!(report["files"][0]["findings"][0]["code"], "hlo_syntax");
    assert_eq!(report["files"][0]["shapes"], 0);
}

/// Output many times the input is held in bounded memory: a 10 MB one-line tuple is
/// 77 MB of JSON, and so is a program shape of its 400,000 elements as parameters,
/// converted (and the tuple into binary) in a 60 MB address space (the output is spooled past 8 MB to a temporary
/// file, `spool::Spool`), to a file and to standard output, with the bytes the
/// library's conversion gives; a conversion that fails at its last byte writes
/// nothing. Held whole, the output did not fit (the JSON of the issue's 200 MB
/// one-line tuple took 1.6 GB, 8.4 times the input).
#[test]
fn output_larger_than_the_input_is_spooled_in_bounded_memory() {
    use xla_shape::convert::{self, Form, Options};
    let dir = tempfile::tempdir().unwrap();
    // `convert ARGS` in the 60 MB address space: its exit status and output (standard
    // output, or the file `-o` names).
    let run = |args: String, file: Option<&std::path::Path>| {
        let run = limited_to(60_000, &format!("convert {args}"));
        let said = String::from_utf8_lossy(&run.stderr).into_owned();
        let written = match file {
            Some(file) => std::fs::read(file).unwrap(),
            None => run.stdout,
        };
        (run.status.code(), written, said)
    };
    let line = one_line_tuple("f32[8,128]{1,0:T(8,128)}", 400_000);
    let input = dir.path().join("tuple.txt");
    std::fs::write(&input, &line).unwrap();
    // The whole conversions (of the whole messages, in this process).
    let options = Options::default();
    let shape = text::parse_shape(&line).unwrap();
    let whole = |message: xla_shape::AnyMessage| {
        let decoded = xla_shape::codec::Decoded {
            message,
            unknown: xla_shape::codec::UnknownFields::new(),
        };
        convert::write(Form::Json, &decoded, &options).unwrap()
    };
    let expected = whole(xla_shape::AnyMessage::Shape(shape.clone()));
    assert!(expected.len() > 70_000_000, "{}", expected.len());
    let out = dir.path().join("tuple.json");
    let program = format!("({}) -> ()", &line.trim_end()[1..line.trim_end().len() - 1]);
    let program = text::parse_program_shape(&program).unwrap();
    let program_json = whole(xla_shape::AnyMessage::ProgramShape(program.clone()));
    let program = xla_shape::codec::encode(&program);
    // Half the tuple as a program shape's parameter and as its result (39 MB of JSON
    // each): each part's JSON is spooled, and copied into its place.
    let half = xla_shape::proto::ShapeProto {
        tuple_shapes: shape.tuple_shapes[..200_000].to_vec(),
        ..shape.clone()
    };
    let parts = xla_shape::proto::ProgramShapeProto {
        parameters: vec![half.clone()],
        result: Some(half),
        parameter_names: vec!["p".to_string()],
    };
    let parts_json = whole(xla_shape::AnyMessage::ProgramShape(parts.clone()));
    let parts_input = dir.path().join("parts.pb");
    std::fs::write(&parts_input, xla_shape::codec::encode(&parts)).unwrap();
    drop(parts);
    let binary = dir.path().join("tuple.pb");
    let tuple = xla_shape::codec::encode(&shape);
    assert!(
        tuple.len() > xla_shape::spool::Spool::HELD,
        "{}",
        tuple.len()
    );
    drop(shape);
    std::fs::write(&binary, &tuple).unwrap();
    let program_input = dir.path().join("program.pb");
    std::fs::write(&program_input, &program).unwrap();
    let (i, b, p) = (input.display(), binary.display(), program_input.display());
    for (args, file, expected) in [
        (
            format!("--from hlo --to json {i} -o {}", out.display()),
            Some(&out),
            &expected,
        ),
        (format!("--from hlo --to json {i}"), None, &expected),
        (format!("--from binary --to json {b}"), None, &expected),
        (format!("--from hlo --to binary {i}"), None, &tuple),
        (format!("--from binary --to binary {b}"), None, &tuple),
        (
            format!("--from binary --message program-shape --to json {p}"),
            None,
            &program_json,
        ),
    ] {
        let (status, written, said) = run(args.clone(), file.map(|f| f.as_path()));
        assert_eq!(status, Some(0), "{args}: {said}");
        assert!(written == *expected, "{args}: converted differently");
    }
    // The parts in a 100 MB address space (the previous binary, which held each
    // part's JSON and copied it, ran out of 150 MB).
    let parts = limited_to(
        100_000,
        &format!(
            "convert --from binary --message program-shape --to json {}",
            parts_input.display()
        ),
    );
    let said = String::from_utf8_lossy(&parts.stderr);
    assert_eq!(parts.status.code(), Some(0), "{said}");
    assert!(
        parts.stdout == parts_json,
        "program parts converted differently"
    );
    // Cut short: an error at the last element, and nothing written.
    std::fs::write(&binary, &tuple[..tuple.len() - 3]).unwrap();
    std::fs::write(&out, b"before").unwrap();
    for (args, file) in [
        (
            format!("--from binary --to json {b} -o {}", out.display()),
            Some(&out),
        ),
        (format!("--from binary --to json {b}"), None),
    ] {
        let (status, written, said) = run(args.clone(), file.map(|f| f.as_path()));
        assert_eq!(status, Some(2), "{args}: {said}");
        let left = if file.is_some() {
            &b"before"[..]
        } else {
            &b""[..]
        };
        assert_eq!(written, left, "{args}");
    }
}

/// Shape lines are checked a line at a time, from a file or from standard input: 200
/// MB of lines pass in a 150 MB address space (read whole, the input alone would not
/// fit), and a finding on the last line is still found, at its line.
#[test]
fn many_shape_lines_are_validated_in_bounded_memory() {
    use std::io::Write;
    let comment = format!("// {}\n", "x".repeat(1000));
    let lines = 200_000;
    let mut child =
        limited_command("ulimit -v 150000 && exec \"$0\" validate --from hlo --format json")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        stdin.write_all(b"f32[8,128]{1,0:T(8,128)}\r\n").unwrap();
        for _ in 0..lines {
            stdin.write_all(comment.as_bytes()).unwrap();
        }
        stdin.write_all(b"f32[2,3]{0,0}\n").unwrap();
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let findings = &report["files"][0]["findings"];
    assert_eq!(findings.as_array().map(Vec::len), Some(1), "{report}");
    assert_eq!(findings[0]["line"], lines + 2, "{report}");
    assert!(stderr.contains("2 shapes"), "{stderr}");
}

/// The streamed shape lines give the report the whole input gives: CRLF line ends,
/// comments, a bad line, and text that is not UTF-8 (the whole file unreadable).
#[test]
fn shape_lines_from_a_file_and_from_standard_input_agree() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    for input in [
        &b"f32[2]{0}\r\n// c\r\n\r\nbf16[3,4]{0,0}\r\n  s4[8]{0:E(4)}  "[..],
        b"f32[2]{0}\nf32[2]{0} \xff\n",
        b"\n// only a comment\n",
    ] {
        let path = dir.path().join("lines.txt");
        std::fs::write(&path, input).unwrap();
        let from_file = cli()
            .args(["validate", "--from", "hlo", "--format", "json"])
            .arg(&path)
            .output()
            .unwrap();
        let mut child = cli()
            .args(["validate", "--from", "hlo", "--format", "json", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let from_stdin = child.wait_with_output().unwrap();
        assert_eq!(from_file.status.code(), from_stdin.status.code());
        let name = path.display().to_string();
        let a = String::from_utf8_lossy(&from_file.stdout).replace(&name, "<stdin>");
        assert_eq!(a, String::from_utf8_lossy(&from_stdin.stdout));
    }
}

/// A binary tuple of more than 1 MiB is checked and re-encoded a top-level element at
/// a time: the same findings (paths and messages) as the whole message's, the same
/// bytes out, and the same decode error for broken bytes; in a bounded address space
/// (decoded whole, 220 MB took 6.6 GB to validate and 4.9 GB to convert).
#[test]
fn binary_tuple_is_checked_and_converted_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n = 240_000;
    let (whole, expected) = tuple_with_two_broken_elements(n);
    let bytes = xla_shape::codec::encode(&whole);
    assert!(bytes.len() > 6_000_000);
    let input = validated_in_bounded_memory(dir.path(), "tuple.pb", &bytes, &expected);
    let out = dir.path().join("out.pb");
    let convert = limited(&format!(
        "convert --from binary --to binary {} -o {}",
        input.display(),
        out.display()
    ));
    assert!(
        convert.status.success(),
        "{}",
        String::from_utf8_lossy(&convert.stderr)
    );
    assert!(std::fs::read(&out).unwrap() == bytes);

    // Broken bytes: the error of the whole decode, and no output.
    std::fs::write(&input, &bytes[..bytes.len() - 3]).unwrap();
    let whole_error = xla_shape::codec::decode_shape(&bytes[..bytes.len() - 3]).unwrap_err();
    std::fs::remove_file(&out).unwrap();
    let convert = limited(&format!(
        "convert --from binary --to binary {} -o {}",
        input.display(),
        out.display()
    ));
    assert_eq!(convert.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&convert.stderr).contains(&whole_error.to_string()));
    assert!(!out.exists());
    let validate = limited(&format!(
        "validate --from binary --message shape {}",
        input.display()
    ));
    assert_eq!(validate.status.code(), Some(2));
    let said = String::from_utf8_lossy(&validate.stdout).to_string()
        + &String::from_utf8_lossy(&validate.stderr);
    assert!(
        said.contains(&whole_error.to_string()),
        "{said}\n{whole_error}"
    );
}

/// HLO text to JSON or HLO text, a top-level tuple an element at a time, gives the
/// bytes (or the error) of the whole message read and written, in every style.
#[test]
fn streamed_text_conversions_agree_with_the_whole() {
    use xla_shape::convert::{self, Form, JsonNames, Options};
    use xla_shape::text::HloStyle;
    use xla_shape::MessageKind;
    let inputs = [
        "(f32[2]{0}, s8[4,5]{0,1:T(2,3)}, (), (pred[], u4[8]{0:E(4)}))",
        "(f32[2]{0}, f32[3], bf16[256,512]{1,0:T(8,128)(2,1)S(1)}, f32[4], f32[5], f32[6], f32[7])",
        "f32[2,3]{1,0}",
        "()",
        "((f32[1]))",
        "(f32[2]{0}, f32[2,3]{0,0})",
        "(f32[2]{0}, f32[2]{",
        "(f32[2]{0} f32[3])",
        "  (token[], opaque[])  \n",
        // Nested tuples, streamed a shape at a time: separators with their index
        // comments inside them, empty ones, closing several at once, buffers.
        "((f32[1], f32[2], f32[3], f32[4], f32[5], f32[6], (s32[], ((f32[7]{0})))), (), b(f32[2]{0}))",
        "(((f32[1]), (), (f32[2], (u8[3]))), ((())), f32[4])",
        "((f32[2]{0}, f32[2]{0:T(2)}), (f32[2]{0}, f32[2]{",
    ];
    for input in inputs {
        // Binary out, and back in from the binary of the whole.
        let whole = convert::read(
            Form::Hlo,
            MessageKind::Shape,
            input.as_bytes(),
            &Options::default(),
        )
        .and_then(|decoded| convert::write(Form::Binary, &decoded, &Options::default()));
        let streamed =
            convert::hlo_shape_to_binary(input.as_bytes()).map(|spool| spool.into_vec().unwrap());
        match (&whole, &streamed) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{input}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{input}"),
            _ => panic!("{input}: whole {whole:?}, streamed {streamed:?}"),
        }
        if let Ok(bytes) = &whole {
            let options = Options::default();
            let decoded = convert::read(Form::Binary, MessageKind::Shape, bytes, &options).unwrap();
            if let Some(streamed) = convert::binary_shape_to_binary(bytes) {
                assert_eq!(&streamed.unwrap().into_vec().unwrap(), bytes, "{input}");
            }
            for to in [Form::Json, Form::Hlo] {
                if let Some(streamed) = convert::binary_shape_to_text(bytes, to, &options) {
                    assert_eq!(
                        streamed.unwrap().into_vec().unwrap(),
                        convert::write(to, &decoded, &options).unwrap(),
                        "{input} {to:?}"
                    );
                }
            }
        }
        for to in [Form::Json, Form::Hlo] {
            for (pretty, json_names, hlo_style) in [
                (false, JsonNames::Camel, HloStyle::Xla),
                (true, JsonNames::Proto, HloStyle::Exact),
            ] {
                let options = Options {
                    json_names,
                    pretty,
                    ignore_unknown_fields: false,
                    hlo_style,
                };
                let whole =
                    convert::read(Form::Hlo, MessageKind::Shape, input.as_bytes(), &options)
                        .and_then(|decoded| convert::write(to, &decoded, &options));
                let streamed = convert::hlo_shape_to_text(input.as_bytes(), to, &options)
                    .map(|spool| spool.into_vec().unwrap());
                match (&whole, &streamed) {
                    (Ok(a), Ok(b)) => assert_eq!(
                        String::from_utf8_lossy(a),
                        String::from_utf8_lossy(b),
                        "{input} {to:?} {options:?}"
                    ),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{input}"),
                    _ => panic!("{input} {to:?}: whole {whole:?}, streamed {streamed:?}"),
                }
            }
        }
    }
}

/// A JSON tuple of more than 1 MiB is checked a top-level element at a time: the same
/// findings as the whole message's, and the same error for broken JSON.
#[test]
fn json_tuple_is_checked_an_element_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let (whole, expected) = tuple_with_two_broken_elements(n);
    let json = xla_shape::json::to_json(
        &xla_shape::AnyMessage::Shape(whole.clone()),
        &xla_shape::json::PrintOptions::new(),
    );
    assert!(json.len() > 2_000_000);
    let input = dir.path().join("tuple.json");
    std::fs::write(&input, &json).unwrap();
    let output = cli()
        .args(["validate", "--format", "json"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(finding_paths(&output.stdout), expected);

    // Broken JSON: the whole read's error.
    let broken = json.replacen("\"128\"]", "\"128\",]", n);
    let whole_error = xla_shape::json::from_json(
        xla_shape::MessageKind::Shape,
        broken.as_bytes(),
        &xla_shape::json::ParseOptions::new(),
    )
    .unwrap_err();
    std::fs::write(&input, &broken).unwrap();
    refused_with(
        &["validate", "--from", "json"],
        &input,
        &whole_error.to_string(),
    );
}

/// Runs the command line with `args` on `input`: exit 2, saying `error`.
fn refused_with(args: &[&str], input: &std::path::Path, error: &str) {
    let output = cli().args(args).arg(input).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(said.contains(error), "{said}\n{error}");
}

/// A long line whose tuple nests is checked a shape at a time however deep: a 6 MB
/// tuple of two nested tuples passes in a 200 MB address space (read whole, a 200 MB
/// one took 7 GB: the streaming stopped at the top-level elements), and its findings
/// are the whole tuple's, at their nested paths, with the HLO text rules.
#[test]
fn nested_one_line_tuple_is_validated_a_shape_at_a_time() {
    let element = "f32[8,128]{1,0:T(8,128)}";
    let inner = one_line_tuple(element, 120_000);
    let inner = inner.trim_end();
    // (inner, ((), (inner with two shapes warned of), token[])): an element size
    // below the type's width passes the parser, and the validator warns of it.
    let warned = "f32[2]{0:E(4)}";
    let odd = inner.replacen(element, warned, 1).replacen(
        &format!("{element})"),
        &format!("{warned})"),
        1,
    );
    let line = format!("({inner}, ((), {odd}, token[]))\n");
    assert!(line.len() > 6_000_000);
    let expected: Vec<String> =
        validate_shape_with(&text::parse_shape(&line).unwrap(), Options::hlo_text())
            .report()
            .issues()
            .iter()
            .map(|i| i.path().to_string())
            .collect();
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert!(expected[0].starts_with("tuple_shapes[1].tuple_shapes[1].tuple_shapes[0]."));
    assert!(expected[1].starts_with("tuple_shapes[1].tuple_shapes[1].tuple_shapes[119999]."));

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("nested.txt");
    std::fs::write(&input, &line).unwrap();
    assert_eq!(
        findings_in_bounded_memory("--from hlo", &input, Some(0)),
        expected
    );
}

/// A binary tuple that nests is checked a shape at a time: only plain tuples (element
/// type and elements) are opened; buffers, empty tuples and tuples with other fields
/// are leaves. A 6 MB one of two nested tuples, with a broken shape deep in the
/// second, gives the whole message's findings in a 200 MB address space (decoded whole,
/// a 220 MB one took 6.6 GB: the streaming stopped at the top-level elements).
#[test]
fn nested_binary_tuple_is_checked_a_shape_at_a_time() {
    let leaves = |shape: &xla_shape::proto::ShapeProto| {
        let bytes = xla_shape::codec::encode(shape);
        let mut paths = Vec::new();
        xla_shape::codec::decode_shape_leaves(&bytes, &mut |path, _, leaf| {
            paths.push((path.to_vec(), leaf.message.element_type));
        })
        .unwrap();
        paths
    };
    let mut shape =
        text::parse_shape("((f32[2]{0}, b(f32[3]{0})), (), ((s32[]), token[]))").unwrap();
    use xla_shape::proto::PrimitiveType as T;
    let tuple = T::Tuple as i32;
    assert_eq!(
        leaves(&shape),
        [
            (vec![0, 0], T::F32 as i32),
            (vec![0, 1], T::Buffer as i32),
            (vec![1], tuple),
            (vec![2, 0, 0], T::S32 as i32),
            (vec![2, 1], T::Token as i32),
        ]
    );
    // A tuple with a field besides its elements is a leaf, whole.
    shape.tuple_shapes[2].dimensions = vec![1];
    assert_eq!(leaves(&shape)[3..], [(vec![2], tuple)]);

    let (nested, expected) = nested_tuple_with_five_findings(120_000);
    let bytes = xla_shape::codec::encode(&nested);
    assert!(bytes.len() > 6_000_000);
    let dir = tempfile::tempdir().unwrap();
    validated_in_bounded_memory(dir.path(), "nested.pb", &bytes, &expected);
}

/// `message` with `unknown` encoded, and the paths of the whole check's findings of
/// those bytes (decoded whole), in order.
fn encoded_with_whole_paths(
    message: xla_shape::AnyMessage,
    unknown: xla_shape::codec::UnknownFields,
) -> (Vec<u8>, Vec<String>) {
    let kind = message.kind();
    let bytes = xla_shape::codec::encode_any(&xla_shape::codec::Decoded { message, unknown });
    let decoded = xla_shape::codec::decode_any(kind, &bytes).unwrap();
    let whole = xla_shape::validate::validate_decoded(&decoded, Options::proto());
    let paths = whole
        .issues()
        .iter()
        .map(|i| i.path().to_string())
        .collect();
    (bytes, paths)
}

/// Nested tuples with fields of their own (dimensions, a layout, dynamic flags,
/// unknown fields, and unknown fields in their layout) are opened too
/// (`codec::decode_shape_tree`): the findings of their own fields go around their
/// elements' and their unknown fields where the whole message's listing puts them, so
/// that `validate` gives the whole check's findings in its order, and `convert` the
/// whole conversion's bytes (such a tuple was read whole as one element: about 30
/// times its bytes).
#[test]
fn nested_tuples_with_fields_of_their_own_are_checked_a_shape_at_a_time() {
    use xla_shape::codec::{UnknownField, UnknownFields};
    use xla_shape::proto::{LayoutProto, ShapeProto};
    let tuple = xla_shape::proto::PrimitiveType::Tuple as i32;
    let (broken, _) = tuple_with_two_broken_elements(150_000);
    let mut own = broken.clone();
    own.dimensions = vec![2];
    own.layout = Some(Box::new(LayoutProto {
        minor_to_major: vec![0],
        ..Default::default()
    }));
    let dynamic = ShapeProto {
        element_type: tuple,
        tuple_shapes: vec![text::parse_shape("(f32[2]{0})").unwrap(), broken.clone()],
        is_dynamic_dimension: vec![true],
        ..Default::default()
    };
    let shape = ShapeProto {
        element_type: tuple,
        tuple_shapes: vec![broken, own, dynamic],
        ..Default::default()
    };
    let mut unknown = UnknownFields::new();
    unknown.push(UnknownField::varint(99, 1));
    let own = unknown.child_mut(4, 1);
    own.push(UnknownField::varint(40, 1));
    own.child_mut(5, 0).push(UnknownField::fixed32(41, 7));
    own.child_mut(4, 3).push(UnknownField::varint(42, 1));
    unknown
        .child_mut(4, 2)
        .child_mut(4, 0)
        .push(UnknownField::varint(43, 1));
    let (bytes, expected) = encoded_with_whole_paths(xla_shape::AnyMessage::Shape(shape), unknown);
    // Two broken elements in each of the three tuples; the own fields of the second and
    // third; the five unknown fields.
    assert!(expected.len() >= 13, "{expected:?}");
    for needle in [
        "tuple_shapes[1].#40",
        "tuple_shapes[1].layout.#41",
        "tuple_shapes[2].tuple_shapes[0].#43",
    ] {
        assert!(
            expected.iter().any(|p| p == needle),
            "{needle}: {expected:?}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let input = validated_in_bounded_memory(dir.path(), "own.pb", &bytes, &expected);
    // Converted a shape at a time too, each tuple's own fields where the whole
    // conversion puts them: into binary, JSON and XLA's text, and refused by the
    // lossless text (which has no form for an unknown field) with the whole
    // conversion's error. Converted whole, such a tuple took about 30 times its size.
    use xla_shape::text::HloStyle;
    let targets = [
        ("binary", HloStyle::Xla),
        ("json", HloStyle::Xla),
        ("hlo", HloStyle::Xla),
        ("hlo", HloStyle::Exact),
    ];
    converted_as_the_whole_in_bounded_memory(&input, "pb", &bytes, &targets);
}

/// A binary tuple with unknown fields (at the top, in a nested tuple, which is then
/// read as one element, and in leaves, one a known field with the wrong wire type) is
/// still checked a shape at a time, with the whole message's findings in its order:
/// the issues, then the unknown fields, the tuple's own first.
#[test]
fn binary_tuple_with_unknown_fields_is_checked_a_shape_at_a_time() {
    use xla_shape::codec::{Decoded, UnknownField, UnknownFields};
    let (nested, _) = nested_tuple_with_five_findings(120_000);
    let mut unknown = UnknownFields::new();
    unknown.child_mut(4, 0).push(UnknownField::varint(40, 1));
    let leaves = unknown.child_mut(4, 1);
    leaves
        .child_mut(4, 0)
        .child_mut(4, 5)
        .push(UnknownField::fixed32(50, 7));
    // Field 3 (dimensions) as fixed64: an error, as a known field with the wrong type.
    leaves
        .child_mut(4, 1)
        .child_mut(4, 7)
        .push(UnknownField::fixed64(3, 9));
    unknown.push(UnknownField::varint(99, 1));
    let bytes = Decoded {
        message: nested,
        unknown,
    }
    .encode_to_vec();
    assert!(bytes.len() > 6_000_000);
    let decoded = xla_shape::codec::decode_shape(&bytes).unwrap();
    let whole = xla_shape::validate::validate_decoded_shape(&decoded, Options::proto());
    let expected: Vec<String> = whole
        .report()
        .issues()
        .iter()
        .map(|i| i.path().to_string())
        .collect();
    assert_eq!(expected.len(), 9, "{expected:?}");
    drop(decoded);
    let dir = tempfile::tempdir().unwrap();
    let input = validated_in_bounded_memory(dir.path(), "unknown.pb", &bytes, &expected);

    // Converted a shape at a time too: the whole conversion's bytes (binary keeps the
    // unknown fields where the whole encoding puts them), and for the forms that drop
    // them a warning for each, in the whole message's order.
    use xla_shape::convert::{self, Form};
    let options = convert::Options::default();
    let whole = convert::read(Form::Binary, MessageKind::Shape, &bytes, &options).unwrap();
    let warnings: Vec<String> = whole
        .unknown_fields()
        .iter()
        .map(|field| format!("{}unknown field {}", convert::at(&field.path), field.number))
        .collect();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    // The lossless text refuses the first unknown field (the tuple's own), in bounded
    // memory too.
    let lossless = convert::Options {
        hlo_style: xla_shape::text::HloStyle::Exact,
        ..options
    };
    for (to, flag, options) in [
        (Form::Binary, "binary", &options),
        (Form::Json, "json", &options),
        (Form::Hlo, "hlo", &options),
        (Form::Hlo, "hlo --hlo-style exact", &lossless),
    ] {
        let output = dir
            .path()
            .join(format!("unknown.{}", flag.replace(' ', "_")));
        let run = limited(&format!(
            "convert --from binary --to {flag} {} -o {}",
            input.display(),
            output.display()
        ));
        let expected_bytes = match convert::write(to, &whole, options) {
            Ok(bytes) => bytes,
            // A broken element has no text form: the same error, nothing written.
            Err(e) => {
                assert!(!run.status.success(), "{flag}: {run:?}");
                let stderr = String::from_utf8_lossy(&run.stderr);
                assert!(stderr.contains(&e.to_string()), "{flag}: {stderr} / {e}");
                assert!(!output.exists(), "{flag}");
                continue;
            }
        };
        assert!(run.status.success(), "{flag}: {run:?}");
        assert!(std::fs::read(&output).unwrap() == expected_bytes, "{flag}");
        let said: Vec<String> = String::from_utf8_lossy(&run.stderr)
            .lines()
            .filter_map(|line| {
                let (_, rest) = line.split_once("unknown.pb: ")?;
                Some(rest.split(" is not written").next()?.to_string())
            })
            .collect();
        // Binary keeps every unknown field, in place: nothing to say.
        let expected_said = if to == Form::Binary {
            &[][..]
        } else {
            &warnings[..]
        };
        assert_eq!(said, expected_said, "{flag}");
    }
}

/// A JSON tuple that nests is checked and converted a shape at a time: a 38 MB tuple
/// of two nested tuples is validated and converted to binary in a 200 MB address space
/// (read whole, it took 5.6 times its size), with the whole message's findings and
/// bytes.
#[test]
fn nested_json_tuple_is_checked_and_converted_a_shape_at_a_time() {
    let (nested, expected) = nested_tuple_with_five_findings(100_000);
    let message = xla_shape::AnyMessage::Shape(nested);
    let json = xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new());
    assert!(json.len() > 35_000_000, "{}", json.len());
    let dir = tempfile::tempdir().unwrap();
    let input = validated_in_bounded_memory(dir.path(), "nested.json", json.as_bytes(), &expected);

    let output = dir.path().join("nested.pb");
    let convert = limited(&format!(
        "convert --from json --to binary {} -o {}",
        input.display(),
        output.display()
    ));
    assert!(convert.status.success(), "{convert:?}");
    let decoded = xla_shape::codec::Decoded {
        message,
        unknown: xla_shape::codec::UnknownFields::new(),
    };
    assert!(std::fs::read(&output).unwrap() == xla_shape::codec::encode_any(&decoded));
}

/// `((f32[2]{0}), (T, T'))` where `T` is [`tuple_with_two_broken_elements`] of `n` and
/// `T'` the same with an empty shape first, and the paths of the whole message's five
/// findings.
fn nested_tuple_with_five_findings(n: usize) -> (xla_shape::proto::ShapeProto, Vec<String>) {
    let tuple = xla_shape::proto::PrimitiveType::Tuple as i32;
    let (whole, _) = tuple_with_two_broken_elements(n);
    let mut second = whole.clone();
    second.tuple_shapes[0] = xla_shape::proto::ShapeProto::default();
    let nested = xla_shape::proto::ShapeProto {
        element_type: tuple,
        tuple_shapes: vec![
            text::parse_shape("(f32[2]{0})").unwrap(),
            xla_shape::proto::ShapeProto {
                element_type: tuple,
                tuple_shapes: vec![whole, second],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let expected = issue_paths(&nested);
    assert_eq!(expected.len(), 5, "{expected:?}");
    (nested, expected)
}

/// A one-line program shape of `n` named parameters, each `parameter`, and `result`.
fn one_line_program(parameter: &str, n: usize, result: &str) -> String {
    let mut line = String::with_capacity((parameter.len() + 12) * n + result.len() + 8);
    line.push('(');
    for i in 0..n {
        if i > 0 {
            line.push_str(", ");
        }
        line.push_str(&format!("p{i}: {parameter}"));
    }
    line.push_str(") -> ");
    line.push_str(result);
    line.push('\n');
    line
}

/// A long program shape line is checked a parameter at a time, as a long tuple line
/// is: 240,000 parameters (7 MB) pass in a 200 MB address space (parsed whole, a
/// million took 94 times the line), and the findings of broken parameters, a broken
/// shape nested in a parameter's tuple and a broken result are the whole program
/// shape's, at its paths.
#[test]
fn one_line_program_shape_is_validated_a_parameter_at_a_time() {
    let element = "f32[8,128]{1,0:T(8,128)}";
    let n = 240_000;
    let line = one_line_program(element, n, &format!("({element}, s32[2]{{0}})"));
    let line = line
        .replacen(&format!("p1: {element}"), "p1: f32[8,128]{0,0}", 1)
        .replacen(
            &format!("p7: {element}"),
            &format!("p7: ({element}, (s32[], f32[2]{{0:E(4)}}))"),
            1,
        )
        .replace("s32[2]{0})", "f32[2]{0:E(4)})");
    assert!(line.len() > 6_000_000);
    let whole = text::parse_program_shape(&line).unwrap();
    let expected: Vec<String> =
        xla_shape::validate::validate_program_shape_with(&whole, Options::hlo_text())
            .report()
            .issues()
            .iter()
            .map(|i| i.path().to_string())
            .collect();
    assert_eq!(expected.len(), 3, "{expected:?}");
    assert!(expected[0].starts_with("parameters[1]."), "{expected:?}");
    assert!(expected[1].starts_with("parameters[7].tuple_shapes[1].tuple_shapes[1]."));
    assert!(
        expected[2].starts_with("result.tuple_shapes[1]."),
        "{expected:?}"
    );
    drop(whole);

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.txt");
    std::fs::write(&input, &line).unwrap();
    let validate = limited(&format!(
        "validate --from hlo --format json {}",
        input.display()
    ));
    assert_eq!(
        validate.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&validate.stderr)
    );
    assert_eq!(finding_paths(&validate.stdout), expected);
    let report: serde_json::Value = serde_json::from_slice(&validate.stdout).unwrap();
    let file = &report["files"][0];
    assert_eq!(file["shapes"], n + 1, "{file}");
    assert_eq!(file["findings"][0]["shape"], "f32[8,128]{0,0}");
}

/// A binary program shape is checked a parameter at a time: 150,000 parameters (5 MB)
/// give the whole message's findings in a 200 MB address
/// space (decoded whole, a million took 60 times their 11 MB), also with a parameter
/// name too few; with an unknown field, or as the bytes of another message, it is
/// checked as before.
#[test]
fn binary_program_shape_is_checked_a_parameter_at_a_time() {
    use xla_shape::codec::{decode_program_shape, encode};
    use xla_shape::validate::validate_decoded;
    let mut program = program_with_three_findings(150_000);
    let dir = tempfile::tempdir().unwrap();
    for names in [150_000, 149_999] {
        program.parameter_names.truncate(names);
        let bytes = encode(&program);
        assert!(bytes.len() > 5_000_000);
        let decoded = decode_program_shape(&bytes).unwrap();
        let expected: Vec<String> = validate_decoded(&decoded.into(), Options::proto())
            .issues()
            .iter()
            .map(|i| i.path().to_string())
            .collect();
        assert_eq!(
            expected.len(),
            3 + usize::from(names < 150_000),
            "{expected:?}"
        );
        assert!(expected[1].starts_with("parameters[7].tuple_shapes[1].tuple_shapes[1]."));
        assert!(
            expected[2].starts_with("result.tuple_shapes[1]."),
            "{expected:?}"
        );
        let input = dir.path().join("program.pb");
        std::fs::write(&input, &bytes).unwrap();
        program_checked_in_bounded_memory("binary", &input, &expected, 150_001);
    }

    // Not clean: an unknown field after the first parameter, or a cut message, are
    // checked whole, as before (small enough here to fit).
    let small = text::parse_program_shape(&one_line_program("f32[2]{0}", 70_000, "f32[]")).unwrap();
    let mut bytes = encode(&small);
    assert!(bytes.len() > 1 << 20);
    let first = 2 + usize::from(bytes[1]);
    bytes.splice(first..first, [0xa0, 0x06, 0x01]); // field 100, varint 1
    let whole = |bytes: &[u8], message: &str| {
        let input = dir.path().join("odd.pb");
        std::fs::write(&input, bytes).unwrap();
        let mut command = cli();
        command.args(["validate", "--from", "binary", "--format", "json"]);
        if !message.is_empty() {
            command.args(["--message", message]);
        }
        let output = command.arg(&input).output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (code, stdout) = whole(&bytes, "program-shape");
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("unknown_field"), "{stdout}");
    let (code, stdout) = whole(&bytes[..bytes.len() - 3], "program-shape");
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("cannot decode xla.ProgramShapeProto"),
        "{stdout}"
    );
}

/// A program shape of `n` named parameters `f32[8,128]{1,0:T(8,128)}` and a result
/// `(f32[8,128]{1,0:T(8,128)}, s32[2]{1})`, with parameter 1 broken and parameter 7 a
/// tuple that nests a shape warned of: three findings, at `parameters[1]`,
/// `parameters[7].tuple_shapes[1].tuple_shapes[1]` and `result.tuple_shapes[1]`.
fn program_with_three_findings(n: usize) -> xla_shape::proto::ProgramShapeProto {
    let element = "f32[8,128]{1,0:T(8,128)}";
    let line = one_line_program(element, n, &format!("({element}, s32[2]{{0}})"))
        .replacen(&format!("p1: {element}"), "p1: f32[8,128]{0,0}", 1)
        .replacen(
            &format!("p7: {element}"),
            &format!("p7: ({element}, (s32[], f32[2]{{0:E(4)}}))"),
            1,
        );
    let mut program = text::parse_program_shape(&line).unwrap();
    program.result.as_mut().unwrap().tuple_shapes[1]
        .layout
        .as_mut()
        .unwrap()
        .minor_to_major = vec![1];
    program
}

/// A JSON program shape is checked a parameter at a time: 150,000 parameters (29 MB)
/// give the whole message's findings in a 200 MB address space, named or not, with or
/// without `--message program-shape` (read whole, a million took 10 times their 73
/// MB); a cut one is the whole read's error.
#[test]
fn json_program_shape_is_checked_a_parameter_at_a_time() {
    let mut program = program_with_three_findings(150_000);
    let dir = tempfile::tempdir().unwrap();
    for names in [150_000, 0] {
        program.parameter_names.truncate(names);
        let expected: Vec<String> =
            xla_shape::validate::validate_program_shape_with(&program, Options::proto())
                .report()
                .issues()
                .iter()
                .map(|i| i.path().to_string())
                .collect();
        assert_eq!(expected.len(), 3 + usize::from(names == 0), "{expected:?}");
        let message = xla_shape::AnyMessage::ProgramShape(program.clone());
        let json = xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new());
        assert!(json.len() > 25_000_000, "{}", json.len());
        let input = dir.path().join("program.json");
        std::fs::write(&input, &json).unwrap();
        program_checked_in_bounded_memory("json", &input, &expected, 150_001);
        let cut = &json[..json.len() - 2];
        std::fs::write(&input, cut).unwrap();
        let whole_error = xla_shape::json::from_json(
            MessageKind::ProgramShape,
            cut.as_bytes(),
            &xla_shape::json::ParseOptions::new(),
        )
        .unwrap_err();
        refused_with(
            &["validate", "--from", "json", "--message", "program-shape"],
            &input,
            &whole_error.to_string(),
        );
    }
}

/// A program shape is converted a parameter at a time from every form into every
/// form: 150,000 named parameters (the text is 5.6 MB) in a 200 MB address space
/// (read whole, a million took 35 to 100 times their size), byte for byte the whole
/// conversion.
#[test]
fn program_shape_is_converted_a_parameter_at_a_time() {
    use xla_shape::convert::{self, Form};
    let mut program = program_with_three_findings(150_000);
    // A tuple element whose layout is out of range has no text (XLA's parser
    // refuses it): the result's is put right.
    program.result.as_mut().unwrap().tuple_shapes[1]
        .layout
        .as_mut()
        .unwrap()
        .minor_to_major = vec![0];
    let message = xla_shape::AnyMessage::ProgramShape(program);
    let decoded = xla_shape::codec::Decoded {
        message,
        unknown: xla_shape::codec::UnknownFields::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let options = convert::Options::default();
    let exact = convert::Options {
        hlo_style: text::HloStyle::Exact,
        ..Default::default()
    };
    let inputs = [
        (
            "binary",
            convert::write(Form::Binary, &decoded, &options).unwrap(),
        ),
        (
            "json",
            convert::write(Form::Json, &decoded, &options).unwrap(),
        ),
        ("hlo", convert::write(Form::Hlo, &decoded, &exact).unwrap()),
    ];
    for (from, bytes) in &inputs {
        assert!(bytes.len() > 5_000_000, "{from}: {}", bytes.len());
        let input = dir.path().join(format!("program.{from}"));
        std::fs::write(&input, bytes).unwrap();
        for (to, style, options) in [
            ("binary", "xla", &options),
            ("json", "xla", &options),
            ("hlo", "xla", &options),
            ("hlo", "exact", &exact),
        ] {
            let output = dir.path().join(format!("out.{to}"));
            let convert = limited(&format!(
                "convert --from {from} --message program-shape --to {to} --hlo-style {style} {} -o {}",
                input.display(),
                output.display()
            ));
            assert!(
                convert.status.success(),
                "{from} -> {to}: {}",
                String::from_utf8_lossy(&convert.stderr)
            );
            let form = match to {
                "binary" => Form::Binary,
                "json" => Form::Json,
                _ => Form::Hlo,
            };
            let whole = convert::write(form, &decoded, options).unwrap();
            assert!(
                std::fs::read(&output).unwrap() == whole,
                "{from} -> {to} ({style})"
            );
        }
    }
}

/// A shape with two million unknown fields (6 MB) is validated and converted in a
/// 200 MB address space: its fields are kept packed (a struct and a heap block each
/// took 37 times their bytes, and validation 4.6 GB for ten million), the report lists
/// the first 1,000 and counts the rest, and binary output is the input byte for byte.
#[test]
fn millions_of_unknown_fields_are_kept_and_reported_in_bounded_memory() {
    let n = 2_000_000;
    let mut bytes = vec![0x10, 0x0b]; // element_type F32
    for _ in 0..n {
        bytes.extend([0xa0, 0x06, 0x01]); // field 100, varint 1
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("unknown.pb");
    std::fs::write(&input, &bytes).unwrap();
    let report = report_in_bounded_memory("", &input, Some(0));
    let findings = report["files"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1001);
    assert!(findings[..1000]
        .iter()
        .all(|f| f["code"] == "unknown_field"));
    assert_eq!(findings[1000]["code"], "unknown_fields_not_listed");
    let said = findings[1000]["message"].as_str().unwrap();
    assert!(said.starts_with("1999000 more unknown fields"), "{said}");

    let output = dir.path().join("out.pb");
    let convert = limited(&format!(
        "convert --from binary --to binary {} -o {}",
        input.display(),
        output.display()
    ));
    assert!(convert.status.success(), "{convert:?}");
    assert!(std::fs::read(&output).unwrap() == bytes);
    let convert = limited(&format!(
        "convert --from binary --to json {} -o {}",
        input.display(),
        output.display()
    ));
    assert!(convert.status.success(), "{convert:?}");
    let warnings = String::from_utf8_lossy(&convert.stderr);
    assert_eq!(warnings.lines().count(), 1001, "{}", &warnings[..200]);
    assert!(warnings.contains("1999000 more unknown fields are not written"));
}

/// Copies of retired layout fields are placed without reading the fields kept before
/// them again: 200,000 of them (each `padded_dimensions` on its own) decode at once,
/// where each looked at every field before it (100,000 took 3 s in release).
#[test]
fn many_retired_layout_fields_decode_in_linear_time() {
    let bytes: Vec<u8> = [0x10, 0x01].repeat(200_000);
    let start = Instant::now();
    let decoded = xla_shape::codec::decode_layout(&bytes).unwrap();
    assert_eq!(decoded.message.padded_dimensions.len(), 200_000);
    assert_eq!(decoded.encode_to_vec(), bytes);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

/// A module whose instruction has a tuple shape of `n` elements `f32[8,128]{1,0}` on
/// one line, with the elements at 1, 3 and (nested) 5 warned of (a tuple element that
/// is in error does not parse).
fn module_with_long_tuple(n: usize) -> String {
    let element = "f32[8,128]{1,0}";
    let mut elements = vec![element.to_string(); n];
    elements[1] = "f32[2]{0:E(4)}".into();
    elements[3] = "s8[4]{0:E(2)}".into();
    elements[5] = format!("({element}, (s32[], f32[2]{{0:E(4)}}))");
    format!(
        "HloModule m\n\nENTRY main {{\n  p = ({}) parameter(0)\n  ROOT t = {element} get-tuple-element(p), index=0\n}}\n",
        elements.join(", ")
    )
}

/// A long tuple in module text is validated a shape at a time when only the findings
/// are wanted (`validate`): the findings of the whole tuple's check, at the same
/// paths, lines and columns, each with its own shape's text; a syntax error is all
/// that is said of a tuple that does not parse. A 9.6 MB instruction line passes in a
/// 200 MB address space (a 26 MB one took 915 MB).
#[test]
fn long_tuple_in_module_text_is_validated_a_shape_at_a_time() {
    use xla_shape::text::module;
    let key = |f: &xla_shape::report::Finding| {
        (
            f.code,
            f.path.clone(),
            f.message.clone(),
            f.line,
            f.column,
            f.computation.clone(),
            f.instruction.clone(),
        )
    };
    let text = module_with_long_tuple(80_000);
    assert!(text.len() > 1 << 20);
    let broken = text.replacen(
        "f32[8,128]{1,0}, f32[8,128]{1,0})",
        "f32[8,128]{1,0}, f32[8,)",
        1,
    );
    for input in [&text, &broken] {
        let mut whole = Vec::new();
        let mut check = module::validate_text;
        let a = module::scan_text(input.as_bytes(), &mut check, &mut |f| whole.push(f)).unwrap();
        let mut streamed = Vec::new();
        let b = module::scan_text_validated(input.as_bytes(), &mut |f| streamed.push(f)).unwrap();
        assert_eq!(a, b);
        let (whole_keys, streamed_keys): (Vec<_>, Vec<_>) = (
            whole.iter().map(key).collect(),
            streamed.iter().map(key).collect(),
        );
        assert_eq!(whole_keys, streamed_keys);
        if input == &text {
            assert_eq!(streamed.len(), 3, "{streamed_keys:?}");
            assert_eq!(streamed[0].shape.as_deref(), Some("f32[2]{0:E(4)}"));
            assert!(streamed[2]
                .path
                .starts_with("tuple_shapes[5].tuple_shapes[1].tuple_shapes[1]"));
        } else {
            assert!(
                streamed.iter().all(|f| f.code == "hlo_syntax"),
                "{streamed_keys:?}"
            );
        }
    }

    let big = module_with_long_tuple(600_000);
    assert!(big.len() > 9_000_000);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("module.hlo");
    std::fs::write(&input, &big).unwrap();
    assert_eq!(findings_in_bounded_memory("", &input, Some(0)).len(), 3);
}

/// A long tuple whose `)` is on a later line is not built to learn where it ends: the
/// scan reads it a shape at a time once its lines are joined, with the findings it has
/// on one line; and one whose first line alone is past the 1 MiB a shape may span
/// over lines is a clear error in bounded memory. Before session 35 the first line was
/// parsed whole to find that it goes on: a 10 MB such line took 465 MB, and aborted
/// under 200 MB of address space.
#[test]
fn a_long_tuple_closed_on_a_later_line_is_not_built() {
    use xla_shape::text::module;
    let over_lines =
        |n| module_with_long_tuple(n).replacen(") parameter(0)", "\n  ) parameter(0)", 1);
    let key = |f: &xla_shape::report::Finding| (f.code, f.path.clone(), f.message.clone());
    let findings = |text: &str| {
        let mut found = Vec::new();
        module::scan_text_validated(text.as_bytes(), &mut |f| found.push(f)).unwrap();
        found.iter().map(key).collect::<Vec<_>>()
    };
    // 680 KB over two lines: the three warnings of the same tuple on one line.
    let small = over_lines(40_000);
    assert!(small.len() > 10 * xla_shape::LONG_INPUT);
    let expected = findings(&module_with_long_tuple(40_000));
    assert_eq!(expected.len(), 3);
    assert_eq!(findings(&small), expected);

    let big = over_lines(600_000);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("module.hlo");
    std::fs::write(&input, &big).unwrap();
    let report = report_in_bounded_memory("", &input, Some(1));
    let found = report["files"][0]["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "hlo_syntax");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("may take at most 1048576 bytes"),
        "{message}"
    );
    let shapes = limited(&format!("shapes {}", input.display()));
    assert_eq!(shapes.status.code(), Some(2));
}

/// A tuple with fields of its own besides its elements (dimensions, a layout, dynamic
/// flags: all ignored or refused on a tuple) is still checked an element at a time,
/// from binary and from JSON: its own issues where the whole check puts them (the
/// dimensions before the elements', the rest after), in a 200 MB address space
/// (decoded whole, such a tuple took 30 times its size); and re-encoded an element at a
/// time (21 times its size whole).
#[test]
fn tuple_with_fields_of_its_own_is_checked_an_element_at_a_time() {
    use xla_shape::text::HloStyle;
    let dir = tempfile::tempdir().unwrap();
    // 10 MB of binary, 52 MB of JSON.
    for (n, form, layout) in [
        (400_000, "pb", true),
        (150_000, "json", true),
        (400_000, "pb", false),
        (150_000, "json", false),
    ] {
        let (mut whole, _) = tuple_with_two_broken_elements(n);
        whole.dimensions = vec![2, 3];
        whole.is_dynamic_dimension = vec![false, true];
        // A tuple's layout is refused by HLO text in either style; its dimensions only
        // by the lossless one.
        whole.layout = layout.then(Box::default);
        let expected = issue_paths(&whole);
        assert_eq!(expected.len(), 4 + usize::from(layout), "{expected:?}");
        assert_eq!(expected[0], "dimensions");
        let bytes = match form {
            "pb" => xla_shape::codec::encode(&whole),
            _ => xla_shape::json::to_json(
                &xla_shape::AnyMessage::Shape(whole),
                &xla_shape::json::PrintOptions::new(),
            )
            .into_bytes(),
        };
        assert!(bytes.len() > 10_000_000);
        // Each run takes seconds in a debug build: the conversions the tuple's own
        // fields change (JSON and XLA's text print or refuse them), one of each.
        let converted: &[_] = match (form, layout) {
            ("pb", false) => &[("json", HloStyle::Xla), ("hlo", HloStyle::Xla)],
            ("pb", true) => &[("hlo", HloStyle::Exact)],
            (_, false) => &[("binary", HloStyle::Xla)],
            _ => &[],
        };
        let input = dir.path().join(format!("tuple.{form}"));
        if layout {
            validated_in_bounded_memory(dir.path(), &format!("tuple.{form}"), &bytes, &expected);
        } else {
            std::fs::write(&input, &bytes).unwrap();
        }
        converted_as_the_whole_in_bounded_memory(&input, form, &bytes, converted);
        if form == "pb" && layout {
            // Re-encoded an element at a time too, its own fields where the whole
            // encoding puts them (the same bytes here: they are canonical).
            let out = dir.path().join("out.pb");
            let run = limited(&format!(
                "convert --from binary --to binary {} -o {}",
                input.display(),
                out.display()
            ));
            assert_eq!(
                run.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            assert!(
                std::fs::read(&out).unwrap() == bytes,
                "re-encoded differently"
            );
        }
    }
}

/// Converts the shape in `input` (`form` "pb" or "json", `bytes` its contents) into
/// every form and style in the 200 MB address space: the whole conversion's bytes, or
/// its error, and nothing written then. A tuple with fields of its own took 21 times
/// its size into HLO text and 5.6 times into binary when it was converted whole.
fn converted_as_the_whole_in_bounded_memory(
    input: &std::path::Path,
    form: &str,
    bytes: &[u8],
    targets: &[(&str, xla_shape::text::HloStyle)],
) {
    use xla_shape::convert::{self, Form, Options};
    use xla_shape::text::HloStyle;
    use xla_shape::MessageKind;
    let from = if form == "pb" {
        Form::Binary
    } else {
        Form::Json
    };
    let out = input.with_extension("out");
    for &(to, style) in targets {
        let options = Options {
            hlo_style: style,
            ..Options::default()
        };
        let target = match to {
            "binary" => Form::Binary,
            "json" => Form::Json,
            _ => Form::Hlo,
        };
        let whole = convert::read(from, MessageKind::Shape, bytes, &options)
            .and_then(|decoded| convert::write(target, &decoded, &options));
        let _ = std::fs::remove_file(&out);
        let style_arg = if style == HloStyle::Exact {
            "exact"
        } else {
            "xla"
        };
        let run = limited(&format!(
            "convert --from {} --to {to} --hlo-style {style_arg} {} -o {}",
            if form == "pb" { "binary" } else { "json" },
            input.display(),
            out.display()
        ));
        let said = String::from_utf8_lossy(&run.stderr);
        match whole {
            Ok(expected) => {
                assert_eq!(run.status.code(), Some(0), "{to} {style_arg}: {said}");
                assert!(
                    std::fs::read(&out).unwrap() == expected,
                    "{to} {style_arg}: converted differently"
                );
            }
            Err(e) => {
                assert_eq!(run.status.code(), Some(2), "{to} {style_arg}: {said}");
                assert!(
                    said.contains(&e.to_string()),
                    "{to} {style_arg}: {said}\n{e}"
                );
                assert!(!out.exists());
            }
        }
    }
}

/// Validates the program shape in `input` (`from` binary or JSON), with and without
/// `--message program-shape`, in the 200 MB address space: exit 1, findings at exactly
/// the `expected` paths, `shapes` counted.
fn program_checked_in_bounded_memory(
    from: &str,
    input: &std::path::Path,
    expected: &[String],
    shapes: usize,
) {
    for message in ["", "--message program-shape"] {
        let validate = limited(&format!(
            "validate --from {from} {message} --format json {}",
            input.display()
        ));
        assert_eq!(
            validate.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&validate.stderr)
        );
        assert_eq!(finding_paths(&validate.stdout), expected, "{message}");
        let report: serde_json::Value = serde_json::from_slice(&validate.stdout).unwrap();
        assert_eq!(report["files"][0]["shapes"], shapes);
        assert_eq!(report["files"][0]["message"], "xla.ProgramShapeProto");
    }
}

/// The three readings of one message: from HLO text (when given), from its binary
/// encoding and from its JSON; each `Ok` or the error's text.
fn read_in_every_form(
    text_form: Option<&str>,
    message: &xla_shape::AnyMessage,
) -> Vec<Result<xla_shape::AnyMessage, String>> {
    use xla_shape::codec::{encode, Decoded};
    use xla_shape::json;
    let kind = message.kind();
    let binary = match message {
        xla_shape::AnyMessage::Shape(m) => encode(m),
        xla_shape::AnyMessage::Layout(m) => encode(m),
        xla_shape::AnyMessage::ProgramShape(m) => encode(m),
    };
    let json_text = json::to_json(message, &json::PrintOptions::default());
    let mut read = vec![
        decode_any(kind, &binary)
            .map(|d: Decoded<_>| d.message)
            .map_err(|e| e.to_string()),
        json::from_json(kind, json_text.as_bytes(), &json::ParseOptions::default())
            .map_err(|e| e.to_string()),
    ];
    if let Some(input) = text_form {
        read.push(text::parse_message(kind, input).map_err(|e| e.to_string()));
    }
    read
}

/// An array of `rank` dimensions of 1 with its layout `{rank-1,...,0}` and the
/// layout attributes `attrs` (`""` for none): `3 * rank` list entries and the tiles'.
fn wide_array(rank: usize, attrs: &str) -> String {
    let dims = vec!["1"; rank].join(",");
    let m2m: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
    format!("f32[{dims}]{{{}{attrs}}}", m2m.join(","))
}

/// One shape holds at most `MAX_LIST_ENTRIES` list entries in all, in every form, and
/// the same message is read or refused alike from text, binary and JSON: its
/// dimensions, dynamic flags and `minor_to_major` (three entries a dimension), a
/// tile (one, and one a tile dimension), and a physical shape's lists count together.
/// A tuple's elements and a program's parameters each count their own. XLA sets no
/// limit; without one, a shape of 10 million dimensions took 22 times its text.
#[test]
fn a_shape_holds_a_bounded_number_of_list_entries() {
    use xla_shape::{AnyMessage, MAX_LIST_ENTRIES};
    let rank = MAX_LIST_ENTRIES / 3;
    assert_eq!(3 * rank, MAX_LIST_ENTRIES - 1);
    let limit = format!("more than {MAX_LIST_ENTRIES} entries in all");
    let fits = wide_array(rank, "");
    let shape = text::parse_shape(&fits).expect("at the limit");
    let mut over = shape.clone();
    let layout = over.layout.as_mut().unwrap();
    layout.tiles.push(xla_shape::proto::TileProto {
        dimensions: vec![1],
    });
    for read in read_in_every_form(Some(&fits), &AnyMessage::Shape(shape.clone())) {
        assert_eq!(read.expect("fits"), AnyMessage::Shape(shape.clone()));
    }
    let over_text = wide_array(rank, ":T(1)");
    assert_eq!(text::print_shape(&over).unwrap(), over_text);
    for read in read_in_every_form(Some(&over_text), &AnyMessage::Shape(over.clone())) {
        let error = read.expect_err("one tile over");
        assert!(error.contains(&limit), "{error}");
    }
    // Without a layout of its own, the text fills one in: the same entries.
    let filled = format!("f32[{}]", vec!["1"; rank + 1].join(","));
    let error = text::parse_shape(&filled).expect_err("filled layout over");
    assert!(error.to_string().contains(&limit), "{error}");

    // A physical shape's lists are its layout's: one short of the limit, then five.
    let layout_text = format!("{{4,3,2,1,0:P({})}}", wide_array(rank - 1, ""));
    let error = text::parse_layout(&layout_text).expect_err("physical over");
    assert!(error.to_string().contains(&limit), "{error}");
    let layout = xla_shape::proto::LayoutProto {
        minor_to_major: vec![4, 3, 2, 1, 0],
        physical_shape: Some(Box::new(
            text::parse_shape(&wide_array(rank - 1, "")).unwrap(),
        )),
        ..Default::default()
    };
    for read in read_in_every_form(None, &AnyMessage::Layout(layout)) {
        let error = read.expect_err("physical over");
        assert!(error.contains(&limit), "{error}");
    }

    // Elements and parameters count their own: two shapes at the limit, together twice it.
    let pair = format!("({fits}, {fits})");
    let tuple = text::parse_shape(&pair).expect("a tuple of two at the limit");
    for read in read_in_every_form(Some(&pair), &AnyMessage::Shape(tuple.clone())) {
        assert_eq!(read.expect("fits"), AnyMessage::Shape(tuple.clone()));
    }
    let program_text = format!("(a: {fits}, b: {fits}) -> {fits}");
    let program = text::parse_program_shape(&program_text).expect("a program of three");
    let message = AnyMessage::ProgramShape(program);
    for read in read_in_every_form(Some(&program_text), &message) {
        assert_eq!(read.expect("fits"), message);
    }
}

/// A shape of 10,000,000 dimensions is refused at the limit in little memory, in every
/// form, by `validate` and `convert` (before the limit it took 437 MB from 20 MB of
/// text, and 8.3 times its binary).
#[test]
fn a_shape_of_millions_of_dimensions_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n = 10_000_000;
    let text_path = dir.path().join("wide.txt");
    std::fs::write(&text_path, format!("f32[{}]\n", vec!["1"; n].join(","))).unwrap();
    // Field 2 (element type F32), then field 3 (dimensions) packed: n ones.
    let mut binary = vec![0x10, 0x0b, 0x1a];
    let mut len = n as u64;
    while len >= 0x80 {
        binary.push((len as u8) | 0x80);
        len >>= 7;
    }
    binary.push(len as u8);
    binary.resize(binary.len() + n, 1);
    let binary_path = dir.path().join("wide.binpb");
    std::fs::write(&binary_path, &binary).unwrap();
    let json_path = dir.path().join("wide.json");
    let json = format!(
        "{{\"elementType\":\"F32\",\"dimensions\":[{}]}}",
        vec!["1"; n].join(",")
    );
    std::fs::write(&json_path, json).unwrap();
    let limit = format!("more than {} entries in all", xla_shape::MAX_LIST_ENTRIES);
    for (path, from, invalid) in [
        (&text_path, "hlo", 1),
        (&binary_path, "binary", 2),
        (&json_path, "json", 2),
    ] {
        let out = dir.path().join("out");
        for (args, code) in [
            (format!("validate {}", path.display()), invalid),
            (
                format!(
                    "convert --from {from} --to binary {} -o {}",
                    path.display(),
                    out.display()
                ),
                2,
            ),
        ] {
            let run = limited(&args);
            let said = String::from_utf8_lossy(&run.stdout).to_string()
                + &String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(code), "{args}: {said}");
            assert!(said.contains(&limit), "{args}: {said}");
            assert!(!out.exists(), "{args}");
        }
    }
}

/// A module of `n` chained `add` instructions, one a line.
fn module_of_many_instructions(n: usize) -> String {
    let mut text = String::from(
        "HloModule many, entry_computation_layout={(f32[8,128]{1,0})->f32[8,128]{1,0}}\n\nENTRY main {\n  p0 = f32[8,128]{1,0} parameter(0)\n",
    );
    let mut previous = "p0".to_string();
    for i in 0..n {
        text.push_str(&format!(
            "  a{i} = f32[8,128]{{1,0:T(8,128)}} add(f32[8,128]{{1,0}} {previous}, f32[8,128]{{1,0}} p0)\n"
        ));
        previous = format!("a{i}");
    }
    text.push_str(&format!(
        "  ROOT r = f32[8,128]{{1,0}} copy({previous})\n}}\n"
    ));
    text
}

/// `shapes` writes each shape as it is read from module text and from shape lines
/// (detected from a first buffer that ends inside a line), so that its memory stays
/// flat whatever the number of lines: a module of 200,000 instructions and 25 MB of
/// shape lines are listed in a 200 MB address space (the listing was built whole
/// first: 2.65 GB for a module of a million instructions, 34 times its text, and
/// 4.2 GB for 100 MB of shape lines), every line in its place.
#[test]
fn shapes_of_many_lines_are_listed_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("many.hlo");
    std::fs::write(&module, module_of_many_instructions(200_000)).unwrap();
    let lines = dir.path().join("lines.txt");
    std::fs::write(&lines, "f32[8,128]{1,0:T(8,128)}\n".repeat(1_000_000)).unwrap();
    for input in [&module, &lines] {
        let out = dir.path().join("out.lock");
        let run = limited(&format!("shapes {} -o {}", input.display(), out.display()));
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let listed = std::fs::read_to_string(&out).unwrap();
        let name = input.display();
        let lines: Vec<&str> = listed.lines().collect();
        if input == &module {
            // The entry layout's two shapes, the parameter, three shapes an `add`, the copy.
            assert_eq!(lines.len(), 2 + 1 + 3 * 200_000 + 1);
            assert_eq!(
                lines[3 + 3 * 199_999],
                format!("{name}: ENTRY main/a199999: f32[8,128]{{1,0:T(8,128)}}")
            );
            assert_eq!(
                lines.last().unwrap(),
                &format!("{name}: ENTRY main/r: f32[8,128]{{1,0}}")
            );
        } else {
            assert_eq!(lines.len(), 1_000_000);
            let line = format!("{name}: f32[8,128]{{1,0:T(8,128)}}");
            assert!(lines.iter().all(|l| *l == line), "{}", lines[0]);
        }
    }
    let validate = limited(&format!("validate {}", lines.display()));
    assert_eq!(validate.status.code(), Some(0));
    // From standard input too, as it is read (it was read whole, and listed whole).
    let from_file = limited(&format!("shapes {}", module.display()));
    let run = limited(&format!("shapes - < {}", module.display()));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let expected = String::from_utf8(from_file.stdout)
        .unwrap()
        .replace(&module.display().to_string(), "<stdin>");
    assert!(
        run.stdout == expected.as_bytes(),
        "standard input listed differently"
    );
}

/// `diff` holds each side compactly (`guard::held`: each name and shape text once, the
/// rest as indices), read as the listing streams: two modules of 100,000 instructions
/// (8.5 MB each) are compared in a 200 MB address space, with the one layout change and
/// the one renumbered name matched by position (held as listings, both sides took 3.7
/// GB for a million instructions, and this comparison ran out of the 200 MB).
#[test]
fn diff_of_many_instructions_holds_each_side_compactly() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = module_and_changed_copy(dir.path(), 100_000, |text| {
        text.replace(
            "  a5000 = f32[8,128]{1,0:T(8,128)}",
            "  a5000 = f32[8,128]{0,1:T(8,128)}",
        )
        .replace("a70000 ", "a70000.1 ")
        .replace(" a70000,", " a70000.1,")
    });
    let run = limited(&format!("diff {} {}", old.display(), new.display()));
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let name = new.display();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!(
            "{name}: main/a5000: f32[8,128]{{1,0:T(8,128)}} -> f32[8,128]{{0,1:T(8,128)}}: minor_to_major changed (allocated 4096 -> 65536 bytes)\n\
             {name}: note: matched instruction main/a70000 with a70000.1 by position among same-stem, same-opcode names\n"
        )
    );
    let same = limited(&format!("diff {} {}", old.display(), old.display()));
    assert_eq!(same.status.code(), Some(0));
}

/// The report of `diff OLD NEW` run in an address space of `kb` KB ([`limited_to`]),
/// which finds changes (exit 1).
fn diff_in(kb: u64, old: &std::path::Path, new: &std::path::Path) -> String {
    let args = format!("diff {} {}", old.display(), new.display());
    String::from_utf8(limited_exit(kb, &args, 1)).unwrap()
}

/// Writes [`module_of_many_instructions`]`(n)` to `dir/old.hlo` and it changed by
/// `change` (which must change it) to `dir/new.hlo`: their paths.
fn module_and_changed_copy(
    dir: &std::path::Path,
    n: usize,
    change: impl Fn(&str) -> String,
) -> (std::path::PathBuf, std::path::PathBuf) {
    text_and_changed_copy(dir, module_of_many_instructions(n), change)
}

/// `text` written to `old.hlo` in `dir` and `change` of it to `new.hlo` (it must change
/// something): their paths.
fn text_and_changed_copy(
    dir: &std::path::Path,
    text: String,
    change: impl Fn(&str) -> String,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let changed = change(&text);
    assert_ne!(text, changed);
    let (old, new) = (dir.join("old.hlo"), dir.join("new.hlo"));
    std::fs::write(&old, text).unwrap();
    std::fs::write(&new, changed).unwrap();
    (old, new)
}

/// `diff` keeps each side's entries (32 bytes a shape: three million for a module of a
/// million `add`s) past the first 65,536 in a temporary file: two modules of 300,000
/// instructions (26 MB each) are compared in a 100 MB address space, which the
/// previous binary ran out of (it took some 125 MB).
#[test]
fn diff_keeps_the_entries_of_large_modules_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = module_and_changed_copy(dir.path(), 300_000, |text| {
        text.replace(
            "  a299000 = f32[8,128]{1,0:T(8,128)} add(f32[8,128]{1,0} a298999",
            "  a299000 = f32[8,128]{1,0:T(8,128)} add(f32[8,128]{0,1} a298999",
        )
    });
    assert_eq!(
        diff_in(100_000, &old, &new),
        format!(
            "{}: main/a299000 operand 0: f32[8,128]{{1,0}} -> f32[8,128]{{0,1}}: minor_to_major changed (allocated 4096 -> 4096 bytes)\n",
            new.display()
        )
    );
}

/// The command line has glibc map each block of 128 KiB or more on its own (src/main.rs):
/// two modules of 600,000 short lines (20 MB each, one instruction retyped) are compared
/// in a 90 MB address space. Left to raise that size as blocks are freed, glibc served
/// later blocks from its heap, which kept what was freed between them: the previous
/// binary needed some 100 MB here (and 96 MB of memory where this one takes 76 MB).
#[test]
fn diff_of_large_modules_gives_freed_blocks_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("HloModule m\n\nENTRY e {\n  x0 = f32[] parameter(0)\n");
    for i in 1..600_000 {
        text.push_str(&format!("  x{i} = f32[] negate(x{})\n", i - 1));
    }
    text.push_str("  ROOT r = f32[] negate(x599999)\n}\n");
    let (old, new) = text_and_changed_copy(dir.path(), text, |text| {
        text.replace(
            "  x300000 = f32[] negate(x299999)",
            "  x300000 = f16[] negate(x299999)",
        )
    });
    assert_eq!(
        diff_in(90_000, &old, &new),
        format!(
            "{}: e/x300000: f32[] -> f16[]: element type f32 -> f16 (allocated 4 -> 2 bytes)\n",
            new.display()
        )
    );
}

/// `diff` holds a module's instructions in one list as it finds them, and its
/// computations' parameters in another, where it held a list of each for each
/// computation (some 100 bytes a computation and side): two modules of 200,000
/// computations of two instructions (18 MB each, one instruction retyped) are compared
/// in a 110 MB address space, which the previous binary ran out of (it needed some
/// 130 MB, and this one 80, release builds).
#[test]
fn diff_of_many_small_computations_holds_no_list_for_each() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("HloModule m\n");
    for i in 0..200_000 {
        text.push_str(&format!(
            "\n%c{i} (p: f32[]) -> f32[] {{\n  %p = f32[] parameter(0)\n  ROOT %x = f32[] negate(%p)\n}}\n"
        ));
    }
    text.push_str("\nENTRY %e (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  ROOT %r = f32[] call(%a), to_apply=%c0\n}\n");
    let (old, new) = text_and_changed_copy(dir.path(), text, |text| {
        let at = text.find("%c150000 ").unwrap();
        let (before, after) = text.split_at(at);
        format!(
            "{before}{}",
            after.replacen("ROOT %x = f32[]", "ROOT %x = f16[]", 1)
        )
    });
    assert_eq!(
        diff_in(110_000, &old, &new),
        format!(
            "{}: c150000/x: f32[] -> f16[]: element type f32 -> f16 (allocated 4 -> 2 bytes)\n",
            new.display()
        )
    );
}

/// A listing read back keeps, for each file it names, its runs of lines and its name
/// once (a listing and a list of runs a file took some 300 bytes): a listing naming
/// 200,000 files of a line each (8.5 MB), the first named again at its end, is listed
/// in a 60 MB address space, which the previous binary ran out of (79 MB), each file's
/// lines together in the order the files first come.
#[test]
fn a_listing_naming_many_files_is_read_back_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..200_000 {
        text.push_str(&format!("dir/file{i}.hlo: ENTRY main/x: f32[8]{{0}}\n"));
    }
    let again = "dir/file0.hlo: ENTRY main/y: s32[2]{0}\n";
    let path = dir.path().join("listing.txt");
    std::fs::write(&path, format!("{text}{again}")).unwrap();
    let out = limited_exit(60_000, &format!("shapes {}", path.display()), 0);
    let (first, rest) = text.split_once('\n').unwrap();
    let expected = format!("{first}\n{again}{rest}");
    assert!(out == expected.as_bytes(), "listed differently");
}

/// Two listings naming 200,000 files each (8.7 MB) are compared in a 48 MB address
/// space: each is held as where each file's lines stand, its lines read again from the
/// file a window at a time, each file held only while its pair is compared, and the
/// files paired through sorted runs in temporary files (a compact listing a file, some
/// 1 KB each with its tables, took 424 MB; holding each listing's text, as a listing
/// under 16 MiB was until session 27, some 115 MB; holding each side's keys and the
/// pairing's sorted lists, until session 30, some 55 MB). A change, a file removed and
/// a file added are found.
#[test]
fn listings_naming_many_files_are_compared_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let line = |i: usize, layout: &str| format!("dir/file{i}.hlo: ENTRY main/x: f32[8]{layout}\n");
    let (mut old, mut new) = (String::new(), String::new());
    for i in 0..200_000 {
        old.push_str(&line(i, "{0}"));
        match i {
            5 => {}
            777 => new.push_str(&line(i, "{0:T(8)}")),
            _ => new.push_str(&line(i, "{0}")),
        }
    }
    new.push_str("dir/new.hlo: ENTRY main/y: s32[2]{0}\n");
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let out = limited_exit(48_000, &format!("diff {} {}", a.display(), b.display()), 1);
    let expected = format!(
        "file5.hlo: only in {}\n\
         file777.hlo: main/x: f32[8]{{0}} -> f32[8]{{0:T(8)}}: tiles added (allocated 32 -> 32 bytes)\n\
         new.hlo: only in {}\n",
        a.display(),
        b.display()
    );
    assert_eq!(String::from_utf8_lossy(&out), expected);
}

/// `diff` of two listings of 200,000 files each of which changed writes each pair's
/// report as it is compared, in a 100 MB address space: held until every pair was
/// compared, the reports took some 340 MB (the allocation failed, an abort), in text,
/// JSON, GitHub commands and SARIF alike.
#[test]
fn listings_whose_every_file_changed_are_reported_a_pair_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let line = |i: usize, layout: &str| format!("dir/file{i}.hlo: ENTRY main/x: f32[8]{layout}\n");
    let (mut old, mut new) = (String::new(), String::new());
    for i in 0..200_000 {
        old.push_str(&line(i, "{0}"));
        new.push_str(&line(i, "{0:T(8)}"));
    }
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, old).unwrap();
    std::fs::write(&b, new).unwrap();
    let changed = |i: usize| {
        format!("file{i}.hlo: main/x: f32[8]{{0}} -> f32[8]{{0:T(8)}}: tiles added (allocated 32 -> 32 bytes)")
    };
    for format in ["text", "github"] {
        let args = format!("diff --format {format} {} {}", a.display(), b.display());
        let out = String::from_utf8(limited_exit(100_000, &args, 1)).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 200_000, "{format}");
        // Sorted by key: file0, file1, file10, ... file99999.
        let (first, last) = (lines[0], lines[199_999]);
        match format {
            "text" => {
                assert_eq!(first, changed(0));
                assert_eq!(last, changed(99_999));
            }
            _ => {
                assert!(
                    first.starts_with("::warning file=dir/file0.hlo,"),
                    "{first}"
                );
                assert!(
                    last.starts_with("::warning file=dir/file99999.hlo,"),
                    "{last}"
                );
            }
        }
    }
}

/// Where no temporary file can be made (`TMPDIR` names no directory), `diff` keeps a
/// side's entries past the first 65,536 in memory and gives the same report: two
/// modules of 30,000 `add`s (90,000 shapes each), a change among the last shapes.
#[test]
fn diff_without_a_temporary_file_keeps_the_entries_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = module_and_changed_copy(dir.path(), 30_000, |text| {
        text.replace(
            "  a29990 = f32[8,128]{1,0:T(8,128)}",
            "  a29990 = f32[8,128]{0,1:T(8,128)}",
        )
    });
    let run = |tmp: &std::path::Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_xla-shape"))
            .env("TMPDIR", tmp)
            .args(["diff", "--format", "json"])
            .args([&old, &new])
            .output()
            .unwrap()
    };
    let with_file = run(dir.path());
    let without = run(&dir.path().join("no such directory"));
    assert_eq!(with_file.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&with_file.stdout).unwrap();
    assert_eq!(report["summary"]["changes"], 1, "{report}");
    assert_eq!(
        report["files"][0]["changes"][0]["instruction"], "a29990",
        "{report}"
    );
    assert_eq!(without.status.code(), Some(1));
    assert_eq!(without.stdout, with_file.stdout);
    assert_eq!(without.stderr, with_file.stderr);
}

/// Two directories of many modules are compared a pair of files at a time: each file
/// that lists as one listing of its own (told from its first buffer) is read when its
/// pair is compared, and dropped after. 32 modules of 10,000 instructions a side
/// (27 MB) are compared in a 100 MB address space (every file was read first, and held
/// compactly they need more; held as listings, forty such modules a side took 1 GB,
/// and take 18 MB now), the one change in its file.
#[test]
fn directories_of_many_modules_are_compared_a_pair_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    let module = module_of_many_instructions(10_000);
    for k in 0..32 {
        let name = format!("m{k:02}.hlo.txt");
        std::fs::write(old.join(&name), &module).unwrap();
        let text = if k == 17 {
            module.replace(
                "  a500 = f32[8,128]{1,0:T(8,128)}",
                "  a500 = f32[8,128]{0,1:T(8,128)}",
            )
        } else {
            module.clone()
        };
        std::fs::write(new.join(&name), text).unwrap();
    }
    let run = limited_to(
        100_000,
        &format!("diff {} {}", old.display(), new.display()),
    );
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "m17.hlo.txt: main/a500: f32[8,128]{1,0:T(8,128)} -> f32[8,128]{0,1:T(8,128)}: minor_to_major changed (allocated 4096 -> 65536 bytes)\n"
    );
    assert!(String::from_utf8_lossy(&run.stderr).contains("compared 32 files: 1 change"));
}

/// A long tuple on one line is listed a shape at a time (`Entry::of_long_tuple`): the
/// text is the whole tuple's printing, the shape reads back from it, and a tuple that
/// does not parse or print is left to the whole path.
#[test]
fn long_tuple_entries_agree_with_whole_ones() {
    use xla_shape::guard::listing::Entry;
    use xla_shape::text::module::Role;
    use xla_shape::text::HloStyle;
    let module = ParseOptions {
        fill_missing_layouts: false,
    };
    for input in [
        "(f32[2]{0}, (s32[], ()), ((bf16[4,4]{0,1:T(2,2)})), b(f32[3]{0}))",
        "((((f32[1]{0}))), f32[], (), ((), ()), (u8[2,2]{1,0}, (pred[])))",
        "(f32[2], s32[3,4])",
        "(f32[2]{0:T(2)S(1)}, token[], opaque[])",
    ] {
        for options in [module, ParseOptions::default()] {
            for style in [HloStyle::Xla, HloStyle::Exact] {
                let whole = text::parse_shape_with(input, options).unwrap();
                let expected = Entry::new(Role::Result, &whole, style.print_shape(&whole).unwrap());
                let long = Entry::of_long_tuple(Role::Result, input, options, style).expect(input);
                assert_eq!(long.text, expected.text, "{input}");
                assert_eq!(long.shape(), expected.shape(), "{input}");
                assert_eq!(long.bytes(), expected.bytes(), "{input}");
            }
        }
    }
    for input in [
        "(f32[2]{0}, f32[2]{5})",
        "(f32[2]{0}",
        "(f32[2]{0:Pd(4)})",
        "f32[2]{0}",
    ] {
        let long = Entry::of_long_tuple(Role::Result, input, module, HloStyle::Xla);
        assert!(long.is_none(), "{input}");
    }
}

/// Two long tuples that differ are compared an element at a time from their texts
/// (only the elements whose texts differ are read, a long nested tuple again an
/// element at a time): two 8 MB lines in a 200 MB address space, with the aspects of
/// the whole comparison (read whole, two 20 MB tuples took 1 GB to compare).
#[test]
fn long_tuples_that_differ_are_compared_an_element_at_a_time() {
    let element = "f32[8,128]{1,0:T(8,128)}";
    let inner: Vec<&str> = vec![element; 60_000];
    let mut old: Vec<String> = vec![element.to_string(); 250_000];
    old[3] = format!("({})", inner.join(", "));
    let mut new = old.clone();
    let mut changed = inner.clone();
    changed[7] = "f32[8,129]{1,0:T(8,128)}";
    new[3] = format!("({})", changed.join(", "));
    new[5] = "bf16[8,128]{1,0:T(8,128)}".to_string();
    new.push("s32[2]{0}".to_string());
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, elements: &[String]| {
        let path = dir.path().join(name);
        let tuple = text::parse_shape(&format!("({})", elements.join(", "))).unwrap();
        let line = text::print_shape_as_xla(&tuple).unwrap();
        std::fs::write(&path, format!("{line}\n")).unwrap();
        path
    };
    let (a, b) = (write("old.txt", &old), write("new.txt", &new));
    assert!(std::fs::metadata(&a).unwrap().len() > 7_000_000);
    let report = json_in_bounded_memory(
        &format!("diff --format json {} {}", a.display(), b.display()),
        1,
    );
    let changes = report["files"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let words: Vec<&str> = changes[0]["aspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["words"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        [
            "{3,7}: dimensions[8,128]->[8,129]",
            "{5}: element type f32 -> bf16",
            "{250000}: added s32[2]{0}",
        ]
    );
}

/// A long binary tuple whose shapes' texts do not read back as them (written as XLA
/// wrote layouts before 2023, with no tail padding alignment: the text reads back with
/// one) is listed a shape at a time and keeps its bytes, not the decoded tuple: a 7 MB
/// tuple is listed as text and as JSON (with its byte size) and compared with itself in
/// a 200 MB address space (decoded, printed, read back and held whole, it took 40
/// times its size).
#[test]
fn long_tuples_whose_texts_do_not_read_back_are_listed_in_bounded_memory() {
    use xla_shape::proto::{LayoutProto, PrimitiveType, ShapeProto};
    let array = ShapeProto {
        element_type: PrimitiveType::F32 as i32,
        dimensions: vec![8, 128],
        layout: Some(Box::new(LayoutProto {
            minor_to_major: vec![1, 0],
            ..Default::default()
        })),
        ..Default::default()
    };
    let tuple = |elements: Vec<ShapeProto>| ShapeProto {
        element_type: PrimitiveType::Tuple as i32,
        tuple_shapes: elements,
        ..Default::default()
    };
    let mut elements = vec![array.clone(); 500_000];
    elements[2] = tuple(vec![array.clone(); 3]);
    let shape = tuple(elements);
    let text = text::HloStyle::Xla.print_shape(&shape).unwrap();
    let bytes = xla_shape::codec::encode(&shape);
    assert!(bytes.len() > 7_000_000, "{}", bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tuple.pb");
    std::fs::write(&input, &bytes).unwrap();
    let said = |run: &std::process::Output| String::from_utf8_lossy(&run.stderr).into_owned();
    let listed = limited(&format!("shapes {}", input.display()));
    assert_eq!(listed.status.code(), Some(0), "{}", said(&listed));
    assert!(
        listed.stdout == format!("{}: {text}\n", input.display()).into_bytes(),
        "listed differently"
    );
    let json = limited(&format!("shapes --format json {}", input.display()));
    assert_eq!(json.status.code(), Some(0), "{}", said(&json));
    let line: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(line["bytes"], 500_002u64 * 8 * 128 * 4);
    let compared = limited(&format!("diff {} {}", input.display(), input.display()));
    assert_eq!(compared.status.code(), Some(0), "{}", said(&compared));

    // A policy checks such a tuple a shape at a time too (it was validated whole: 41
    // times its size), each finding with its array's own text, as for a long tuple
    // kept as its text; `diff` compares two that differ, or one with the same tuple in
    // text, an element at a time (both were read whole: 52 times).
    let big = ShapeProto {
        dimensions: vec![1024, 1024],
        ..array.clone()
    };
    let mut elements = vec![array.clone(); 500_000];
    elements[7] = big.clone();
    elements[2] = tuple(vec![array.clone(), big]);
    let mut changed = elements.clone();
    changed[250_000].dimensions = vec![8, 256];
    let changed = tuple(changed);
    std::fs::write(&input, xla_shape::codec::encode(&tuple(elements))).unwrap();
    let other = dir.path().join("changed.pb");
    std::fs::write(&other, xla_shape::codec::encode(&changed)).unwrap();
    let changed_text = dir.path().join("changed.txt");
    let text = text::HloStyle::Xla.print_shape(&changed).unwrap();
    std::fs::write(&changed_text, format!("{text}\n")).unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[all]\nmax_array_bytes = 1048575\n").unwrap();
    let report =
        report_in_bounded_memory(&format!("--policy {}", policy.display()), &input, Some(1));
    let findings: Vec<(String, String)> = report["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].to_string(), f["shape"].to_string()))
        .collect();
    let at = |path: &str| (format!("\"{path}\""), "\"f32[1024,1024]{1,0}\"".to_string());
    assert_eq!(
        findings,
        [at("tuple_shapes[2].tuple_shapes[1]"), at("tuple_shapes[7]")]
    );
    for other in [&other, &changed_text] {
        let report = json_in_bounded_memory(
            &format!("diff --format json {} {}", input.display(), other.display()),
            1,
        );
        let changes = report["files"][0]["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{}", other.display());
        assert_eq!(
            changes[0]["aspects"],
            serde_json::json!([{"kind": "dimensions", "words": "{250000}: dimensions[8,128]->[8,256]"}])
        );
    }
}

/// `shapes` and `diff` open nested tuples with unknown fields of their own (and
/// elements with some) a shape at a time too, leaving the fields out as the whole
/// message's listing does: a 7 MB binary tuple is listed and compared with itself in
/// a 200 MB address space, with the whole listing's text (it was decoded whole,
/// printed and read back: 42 times its size).
#[test]
fn tuples_with_unknown_fields_are_listed_a_shape_at_a_time() {
    use xla_shape::codec::{UnknownField, UnknownFields};
    let (inner, _) = tuple_with_two_broken_elements(150_000);
    let shape = xla_shape::proto::ShapeProto {
        element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
        tuple_shapes: vec![inner.clone(), inner],
        ..Default::default()
    };
    let mut unknown = UnknownFields::new();
    unknown.child_mut(4, 0).push(UnknownField::varint(40, 1));
    unknown
        .child_mut(4, 1)
        .child_mut(4, 7)
        .push(UnknownField::varint(41, 1));
    let text = text::HloStyle::Xla.print_shape(&shape).unwrap();
    let bytes = xla_shape::codec::encode_any(&xla_shape::codec::Decoded {
        message: xla_shape::AnyMessage::Shape(shape),
        unknown,
    });
    assert!(bytes.len() > 6_000_000, "{}", bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("tuple.pb");
    std::fs::write(&input, &bytes).unwrap();
    let listed = limited(&format!("shapes {}", input.display()));
    assert_eq!(
        listed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(
        listed.stdout == format!("{}: {text}\n", input.display()).into_bytes(),
        "listed differently"
    );
    let compared = limited(&format!("diff {} {}", input.display(), input.display()));
    assert_eq!(
        compared.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&compared.stderr)
    );
}

/// `shapes` and `diff` read a long tuple of module text, and a listing line of one,
/// a shape at a time: a 4 MB tuple line is listed (text and JSON, with its byte size),
/// compared with itself and with its listing in a 200 MB address space (the listing
/// built each whole: 903 MB for a 17 MB line, 53 times), and the lines are those of
/// the whole tuple.
#[test]
fn long_tuple_lines_are_listed_and_compared_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n = 250_000;
    let element = "f32[8,128]{1,0}";
    let mut elements = vec![element.to_string(); n];
    elements[5] = format!("({element}, (s32[], ()))");
    let tuple_text = format!("({})", elements.join(", "));
    let module = dir.path().join("long.hlo");
    std::fs::write(
        &module,
        format!("HloModule m\n\nENTRY main {{\n  p = f32[2]{{0}} parameter(0)\n  t = {tuple_text} tuple()\n  ROOT c = f32[2]{{0}} copy(p)\n}}\n"),
    )
    .unwrap();
    let lock = dir.path().join("long.lock");
    let run = limited(&format!(
        "shapes {} -o {}",
        module.display(),
        lock.display()
    ));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let listing = std::fs::read_to_string(&lock).unwrap();
    let tuple = listing
        .lines()
        .find_map(|line| line.split_once(": ENTRY main/t: ").map(|(_, shape)| shape))
        .expect("the tuple's line");
    let whole = text::parse_shape_with(
        &tuple_text,
        ParseOptions {
            fill_missing_layouts: false,
        },
    )
    .unwrap();
    let expected = text::print_shape_as_xla(&whole).unwrap();
    assert!(tuple == expected, "the tuple's text differs");
    let json = limited(&format!("shapes --format json {}", module.display()));
    assert_eq!(json.status.code(), Some(0));
    let line = String::from_utf8_lossy(&json.stdout)
        .lines()
        .find(|line| line.contains("\"instruction\":\"t\""))
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .expect("the tuple's JSON line");
    assert_eq!(line["bytes"], 4096 * n as u64 + 4);
    for (old, new) in [(&module, &module), (&lock, &module)] {
        let run = limited(&format!("diff {} {}", old.display(), new.display()));
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

/// A layout policy reads module text a shape at a time, and a long tuple line a shape
/// at a time too: a 4 MB tuple with three arrays that break the policy is checked in a
/// 200 MB address space (753 MB for a 17 MB line before, and 1.28 GB for a module of a
/// million instructions); each finding is at its array's path, with its array's text.
#[test]
fn policy_checks_long_tuples_a_shape_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = 250_000;
    let element = "f32[8,128]{1,0}";
    let mut elements = vec![element.to_string(); n];
    elements[3] = "(f32[], f64[])".into();
    elements[7] = "f64[2]{0}".into();
    elements[n - 1] = "f64[3]{0}".into();
    let module = dir.path().join("long.hlo");
    std::fs::write(
        &module,
        format!(
            "HloModule m\n\nENTRY main {{\n  p = f32[2]{{0}} parameter(0)\n  t = ({}) tuple()\n  ROOT c = f32[2]{{0}} copy(p)\n}}\n",
            elements.join(", ")
        ),
    )
    .unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[all]\ndeny_element_types = [\"f64\"]\n").unwrap();
    let report = json_in_bounded_memory(
        &format!(
            "validate --format json --policy {} {}",
            policy.display(),
            module.display()
        ),
        1,
    );
    let found: Vec<(String, String, String)> = report["files"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let text = |key: &str| f[key].as_str().unwrap_or_default().to_string();
            (text("code"), text("path"), text("shape"))
        })
        .collect();
    let denied = |path: &str, shape: &str| {
        (
            "policy.deny_element_types".to_string(),
            path.to_string(),
            shape.to_string(),
        )
    };
    assert_eq!(
        found,
        [
            denied("tuple_shapes[3].tuple_shapes[1]", "f64[]"),
            denied("tuple_shapes[7]", "f64[2]{0}"),
            denied(&format!("tuple_shapes[{}]", n - 1), "f64[3]{0}"),
        ]
    );
}

/// Field `number` (below 16) of a protobuf message, length-delimited, holding `body`.
fn field(number: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2];
    let mut len = body.len() as u64;
    while len >= 0x80 {
        out.push((len as u8) | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(body);
    out
}

/// The findings of a module proto's whole scan, and the JSON report of `validate` on it
/// in the 200 MB address space ([`limited`]), which exits 1 with as many findings;
/// with the directory and the file it was written to.
fn module_proto_validated(
    bytes: &[u8],
) -> (
    Vec<xla_shape::report::Finding>,
    serde_json::Value,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    use xla_shape::text::module;
    let mut whole = Vec::new();
    let mut check = module::validate_proto;
    module::scan_proto(bytes, &mut check, &mut |f| whole.push(f)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.hlo.pb");
    std::fs::write(&input, bytes).unwrap();
    let report = report_in_bounded_memory("", &input, Some(1));
    let found = report["files"][0]["findings"].as_array().unwrap();
    assert_eq!(found.len(), whole.len());
    (whole, report, dir, input)
}

/// Asserts that the findings of `report` (from [`module_proto_validated`], which checks
/// that there are as many) are the whole scan's, `whole`: the same codes, paths and
/// messages in order, each with `context`, a key of a finding and its value (the
/// instruction or the computation it belongs to).
fn assert_whole_findings(
    report: &serde_json::Value,
    whole: &[xla_shape::report::Finding],
    (key, value): (&str, &str),
) {
    let found = report["files"][0]["findings"].as_array().unwrap();
    for (got, want) in found.iter().zip(whole) {
        assert_eq!(got["path"], want.path.as_str());
        assert_eq!(got["code"], want.code);
        assert_eq!(got["message"], want.message.as_str());
        assert_eq!(got[key], value);
    }
}

/// A module proto whose one instruction has `shape` (`computations[0].instructions[0]`).
fn module_proto_with_shape(shape: &xla_shape::proto::ShapeProto) -> Vec<u8> {
    let mut instruction = field(1, b"t");
    instruction.extend(field(2, b"parameter"));
    instruction.extend(field(3, &xla_shape::codec::encode(shape)));
    let mut computation = field(1, b"main");
    computation.extend(field(2, &instruction));
    let mut module = field(1, b"m");
    module.extend(field(3, &computation));
    module
}

/// A module proto's shape of 1 MiB or more that is a plain tuple is validated a shape
/// at a time: a 9 MB tuple shape with three invalid shapes passes in a 200 MB address
/// space (decoded whole, about 30 times its size), with the findings of the whole
/// check, each with its own shape's text; `shapes` and `diff` list it a shape at a time,
/// the whole tuple's text.
#[test]
fn long_tuple_in_a_module_proto_is_read_a_shape_at_a_time() {
    use xla_shape::proto::{LayoutProto, ShapeProto};
    let array = |dims: Vec<i64>, m2m: Vec<i64>| ShapeProto {
        element_type: 11,
        is_dynamic_dimension: vec![false; dims.len()],
        dimensions: dims,
        layout: Some(Box::new(LayoutProto {
            minor_to_major: m2m,
            tail_padding_alignment_in_elements: 1,
            ..Default::default()
        })),
        ..Default::default()
    };
    let tuple = |elements| ShapeProto {
        element_type: 13,
        tuple_shapes: elements,
        ..Default::default()
    };
    let n = 400_000;
    let mut elements = vec![array(vec![8, 128], vec![1, 0]); n];
    elements[2] = array(vec![8, 128], vec![0, 0]);
    elements[9] = tuple(vec![array(vec![2], vec![0]), array(vec![3], vec![1])]);
    elements[n - 1] = array(vec![-3], vec![0]);
    let bytes = module_proto_with_shape(&tuple(elements));
    assert!(bytes.len() > 8_000_000, "{}", bytes.len());
    let (whole, report, _dir, input) = module_proto_validated(&bytes);
    assert_eq!(whole.len(), 3, "{whole:?}");
    assert_whole_findings(&report, &whole, ("instruction", "t"));
    let found = report["files"][0]["findings"].as_array().unwrap();
    let shapes: Vec<&str> = found.iter().map(|f| f["shape"].as_str().unwrap()).collect();
    assert_eq!(shapes, ["f32[8,128]{0,0}", "f32[3]{1}", "f32[-3]{0}"]);
    // Listed and compared a shape at a time too (a 22 MB tuple shape: 907 MB before).
    let mut elements = vec![array(vec![8, 128], vec![1, 0]); n];
    elements[9] = tuple(vec![array(vec![2], vec![0]), tuple(Vec::new())]);
    let shape = tuple(elements);
    std::fs::write(&input, module_proto_with_shape(&shape)).unwrap();
    let run = limited(&format!("shapes {}", input.display()));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let expected = format!(
        "{}: main/t: {}\n",
        input.display(),
        text::print_shape_as_xla(&shape).unwrap()
    );
    assert!(run.stdout == expected.as_bytes(), "the listing differs");
    let run = limited(&format!("diff {} {}", input.display(), input.display()));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A program shape whose result is a long plain tuple, and a single binary or JSON
/// shape that is one, are read a shape at a time everywhere, in a 200 MB address
/// space: `validate` gives the whole check's findings (the result's after every
/// parameter's), `convert` the whole conversion's bytes, `shapes` the whole listing.
/// Read whole they took 30 to 50 times their bytes (binary) and 7 to 8 times (JSON).
#[test]
fn long_results_and_single_long_tuples_are_read_a_shape_at_a_time() {
    use xla_shape::codec::{decode_program_shape, encode};
    use xla_shape::convert::{self, Form};
    use xla_shape::validate::validate_decoded;
    let element = "f32[8,128]{1,0}";
    let n = 300_000;
    let result = one_line_tuple(element, n).trim_end().replacen(
        element,
        &format!("({element}, (s32[], f32[2]{{0:E(4)}}))"),
        1,
    );
    let mut program = text::parse_program_shape(&format!(
        "(a: f32[2]{{0}}, b: f32[8,128]{{0,0}}) -> {result}"
    ))
    .unwrap();
    program.result.as_mut().unwrap().tuple_shapes[2]
        .layout
        .as_mut()
        .unwrap()
        .minor_to_major = vec![1];
    let bytes = encode(&program);
    assert!(bytes.len() > 6_000_000, "{}", bytes.len());
    let decoded = decode_program_shape(&bytes).unwrap();
    let expected: Vec<String> = validate_decoded(&decoded.clone().into(), Options::proto())
        .issues()
        .iter()
        .map(|i| i.path().to_string())
        .collect();
    assert_eq!(expected.len(), 3, "{expected:?}");
    assert!(expected[0].starts_with("parameters[1]."), "{expected:?}");
    assert!(expected[1].starts_with("result.tuple_shapes[0].tuple_shapes[1].tuple_shapes[1]."));
    assert!(
        expected[2].starts_with("result.tuple_shapes[2]."),
        "{expected:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let message = xla_shape::AnyMessage::ProgramShape(program);
    let json =
        xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new()).into_bytes();
    let options = convert::Options::default();
    let whole: xla_shape::codec::Decoded<xla_shape::AnyMessage> = decoded.into();
    for (from, input_bytes) in [("binary", &bytes), ("json", &json)] {
        let input = dir.path().join(format!("program.{from}"));
        std::fs::write(&input, input_bytes).unwrap();
        program_checked_in_bounded_memory(from, &input, &expected, 3);
        // Converted: into binary from JSON, into HLO text from binary (each a few
        // seconds in a debug build).
        let to = if from == "binary" {
            Form::Hlo
        } else {
            Form::Binary
        };
        let output = dir.path().join("out");
        let convert = limited(&format!(
            "convert --from {from} --message program-shape --to {} {} -o {}",
            if to == Form::Hlo { "hlo" } else { "binary" },
            input.display(),
            output.display()
        ));
        assert!(
            convert.status.success(),
            "{from}: {}",
            String::from_utf8_lossy(&convert.stderr)
        );
        let expected = convert::write(to, &whole, &options).unwrap();
        assert!(
            std::fs::read(&output).unwrap() == expected,
            "{from} to {to:?}"
        );
    }
    // A single long tuple shape, and a program shape with one as its result, listed
    // (valid ones: a shape whose text does not read back as it is listed whole).
    let program = text::parse_program_shape(&format!(
        "(a: f32[2]{{0}}, b: f32[8,128]{{1,0}}) -> {}",
        one_line_tuple(element, n).trim_end()
    ))
    .unwrap();
    let bytes = encode(&program);
    let tuple = program.result.clone().unwrap();
    let tuple_json = xla_shape::json::to_json(
        &xla_shape::AnyMessage::Shape(tuple.clone()),
        &xla_shape::json::PrintOptions::new(),
    );
    let style = text::HloStyle::Xla;
    let printed = style.print_shape(&tuple).unwrap();
    for (name, input_bytes, lines) in [
        ("tuple.pb", encode(&tuple), vec![printed.clone()]),
        ("tuple.json", tuple_json.into_bytes(), vec![printed.clone()]),
        (
            "program.pb",
            bytes.clone(),
            program
                .parameters
                .iter()
                .enumerate()
                .map(|(i, p)| format!("parameter {i}: {}", style.print_shape(p).unwrap()))
                .chain([format!("result: {printed}")])
                .collect(),
        ),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, &input_bytes).unwrap();
        let output = dir.path().join("listing");
        let message = if name.ends_with("json") {
            "--message shape"
        } else {
            ""
        };
        let shapes = limited(&format!(
            "shapes {message} {} -o {}",
            input.display(),
            output.display()
        ));
        assert!(
            shapes.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&shapes.stderr)
        );
        let listed = std::fs::read_to_string(&output).unwrap();
        let expected: String = lines
            .iter()
            .map(|line| format!("{}: {line}\n", input.display()))
            .collect();
        assert!(listed == expected, "{name}: listed differently");
    }
}

/// A module proto whose computation's program shape has a long plain tuple as its
/// result (as XLA writes a computation returning one) is read a part at a time: the
/// validation gives the whole scan's findings, `shapes` lists every shape, in a 200 MB
/// address space (the program shape decoded whole took about 40 times its size).
#[test]
fn long_program_shape_in_a_module_proto_is_read_a_part_at_a_time() {
    let element = "f32[8,128]{1,0}";
    let n = 300_000;
    let tuple_text = one_line_tuple(element, n);
    let tuple_text = tuple_text.trim_end();
    let mut tuple = text::parse_shape(tuple_text).unwrap();
    let mut program =
        text::parse_program_shape(&format!("(p: f32[2]{{0}}) -> {tuple_text}")).unwrap();
    // One invalid element (XLA's parser would refuse its text).
    for shape in [&mut tuple, program.result.as_mut().unwrap()] {
        shape.tuple_shapes[0]
            .layout
            .as_mut()
            .unwrap()
            .minor_to_major = vec![0, 0];
    }
    let mut instruction = field(1, b"t");
    instruction.extend(field(2, b"tuple"));
    instruction.extend(field(3, &xla_shape::codec::encode(&tuple)));
    let mut computation = field(1, b"main");
    computation.extend(field(2, &instruction));
    computation.extend(field(4, &xla_shape::codec::encode(&program)));
    let mut bytes = field(1, b"m");
    bytes.extend(field(3, &computation));
    assert!(bytes.len() > 12_000_000, "{}", bytes.len());
    let (whole, report, _dir, input) = module_proto_validated(&bytes);
    assert_eq!(whole.len(), 2, "{whole:?}");
    assert!(whole[1].path.contains("program_shape.result"), "{whole:?}");
    assert_whole_findings(&report, &whole, ("computation", "main"));
    assert_eq!(report["files"][0]["shapes"], 3);
    let run = limited(&format!("shapes {}", input.display()));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let listed = String::from_utf8(run.stdout).unwrap();
    let printed = text::print_shape_as_xla(&tuple).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines.len(),
        3,
        "{}",
        listed.chars().take(300).collect::<String>()
    );
    assert!(lines[0].ends_with(&format!(": {printed}")));
    assert!(lines[1].ends_with(": f32[2]{0}"), "{}", lines[1]);
    assert!(lines[2].ends_with(&format!(": {printed}")));
}

/// A report of hundreds of thousands of findings is written a finding at a time, in
/// every format: each input's findings past the first thousand wait in a temporary
/// file, and each input's report is written as soon as it is checked (every finding
/// was held until the end, about 400 bytes each as text and several KB as SARIF: 3
/// million bad shape lines took 1.1 GB for the text report, and the SARIF report was
/// killed at 24 GB). 300,000 bad lines, and a binary tuple of 600,000 empty elements
/// (1.2 MB, read an element at a time), are reported in a 100 MB address space, every
/// finding in its place.
#[test]
fn reports_of_many_findings_are_written_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let count = |out: &[u8], needle: &str| String::from_utf8_lossy(out).matches(needle).count();
    // SARIF, the slowest to write, with fewer lines (it took several KB a finding).
    for (format, n) in [
        ("text", 300_000),
        ("json", 300_000),
        ("github", 300_000),
        ("sarif", 100_000),
    ] {
        let lines = dir.path().join(format!("bad{n}.txt"));
        if !lines.exists() {
            std::fs::write(&lines, "f32[2]{1}\n".repeat(n)).unwrap();
        }
        let run = limited_to(
            100_000,
            &format!("validate --from hlo --format {format} {}", lines.display()),
        );
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{format}: {stderr}");
        assert!(
            stderr.contains(&format!("{},000 errors", n / 1000)),
            "{format}: {stderr}"
        );
        let found = match format {
            "text" => count(&run.stdout, "error["),
            "json" => count(&run.stdout, "\"code\":"),
            "github" => count(&run.stdout, "::error "),
            _ => count(&run.stdout, "\"ruleId\":"),
        };
        assert_eq!(found, n, "{format}");
        let last_line = match format {
            "text" => format!("bad{n}.txt:{n}:"),
            "github" => format!("line={n},"),
            _ => format!("\"startLine\": {n}"),
        };
        if format == "json" {
            let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            let findings = report["files"][0]["findings"].as_array().unwrap();
            assert_eq!(findings.len(), n);
            assert_eq!(findings[n - 1]["line"], n);
            assert_eq!(report["summary"]["errors"], n);
        } else {
            assert_eq!(count(&run.stdout, &last_line), 1, "{format}: {last_line}");
        }
    }
    // A tuple of empty elements: two bytes each, each a finding (no element type).
    let elements = 600_000;
    let mut tuple = vec![0x10, 13];
    for _ in 0..elements {
        tuple.extend([0x22, 0x00]);
    }
    let input = dir.path().join("empties.binpb");
    std::fs::write(&input, &tuple).unwrap();
    let run = limited_to(100_000, &format!("validate {}", input.display()));
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(count(&run.stdout, "error["), elements);
    assert!(
        count(&run.stdout, &format!("tuple_shapes[{}].", elements - 1)) == 1,
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// A policy on standard input reads the input whole (it cannot be read twice), then
/// checks and lists it as it is read: a module of 200,000 instructions (17 MB) with
/// 600,001 violations is checked in a 200 MB address space (its listing was gathered
/// whole for the policy: 18 times the input).
#[test]
fn a_policy_on_standard_input_checks_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("many.hlo");
    std::fs::write(&module, module_of_many_instructions(200_000)).unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[all]\ndeny_element_types = [\"f32\"]\n").unwrap();
    let run = limited(&format!(
        "validate --policy {} - < {}",
        policy.display(),
        module.display()
    ));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    // The entry layout's two shapes, the parameter, three an `add`, the root.
    assert!(stderr.contains("600,004 errors"), "{stderr}");
    let report = String::from_utf8(run.stdout).unwrap();
    assert_eq!(report.lines().count(), 600_004);
    assert!(report
        .lines()
        .all(|l| l.starts_with("<stdin>:") && l.contains("error[policy.deny_element_types]")));
    assert!(report
        .lines()
        .last()
        .unwrap()
        .contains("(instruction r, computation main)"));
}

/// Unknown fields for [`program_with_three_findings`]: at its top level, in parameter 3
/// and in a shape inside parameter 7's tuple.
fn unknown_fields_of_a_program() -> xla_shape::codec::UnknownFields {
    use xla_shape::codec::{UnknownField, UnknownFields};
    let mut unknown = UnknownFields::new();
    unknown.push(UnknownField::varint(99, 1));
    unknown.child_mut(1, 3).push(UnknownField::varint(40, 1));
    unknown
        .child_mut(1, 7)
        .child_mut(4, 1)
        .child_mut(4, 0)
        .push(UnknownField::fixed32(41, 7));
    unknown
}

/// With `--message program-shape`, a binary program shape with unknown fields (at its
/// top level, in a parameter, in a shape inside a parameter's tuple and in a shape of
/// its result) is checked a parameter at a time too, with the whole check's findings
/// in its order: its issues, then its unknown fields, the top level's first, then the
/// parameters', then the result's: 400,000 parameters (18 MB) in a 200 MB address
/// space (it was decoded whole: 40 times its bytes).
#[test]
fn program_shape_with_unknown_fields_is_checked_a_parameter_at_a_time() {
    use xla_shape::codec::UnknownField;
    let program = program_with_three_findings(400_000);
    let mut unknown = unknown_fields_of_a_program();
    unknown
        .child_mut(2, 0)
        .child_mut(4, 0)
        .push(UnknownField::varint(42, 1));
    let (bytes, expected) =
        encoded_with_whole_paths(xla_shape::AnyMessage::ProgramShape(program), unknown);
    assert_eq!(expected.len(), 7, "{expected:?}");
    assert_eq!(expected[3], "#99", "{expected:?}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.pb");
    std::fs::write(&input, &bytes).unwrap();
    assert_eq!(
        findings_in_bounded_memory("--message program-shape", &input, Some(1)),
        expected
    );
}

/// The top-level fields of a serialized message, each as its bytes (tag and value).
fn top_level_fields(bytes: &[u8]) -> Vec<&[u8]> {
    fn varint(bytes: &[u8], pos: &mut usize) -> u64 {
        let (mut value, mut shift) = (0, 0);
        loop {
            let byte = bytes[*pos];
            *pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return value;
            }
            shift += 7;
        }
    }
    let (mut fields, mut pos) = (Vec::new(), 0);
    while pos < bytes.len() {
        let start = pos;
        let tag = varint(bytes, &mut pos);
        match tag & 7 {
            0 => drop(varint(bytes, &mut pos)),
            1 => pos += 8,
            2 => pos += varint(bytes, &mut pos) as usize,
            5 => pos += 4,
            wire => panic!("wire type {wire}"),
        }
        fields.push(&bytes[start..pos]);
    }
    fields
}

/// A module proto's program shape of 1 MiB or more with unknown fields (at its top
/// level, in a parameter, in a shape inside a parameter's tuple and in its result),
/// whose result is given twice (protobuf merges the two), is read a part at a time:
/// `validate` gives the whole scan's findings in its order, and `shapes` lists each
/// part as the whole decode reads it, in a 200 MB address space (it was decoded whole:
/// 40 times its 11 MB).
#[test]
fn module_proto_program_shape_with_unknown_fields_is_read_a_part_at_a_time() {
    use xla_shape::codec::UnknownField;
    // Its result a tuple (read a shape at a time), or an invalid array (read whole).
    for array_result in [false, true] {
        let mut program = program_with_three_findings(300_000);
        let mut unknown = unknown_fields_of_a_program();
        if array_result {
            program.result = Some(text::parse_shape("s32[2]{0}").unwrap());
            let layout = program.result.as_mut().unwrap().layout.as_mut().unwrap();
            layout.minor_to_major = vec![1];
            unknown.child_mut(2, 0).push(UnknownField::varint(42, 1));
        } else {
            unknown
                .child_mut(2, 0)
                .child_mut(4, 0)
                .push(UnknownField::varint(42, 1));
        }
        module_proto_program_shape_read_a_part_at_a_time(program, unknown);
    }
}

/// The module proto of [`module_proto_program_shape_with_unknown_fields_is_read_a_part_at_a_time`]
/// for `program` with `unknown` fields, its result given twice, checked and listed.
fn module_proto_program_shape_read_a_part_at_a_time(
    program: xla_shape::proto::ProgramShapeProto,
    unknown: xla_shape::codec::UnknownFields,
) {
    let message = xla_shape::AnyMessage::ProgramShape(program);
    let once = xla_shape::codec::encode_any(&xla_shape::codec::Decoded { message, unknown });
    // The result given twice: its fields cut in two, each half a result of its own.
    let mut twice = Vec::new();
    for f in top_level_fields(&once) {
        if f[0] != 0x12 {
            twice.extend_from_slice(f);
            continue;
        }
        // The tag, one byte; the length, a varint; the value.
        let length = f[1..].iter().position(|b| b & 0x80 == 0).unwrap() + 1;
        let result = top_level_fields(&f[1 + length..]);
        assert!(result.len() > 2, "{result:?}");
        twice.extend(field(2, &result[..2].concat()));
        twice.extend(field(2, &result[2..].concat()));
    }
    let whole = xla_shape::codec::decode_program_shape(&twice).unwrap();
    assert_eq!(whole.unknown_fields().len(), 4);
    let mut instruction = field(1, b"p");
    instruction.extend(field(2, b"parameter"));
    instruction.extend(field(
        3,
        &xla_shape::codec::encode(&whole.message.parameters[0]),
    ));
    let module = |program: &[u8]| {
        let mut computation = field(1, b"main");
        computation.extend(field(2, &instruction));
        computation.extend(field(4, program));
        let mut bytes = field(1, b"m");
        bytes.extend(field(3, &computation));
        bytes
    };
    let bytes = module(&twice);
    assert!(bytes.len() > 11_000_000, "{}", bytes.len());
    // With a field of no wire type at its end, it is the whole decode's error.
    let broken = [twice.as_slice(), &[0x0f, 0x00]].concat();
    let (expected, report, _dir, _) = module_proto_validated(&module(&broken));
    assert_eq!(expected.len(), 1, "{expected:?}");
    assert!(expected[0]
        .message
        .starts_with("cannot decode the program shape"));
    let found = &report["files"][0]["findings"][0];
    assert_eq!(found["message"], expected[0].message.as_str());
    let (expected, report, _dir, input) = module_proto_validated(&bytes);
    // Three issues, then the four unknown fields.
    assert_eq!(expected.len(), 7, "{expected:?}");
    assert!(
        expected[6].path.contains("program_shape.result"),
        "{expected:?}"
    );
    assert_whole_findings(&report, &expected, ("computation", "main"));
    assert_eq!(report["files"][0]["shapes"], 300_002);
    let listed = limited_exit(200_000, &format!("shapes {}", input.display()), 0);
    let listed = String::from_utf8(listed).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    // The instruction's shape, then the program shape's.
    let parts = whole.message.parameters.iter().chain(&whole.message.result);
    assert_eq!(lines.len(), 300_002);
    for (line, part) in lines[1..].iter().zip(parts) {
        let printed = text::print_shape_as_xla(part).unwrap();
        assert!(line.ends_with(&format!(": {printed}")), "{line}");
    }
}

/// `diff` of two files of shape lines compares them shape by shape as they are read
/// (each was held whole first: two files of two million lines, 54 MB each, took 132
/// MB): two files of a million lines (27 MB each) in a 50 MB address space, with the
/// changes at their places, a few or every line's; and on shorter files with changes
/// throughout, the report is the whole comparison's (made in this process from both
/// files' listings).
#[test]
fn shape_lines_are_diffed_as_they_are_read() {
    use xla_shape::guard::{diff, listing, ReadOptions};
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old.txt"), dir.path().join("new.txt"));
    let lines = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("f32[{},128]{{1,0:T(8,128)}}", i % 1000 + 1))
            .collect()
    };
    let mut shapes = lines(1_000_000);
    std::fs::write(&old, shapes.join("\n") + "\n").unwrap();
    shapes[500_000] = "f32[8,128]{0,1}".to_string();
    shapes.extend(["s32[]".to_string(), "pred[2]{0}".to_string()]);
    std::fs::write(&new, shapes.join("\n") + "\n").unwrap();
    let args = format!("diff --format json {} {}", old.display(), new.display());
    let report: serde_json::Value =
        serde_json::from_slice(&limited_exit(50_000, &args, 1)).unwrap();
    let changes = report["files"][0]["changes"].as_array().unwrap();
    let found: Vec<_> = changes
        .iter()
        .map(|c| (c["place"].as_str(), c["what"].as_str(), c["new"].as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                Some("shape 500001"),
                Some("changed"),
                Some("f32[8,128]{0,1}")
            ),
            (Some("shape 1000001"), Some("added"), Some("s32[]")),
            (Some("shape 1000002"), Some("added"), Some("pred[2]{0}")),
        ]
    );
    // Every line of 300,000 changed: the report written a change at a time, the
    // changes past the first thousand kept in a temporary file (held, a million took
    // 615 MB).
    let unchanged = lines(300_000);
    let changed: Vec<String> = (unchanged.iter())
        .map(|s| s.replace("{1,0:", "{0,1:"))
        .collect();
    for (path, lines) in [(&old, &unchanged), (&new, &changed)] {
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }
    let out = dir.path().join("changes.txt");
    let args = format!(
        "diff {} {} -o {}",
        old.display(),
        new.display(),
        out.display()
    );
    limited_exit(50_000, &args, 1);
    let report = std::fs::read_to_string(&out).unwrap();
    assert_eq!(report.lines().count(), 300_000);
    let last = report.lines().last().unwrap();
    let want = ": shape 300000: f32[1000,128]{1,0:T(8,128)} -> f32[1000,128]{0,1:T(8,128)}";
    assert!(last.contains(want), "{last}");
    // Shorter files, a change every seventh line, a line added and one removed, a
    // tuple: the whole comparison's report.
    let mut old_lines = lines(3000);
    old_lines.insert(1500, "(f32[2]{0}, s32[])".to_string());
    let mut new_lines = old_lines.clone();
    for i in (0..new_lines.len()).step_by(7) {
        new_lines[i] = format!("bf16[{},128]{{0,1}}", i % 5 + 1);
    }
    new_lines.remove(100);
    new_lines.insert(2000, "token[]".to_string());
    for (path, lines) in [(&old, &old_lines), (&new, &new_lines)] {
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }
    let read = ReadOptions::default();
    let listed = |path: &std::path::Path| {
        let name = path.display().to_string();
        listing::read_path(path, &name, &read).unwrap().remove(0)
    };
    let whole = diff::diff_listings(&listed(&old), &listed(&new), &diff::Options::default());
    assert!(whole.changes.len() > 400, "{}", whole.changes.len());
    let args = format!("diff --format json {} {}", old.display(), new.display());
    let report: serde_json::Value =
        serde_json::from_slice(&limited_exit(200_000, &args, 1)).unwrap();
    assert_eq!(
        report["files"][0]["changes"],
        serde_json::to_value(&whole.changes).unwrap()
    );
}

/// `explain` of a one-line tuple describes a shape at a time: a description is some
/// fifty times its text (a 17 MB tuple took 3 GB), here in a 60 MB address space, with
/// the bytes of the whole description (made in this process) in every format.
#[test]
fn long_tuples_are_explained_a_shape_at_a_time() {
    use xla_shape::describe::describe;
    let dir = tempfile::tempdir().unwrap();
    let tiled = one_line_tuple("f32[8,128]{1,0:T(8,128)}", 30_000);
    let padded = one_line_tuple("f32[4]{0:PD(8)}", 25_000);
    let line = format!(
        "({}, s32[], ((token[], f32[2]{{0}}), ()), {})",
        tiled.trim_end(),
        padded.trim_end()
    );
    assert!(line.len() > xla_shape::describe::STREAMED, "{}", line.len());
    let input = dir.path().join("tuple.txt");
    std::fs::write(&input, &line).unwrap();
    let shape: xla_shape::Shape = line.parse().unwrap();
    let out = dir.path().join("explained");
    for (args, style) in [
        ("", text::HloStyle::Xla),
        ("--format json", text::HloStyle::Xla),
        (
            "--format json --pretty --hlo-style exact",
            text::HloStyle::Exact,
        ),
    ] {
        let description = describe(&shape, style);
        let expected = match args {
            "" => description.to_string(),
            "--format json" => serde_json::to_string(&description).unwrap() + "\n",
            _ => serde_json::to_string_pretty(&description).unwrap() + "\n",
        };
        let run = limited_to(
            60_000,
            &format!("explain {args} {} -o {}", input.display(), out.display()),
        );
        assert_eq!(
            run.status.code(),
            Some(0),
            "{args}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(
            std::fs::read(&out).unwrap() == expected.as_bytes(),
            "{args}"
        );
    }
    // An invalid element (nested past the validator's depth): its error, at its path,
    // and nothing written.
    let deep = format!("{}f32[2]{}", "(".repeat(300), ")".repeat(300));
    let broken = format!("({}, {deep})", tiled.trim_end());
    std::fs::write(&input, &broken).unwrap();
    std::fs::remove_file(&out).unwrap();
    let run = limited_to(
        60_000,
        &format!("explain {} -o {}", input.display(), out.display()),
    );
    assert_eq!(run.status.code(), Some(1));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(said.contains("tuple_shapes[1].tuple_shapes[0]"), "{said}");
    assert!(said.contains("nested more than 256 levels deep"), "{said}");
    assert!(!out.exists());
}

/// `index -` answers any number of lines from standard input in the memory of one: a
/// million lines (5.5 MB) in a 60 MB address space (they were read whole and every
/// answer held: 670 MB for 3 million), as text and as JSON; a bad index on the last
/// line is an error that writes nothing.
#[test]
fn index_lines_from_standard_input_are_answered_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let shape = "f32[8,128]{1,0:T(8,128)}";
    let mut lines = String::new();
    let n = 1_000_000;
    for i in 0..n {
        lines.push_str(&format!("{},{}\n", i % 8, i % 128));
    }
    let input = dir.path().join("indices.txt");
    let out = dir.path().join("answers");
    let run = |format: &str, stdin: &[u8]| {
        std::fs::write(&input, stdin).unwrap();
        limited_command(&format!(
            "ulimit -v 60000 && exec \"$0\" index {format} '{shape}' - -o {} < {}",
            out.display(),
            input.display()
        ))
        .status()
        .unwrap()
        .code()
    };
    assert_eq!(run("", lines.as_bytes()), Some(0));
    let answers = std::fs::read_to_string(&out).unwrap();
    assert_eq!(answers.lines().count(), n);
    // The last line's index lies in the one tile, row-major.
    let last = n - 1;
    let linear = (last % 8) * 128 + last % 128;
    assert_eq!(answers.lines().last(), Some(linear.to_string().as_str()));
    assert_eq!(run("--format json", lines.as_bytes()), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(report["results"].as_array().unwrap().len(), n);
    std::fs::remove_file(&out).unwrap();
    lines.push_str("8,0\n");
    assert_eq!(run("", lines.as_bytes()), Some(2));
    assert!(!out.exists());
}

/// An index line of ten million coordinates (20 MB) is refused for its rank without
/// keeping them (eight bytes each: 80 MB more), in a 60 MB address space; a part that
/// is not a number is still the error, wherever it stands.
#[test]
fn an_index_line_of_millions_of_coordinates_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("coordinates.txt");
    let run = |line: &str| {
        std::fs::write(&input, line).unwrap();
        limited_command(&format!(
            "ulimit -v 60000 && exec \"$0\" index 'f32[2,3]' - < {}",
            input.display()
        ))
        .output()
        .unwrap()
    };
    let n = 10_000_000;
    let mut line = "1,".repeat(n - 1);
    line.push_str("1\n");
    let refused = run(&line);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        format!("xla-shape: <stdin>:1: index has {n} coordinates, but the shape has 2 dimensions")
    );
    line.replace_range(line.len() - 2.., "x\n");
    let refused = run(&line);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "xla-shape: <stdin>:1: 'x' is not a non-negative integer"
    );
    // A part that is no number is cut in the message when long (the whole line of 20 MB
    // was the message), under --linear too.
    let refused = run(&"x".repeat(20_000_000));
    assert_eq!(refused.status.code(), Some(2));
    let cut = format!("'{}'... (20000000 bytes in all)", "x".repeat(64));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        format!("xla-shape: <stdin>:1: {cut} is not a non-negative integer")
    );
    let linear = limited_command(&format!(
        "ulimit -v 60000 && exec \"$0\" index 'f32[2,3]' --linear - < {}",
        input.display()
    ))
    .output()
    .unwrap();
    assert_eq!(linear.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&linear.stderr).trim(),
        format!("xla-shape: <stdin>:1: {cut} is not a non-negative integer")
    );
}

/// A directory tree is walked as its files are asked for (`Walk::stream`, which
/// `validate` and `shapes` use), holding the listings of the directories open on the
/// way down, not every path (some 270 bytes a file, kept until the walk ended: 60 MB
/// for 200,000 files, 6 MB now for 200,000 in 400 directories): a file made in a later
/// directory after the first file is found is found too, where the whole walk had
/// listed it already. The files and their order are the whole walk's.
#[test]
fn directory_trees_are_walked_as_their_files_are_asked_for() {
    use xla_shape::check::Walk;
    let dir = tempfile::tempdir().unwrap();
    for d in ["a", "b", "b/c", "d", "e"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    for f in [
        "a/1.hlo.txt",
        "a/2.pb",
        "a/skip.md",
        "b/c/3.txt",
        "b/4.json",
        "top.hlo",
    ] {
        std::fs::write(dir.path().join(f), "f32[8]{0}\n").unwrap();
    }
    let walk = Walk::new(&[], &[]).unwrap();
    let whole = walk.files(dir.path()).unwrap();
    let streamed: Vec<_> = walk.stream(dir.path()).map(Result::unwrap).collect();
    assert_eq!(streamed, whole);
    assert_eq!(whole.len(), 5);
    assert!(whole.windows(2).all(|w| w[0] < w[1]));

    let mut walking = walk.stream(dir.path());
    assert_eq!(
        walking.next().unwrap().unwrap(),
        dir.path().join("a/1.hlo.txt")
    );
    std::fs::write(dir.path().join("d/late.hlo.txt"), "f32[8]{0}\n").unwrap();
    let rest: Vec<_> = walking.map(Result::unwrap).collect();
    assert!(
        rest.contains(&dir.path().join("d/late.hlo.txt")),
        "{rest:?}"
    );
    assert!(!whole.contains(&dir.path().join("d/late.hlo.txt")));

    // A walk of a path that cannot be listed says so once, with the path.
    let gone = dir.path().join("gone");
    let mut failed = walk.stream(&gone);
    let (path, _) = failed.next().unwrap().unwrap_err();
    assert_eq!(path, gone);
    assert!(failed.next().is_none());
}

/// `shapes` of a listing file read back hands each file's entries on without
/// gathering them (some 400 bytes an entry: 119 MB for 300,000 lines): 300,000 lines
/// (13 MB) in a 60 MB address space, written back as they were.
#[test]
fn listings_read_back_are_listed_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut listing = String::new();
    for i in 0..300_000 {
        listing.push_str(&format!("m.hlo: ENTRY main/a{i}: f32[8,128]{{1,0}}\n"));
    }
    let input = dir.path().join("listing.txt");
    std::fs::write(&input, &listing).unwrap();
    let run = limited_to(
        60_000,
        &format!("shapes --from listing {}", input.display()),
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.stdout == listing.as_bytes(), "listed differently");
}

/// A listing of JSON lines, and a listing from a pipe, that goes past its first MiB is
/// read a line at a time from a copy of its text in a temporary file, as a listing
/// file is: 200,000 files of a line (41 MB of JSON lines, 8 MB of text), from a file
/// and from a pipe, in a 50 MB address space, written back as the text listing. Held
/// whole, the JSON lines took 68 MB (the allocation failed under 80 MB, an abort).
#[test]
fn listings_of_json_lines_and_from_pipes_are_listed_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (mut text, mut json) = (String::new(), String::new());
    for i in 0..200_000 {
        text.push_str(&format!("dir/f{i}.hlo: ENTRY main/x: f32[8]{{0}}\n"));
        json.push_str(&format!(
            "{{\"file\":\"dir/f{i}.hlo\",\"location\":\"ENTRY main/x\",\"computation\":\"main\",\
             \"entry\":true,\"instruction\":\"x\",\"role\":\"result\",\"index\":null,\
             \"name\":null,\"shape\":\"f32[8]{{0}}\",\"bytes\":32,\"line\":1,\"path\":null}}\n"
        ));
    }
    let (t, j) = (dir.path().join("l.txt"), dir.path().join("l.jsonl"));
    std::fs::write(&t, &text).unwrap();
    std::fs::write(&j, &json).unwrap();
    let (t, j) = (t.display(), j.display());
    for script in [
        format!("\"$0\" shapes {j}"),
        format!("cat {j} | \"$0\" shapes -"),
        format!("cat {t} | \"$0\" shapes -"),
    ] {
        let run = limited_command(&format!("ulimit -v 50000 && {script}"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(0), "{script}: {said}");
        assert!(
            run.stdout == text.as_bytes(),
            "{script}: listed differently"
        );
    }
}

/// A run that fits in an address-space limit fits in a larger one: each thread takes a
/// malloc arena of 64 MB of address space from its first allocation, and the threads
/// used to be given room the work then lacked. `explain` of a rank of 340,000 ran in
/// 100 MB and aborted in 150 MB (the Ctrl-C handler's thread, started for every run,
/// took its arena), `shapes` of it aborted in 170 MB (the pool's threads) and `diff`
/// from 170 MB to 250 MB (its reading threads). Run with glibc's default arenas, as
/// users run it.
#[test]
fn more_address_space_never_fails_a_run_that_fits_in_less() {
    let dir = tempfile::tempdir().unwrap();
    let rank = 340_000;
    let dims = vec!["1"; rank].join(",");
    let order = |m2m: Vec<String>| format!("f32[{dims}]{{{}}}\n", m2m.join(","));
    let major = dir.path().join("major.txt");
    std::fs::write(
        &major,
        order((0..rank).rev().map(|d| d.to_string()).collect()),
    )
    .unwrap();
    let minor = dir.path().join("minor.txt");
    std::fs::write(&minor, order((0..rank).map(|d| d.to_string()).collect())).unwrap();
    let (a, b) = (major.display(), minor.display());
    for (args, status) in [
        (format!("explain {a}"), 0),
        (format!("shapes {a}"), 0),
        (format!("diff {a} {b}"), 1),
    ] {
        for limit in [150_000, 170_000, 200_000, 250_000] {
            let run = std::process::Command::new("sh")
                .env("RAYON_NUM_THREADS", "2")
                .arg("-c")
                .arg(format!(
                    "ulimit -v {limit} && exec \"$0\" {args} > /dev/null"
                ))
                .arg(env!("CARGO_BIN_EXE_xla-shape"))
                .output()
                .unwrap();
            assert_eq!(
                run.status.code(),
                Some(status),
                "{args} in {limit} KB: {}",
                String::from_utf8_lossy(&run.stderr)
            );
        }
    }
}

/// Rayon's threads fit an address-space limit whatever the number of cores: asked for
/// 512 threads in a 100 MB address space (each reserves a 2 MB stack), `validate`,
/// `shapes`, `diff` and `relayout` run on fewer (rayon alone panicked, exit 101, or
/// left the work no room, exit 134).
#[test]
fn thread_pool_fits_an_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("bad.txt");
    std::fs::write(&lines, "f32[2]{1}\n".repeat(1000)).unwrap();
    let data = dir.path().join("data.bin");
    std::fs::write(&data, vec![0u8; 4 << 20]).unwrap();
    let (l, d) = (lines.display(), data.display());
    for (args, status) in [
        (format!("validate --from hlo {l}"), 1),
        (format!("validate --from hlo {l} {l} {l}"), 1),
        (format!("shapes --from hlo {d}"), 2),
        (format!("diff {l} {l}"), 0),
        (
            format!("relayout --shape 'f32[1024,1024]{{1,0}}' --to '{{0,1}}' {d}"),
            0,
        ),
    ] {
        let run = limited_command(&format!("ulimit -v 100000 && exec \"$0\" {args}"))
            .env("RAYON_NUM_THREADS", "512")
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(status),
            "{args}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

/// A JSON tuple whose nested tuples have fields of their own (dimensions given before
/// their elements, a layout and dynamic flags after) is checked a shape at a time too:
/// a 38 MB tuple in a 200 MB address space, with the whole message's findings in
/// order (its nested tuples were read whole: 5.5 times its size).
#[test]
fn json_tuples_with_fields_of_their_own_are_checked_a_shape_at_a_time() {
    let (mut nested, _) = nested_tuple_with_five_findings(100_000);
    nested.tuple_shapes[1].dimensions = vec![3];
    nested.tuple_shapes[1].tuple_shapes[0].layout = Some(Box::new(xla_shape::proto::LayoutProto {
        minor_to_major: vec![0],
        ..Default::default()
    }));
    nested.tuple_shapes[1].tuple_shapes[1].is_dynamic_dimension = vec![true];
    let expected = issue_paths(&nested);
    assert!(expected.len() > 5, "{expected:?}");
    let message = xla_shape::AnyMessage::Shape(nested);
    let json = xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new());
    assert!(json.len() > 35_000_000, "{}", json.len());
    let dir = tempfile::tempdir().unwrap();
    let input = validated_in_bounded_memory(dir.path(), "own.json", json.as_bytes(), &expected);
    // Converted a shape at a time into every form, with the whole conversion's bytes
    // or refusal (the nested tuples were read whole: 4.7 times the JSON into JSON).
    let decoded = xla_shape::codec::Decoded {
        message,
        unknown: xla_shape::codec::UnknownFields::new(),
    };
    let options = xla_shape::convert::Options::default();
    for (to, form) in [
        ("json", xla_shape::convert::Form::Json),
        ("binary", xla_shape::convert::Form::Binary),
        ("hlo", xla_shape::convert::Form::Hlo),
    ] {
        let whole = xla_shape::convert::write(form, &decoded, &options);
        let run = limited(&format!(
            "convert --from json --to {to} {}",
            input.display()
        ));
        match whole {
            Ok(bytes) => {
                assert_eq!(run.status.code(), Some(0), "{to}");
                assert!(run.stdout == bytes, "{to}: converted differently");
            }
            Err(e) => {
                assert_eq!(run.status.code(), Some(2), "{to}");
                assert!(
                    String::from_utf8_lossy(&run.stderr).contains(&e.to_string()),
                    "{to}"
                );
            }
        }
    }
    // Listed and compared with itself in the same space (read whole: 9 and 19 times
    // the JSON); the listing's entry keeps the binary encoding, its text not reading
    // back.
    let i = input.display();
    for args in [
        format!("shapes {i}"),
        format!("shapes --format json {i}"),
        format!("diff {i} {i}"),
    ] {
        let run = limited(&args);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{args}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

/// A binary program shape whose parts are tuples with fields of their own (and unknown
/// fields, in them and in their nested tuples) is checked a shape at a time with
/// `--message program-shape`: an 8.7 MB parameter and result, decoded whole at 35 times
/// their size before, in a 200 MB address space, with the whole check's findings in
/// its order.
#[test]
fn program_shape_parts_with_fields_of_their_own_are_checked_a_shape_at_a_time() {
    use xla_shape::codec::{
        decode_program_shape, encode_any, Decoded, UnknownField, UnknownFields,
    };
    use xla_shape::validate::validate_decoded;
    let (mut parameter, _) = tuple_with_two_broken_elements(150_000);
    parameter.dimensions = vec![3];
    let (mut result, _) = tuple_with_two_broken_elements(150_000);
    result.tuple_shapes[5] = xla_shape::proto::ShapeProto {
        element_type: xla_shape::proto::PrimitiveType::Tuple as i32,
        tuple_shapes: vec![text::parse_shape("f32[2]{0}").unwrap()],
        is_dynamic_dimension: vec![true],
        ..Default::default()
    };
    let program = xla_shape::proto::ProgramShapeProto {
        parameters: vec![text::parse_shape("s32[]").unwrap(), parameter],
        result: Some(result),
        parameter_names: vec!["a".to_string(), "b".to_string()],
    };
    let mut unknown = UnknownFields::new();
    unknown.child_mut(1, 1).push(UnknownField::varint(40, 1));
    unknown
        .child_mut(1, 1)
        .child_mut(4, 9)
        .push(UnknownField::varint(41, 1));
    unknown.child_mut(2, 0).push(UnknownField::varint(42, 1));
    unknown
        .child_mut(2, 0)
        .child_mut(4, 5)
        .push(UnknownField::varint(43, 1));
    let bytes = encode_any(&Decoded {
        message: xla_shape::AnyMessage::ProgramShape(program),
        unknown,
    });
    assert!(bytes.len() > 8_000_000, "{}", bytes.len());
    let decoded = decode_program_shape(&bytes).unwrap();
    let expected: Vec<String> = validate_decoded(&decoded.into(), Options::proto())
        .issues()
        .iter()
        .map(|i| i.path().to_string())
        .collect();
    assert!(expected.len() >= 9, "{expected:?}");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.pb");
    std::fs::write(&input, &bytes).unwrap();
    let report = report_in_bounded_memory("--message program-shape", &input, Some(1));
    assert_eq!(paths_of(&report), expected);
    assert_eq!(report["files"][0]["shapes"], 3);
}

/// A binary program shape of 8 MB whose parts are tuples with fields of their own: a
/// parameter with an unknown field of its own and in some of its shapes, holding a
/// nested tuple; a result with dimensions and a layout; an unknown field at the top.
fn program_with_parts_of_their_own() -> Vec<u8> {
    use xla_shape::codec::wire::{put_tag, put_varint, WireType};
    let field = |out: &mut Vec<u8>, number: u32, body: &[u8]| {
        put_tag(out, number, WireType::LengthDelimited);
        put_varint(out, body.len() as u64);
        out.extend_from_slice(body);
    };
    let unknown = [0xa0u8, 0x06, 0x01]; // field 100, varint 1
    let element = xla_shape::codec::encode(&text::parse_shape("f32[8,128]{1,0}").unwrap());
    let tuple = |n: usize, own: &[u8], tail: &[u8], every: usize| {
        let mut out = vec![0x10, 0x0d]; // element type TUPLE
        out.extend_from_slice(own);
        for i in 0..n {
            let mut body = element.clone();
            if every > 0 && i % every == every - 1 {
                body.extend(unknown);
            }
            field(&mut out, 4, &body);
        }
        out.extend_from_slice(tail);
        out
    };
    let mut layout = Vec::new();
    field(&mut layout, 5, &[]);
    let nested = tuple(1_000, &[], &[], 300);
    let mut parameter = tuple(250_000, &[], &unknown, 100_000);
    field(&mut parameter, 4, &nested);
    let dimensions = [0x1a, 0x01, 0x02]; // dimensions [2]
    let result = tuple(250_000, &dimensions, &layout, 0);
    let mut program = Vec::new();
    field(&mut program, 1, &parameter);
    field(&mut program, 2, &result);
    field(&mut program, 3, b"p");
    program.extend(unknown);
    assert!(program.len() > 8_000_000, "{}", program.len());
    program
}

/// [`program_with_parts_of_their_own`] converted into binary, JSON and XLA's text in
/// a 100 MB address space, with the bytes and the warnings of the whole conversion,
/// and the lossless text's refusal of the first unknown field. Read whole (as the
/// previous binary read such parts), each took 30 to 55 times the input.
#[test]
fn program_shape_parts_with_fields_of_their_own_convert_in_bounded_memory() {
    use xla_shape::convert::{self, Form, Options};
    let program = program_with_parts_of_their_own();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.pb");
    std::fs::write(&input, &program).unwrap();
    let decoded = convert::read(
        Form::Binary,
        MessageKind::ProgramShape,
        &program,
        &Options::default(),
    )
    .unwrap();
    for (to, style) in [
        ("binary", "xla"),
        ("json", "xla"),
        ("hlo", "xla"),
        ("hlo", "exact"),
    ] {
        let options = Options {
            hlo_style: if style == "xla" {
                text::HloStyle::Xla
            } else {
                text::HloStyle::Exact
            },
            ..Default::default()
        };
        let form = match to {
            "binary" => Form::Binary,
            "json" => Form::Json,
            _ => Form::Hlo,
        };
        let args = format!(
            "convert --from binary --message program-shape --to {to} --hlo-style {style} {}",
            input.display()
        );
        let run = limited_to(100_000, &args);
        let said = String::from_utf8_lossy(&run.stderr);
        match convert::write(form, &decoded, &options) {
            Ok(expected) => {
                assert_eq!(run.status.code(), Some(0), "{args}: {said}");
                assert!(run.stdout == expected, "{args}: converted differently");
                // The unknown fields left out, as the whole conversion lists them.
                let (dropped, _) = convert::dropped_fields(&decoded);
                let warned = said.lines().filter(|l| l.contains("unknown field")).count();
                let expected = if to == "binary" { 0 } else { dropped.len() };
                assert_eq!(warned, expected, "{args}: {said}");
                if to != "binary" {
                    assert!(said.contains("parameters[0]: unknown field 100"), "{said}");
                }
            }
            Err(e) => {
                assert_eq!(run.status.code(), Some(2), "{args}: {said}");
                assert!(said.contains(&e.to_string()), "{args}: {said} vs {e}");
                assert!(run.stdout.is_empty(), "{args}");
            }
        }
    }
}

/// [`program_with_parts_of_their_own`] listed by `shapes` in a 100 MB address space,
/// a part at a time: the parameter's text is XLA's printing of the whole parameter,
/// the result (whose layout has no text) is said to have none, and JSON lines size
/// the parameter as the whole does. Read whole, the listing took 30 to 85 times the
/// input.
#[test]
fn program_shape_parts_with_fields_of_their_own_are_listed_in_bounded_memory() {
    let program = program_with_parts_of_their_own();
    let whole = xla_shape::codec::decode_program_shape(&program)
        .unwrap()
        .message;
    let parameter = text::HloStyle::Xla
        .print_shape(&whole.parameters[0])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.pb");
    std::fs::write(&input, &program).unwrap();
    let name = input.display();
    let args = format!("shapes --message program-shape {name}");
    let listed = String::from_utf8(limited_exit(100_000, &args, 0)).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0] == format!("{name}: parameter 0: {parameter}"),
        "parameter listed differently"
    );
    assert!(
        lines[1].starts_with(&format!("{name}: result: ")),
        "{}",
        lines[1]
    );
    let args = format!("shapes --message program-shape --format json {name}");
    let listed = limited_exit(100_000, &args, 0);
    let first: serde_json::Value =
        serde_json::from_slice(listed.split(|&b| b == b'\n').next().unwrap()).unwrap();
    let validated =
        xla_shape::validate::validate_shape_with(&whole.parameters[0], Options::hlo_text());
    let bytes = xla_shape::guard::listing::allocated_bytes(&validated.into_parts().0.unwrap());
    assert_eq!(first["bytes"].as_u64(), bytes, "{}", first["role"]);
}

/// A program shape whose result is given twice (which protobuf merges: the second
/// occurrence's elements follow the first's), 8 MB, one element broken in each
/// occurrence: validated and converted in a 100 MB address space, with the whole
/// check's findings (at the merged result's indices) and the whole conversion's
/// bytes. Read whole, the result took some 30 times the input.
#[test]
fn a_result_given_twice_is_read_a_shape_at_a_time() {
    use xla_shape::convert::{self, Form, Options as ConvertOptions};
    let (half, _) = tuple_with_two_broken_elements(250_000);
    let mut program = xla_shape::codec::encode(&xla_shape::proto::ProgramShapeProto {
        parameters: vec![text::parse_shape("f32[2]{0}").unwrap()],
        result: Some(half.clone()),
        parameter_names: vec!["p".to_string()],
    });
    program.extend(xla_shape::codec::encode(
        &xla_shape::proto::ProgramShapeProto {
            result: Some(half),
            ..Default::default()
        },
    ));
    assert!(program.len() > 8_000_000, "{}", program.len());
    let decoded = xla_shape::codec::decode_program_shape(&program).unwrap();
    let whole = &decoded.message;
    assert_eq!(whole.result.as_ref().unwrap().tuple_shapes.len(), 500_000);
    let expected: Vec<String> =
        xla_shape::validate::validate_program_shape_with(whole, Options::proto())
            .report()
            .issues()
            .iter()
            .map(|i| i.path().to_string())
            .collect();
    assert_eq!(expected.len(), 4, "{expected:?}");
    assert!(
        expected.iter().any(|p| p.contains("tuple_shapes[250001]")),
        "{expected:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("program.pb");
    std::fs::write(&input, &program).unwrap();
    let args = format!(
        "validate --message program-shape --format json {}",
        input.display()
    );
    assert_eq!(finding_paths(&limited_exit(100_000, &args, 1)), expected);
    let options = ConvertOptions::default();
    let decoded = xla_shape::codec::Decoded {
        message: xla_shape::AnyMessage::ProgramShape(decoded.message),
        unknown: decoded.unknown,
    };
    for (to, form) in [("binary", Form::Binary), ("json", Form::Json)] {
        let expected = convert::write(form, &decoded, &options).unwrap();
        let args = format!(
            "convert --from binary --message program-shape --to {to} {}",
            input.display()
        );
        let converted = limited_exit(100_000, &args, 0);
        assert!(converted == expected, "{to}: converted differently");
    }
}

/// A module proto's long shape that is a tuple with fields of its own (a layout, an
/// unknown field, a nested tuple with dimensions) holding shapes with unknown fields
/// and broken shapes is validated and listed a shape at a time in a 200 MB address
/// space (read whole: 47 and 85 times its size), with the whole check's findings
/// (codes, paths, messages, in order).
#[test]
fn long_tuple_with_fields_of_its_own_in_a_module_proto_is_read_a_shape_at_a_time() {
    let unknown = [0xa0u8, 0x06, 0x01]; // field 100, varint 1
    let shape = |text: &str| xla_shape::codec::encode(&text::parse_shape(text).unwrap());
    let (good, bad) = (shape("f32[8,128]{1,0}"), shape("f32[8,128]{0,0}"));
    let mut nested = vec![0x10, 0x0d, 0x1a, 0x01, 0x02]; // TUPLE, dimensions [2]
    nested.extend(field(4, &bad));
    let mut tuple = vec![0x10, 0x0d]; // TUPLE
    for i in 0..400_000 {
        match i {
            3 => tuple.extend(field(4, &nested)),
            7 | 399_999 => tuple.extend(field(4, &bad)),
            _ if i % 100_000 == 50 => {
                tuple.extend(field(4, &[good.clone(), unknown.to_vec()].concat()))
            }
            _ => tuple.extend(field(4, &good)),
        }
    }
    tuple.extend(field(5, &[])); // a layout of its own
    tuple.extend(unknown);
    let mut instruction = field(1, b"t");
    instruction.extend(field(2, b"parameter"));
    instruction.extend(field(3, &tuple));
    let mut computation = field(1, b"main");
    computation.extend(field(2, &instruction));
    let mut bytes = field(1, b"m");
    bytes.extend(field(3, &computation));
    assert!(bytes.len() > 6_000_000, "{}", bytes.len());
    let (whole, report, _dir, input) = module_proto_validated(&bytes);
    assert!(whole.len() >= 8, "{whole:?}");
    assert_whole_findings(&report, &whole, ("instruction", "t"));
    let run = limited(&format!("shapes {}", input.display()));
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{said}");
    let listed = String::from_utf8_lossy(&run.stdout);
    assert!(
        listed.starts_with(&format!("{}: main/t: <no HLO text: ", input.display())),
        "{}",
        &listed[..listed.len().min(300)]
    );
}

/// A layout of thousands of tiles, each cutting the shape before it further, makes no
/// layout plan: each stage of the plan keeps the shape before its tile, so 32,000
/// tiles `(1)` over `f32[8]` held half a billion sizes (4.8 GB, 17 s for `explain`;
/// under a 1 GB address space, an abort). The plan stops at a bound of sizes in all,
/// with `PlanError::TooLarge`; a few hundred such tiles, or the largest rank the list
/// limit allows under a few tiles, still make one. The commands that need a plan say
/// why they have none, in a 200 MB address space.
#[test]
fn thousands_of_tiles_make_no_plan_past_a_bound() {
    use xla_shape::index::PlanError;
    let plan = |text: &str| {
        let proto = text::parse_shape(text).unwrap();
        let shape = xla_shape::ArrayShape::try_from(&proto).unwrap();
        LayoutPlan::new(&shape)
    };
    for (tile, tiles) in [("(1)", 500), ("(8,128)", 300)] {
        let text = format!("f32[1024,1024]{{1,0:T{}}}", tile.repeat(tiles));
        let plan = plan(&text).unwrap();
        assert_eq!(plan.element_count(), 1 << 20, "{tile} x {tiles}");
    }
    let rank = 349_000;
    let wide = format!(
        "f32[{}]{{{}:T(2,2)(1)(2,1)}}",
        vec!["1"; rank].join(","),
        (0..rank)
            .rev()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    assert!(plan(&wide).is_ok());
    for (tile, tiles) in [("(1)", 32_000), ("(8,128)", 16_000)] {
        let text = format!("f32[1024,1024]{{1,0:T{}}}", tile.repeat(tiles));
        assert_eq!(
            plan(&text).err(),
            Some(PlanError::TooLarge { tiles }),
            "{tile}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiles.txt");
    std::fs::write(&path, format!("f32[8]{{0:T{}}}\n", "(1)".repeat(32_000))).unwrap();
    let path = path.display();
    let said = limited_exit(200_000, &format!("explain {path}"), 0);
    let said = String::from_utf8(said).unwrap();
    assert!(
        said.contains(
            "no memory layout: layout.tiles: 32000 tiles would make a layout plan of more than"
        ),
        "{said}"
    );
    for args in [
        format!("index {path} 3"),
        format!("index {path} --linear 3"),
    ] {
        let run = limited_to(200_000, &args);
        assert_eq!(run.status.code(), Some(2), "{args}");
        assert!(
            String::from_utf8_lossy(&run.stderr).contains("32000 tiles"),
            "{args}"
        );
    }
}

/// A long one-line tuple broken at its end is listed a shape at a time up to its error,
/// which is the whole parse's, and one given where an array is asked for (`index`) is
/// refused as a tuple once it parses, without being built: before, `shapes` parsed the
/// broken tuple whole again for its error (28 times its text), and `index` built the
/// tuple (45 times) to say that it has no elements to index. So is a binary one cut
/// short.
#[test]
fn long_tuples_refused_late_are_read_a_shape_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let good = one_line_tuple("f32[8,128]{1,0}", 500_000);
    assert!(good.len() > 8_000_000);
    let bad = format!("{}x)\n", good.strip_suffix(")\n").unwrap());
    let whole = text::parse_shape(&bad).unwrap_err();
    let [good_file, bad_file] = [("good.txt", &good), ("bad.txt", &bad)].map(|(name, text)| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    });
    let said = |args: &str, code: i32| {
        let run = limited_to(100_000, args);
        let said = String::from_utf8_lossy(&run.stderr).into_owned();
        assert_eq!(run.status.code(), Some(code), "{args}: {said}");
        said
    };
    let shapes = said(&format!("shapes {bad_file}"), 2);
    assert!(
        shapes.contains(&format!("bad.txt: line 1: {}\n", whole.message())),
        "{shapes}"
    );
    let index = said(&format!("index {bad_file} 0,0"), 2);
    assert!(index.contains(&whole.render(&bad)), "{index}");
    let index = said(&format!("index {good_file} 0,0"), 2);
    assert!(
        index.ends_with("good.txt: a tuple has no elements to index; give an array shape\n"),
        "{index}"
    );
    // The same tuple in binary, cut short: the whole decode's error (23 times the
    // bytes, decoded whole again for it).
    let binary = xla_shape::codec::encode(&text::parse_shape(&good).unwrap());
    let cut = &binary[..binary.len() - 3];
    let whole = xla_shape::codec::decode_shape(cut).unwrap_err();
    let cut_file = dir.path().join("cut.pb");
    std::fs::write(&cut_file, cut).unwrap();
    let shapes = said(&format!("shapes {}", cut_file.to_str().unwrap()), 2);
    assert!(
        shapes.ends_with(&format!("cut.pb: cannot decode xla.ShapeProto: {whole}\n")),
        "{shapes}"
    );
}

/// An instruction of millions of operands is listed without gathering them (`shapes`
/// and policies are handed no instructions): module text of 2,000,000 operands `%p`
/// (8 MB) and a module proto of 5,000,000 packed operand ids (5 MB) are listed, and the
/// text validated, in a 60 MB address space; they took 20 and 65 times their size, and
/// `validate` six times the line, which is now read past its first 1,024 operands by
/// the token path (it holds none of them).
///
/// `diff`, which matches instructions by their operands and callees, gathers them as
/// [`xla_shape::text::module::Names`] (one text and four bytes a name): each module
/// compared with itself, the text in 60 MB with the conditional of 1,000,000 callees
/// (4 MB) too, the proto in 60 MB. As a string each, the text needed 250 MB, the
/// conditional 150 MB and the proto more than 400 MB; copied into each instruction
/// handed on (clones of `Names` now share them), the proto needed more than 80 MB;
/// named in full at each repeat of its one id, it needed 75 MB, and some 220 MB when
/// that names `parameter.123456` (now 60 MB for both).
#[test]
fn instructions_of_millions_of_operands_are_listed_and_compared_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut module = String::from("HloModule m\n\nENTRY %main {\n  %p = f32[8]{0} parameter(0)\n");
    module.push_str("  ROOT %c = f32[8]{0} custom-call(%p");
    module.push_str(&", %p".repeat(1_999_999));
    module.push_str("), custom_call_target=\"x\"\n}\n");
    let text = dir.path().join("m.hlo.txt");
    std::fs::write(&text, &module).unwrap();
    let text = text.to_str().unwrap();
    let listed = String::from_utf8(limited_exit(60_000, &format!("shapes {text}"), 0)).unwrap();
    assert_eq!(
        listed,
        format!("{text}: ENTRY main/p: f32[8]{{0}}\n{text}: ENTRY main/c: f32[8]{{0}}\n")
    );
    limited_exit(60_000, &format!("validate {text}"), 0);
    limited_exit(60_000, &format!("diff {text} {text}"), 0);
    let mut callees = String::from("HloModule m\n\n%b (x: s32[]) -> s32[] {\n");
    callees.push_str("  ROOT %x = s32[] parameter(0)\n}\n\nENTRY %main {\n");
    callees.push_str("  %i = s32[] parameter(0)\n  %p = s32[] parameter(1)\n");
    callees.push_str("  ROOT %c = s32[] conditional(%i, %p), branch_computations={%b");
    callees.push_str(&", %b".repeat(999_999));
    callees.push_str("}\n}\n");
    let conditional = dir.path().join("c.hlo.txt");
    std::fs::write(&conditional, &callees).unwrap();
    let conditional = conditional.to_str().unwrap();
    limited_exit(60_000, &format!("diff {conditional} {conditional}"), 0);

    // Varint field `number` of wire type `wire`, and a length-delimited one.
    fn tag(number: u64, wire: u64, out: &mut Vec<u8>) {
        let mut v = (number << 3) | wire;
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let shape = xla_shape::codec::encode(&text::parse_shape("f32[8]{0}").unwrap());
    let instruction = |name: &[u8], opcode: &[u8], id: u8, operands: usize| {
        let mut out = field(1, name);
        out.extend(field(2, opcode));
        out.extend(field(3, &shape));
        tag(35, 0, &mut out);
        out.push(id);
        if operands > 0 {
            tag(36, 2, &mut out);
            let mut len = operands as u64;
            while len >= 0x80 {
                out.push((len as u8) | 0x80);
                len >>= 7;
            }
            out.push(len as u8);
            out.extend(std::iter::repeat_n(1u8, operands));
        }
        out
    };
    let module = |parameter: &[u8]| {
        let mut computation = field(1, b"main");
        computation.extend(field(2, &instruction(parameter, b"parameter", 1, 0)));
        computation.extend(field(2, &instruction(b"c", b"custom-call", 2, 5_000_000)));
        let mut proto = field(1, b"m");
        proto.extend(field(2, b"main"));
        proto.extend(field(3, &computation));
        proto
    };
    let path = dir.path().join("m.hlo.pb");
    std::fs::write(&path, module(b"p")).unwrap();
    let path = path.to_str().unwrap();
    let listed = String::from_utf8(limited_exit(60_000, &format!("shapes {path}"), 0)).unwrap();
    assert_eq!(
        listed,
        format!("{path}: ENTRY main/p: f32[8]{{0}}\n{path}: ENTRY main/c: f32[8]{{0}}\n")
    );
    limited_exit(60_000, &format!("diff {path} {path}"), 0);
    // Each repeat of an id is held as which name it repeats, however long the name:
    // named in full each time, 5,000,000 repeats of `parameter.123456` took some 210
    // MB against themselves.
    let long = dir.path().join("long.hlo.pb");
    std::fs::write(&long, module(b"parameter.123456")).unwrap();
    let long = long.to_str().unwrap();
    limited_exit(60_000, &format!("diff {long} {long}"), 0);
    // Against the same with the parameter renumbered: matched by position, and the
    // instruction that takes it 5,000,000 times is the same.
    let renumbered = dir.path().join("renumbered.hlo.pb");
    std::fs::write(&renumbered, module(b"parameter.123457")).unwrap();
    let renumbered = renumbered.to_str().unwrap();
    let report = limited_exit(60_000, &format!("diff {long} {renumbered}"), 0);
    assert_eq!(
        String::from_utf8(report).unwrap(),
        format!(
            "{renumbered}: note: matched instruction main/parameter.123456 with \
             parameter.123457 by position among same-stem, same-opcode names\n"
        )
    );
}

/// A long program shape of array parts is listed a part at a time, each entry handed on
/// as it comes: 300,000 parameters as a binary message (5 MB) and as a shape line (6
/// MB) are listed in a 60 MB address space (the entries were gathered first, 41 times
/// the binary message, and the line parsed whole, 43 times). A line whose parts are
/// tuples is listed a part at a time too, each tuple printed a shape at a time (see
/// [`program_lines_with_long_tuple_parts_are_listed_a_shape_at_a_time`]).
#[test]
fn long_program_shapes_are_listed_a_part_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = 300_000;
    let line = one_line_program("f32[8,128]{1,0}", n, "s32[2]{0}");
    let program = text::parse_program_shape(&line).unwrap();
    let want: String = (0..n)
        .map(|i| format!("parameter {i}: f32[8,128]{{1,0}}\n"))
        .chain(["result: s32[2]{0}\n".to_string()])
        .collect();
    let binary = dir.path().join("p.pb");
    std::fs::write(&binary, xla_shape::codec::encode(&program)).unwrap();
    let text_file = dir.path().join("p.txt");
    std::fs::write(&text_file, &line).unwrap();
    for path in [binary, text_file] {
        let path = path.to_str().unwrap();
        let listed = listed_in(60_000, path);
        assert!(listed == want, "{path}: {}", &listed[..200]);
    }
}

/// `shapes PATH` in an address space of `kb` KB, which must succeed: its lines without
/// the file's name.
#[track_caller]
fn listed_in(kb: u64, path: &str) -> String {
    let listed = limited_exit(kb, &format!("shapes {path}"), 0);
    let listed = String::from_utf8(listed).unwrap();
    let prefix = format!("{path}: ");
    listed
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix(&prefix).unwrap()))
        .collect()
}

/// A program-shape line whose parts are long tuples (nested, with an empty tuple, two
/// side by side) is listed a part at a time, each tuple printed a shape at a time as a
/// long tuple line is: 2.9 MB in a 40 MB address space (parsed whole, 28 to 56 times
/// the line), each entry the whole program shape's part printed.
#[test]
fn program_lines_with_long_tuple_parts_are_listed_a_shape_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000;
    let element = "f32[8,128]{1,0:T(8,128)}";
    let tuple = format!("({})", vec![element; n].join(", "));
    let nested = format!(
        "((), {}, ({tuple}, s32[2]{{0}}))",
        ["bf16[4]{0}"; 8].join(", ")
    );
    let line = format!("(p0: f32[2]{{0}}, p1: {tuple}, p2: {nested}) -> ({tuple}, ())");
    assert!(line.len() > 2 << 20);
    let program = text::parse_program_shape(&line).unwrap();
    let mut want = String::new();
    for (i, parameter) in program.parameters.iter().enumerate() {
        want.push_str(&format!(
            "parameter {i}: {}\n",
            text::print_shape_as_xla(parameter).unwrap()
        ));
    }
    let result = program.result.as_ref().unwrap();
    want.push_str(&format!(
        "result: {}\n",
        text::print_shape_as_xla(result).unwrap()
    ));
    let path = dir.path().join("p.txt");
    std::fs::write(&path, &line).unwrap();
    let path = path.to_str().unwrap();
    let listed = listed_in(40_000, path);
    assert!(listed == want, "{}", &listed[..200]);
    // A tuple part broken at its end is the whole parse's error.
    let broken = line.replacen("s32[2]{0}", "s32[2]{1}", 1);
    std::fs::write(path, &broken).unwrap();
    let run = limited_to(40_000, &format!("shapes {path}"));
    assert_eq!(run.status.code(), Some(2));
    let said = String::from_utf8_lossy(&run.stderr);
    let whole = text::parse_program_shape(&broken).unwrap_err();
    assert!(said.contains(whole.message()), "{said}");
}

/// `diff` holds a role (an operand's, a list attribute's) as its kind and index, eight
/// bytes, and finds an instruction's shapes by their place through a sorted list: an
/// instruction of 300,000 `operand_layout_constraints` (3.3 MB of text) is compared
/// with one whose last changed in a 100 MB address space (each entry's role, and its
/// copy in a map, took some 150 bytes, and the maps of its places 250: 100 times the
/// text; 16 times now).
#[test]
fn diff_of_an_instruction_of_many_attribute_shapes_holds_their_roles_compactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut module = String::from("HloModule m\n\nENTRY %main {\n  %p = f32[8]{0} parameter(0)\n");
    module.push_str("  ROOT %c = f32[8]{0} custom-call(%p), custom_call_target=\"x\", ");
    module.push_str("operand_layout_constraints={f32[8]{0}");
    module.push_str(&", f32[8]{0}".repeat(299_999));
    module.push_str("}\n}\n");
    let old = dir.path().join("old.hlo.txt");
    std::fs::write(&old, &module).unwrap();
    let new = dir.path().join("new.hlo.txt");
    std::fs::write(&new, module.replacen("f32[8]{0}}", "s32[8]{0}}", 1)).unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let out = limited_exit(100_000, &format!("diff {old} {new}"), 1);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.ends_with(
            "main/c operand_layout_constraints 299999: f32[8]{0} -> s32[8]{0}: element type f32 -> s32 (allocated 32 -> 32 bytes)\n"
        ),
        "{out}"
    );
}

/// An attribute value skipped whole keeps a byte for each bracket open in it (and the
/// line of each run opened on one line): 5,000,000 nested `{` and `}` (10 MB) are
/// validated in a 70 MB address space (16 bytes each, nine times the text, before);
/// a closer that does not match still names the line its opener is on. A frontend
/// attribute's JSON dictionary as deep counts its braces.
#[test]
fn brackets_nested_millions_deep_in_an_attribute_are_skipped_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n = 5_000_000;
    let module = format!(
        "HloModule m\n\nENTRY %main {{\n  ROOT %p = f32[8]{{0}} parameter(0), sharding={}{}\n}}\n",
        "{".repeat(n),
        "}".repeat(n)
    );
    let path = dir.path().join("m.hlo.txt");
    // A frontend attribute's value in braces is a JSON dictionary, whose braces are
    // counted, not held.
    let json = format!(
        "HloModule m\n\nENTRY %main {{\n  ROOT %p = f32[8]{{0}} parameter(0), frontend_attributes={{a={}{}}}\n}}\n",
        "{".repeat(n),
        "}".repeat(n)
    );
    std::fs::write(&path, json).unwrap();
    limited_exit(70_000, &format!("validate {}", path.to_str().unwrap()), 0);
    std::fs::write(&path, module).unwrap();
    limited_exit(70_000, &format!("validate {}", path.to_str().unwrap()), 0);
    let broken = "HloModule m\n\nENTRY %main {\n  ROOT %p = f32[8]{0} parameter(0), sharding={{\n[\n]\n}\n)\n}\n";
    std::fs::write(&path, broken).unwrap();
    let out = limited_exit(70_000, &format!("validate {}", path.to_str().unwrap()), 1);
    assert!(String::from_utf8(out)
        .unwrap()
        .contains(":8:1: error[module_syntax]: expects '}' (opened on line 4), saw ')'"),);
}

/// A policy checks a long tuple's arrays keeping only the codes reported for the array
/// at hand: 500,000 denied arrays in one line (8.5 MB) are checked in an 80 MB address
/// space, every one reported (a set of every array's codes took 130 bytes an array).
#[test]
fn policy_findings_of_a_long_tuple_keep_no_set_of_its_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let n = 500_000;
    let input = dir.path().join("tuple.txt");
    std::fs::write(&input, one_line_tuple("f32[8,128]{1,0}", n)).unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[all]\ndeny_element_types = [\"f32\"]\nmax_array_bytes = 1\n",
    )
    .unwrap();
    let out = limited_exit(
        80_000,
        &format!(
            "validate --policy {} {}",
            policy.to_str().unwrap(),
            input.to_str().unwrap()
        ),
        1,
    );
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.lines().count(), 2 * n);
    assert!(out
        .lines()
        .last()
        .unwrap()
        .contains(&format!("tuple_shapes[{}]", n - 1)));
}

/// A layout plan of the largest rank compiles and sizes itself in time linear in its
/// rank, on layouts that hold hundreds of thousands of dimensions of 0 (every one an
/// axis of the plan: marking each source's top digit looked through every axis, 223 s
/// for `explain` at rank 340,000), a tile of as many `*` (each merge copied the parts
/// merged so far and shifted every coordinate after it: 19 GB at rank 40,000), and a
/// tile longer than the shape by as many entries (each prepended dimension shifted
/// the others).
#[test]
fn plans_of_the_largest_rank_compile_in_linear_time() {
    let rank = 150_000;
    let zeros = vec!["0"; rank].join(",");
    let reversed: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
    let reversed = reversed.join(",");
    let stars = format!("{}2", "*,".repeat(rank - 1));
    let long_tile = vec!["1"; 2 * rank].join(",");
    let ones = wide_array(rank, "");
    let ones = ones.split_once('{').unwrap().0;
    for (text, elements) in [
        (format!("f32[{zeros}]"), 0),
        (format!("{ones}{{{reversed}:T({stars})}}"), 1),
        (format!("f32[{zeros}]{{{reversed}:T({stars})}}"), 0),
        (format!("{ones}{{{reversed}:T({long_tile})}}"), 1),
        (format!("{ones}{{{reversed}:T({stars})(2,1)}}"), 1),
    ] {
        let start = Instant::now();
        let proto = text::parse_shape(&text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        let plan = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
        assert_eq!(plan.element_count(), elements);
        assert_eq!(plan.data_elements(), elements);
        assert!(plan.allocated_bytes() >= 4 * elements);
        let _ = (plan.xla_array_size(), plan.xla_array_data_size());
        assert_eq!(plan.physical_order().count() as u64, elements);
        assert_eq!(plan.logical_order().count() as u64, elements);
        let elapsed = start.elapsed();
        assert!(
            elapsed < Duration::from_secs(10),
            "{}: {elapsed:?}",
            &text[..40]
        );
    }
}

/// The findings of one shape give its text, and the names of its instruction and
/// computation, with the first only when longer than 1 KiB (`REPEATED_TEXT`), in every
/// form and report: each finding carried the whole text, so 20,000 findings of one
/// 200 KB JSON shape took 1.2 GB and made a report of as much. A short shape's text is
/// still with each of its findings.
#[test]
fn findings_of_a_long_shape_give_its_text_once() {
    let n = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("negative.json");
    let negative = vec!["\"-1\""; n].join(",");
    std::fs::write(
        &json,
        format!("{{\"elementType\":\"F32\",\"dimensions\":[{negative}]}}"),
    )
    .unwrap();
    let binary = dir.path().join("negative.binpb");
    let proto = xla_shape::proto::ShapeProto {
        element_type: xla_shape::proto::PrimitiveType::F32 as i32,
        dimensions: vec![-1; n],
        ..Default::default()
    };
    let bytes = xla_shape::codec::Decoded {
        message: proto.clone(),
        unknown: Default::default(),
    }
    .encode_to_vec();
    std::fs::write(&binary, bytes).unwrap();
    let text = dir.path().join("duplicates.txt");
    let duplicates = vec!["0"; n + 1].join(",");
    std::fs::write(
        &text,
        format!(
            "{}{{{duplicates}}}\n",
            wide_array(n + 1, "").split_once('{').unwrap().0
        ),
    )
    .unwrap();
    for (form, path) in [("json", &json), ("binary", &binary), ("hlo", &text)] {
        for format in ["json", "sarif"] {
            let args = format!(
                "validate --from {form} --format {format} {}",
                path.display()
            );
            let report: serde_json::Value =
                serde_json::from_slice(&limited_exit(100_000, &args, 1)).unwrap();
            let shapes: Vec<Option<&str>> = match format {
                "json" => report["files"][0]["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f["shape"].as_str())
                    .collect(),
                _ => report["runs"][0]["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["properties"]["shape"].as_str())
                    .collect(),
            };
            assert_eq!(shapes.len(), n, "{args}");
            assert!(shapes[0].is_some_and(|s| s.len() > 2 * n), "{args}");
            assert!(shapes[1..].iter().all(Option::is_none), "{args}");
        }
    }
    // Module text and module protos: the shape of an instruction.
    let module = dir.path().join("m.hlo");
    let ones = wide_array(n + 1, "");
    let ones = ones.split_once('{').unwrap().0;
    std::fs::write(
        &module,
        format!(
            "HloModule m\n\nENTRY main {{\n  ROOT p = {ones}{{{duplicates}}} parameter(0)\n}}\n"
        ),
    )
    .unwrap();
    let module_proto = dir.path().join("m.hlo.pb");
    std::fs::write(&module_proto, module_proto_with_shape(&proto)).unwrap();
    for (args, path) in [("--from hlo-module", &module), ("", &module_proto)] {
        let args = format!("validate {args} --format json {}", path.display());
        let report: serde_json::Value =
            serde_json::from_slice(&limited_exit(100_000, &args, 1)).unwrap();
        let findings = report["files"][0]["findings"].as_array().unwrap();
        assert!(findings.len() >= n, "{args}: {}", findings.len());
        let with_text: Vec<&str> = findings
            .iter()
            .filter_map(|f| f["shape"].as_str())
            .collect();
        assert_eq!(with_text.len(), 1, "{args}");
        assert!(with_text[0].len() > 2 * n, "{args}");
    }
    // Names of 200 KB: an instruction's shape with 4,000 findings, and a long tuple
    // of 20,000 elements each warned of (made 1.6 and 6.8 GB of report text).
    let name = "n".repeat(200_000);
    let named = dir.path().join("named.hlo");
    let four = wide_array(4_000, "");
    let four = four.split_once('{').unwrap().0;
    let zeros = vec!["0"; 4_000].join(",");
    let elements = vec!["f32[2]{0:E(4)}"; 20_000].join(",");
    std::fs::write(
        &named,
        format!(
            "HloModule m\n\nENTRY {name} {{\n  {name} = {four}{{{zeros}}} parameter(0)\n  \
             ROOT t = ({elements}) parameter(1)\n}}\n"
        ),
    )
    .unwrap();
    for format in ["text", "json"] {
        let args = format!(
            "validate --from hlo-module --format {format} {}",
            named.display()
        );
        let out = limited_exit(100_000, &args, 1);
        assert!(out.len() < 20_000_000, "{args}: {}", out.len());
        if format == "json" {
            let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let findings = report["files"][0]["findings"].as_array().unwrap();
            assert_eq!(findings.len(), 3_999 + 20_000);
            let named = findings
                .iter()
                .filter(|f| f["instruction"] == name.as_str())
                .count();
            let in_computation = findings
                .iter()
                .filter(|f| f["computation"] == name.as_str())
                .count();
            // The instruction's first finding, and the tuple's first.
            assert_eq!((named, in_computation), (1, 2));
        }
    }
    // A policy's findings of a long tuple's arrays, in an instruction of that name.
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[all]\ndeny_element_types = [\"f32\"]\n").unwrap();
    let tuple = dir.path().join("tuple.hlo");
    let elements = vec!["f32[2]{0}"; 20_000].join(",");
    std::fs::write(
        &tuple,
        format!("HloModule m\n\nENTRY {name} {{\n  ROOT {name} = ({elements}) parameter(0)\n}}\n"),
    )
    .unwrap();
    let args = format!(
        "validate --from hlo-module --format json --policy {} {}",
        policy.display(),
        tuple.display()
    );
    let out = limited_exit(100_000, &args, 1);
    assert!(out.len() < 20_000_000, "{args}: {}", out.len());
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let findings = report["files"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 20_000);
    let named = findings
        .iter()
        .filter(|f| f["instruction"] == name.as_str())
        .count();
    assert_eq!(named, 1);
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "f32[2,2,2]{0,0,0}\n").unwrap();
    let args = format!("validate --from hlo --format json {}", short.display());
    let report: serde_json::Value =
        serde_json::from_slice(&limited_exit(100_000, &args, 1)).unwrap();
    let findings = report["files"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2);
    assert!(findings.iter().all(|f| f["shape"] == "f32[2,2,2]{0,0,0}"));
}

/// Validation takes time linear in a shape's lists where they repeat: a
/// `minor_to_major` of 170,000 dimensions and then as many repeats of the last (each
/// repeat looked back through the list for its first place) and 170,000 split configs
/// of distinct dimensions (each looked through the configs before it). Each search
/// took more than 5 s here (10 s and more in a debug build); now a tenth of a second.
#[test]
fn repeated_dimensions_and_split_configs_validate_in_linear_time() {
    let half = 170_000;
    let ones = vec!["1"; 2 * half].join(",");
    let repeats: Vec<String> = (0..half)
        .map(|d| d.to_string())
        .chain(std::iter::repeat_n((half - 1).to_string(), half))
        .collect();
    let configs = 170_000;
    let twos = vec!["2"; configs].join(",");
    let reversed: Vec<String> = (0..configs).rev().map(|d| d.to_string()).collect();
    let splits: String = (0..configs).map(|d| format!("({d}:1)")).collect();
    for (text, code, count) in [
        (
            format!("f32[{twos}]{{{}:SC{splits}}}", reversed.join(",")),
            "element_count_overflow",
            1,
        ),
        (
            format!("f32[{ones}]{{{}}}", repeats.join(",")),
            "duplicate_dimension",
            half,
        ),
    ] {
        let start = Instant::now();
        let proto = text::parse_shape(&text).unwrap();
        let report = validate_shape_with(&proto, Options::hlo_text())
            .into_parts()
            .1;
        let issues = report.issues();
        assert_eq!(issues.len(), count, "{}", &text[..40]);
        assert!(
            issues.iter().all(|i| i.kind().code() == code),
            "{}",
            &text[..40]
        );
        let elapsed = start.elapsed();
        assert!(
            elapsed < Duration::from_secs(5),
            "{}: {elapsed:?}",
            &text[..40]
        );
    }
}

/// A shape of many problems is checked in the memory of the shape, not of its
/// problems: each is handed on as the validator finds it, never held with the rest
/// (some 150 bytes each, and as much again where they became findings together). A
/// `minor_to_major` that lists dimension 0 of `f32[1 x 150,000]` 150,000 times (a
/// 600 KB line, 149,999 errors) is checked in a 40 MB address space in every form and
/// by every command that validates it; so is a one-line tuple of 100,000 warned
/// elements in a module. Before, each of these failed to allocate there.
#[test]
fn the_problems_of_a_shape_are_handed_on_as_they_are_found() {
    let n = 150_000;
    let limit = 40_000;
    let dir = tempfile::tempdir().unwrap();
    let line = format!(
        "f32[{}]{{{}}}",
        vec!["1"; n].join(","),
        vec!["0"; n].join(",")
    );
    let proto = text::parse_shape(&line).unwrap();
    let message = xla_shape::AnyMessage::Shape(proto.clone());
    let path = |name: &str| dir.path().join(name).display().to_string();
    let files = [
        ("line.txt", line.clone().into_bytes()),
        (
            "shape.json",
            xla_shape::json::to_json(&message, &xla_shape::json::PrintOptions::new()).into_bytes(),
        ),
        ("shape.binpb", xla_shape::codec::encode(&proto)),
        (
            "m.hlo",
            format!("HloModule m\n\nENTRY main {{\n  ROOT p = {line} parameter(0)\n}}\n")
                .into_bytes(),
        ),
        ("m.hlo.pb", module_proto_with_shape(&proto)),
    ];
    for (name, bytes) in &files {
        std::fs::write(path(name), bytes).unwrap();
    }
    let policy = path("policy.toml");
    std::fs::write(&policy, "[all]\ndeny_element_types = [\"f64\"]\n").unwrap();
    let mut runs: Vec<String> = (files.iter())
        .map(|(name, _)| format!("validate {}", path(name)))
        .collect();
    runs.push(format!("validate --format sarif {}", path("shape.json")));
    runs.push(format!("validate --policy {policy} {}", path("m.hlo")));
    for args in runs {
        let out = String::from_utf8(limited_exit(limit, &args, 1)).unwrap();
        let count = out.matches("dimension 0 is listed twice").count();
        assert_eq!(count, n - 1, "{args}");
    }
    for args in [
        format!("explain {}", path("line.txt")),
        format!("index {} 0", path("line.txt")),
    ] {
        let run = limited_to(limit, &args);
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args}");
        assert_eq!(said.matches("is listed twice").count(), n - 1, "{args}");
    }
    // A long tuple in a module, each element warned of (`E(4)` on an f32), as text
    // and as a module proto.
    let elements = 100_000;
    let tuple = format!("({})", vec!["f32[2]{0:E(4)}"; elements].join(","));
    std::fs::write(
        path("tuple.hlo"),
        format!("HloModule m\n\nENTRY main {{\n  ROOT p = {tuple} parameter(0)\n}}\n"),
    )
    .unwrap();
    let tuple = text::parse_shape(&tuple).unwrap();
    std::fs::write(path("tuple.hlo.pb"), module_proto_with_shape(&tuple)).unwrap();
    for name in ["tuple.hlo", "tuple.hlo.pb"] {
        let args = format!("validate {}", path(name));
        let out = String::from_utf8(limited_exit(limit, &args, 0)).unwrap();
        let count = out.matches("element_size_below_width").count();
        assert_eq!(count, elements, "{args}");
    }
}

/// Endless input is refused, never read without bound: bytes whose first MiB breaks
/// the protobuf wire format (`/dev/zero`) are judged by that MiB, at once, in every
/// command that reads them as a message; a line that never ends (an endless stream
/// of `a`) is read until the memory it may have runs out, then refused as an error
/// (exit 2, never an abort); an array's bytes are read to what the array can take.
/// Before, each read on until the memory ran out, and aborted.
#[test]
fn endless_input_is_refused_not_read_without_bound() {
    let limit = 200_000;
    for args in [
        "validate /dev/zero",
        "validate --from binary /dev/zero",
        "validate --from hlo-module-proto /dev/zero",
        "validate --from json /dev/zero",
        "shapes /dev/zero",
        "diff /dev/zero /dev/zero",
        "convert --from binary --to json /dev/zero",
        "convert --from json --to binary /dev/zero",
    ] {
        let run = limited_to(limit, args);
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args}: {said}");
        assert!(
            said.contains("field number 0 at byte 0")
                || said.contains("expected a value at line 1 column 1")
                || said.contains("1 unreadable"),
            "{args}: {said}"
        );
        assert!(!said.contains("memory"), "{args}: {said}");
    }
    let said =
        String::from_utf8_lossy(&limited_to(limit, "validate /dev/zero").stderr).into_owned();
    assert!(
        said.contains("bytes that are neither text nor protobuf (read as protobuf: invalid field number 0 at byte 0)"),
        "{said}"
    );
    for args in [
        "validate --from hlo-module -",
        "validate --from hlo -",
        "validate -",
        "shapes -",
        "convert --from hlo --to json -",
        "explain -",
        "index - 0",
    ] {
        let script = format!("tr '\\0' a < /dev/zero | (ulimit -v {limit} && exec \"$0\" {args})");
        let run = limited_command(&script).output().unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args}: {said}");
        assert!(
            said.contains("cannot hold the input in memory"),
            "{args}: {said}"
        );
    }
    let args = "relayout --shape f32[2]{0} --to {0} -o /dev/null /dev/zero";
    let run = limited_to(limit, args);
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{args}: {said}");
    assert!(
        said.contains("holds more than 1048608 bytes"),
        "{args}: {said}"
    );
}

/// However many threads `-j` or `RAYON_NUM_THREADS` asks for, a pool of at most
/// `threads::MAX_THREADS` starts at once: `validate -j 100000` spent minutes starting
/// threads (killed after 20 s), `-j 18446744073709551615` too.
#[test]
fn a_pool_of_any_size_asked_for_starts_at_once() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    for (env, jobs) in [
        ("2", "100000"),
        ("2", "18446744073709551615"),
        ("100000", "0"),
    ] {
        let out = limited_command(&format!(
            "RAYON_NUM_THREADS={env} exec timeout 60 \"$0\" validate -j {jobs} {examples}"
        ))
        .output()
        .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "-j {jobs}, RAYON_NUM_THREADS={env}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let f32 = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/f32_2x3.bin");
        let out = limited_command(&format!(
            "RAYON_NUM_THREADS={env} exec timeout 60 \"$0\" relayout -j {jobs} --shape 'f32[2,3]{{1,0}}' --to '{{0,1}}' {f32}"
        ))
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "relayout -j {jobs}");
        assert_eq!(out.stdout.len(), 24);
    }
}

/// A shape written over many lines is read in time linear in its length: a tuple of
/// 140,000 elements a line each (1 MB), a layout after 100,000 comment lines, and a
/// tuple longer than the 1 MiB a shape may span (an error, then every line after it
/// read as the statements it is not). The first was parsed again for every line joined
/// (more than 120 s here), the second too once a layout could start on a later line,
/// and in the third each token of the joined lines counted its line from the first
/// (11 s). Now each takes well under a second.
#[test]
fn a_shape_over_many_lines_is_read_in_linear_time() {
    use xla_shape::text::module;
    let tuple = |n: usize| {
        format!(
            "HloModule m\nENTRY e {{\n  p = ({}) parameter(0)\n  ROOT r = f32[] get-tuple-element(p), index=0\n}}\n",
            vec!["f32[]"; n].join(",\n")
        )
    };
    let comments = format!(
        "HloModule m\nENTRY e {{\n  p = f32[2]\n{}{{0}} parameter(0)\n  ROOT r = f32[2] negate(p)\n}}\n",
        "// c\n".repeat(100_000)
    );
    for (input, errors) in [
        (tuple(140_000), false),
        (comments, false),
        (tuple(200_000), true),
    ] {
        let start = Instant::now();
        let mut findings = Vec::new();
        let mut check = module::validate_text;
        let summary =
            module::scan_text(input.as_bytes(), &mut check, &mut |f| findings.push(f)).unwrap();
        let elapsed = start.elapsed();
        assert!(summary.shapes >= 1, "{summary:?}");
        assert_eq!(!findings.is_empty(), errors, "{:?}", findings.first());
        assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    }
}

/// A custom call's `literal` in a module proto is walked a tuple at a time, not by
/// recursion: nested 200 tuples deep its shape is listed and checked; nested 100,000
/// deep (some 400 KB) it is a clear error, for the listing and for the gate, and no
/// stack overflow.
#[test]
fn nested_literal_in_a_module_proto_is_listed_or_a_clear_error() {
    use xla_shape::guard::listing::{read_bytes, ReadOptions};
    use xla_shape::text::module;
    // `depth` tuples (`tuple_literals`, 10) around one literal of shape s32[], written
    // outside in: each tuple's header from the size of what it holds, not by copying.
    let header = |size: usize| {
        let mut out = vec![(10 << 3) | 2];
        let mut len = size;
        while len >= 0x80 {
            out.push((len as u8) | 0x80);
            len >>= 7;
        }
        out.push(len as u8);
        out
    };
    let literal = |depth: usize| {
        let leaf = field(1, &[0x10, 0x04]);
        let mut sizes = vec![leaf.len()];
        for _ in 0..depth {
            let inner = *sizes.last().unwrap();
            sizes.push(header(inner).len() + inner);
        }
        let mut out = Vec::with_capacity(*sizes.last().unwrap());
        for inner in sizes[..depth].iter().rev() {
            out.extend(header(*inner));
        }
        out.extend(leaf);
        out
    };
    let module_with = |literal: &[u8]| {
        let mut instruction = field(1, b"c");
        instruction.extend(field(2, b"custom-call"));
        instruction.extend(field(3, &[0x10, 0x0b]));
        instruction.extend(field(8, literal));
        let mut computation = field(1, b"main");
        computation.extend(field(2, &instruction));
        let mut module = field(1, b"m");
        module.extend(field(3, &computation));
        module
    };
    let listed = |bytes: &[u8]| {
        read_bytes("m.pb", bytes, &ReadOptions::default()).map(|listings| {
            let entries = listings.into_iter().flat_map(|l| l.entries);
            entries
                .filter_map(|e| Some(format!("{}: {}", e.location(true)?, e.text)))
                .collect::<Vec<_>>()
        })
    };
    let checked = |bytes: &[u8]| {
        let mut check = module::validate_proto;
        module::scan_proto(bytes, &mut check, &mut |_| {}).map(|s| s.shapes)
    };
    let shallow = module_with(&literal(200));
    assert_eq!(
        listed(&shallow).unwrap(),
        ["main/c: f32[]", "main/c literal: s32[]"]
    );
    assert_eq!(checked(&shallow).unwrap(), 2);
    let deep = module_with(&literal(100_000));
    assert!(deep.len() > 300_000, "{}", deep.len());
    let said = "tuple literals nested deeper than 256 levels";
    let e = listed(&deep).unwrap_err();
    assert!(e.message.contains(said), "{e}");
    let e = checked(&deep).unwrap_err();
    assert!(e.to_string().contains(said), "{e}");
}

/// The arrays at the largest rank the list limit allows, as `(name, dimensions,
/// layout)` texts: 340,000 dimensions of size 1, major to minor, minor to major and
/// under `T(2,2)`; as many of size 0; and 170,000 of size 1 under one tile of as many
/// entries `1`, or `*` but the last, or under such a tile of `1`s and then `(1)`.
fn largest_rank_arrays() -> Vec<(&'static str, String, String)> {
    let rank = LARGEST_RANK;
    let half = rank / 2;
    let list = |items: &[&str], n: usize| -> String {
        items
            .iter()
            .cycle()
            .take(n)
            .copied()
            .collect::<Vec<_>>()
            .join(",")
    };
    let major = |n: usize| {
        (0..n)
            .rev()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let minor = (0..rank)
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    vec![
        ("major", list(&["1"], rank), major(rank)),
        ("minor", list(&["1"], rank), minor),
        (
            "tiled",
            list(&["1"], rank),
            format!("{}:T(2,2)", major(rank)),
        ),
        ("zeros", list(&["0"], rank), major(rank)),
        (
            "ones tile",
            list(&["1"], half),
            format!("{}:T({})", major(half), list(&["1"], half)),
        ),
        (
            "star tile",
            list(&["1"], half),
            format!("{}:T({},1)", major(half), list(&["*"], half - 1)),
        ),
        (
            "ones tiles",
            list(&["1"], half),
            format!("{}:T({})(1)", major(half), list(&["1"], half)),
        ),
    ]
}

/// The rank of [`largest_rank_arrays`].
const LARGEST_RANK: usize = 340_000;

/// A layout plan at the largest rank the list limit allows is built over the
/// dimensions that take part in it: `index` of `f32[1 x 340,000]` (2.9 MB of text)
/// with an index line of 340,000 coordinates, and back with `--linear`, in a 60 MB
/// address space, untiled in either order and under `T(2,2)`; so too the same rank of
/// dimensions of size 0, and half of it under one tile of as many entries `1` or `*`
/// (the plan over every dimension took 50-70 MB and aborted in 80 MB). The plan keeps
/// each dimension's size and order alone, so strides come out for every dimension.
#[test]
fn a_layout_plan_at_the_largest_rank_leaves_out_what_takes_no_part() {
    let dir = tempfile::tempdir().unwrap();
    let rank = LARGEST_RANK;
    for (name, dims, layout) in largest_rank_arrays() {
        let n = dims.split(',').count();
        let zeros = vec!["0"; n].join(",");
        let path = dir.path().join(format!("{name}.txt"));
        std::fs::write(&path, format!("f32[{dims}]{{{layout}}}\n")).unwrap();
        let index = dir.path().join("index.txt");
        std::fs::write(&index, format!("{zeros}\n")).unwrap();
        let (p, i) = (path.display(), index.display());
        let empty = name == "zeros";
        let said = limited_exit(
            60_000,
            &format!("index '{p}' - < {i}"),
            2 * i32::from(empty),
        );
        assert_eq!(said, if empty { &b""[..] } else { b"0\n" }, "{name}");
        let said = limited_exit(
            60_000,
            &format!("index --linear '{p}' 0"),
            2 * i32::from(empty),
        );
        let want = if empty {
            String::new()
        } else {
            format!("{zeros}\n")
        };
        assert_eq!(String::from_utf8(said).unwrap(), want, "{name}");
        // Slot 1: padding of the 2x2 tile, or past the buffer of one element.
        let tiled = name == "tiled";
        let said = limited_exit(
            60_000,
            &format!("index --linear '{p}' 1"),
            2 * i32::from(!tiled),
        );
        assert_eq!(said, if tiled { &b"padding\n"[..] } else { b"" }, "{name}");
    }
    let (_, dims, major) = largest_rank_arrays().swap_remove(0);
    let major = major.as_str();
    // Every dimension's stride, in the library: 1 for each (a dimension of size 1
    // has the stride of the next more minor one).
    let text = format!("f32[{dims}]{{{major}:T(2,2)}}");
    let shape = xla_shape::ArrayShape::try_from(&text::parse_shape(&text).unwrap()).unwrap();
    let plan = LayoutPlan::new(&shape).unwrap();
    assert_eq!(plan.rank(), rank);
    assert_eq!(plan.allocated_elements(), 4);
    assert_eq!(plan.element_strides(), Some(vec![1; rank]));
    assert_eq!(plan.xla_dimension_stride(0), Some(1));
    assert_eq!(plan.xla_unpacked_byte_strides(), vec![4; rank]);
    let mut index = vec![0; rank];
    assert_eq!(plan.linear_index(&index), Ok(0));
    index[rank - 1] = 1;
    assert!(plan.linear_index(&index).is_err());
    assert_eq!(
        plan.linear_index(&index[1..]).err().map(|e| e.to_string()),
        Some(format!(
            "index has {} coordinates, but the shape has {rank} dimensions",
            rank - 1
        ))
    );
}

/// `validate` of an array at the largest rank checks it without a second list of its
/// dimensions: the message's are read where the validated shape's were built, and a
/// tiled size is worked out holding only what later tiles read. Each of
/// [`largest_rank_arrays`] (2.9 MB of text at most) is checked as text and as a binary
/// message in a 36 MB address space, and so is the first with a dimension listed twice
/// in its layout (the shape built beside the message took 34-44 MB in a release build).
#[test]
fn validating_an_array_at_the_largest_rank_builds_no_second_copy_of_it() {
    let dir = tempfile::tempdir().unwrap();
    for (name, dims, layout) in largest_rank_arrays() {
        let text = format!("f32[{dims}]{{{layout}}}");
        let path = dir.path().join(format!("{name}.txt"));
        std::fs::write(&path, format!("{text}\n")).unwrap();
        let binary = dir.path().join(format!("{name}.pb"));
        let proto = text::parse_shape(&text).unwrap();
        std::fs::write(&binary, xla_shape::codec::encode(&proto)).unwrap();
        // A binary message refuses `*` tile entries (the proto rules).
        let binary = (name != "star tile").then_some((&binary, "binary"));
        for (file, from) in std::iter::once((&path, "hlo")).chain(binary) {
            let said = limited_exit(
                36_000,
                &format!("validate --from {from} '{}'", file.display()),
                0,
            );
            assert_eq!(said, b"", "{name} {from}");
        }
    }
    let (_, dims, layout) = largest_rank_arrays().swap_remove(0);
    let broken = layout.strip_suffix(",0").unwrap();
    let path = dir.path().join("broken.txt");
    std::fs::write(&path, format!("f32[{dims}]{{{broken},1}}\n")).unwrap();
    let said = limited_exit(
        36_000,
        &format!("validate --from hlo '{}'", path.display()),
        1,
    );
    let said = String::from_utf8(said).unwrap();
    let want = format!(
        "layout.minor_to_major[{}]: dimension 1 is listed twice (first at minor_to_major[{}])",
        LARGEST_RANK - 1,
        LARGEST_RANK - 2
    );
    assert!(said.contains(&want), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
}

/// An `.npy` header's length is given by its first bytes, and the reader allocated it
/// before reading: a 13-byte file that said 4 GiB aborted (exit 134) in a 300 MB
/// address space. It is refused as a file that ends inside its header, for each
/// version of the format, before anything of that size is asked for.
#[test]
fn an_npy_header_longer_than_its_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for (version, length) in [
        (1u8, vec![0xff, 0xff]),
        (2, vec![0xff, 0xff, 0xff, 0xff]),
        (3, vec![0xff, 0xff, 0xff, 0x7f]),
    ] {
        let mut npy = b"\x93NUMPY".to_vec();
        npy.extend([version, 0]);
        npy.extend(&length);
        npy.extend(b"{'descr': '<f4', ");
        let path = dir.path().join(format!("v{version}.npy"));
        std::fs::write(&path, &npy).unwrap();
        let out = dir.path().join("out.bin");
        let args = format!(
            "relayout --shape 'f32[2]{{0}}' --from-npy {} -o {}",
            path.display(),
            out.display()
        );
        let run = limited_to(200_000, &args);
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "version {version}: {said}");
        assert!(said.contains("the file ends inside its header"), "{said}");
        assert!(!out.exists());
    }
    // A header of 30,000 dimensions is said in a few words (its error took 90 KB).
    // `relayout --from-npy` of a version 2.0 file whose shape lists `dims`, for `shape`,
    // in `kb` KB of address space: what it says (exit 2).
    let path = dir.path().join("deep.npy");
    let refused = |dims: &str, shape: &str, kb: u64| {
        let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({dims}), }}\n");
        let mut npy = b"\x93NUMPY\x02\x00".to_vec();
        npy.extend((header.len() as u32).to_le_bytes());
        npy.extend(header.as_bytes());
        npy.extend([0; 8]);
        std::fs::write(&path, &npy).unwrap();
        let args = format!(
            "relayout --shape '{shape}' --from-npy {} -o /dev/null",
            path.display()
        );
        let run = limited_to(kb, &args);
        let said = String::from_utf8_lossy(&run.stderr).into_owned();
        assert_eq!(run.status.code(), Some(2), "{said}");
        said
    };
    let said = refused(&"1,".repeat(30_000), "f32[1]{0}", 200_000);
    assert!(
        said.contains("... (30000 in all)], but f32[1]{0} has [1]"),
        "{said}"
    );
    assert!(said.len() < 300, "{said}");
    // A header of another rank is refused before the reader builds its tree, some 500
    // bytes a dimension: 330,000 of them (1 MB) took 182 MB, here given 100 MB.
    let said = refused(
        &format!("{}2,", "1, ".repeat(330_000)),
        "f32[2]{0}",
        100_000,
    );
    assert!(
        said.contains("... (330001 in all)], but f32[2]{0} has [2]"),
        "{said}"
    );
}
