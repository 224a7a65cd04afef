//! Every command-line example of README.md runs, with its output checked.
//!
//! The examples are read from the README's `sh` blocks (lines starting `xla-shape ` or
//! `cargo run ... --`; synopses with `[--option]` are not examples), and each must have
//! an entry in [`EXAMPLES`], and each entry must still be in the README, so the two
//! cannot drift apart. Every `examples/...` file they name must exist. They run with
//! bash, in a temporary directory holding a copy of `examples/` (so that files they write
//! land there) and with HOME pointing at it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One README example: the line as written (without its `# comment`), what to run when
/// not the line itself, the exit status, and a check of standard output and of the
/// directory it ran in.
struct Example {
    line: &'static str,
    run: Option<&'static str>,
    check: fn(&str, &Path),
}

const F32_2X3_JSON: &str = r#"{"elementType":"F32","dimensions":["2","3"],"layout":{"minorToMajor":["1","0"],"tailPaddingAlignmentInElements":"1"},"isDynamicDimension":[false,false]}
"#;

fn read(dir: &Path, file: &str) -> String {
    String::from_utf8(std::fs::read(dir.join(file)).unwrap()).unwrap()
}

/// `f32[2,3]` holding 1..6 in `{0,1:T(8,128)}`: one tile, element (i,j) at slot j·128 + i.
fn f32_2x3_tiled() -> Vec<u8> {
    let mut slots = vec![0f32; 1024];
    for (i, j, v) in [
        (0, 0, 1.0),
        (0, 1, 2.0),
        (0, 2, 3.0),
        (1, 0, 4.0),
        (1, 1, 5.0),
        (1, 2, 6.0),
    ] {
        slots[j * 128 + i] = v;
    }
    slots.iter().flat_map(|v: &f32| v.to_le_bytes()).collect()
}

const EXAMPLES: &[Example] = &[
    Example {
        line: "xla-shape relayout --shape 'f32[2,3]{1,0}' --to '{0,1:T(8,128)}' examples/f32_2x3.bin -o tiled.bin",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            assert_eq!(std::fs::read(dir.join("tiled.bin")).unwrap(), f32_2x3_tiled());
        },
    },
    Example {
        line: "xla-shape relayout --shape 'bf16[4,8]{1,0:T(2,4)(2,1)}' --to npy examples/bf16_4x8_tiled.bin -o x.npy",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            let npy = std::fs::read(dir.join("x.npy")).unwrap();
            let text = String::from_utf8_lossy(&npy[..npy.len() - 64]).to_string();
            assert!(text.contains("'descr': '<u2'") && text.contains("'shape': (4, 8"), "{text}");
            // Row-major: the bf16 of 0.0, 1.0, ... 31.0.
            let values: Vec<u16> = npy[npy.len() - 64..].chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            let expected: Vec<u16> = (0..32).map(|k| ((k as f32).to_bits() >> 16) as u16).collect();
            assert_eq!(values, expected);
        },
    },
    Example {
        line: "xla-shape relayout --shape 'f32[2,3]{0,1:T(8,128)}' --from-npy examples/f32_2x3.npy -o device.bin",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            assert_eq!(std::fs::read(dir.join("device.bin")).unwrap(), f32_2x3_tiled());
        },
    },
    Example {
        line: "xla-shape shapes examples/matmul.hlo.txt",
        run: None,
        check: |out, _| {
            assert_eq!(out.lines().count(), 9, "{out}");
            assert!(out.starts_with("examples/matmul.hlo.txt: entry_computation_layout/parameter 0: f32[2,3]{1,0}\n"), "{out}");
            assert!(out.ends_with("examples/matmul.hlo.txt: ENTRY main.1/dot_general.1: f32[2,4]{1,0}\n"), "{out}");
        },
    },
    Example {
        line: "xla-shape diff --entry-only examples/base.hlo.txt examples/transposed.hlo.txt",
        // Exit 1 (a difference), and the summary on standard error.
        run: Some("xla-shape diff --entry-only examples/base.hlo.txt examples/transposed.hlo.txt 2>/dev/null; test $? = 1"),
        check: |out, _| assert_eq!(out, "examples/transposed.hlo.txt: entry parameter 0 (x.1): f32[1024,1024]{1,0} -> f32[1024,1024]{0,1}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)\n"),
    },
    Example {
        line: "xla-shape validate --policy examples/policy.toml examples/matmul.hlo.txt",
        run: None,
        check: |out, _| assert_eq!(out, ""),
    },
    Example {
        line: "cargo run --locked --quiet -- convert --from binary --to json examples/f32_2x3.binpb",
        run: Some("xla-shape convert --from binary --to json examples/f32_2x3.binpb"),
        check: |out, _| assert_eq!(out, F32_2X3_JSON),
    },
    Example {
        line: "xla-shape completions bash > ~/.local/share/bash-completion/completions/xla-shape",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            let script = read(dir, ".local/share/bash-completion/completions/xla-shape");
            assert!(script.contains("complete -F _xla__shape"), "{script}");
        },
    },
    Example {
        line: "xla-shape completions zsh > ~/.zfunc/_xla-shape",
        run: None,
        check: |_, dir| assert!(read(dir, ".zfunc/_xla-shape").starts_with("#compdef xla-shape")),
    },
    Example {
        line: "xla-shape man | man -l -",
        // man(1) may not be installed: check the page itself.
        run: Some("xla-shape man"),
        check: |out, _| assert!(out.contains(".TH xla-shape 1"), "{out}"),
    },
    Example {
        line: "xla-shape man convert -o xla-shape-convert.1",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            assert!(read(dir, "xla-shape-convert.1").contains(".TH xla-shape-convert 1"));
        },
    },
    Example {
        line: "xla-shape convert --from binary --to binary examples/f32_2x3.binpb -o copy.binpb",
        run: None,
        check: |out, dir| {
            assert_eq!(out, "");
            assert_eq!(
                std::fs::read(dir.join("copy.binpb")).unwrap(),
                std::fs::read(dir.join("examples/f32_2x3.binpb")).unwrap()
            );
        },
    },
    Example {
        line: "xla-shape convert --from binary --to hlo examples/legacy_padded.binpb",
        run: None,
        check: |out, _| assert_eq!(out, "f32[2,3]{0,1}\n"),
    },
    Example {
        line: "xla-shape convert --from binary --to hlo --hlo-style exact examples/legacy_padded.binpb",
        run: None,
        check: |out, _| assert_eq!(out, "f32[2,3]{0,1:PD(3,5)PV(zero)F(dense)}\n"),
    },
    Example {
        line: "xla-shape convert --from hlo --to binary 'bf16[8,128]{1,0:T(8,128)(2,1)}' | od -An -tx1",
        run: None,
        check: |out, _| {
            // The bytes XLA's parser + Shape::ToProto write (fixtures/hlo_shapes.jsonl).
            let words: Vec<&str> = out.split_whitespace().collect();
            assert_eq!(
                words.concat(),
                "10101a030880012a140a0201003205 0a030880013204 0a020201800101320200 00"
                    .replace(' ', "")
            );
        },
    },
    Example {
        line: "xla-shape convert --from binary --to hlo --message layout examples/layout.binpb",
        run: None,
        check: |out, _| assert_eq!(out, "{1,2,0:T(16,256)(2,1)}\n"),
    },
    Example {
        line: "xla-shape convert --from hlo --to json --pretty --text 'f32[2,3]{0,1}'",
        run: None,
        check: |out, _| {
            let value: serde_json::Value = serde_json::from_str(out).unwrap();
            assert_eq!(
                value,
                serde_json::json!({
                    "elementType": "F32",
                    "dimensions": ["2", "3"],
                    "layout": {"minorToMajor": ["0", "1"], "tailPaddingAlignmentInElements": "1"},
                    "isDynamicDimension": [false, false]
                })
            );
            assert!(out.starts_with("{\n  \"elementType\": \"F32\",\n"), "{out}");
        },
    },
    Example {
        line: "xla-shape convert --from hlo --to hlo --message program-shape '(a: f32[2], b: s32[])->f32[]'",
        run: None,
        check: |out, _| assert_eq!(out, "(f32[2]{0}, s32[])->f32[]\n"),
    },
    Example {
        line: "xla-shape validate examples/",
        run: None,
        check: |out, _| assert_eq!(out, ""),
    },
    Example {
        line: "xla-shape validate --from hlo examples/shapes.txt",
        run: None,
        check: |out, _| assert_eq!(out, ""),
    },
    Example {
        line: "xla-shape validate --from hlo-module examples/matmul.hlo.txt",
        run: None,
        check: |out, _| assert_eq!(out, ""),
    },
    Example {
        line: "xla-shape validate --from hlo-module-proto examples/matmul.hlo.pb",
        run: None,
        check: |out, _| assert_eq!(out, ""),
    },
    Example {
        line: "xla-shape explain 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'",
        run: None,
        check: |out, _| {
            assert!(out.starts_with(
                "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}\n  element type: bf16, 16-bit floating point, 2 bytes per element\n"
            ));
            for line in [
                "  memory space S(1): generic fast memory (VMEM on TPU)\n",
                "  4194304 elements, 8388608 bytes (8 MiB) of elements; XLA's ByteSizeOf, padding not counted\n",
                "  strides: none (the tiles reorder elements)\n",
            ] {
                assert!(out.contains(line), "{line:?} not in\n{out}");
            }
        },
    },
    Example {
        line: "xla-shape explain examples/shape.txt --format json --pretty",
        run: None,
        check: |out, _| {
            let value: serde_json::Value = serde_json::from_str(out).unwrap();
            assert_eq!(value["text"], "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
            assert_eq!(value["array"]["memory"]["allocated_bytes"], 8_388_608);
        },
    },
    Example {
        line: "xla-shape index 'f32[3,5]{1,0:T(2,2)}' 2,3",
        run: None,
        check: |out, _| assert_eq!(out, "17\n"),
    },
    Example {
        line: "xla-shape index 's4[2,3]{1,0:E(4)}' 1,2 --bits",
        run: None,
        check: |out, _| assert_eq!(out, "20\n"),
    },
    Example {
        line: "xla-shape index 'f32[3,5]{1,0:T(2,2)}' --linear 17",
        run: None,
        check: |out, _| assert_eq!(out, "2,3\n"),
    },
    Example {
        line: "xla-shape index 'f32[2,3]{0,1:PD(3,5)}' --linear 2",
        run: None,
        check: |out, _| assert_eq!(out, "padding\n"),
    },
    Example {
        line: "xla-shape index 'f32[3,5]{1,0:T(2,2)}' 0,0 1,2 2,4",
        run: None,
        check: |out, _| assert_eq!(out, "0\n6\n20\n"),
    },
    Example {
        line: "xla-shape index --format json 'f32[3,5]{1,0:T(2,2)}' 2,3",
        run: None,
        check: |out, _| {
            assert_eq!(
                out,
                "{\"version\":1,\"shape\":\"f32[3,5]{1,0:T(2,2)}\",\"element_bits\":32,\"allocated_elements\":24,\"results\":[{\"index\":[2,3],\"linear_index\":17,\"padding\":false,\"bit_offset\":544,\"byte_offset\":68}]}\n"
            )
        },
    },
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The line without a trailing `# comment` (a `#` after a blank, outside quotes).
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        previous = c;
    }
    line.trim_end()
}

/// The README's examples: lines of `sh` blocks that run xla-shape, synopses left out.
fn readme_examples() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut examples = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        let runs = line.starts_with("xla-shape ") || line.starts_with("cargo run ");
        if in_sh && runs && !line.contains(" [--") {
            examples.push(without_comment(line).to_string());
        }
    }
    examples
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn every_readme_example_is_checked() {
    let readme = readme_examples();
    let table: Vec<&str> = EXAMPLES.iter().map(|e| e.line).collect();
    let unchecked: Vec<&String> = readme
        .iter()
        .filter(|l| !table.contains(&l.as_str()))
        .collect();
    assert!(
        unchecked.is_empty(),
        "README examples without a check: {unchecked:#?}"
    );
    let stale: Vec<&&str> = table
        .iter()
        .filter(|l| !readme.iter().any(|r| r == *l))
        .collect();
    assert!(
        stale.is_empty(),
        "checks of examples no longer in README: {stale:#?}"
    );
    // Every example file named exists in the repository.
    for line in &readme {
        for word in line.split_whitespace() {
            if word.starts_with("examples/") {
                let path = root().join(word);
                assert!(
                    path.is_file() || (word.ends_with('/') && path.is_dir()),
                    "{line}: {word} does not exist"
                );
            }
        }
    }
}

#[test]
fn readme_examples_run_and_print_what_the_readme_says() {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_xla-shape"));
    let bin_dir = binary.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    for example in EXAMPLES {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&root().join("examples"), &dir.path().join("examples"));
        std::fs::create_dir_all(dir.path().join(".local/share/bash-completion/completions"))
            .unwrap();
        std::fs::create_dir_all(dir.path().join(".zfunc")).unwrap();
        let command = example.run.unwrap_or(example.line);
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", command])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("HOME", dir.path())
            .output()
            .expect("run bash");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        if command.starts_with("xla-shape validate ") {
            // validate says what it checked on standard error, and nothing else here.
            assert_eq!(stderr.lines().count(), 1, "{command}: {stderr}");
            assert!(
                stderr.starts_with("xla-shape: checked "),
                "{command}: {stderr}"
            );
            assert!(
                stderr.ends_with(": 0 errors, 0 warnings\n"),
                "{command}: {stderr}"
            );
        } else {
            assert_eq!(stderr, "", "{command}");
        }
        (example.check)(&stdout, dir.path());
    }
}
