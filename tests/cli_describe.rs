//! `explain --format json` and `index --format json` checked against the layout engine
//! (`LayoutPlan`) and the validated shape, for the seeds' and XLA's doc examples.

use serde_json::{json, Value};
use xla_shape::index::LayoutPlan;
use xla_shape::proto::ShapeProto;
use xla_shape::{text, ArrayShape, DimSize, Shape, TileDim};

mod util;
use util::{stderr, stdout, xla_shape as run};

/// The seeds' and XLA's doc examples (docs/tiled_layout.md, shapes.md,
/// index_util_test), plus one of each layout attribute.
const SHAPES: &[&str] = &[
    "f32[3,5]{1,0:T(2,2)}",                      // tiled_layout.md figure 1
    "s4[2,3]{1,0:E(4)}",                         // packed int4
    "f32[2,3]{0,1:PD(3,5)}",                     // the seeds' legacy padding example
    "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}", // tiled_layout.md, TPU bf16
    "f32[10,20]{0,1}",                           // index_util_test
    "bf16[2,3,1004]{2,1,0:T(2,*,128)}",          // combined dimension
    "f32[24,128]{1,0:T(8,128)}",                 // tiled, with strides
    "f32[3]{0:T(3)(2)}",                         // a later tile pads
    "f32[5,7]{1,0:T(2,4)L(16)}",                 // tail padding
    "u8[16,512]{1,0:T(8,128)SC(1:256)}",         // split config
    "f32[4,6]{1,0:M(8)}",                        // dynamic-shape metadata prefix
    "f32[<=4,3]",                                // bounded dynamic, no layout
    "pred[3,2]{0,1}",
    "c64[2,2]",
    "s4[3,4]", // sub-byte, not packed
    "f32[]",
    "b(s8[4]{0:S(5)})", // a buffer
];

#[track_caller]
fn json_of(args: &[&str]) -> Value {
    let out = run(args, b"");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("one JSON document")
}

fn array_of(shape: &Shape) -> &ArrayShape {
    match shape {
        Shape::Array(a) | Shape::Buffer(a) => a,
        _ => panic!("not an array"),
    }
}

#[test]
fn explain_json_agrees_with_the_layout_engine() {
    for &text in SHAPES {
        let doc = json_of(&["explain", "--format", "json", text]);
        let shape: Shape = text.parse().unwrap();
        let array = array_of(&shape);
        let plan = LayoutPlan::new(array).unwrap();
        assert_eq!(doc["version"], 1, "{text}");
        let xla_text = text::print_shape_as_xla(&ShapeProto::from(&shape)).unwrap();
        assert_eq!(doc["text"], xla_text, "{text}");
        let a = &doc["array"];
        // Element type.
        let ty = array.element_type();
        assert_eq!(a["element_type"]["name"], ty.name(), "{text}");
        assert_eq!(
            a["element_type"]["bit_width"],
            ty.bit_width().unwrap(),
            "{text}"
        );
        assert_eq!(
            a["element_type"]["byte_width"],
            ty.byte_width().unwrap(),
            "{text}"
        );
        assert_eq!(
            a["element_type"]["bits_in_memory"],
            plan.element_bits(),
            "{text}"
        );
        // Dimensions.
        let dims = a["dimensions"].as_array().unwrap();
        assert_eq!(dims.len(), array.dimensions().len(), "{text}");
        for (i, (got, want)) in dims.iter().zip(array.dimensions()).enumerate() {
            assert_eq!(got["dimension"], i);
            let (kind, size) = match want {
                DimSize::Static(n) => ("static", json!(n)),
                DimSize::Bounded(n) => ("bounded", json!(n)),
                DimSize::Unbounded => ("unbounded", Value::Null),
            };
            assert_eq!(
                (&got["kind"], &got["size"]),
                (&json!(kind), &size),
                "{text}"
            );
        }
        // Layout fields.
        match array.layout() {
            None => assert_eq!(a["layout"], Value::Null, "{text}"),
            Some(layout) => {
                let l = &a["layout"];
                assert_eq!(
                    l["minor_to_major"],
                    json!(layout.minor_to_major()),
                    "{text}"
                );
                assert_eq!(
                    l["major_to_minor"],
                    json!(layout.major_to_minor()),
                    "{text}"
                );
                let tiles: Vec<Vec<Option<u64>>> = layout
                    .tiles()
                    .iter()
                    .map(|t| t.dimensions().iter().map(|d| d.size()).collect())
                    .collect();
                let got: Vec<Value> = l["tiles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["dimensions"].clone())
                    .collect();
                assert_eq!(json!(got), json!(tiles), "{text}");
                assert!(layout.tiles().iter().all(|t| t
                    .dimensions()
                    .iter()
                    .all(|d| *d != TileDim::Combine)
                    || text.contains('*')));
                assert_eq!(
                    l["tail_padding_alignment_in_elements"],
                    layout.tail_padding_alignment_in_elements()
                );
                assert_eq!(l["element_size_in_bits"], layout.element_size_in_bits());
                assert_eq!(l["memory_space"]["number"], layout.memory_space());
                assert_eq!(
                    l["memory_space"]["name"],
                    json!(layout.memory_space_name()),
                    "{text}"
                );
                let splits: Vec<Value> = layout
                    .split_configs()
                    .iter()
                    .map(|s| json!([s.dimension(), s.split_indices()]))
                    .collect();
                let got: Vec<Value> = l["split_configs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| json!([s["dimension"], s["split_indices"]]))
                    .collect();
                assert_eq!(got, splits, "{text}");
                assert_eq!(
                    l["dynamic_shape_metadata_prefix_bytes"],
                    layout.dynamic_shape_metadata_prefix_bytes()
                );
                assert_eq!(l["padded_dimensions"], json!(layout.padded_dimensions()));
            }
        }
        // Sizes and strides.
        assert_eq!(a["element_count"], json!(array.element_count()), "{text}");
        assert_eq!(a["byte_size"], json!(array.byte_size()), "{text}");
        let m = &a["memory"];
        for (key, want) in [
            ("allocated_elements", plan.allocated_elements()),
            ("allocated_bytes", plan.allocated_bytes()),
            ("data_elements", plan.data_elements()),
            ("data_bytes", plan.data_bytes()),
            ("xla_array_size", plan.xla_array_size()),
            ("xla_array_data_size", plan.xla_array_data_size()),
        ] {
            assert_eq!(m[key], want, "{text}: {key}");
        }
        assert_eq!(
            m["strides"]["elements"],
            json!(plan.element_strides()),
            "{text}"
        );
        assert_eq!(m["strides"]["bytes"], json!(plan.byte_strides()), "{text}");
        assert_eq!(
            m["strides"]["reason"].is_null(),
            plan.byte_strides().is_some(),
            "{text}"
        );
        if let Some(rows) = m["memory_map"].as_array() {
            for (i, row) in rows.iter().enumerate() {
                for (j, cell) in row.as_array().unwrap().iter().enumerate() {
                    let want = plan.linear_index(&[i as u64, j as u64]).unwrap();
                    assert_eq!(cell, want, "{text} [{i},{j}]");
                }
            }
        }
    }
}

/// The documented values of the doc examples, independent of the engine.
#[test]
fn explain_json_gives_the_documented_sizes() {
    let get = |text: &str| json_of(&["explain", "--format", "json", text]);
    let fig1 = get("f32[3,5]{1,0:T(2,2)}");
    let m = &fig1["array"]["memory"];
    assert_eq!(
        (&m["allocated_elements"], &m["allocated_bytes"]),
        (&json!(24), &json!(96))
    );
    assert_eq!(
        (&m["data_bytes"], &m["xla_array_data_size"]),
        (&json!(84), &json!(84))
    );
    assert_eq!(m["strides"]["reason"], "the tiles reorder elements");
    assert_eq!(
        m["memory_map"],
        json!([[0, 1, 4, 5, 8], [2, 3, 6, 7, 10], [12, 13, 16, 17, 20]])
    );
    let seeds = get("f32[2,3]{0,1:PD(3,5)}");
    assert_eq!(seeds["lossless_text"], "f32[2,3]{0,1:PD(3,5)}");
    let m = &seeds["array"]["memory"];
    assert_eq!(m["allocated_elements"], 15);
    assert_eq!(
        m["strides"],
        json!({"elements": [1, 3], "bytes": [4, 12], "reason": null})
    );
    assert_eq!(seeds["array"]["layout"]["padded_dimensions"], json!([3, 5]));
    let int4 = get("s4[2,3]{1,0:E(4)}");
    assert_eq!(int4["array"]["element_type"]["packed"], true);
    assert_eq!(int4["array"]["memory"]["allocated_bytes"], 3);
    assert_eq!(
        int4["array"]["memory"]["strides"]["reason"],
        "4-bit elements are not whole bytes"
    );
    let tpu = get("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
    assert_eq!(tpu["array"]["memory"]["allocated_bytes"], 8_388_608);
    assert_eq!(
        tpu["array"]["layout"]["memory_space"],
        json!({"number": 1, "name": "generic fast memory (VMEM on TPU)"})
    );
    assert_eq!(
        tpu["array"]["layout"]["tiles"][0]["logical_dimensions"],
        json!([1, 2])
    );
    // A shape without a memory layout says why.
    let unbounded = get("f32[?,3]");
    assert_eq!(unbounded["array"]["memory"], Value::Null);
    assert!(unbounded["array"]["no_memory_reason"]
        .as_str()
        .unwrap()
        .starts_with("dimensions[0]: dimension is unbounded"));
    // Tuples describe their elements; tokens have nothing more.
    let tuple = get("(f32[2], token[])");
    assert_eq!(tuple["kind"], "tuple");
    assert_eq!(tuple["array"], Value::Null);
    assert_eq!(tuple["elements"][0]["array"]["element_count"], 2);
    assert_eq!(tuple["elements"][1]["kind"], "token");
}

/// Every index of the small examples (a sample of the large one), read from standard
/// input, and every slot back with --linear.
#[test]
fn index_json_agrees_with_the_layout_engine() {
    for &text in SHAPES {
        let shape: Shape = text.parse().unwrap();
        let plan = LayoutPlan::new(array_of(&shape)).unwrap();
        let mut indices = Vec::new();
        let mut index = vec![0; plan.rank()];
        if plan.element_count() > 0 {
            loop {
                indices.push(index.clone());
                if !plan.bump_indices(&mut index) {
                    break;
                }
            }
        }
        let indices: Vec<Vec<u64>> = if indices.len() > 2000 {
            indices.iter().step_by(4099).cloned().collect()
        } else {
            indices
        };
        let lines: String = indices
            .iter()
            .map(|i| {
                let parts: Vec<String> = i.iter().map(u64::to_string).collect();
                // Brackets, so that a scalar's empty index is not a blank line.
                format!("[{}]\n", parts.join(","))
            })
            .collect();
        let out = run(&["index", "--format", "json", text, "-"], lines.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{text}: {}", stderr(&out));
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["version"], 1);
        assert_eq!(doc["element_bits"], plan.element_bits(), "{text}");
        assert_eq!(
            doc["allocated_elements"],
            plan.allocated_elements(),
            "{text}"
        );
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), indices.len(), "{text}");
        for (got, index) in results.iter().zip(&indices) {
            assert_eq!(got["index"], json!(index), "{text}");
            assert_eq!(
                got["linear_index"],
                plan.linear_index(index).unwrap(),
                "{text}"
            );
            assert_eq!(got["bit_offset"], json!(plan.bit_offset(index).unwrap()));
            assert_eq!(got["byte_offset"], json!(plan.byte_offset(index).unwrap()));
            assert_eq!(got["padding"], false);
        }
        // Every slot back, when the buffer is small.
        if plan.allocated_elements() <= 2000 {
            let slots: Vec<String> = (0..plan.allocated_elements())
                .map(|s| s.to_string())
                .collect();
            let mut args = vec!["index", "--format", "json", "--linear", text];
            args.extend(slots.iter().map(String::as_str));
            let doc = json_of(&args);
            for (slot, got) in doc["results"].as_array().unwrap().iter().enumerate() {
                let want = plan.multi_index(slot as u64).unwrap();
                assert_eq!(got["index"], json!(want), "{text} slot {slot}");
                assert_eq!(got["padding"], want.is_none(), "{text} slot {slot}");
                assert_eq!(got["linear_index"], slot, "{text}");
            }
        }
    }
}

#[test]
fn index_text_prints_one_result_a_line() {
    let shape = "f32[3,5]{1,0:T(2,2)}";
    let out = run(&["index", shape, "0,0", "[1, 2]", "(2,4)"], b"");
    assert_eq!(stdout(&out), "0\n6\n20\n");
    let out = run(
        &["index", shape, "0,1", "-", "2,3"],
        b"# comment\n\n1,1\n 2,0 \n",
    );
    assert_eq!(stdout(&out), "1\n3\n12\n17\n");
    let out = run(&["index", shape, "--linear", "17", "11", "0"], b"");
    assert_eq!(stdout(&out), "2,3\npadding\n0,0\n");
    let out = run(&["index", "s4[2,3]{1,0:E(4)}", "--bits", "1,2", "0,1"], b"");
    assert_eq!(stdout(&out), "20\n4\n");
    // An error names the index, or the line it came from; nothing is written.
    let out = run(&["index", shape, "0,0", "-"], b"1,1\n3,0\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>:2: index 3 is out of bounds for dimension 0 of size 3\n"
    );
    let out = run(&["index", "-", "-"], b"f32[2]");
    assert_eq!(
        stderr(&out),
        "xla-shape: standard input (-) can be read once: for the shape or for the indices\n"
    );
}

#[test]
fn explain_prints_xlas_text_unless_exact() {
    let out = run(&["explain", "f32[2,3]{0,1:PD(3,5)}"], b"");
    assert!(
        stdout(&out).starts_with(
            "f32[2,3]{0,1}\n  lossless text (--hlo-style exact): f32[2,3]{0,1:PD(3,5)} (XLA's text leaves out what XLA ignores)\n  element type: f32"
        ),
        "{}",
        stdout(&out)
    );
    let out = run(
        &["explain", "--hlo-style", "exact", "f32[2,3]{0,1:PD(3,5)}"],
        b"",
    );
    assert!(
        stdout(&out).starts_with("f32[2,3]{0,1:PD(3,5)}\n  element type: f32"),
        "{}",
        stdout(&out)
    );
    let doc = json_of(&[
        "explain",
        "--format",
        "json",
        "--hlo-style",
        "exact",
        "f32[8]{0:M(-1)}",
    ]);
    assert_eq!(
        (&doc["text"], &doc["lossless_text"]),
        (&json!("f32[8]{0:M(-1)}"), &Value::Null)
    );
    let doc = json_of(&["explain", "--format", "json", "f32[8]{0:M(-1)}"]);
    assert_eq!(doc["text"], "f32[8]{0}");
    assert_eq!(doc["array"]["layout"]["text"], "{0}");
    assert_eq!(
        doc["array"]["layout"]["dynamic_shape_metadata_prefix_bytes"],
        -1
    );
    let doc = json_of(&["index", "--format", "json", "f32[2,3]{0,1:PD(3,5)}", "1,2"]);
    assert_eq!(doc["shape"], "f32[2,3]{0,1}");
    assert_eq!(doc["results"][0]["linear_index"], 7);
}

/// Deep tuples: described to a fixed depth, never a crash.
#[test]
fn deep_tuples_are_described_to_a_fixed_depth() {
    let depth = 250; // validation refuses more than 256 levels
    let deep = format!("{}f32[]{}", "(".repeat(depth), ")".repeat(depth));
    let out = run(&["explain", "-"], deep.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("its elements are not described: nested deeper than 64 levels"));
    let out = run(&["explain", "--format", "json", "-"], deep.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
