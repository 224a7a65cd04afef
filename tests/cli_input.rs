//! The command line's inputs and outputs, the same in every subcommand that reads one
//! message (`convert`, `explain`, `index`): a path, `-` or nothing for standard input,
//! the text inline or with `--text`; `-o FILE` written atomically.

use std::path::Path;

mod util;
use util::{bytes, stderr, stdout, xla_shape as run};

/// f32[2,3]{1,0} as XLA writes it.
const F32_2X3: &str = "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00";

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

#[track_caller]
fn ok(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[track_caller]
fn unreadable(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
    assert!(out.stdout.is_empty(), "{args:?}");
    stderr(&out)
}

/// Every subcommand reads the same shape from a file, from `-`, from standard input
/// with no argument (explain, convert), inline and from `--text`.
#[test]
fn a_shape_from_a_file_stdin_inline_or_text_is_the_same_shape() {
    let dir = tmp();
    let file = dir.path().join("shape.txt");
    std::fs::write(&file, "f32[3,5]{1,0:T(2,2)}\n").unwrap();
    let file = path_str(&file);
    let shape = "f32[3,5]{1,0:T(2,2)}";
    let stdin = b"f32[3,5]{1,0:T(2,2)}\n";

    let want = "17\n";
    assert_eq!(ok(&["index", file, "2,3"], b""), want);
    assert_eq!(ok(&["index", "-", "2,3"], stdin), want);
    assert_eq!(ok(&["index", shape, "2,3"], b""), want);
    assert_eq!(ok(&["index", "--text", shape, "2,3"], b""), want);
    assert_eq!(ok(&["index", "2,3", "--text", shape], b""), want);

    let want = ok(&["explain", shape], b"");
    assert!(want.starts_with("f32[3,5]{1,0:T(2,2)}\n"), "{want}");
    assert_eq!(ok(&["explain", file], b""), want);
    assert_eq!(ok(&["explain", "-"], stdin), want);
    assert_eq!(ok(&["explain"], stdin), want);
    assert_eq!(ok(&["explain", "--text", shape], b""), want);

    let convert = ["convert", "--from", "hlo", "--to", "hlo"];
    let want = "f32[3,5]{1,0:T(2,2)}\n";
    assert_eq!(ok(&[&convert[..], &[file]].concat(), b""), want);
    assert_eq!(ok(&[&convert[..], &["-"]].concat(), stdin), want);
    assert_eq!(ok(&convert, stdin), want);
    assert_eq!(ok(&[&convert[..], &[shape]].concat(), b""), want);
    assert_eq!(ok(&[&convert[..], &["--text", shape]].concat(), b""), want);
    // Inline JSON too.
    let json = r#"{"elementType":"F32","dimensions":["2"]}"#;
    let to_hlo = ["convert", "--from", "json", "--to", "hlo"];
    assert_eq!(ok(&[&to_hlo[..], &[json]].concat(), b""), "f32[2]\n");
    assert_eq!(
        ok(&[&to_hlo[..], &["--text", json]].concat(), b""),
        "f32[2]\n"
    );
}

/// A path that exists is a path, even when it looks like a shape; `--text` never looks
/// at the filesystem.
#[test]
fn an_existing_file_wins_and_text_never_touches_the_filesystem() {
    let dir = tmp();
    let tricky = dir.path().join("f32[7]");
    std::fs::write(&tricky, "s8[2]").unwrap();
    let tricky = path_str(&tricky);
    assert!(ok(&["explain", tricky], b"").starts_with("s8[2]{0}\n"));
    let out = run(&["explain", "--text", tricky], b"");
    // Not a shape as text: a parse error, not the file's content.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("xla-shape: <text>: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_file_is_named() {
    for args in [
        &["explain", "no/such/shape.txt"][..],
        &["index", "no/such/shape.txt", "0"],
        &[
            "convert",
            "--from",
            "hlo",
            "--to",
            "json",
            "no/such/shape.txt",
        ],
    ] {
        assert_eq!(
            unreadable(args, b""),
            "xla-shape: no such file: no/such/shape.txt (to give the text itself, write it inline, like 'f32[2,3]', or use --text)\n",
            "{args:?}"
        );
    }
    assert_eq!(
        unreadable(
            &[
                "convert",
                "--from",
                "binary",
                "--to",
                "json",
                "no/such/f32[2].binpb"
            ],
            b""
        ),
        "xla-shape: no such file: no/such/f32[2].binpb\n"
    );
    assert_eq!(
        unreadable(
            &["convert", "--from", "binary", "--to", "json", "--text", "f32[2]"],
            b""
        ),
        "xla-shape: --text gives text: use it with --from hlo or --from json\n"
    );
    // Inline text that does not parse: the text with a caret.
    assert_eq!(
        unreadable(&["explain", "f32[2,3"], b""),
        "xla-shape: <text>: expects ']' at the end of the dimensions\n  f32[2,3\n         ^\n"
    );
}

#[test]
fn output_files_are_written_whole_or_not_at_all() {
    let dir = tmp();
    let out_path = dir.path().join("out.binpb");
    let out = path_str(&out_path);
    let args = ["convert", "--from", "hlo", "--to", "binary", "-o", out];
    assert_eq!(ok(&args, b"f32[2,3]"), "");
    assert_eq!(std::fs::read(&out_path).unwrap(), bytes(F32_2X3));
    // A failed run leaves the file as it was, and no temporary file behind.
    let message = unreadable(&args, b"f32[2,3");
    assert!(message.starts_with("xla-shape: <stdin>: "), "{message}");
    assert_eq!(std::fs::read(&out_path).unwrap(), bytes(F32_2X3));
    let listing: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(listing, ["out.binpb"]);
    // A replaced file keeps its permissions.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        std::fs::set_permissions(&out_path, std::fs::Permissions::from_mode(0o640)).unwrap();
        ok(&args, b"f32[4]");
        assert_eq!(mode(&out_path), 0o640);
    }
    // Every command that writes data takes -o; `-o -` is standard output.
    let text_path = dir.path().join("explain.txt");
    ok(
        &["explain", "f32[2]", "--output", path_str(&text_path)],
        b"",
    );
    assert!(std::fs::read_to_string(&text_path)
        .unwrap()
        .starts_with("f32[2]{0}\n"));
    let index_path = dir.path().join("index.txt");
    ok(&["index", "f32[2]", "1", "-o", path_str(&index_path)], b"");
    assert_eq!(std::fs::read_to_string(&index_path).unwrap(), "1\n");
    assert_eq!(ok(&["index", "f32[2]", "1", "-o", "-"], b""), "1\n");
    // A directory that does not exist: an error naming the file.
    let missing = dir.path().join("no/such/dir/out.txt");
    let message = unreadable(&["index", "f32[2]", "1", "-o", path_str(&missing)], b"");
    assert!(
        message.starts_with(&format!("xla-shape: {}: cannot write: ", missing.display())),
        "{message}"
    );
}

/// Binary output to a terminal is refused (checked with util-linux `script`, which runs
/// the command on a pseudo-terminal; skipped where it is missing).
#[test]
fn binary_output_to_a_terminal_is_refused() {
    let Ok(script) = which("script") else {
        return;
    };
    let binary = env!("CARGO_BIN_EXE_xla-shape");
    let command =
        format!("{binary} convert --from hlo --to binary --text 'f32[2]'; echo \"rc=$?\"");
    let Ok(out) = std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .output()
    else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() && text.is_empty() {
        return; // no pseudo-terminal here
    }
    assert!(
        text.contains(
            "xla-shape: binary output is not written to a terminal: use -o FILE, or a pipe (| xxd)"
        ),
        "{text}"
    );
    assert!(text.contains("rc=2"), "{text}");
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or(())
}

/// An input's form is told from the same bytes whether it comes from a file, from
/// standard input or with a final newline: the last line counts when the input ends
/// there (`{` alone on the first line reads as JSON only with its last line, `}`).
#[test]
fn an_input_is_told_the_same_from_a_file_or_stdin_with_or_without_a_final_newline() {
    let dir = tmp();
    for args in [
        &["validate"][..],
        &["shapes"],
        &["validate", "--format", "json"],
    ] {
        let mut seen = Vec::new();
        for text in ["{\n\n}", "{\n\n}\n"] {
            let file = dir.path().join("input");
            std::fs::write(&file, text).unwrap();
            let from_file = run(&[args, &[path_str(&file)]].concat(), b"");
            let from_stdin = run(&[args, &["-"]].concat(), text.as_bytes());
            let told = |out: &std::process::Output| {
                let text = stdout(out).replace(path_str(&file), "<stdin>");
                (out.status.code(), text)
            };
            seen.push(told(&from_file));
            seen.push(told(&from_stdin));
        }
        assert!(seen.iter().all(|s| *s == seen[0]), "{args:?}: {seen:#?}");
        // Read as the JSON shape it is: an element type 0 (no layout, no dimensions).
        assert!(seen[0].1.contains("element type"), "{args:?}: {seen:#?}");
    }
}

/// `-o` names what it writes to: a device, a named pipe or `/dev/stdout` is written as
/// it is (renamed onto, it was replaced by a file: as root, `-o /dev/null` replaced the
/// device itself), and a symbolic link is followed to the file it names, which is
/// replaced whole while the link stays.
#[cfg(unix)]
#[test]
fn output_to_devices_pipes_and_links_is_written_through_them() {
    use std::os::unix::fs::{symlink, FileTypeExt};
    let dir = tmp();
    let at = |name: &str| dir.path().join(name);
    let is_link = |p: &Path| {
        std::fs::symlink_metadata(p)
            .unwrap()
            .file_type()
            .is_symlink()
    };
    let explain = |out: &Path| run(&["explain", "f32[2]", "-o", path_str(out)], b"");
    let expected = ok(&["explain", "f32[2]"], b"");

    // A device, through a link (so that the old rename replaced only the link).
    symlink("/dev/null", at("null")).unwrap();
    let out = explain(&at("null"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(is_link(&at("null")), "the link to /dev/null was replaced");
    if Path::new("/dev/full").exists() {
        symlink("/dev/full", at("full")).unwrap();
        let out = explain(&at("full"));
        assert_eq!(out.status.code(), Some(2));
        let message = stderr(&out);
        assert!(
            message.starts_with(&format!(
                "xla-shape: {}: cannot write: ",
                at("full").display()
            )),
            "{message}"
        );
        assert!(is_link(&at("full")));
    }

    // A named pipe: what is read from it is the output.
    if std::process::Command::new("mkfifo")
        .arg(at("pipe"))
        .status()
        .is_ok_and(|s| s.success())
    {
        let pipe = at("pipe");
        let reader = std::thread::spawn(move || std::fs::read_to_string(pipe).unwrap());
        let out = explain(&at("pipe"));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(reader.join().unwrap(), expected);
        let kind = std::fs::symlink_metadata(at("pipe")).unwrap().file_type();
        assert!(kind.is_fifo(), "the named pipe was replaced");
    }

    // A link to a file: the file is replaced, the link stays.
    std::fs::write(at("real.txt"), "old").unwrap();
    symlink("real.txt", at("link.txt")).unwrap();
    ok(&["explain", "f32[2]", "-o", path_str(&at("link.txt"))], b"");
    assert!(is_link(&at("link.txt")));
    assert_eq!(std::fs::read_to_string(at("real.txt")).unwrap(), expected);
    // A link to a file yet to be: the file is made where the link points.
    std::fs::create_dir(at("sub")).unwrap();
    symlink("sub/new.txt", at("dangling")).unwrap();
    ok(&["explain", "f32[2]", "-o", path_str(&at("dangling"))], b"");
    assert!(is_link(&at("dangling")));
    assert_eq!(
        std::fs::read_to_string(at("sub/new.txt")).unwrap(),
        expected
    );

    // A directory, and links that lead nowhere, are errors that name the path.
    symlink("loop.b", at("loop.a")).unwrap();
    symlink("loop.a", at("loop.b")).unwrap();
    for name in ["sub", "loop.a"] {
        let out = explain(&at(name));
        assert_eq!(out.status.code(), Some(2), "{name}");
        let message = stderr(&out);
        assert!(
            message.starts_with(&format!(
                "xla-shape: {}: cannot write: ",
                at(name).display()
            )),
            "{message}"
        );
    }
    assert!(at("sub").is_dir());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with(".xla-shape-"))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

/// Interrupted (SIGINT, SIGTERM) while it writes, a run removes its temporary files
/// and exits 130: `-o`'s beside the output, and `diff`'s copy of standard input. It
/// was killed on the spot, and they stayed.
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_temporary_file() {
    use std::process::{Command, Stdio};
    let binary = env!("CARGO_BIN_EXE_xla-shape");
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/shapes.txt");
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    for (signal, diff) in [("INT", false), ("TERM", true)] {
        let dir = tmp();
        let out = dir.path().join("out.lock");
        let mut command = Command::new(binary);
        if diff {
            // The copy of standard input goes to TMPDIR.
            command
                .env("TMPDIR", dir.path())
                .args(["diff", examples, "-"]);
        } else {
            command.args(["shapes", "-", "-o", path_str(&out)]);
        }
        // Standard input stays open: the run waits on it, its temporary file made. It
        // is held open until the run has ended (closed, as `wait_with_output` closes
        // it, the run could read its end and exit 2 before the handler's thread ran).
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while names(dir.path()).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            names(dir.path()).len(),
            1,
            "{signal}: no temporary file made"
        );
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        drop(stdin);
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(130), "{signal}");
        assert_eq!(stderr, "xla-shape: interrupted\n");
        assert!(
            names(dir.path()).is_empty(),
            "{signal}: {:?}",
            names(dir.path())
        );
    }
}
