//! Validation throughput over every real fixture message (`fixtures/messages.jsonl`):
//! decode alone (the codec, keeping unknown fields) beside decode + validate (the
//! gate, with the unknown-field listing), and the gate alone on decoded messages. One
//! iteration handles every message; criterion's throughput is messages per second.
//!
//! `cargo bench --bench validate -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::codec::{decode_any, Decoded};
use xla_shape::validate::{validate_decoded, Options};
use xla_shape::{AnyMessage, MessageKind};

mod common;

/// The fixture messages the codec reads, or f32[2,3]{1,0} alone when they are missing.
fn corpus() -> Vec<(MessageKind, Vec<u8>)> {
    let corpus = common::fixture_messages();
    if corpus.is_empty() {
        return vec![(MessageKind::Shape, common::f32_2x3())];
    }
    corpus
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let bytes: usize = corpus.iter().map(|(_, b)| b.len()).sum();
    let decoded: Vec<Decoded<AnyMessage>> = corpus
        .iter()
        .filter_map(|(kind, b)| decode_any(*kind, b).ok())
        .collect();
    let issues: usize = decoded
        .iter()
        .map(|d| validate_decoded(d, Options::proto()).issues().len())
        .sum();
    eprintln!(
        "corpus: {} messages, {bytes} bytes, {issues} problems found in one pass",
        corpus.len()
    );
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Elements(corpus.len() as u64));
    group.bench_function("decode", |b| {
        b.iter(|| {
            for (kind, bytes) in &corpus {
                let _ = black_box(decode_any(*kind, black_box(bytes)));
            }
        })
    });
    group.bench_function("decode+validate", |b| {
        b.iter(|| {
            for (kind, bytes) in &corpus {
                if let Ok(decoded) = decode_any(*kind, black_box(bytes)) {
                    black_box(validate_decoded(&decoded, Options::proto()));
                }
            }
        })
    });
    group.bench_function("validate", |b| {
        b.iter(|| {
            for decoded in &decoded {
                black_box(validate_decoded(black_box(decoded), Options::proto()));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
