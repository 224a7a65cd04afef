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
