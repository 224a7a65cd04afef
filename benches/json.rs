//! Proto3 JSON encode and decode throughput over every real fixture message
//! (`fixtures/messages.jsonl`), beside the binary decode of the same messages (the
//! crate's codec, which keeps unknown fields, and prost's). One iteration handles every
//! message once; the throughput is in bytes of JSON (or of binary for the binary
//! decoders), and messages/s is the message count printed at the start divided by the
//! time per iteration.
//!
//! `cargo bench --bench json -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::codec::decode_any;
use xla_shape::json::{self, ParseOptions, PrintOptions};
use xla_shape::{AnyMessage, MessageKind};

mod common;

struct Corpus {
    kinds: Vec<MessageKind>,
    binary: Vec<Vec<u8>>,
    messages: Vec<AnyMessage>,
    json: Vec<String>,
}

/// The fixture messages (those every decoder reads, in binary and in JSON), or
/// f32[2,3]{1,0} alone.
fn corpus() -> Corpus {
    let mut rows = common::fixture_messages();
    if rows.is_empty() {
        rows.push((MessageKind::Shape, common::f32_2x3()));
    }
    let mut corpus = Corpus {
        kinds: Vec::new(),
        binary: Vec::new(),
        messages: Vec::new(),
        json: Vec::new(),
    };
    for (kind, bytes) in rows {
        let (Some(message), Ok(_)) = (common::prost_decode(kind, &bytes), decode_any(kind, &bytes))
        else {
            continue;
        };
        let text = json::to_json(&message, &PrintOptions::new());
        // A binary message may nest one level deeper than JSON input may (prost and
        // upb count from the top message's fields, json_format from the top message);
        // Google's parser refuses such JSON too.
        // serde_json (the reference below) stops at 128 nested arrays and objects.
        if json::from_json(kind, text.as_bytes(), &ParseOptions::new()).is_err()
            || serde_json::from_str::<serde_json::Value>(&text).is_err()
        {
            continue;
        }
        corpus.json.push(text);
        corpus.kinds.push(kind);
        corpus.binary.push(bytes);
        corpus.messages.push(message);
    }
    corpus
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let json_bytes: usize = corpus.json.iter().map(String::len).sum();
    let binary_bytes: usize = corpus.binary.iter().map(Vec::len).sum();
    println!(
        "corpus: {} messages, {} bytes of compact JSON, {} bytes of binary",
        corpus.messages.len(),
        json_bytes,
        binary_bytes
    );
    let parse = ParseOptions::new();
    let mut group = c.benchmark_group("json");

    group.throughput(Throughput::Bytes(json_bytes as u64));
    group.bench_function("encode (compact)", |b| {
        b.iter(|| {
            for message in &corpus.messages {
                black_box(json::to_json(black_box(message), &PrintOptions::new()));
            }
        })
    });
    group.bench_function("decode", |b| {
        b.iter(|| {
            for (kind, text) in corpus.kinds.iter().zip(&corpus.json) {
                black_box(
                    json::from_json(*kind, black_box(text.as_bytes()), &parse).expect("decodes"),
                );
            }
        })
    });
    group.bench_function("serde_json::Value parse (reference)", |b| {
        b.iter(|| {
            for text in &corpus.json {
                black_box(
                    serde_json::from_str::<serde_json::Value>(black_box(text)).expect("json"),
                );
            }
        })
    });

    group.throughput(Throughput::Bytes(binary_bytes as u64));
    group.bench_function("binary decode (codec)", |b| {
        b.iter(|| {
            for (kind, bytes) in corpus.kinds.iter().zip(&corpus.binary) {
                black_box(decode_any(*kind, black_box(bytes)).expect("decodes"));
            }
        })
    });
    group.bench_function("binary decode (prost)", |b| {
        b.iter(|| {
            for (kind, bytes) in corpus.kinds.iter().zip(&corpus.binary) {
                black_box(common::prost_decode(*kind, black_box(bytes)).expect("decodes"));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
