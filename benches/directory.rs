//! `validate DIR` as CI runs it: walk a directory of real dump files, decide each
//! file's form, check every shape, on one thread beside two (`-j 1`, `-j 2`).
//!
//! The directory holds 40 copies of every real file under `fixtures/dumps/` (what
//! `--xla_dump_to` wrote for five jax programs: module text and HloProto dumps before
//! and after optimization, plus the reports the walk leaves out) and
//! `fixtures/modules/` (module text and HloModuleProto pairs XLA wrote), each copy in
//! its own subdirectory. Throughput is reported twice: in files per second and in
//! bytes per second of the files checked; each beside `streamed_jN`, the walk found as
//! the files are checked (`check::expand_iter`, `check::check_each_of`), as `validate`
//! runs it.
//!
//! `cargo bench --bench directory -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use xla_shape::check::{
    check_all, check_each_of, expand, expand_iter, expand_on, Input, Options, Walk,
};

const COPIES: usize = 40;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dir = tempfile::tempdir().unwrap();
    for copy in 0..COPIES {
        let into = dir.path().join(format!("run{copy:02}"));
        copy_tree(&fixtures.join("dumps"), &into.join("dumps"));
        // The fixture generator's own list of what XLA wrote is not a dump file.
        std::fs::remove_file(into.join("dumps/WRITTEN.txt")).unwrap();
        copy_tree(&fixtures.join("modules"), &into.join("modules"));
    }
    let walk = Walk::new(&[], &[]).unwrap();
    let paths = [dir.path().to_path_buf()];
    let inputs = expand(&paths, &walk);
    let bytes: u64 = inputs
        .iter()
        .map(|input| match input {
            Input::File(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum();
    let options = Options::default();
    let document = check_all(&inputs, &options, 1);
    let summary = document.summary();
    assert_eq!(summary.errors + summary.unreadable, 0, "{summary}");
    eprintln!(
        "directory: {} files checked, {bytes} bytes, {} shapes",
        inputs.len(),
        summary.shapes
    );

    let run = |paths: &[PathBuf], jobs: usize| {
        let inputs = expand_on(paths, &walk, jobs);
        check_all(&inputs, &options, jobs)
    };
    // As `validate` runs since session 24: the walk found as the files are checked.
    let streamed = |paths: &[PathBuf], jobs: usize| {
        let mut files = Vec::new();
        let checked: Result<(), std::convert::Infallible> =
            check_each_of(expand_iter(paths, &walk), &options, jobs, |file| {
                files.push(file);
                Ok(())
            });
        checked.map(|()| files)
    };
    for (name, throughput) in [
        (
            "validate_dir_files",
            Throughput::Elements(inputs.len() as u64),
        ),
        ("validate_dir_bytes", Throughput::Bytes(bytes)),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(throughput);
        for jobs in [1, 2] {
            group.bench_function(format!("j{jobs}"), |b| {
                b.iter(|| black_box(run(black_box(&paths), jobs)))
            });
            group.bench_function(format!("streamed_j{jobs}"), |b| {
                b.iter(|| black_box(streamed(black_box(&paths), jobs)))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
