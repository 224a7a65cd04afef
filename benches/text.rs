//! HLO text speed: scanning and validating a ~50 MB module dump built from the real
//! modules in `fixtures/modules`, and parsing/printing single shapes.
//!
//! XLA's own parser on the same bytes: `python3 benches/xla_parse_time.py`.

use std::hint::black_box;
use std::path::Path;

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

fn scan(c: &mut Criterion) {
    let dump = dump(50 << 20);
    let mut group = c.benchmark_group("module_text");
    group.throughput(Throughput::Bytes(dump.len() as u64));
    group.sample_size(10);
    group.bench_function("scan_and_validate_50MB", |b| {
        b.iter(|| {
            let mut errors = 0usize;
            let mut check = module::validate_text;
            let summary =
                module::scan_text(dump.as_bytes(), &mut check, &mut |_| errors += 1).unwrap();
            assert_eq!(errors, 0);
            black_box(summary)
        })
    });
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
