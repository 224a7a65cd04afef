//! The layout indexing engine against XLA's test vectors (xla-reference.md §5–§7, the
//! seeds' padding example) and against the independent reference transcription in
//! `tests/reference/`, exhaustively on small shapes and on random layouts.
//!
//! Every shape goes through the validation gate (`ShapeProto` → `ArrayShape`), as real
//! callers' shapes do.

mod reference;

use std::cmp::Ordering;
use std::collections::HashMap;

use proptest::prelude::*;
use reference::{all_indices, RefLayout};
use xla_shape::index::{
    compare_indices, layout_for_byte_strides, layout_for_strides, IndexError, LayoutPlan,
    PlanError, StrideError,
};
use xla_shape::proto::{LayoutProto, PrimitiveType as P, ShapeProto, SplitConfigProto, TileProto};
use xla_shape::validate::{validate_shape_with, Options};
use xla_shape::ArrayShape;

/// `*` in a tile.
const STAR: i64 = i64::MIN;

fn shape_proto(ty: P, dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> ShapeProto {
    ShapeProto {
        element_type: ty as i32,
        dimensions: dims.to_vec(),
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
    }
}

/// Through the validation gate, with the HLO text rules (which accept `*` in tiles).
#[track_caller]
fn plan_of(proto: &ShapeProto) -> LayoutPlan {
    let shape = validate_shape_with(proto, Options::hlo_text())
        .into_result()
        .unwrap();
    let array = shape.as_array().unwrap();
    let plan = LayoutPlan::new(array).unwrap();
    // The bytes alone, without the plan, are the plan's.
    let bytes = LayoutPlan::allocated_bytes_of(array).ok();
    assert_eq!(bytes, Some(plan.allocated_bytes()), "{proto:?}");
    plan
}

#[track_caller]
fn plan(ty: P, dims: &[i64], m2m: &[i64], tiles: &[&[i64]]) -> LayoutPlan {
    plan_of(&shape_proto(ty, dims, m2m, tiles))
}

#[track_caller]
fn plan_with(
    ty: P,
    dims: &[i64],
    m2m: &[i64],
    tiles: &[&[i64]],
    edit: impl FnOnce(&mut LayoutProto),
) -> LayoutPlan {
    let mut proto = shape_proto(ty, dims, m2m, tiles);
    edit(proto.layout.as_mut().unwrap());
    plan_of(&proto)
}

fn lin(plan: &LayoutPlan, idx: &[u64]) -> u64 {
    plan.linear_index(idx).unwrap()
}

// ------------------------------------------------------------ §7 rows 1–15: IndexUtil

#[test]
fn index_util_vectors() {
    // 1. VectorIndexing.
    let p = plan(P::F32, &[100], &[0], &[]);
    assert_eq!(lin(&p, &[42]), 42);
    assert_eq!(p.multi_index(42).unwrap(), Some(vec![42]));
    // 2–4. f32[10,20]{0,1}.
    let p = plan(P::F32, &[10, 20], &[0, 1], &[]);
    assert_eq!(lin(&p, &[0, 0]), 0);
    assert_eq!(lin(&p, &[9, 19]), 199);
    assert_eq!(lin(&p, &[3, 5]), 53);
    assert_eq!(p.multi_index(53).unwrap(), Some(vec![3, 5]));
    // 5–6. f32[10,20]{1,0}.
    let p = plan(P::F32, &[10, 20], &[1, 0], &[]);
    assert_eq!(lin(&p, &[0, 0]), 0);
    assert_eq!(lin(&p, &[9, 19]), 199);
    assert_eq!(lin(&p, &[3, 5]), 65);
    assert_eq!(p.multi_index(65).unwrap(), Some(vec![3, 5]));
    // 7–8. f32[10,20,30]{2,1,0}.
    let p = plan(P::F32, &[10, 20, 30], &[2, 1, 0], &[]);
    assert_eq!(lin(&p, &[3, 5, 7]), 1957);
    assert_eq!(lin(&p, &[8, 15, 27]), 5277);
    // 9–10. f32[10,20,30]{1,2,0}.
    let p = plan(P::F32, &[10, 20, 30], &[1, 2, 0], &[]);
    assert_eq!(lin(&p, &[3, 5, 7]), 1945);
    assert_eq!(lin(&p, &[8, 15, 27]), 5355);
    // 11–12. f32[10,20,30,40]{3,2,1,0}.
    let p = plan(P::F32, &[10, 20, 30, 40], &[3, 2, 1, 0], &[]);
    assert_eq!(lin(&p, &[3, 5, 7, 9]), 78289);
    assert_eq!(lin(&p, &[8, 15, 27, 33]), 211113);
}

#[test]
fn linear_to_multi_to_linear() {
    // 13. f32[10,20,30,40,30,20,10] in three layouts.
    let dims = [10, 20, 30, 40, 30, 20, 10];
    let layouts: [(&[i64], [u64; 7]); 3] = [
        (&[6, 5, 4, 3, 2, 1, 0], [7, 19, 3, 7, 26, 13, 6]),
        (&[0, 1, 2, 3, 4, 5, 6], [6, 13, 26, 7, 3, 19, 7]),
        (&[4, 5, 1, 2, 6, 0, 3], [8, 18, 3, 31, 26, 17, 2]),
    ];
    for (m2m, at_1145567336) in layouts {
        let p = plan(P::F32, &dims, m2m, &[]);
        for linear in [0, 1439999999, 1145567336, 43883404, 617295214, 1117613654] {
            let idx = p.multi_index(linear).unwrap().unwrap();
            assert_eq!(lin(&p, &idx), linear);
        }
        assert_eq!(
            p.multi_index(1145567336).unwrap(),
            Some(at_1145567336.to_vec())
        );
        assert_eq!(
            p.multi_index(1440000000).unwrap_err(),
            IndexError::LinearOutOfRange {
                linear: 1440000000,
                size: 1440000000
            }
        );
    }
}

#[test]
fn bump_compare_in_bounds_and_dimension_stride() {
    // 14. BumpIndices on s32[2,2].
    let p = plan(P::S32, &[2, 2], &[1, 0], &[]);
    let mut idx = vec![0, 0];
    let mut seen = vec![];
    while p.bump_indices(&mut idx) {
        seen.push(idx.clone());
    }
    assert_eq!(seen, [vec![0, 1], vec![1, 0], vec![1, 1]]);
    assert_eq!(idx, [1, 1]);
    // Logical order is bump order, whatever the layout.
    let q = plan(P::S32, &[2, 2], &[0, 1], &[]);
    let mut it = q.logical_order();
    let mut order = vec![];
    while let Some(slot) = it.next() {
        order.push((it.index().to_vec(), slot));
    }
    assert_eq!(
        order,
        [
            (vec![0, 0], 0),
            (vec![0, 1], 2),
            (vec![1, 0], 1),
            (vec![1, 1], 3)
        ]
    );
    // 15. GetDimensionStride(F32[5,8,10,4]{3,2,1,0}, 1) = 40.
    let p = plan(P::F32, &[5, 8, 10, 4], &[3, 2, 1, 0], &[]);
    assert_eq!(p.xla_dimension_stride(1), Some(40));
    assert_eq!(p.xla_dimension_stride(4), None);
    // CompareIndices: -1 when lhs < rhs (the code, not the header comment).
    assert_eq!(compare_indices(&[1, 2], &[1, 3]), Ok(Ordering::Less));
    assert_eq!(compare_indices(&[2, 0], &[1, 3]), Ok(Ordering::Greater));
    assert_eq!(compare_indices(&[1, 3], &[1, 3]), Ok(Ordering::Equal));
    assert!(compare_indices(&[1], &[1, 3]).is_err());
    // IndexInBounds.
    assert!(p.index_in_bounds(&[4, 7, 9, 3]));
    assert!(!p.index_in_bounds(&[5, 0, 0, 0]));
    assert!(!p.index_in_bounds(&[0, 0, 0]));
}

#[test]
fn index_errors_are_clear() {
    let p = plan(P::F32, &[3, 5], &[1, 0], &[&[2, 2]]);
    assert_eq!(
        p.linear_index(&[1]).unwrap_err().to_string(),
        "index has 1 coordinates, but the shape has 2 dimensions"
    );
    assert_eq!(
        p.linear_index(&[3, 0]).unwrap_err().to_string(),
        "index 3 is out of bounds for dimension 0 of size 3"
    );
    assert_eq!(
        p.multi_index(24).unwrap_err().to_string(),
        "linear index 24 is beyond the buffer of 24 elements"
    );
    // Slot 11 is padding in figure 1 (row 1, column 5 of the padded 4x6).
    assert_eq!(p.multi_index(11).unwrap(), None);
}

// ------------------------------------------------------------ §5.2 and §7 rows 60–79

#[test]
fn tiled_layout_figures() {
    // 75. Figure 1: f32[3,5]{1,0:T(2,2)}.
    let p = plan(P::F32, &[3, 5], &[1, 0], &[&[2, 2]]);
    assert_eq!(lin(&p, &[2, 3]), 17);
    let map: Vec<Vec<u64>> = (0..3)
        .map(|i| (0..5).map(|j| lin(&p, &[i, j])).collect())
        .collect();
    assert_eq!(
        map,
        [
            vec![0, 1, 4, 5, 8],
            vec![2, 3, 6, 7, 10],
            vec![12, 13, 16, 17, 20]
        ]
    );
    assert_eq!(p.allocated_elements(), 24);
    assert_eq!(p.allocated_bytes(), 96);
    // Figure 2: 4x8 T(2,4)(2,1).
    let p = plan(P::Bf16, &[4, 8], &[1, 0], &[&[2, 4], &[2, 1]]);
    let rows: Vec<Vec<u64>> = (0..4)
        .map(|i| (0..8).map(|j| lin(&p, &[i, j])).collect())
        .collect();
    let even: Vec<u64> = (0..8).map(|j| 2 * j).collect();
    let odd: Vec<u64> = (0..8).map(|j| 2 * j + 1).collect();
    assert_eq!(rows[0], even);
    assert_eq!(rows[1], odd);
    assert_eq!(rows[2], even.iter().map(|x| x + 16).collect::<Vec<_>>());
    assert_eq!(rows[3], odd.iter().map(|x| x + 16).collect::<Vec<_>>());
    // 76. Draft doc: 8x8 T(2,4)(2,1,1,1), element (6,5) at 51.
    let p = plan(P::Bf16, &[8, 8], &[1, 0], &[&[2, 4], &[2, 1, 1, 1]]);
    assert_eq!(lin(&p, &[6, 5]), 51);
    assert_eq!(p.multi_index(51).unwrap(), Some(vec![6, 5]));
}

#[test]
fn layout_util_vectors() {
    // 60. f32[8,4]{1,0:T(2,2)}, (3,1): 11 tiled, 13 untiled.
    assert_eq!(
        lin(&plan(P::F32, &[8, 4], &[1, 0], &[&[2, 2]]), &[3, 1]),
        11
    );
    assert_eq!(lin(&plan(P::F32, &[8, 4], &[1, 0], &[]), &[3, 1]), 13);
    // 61. bf16[2048]{0:T(1024)(128)(2,1)}: [0]→0, [128]→1, [1]→2 and back.
    let p = plan(P::Bf16, &[2048], &[0], &[&[1024], &[128], &[2, 1]]);
    for (idx, linear) in [(0, 0), (128, 1), (1, 2)] {
        assert_eq!(lin(&p, &[idx]), linear);
        assert_eq!(p.multi_index(linear).unwrap(), Some(vec![idx]));
    }
    // 62. bf16[2,8,128]{2,1,0:T(8,128)(2,1)}: [0,0,0]→0, [0,2,0]→256 and back.
    let p = plan(P::Bf16, &[2, 8, 128], &[2, 1, 0], &[&[8, 128], &[2, 1]]);
    for (idx, linear) in [([0, 0, 0], 0), ([0, 2, 0], 256)] {
        assert_eq!(lin(&p, &idx), linear);
        assert_eq!(p.multi_index(linear).unwrap(), Some(idx.to_vec()));
    }
    // 63. IsUntiledLayout: true, true, false.
    let tiled = |dims: &[i64], tile: &[i64]| {
        let m2m: Vec<i64> = (0..dims.len() as i64).rev().collect();
        plan(P::F32, dims, &m2m, &[tile])
    };
    let p = tiled(&[24, 128], &[8, 128]);
    assert!(p.is_untiled_equivalent());
    assert_eq!(p.element_strides(), Some(vec![128, 1]));
    let p = tiled(&[4, 256], &[1, 128]);
    assert!(p.is_untiled_equivalent());
    assert_eq!(p.element_strides(), Some(vec![256, 1]));
    // Padded by the tile, but still strided: rows of 128, planes of 8 rows.
    let p = tiled(&[2, 3, 4], &[8, 128]);
    assert!(!p.is_untiled_equivalent());
    assert_eq!(p.element_strides(), Some(vec![1024, 128, 1]));
    // Figure 1 reorders elements: no strides.
    assert_eq!(tiled(&[3, 5], &[2, 2]).element_strides(), None);
}

#[test]
fn seeds_padding_example() {
    // [2 x 3] `a b c / d e f`, minor_to_major [0,1], padded to [3,5]:
    // memory `a d 0 b e 0 c f 0 0 0 0 0 0 0`.
    let p = plan_with(P::F32, &[2, 3], &[0, 1], &[], |l| {
        l.padded_dimensions = vec![3, 5];
    });
    let names = [(b'a', [0, 0]), (b'b', [0, 1]), (b'c', [0, 2])]
        .into_iter()
        .chain([(b'd', [1, 0]), (b'e', [1, 1]), (b'f', [1, 2])]);
    let mut memory = vec![b'0'; p.allocated_elements() as usize];
    for (name, idx) in names {
        memory[lin(&p, &idx) as usize] = name;
    }
    assert_eq!(memory, b"ad0be0cf0000000");
    assert_eq!(p.multi_index(2).unwrap(), None);
    assert_eq!(p.element_strides(), Some(vec![1, 3]));
    // The same memory as f32[3,5]{0,1} holding `a b c 0 0 / d e f 0 0 / 0 0 0 0 0`.
    let q = plan(P::F32, &[3, 5], &[0, 1], &[]);
    for (i, j) in [(0, 0), (1, 2), (0, 1)] {
        assert_eq!(lin(&p, &[i, j]), lin(&q, &[i, j]));
    }
    // The strides say which layout: minor_to_major {0,1} with dimension 0 padded to 3.
    let back = layout_for_strides(&[2, 3], &[1, 3]).unwrap();
    assert_eq!(back.minor_to_major, [0, 1]);
    assert_eq!(back.padded_dimensions, Some(vec![3, 3]));
    // 77. Old ByteSizeOf: f32[10,20] padded to [15,21] is 1260 bytes.
    let p = plan_with(P::F32, &[10, 20], &[1, 0], &[], |l| {
        l.padded_dimensions = vec![15, 21];
    });
    assert_eq!(p.xla_byte_size_of(), 1260);
    assert_eq!(p.allocated_bytes(), 1260);
    assert_eq!(p.element_strides(), Some(vec![21, 1]));
    // 78. IsPadded: padded [2,3,4] is not padded, [2,14,42] is.
    let padded = |pd: Vec<i64>| {
        let p = plan_with(P::F32, &[2, 3, 4], &[2, 1, 0], &[], |l| {
            l.padded_dimensions = pd;
        });
        p.allocated_elements() != p.element_count()
    };
    assert!(!padded(vec![2, 3, 4]));
    assert!(padded(vec![2, 14, 42]));
}

#[test]
fn combined_dimensions() {
    // tiled_layout.md: F32[2,7,8,11,10]{4,3,2,1,0} with (*,*,2,*,3) is F32[112,110]{1,0}
    // tiled by (2,3): element (a,b,c,d,e) sits where (56a+8b+c, 10d+e) does.
    let p = plan(
        P::F32,
        &[2, 7, 8, 11, 10],
        &[4, 3, 2, 1, 0],
        &[&[STAR, STAR, 2, STAR, 3]],
    );
    let q = plan(P::F32, &[112, 110], &[1, 0], &[&[2, 3]]);
    assert_eq!(p.allocated_elements(), q.allocated_elements());
    for idx in all_indices(&[2, 7, 8, 11, 10]).into_iter().step_by(7) {
        let (a, b, c, d, e) = (idx[0], idx[1], idx[2], idx[3], idx[4]);
        let want = lin(&q, &[56 * a + 8 * b + c, 10 * d + e]);
        assert_eq!(lin(&p, &idx), want);
        assert_eq!(p.multi_index(want).unwrap(), Some(idx));
    }
    // bf16[2,3,1004]{2,1,0:T(2,*,128)}: 1004 is not a multiple of 128, so the tiles
    // cut across rows of the merged dimension.
    let p = plan(P::Bf16, &[2, 3, 1004], &[2, 1, 0], &[&[2, STAR, 128]]);
    let q = plan(P::Bf16, &[2, 3012], &[1, 0], &[&[2, 128]]);
    for idx in all_indices(&[2, 3, 1004]).into_iter().step_by(5) {
        assert_eq!(lin(&p, &idx), lin(&q, &[idx[0], 1004 * idx[1] + idx[2]]));
    }
    assert_eq!(p.allocated_elements(), 2 * 3072);
}

// ------------------------------------------------------------ §5.3 sizes, §7 rows 64–69

#[test]
fn xla_size_table() {
    let sizes = |p: &LayoutPlan| (p.xla_array_size(), p.xla_array_data_size());
    assert_eq!(sizes(&plan(P::F32, &[3, 5], &[1, 0], &[&[2, 2]])), (96, 84));
    assert_eq!(
        sizes(&plan(P::F32, &[3, 5], &[1, 0], &[&[8, 128]])),
        (4096, 1044)
    );
    let p = plan(P::Bf16, &[3, 5], &[1, 0], &[&[8, 128], &[2, 1]]);
    assert_eq!(p.xla_array_size(), 2048);
    assert_eq!(p.allocated_bytes(), 2048);
    let p = plan_with(P::F32, &[2, 3], &[1, 0], &[&[8, 128]], |l| {
        l.tail_padding_alignment_in_elements = 2048;
    });
    assert_eq!(p.xla_array_size(), 8192);
    assert_eq!(p.allocated_bytes(), 8192);
    // L is ignored without tiles.
    let p = plan_with(P::F32, &[7], &[0], &[], |l| {
        l.tail_padding_alignment_in_elements = 8;
    });
    assert_eq!((p.xla_array_size(), p.allocated_bytes()), (28, 28));
    assert_eq!(sizes(&plan(P::F32, &[1000], &[0], &[&[256]])), (4096, 4000));
    let p = plan(P::F32, &[5], &[0], &[&[8, 128]]);
    assert_eq!((p.xla_array_size(), p.allocated_bytes()), (4096, 4096));
    let s4 = |dims: &[i64], tiles: &[&[i64]]| {
        let m2m: Vec<i64> = (0..dims.len() as i64).rev().collect();
        plan_with(P::S4, dims, &m2m, tiles, |l| l.element_size_in_bits = 4)
    };
    let p = s4(&[64, 128], &[]);
    assert_eq!(sizes(&p), (4096, 4096));
    assert_eq!(p.allocated_bytes(), 4096);
    let p = s4(&[9216, 6144], &[&[64, 128], &[8, 1]]);
    assert_eq!(sizes(&p), (28311552, 28311552));
    assert_eq!((p.allocated_bytes(), p.data_bytes()), (28311552, 28311552));
    for dims in [
        [0, 64, 128],
        [128, 0, 64],
        [64, 128, 0],
        [0, 63, 127],
        [127, 0, 63],
        [63, 127, 0],
    ] {
        let p = s4(&dims, &[]);
        assert_eq!(sizes(&p), (0, 0), "{dims:?}");
        assert_eq!((p.allocated_bytes(), p.data_bytes()), (0, 0));
        assert_eq!(p.physical_order().count(), 0);
        assert_eq!(p.logical_order().count(), 0);
    }
}

#[test]
fn nested_tiling_differs_from_first_tile_sizes() {
    // f32[3]{0:T(3)(2)}: the second tile pads 3 to 4; XLA's ArraySize assumes it does not.
    let p = plan(P::F32, &[3], &[0], &[&[3], &[2]]);
    assert_eq!(p.xla_array_size(), 12);
    assert_eq!(p.allocated_bytes(), 16);
    // f32[3]{0:T(2)(2,1)}: element 1 lies after element 2, so the data ends after slot 2.
    let p = plan(P::F32, &[3], &[0], &[&[2], &[2, 1]]);
    assert_eq!([lin(&p, &[0]), lin(&p, &[1]), lin(&p, &[2])], [0, 2, 1]);
    assert_eq!(p.data_elements(), 3);
    // XLA's ArrayDataSize places the last element by LinearIndex, index[0] for rank 1.
    assert_eq!(p.xla_array_data_size(), 12);
}

#[test]
fn max_split_size() {
    // 64. f32[150,200,100]{0,1,2}, splits (0,{30}) and (1,{40,130}): largest pieces
    // 150, 90, 70: 945000 elements per split (3000000 without splits).
    let p = plan_with(P::F32, &[150, 200, 100], &[0, 1, 2], &[], |l| {
        l.split_configs = vec![
            SplitConfigProto {
                dimension: 0,
                split_indices: vec![30],
            },
            SplitConfigProto {
                dimension: 1,
                split_indices: vec![40, 130],
            },
        ];
    });
    assert_eq!(p.xla_array_size(), 945000 * 4);
    assert_eq!(p.element_count(), 3000000);
    assert_eq!(p.xla_byte_size_of(), 3000000 * 4);
}

#[test]
fn byte_sizes_and_element_counts() {
    // 65. ByteSizeOfWithoutPadding.
    for (ty, scalar, matrix) in [(P::F32, 4, 800), (P::F64, 8, 1600), (P::C64, 8, 1600)] {
        assert_eq!(plan(ty, &[], &[], &[]).xla_byte_size_of(), scalar);
        assert_eq!(plan(ty, &[10, 20], &[1, 0], &[]).xla_byte_size_of(), matrix);
    }
    // 66. The arrays of ByteSizeOfElementsRecursive.
    assert_eq!(
        plan(P::S32, &[16, 32, 64], &[2, 1, 0], &[]).xla_byte_size_of(),
        131072
    );
    assert_eq!(
        plan(P::S8, &[16, 32, 64], &[2, 1, 0], &[]).xla_byte_size_of(),
        32768
    );
    // 68. ElementsIn.
    let cases: [(&[i64], u64); 11] = [
        (&[], 1),
        (&[0], 0),
        (&[1], 1),
        (&[1, 1], 1),
        (&[2], 2),
        (&[2, 1], 2),
        (&[3, 5], 15),
        (&[3, 0, 5], 0),
        (&[0, 3, 0], 0),
        (&[1, 3, 5], 15),
        (&[13, 17], 221),
    ];
    for (dims, count) in cases {
        let m2m: Vec<i64> = (0..dims.len() as i64).rev().collect();
        let p = plan(P::S32, dims, &m2m, &[]);
        assert_eq!(p.element_count(), count, "{dims:?}");
        assert_eq!(p.logical_order().count() as u64, count);
        assert_eq!(p.physical_order().count() as u64, count);
    }
    // Sub-byte types take a byte each unless E(n) packs them; PRED is one byte.
    let p = plan(P::S4, &[3], &[0], &[]);
    assert_eq!((p.element_bits(), p.allocated_bytes()), (8, 3));
    assert_eq!(plan(P::Pred, &[10], &[0], &[]).allocated_bytes(), 10);
    let p = plan_with(P::Pred, &[8, 8, 8], &[0, 2, 1], &[&[8, 128]], |l| {
        l.element_size_in_bits = 32;
    });
    assert_eq!(p.element_bits(), 32);
}

#[test]
fn strides() {
    // 67. UnpackedByteStrides.
    assert_eq!(
        plan(P::F32, &[3, 5, 7], &[2, 1, 0], &[]).xla_unpacked_byte_strides(),
        [140, 28, 4]
    );
    assert_eq!(
        plan(P::F16, &[5, 7, 9], &[2, 1, 0], &[]).xla_unpacked_byte_strides(),
        [126, 18, 2]
    );
    let p = plan_with(P::S4, &[2, 4], &[1, 0], &[], |l| l.element_size_in_bits = 4);
    assert_eq!(p.xla_unpacked_byte_strides(), [4, 1]);
    // ByteStrides(s4[10,20] E(4)) is none.
    let p = plan_with(P::S4, &[10, 20], &[1, 0], &[], |l| {
        l.element_size_in_bits = 4
    });
    assert_eq!(p.byte_strides(), None);
    assert_eq!(p.element_strides(), Some(vec![20, 1]));
    assert_eq!(
        plan(P::F32, &[3, 5, 7], &[0, 2, 1], &[]).byte_strides(),
        Some(vec![4, 84, 12])
    );
    // 69. ByteStridesIsMajorToMinor, F32 dims 8,9,10,11: only the first strides are
    // the {3,2,1,0} layout; the others fit no layout at all.
    let dims = [8, 9, 10, 11];
    let l = layout_for_byte_strides(&dims, &[3960, 440, 44, 4], 4).unwrap();
    assert_eq!(l.minor_to_major, [3, 2, 1, 0]);
    assert_eq!(l.padded_dimensions, None);
    assert!(matches!(
        layout_for_byte_strides(&dims, &[1880, 220, 22, 2], 4),
        Err(StrideError::NotWholeElements { dim: 2, .. })
    ));
    assert!(matches!(
        layout_for_byte_strides(&dims, &[1880, 440, 44, 4], 4),
        Err(StrideError::NotNested {
            dim: 0,
            minor_dim: 1,
            ..
        })
    ));
    // Reverse of numpy's F order; size-1 dimensions carry no information.
    let l = layout_for_strides(&[3, 1, 4], &[1, 99, 3]).unwrap();
    assert_eq!(l.minor_to_major, [0, 2, 1]);
    assert_eq!(l.padded_dimensions, None);
    assert!(matches!(
        layout_for_strides(&[3, 4], &[2, 6]),
        Err(StrideError::MinorNotContiguous { dim: 0, stride: 2 })
    ));
    assert!(matches!(
        layout_for_strides(&[3, 4], &[4, -1]),
        Err(StrideError::Negative { dim: 1, .. })
    ));
    assert!(matches!(
        layout_for_strides(&[3, 4], &[0, 1]),
        Err(StrideError::Broadcast { dim: 0 })
    ));
    assert!(matches!(
        layout_for_strides(&[3, 4], &[2, 1]),
        Err(StrideError::NotNested {
            dim: 0,
            minor_dim: 1,
            minor_size: 4,
            ..
        })
    ));
    assert!(layout_for_strides(&[3], &[1, 1]).is_err());
}

#[test]
fn strides_round_trip_through_plans() {
    // Every untiled layout with legacy padding: strides → layout → the same strides.
    for (dims, m2m, padded) in [
        (vec![2, 3, 4], vec![2, 1, 0], vec![2, 5, 4]),
        (vec![2, 3, 4], vec![0, 2, 1], vec![3, 3, 6]),
        (vec![5, 1, 3], vec![1, 0, 2], vec![5, 1, 3]),
    ] {
        let p = plan_with(P::F32, &dims, &m2m, &[], |l| l.padded_dimensions = padded);
        let strides: Vec<i64> = p
            .element_strides()
            .unwrap()
            .iter()
            .map(|&s| s as i64)
            .collect();
        let udims: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
        let back = layout_for_strides(&udims, &strides).unwrap();
        let q = plan_with(
            P::F32,
            &dims,
            &back
                .minor_to_major
                .iter()
                .map(|&d| d as i64)
                .collect::<Vec<_>>(),
            &[],
            |l| {
                l.padded_dimensions = back
                    .padded_dimensions
                    .clone()
                    .map(|p| p.iter().map(|&x| x as i64).collect())
                    .unwrap_or_default()
            },
        );
        for idx in all_indices(&udims) {
            assert_eq!(lin(&p, &idx), lin(&q, &idx));
        }
    }
}

#[test]
fn sub_byte_bit_offsets() {
    // s4[2,3]{1,0:E(4)}: element i in bits [4i, 4i+4), low nibble first.
    let p = plan_with(P::S4, &[2, 3], &[1, 0], &[], |l| l.element_size_in_bits = 4);
    assert_eq!(p.bit_offset(&[1, 2]).unwrap(), 20);
    assert_eq!(p.byte_offset(&[1, 2]).unwrap(), None);
    assert_eq!(p.allocated_bytes(), 3);
    // u2 with E(2), tiled: bits follow the tiled linear index.
    let p = plan_with(P::U2, &[3, 5], &[1, 0], &[&[2, 2]], |l| {
        l.element_size_in_bits = 2
    });
    assert_eq!(p.bit_offset(&[2, 3]).unwrap(), 34);
    assert_eq!(p.allocated_bytes(), 6);
    // An odd width (E(6) on f6e3m2fn-like data): ⌈slots·6/8⌉ bytes.
    let p = plan_with(P::U8, &[5], &[0], &[], |l| l.element_size_in_bits = 6);
    assert_eq!((p.bit_offset(&[4]).unwrap(), p.allocated_bytes()), (24, 4));
    let p = plan(P::F64, &[2, 2], &[0, 1], &[]);
    assert_eq!(p.byte_offset(&[1, 1]).unwrap(), Some(24));
}

#[test]
fn dynamic_and_unbounded_dimensions() {
    // f32[<=4,3]: indexed and allocated at the bound.
    let mut proto = shape_proto(P::F32, &[4, 3], &[1, 0], &[]);
    proto.is_dynamic_dimension = vec![true, false];
    let p = plan_of(&proto);
    assert_eq!(p.allocated_elements(), 12);
    assert_eq!(lin(&p, &[3, 2]), 11);
    // f32[?,784]: no size.
    let mut proto = shape_proto(P::F32, &[i64::MIN, 784], &[1, 0], &[]);
    proto.is_dynamic_dimension = vec![true, false];
    let shape = ArrayShape::try_from(&proto).unwrap();
    let err = LayoutPlan::new(&shape).unwrap_err();
    assert_eq!(err, PlanError::Unbounded { dim: 0 });
    assert_eq!(
        err.to_string(),
        "dimensions[0]: dimension is unbounded ('?'): it has no size to index or allocate"
    );
}

// ------------------------------------------------------------ against the reference

fn proto_of(l: &RefLayout) -> ShapeProto {
    let mut proto = shape_proto(
        P::F32,
        &l.dims.iter().map(|&d| d as i64).collect::<Vec<_>>(),
        &l.minor_to_major
            .iter()
            .map(|&d| d as i64)
            .collect::<Vec<_>>(),
        &[],
    );
    let layout = proto.layout.as_mut().unwrap();
    layout.tiles = l
        .tiles
        .iter()
        .map(|t| TileProto {
            dimensions: t.iter().map(|e| e.map_or(STAR, |x| x as i64)).collect(),
        })
        .collect();
    layout.padded_dimensions = l
        .padded
        .as_ref()
        .map(|p| p.iter().map(|&x| x as i64).collect())
        .unwrap_or_default();
    layout.tail_padding_alignment_in_elements = l.tail_padding as i64;
    proto
}

/// Every post-condition, on every index and every slot.
fn check_layout(l: &RefLayout) {
    let p = plan_of(&proto_of(l));
    let allocated = reference::allocated(l);
    assert_eq!(p.allocated_elements(), allocated, "{l:?}");
    let indices = all_indices(&l.dims);
    let mut at = HashMap::new();
    for idx in &indices {
        let got = lin(&p, idx);
        assert_eq!(
            got,
            reference::nested_tiling_linear(l, idx),
            "{l:?} {idx:?}"
        );
        assert!(got < allocated);
        assert!(
            at.insert(got, idx.clone()).is_none(),
            "not injective: {l:?}"
        );
    }
    assert_eq!(at, reference::inverse_map(l));
    for slot in 0..allocated {
        assert_eq!(
            p.multi_index(slot).unwrap(),
            at.get(&slot).cloned(),
            "{l:?} {slot}"
        );
    }
    assert!(p.multi_index(allocated).is_err());
    // Logical order: bump order. Physical order: increasing slots, padding skipped.
    let logical: Vec<u64> = p.logical_order().collect();
    let want: Vec<u64> = indices
        .iter()
        .map(|i| reference::nested_tiling_linear(l, i))
        .collect();
    assert_eq!(logical, want, "{l:?}");
    let mut slots: Vec<(u64, Vec<u64>)> = at.into_iter().collect();
    slots.sort();
    let mut physical = Vec::new();
    let mut it = p.physical_order();
    while let Some((slot, position)) = it.next() {
        assert_eq!(it.index(), &indices[position as usize][..], "{l:?}");
        physical.push((slot, it.index().to_vec()));
    }
    assert_eq!(physical, slots, "{l:?}");
    // Internal iteration (fold) sees the same, also after a few steps of next().
    let mut stepped = Vec::new();
    for x in p.physical_order() {
        // A `for` loop steps with next().
        stepped.push(x);
    }
    for skip in [0, 1, 3] {
        let mut it = p.physical_order();
        let mut got: Vec<(u64, u64)> = it.by_ref().take(skip).collect();
        got = it.fold(got, |mut v, x| {
            v.push(x);
            v
        });
        assert_eq!(got, stepped, "{l:?} fold after {skip}");
    }
    assert_eq!(
        p.data_elements(),
        slots.last().map_or(0, |(s, _)| s + 1),
        "{l:?}"
    );
    if p.element_count() > 0 && l.dims.len() > 1 {
        let last: Vec<u64> = l.dims.iter().map(|d| d - 1).collect();
        let first_tile = reference::first_tile_linear(l, &last);
        assert_eq!(p.xla_array_data_size(), 4 * (first_tile + 1), "{l:?}");
    }
    if let Some(strides) = p.element_strides() {
        for idx in &indices {
            let dot: u64 = idx.iter().zip(&strides).map(|(e, s)| e * s).sum();
            assert_eq!(dot, lin(&p, idx), "{l:?} strides {strides:?}");
        }
    }
    if l.tiles.is_empty() && l.padded.is_none() {
        for idx in &indices {
            let want = reference::index_util_linear(&l.dims, &l.minor_to_major, idx);
            assert_eq!(lin(&p, idx), want);
            assert_eq!(
                reference::index_util_multi(&l.dims, &l.minor_to_major, want),
                *idx
            );
        }
        assert!(p.element_strides().is_some());
    }
}

#[test]
fn every_index_of_small_shapes() {
    let layouts = reference::small_layouts();
    for layout in &layouts {
        check_layout(layout);
    }
    assert!(layouts.len() > 500);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn engine_agrees_with_the_reference(l in reference::arb_layout(false)) {
        check_layout(&l);
    }
}

// ------------------------------------------------------------ large shapes, no panics

/// Shapes with large dimensions and tiles (whatever validation lets through): a plan
/// builds, random indices map into the buffer and back, and wrong indices are errors.
fn arb_large() -> impl Strategy<Value = ShapeProto> {
    (1usize..=4)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(
                    prop_oneof![4 => 1i64..5, 2 => 1i64..100_000, 1 => 1i64..(1 << 31)],
                    rank,
                ),
                Just((0..rank as i64).collect::<Vec<i64>>()).prop_shuffle(),
                proptest::collection::vec(
                    proptest::collection::vec(
                        prop_oneof![
                            4 => (1i64..300).prop_map(Some),
                            1 => (1i64..(1 << 20)).prop_map(Some),
                            1 => Just(None),
                        ],
                        1..=rank + 1,
                    ),
                    0..=2,
                ),
                0i64..20,
                prop_oneof![3 => Just(0i64), 1 => 1i64..9000],
            )
        })
        .prop_map(|(dims, m2m, tiles, bits, tail)| {
            let mut proto = shape_proto(P::U32, &dims, &m2m, &[]);
            let layout = proto.layout.as_mut().unwrap();
            layout.tiles = tiles
                .into_iter()
                .map(|t| TileProto {
                    dimensions: t.into_iter().map(|e| e.unwrap_or(STAR)).collect(),
                })
                .collect();
            layout.element_size_in_bits = bits;
            layout.tail_padding_alignment_in_elements = tail;
            proto
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn large_shapes_never_panic(proto in arb_large(), picks in proptest::collection::vec(any::<u64>(), 8)) {
        // Too large for int64: the gate refuses it (proptest fails on too many rejects,
        // so this cannot pass vacuously).
        let validated = validate_shape_with(&proto, Options::hlo_text()).into_result();
        prop_assume!(validated.is_ok());
        let shape = validated.unwrap();
        let p = LayoutPlan::new(shape.as_array().unwrap()).unwrap();
        let dims = p.dimensions().to_vec();
        let allocated = p.allocated_elements();
        prop_assert!(allocated >= p.element_count());
        let _ = (p.allocated_bytes(), p.xla_array_size(), p.xla_array_data_size(), p.xla_byte_size_of());
        let _ = (p.element_strides(), p.byte_strides(), p.xla_unpacked_byte_strides());
        // An untiled layout's strides, found in one pass, are XLA's dimension strides,
        // each found alone.
        if proto.layout.as_ref().is_none_or(|l| l.tiles.is_empty()) {
            let alone: Option<Vec<u64>> = (0..dims.len()).map(|k| p.xla_dimension_stride(k)).collect();
            prop_assert_eq!(p.element_strides(), alone);
        }
        for (n, pick) in picks.iter().enumerate() {
            let idx: Vec<u64> = dims
                .iter()
                .enumerate()
                .map(|(k, &d)| pick.rotate_left(7 * k as u32) % d.max(1))
                .collect();
            let slot = p.linear_index(&idx).unwrap();
            prop_assert!(slot < allocated);
            prop_assert_eq!(p.multi_index(slot).unwrap(), Some(idx.clone()));
            let bits = p.bit_offset(&idx).unwrap();
            prop_assert_eq!(bits, u128::from(slot) * u128::from(p.element_bits()));
            // Out of bounds, wrong rank, a slot past the end: errors.
            let mut bad = idx.clone();
            bad[n % dims.len()] = dims[n % dims.len()] + (pick % 3);
            prop_assert!(p.linear_index(&bad).is_err());
            prop_assert!(p.linear_index(&idx[1..]).is_err());
            prop_assert!(p.multi_index(allocated + pick % 5).is_err());
            let _ = p.multi_index(pick % allocated.max(1));
        }
        // The first elements in both orders (memory order only on digit plans: the
        // others test every slot, padding included).
        let first: Vec<u64> = p.logical_order().take(50).collect();
        prop_assert_eq!(first.len() as u64, p.element_count().min(50));
        if !p.is_digit_plan() {
            return Ok(());
        }
        let mut it = p.physical_order();
        let mut last = None;
        for _ in 0..50 {
            let Some((slot, _)) = it.next() else { break };
            prop_assert!(last < Some(slot));
            prop_assert_eq!(p.linear_index(it.index()).unwrap(), slot);
            last = Some(slot);
        }
    }
}

// ------------------------------------------------------------ real shapes

fn ref_layout(shape: &ArrayShape) -> Option<RefLayout> {
    let layout = shape.layout_or_default();
    Some(RefLayout {
        dims: shape
            .dimensions()
            .iter()
            .map(|d| d.bound())
            .collect::<Option<Vec<u64>>>()?,
        minor_to_major: layout.minor_to_major().to_vec(),
        padded: layout.padded_dimensions().map(<[u64]>::to_vec),
        tiles: layout
            .tiles()
            .iter()
            .map(|t| t.dimensions().iter().map(|d| d.size()).collect())
            .collect(),
        tail_padding: layout.tail_padding_alignment_in_elements(),
    })
}

fn arrays(shape: &xla_shape::Shape, out: &mut Vec<ArrayShape>) {
    match shape {
        xla_shape::Shape::Array(a) | xla_shape::Shape::Buffer(a) => out.push(a.clone()),
        xla_shape::Shape::Tuple(elements) => elements.iter().for_each(|e| arrays(e, out)),
        _ => {}
    }
}

/// Every array in `fixtures/hlo_shapes.jsonl` (shapes from real HLO dumps and XLA's
/// parser tests that XLA parses): the plan agrees with the reference on sampled
/// indices (first, last and spread), round-trips them, and allocates what the
/// reference allocates.
#[test]
fn fixture_shapes_agree_with_the_reference() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/hlo_shapes.jsonl");
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        if row["ok"] != serde_json::Value::Bool(true) {
            continue;
        }
        let Some(source) = row["text"].as_str() else {
            continue;
        };
        let Ok(proto) = xla_shape::text::parse_shape(source) else {
            continue;
        };
        let Ok(shape) = validate_shape_with(&proto, Options::hlo_text()).into_result() else {
            continue;
        };
        let mut found = Vec::new();
        arrays(&shape, &mut found);
        for array in found {
            let Some(l) = ref_layout(&array) else {
                assert!(LayoutPlan::new(&array).is_err());
                assert!(LayoutPlan::allocated_bytes_of(&array).is_err());
                continue;
            };
            let p = LayoutPlan::new(&array).unwrap();
            let bytes = LayoutPlan::allocated_bytes_of(&array).ok();
            assert_eq!(bytes, Some(p.allocated_bytes()), "{source}");
            assert_eq!(p.allocated_elements(), reference::allocated(&l), "{source}");
            if p.element_count() == 0 {
                continue;
            }
            let samples = 64u64;
            for s in 0..=samples {
                // Spread over the logical order: element number s/samples of the way.
                let mut n = (p.element_count() - 1) / samples * s;
                let mut idx = vec![0; l.dims.len()];
                for (k, &d) in l.dims.iter().enumerate().rev() {
                    idx[k] = n % d;
                    n /= d;
                }
                let slot = lin(&p, &idx);
                assert_eq!(
                    slot,
                    reference::nested_tiling_linear(&l, &idx),
                    "{source} {idx:?}"
                );
                assert_eq!(p.multi_index(slot).unwrap(), Some(idx), "{source}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 500, "only {checked} fixture arrays");
}
