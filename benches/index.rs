//! The layout indexing engine's speed.
//!
//! - `physical_order`: a pass over every element of an f32[256,256,256] in memory
//!   order, reading each element's slot from [`LayoutPlan::physical_order`] and summing
//!   the buffer there, in three layouts, both with `next()` (a `for` loop) and with
//!   `fold` (internal iteration, a tight loop per run); beside a plain sequential sum
//!   of the same buffer (the floor: same additions, no indexing).
//! - `linearize`: multi-dimensional → linear index for 4096 random indices of an
//!   f32[256,256,256] (untiled) and a bf16[256,256,256]{2,1,0:T(8,128)(2,1)}; beside a
//!   naive per-element version of the same formula (`IndexUtil`'s multiply-adds for the
//!   untiled layout; for the tiled one, a division and a modulo per dimension and tile
//!   level with runtime sizes, staged as `tiled_layout.md` describes).
//!
//! - `strides`: every dimension's stride of an untiled f32 shape of rank 10,000 (all
//!   sizes 1 but the first 20, a reversed layout, as `explain` of a huge rank asks for
//!   them), in one pass (`LayoutPlan::element_strides`); beside the per-dimension
//!   lookup it was built from before (`xla_dimension_stride` of each dimension, a walk
//!   of the layout each: quadratic in the rank; `explain` of a rank-340,000 shape took
//!   122 s in it).
//!
//! Throughput is in elements (dimensions for `strides`), so criterion's time per
//! element is the figure.
//!
//! `cargo bench --bench index -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::index::LayoutPlan;
use xla_shape::proto::{LayoutProto, PrimitiveType, ShapeProto, TileProto};
use xla_shape::validate::{validate_shape_with, Options};

const N: u64 = 256;

fn plan(ty: PrimitiveType, m2m: &[i64], tiles: &[&[i64]]) -> LayoutPlan {
    let proto = ShapeProto {
        element_type: ty as i32,
        dimensions: vec![N as i64; 3],
        layout: Some(Box::new(LayoutProto {
            minor_to_major: m2m.to_vec(),
            tiles: tiles
                .iter()
                .map(|t| TileProto {
                    dimensions: t.to_vec(),
                })
                .collect(),
            ..Default::default()
        })),
        ..Default::default()
    };
    let shape = validate_shape_with(&proto, Options::hlo_text())
        .into_result()
        .expect("valid shape");
    LayoutPlan::new(shape.as_array().expect("array")).expect("plan")
}

/// (name, minor_to_major, tiles).
type Case<'a> = (&'a str, &'a [i64], &'a [&'a [i64]]);

fn physical_order(c: &mut Criterion) {
    let layouts: [Case; 3] = [
        ("f32[256,256,256]{2,1,0}", &[2, 1, 0], &[]),
        ("f32[256,256,256]{0,2,1}", &[0, 2, 1], &[]),
        ("f32[256,256,256]{2,1,0:T(8,128)}", &[2, 1, 0], &[&[8, 128]]),
    ];
    let buffer: Vec<f32> = (0..N * N * N).map(|i| (i % 7) as f32).collect();
    let mut group = c.benchmark_group("physical_order");
    group.throughput(Throughput::Elements(N * N * N));
    group.sample_size(10);
    group.bench_function("sequential sum (baseline)", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for &x in black_box(&buffer) {
                sum += x;
            }
            sum
        })
    });
    for (name, m2m, tiles) in layouts {
        let plan = plan(PrimitiveType::F32, m2m, tiles);
        assert_eq!(plan.allocated_elements(), N * N * N);
        group.bench_function(format!("{name} next"), |b| {
            b.iter(|| {
                let mut sum = 0.0f32;
                for (slot, _) in black_box(&plan).physical_order() {
                    sum += buffer[slot as usize];
                }
                sum
            })
        });
        group.bench_function(format!("{name} fold"), |b| {
            b.iter(|| {
                black_box(&plan)
                    .physical_order()
                    .fold(0.0f32, |sum, (slot, _)| sum + buffer[slot as usize])
            })
        });
    }
    group.finish();
}

/// A small deterministic generator (xorshift), so runs see the same indices.
fn random_indices(count: usize) -> Vec<[u64; 3]> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % N
    };
    (0..count).map(|_| [next(), next(), next()]).collect()
}

/// The naive untiled formula: `IndexUtil`'s multiply-adds, runtime sizes.
fn naive_untiled(dims: &[u64], m2m: &[usize], idx: &[u64]) -> u64 {
    let mut linear = 0;
    for &d in m2m.iter().rev() {
        linear = linear * dims[d] + idx[d];
    }
    linear
}

/// The naive tiled formula: per tile level, a division and a modulo per covered
/// dimension with runtime sizes (tiles no longer than the shape, no `*`), on fixed
/// stack arrays (rank ≤ 16 after tiling).
fn naive_tiled(physical: &[u64], tiles: &[Vec<u64>], idx: &[u64]) -> u64 {
    let mut shape = [0u64; 16];
    let mut index = [0u64; 16];
    let mut rank = physical.len();
    shape[..rank].copy_from_slice(physical);
    index[..rank].copy_from_slice(idx);
    for tile in tiles {
        let r = tile.len();
        let start = rank - r;
        let (mut next_shape, mut next_index) = (shape, index);
        for (k, &t) in tile.iter().enumerate() {
            next_shape[start + k] = shape[start + k].div_ceil(t);
            next_index[start + k] = index[start + k] / t;
            next_shape[start + r + k] = t;
            next_index[start + r + k] = index[start + k] % t;
        }
        shape = next_shape;
        index = next_index;
        rank += r;
    }
    (0..rank).fold(0, |acc, k| acc * shape[k] + index[k])
}

fn linearize(c: &mut Criterion) {
    let indices = random_indices(4096);
    let mut group = c.benchmark_group("linearize");
    group.throughput(Throughput::Elements(indices.len() as u64));

    let untiled = plan(PrimitiveType::F32, &[2, 1, 0], &[]);
    let dims = [N; 3];
    let m2m = [2usize, 1, 0];
    for idx in &indices {
        assert_eq!(
            untiled.linear_index(idx).unwrap(),
            naive_untiled(&dims, &m2m, idx)
        );
    }
    group.bench_function("f32[256,256,256]{2,1,0} plan", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for idx in black_box(&indices) {
                acc ^= untiled.linear_index(idx).unwrap_or(0);
            }
            acc
        })
    });
    group.bench_function("f32[256,256,256]{2,1,0} naive", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for idx in black_box(&indices) {
                acc ^= naive_untiled(black_box(&dims), black_box(&m2m), idx);
            }
            acc
        })
    });

    let tiled = plan(PrimitiveType::Bf16, &[2, 1, 0], &[&[8, 128], &[2, 1]]);
    let tiles = vec![vec![8u64, 128], vec![2, 1]];
    for idx in &indices {
        assert_eq!(
            tiled.linear_index(idx).unwrap(),
            naive_tiled(&dims, &tiles, idx)
        );
    }
    group.bench_function("bf16[256,256,256]{2,1,0:T(8,128)(2,1)} plan", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for idx in black_box(&indices) {
                acc ^= tiled.linear_index(idx).unwrap_or(0);
            }
            acc
        })
    });
    group.bench_function("bf16[256,256,256]{2,1,0:T(8,128)(2,1)} naive", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for idx in black_box(&indices) {
                acc ^= naive_tiled(black_box(&dims), black_box(&tiles), idx);
            }
            acc
        })
    });
    group.finish();
}

fn strides(c: &mut Criterion) {
    const RANK: usize = 10_000;
    let proto = ShapeProto {
        element_type: PrimitiveType::F32 as i32,
        dimensions: (0..RANK).map(|k| if k < 20 { 2 } else { 1 }).collect(),
        layout: Some(Box::new(LayoutProto {
            minor_to_major: (0..RANK as i64).rev().collect(),
            ..Default::default()
        })),
        ..Default::default()
    };
    let shape = validate_shape_with(&proto, Options::hlo_text())
        .into_result()
        .expect("valid shape");
    let p = LayoutPlan::new(shape.as_array().expect("array")).expect("plan");
    let one_pass = p.element_strides();
    let per_dimension: Option<Vec<u64>> = (0..RANK).map(|k| p.xla_dimension_stride(k)).collect();
    assert_eq!(one_pass, per_dimension);
    let mut group = c.benchmark_group("strides");
    group.throughput(Throughput::Elements(RANK as u64));
    group.bench_function("element_strides (one pass)", |b| {
        b.iter(|| black_box(&p).element_strides())
    });
    group.bench_function("baseline: xla_dimension_stride per dimension", |b| {
        b.iter(|| {
            (0..RANK)
                .map(|k| black_box(&p).xla_dimension_stride(k))
                .collect::<Option<Vec<u64>>>()
        })
    });
    group.finish();
}

criterion_group!(benches, physical_order, linearize, strides);
criterion_main!(benches);
