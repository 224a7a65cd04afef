//! Relayout speed on 64 MiB arrays, side by side in one run: a plain `memcpy` of the
//! same bytes (`copy_from_slice`, the ceiling), the element-by-element reference
//! ([`Relayout::run_reference`], one `linear_index` per element and side) and the fast
//! path, on the calling thread ([`Relayout::run_in_parts`] with one part) and as
//! [`Relayout::run`] moves 64 MiB (pieces on rayon's pool, all cores), beside a `memcpy`
//! on all cores too (1 MiB chunks on the same pool), for
//!
//! - `f32 {1,0} -> {0,1}`: a transpose of f32[4096,4096];
//! - `f32 {1,0} -> {1,0:T(8,128)}`: tiling f32[4096,4096];
//! - `bf16 {1,0} -> {1,0:T(8,128)(2,1)}`: TPU tiling of bf16[4096,8192];
//! - `s4 {1,0:E(4)} -> {0,1:E(4)}`: a transpose of packed s4[8192,16384];
//! - `f32 rank-4`: f32[64,64,64,64]{3,2,1,0} -> {1,3,0,2}.
//!
//! Throughput is the array's bytes (64 MiB) per iteration, the same unit for all three,
//! so the GB/s are comparable: each reads the bytes once and writes them once.
//!
//! `cargo bench --bench relayout -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use xla_shape::relayout::Relayout;
use xla_shape::Shape;

const CASES: [(&str, &str, &str); 5] = [
    (
        "f32 {1,0}->{0,1}",
        "f32[4096,4096]{1,0}",
        "f32[4096,4096]{0,1}",
    ),
    (
        "f32 {1,0}->{1,0:T(8,128)}",
        "f32[4096,4096]{1,0}",
        "f32[4096,4096]{1,0:T(8,128)}",
    ),
    (
        "bf16 {1,0}->{1,0:T(8,128)(2,1)}",
        "bf16[4096,8192]{1,0}",
        "bf16[4096,8192]{1,0:T(8,128)(2,1)}",
    ),
    (
        "s4 {1,0:E(4)}->{0,1:E(4)}",
        "s4[8192,16384]{1,0:E(4)}",
        "s4[8192,16384]{0,1:E(4)}",
    ),
    (
        "f32 rank-4 {3,2,1,0}->{1,3,0,2}",
        "f32[64,64,64,64]{3,2,1,0}",
        "f32[64,64,64,64]{1,3,0,2}",
    ),
];

fn array(text: &str) -> xla_shape::ArrayShape {
    match text.parse::<Shape>() {
        Ok(Shape::Array(a)) => a,
        other => panic!("{text}: {other:?}"),
    }
}

fn relayout(c: &mut Criterion) {
    for (name, from, to) in CASES {
        let r = Relayout::new(&array(from), &array(to)).expect("plan");
        let src: Vec<u8> = (0..r.source_bytes())
            .map(|i| (i * 7 + i / 4093) as u8)
            .collect();
        let mut dst = vec![0u8; r.destination_bytes()];
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        group.throughput(Throughput::Bytes(src.len() as u64));
        group.bench_function(BenchmarkId::from_parameter("memcpy"), |b| {
            b.iter(|| {
                dst[..src.len()].copy_from_slice(black_box(&src));
            });
        });
        group.bench_function(BenchmarkId::from_parameter("memcpy, all threads"), |b| {
            b.iter(|| {
                use rayon::prelude::*;
                dst[..src.len()]
                    .par_chunks_mut(1 << 20)
                    .zip(black_box(&src).par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            });
        });
        group.bench_function(BenchmarkId::from_parameter("fast, one thread"), |b| {
            b.iter(|| r.run_in_parts(black_box(&src), &mut dst, 1).expect("run"));
        });
        group.bench_function(BenchmarkId::from_parameter("fast"), |b| {
            b.iter(|| r.run(black_box(&src), &mut dst).expect("run"));
        });
        group.bench_function(BenchmarkId::from_parameter("element-by-element"), |b| {
            b.iter(|| r.run_reference(black_box(&src), &mut dst).expect("run"));
        });
        group.finish();
    }
}

criterion_group!(benches, relayout);
criterion_main!(benches);
