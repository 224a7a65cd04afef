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
