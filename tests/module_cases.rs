//! The module text scanner against XLA's own verdicts (`fixtures/module_cases.jsonl`,
//! made by `fixtures/generate_dumps.py` with jaxlib 0.10.2's `hlo_module_from_text`):
//! every real module passes, every shape of the real modules replaced by a non-shape,
//! a misspelled type word or a broken layout is an error at its line, and the
//! hand-written probes get XLA's verdict.

use std::path::Path;

use xla_shape::report::Finding;
use xla_shape::text::module;
use xla_shape::Severity;

fn records() -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/module_cases.jsonl");
    let text = std::fs::read_to_string(path).expect("fixtures/module_cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn scan(text: &str) -> (module::Summary, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut check = module::validate_text;
    let summary =
        module::scan_text(text.as_bytes(), &mut check, &mut |f| findings.push(f)).unwrap();
    (summary, findings)
}

fn errors(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

#[test]
fn real_modules_pass_and_every_mutation_is_reported_at_its_line() {
    let records = records();
    let mut failures = Vec::new();
    let mut mutations = 0;
    for r in &records {
        let kind = r["kind"].as_str().unwrap();
        let id = r["id"].as_str().unwrap();
        let text = r["text"].as_str().unwrap();
        let (summary, findings) = scan(text);
        let errors = errors(&findings);
        match kind {
            "unchanged" => {
                assert!(r["ok"].as_bool().unwrap(), "{id}: XLA rejects it");
                if !errors.is_empty() || summary.shapes == 0 {
                    failures.push(format!("{id}: {} shapes, {errors:?}", summary.shapes));
                }
            }
            "non_shape" | "misspelled_type" | "bad_layout_syntax" | "invalid_layout" => {
                mutations += 1;
                if kind != "invalid_layout" {
                    assert!(!r["ok"].as_bool().unwrap(), "{id}: XLA accepts it");
                }
                let line = r["line"].as_u64().unwrap() as usize;
                let column = r["column"].as_u64().unwrap() as usize;
                let Some(first) = errors.first() else {
                    failures.push(format!("{id}: no error"));
                    continue;
                };
                // A broken layout is reported where the parser stops, later on the
                // line; the others where the shape starts.
                let place_ok = first.line == Some(line)
                    && (kind == "bad_layout_syntax" || first.column == Some(column));
                if !place_ok {
                    failures.push(format!(
                        "{id}: want {line}:{column}, first error {:?}:{:?} {}",
                        first.line, first.column, first.message
                    ));
                }
            }
            _ => {}
        }
    }
    assert!(mutations >= 600, "only {mutations} mutations");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The hand-written probes: XLA's verdict, except where it is not about a shape, a
/// layout or text that cannot be HLO (listed with the reason).
#[test]
fn probes_get_xlas_verdict() {
    let mut checked = 0;
    for r in records().iter().filter(|r| r["kind"] == "probe") {
        let id = r["id"].as_str().unwrap().trim_start_matches("probe/");
        let (summary, findings) = scan(r["text"].as_str().unwrap());
        let errors = errors(&findings);
        let xla_ok = r["ok"].as_bool().unwrap();
        let want_error = match id {
            // XLA's text parser keeps these layouts; its proto loader and verifier
            // reject them, and so does the gate.
            "entry-layout-duplicate-dim"
            | "result-duplicate-dim"
            | "operand-layout-constraints-duplicate-dim"
            | "layout-on-next-line-out-of-range" => true,
            // Semantic checks (operand types, constraint counts): not shapes.
            "operand-shape-mismatch" | "operand-layout-constraints-count" => false,
            // An operand count: not a shape.
            "operand-empty-only" => false,
            // XLA's parser drops an operand it cannot read, an invalid shape with it;
            // the gate reports the shape.
            "operand-shape-without-name-invalid" => true,
            // No module at all: no structure, no shapes (the CLI says so, exit 2).
            "empty-module" | "whitespace-module" | "header-only" => {
                assert_eq!(summary.shapes, 0, "{id}");
                assert!(errors.is_empty(), "{id}: {errors:?}");
                checked += 1;
                continue;
            }
            _ => !xla_ok,
        };
        assert_eq!(
            !errors.is_empty(),
            want_error,
            "{id}: XLA ok={xla_ok}, findings {findings:?}"
        );
        if !want_error {
            assert!(summary.shapes > 0, "{id}: no shapes");
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} probes");
}

/// XLA's text parser accepts an index type on a dense array; its proto loader does
/// not: a warning saying both, not an error.
#[test]
fn index_type_on_dense_array_is_a_warning() {
    let text = "HloModule m\n\nENTRY %e (x: f32[10,10]) -> f32[10,10] {\n  ROOT %x = f32[10,10]{1,0:#(u32)} parameter(0)\n}\n";
    let (_, findings) = scan(text);
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(
        (f.code, f.severity),
        ("text_only_layout", Severity::Warning)
    );
    assert_eq!((f.line, f.column), (Some(4), Some(13)));
    assert!(
        f.message.contains("text parser accepts") && f.message.contains("proto loader rejects")
    );
    assert_eq!(f.instruction.as_deref(), Some("x"));
    assert_eq!(f.computation.as_deref(), Some("e"));
}

/// A custom call's `literal=` shapes, listed from the text, are those listed from the
/// module XLA parsed from it (its `HloModuleProto`, in the probe's `proto`): the same
/// instructions, in the same order, with the same text.
#[test]
fn literal_shapes_are_listed_as_from_xlas_module() {
    use xla_shape::guard::listing::{read_bytes, ReadOptions};
    let literal_entries = |name: &str, bytes: &[u8]| -> Vec<String> {
        let listings = read_bytes(name, bytes, &ReadOptions::default()).unwrap();
        listings
            .iter()
            .flat_map(|l| &l.entries)
            .filter_map(|e| {
                let location = e.location(true)?;
                location
                    .contains(" literal")
                    .then(|| format!("{location}: {}", e.text))
            })
            .collect()
    };
    let mut compared = 0;
    for r in records().iter().filter(|r| r["kind"] == "probe") {
        let (Some(text), Some(proto)) = (r["text"].as_str(), r["proto"].as_str()) else {
            continue;
        };
        if !text.contains("literal=") {
            continue;
        }
        let proto = hex::decode(proto).unwrap();
        let from_text = literal_entries("text", text.as_bytes());
        let from_xla = literal_entries("proto", &proto);
        assert_eq!(from_text, from_xla, "{}", r["id"]);
        compared += usize::from(!from_text.is_empty());
    }
    assert!(compared >= 3, "only {compared} probes with literal shapes");
}

/// The module proto walk names each instruction's operands and callees as the text
/// scan reads them from the same module's text, in order, repeats too (an id given
/// again is held as which name it repeats): every module proto in `fixtures/` that XLA
/// wrote beside its text (`X.hlo.pb` and `X.hlo.txt` or `X.txt`).
#[test]
fn proto_operands_and_callees_are_named_as_the_text_names_them() {
    type Seen = std::collections::BTreeMap<(String, String), (String, Vec<String>, Vec<String>)>;
    fn keep(seen: &mut Seen, site: &module::InstructionSite<'_>) {
        let key = (
            site.computation.unwrap_or("").to_string(),
            site.name.to_string(),
        );
        let value = (
            site.opcode.to_string(),
            site.operands.to_vec(),
            site.calls.to_vec(),
        );
        assert!(seen.insert(key, value).is_none(), "{} twice", site.name);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut protos = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            match path.to_str() {
                _ if path.is_dir() => dirs.push(path),
                Some(p) if p.ends_with(".hlo.pb") => protos.push(path),
                _ => {}
            }
        }
    }
    let (mut pairs, mut repeats) = (0, 0);
    for proto in protos {
        let stem = proto
            .to_str()
            .unwrap()
            .trim_end_matches(".hlo.pb")
            .to_string();
        let Some(text) = [format!("{stem}.hlo.txt"), format!("{stem}.txt")]
            .into_iter()
            .find(|t| Path::new(t).is_file())
        else {
            continue;
        };
        let (mut from_proto, mut from_text) = (Seen::new(), Seen::new());
        let bytes = std::fs::read(&proto).unwrap();
        module::walk_proto(
            &bytes,
            &mut |_, _| {},
            &mut |site| keep(&mut from_proto, site),
            &mut |f| panic!("{}: {f:?}", proto.display()),
        )
        .unwrap();
        let reader = std::io::BufReader::new(std::fs::File::open(&text).unwrap());
        module::scan_text_instructions(
            reader,
            &mut |_, _| {},
            &mut |site| keep(&mut from_text, site),
            &mut |_| {},
        )
        .unwrap();
        assert!(!from_proto.is_empty(), "{text}");
        assert_eq!(from_proto, from_text, "{text}");
        pairs += 1;
        repeats += from_proto
            .values()
            .filter(|(_, operands, _)| {
                operands
                    .iter()
                    .collect::<std::collections::HashSet<_>>()
                    .len()
                    < operands.len()
            })
            .count();
    }
    assert_eq!(pairs, 30);
    assert!(repeats > 0, "no instruction gives an operand twice");
}
