//! `--help`, usage lines, shell completions and man pages.

mod util;
use util::{stderr, stdout, xla_shape as run};

const COMMANDS: &[&str] = &[
    "convert",
    "validate",
    "index",
    "explain",
    "shapes",
    "diff",
    "relayout",
    "completions",
    "man",
];

/// Every command's help shows examples, and its usage line marks optional arguments as
/// optional (`[...]`) and required ones as required (`<...>`).
#[test]
fn help_has_examples_and_honest_usage_lines() {
    let usage = [
        ("convert", "Usage: xla-shape convert [OPTIONS] --from <FROM> --to <TO> [INPUT]\n"),
        ("validate", "Usage: xla-shape validate [OPTIONS] [PATHS]...\n"),
        (
            "index",
            "Usage: xla-shape index [OPTIONS] <SHAPE> <INDEX>...\n       xla-shape index [OPTIONS] --text <SHAPE> <INDEX>...\n",
        ),
        ("explain", "Usage: xla-shape explain [OPTIONS] [SHAPE]\n"),
        ("shapes", "Usage: xla-shape shapes [OPTIONS] <PATHS>...\n"),
        ("diff", "Usage: xla-shape diff [OPTIONS] <OLD> <NEW>\n"),
        (
            "relayout",
            "Usage: xla-shape relayout [OPTIONS] --shape <SHAPE> <--to <LAYOUT|npy>|--from-npy> [INPUT]\n",
        ),
        ("completions", "Usage: xla-shape completions [OPTIONS] <SHELL>\n"),
        ("man", "Usage: xla-shape man [OPTIONS] [COMMAND]\n"),
    ];
    assert_eq!(usage.len(), COMMANDS.len());
    for (command, line) in usage {
        let out = run(&[command, "--help"], b"");
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = stdout(&out);
        assert!(help.contains(line), "{command}:\n{help}");
        assert!(
            help.contains("\nExample"),
            "{command} has no example:\n{help}"
        );
    }
    let top = stdout(&run(&["--help"], b""));
    assert!(top.contains("\nExamples:\n"), "{top}");
    for command in COMMANDS {
        assert!(
            top.contains(&format!("\n  {command} ")),
            "{command} missing:\n{top}"
        );
    }
    let version = stdout(&run(&["--version"], b""));
    assert_eq!(
        version,
        format!("xla-shape {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = run(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for word in ["xla-shape", "convert", "hlo-style", "explain"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let out = run(&["completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_pages_for_the_command_and_each_subcommand() {
    let page = stdout(&run(&["man"], b""));
    assert!(page.contains(".TH xla-shape 1"), "{page}");
    assert!(page.contains("xla\\-shape\\-convert(1)"), "{page}");
    for command in COMMANDS {
        let out = run(&["man", command], b"");
        assert_eq!(out.status.code(), Some(0), "{command}: {}", stderr(&out));
        let page = stdout(&out);
        assert!(
            page.contains(&format!(".TH xla-shape-{command} 1")),
            "{page}"
        );
        assert!(
            page.contains(concat!("xla-shape ", env!("CARGO_PKG_VERSION"))),
            "{page}"
        );
    }
    let out = run(&["man", "nope"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "xla-shape: no command 'nope' (commands: convert, validate, index, explain, shapes, diff, relayout, completions, man)\n"
    );
}

/// Help and version that cannot be written are a failure, as any other output is: they
/// exited 0 with nothing written. A reader that goes (`| head`) is not.
#[test]
fn help_that_cannot_be_written_is_not_a_success() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_xla-shape");
    for args in [
        &["--help"][..],
        &["--version"],
        &["help", "diff"],
        &["validate", "-h"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = std::process::Command::new(bin)
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).starts_with("xla-shape: <stdout>: "),
            "{args:?}: {}",
            stderr(&out)
        );
        // Written, they succeed.
        assert_eq!(run(args, b"").status.code(), Some(0), "{args:?}");
    }
    // A reader that closes the pipe early is no failure.
    let mut child = std::process::Command::new(bin)
        .arg("--help")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
