//! HLO text speed: scanning and validating a ~100 MB module dump built from the real
//! modules in `fixtures/modules`, each of the largest real module texts in
//! `fixtures/dumps` and `fixtures/modules` on its own, and parsing/printing single
//! shapes.
//!
//! XLA's own parser on the same bytes: `python3 benches/xla_parse_time.py`.
//!
//! `XLA_SHAPE_BENCH_HLO=PATH[:PATH...]` adds a scan of each of those module texts
//! (say XLA's own large benchmark modules), for dumps too big to keep in the repository.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::text::{self, module};

/// The real module texts, repeated in order until the dump reaches `target` bytes (the
/// same rule as `benches/xla_parse_time.py`).
fn dump(target: usize) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/modules")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".hlo.txt"))
        .collect();
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(!texts.is_empty(), "no modules in {}", dir.display());
    let mut out = String::with_capacity(target + 16 * 1024);
    while out.len() < target {
        for text in &texts {
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// The `count` largest real module texts: `fixtures/modules/*.hlo.txt` and the module
/// texts XLA dumped into `fixtures/dumps` (`*optimizations.txt`; the buffer
/// assignment and memory reports beside them are not modules).
fn largest_real(count: usize) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("modules"), root.join("dumps")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures").flatten() {
            let path = entry.path();
            let name = path.to_string_lossy();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".hlo.txt") || name.ends_with("optimizations.txt") {
                let size = entry.metadata().map_or(0, |m| m.len());
                files.push((size, path));
            }
        }
    }
    // Largest first; equal sizes by path, so the choice does not change between runs.
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files.into_iter().take(count).map(|(_, p)| p).collect()
}

/// Scans and validates `text`, returning the findings' count with the summary.
fn scan_once(text: &str) -> (usize, module::Summary) {
    let mut findings = 0usize;
    // What `xla-shape validate` runs: every shape validated, each distinct text once.
    let summary = module::scan_text_validated(text.as_bytes(), &mut |_| findings += 1).unwrap();
    (findings, summary)
}

fn scan(c: &mut Criterion) {
    let dump = dump(100 << 20);
    let mut group = c.benchmark_group("module_text");
    group.throughput(Throughput::Bytes(dump.len() as u64));
    group.sample_size(10);
    group.bench_function("scan_and_validate_100MB", |b| {
        b.iter(|| {
            let (findings, summary) = scan_once(&dump);
            assert_eq!(findings, 0);
            black_box(summary)
        })
    });
    group.finish();

    let mut real: Vec<(String, String)> = largest_real(3)
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let parent = path.parent().and_then(Path::file_name).unwrap_or_default();
            (
                format!("{}/{name}", parent.to_string_lossy()),
                std::fs::read_to_string(&path).unwrap(),
            )
        })
        .collect();
    if let Some(paths) = std::env::var_os("XLA_SHAPE_BENCH_HLO") {
        for path in std::env::split_paths(&paths) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("XLA_SHAPE_BENCH_HLO: {}: {e}", path.display()));
            real.push((name.into_owned(), text));
        }
    }
    let mut group = c.benchmark_group("module_text_real");
    for (name, text) in &real {
        let (expected, _) = scan_once(text);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.sample_size(if text.len() > 1 << 20 { 10 } else { 100 });
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                let (findings, summary) = scan_once(text);
                assert_eq!(findings, expected);
                black_box(summary)
            })
        });
    }
    group.finish();
}

fn single(c: &mut Criterion) {
    let input = "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}";
    let shape = text::parse_shape(input).unwrap();
    let mut group = c.benchmark_group("shape_text");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("parse", |b| b.iter(|| text::parse_shape(black_box(input))));
    group.bench_function("print", |b| b.iter(|| text::print_shape(black_box(&shape))));
    group.finish();
}

criterion_group!(benches, scan, single);
criterion_main!(benches);
