//! `xla-shape index`: the binary's output, errors and exit codes.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .arg("index")
        .args(args)
        .output()
        .expect("run xla-shape");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[track_caller]
fn ok(args: &[&str], stdout: &str) {
    let (code, out, err) = run(args);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, stdout, ""),
        "{args:?}"
    );
}

#[track_caller]
fn fails(args: &[&str], code: i32, stderr: &str) {
    let (got, out, err) = run(args);
    assert_eq!((got, out.as_str()), (code, ""), "{args:?}: {err}");
    assert!(err.contains(stderr), "{args:?}: {err}");
}

#[test]
fn linear_indices_and_back() {
    // tiled_layout.md figure 1.
    ok(&["f32[3,5]{1,0:T(2,2)}", "2,3"], "17\n");
    ok(&["f32[3,5]{1,0:T(2,2)}", "--linear", "17"], "2,3\n");
    ok(&["f32[3,5]{1,0:T(2,2)}", "--linear", "11"], "padding\n");
    // index_util_test: f32[10,20]{0,1}, [3,5] → 53.
    ok(&["f32[10,20]{0,1}", "3,5"], "53\n");
    ok(&["f32[10,20]{0,1}", "--linear", "53"], "3,5\n");
    // Without a layout: the default {1,0}.
    ok(&["f32[10,20]", "3, 5"], "65\n");
    // Sub-byte: bits with E(4).
    ok(&["s4[2,3]{1,0:E(4)}", "1,2", "--bits"], "20\n");
    ok(&["f32[2]", "1", "--bits"], "32\n");
    // The seeds' padding example, legacy padding written PD(...).
    ok(&["f32[2,3]{0,1:PD(3,5)}", "1,2"], "7\n");
    ok(&["f32[2,3]{0,1:PD(3,5)}", "--linear", "2"], "padding\n");
    // Combined dimensions and a scalar.
    ok(&["bf16[2,3,1004]{2,1,0:T(2,*,128)}", "1,2,1003"], "6083\n");
    ok(&["f32[]", ""], "0\n");
    ok(&["f32[]", "--linear", "0"], "\n");
    // A dynamic dimension is indexed at its bound.
    ok(&["f32[<=4,3]", "3,2"], "11\n");
}

#[test]
fn errors() {
    fails(
        &["f32[3,5]{1,0:T(2,2)}", "3,0"],
        2,
        "xla-shape: [3,0]: index 3 is out of bounds for dimension 0 of size 3\n",
    );
    fails(
        &["f32[3,5]", "1"],
        2,
        "index has 1 coordinates, but the shape has 2 dimensions",
    );
    fails(
        &["f32[3,5]{1,0:T(2,2)}", "--linear", "24"],
        2,
        "linear index 24 is beyond the buffer of 24 elements",
    );
    fails(
        &["f32[3]", "-1"],
        2,
        "[-1]: '-1' is not a non-negative integer",
    );
    fails(
        &["f32[3]", "--linear", "x"],
        2,
        "xla-shape: [x]: 'x' is not a non-negative integer\n",
    );
    // A number past u64 is said as too large, not as no number.
    fails(
        &["f32[3]", "18446744073709551616"],
        2,
        "'18446744073709551616' is larger than any index (at most 18446744073709551615)",
    );
    fails(
        &["f32[3]", "--linear", "99999999999999999999999"],
        2,
        "'99999999999999999999999' is larger than any index",
    );
    fails(&["f32[3,5", "1"], 2, "  f32[3,5\n         ^\n");
    fails(&["f32[?,3]", "0,0"], 2, "dimension is unbounded");
    fails(
        &["(f32[], s32[])", "0"],
        2,
        "a tuple has no elements to index",
    );
    fails(
        &["f32[2]{0:T(0)}", "1"],
        1,
        "tile dimension 0 is not allowed",
    );
    fails(
        &["f32[2]"],
        2,
        "xla-shape: give an index I,J,... (or --linear N), or - to read them from standard input\n",
    );
    fails(
        &["f32[?,3]", "0,0"],
        2,
        "xla-shape: <text>: dimensions[0]: dimension is unbounded ('?'): it has no size to index or allocate\n",
    );
    fails(
        &["(f32[], s32[])", "0"],
        2,
        "xla-shape: <text>: a tuple has no elements to index; give an array shape\n",
    );
    fails(
        &["opaque[]", "0"],
        2,
        "xla-shape: <text>: an opaque has no elements to index; give an array shape\n",
    );
}

fn explain(shape: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .args(["explain", shape])
        .output()
        .expect("run xla-shape");
    assert_eq!(out.status.code(), Some(0), "{shape}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn explain_shows_sizes_strides_and_memory_order() {
    // tiled_layout.md figure 1: 24 slots (96 bytes); the picture is the figure's map.
    let text = explain("f32[3,5]{1,0:T(2,2)}");
    assert!(
        text.contains("  allocated: 24 slots of 32 bits, 96 bytes;"),
        "{text}"
    );
    assert!(text.contains("  data: 21 slots, 84 bytes,"), "{text}");
    assert!(
        text.contains("  XLA's ArraySize 96 bytes, ArrayDataSize 84 bytes;"),
        "{text}"
    );
    assert!(
        text.contains("  strides: none (the tiles reorder elements)"),
        "{text}"
    );
    assert!(
        text.ends_with("     0  1  4  5  8\n     2  3  6  7 10\n    12 13 16 17 20\n"),
        "{text}"
    );
    // The seeds' padding example: 15 slots, column-major strides with dimension 0
    // padded to 3.
    let text = explain("f32[2,3]{0,1:PD(3,5)}");
    assert!(
        text.contains("  allocated: 15 slots of 32 bits, 60 bytes;"),
        "{text}"
    );
    assert!(
        text.contains("  strides: [1,3] elements, [4,12] bytes"),
        "{text}"
    );
    assert!(text.ends_with("    0 3 6\n    1 4 7\n"), "{text}");
    // Packed int4: no byte strides.
    let text = explain("s4[2,4]{1,0:E(4)}");
    assert!(
        text.contains(
            "  strides: [4,1] elements (none in bytes: 4-bit elements are not whole bytes)"
        ),
        "{text}"
    );
    // Unbounded: no memory layout, but still exit 0 for explain.
    let text = explain("f32[?,3]");
    assert!(
        text.contains("  no memory layout: dimensions[0]: dimension is unbounded"),
        "{text}"
    );
}
