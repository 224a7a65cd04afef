//! Decode and encode throughput of the codec over every real fixture message
//! (`fixtures/messages.jsonl`), beside prost's own `Message::decode`/`encode` of the
//! same bytes (which drop unknown fields). One iteration handles every message; the
//! throughput is in bytes, and messages/s is the message count printed at the start
//! divided by the time per iteration.
//!
//! `cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prost::Message;
use xla_shape::codec::{self, decode_any, encode_any};
use xla_shape::proto::ShapeProto;
use xla_shape::{AnyMessage, MessageKind};

mod common;

/// The fixture messages, or a small built-in set when the fixtures are missing.
fn corpus() -> Vec<(MessageKind, Vec<u8>)> {
    // Only messages both decoders accept, so that both do the same work.
    let mut corpus: Vec<_> = common::fixture_messages()
        .into_iter()
        .filter(|(kind, bytes)| common::prost_decode(*kind, bytes).is_some())
        .collect();
    if corpus.is_empty() {
        corpus = builtin();
    }
    corpus
}

/// f32[2,3]{1,0} and a tiled bf16 layout as XLA writes them, in tuples of growing size.
fn builtin() -> Vec<(MessageKind, Vec<u8>)> {
    let f32_2x3 = common::f32_2x3();
    let mut corpus = vec![(MessageKind::Shape, f32_2x3.clone())];
    for n in 1..=16 {
        let tuple = ShapeProto {
            element_type: 13,
            tuple_shapes: vec![codec::decode_shape(&f32_2x3).expect("builtin").message; n],
            ..Default::default()
        };
        corpus.push((MessageKind::Shape, codec::encode(&tuple)));
    }
    let layout = hex::decode(
        "0a0201003205 0a0308800132040a020201380440018001018a0106080112028004".replace(' ', ""),
    )
    .expect("builtin hex");
    corpus.push((MessageKind::Layout, layout));
    corpus
}

fn prost_encode(message: &AnyMessage) -> Vec<u8> {
    match message {
        AnyMessage::Shape(m) => m.encode_to_vec(),
        AnyMessage::Layout(m) => m.encode_to_vec(),
        AnyMessage::ProgramShape(m) => m.encode_to_vec(),
    }
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let total: usize = corpus.iter().map(|(_, b)| b.len()).sum();
    eprintln!(
        "codec bench corpus: {} messages, {total} bytes",
        corpus.len()
    );

    let ours: Vec<_> = corpus
        .iter()
        .map(|(kind, bytes)| decode_any(*kind, bytes).expect("corpus decodes"))
        .collect();
    let theirs: Vec<_> = corpus
        .iter()
        .map(|(kind, bytes)| common::prost_decode(*kind, bytes).expect("corpus decodes"))
        .collect();

    let mut group = c.benchmark_group("codec");
    group.throughput(Throughput::Bytes(total as u64));
    group.bench_function("decode/xla-shape", |b| {
        b.iter(|| {
            for (kind, bytes) in &corpus {
                black_box(decode_any(*kind, black_box(bytes)).ok());
            }
        })
    });
    group.bench_function("decode/prost", |b| {
        b.iter(|| {
            for (kind, bytes) in &corpus {
                black_box(common::prost_decode(*kind, black_box(bytes)));
            }
        })
    });
    group.bench_function("encode/xla-shape", |b| {
        b.iter(|| {
            for decoded in &ours {
                black_box(encode_any(black_box(decoded)));
            }
        })
    });
    group.bench_function("encode/prost", |b| {
        b.iter(|| {
            for message in &theirs {
                black_box(prost_encode(black_box(message)));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
