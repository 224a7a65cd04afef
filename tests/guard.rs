//! The layout guard (`xla_shape::guard`) on the real dumps of `fixtures/dumps/` (written
//! by XLA through `fixtures/generate_dumps.py`: the same jax program compiled twice,
//! with a transposed entry parameter, with another dtype, with an extra output) and the
//! real modules of `fixtures/modules/`: listings, diffs, renumbered names, policies.

use std::path::{Path, PathBuf};

use xla_shape::check::Walk;
use xla_shape::guard::diff::{self, ChangeKind, DiffReport, What};
use xla_shape::guard::listing::{self, Kind, ReadOptions, Source};
use xla_shape::guard::Policy;
use xla_shape::report::{render, Form, Format};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn dumps(variant: &str) -> PathBuf {
    root().join("fixtures/dumps").join(variant)
}

fn walk() -> Walk {
    Walk::new(&[], &[]).unwrap()
}

fn diff(old: &Path, new: &Path, entry_only: bool) -> DiffReport {
    let options = diff::Options {
        entry_only,
        ignore: Vec::new(),
    };
    diff::diff_paths(old, new, &ReadOptions::default(), &walk(), &options)
}

/// Each pair's key and status, in order.
fn statuses(report: &DiffReport) -> Vec<(&str, &str)> {
    let files = report.files.iter();
    files.map(|f| (f.key.as_str(), f.status())).collect()
}

/// A fresh temporary directory for one test, removed when the test ends.
fn temp(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("xla-shape-guard-{test}-"))
        .tempdir()
        .unwrap()
}

/// The four module files of every dump (text and proto, before and after optimizations).
const MODULE_FILES: [&str; 4] = [
    "module_0000.jit_f.before_optimizations.hlo.pb",
    "module_0000.jit_f.before_optimizations.txt",
    "module_0000.jit_f.cpu_after_optimizations.hlo.pb",
    "module_0000.jit_f.cpu_after_optimizations.txt",
];

#[test]
fn the_same_program_compiled_twice_gives_no_difference() {
    let report = diff(&dumps("base"), &dumps("base_again"), false);
    let keys: Vec<&str> = report.files.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, MODULE_FILES);
    for file in &report.files {
        assert_eq!(file.status(), "same", "{file:?}");
        assert!(file.matches.is_empty(), "{file:?}");
    }
    assert_eq!(report.exit_code(), 0);
}

/// A change as (place, old text, new text, kinds, words).
type Seen = (String, String, String, Vec<ChangeKind>, Vec<String>);

/// `--entry-only`: exactly the entry change, in every module file.
fn entry_changes(variant: &str) -> Vec<Vec<Seen>> {
    let report = diff(&dumps("base"), &dumps(variant), true);
    assert_eq!(report.exit_code(), 1);
    report
        .files
        .iter()
        .map(|f| {
            assert!(
                f.error.is_none() && f.old.is_some() && f.new.is_some(),
                "{f:?}"
            );
            f.changes
                .to_vec()
                .unwrap()
                .iter()
                .map(|c| {
                    assert_eq!(c.what, What::Changed);
                    (
                        c.place.clone(),
                        c.old.clone().unwrap(),
                        c.new.clone().unwrap(),
                        c.aspects.iter().map(|a| a.kind).collect(),
                        c.aspects.iter().map(|a| a.words.clone()).collect(),
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_transposed_entry_parameter_is_exactly_that_change() {
    for changes in entry_changes("transposed") {
        assert_eq!(
            changes,
            [(
                "entry parameter 0 (x.1)".to_string(),
                "f32[1024,1024]{1,0}".to_string(),
                "f32[1024,1024]{0,1}".to_string(),
                vec![ChangeKind::MinorToMajor],
                vec!["minor_to_major changed".to_string()],
            )]
        );
    }
    // The whole module: before optimizations nothing else changed; after them, XLA
    // added a copy that transposes the parameter back (and the fused dot takes it twice).
    let report = diff(&dumps("base"), &dumps("transposed"), false);
    let words = |key: &str| -> Vec<String> {
        let file = report.files.iter().find(|f| f.key == key).unwrap();
        file.changes
            .to_vec()
            .unwrap()
            .iter()
            .map(|c| c.words())
            .collect()
    };
    assert_eq!(
        words("module_0000.jit_f.before_optimizations.txt"),
        ["entry parameter 0 (x.1): f32[1024,1024]{1,0} -> f32[1024,1024]{0,1}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)"]
    );
    assert_eq!(
        words("module_0000.jit_f.cpu_after_optimizations.txt"),
        [
            "entry parameter 0 (x.1): f32[1024,1024]{1,0} -> f32[1024,1024]{0,1}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)",
            "main.1/x.1: f32[1024,1024]{1,0} -> f32[1024,1024]{0,1}: minor_to_major changed (allocated 4194304 -> 4194304 bytes)",
            "main.1/wrapped_copy: instruction added: f32[1024,1024]{1,0} (allocated 4194304 bytes)",
            "fused_computation parameter 1 (param_1): added: f32[1024,1024] (allocated 4194304 bytes)",
            "fused_computation/param_1: instruction added: f32[1024,1024]{1,0} (allocated 4194304 bytes)",
            "computation wrapped_copy_computation: computation added (2 instructions)",
        ]
    );
}

#[test]
fn a_changed_dtype_is_exactly_that_change() {
    for changes in entry_changes("dtype") {
        assert_eq!(
            changes,
            [
                (
                    "entry parameter 1 (y.1)".to_string(),
                    "bf16[8,128]{1,0}".to_string(),
                    "f16[8,128]{1,0}".to_string(),
                    vec![ChangeKind::ElementType],
                    vec!["element type bf16 -> f16".to_string()],
                ),
                (
                    "entry result".to_string(),
                    "(f32[1024,1024]{1,0}, bf16[8,128]{1,0})".to_string(),
                    "(f32[1024,1024]{1,0}, f16[8,128]{1,0})".to_string(),
                    vec![ChangeKind::ElementType],
                    vec!["{1}: element type bf16 -> f16".to_string()],
                ),
            ]
        );
    }
}

#[test]
fn an_extra_output_is_exactly_that_change() {
    for changes in entry_changes("extra_output") {
        assert_eq!(
            changes,
            [(
                "entry result".to_string(),
                "(f32[1024,1024]{1,0}, bf16[8,128]{1,0})".to_string(),
                "(f32[1024,1024]{1,0}, bf16[8,128]{1,0}, bf16[128,8]{1,0})".to_string(),
                vec![ChangeKind::Structure],
                vec!["{2}: added bf16[128,8]{1,0}".to_string()],
            )]
        );
    }
    let report = diff(&dumps("base"), &dumps("extra_output"), true);
    let changes = report.files[0].changes.to_vec().unwrap();
    let change = &changes[0];
    assert_eq!(
        (change.old_bytes, change.new_bytes),
        (Some(4_196_352), Some(4_198_400))
    );
}

#[test]
fn ignoring_a_kind_leaves_it_out() {
    let options = diff::Options {
        entry_only: true,
        ignore: vec![ChangeKind::MinorToMajor],
    };
    let report = diff::diff_paths(
        &dumps("base"),
        &dumps("transposed"),
        &ReadOptions::default(),
        &walk(),
        &options,
    );
    assert_eq!(report.exit_code(), 0, "{report:?}");
}

#[test]
fn a_module_against_its_own_listing_gives_no_difference() {
    let tmp = temp("own-listing");
    let dir = tmp.path();
    let mut modules: Vec<PathBuf> = MODULE_FILES.iter().map(|f| dumps("base").join(f)).collect();
    for entry in std::fs::read_dir(root().join("fixtures/modules")).unwrap() {
        modules.push(entry.unwrap().path());
    }
    modules.sort();
    for module in &modules {
        let name = module.display().to_string();
        let listings = listing::read_path(module, &name, &ReadOptions::default()).unwrap();
        assert_eq!(listings.len(), 1);
        assert_eq!(listings[0].kind, Kind::Module);
        let mut text = String::new();
        listings[0].write_text(&mut text);
        let lock = dir.join("layouts.lock");
        std::fs::write(&lock, &text).unwrap();
        // The listing reads back as a listing, with every shape.
        let back = listing::read_path(&lock, "lock", &ReadOptions::default()).unwrap();
        assert_eq!(back[0].entries.len(), listings[0].entries.len(), "{name}");
        for (old, new) in [(module, &lock), (&lock, module)] {
            let report = diff(old, new, false);
            assert_eq!(report.exit_code(), 0, "{name}: {report:#?}");
        }
    }
}

#[test]
fn a_directory_against_a_directory_and_its_listing() {
    let report = diff(&dumps("base"), &dumps("dtype"), false);
    assert_eq!(report.files.len(), 4);
    assert!(report.files.iter().all(|f| f.status() == "changed"));
    // A directory listing matches the directory file by file.
    let mut text = String::new();
    for file in walk().files(&dumps("base")).unwrap() {
        let name = file.display().to_string();
        for l in listing::read_path(&file, &name, &ReadOptions::default()).unwrap() {
            l.write_text(&mut text);
        }
    }
    let tmp = temp("dir-listing");
    let dir = tmp.path();
    let lock = dir.join("layouts.lock");
    std::fs::write(&lock, &text).unwrap();
    let report = diff(&lock, &dumps("base_again"), false);
    assert_eq!(report.files.len(), 4, "{report:#?}");
    assert_eq!(report.exit_code(), 0, "{report:#?}");
    assert_eq!(diff(&lock, &dumps("transposed"), true).exit_code(), 1);
    // Files on one side only are reported, and differ.
    let copy_dir = temp("dir-copy");
    let copy = copy_dir.path().to_path_buf();
    for file in &MODULE_FILES[..3] {
        std::fs::copy(dumps("base").join(file), copy.join(file)).unwrap();
    }
    std::fs::copy(
        root().join("fixtures/modules/matmul.hlo.txt"),
        copy.join("matmul.hlo.txt"),
    )
    .unwrap();
    let report = diff(&dumps("base"), &copy, false);
    let seen = statuses(&report);
    assert_eq!(
        seen,
        [
            ("matmul.hlo.txt", "only_new"),
            ("module_0000.jit_f.before_optimizations.hlo.pb", "same"),
            ("module_0000.jit_f.before_optimizations.txt", "same"),
            ("module_0000.jit_f.cpu_after_optimizations.hlo.pb", "same"),
            ("module_0000.jit_f.cpu_after_optimizations.txt", "only_old"),
        ]
    );
    assert_eq!(report.exit_code(), 1);
    // An unreadable side is exit 2.
    let report = diff(&dumps("base"), &dir.join("missing"), false);
    assert_eq!(report.exit_code(), 2);
}

/// A file paired by the end of its path (a listing written in another directory) does
/// not take the file whose path is the same: same paths pair first.
#[test]
fn files_with_the_same_path_pair_before_files_paired_by_its_end() {
    let (old_dir, new_dir) = (temp("pair-old"), temp("pair-new"));
    let (old, new) = (old_dir.path(), new_dir.path());
    let base = dumps("base").join(MODULE_FILES[0]);
    let changed = dumps("dtype").join(MODULE_FILES[0]);
    for dir in [old.join("a"), old.join("b/a"), new.join("b/a")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::copy(&base, old.join("a").join(MODULE_FILES[0])).unwrap();
    std::fs::copy(&base, old.join("b/a").join(MODULE_FILES[0])).unwrap();
    std::fs::copy(&changed, new.join("b/a").join(MODULE_FILES[0])).unwrap();
    let report = diff(old, new, false);
    let seen = statuses(&report);
    let (a, b) = (
        format!("a/{}", MODULE_FILES[0]),
        format!("b/a/{}", MODULE_FILES[0]),
    );
    assert_eq!(seen, [(a.as_str(), "only_old"), (b.as_str(), "changed")]);
    // Alone, the file under `a/` pairs with the one under `b/a/` by its end.
    std::fs::remove_dir_all(old.join("b")).unwrap();
    let report = diff(old, new, false);
    let seen = statuses(&report);
    assert_eq!(seen, [(b.as_str(), "changed")]);
}

/// A directory side whose walk fails below its top cannot be compared, and the report
/// says which directory could not be listed (it said only why).
#[test]
fn a_directory_that_cannot_be_listed_is_named() {
    let tmp = temp("unlisted");
    let top = tmp.path().join("side");
    std::fs::create_dir(&top).unwrap();
    std::fs::copy(
        dumps("base").join(MODULE_FILES[1]),
        top.join(MODULE_FILES[1]),
    )
    .unwrap();
    // A tree deeper than a path can name (4,096 bytes): two chains of 1,200
    // directories, each within the limit, the one moved to the bottom of the other.
    let chain = |root: &Path| {
        let path = root.join(["d"; 1200].join("/"));
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    chain(&tmp.path().join("lower"));
    let upper = chain(&top);
    std::fs::rename(tmp.path().join("lower/d"), upper.join("d")).unwrap();
    let report = diff(&top, &top, false);
    assert_eq!(report.exit_code(), 2, "{report:#?}");
    let [file] = &report.files[..] else {
        panic!("{report:#?}")
    };
    let error = file.error.as_ref().unwrap();
    let listed = format!("{}/d/d/", top.display());
    assert!(error.message.starts_with(&listed), "{error:?}");
    assert_eq!(error.file, top.display().to_string());
}

/// Every `.N` suffix of a name (`add.12`, `%fused_computation.1`, `param_0.3:`) shifted
/// by `by`; numbers that are not name suffixes (`1.5`, `line=12`) left alone.
fn renumber(text: &str, by: u64) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let is_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    while i < bytes.len() {
        let b = bytes[i];
        let starts = (b.is_ascii_alphabetic() || b == b'_')
            && (i == 0 || !(is_name(bytes[i - 1]) || bytes[i - 1] == b'"'));
        if !starts {
            out.push(char::from(b));
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && is_name(bytes[j]) {
            j += 1;
        }
        let word = &text[i..j];
        match word.rsplit_once('.') {
            Some((stem, digits))
                if !stem.is_empty()
                    && !digits.is_empty()
                    && digits.bytes().all(|d| d.is_ascii_digit()) =>
            {
                let n: u64 = digits.parse().unwrap();
                out.push_str(&format!("{stem}.{}", n + by));
            }
            _ => out.push_str(word),
        }
        i = j;
    }
    out
}

#[test]
fn renumbered_names_alone_give_no_difference() {
    let mut texts: Vec<PathBuf> = ["base", "transposed", "dtype", "extra_output"]
        .iter()
        .flat_map(|v| {
            [
                dumps(v).join(MODULE_FILES[1]),
                dumps(v).join(MODULE_FILES[3]),
            ]
        })
        .collect();
    for entry in std::fs::read_dir(root().join("fixtures/modules")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            texts.push(path);
        }
    }
    let read = ReadOptions {
        source: Source::Form(Form::HloModule),
        ..ReadOptions::default()
    };
    let mut fallbacks = 0;
    for path in texts {
        let text = std::fs::read_to_string(&path).unwrap();
        for by in [1, 7] {
            let shifted = renumber(&text, by);
            assert_ne!(shifted, text, "{}", path.display());
            let old = listing::read_bytes("old", text.as_bytes(), &read).unwrap();
            let new = listing::read_bytes("new", shifted.as_bytes(), &read).unwrap();
            let result = diff::diff_listings(&old[0], &new[0], &diff::Options::default());
            assert!(
                result.changes.is_empty(),
                "{} shifted by {by}: {:#?}",
                path.display(),
                result.changes
            );
            fallbacks += result.matches.len();
        }
    }
    assert!(
        fallbacks > 100,
        "only {fallbacks} pairs matched other than by name"
    );
    // The renamed pairs are said, with how: instructions by position, computations
    // as their callers are.
    let text = std::fs::read_to_string(dumps("base").join(MODULE_FILES[3])).unwrap();
    let old = listing::read_bytes("old", text.as_bytes(), &read).unwrap();
    let new = listing::read_bytes("new", renumber(&text, 1).as_bytes(), &read).unwrap();
    let result = diff::diff_listings(&old[0], &new[0], &diff::Options::default());
    let words = match_words(&result);
    assert!(
        words.contains(&"matched computation fused_computation.1 with fused_computation.2 as called by matched instructions".to_string()),
        "{words:#?}"
    );
    assert!(
        words.contains(&"matched instruction fused_computation.1/convert.8 with convert.9 by position among same-stem, same-opcode names".to_string()),
        "{words:#?}"
    );
}

/// The matches of a comparison, in words.
fn match_words(result: &diff::ListingDiff) -> Vec<String> {
    let matches = result.matches.to_vec().unwrap();
    matches.iter().map(|m| m.words()).collect()
}

#[test]
fn a_renamed_instruction_among_added_ones_is_matched_by_operands() {
    // extra_output adds a transpose before the old one: XLA renumbered the old one.
    let read = ReadOptions::default();
    let file = MODULE_FILES[1];
    let old = listing::read_path(&dumps("base").join(file), "old", &read).unwrap();
    let new = listing::read_path(&dumps("extra_output").join(file), "new", &read).unwrap();
    let result = diff::diff_listings(&old[0], &new[0], &diff::Options::default());
    let words = match_words(&result);
    assert_eq!(
        words,
        ["matched instruction main.1/transpose.1 with transpose.2 by operands"]
    );
}

#[test]
fn one_more_operation_that_renumbers_the_rest_is_exactly_that_change() {
    // fixtures/renumbered: the optimized gradient step of a bf16 MLP, and the same with
    // its input multiplied by 3 first, as XLA wrote them. XLA fused the multiply with the
    // input's convert: `wrapped_convert` and its computation gave way to
    // `convert_convert_fusion.1` and `fused_computation.14`, and the later fusions and
    // computations of those stems each took the name of the one before. Matched by name,
    // 4 of the fusions and 4 of the computations were each compared with another's, and
    // 24 changes reported.
    let dir = root().join("fixtures/renumbered");
    for file in [
        "module_0000.jit_loss.cpu_after_optimizations.txt",
        "module_0000.jit_loss.cpu_after_optimizations.hlo.pb",
    ] {
        let read = ReadOptions::default();
        let module = listing::read_path(&dir.join("plain").join(file), "old", &read).unwrap();
        let new = listing::read_path(&dir.join("scaled").join(file), "new", &read).unwrap();
        // The plain module against the scaled one, and its listing (`shapes -o
        // layouts.lock`, which names no operands) against the scaled module.
        let tmp = temp("renumbered");
        let lock = tmp.path().join("layouts.lock");
        let mut text = String::new();
        module[0].write_text(&mut text);
        std::fs::write(&lock, &text).unwrap();
        let listed = listing::read_path(&lock, "lock", &read).unwrap();
        for old in [&module[0], &listed[0]] {
            let result = diff::diff_listings(old, &new[0], &diff::Options::default());
            let changes: Vec<(What, String)> = result
                .changes
                .to_vec()
                .unwrap()
                .into_iter()
                .map(|c| (c.what, c.place))
                .collect();
            assert_eq!(
                changes,
                [
                    (What::Removed, "main.5/wrapped_convert".to_string()),
                    (What::Added, "main.5/convert_convert_fusion.1".to_string()),
                    (
                        What::Removed,
                        "computation wrapped_convert_computation".to_string()
                    ),
                    (What::Added, "computation fused_computation.14".to_string()),
                ],
                "{file}"
            );
            // Between modules each computation goes with the fusion that calls it; a
            // listing names no calls, and its computations are matched by signature.
            let how = if old.instructions.is_empty() {
                "by signature among same-stem names"
            } else {
                "as called by matched instructions"
            };
            let words = match_words(&result);
            for k in 1..=4 {
                let computation = format!(
                    "matched computation wrapped_convert_computation.{k} with {} {how}",
                    match k - 1 {
                        0 => "wrapped_convert_computation".to_string(),
                        n => format!("wrapped_convert_computation.{n}"),
                    }
                );
                assert!(words.contains(&computation), "{file}: {words:#?}");
            }
        }
    }
}

const CALLERS: &str = "module_0000.jit_loss.cpu_after_optimizations";

#[test]
fn a_computation_goes_with_the_instruction_that_calls_it() {
    // fixtures/callers: a small attention step, and the same with a causal mask, as XLA
    // wrote them. The mask replaced the fusion `add_multiply_fusion` (which called
    // `fused_computation.3`, of 10 instructions) by two (`broadcast_select_fusion` and
    // `multiply_select_fusion`), and XLA gave the name `fused_computation.3` to the
    // computation of one of them (20 instructions). Matched by name, the two
    // `fused_computation.3` were compared, and 14 changes reported: 10 of them
    // instructions added to a computation that was in fact new.
    let dir = root().join("fixtures/callers");
    let read = ReadOptions::default();
    let side = |variant: &str, ext: &str| {
        let path = dir.join(variant).join(format!("{CALLERS}.{ext}"));
        listing::read_path(&path, variant, &read).unwrap().remove(0)
    };
    for (old, new) in [("txt", "txt"), ("hlo.pb", "hlo.pb"), ("txt", "hlo.pb")] {
        let result = diff::diff_listings(
            &side("plain", old),
            &side("masked", new),
            &diff::Options::default(),
        );
        let changes: Vec<String> = (result.changes.to_vec().unwrap().iter())
            .map(|c| c.words())
            .collect();
        assert_eq!(
            changes,
            [
                "main.5/add_multiply_fusion: instruction removed: f32[16,16]{1,0} (allocated 1024 bytes)",
                "main.8/broadcast_select_fusion: instruction added: f32[16,16]{1,0} (allocated 1024 bytes)",
                "main.8/multiply_select_fusion: instruction added: f32[16,16]{1,0} (allocated 1024 bytes)",
                "computation fused_computation.3: computation removed (10 instructions)",
                "computation fused_computation.3: computation added (20 instructions)",
                "computation fused_computation.8: computation added (13 instructions)",
            ],
            "{old} against {new}"
        );
        // The renumbered computations each went with their caller.
        let words = match_words(&result);
        assert!(
            words.contains(
                &"matched computation region_0.1 with region_0.3 as called by matched instructions"
                    .to_string()
            ),
            "{old} against {new}: {words:#?}"
        );
    }
}

#[test]
fn a_get_tuple_element_is_matched_by_the_element_it_takes() {
    // fixtures/scan: a scanned layer's gradient, with and without a GELU (written by
    // XLA). The GELU saves more for the backward pass: the loop's tuple grows from 6
    // to 10 elements, and XLA renumbers the get-tuple-elements. Of those taking the
    // same tuple, one of the same index and shapes is taken (while.13's element 2, of
    // three f32[6,32,128]), else one of the same shapes (arg_tuple.1's weights moved
    // from element 5 to 9; element 5 is now an f32[6,32,128]). Taken in input order,
    // which XLA's text (in schedule order) and its proto give otherwise, the text gave
    // 100 changes and the proto 95.
    let read = ReadOptions::default();
    let dir = root().join("fixtures/scan");
    let mut changes = Vec::new();
    for ext in ["txt", "hlo.pb"] {
        let side = |variant: &str| {
            let path = dir.join(variant).join(format!("{CALLERS}.{ext}"));
            listing::read_path(&path, variant, &read).unwrap().remove(0)
        };
        let result = diff::diff_listings(&side("plain"), &side("gelu"), &diff::Options::default());
        let matched: std::collections::HashSet<(String, String, String)> =
            (result.matches.to_vec().unwrap().into_iter())
                .map(|m| (m.computation.unwrap_or_default(), m.old, m.new))
                .collect();
        for (computation, old, new) in [
            ("main.12", "get-tuple-element.144", "get-tuple-element.224"),
            ("main.12", "get-tuple-element.145", "get-tuple-element.225"),
            ("main.12", "get-tuple-element.146", "get-tuple-element.226"),
            (
                "region_0.4",
                "get-tuple-element.139",
                "get-tuple-element.219",
            ),
        ] {
            let pair = (computation.to_string(), old.to_string(), new.to_string());
            assert!(matched.contains(&pair), "{ext}: {pair:?}");
        }
        changes.push(result.changes.len());
    }
    assert_eq!(changes, [95, 95]);
}

#[test]
fn a_module_pair_gives_the_same_changes_from_its_text_and_from_its_proto() {
    // XLA's text of a module and its proto list the instructions of a stem in
    // different orders; both are matched in the order of the names' numbers. Taken in
    // input order, fixtures/attention gave 20 changes from the text and 24 from the
    // proto.
    let read = ReadOptions::default();
    let mut changes = Vec::new();
    for (pair, old, new) in [
        ("attention", "plain", "masked"),
        ("callers", "plain", "masked"),
        ("renumbered", "plain", "scaled"),
    ] {
        let dir = root().join("fixtures").join(pair);
        let by_form: Vec<_> = ["txt", "hlo.pb"]
            .iter()
            .map(|ext| {
                let side = |variant: &str| {
                    let path = dir.join(variant).join(format!("{CALLERS}.{ext}"));
                    listing::read_path(&path, variant, &read).unwrap().remove(0)
                };
                let result = diff::diff_listings(&side(old), &side(new), &diff::Options::default());
                let mut seen: Vec<String> = (result.changes.to_vec().unwrap().iter())
                    .map(|c| format!("{:?} {}", c.what, c.place))
                    .chain(match_words(&result))
                    .collect();
                seen.sort();
                (result.changes.len(), seen)
            })
            .collect();
        assert_eq!(by_form[0], by_form[1], "{pair}");
        changes.push(by_form[0].0);
    }
    assert_eq!(changes, [20, 6, 4]);
}

#[test]
fn the_calls_read_from_text_are_those_xla_wrote_in_the_proto() {
    // Every module XLA wrote both ways: each instruction calls the same computations,
    // in the same order (a while loop's body before its condition), in its text
    // attributes and in its proto's called_computation_ids; and each get-tuple-element
    // takes the same element (`index=`, the proto's tuple_index, left out for 0).
    let mut pairs = Vec::new();
    let mut dirs = vec![root().join("fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if let Some(stem) = name.strip_suffix(".hlo.pb") {
                for text in [format!("{stem}.hlo.txt"), format!("{stem}.txt")] {
                    if Path::new(&text).is_file() {
                        pairs.push((PathBuf::from(text), path.clone()));
                    }
                }
            }
        }
    }
    pairs.sort();
    assert!(pairs.len() >= 20, "{pairs:?}");
    let read = ReadOptions::default();
    let (mut calls, mut whiles, mut indices) = (0, 0, 0);
    for (text, proto) in &pairs {
        let calls_of = |path: &Path| {
            let listing = listing::read_path(path, "m", &read).unwrap().remove(0);
            // Each computation's result, as its signature gives it.
            let results: std::collections::HashMap<String, String> = (listing.entries.iter())
                .filter(|e| e.role == xla_shape::text::module::Role::ComputationResult)
                .filter_map(|e| Some((e.computation.clone()?, e.text.clone())))
                .collect();
            let mut all: Vec<_> = (listing.instructions.into_iter())
                .map(|i| (i.computation, i.name, i.opcode, i.calls, i.tuple_index))
                .collect();
            all.sort();
            (all, results)
        };
        let ((from_text, results), (from_proto, _)) = (calls_of(text), calls_of(proto));
        assert_eq!(from_text, from_proto, "{}", text.display());
        for (_, _, opcode, called, index) in &from_text {
            assert_eq!(index.is_some(), opcode == "get-tuple-element", "{opcode}");
            indices += usize::from(index.is_some_and(|i| i > 0));
            calls += called.len();
            if opcode == "while" {
                // The body, then the condition (which gives a pred[]), where the
                // computations' signatures are written.
                assert_eq!(called.len(), 2, "{called:?}");
                let result = |k| results.get(called.get(k).unwrap_or_default());
                if let (Some(body), Some(condition)) = (result(0), result(1)) {
                    assert!(body != "pred[]" && condition == "pred[]", "{called:?}");
                    whiles += 1;
                }
            }
        }
    }
    assert!(
        calls > 100 && whiles >= 2 && indices > 5,
        "{calls} calls, {whiles} while loops, {indices} tuple indices past 0"
    );
}

#[test]
fn the_calls_read_from_text_are_those_xla_parses() {
    // fixtures/calls.jsonl: modules that call computations in every way HLO text writes
    // it, as written and as XLA prints them back, each with the calls XLA's parse gives
    // (its proto's called_computation_ids, named by Google's runtime).
    let path = root().join("fixtures/calls.jsonl");
    let read = ReadOptions {
        source: Source::Form(Form::HloModule),
        ..ReadOptions::default()
    };
    let mut exact = 0;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let (id, text) = (row["id"].as_str().unwrap(), row["text"].as_str().unwrap());
        let listing = listing::read_bytes(id, text.as_bytes(), &read)
            .unwrap()
            .remove(0);
        let computations: std::collections::HashSet<&str> = (listing.instructions.iter())
            .map(|i| i.computation.as_str())
            .collect();
        let ours: std::collections::HashMap<(&str, &str), Vec<String>> =
            (listing.instructions.iter())
                .filter(|i| !i.calls.is_empty())
                .map(|i| ((i.computation.as_str(), i.name.as_str()), i.calls.to_vec()))
                .collect();
        let mut theirs = std::collections::HashSet::new();
        for call in row["calls"].as_array().unwrap() {
            let (computation, name) = (call[0].as_str().unwrap(), call[1].as_str().unwrap());
            let called: Vec<String> = (call[2].as_array().unwrap().iter())
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            if !computations.contains(computation) {
                continue; // a computation XLA made (an async wrapper)
            }
            theirs.insert((computation, name));
            let got = ours.get(&(computation, name)).map_or(&[][..], |c| &c[..]);
            if called.iter().all(|c| computations.contains(c.as_str())) {
                assert_eq!(got, called, "{id}: {computation}/{name}");
                exact += 1;
            } else {
                // XLA made a callee the text does not name (a computation written in
                // place, an async wrapper): none of ours is one of XLA's.
                assert!(
                    got.iter().all(|c| !called.contains(c)),
                    "{id}: {got:?} {called:?}"
                );
            }
        }
        for key in ours.keys() {
            assert!(
                theirs.contains(key),
                "{id}: {key:?} calls nothing in XLA's parse"
            );
        }
        // XLA's proto of it: every call, in order, where XLA leaves out an id of 0
        // (the first computation's, the first instruction's).
        let proto = hex::decode(row["proto"].as_str().unwrap()).unwrap();
        let from_proto = listing::read_bytes(id, &proto, &ReadOptions::default())
            .unwrap()
            .remove(0);
        let calls: Vec<serde_json::Value> = (from_proto.instructions.iter())
            .filter(|i| !i.calls.is_empty())
            .map(|i| serde_json::json!([i.computation, i.name, i.calls]))
            .collect();
        assert_eq!(&calls, row["calls"].as_array().unwrap(), "{id}");
    }
    assert!(exact >= 45, "{exact}");
}

// ----- policy -----

fn module(text: &str) -> listing::Listing {
    let read = ReadOptions {
        source: Source::Form(Form::HloModule),
        ..ReadOptions::default()
    };
    listing::read_bytes("crafted.hlo", text.as_bytes(), &read)
        .unwrap()
        .remove(0)
}

fn real(path: &str) -> listing::Listing {
    let path = root().join(path);
    listing::read_path(&path, "real", &ReadOptions::default())
        .unwrap()
        .remove(0)
}

fn codes(policy: &str, listing: &listing::Listing) -> Vec<&'static str> {
    let policy = Policy::from_toml(policy).unwrap();
    policy
        .check(listing)
        .to_vec()
        .unwrap()
        .into_iter()
        .map(|f| f.code)
        .collect()
}

/// One entry parameter `SHAPE`, returned as is, in a hand-written module.
fn crafted(shape: &str) -> listing::Listing {
    let bare = shape.split('{').next().unwrap();
    module(&format!(
        "HloModule m, entry_computation_layout={{({shape})->{shape}}}\n\n\
         ENTRY %main (p: {bare}) -> {bare} {{\n  ROOT %p = {shape} parameter(0)\n}}\n"
    ))
}

const BASE: &str = "fixtures/dumps/base/module_0000.jit_f.cpu_after_optimizations.txt";
const MATMUL: &str = "fixtures/modules/matmul.hlo.txt";

#[test]
fn each_policy_rule_fires_on_a_crafted_input_and_not_on_a_real_module_that_meets_it() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // (policy, crafted shape it fires on, real module that meets it, code)
        (
            "[entry]\nlayout = \"default\"",
            "f32[4,8]{0,1}",
            BASE,
            "policy.entry_layout",
        ),
        (
            "[all]\ndeny_element_types = [\"f64\", \"c128\"]",
            "f64[2]{0}",
            BASE,
            "policy.deny_element_types",
        ),
        (
            "[all]\nallow_element_types = [\"f32\"]",
            "s8[2]{0}",
            MATMUL,
            "policy.allow_element_types",
        ),
        (
            "[all]\nmax_array_bytes = 1000",
            "f32[1024]{0}",
            MATMUL,
            "policy.max_array_bytes",
        ),
        (
            "[all]\nmemory_spaces = [0, 1]",
            "f32[8]{0:S(5)}",
            BASE,
            "policy.memory_spaces",
        ),
        (
            "[all]\nrequire_tiling = [\"bf16\"]",
            "bf16[8,128]{1,0}",
            MATMUL,
            "policy.require_tiling",
        ),
        (
            "[entry]\nmax_total_bytes = 100",
            "f32[1024]{0}",
            MATMUL,
            "policy.max_total_bytes",
        ),
        (
            "[all]\ndynamic_dimensions = false",
            "f32[<=4]{0}",
            BASE,
            "policy.dynamic_dimensions",
        ),
    ];
    for &(policy, shape, meets, code) in cases {
        let fired = codes(policy, &crafted(shape));
        assert!(!fired.is_empty(), "{code} silent on {shape}");
        assert!(fired.iter().all(|c| *c == code), "{code}: {fired:?}");
        assert_eq!(
            codes(policy, &real(meets)),
            Vec::<&str>::new(),
            "{code} on {meets}"
        );
    }
    // The same rules on real modules that break them.
    let transposed =
        real("fixtures/dumps/transposed/module_0000.jit_f.cpu_after_optimizations.txt");
    assert_eq!(
        codes("[entry]\nlayout = \"default\"", &transposed),
        ["policy.entry_layout"]
    );
    let s5 = real("fixtures/modules/host_memory_s5.hlo.txt");
    assert!(codes("[all]\nmemory_spaces = [0]", &s5).contains(&"policy.memory_spaces"));
}

#[test]
fn policy_findings_say_where_and_what() {
    let policy = Policy::from_toml("[entry]\nlayout = \"default\"").unwrap();
    let transposed =
        real("fixtures/dumps/transposed/module_0000.jit_f.cpu_after_optimizations.txt");
    let findings = policy.check(&transposed).to_vec().unwrap();
    assert_eq!(findings.len(), 1);
    let f = &findings[0];
    assert_eq!(f.severity, xla_shape::Severity::Error);
    assert_eq!((f.line, f.column), (Some(1), Some(64)));
    assert_eq!(f.shape.as_deref(), Some("f32[1024,1024]{0,1}"));
    assert_eq!(
        f.message,
        "entry parameter 0: minor_to_major {0,1} is not the default layout {1,0} the policy requires ([entry] layout = \"default\")"
    );
    // A proto gives the proto path.
    let proto = real("fixtures/dumps/transposed/module_0000.jit_f.cpu_after_optimizations.hlo.pb");
    let findings = policy.check(&proto).to_vec().unwrap();
    assert_eq!(
        findings[0].path,
        "hlo_module.host_program_shape.parameters[0]"
    );
    // Tuples are checked element by element; computation scopes by glob.
    let scoped = "[computations.\"fused_*\"]\nallow_element_types = [\"f32\"]";
    let findings = Policy::from_toml(scoped)
        .unwrap()
        .check(&real(BASE))
        .to_vec()
        .unwrap();
    assert!(!findings.is_empty());
    assert!(findings
        .iter()
        .all(|f| f.computation.as_deref() == Some("fused_computation.1")));
}

#[test]
fn a_bad_policy_is_an_error_naming_the_key() {
    let cases = [
        (
            "[all]\nmax_array_byte = 3",
            "unknown field `max_array_byte`",
        ),
        (
            "[everything]\nmax_array_bytes = 3",
            "unknown field `everything`",
        ),
        ("[entry]\nlayout = \"row\"", "unknown variant `row`"),
        ("[all]\nmax_array_bytes = -3", "invalid value: integer `-3`"),
        ("[all]\nmax_array_bytes = \"big\"", "max_array_bytes"),
        (
            "[all]\ndeny_element_types = [\"f65\"]",
            "[all] deny_element_types: 'f65' is not an array element type",
        ),
        (
            "[all]\nlayout = \"default\"",
            "[all] layout: this key is about the entry computation layout",
        ),
        ("[computations.\"[\"]\nmax_array_bytes = 3", "bad glob"),
        // A policy that sets no rule would pass every input.
        ("", "the policy sets no rule"),
        ("# nothing yet\n", "the policy sets no rule"),
        ("[all]\n[entry]\n", "the policy sets no rule"),
        (
            "[computations.\"fused*\"]\ndeny_element_types = []\n",
            "the policy sets no rule",
        ),
    ];
    for (text, expected) in cases {
        let error = Policy::from_toml(text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
    // A long key, line, type name or glob is cut in the message (a line of 200 KB made a
    // message of 200 KB, twice over for a key).
    let long = "x".repeat(200_000);
    let cut = format!("{}... (200000 bytes in all)", "x".repeat(64));
    for (text, expected) in [
        (
            format!("[all]\n{long} = 1\n"),
            "line 2: unknown field `xxx".to_string(),
        ),
        (
            format!("[all]\ndeny_element_types = [\"{long}\"]\n"),
            format!(
                "'{}'... (200000 bytes in all) is not an array element type",
                "x".repeat(64)
            ),
        ),
        (
            format!("[computations.\"{long}\"]\nlayout = \"default\"\n"),
            format!("[computations.\"{cut}\"] layout: "),
        ),
        (
            format!("[all]\nmemory_spaces = [{}1]\n", "[".repeat(200_000)),
            "(in `memory_spaces = [[[".to_string(),
        ),
    ] {
        let error = Policy::from_toml(&text).unwrap_err().to_string();
        assert!(
            error.len() < 1000,
            "{} bytes: {}",
            error.len(),
            &error[..300]
        );
        assert!(error.contains(&expected), "{error}");
        assert!(error.contains(" bytes in all)"), "{error}");
    }
}

/// A computation glob whose matcher cannot be built is a bad glob, not a panic: 500
/// nested alternations (past the regex parser's nesting) and 120,000 `?*` (past its
/// size limit) exited 101 inside globset. Alternations may nest 32 deep.
#[test]
fn a_glob_whose_matcher_cannot_be_built_is_a_bad_glob() {
    use xla_shape::guard::policy::MAX_GLOB_NESTING;
    let policy = |glob: &str| {
        Policy::from_toml(&format!("[computations.\"{glob}\"]\nmemory_spaces = [0]\n"))
    };
    let nested = |n: usize| format!("{}a{}", "{".repeat(n), "}".repeat(n));
    let read = policy(&nested(MAX_GLOB_NESTING)).unwrap();
    assert!(read.computations[0].1.is_match("a"));
    for glob in [
        nested(MAX_GLOB_NESTING + 1),
        nested(500),
        "?*".repeat(120_000),
    ] {
        let error = policy(&glob).unwrap_err().to_string();
        assert!(error.contains("bad glob: "), "{error}");
        assert!(error.len() < 300, "{error}");
    }
    // An escaped brace does not nest.
    assert!(policy(&format!("{}a", "\\\\{".repeat(40))).is_ok());
}

/// A policy is held to a size and a number of computation globs (each glob is compiled
/// to a matcher of some 7 KB): at the limits it reads, one past them is an error that
/// says the limit, and a huge file is refused without being read whole.
#[test]
fn a_policy_past_its_limits_is_refused() {
    use xla_shape::guard::policy::{MAX_COMPUTATION_GLOBS, MAX_POLICY_BYTES};
    let tables = |n: usize| -> String {
        (0..n)
            .map(|i| format!("[computations.\"fused_{i}*\"]\nmax_array_bytes = {i}\n"))
            .collect()
    };
    let policy = Policy::from_toml(&tables(MAX_COMPUTATION_GLOBS)).unwrap();
    assert_eq!(policy.computations.len(), MAX_COMPUTATION_GLOBS);
    let error = Policy::from_toml(&tables(MAX_COMPUTATION_GLOBS + 1))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "[computations]: 1025 tables; a policy has at most 1024"
    );

    let mut text = "[all]\nmax_array_bytes = 3\n".to_string();
    let comment = MAX_POLICY_BYTES - text.len() - 1;
    text.push_str(&"#".repeat(comment));
    text.push('\n');
    assert_eq!(text.len(), MAX_POLICY_BYTES);
    assert_eq!(
        Policy::from_toml(&text).unwrap().all.max_array_bytes,
        Some(3)
    );
    text.push('\n');
    let error = Policy::from_toml(&text).unwrap_err().to_string();
    assert!(error.contains("at most 256 KiB"), "{error}");

    // A file of 64 MB of comments is read only to its limit.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.toml");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(64 << 20).unwrap();
    let error = Policy::load(&path).unwrap_err().to_string();
    assert!(
        error.contains("huge.toml: more than 262144 bytes"),
        "{error}"
    );
    // The limit falling inside a character is still the limit, and a file that is not
    // UTF-8 is still said so.
    let mut text = "[all]\n#x".to_string();
    while text.len() <= MAX_POLICY_BYTES + 1 {
        text.push('é');
    }
    assert!(!text.is_char_boundary(MAX_POLICY_BYTES + 1));
    std::fs::write(&path, &text).unwrap();
    let error = Policy::load(&path).unwrap_err().to_string();
    assert!(
        error.contains("huge.toml: more than 262144 bytes"),
        "{error}"
    );
    std::fs::write(&path, b"[all]\nmax_array_bytes = 3 # \xff\n").unwrap();
    let error = Policy::load(&path).unwrap_err().to_string();
    assert!(
        error.ends_with("huge.toml: stream did not contain valid UTF-8"),
        "{error}"
    );
}

/// `diff --format json` is written a change at a time: the same bytes as the report's
/// JSON value pretty-printed, for pairs with changes and matches, files on one side
/// only, an unreadable pair and an empty report. Each format written a pair at a time
/// as they are compared ([`diff::DiffWriter`]) is what the whole report writes.
#[test]
fn the_json_diff_written_as_it_goes_is_the_whole_value_pretty_printed() {
    let (old, new) = (temp("json-old"), temp("json-new"));
    let base = std::fs::read_to_string(dumps("base").join(MODULE_FILES[3])).unwrap();
    let transposed = std::fs::read_to_string(dumps("transposed").join(MODULE_FILES[3])).unwrap();
    std::fs::write(old.path().join("m.txt"), &base).unwrap();
    std::fs::write(new.path().join("m.txt"), renumber(&transposed, 1)).unwrap();
    std::fs::write(old.path().join("gone.txt"), &base).unwrap();
    std::fs::write(new.path().join("added.txt"), &base).unwrap();
    std::fs::write(old.path().join("bad.txt"), "not a shape\n").unwrap();
    std::fs::write(new.path().join("bad.txt"), "not a shape\n").unwrap();
    let report = diff(old.path(), new.path(), false);
    let statuses: Vec<&str> = report.files.iter().map(|f| f.status()).collect();
    for status in ["changed", "only_old", "only_new", "unreadable"] {
        assert!(statuses.contains(&status), "{statuses:?}");
    }
    assert!(report.files.iter().any(|f| !f.matches.is_empty()));
    // What `diff` writes as the pairs are compared is what the whole report gives.
    let pairs = (old.path(), new.path());
    for format in [Format::Text, Format::Json, Format::Github, Format::Sarif] {
        let mut streamed = Vec::new();
        let mut writer = diff::DiffWriter::new(format, &report.old, &report.new, &mut streamed);
        let options = diff::Options::default();
        let read = ReadOptions::default();
        diff::diff_paths_each(pairs, &read, &walk(), &options, &mut |f| writer.file(&f)).unwrap();
        assert_eq!(writer.finish().unwrap(), report.summary());
        let mut whole = Vec::new();
        report.write(format, &mut whole).unwrap();
        assert_eq!(
            String::from_utf8(streamed.clone()),
            String::from_utf8(whole),
            "{format:?}"
        );
        // GitHub's commands and SARIF's results are those of the report as a document;
        // SARIF's invocation gives `diff`'s exit status, not the document's.
        let mut rendered = Vec::new();
        render(
            format,
            &report.to_document(),
            &mut rendered,
            &mut Vec::new(),
        )
        .unwrap();
        match format {
            Format::Github => assert_eq!(streamed, rendered),
            Format::Sarif => {
                let streamed: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
                let rendered: serde_json::Value = serde_json::from_slice(&rendered).unwrap();
                let run = &streamed["runs"][0];
                assert_eq!(run["results"], rendered["runs"][0]["results"]);
                assert_eq!(run["tool"], rendered["runs"][0]["tool"]);
                let invocation = &run["invocations"][0];
                assert_eq!(invocation["exitCode"], report.exit_code());
                assert_eq!(invocation["executionSuccessful"], false);
                let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
                let unreadable = report.summary().unreadable;
                assert_eq!(notes.len(), unreadable);
                assert!(notes.iter().all(|n| n["level"] == "error"), "{notes:?}");
            }
            Format::Text | Format::Json => {}
        }
    }
    for report in [report, DiffReport::default()] {
        let mut written = Vec::new();
        report.write_json(&mut written).unwrap();
        let whole = serde_json::to_string_pretty(&report.to_json()).unwrap() + "\n";
        assert_eq!(String::from_utf8(written).unwrap(), whole);
    }
}

/// A listing from a pipe that goes on past its first MiB is read from a copy of its
/// text in a temporary file: what it lists, in order, and its errors are those of the
/// same bytes read whole, for text and JSON lines, with lines of many files mixed, and
/// with a bad line, a line break in a JSON field or a byte that is not UTF-8 near its
/// end.
#[test]
fn a_long_listing_from_a_pipe_lists_as_its_bytes_read_whole() {
    let mut text = String::new();
    let mut json = String::new();
    for i in 0..30_000 {
        let (file, layout) = (format!("d/f{}.hlo", i % 700), ["{0}", "{0:T(8)}"][i % 2]);
        text.push_str(&format!("{file}: ENTRY main/x{i}: f32[8]{layout}\n"));
        json.push_str(&format!(
            "{{\"file\":\"{file}\",\"location\":\"ENTRY main/x{i}\",\"shape\":\"f32[8]{layout}\"}}\n"
        ));
    }
    assert!(text.len() > 1 << 20 && json.len() > 1 << 20);
    let mut inputs: Vec<Vec<u8>> = vec![text.clone().into_bytes(), json.clone().into_bytes()];
    inputs.push(format!("{text}d/f1.hlo: ENTRY main/y: f32[8]{{9}}\n").into_bytes());
    inputs.push(format!("{text}not a listing line\n").into_bytes());
    inputs.push(
        format!("{json}{{\"file\":\"d/f1.hlo\",\"location\":null,\"shape\":3}}\n").into_bytes(),
    );
    inputs.push(
        format!("{json}{{\"file\":\"d/f\\n1.hlo\",\"location\":null,\"shape\":\"f32[]\"}}\n")
            .into_bytes(),
    );
    inputs.push(format!("{json}\n\n").into_bytes());
    let mut not_utf8 = text.clone().into_bytes();
    not_utf8.extend_from_slice(b"d/f2.hlo: ENTRY main/\xff: f32[8]{0}\n");
    inputs.push(not_utf8);
    for source in [Source::Auto, Source::Listing] {
        let read = ReadOptions {
            source,
            ..ReadOptions::default()
        };
        for bytes in &inputs {
            let whole = listing::read_bytes("in", bytes, &read).map(|listings| {
                let by_file = listings.into_iter().map(|l| (l.file, l.entries));
                by_file.collect::<Vec<_>>()
            });
            let mut streamed: Vec<(String, Vec<listing::Entry>)> = Vec::new();
            let piped =
                listing::stream_reader(
                    &bytes[..],
                    "in",
                    &read,
                    &mut |listing, entry| match streamed.last_mut() {
                        Some((file, entries)) if *file == listing.file => entries.push(entry),
                        _ => streamed.push((listing.file.clone(), vec![entry])),
                    },
                );
            let piped = piped.map(|()| streamed);
            assert_eq!(format!("{piped:?}"), format!("{whole:?}"), "{source:?}");
        }
    }
}
