//! `diff` speed on the two largest real module fixtures (`fixtures/modules/` and
//! `fixtures/dumps/`, by size): scan_while as text and as an `HloModuleProto`, side by
//! side in one run. One iteration is what `xla-shape diff OLD NEW` does for a file pair
//! held in memory: list both sides (scan, decode, print every shape) and compare them
//! (match computations and instructions, compare every shape, allocated sizes). The new
//! side is the module with every `.N` name suffix shifted (text) so the renumbered-name
//! matching runs too; the proto is compared with itself. Throughput counts both inputs'
//! bytes.
//!
//! Then `uneven/N`: a computation of N instructions of one stem against N + 1 renamed
//! ones, whose operands are another parameter, so that every old instruction looks for
//! a match by operands and finds none (before session 22 each looked at every new one:
//! time grew with N², 20 s for N = 20,000). N = 2,000, 8,000 and 32,000: the time
//! should grow four times a step, not sixteen. And `operands/N`: a tuple of N operands
//! written with their shapes, every one of which changes type (before session 22 each
//! operand's place was looked for among all of them: 23 s for N = 80,000). And
//! `reversed/N`: a listing read back that gives a computation's N parameters in reverse,
//! every one of which changes type (before session 23 each was put in its place in a
//! sorted list as it came: 8 s for N = 200,000). And `callers/N`: N fusions each calling
//! a computation of its own, against the same with one more fusion first (every
//! computation renumbered, matched through the fusion that calls it): linear too.
//!
//! `cargo bench --bench diff -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::guard::diff::{diff_listings, Options};
use xla_shape::guard::listing::{read_bytes, ReadOptions};

/// Every module file of the fixtures, largest first.
fn largest_modules() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("modules"), root.join("dumps")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".hlo.txt")
                || name.ends_with(".hlo.pb")
                || name.ends_with("optimizations.txt")
            {
                files.push(path);
            }
        }
    }
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    files.truncate(2);
    files
}

/// Every `.N` name suffix shifted by one (numbers that are not name suffixes kept).
fn renumber(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 64);
    let is_name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !((b.is_ascii_alphabetic() || b == b'_')
            && (i == 0 || !(is_name(bytes[i - 1]) || bytes[i - 1] == b'"')))
        {
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
            Some((stem, n))
                if !stem.is_empty() && !n.is_empty() && n.bytes().all(|d| d.is_ascii_digit()) =>
            {
                out.push_str(&format!("{stem}.{}", n.parse::<u64>().unwrap_or(0) + 1));
            }
            _ => out.push_str(word),
        }
        i = j;
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("diff");
    let read = ReadOptions::default();
    for path in largest_modules() {
        let old = std::fs::read(&path).unwrap();
        let new = match std::str::from_utf8(&old) {
            Ok(text) => renumber(text).into_bytes(),
            Err(_) => old.clone(),
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let check = {
            let o = read_bytes("old", &old, &read).unwrap();
            let n = read_bytes("new", &new, &read).unwrap();
            diff_listings(&o[0], &n[0], &Options::default())
        };
        assert!(check.changes.is_empty(), "{name}: {:?}", check.changes);
        eprintln!(
            "{name}: {} + {} bytes, {} pairs matched other than by name",
            old.len(),
            new.len(),
            check.matches.len()
        );
        group.throughput(Throughput::Bytes((old.len() + new.len()) as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let o = read_bytes("old", black_box(&old), &read).unwrap();
                let n = read_bytes("new", black_box(&new), &read).unwrap();
                black_box(diff_listings(&o[0], &n[0], &Options::default()))
            })
        });
    }
    for n in [2_000, 8_000, 32_000] {
        let module = |names: std::ops::Range<usize>, operand: &str| {
            let mut text = String::from("HloModule m\n\nENTRY main {\n");
            text += "  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n";
            for i in names {
                text += &format!("  add.{i} = f32[] add({operand}, {operand})\n");
            }
            text + "  ROOT r = f32[] add(p, q)\n}\n"
        };
        let (old, new) = (module(0..n, "p"), module(10 * n..11 * n + 1, "q"));
        bench_texts(&mut group, &format!("uneven/{n}"), &old, &new, 2 * n + 1);
    }
    for n in [2_000, 8_000, 32_000] {
        let module = |ty: &str| {
            let mut text = String::from("HloModule m\n\nENTRY main {\n");
            for i in 0..n {
                text += &format!("  p.{i} = {ty} parameter({i})\n");
            }
            let operands: Vec<String> = (0..n).map(|i| format!("{ty} p.{i}")).collect();
            let shape = vec![ty; n].join(", ");
            text + &format!("  ROOT t = ({shape}) tuple({})\n}}\n", operands.join(", "))
        };
        let (old, new) = (module("f32[]"), module("s32[]"));
        bench_texts(&mut group, &format!("operands/{n}"), &old, &new, 2 * n + 1);
    }
    // N fusions, each calling a computation of its own, against the same with one
    // more at the start: every computation is renumbered, and matched through the
    // fusion that calls it.
    for n in [2_000, 8_000, 32_000] {
        let module = |first: bool| {
            let mut text = String::from("HloModule m\n\n");
            let called = (0..n + usize::from(first)).map(|k| {
                let op = if first && k == 0 { "exponential" } else { "negate" };
                format!("fused_computation.{k} {{\n  p.{k} = f32[2]{{0}} parameter(0)\n  ROOT r.{k} = f32[2]{{0}} {op}(p.{k})\n}}\n\n")
            });
            text.extend(called);
            text += "ENTRY main {\n  x = f32[2]{0} parameter(0)\n";
            let mut operand = "x".to_string();
            for k in 0..n + usize::from(first) {
                let name = match (first, k) {
                    (true, 0) => "exponential_fusion".to_string(),
                    (true, k) => format!("negate_fusion.{}", k - 1),
                    (false, k) => format!("negate_fusion.{k}"),
                };
                text += &format!("  {name} = f32[2]{{0}} fusion({operand}), kind=kLoop, calls=fused_computation.{k}\n");
                operand = name;
            }
            text + &format!("  ROOT out = f32[2]{{0}} copy({operand})\n}}\n")
        };
        let (old, new) = (module(false), module(true));
        bench_texts(&mut group, &format!("callers/{n}"), &old, &new, 2);
    }
    // A listing read back that gives a computation's parameters in reverse (kept
    // sorted as they came, they took time with the square of their number).
    for n in [2_000, 8_000, 32_000] {
        let listing = |ty: &str| {
            let lines = (0..n)
                .rev()
                .map(|i| format!("m.hlo.txt: comp/signature parameter {i} (p{i}): {ty}[8]{{0}}\n"));
            lines.collect::<String>()
        };
        let (old, new) = (listing("f32"), listing("s32"));
        bench_texts(&mut group, &format!("reversed/{n}"), &old, &new, n);
    }
    group.finish();
}

/// Benches `diff` of two module texts (listing both, comparing them), which differ in
/// `changes` places.
fn bench_texts(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    old: &str,
    new: &str,
    changes: usize,
) {
    let read = ReadOptions::default();
    let read = |name, text: &str| read_bytes(name, text.as_bytes(), &read).unwrap();
    let check = diff_listings(
        &read("old", old)[0],
        &read("new", new)[0],
        &Options::default(),
    );
    assert_eq!(check.changes.len(), changes, "{name}");
    group.throughput(Throughput::Bytes((old.len() + new.len()) as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            let (o, n) = (read("old", black_box(old)), read("new", black_box(new)));
            black_box(diff_listings(&o[0], &n[0], &Options::default()))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
