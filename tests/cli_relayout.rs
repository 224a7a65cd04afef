//! `xla-shape relayout`: layouts, .npy both ways, standard input and output, and the
//! errors that leave nothing written.

mod util;
use util::{stderr, xla_shape as run};

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn layout_to_layout_through_stdin_and_stdout() {
    let src = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(
        &["relayout", "--shape", "f32[2,3]{1,0}", "--to", "{0,1}"],
        &src,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.stdout, f32_bytes(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]));
    // The seeds' padding example, with `-` for standard input.
    let out = run(
        &[
            "relayout",
            "--shape",
            "u8[2,3]",
            "--to",
            "{0,1:PD(3,5)PV(zero)}",
            "-",
        ],
        b"abcdef",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.stdout, b"ad\0be\0cf\0\0\0\0\0\0\0");
}

#[test]
fn npy_there_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let device: Vec<u8> = (0..32u8).collect();
    let dump = dir.path().join("dump.bin");
    std::fs::write(&dump, &device).unwrap();
    let npy = dir.path().join("x.npy");
    let shape = "s4[8,8]{1,0:T(4,4)E(4)}";
    let out = run(
        &[
            "relayout",
            "--shape",
            shape,
            "--to",
            "npy",
            dump.to_str().unwrap(),
            "-o",
            npy.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let file = std::fs::read(&npy).unwrap();
    assert!(String::from_utf8_lossy(&file).contains("'descr': '|i1'"));
    // Every value sign-extended into -8..=7.
    assert!(file[file.len() - 64..]
        .iter()
        .all(|&b| (b as i8) >= -8 && (b as i8) <= 7));
    let out = run(
        &[
            "relayout",
            "--shape",
            shape,
            "--from-npy",
            npy.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.stdout, device);
}

#[test]
fn errors_say_what_is_needed_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.bin");
    let target_text = target.to_str().unwrap();
    let out = run(
        &[
            "relayout",
            "--shape",
            "bf16[3,5]{1,0:T(8,128)(2,1)}",
            "--to",
            "{1,0}",
            "-o",
            target_text,
        ],
        &[0; 30],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: input has 30 bytes, but bf16[3,5]{1,0:T(8,128)(2,1)} needs exactly 2048 bytes (every slot of the layout, padding included)\n"
    );
    assert!(!target.exists());

    // Wrong dtype in an .npy file.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }".to_string();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    npy.extend((header.len() as u16).to_le_bytes());
    npy.extend(header.as_bytes());
    npy.extend([0; 8]);
    let out = run(
        &[
            "relayout",
            "--shape",
            "bf16[2]",
            "--from-npy",
            "-o",
            target_text,
        ],
        &npy,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "xla-shape: <stdin>: the .npy file holds dtype <f4, but bf16[2]{0} needs <u2 or |V2\n"
    );
    assert!(!target.exists());

    for (args, message) in [
        (
            vec!["relayout", "--shape", "(f32[2], s8[])", "--to", "npy"],
            "xla-shape: --shape: relayout moves one array, not a tuple shape\n",
        ),
        (
            vec!["relayout", "--shape", "opaque[]", "--to", "npy"],
            "xla-shape: --shape: relayout moves one array, not an opaque shape\n",
        ),
        (
            vec!["relayout", "--shape", "f32[2,3]", "--to", "{0,1,2}"],
            "xla-shape: --to: the layout does not fit the shape:\n",
        ),
        (
            vec!["relayout", "--shape", "f32[2,3]", "--to", "{0,1:T(100000,100000)}"],
            "xla-shape: --to: f32[2,3]{0,1:T(100000,100000)} needs 40000000000 bytes, more than 64 times the input: refused\n",
        ),
        (
            vec!["relayout", "--shape", "f32[2,3]", "--to", "npy", "no-such-file.bin"],
            "xla-shape: no such file: no-such-file.bin\n",
        ),
    ] {
        let out = run(&args, &[0; 24]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).starts_with(message), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    // --to and --from-npy exclude each other, and one is required.
    assert_eq!(
        run(&["relayout", "--shape", "f32[2]"], b"").status.code(),
        Some(2)
    );
    assert_eq!(
        run(
            &["relayout", "--shape", "f32[2]", "--to", "npy", "--from-npy"],
            b""
        )
        .status
        .code(),
        Some(2)
    );
}

/// An array past 8 MiB is moved in pieces on the threads `-j` gives (every core by
/// default), with the same bytes as one thread and as the element-by-element reference.
#[test]
fn large_arrays_are_moved_on_the_threads_asked_for() {
    use xla_shape::relayout::Relayout;
    let (from, to) = ("u8[3000,3001]{1,0}", "u8[3000,3001]{0,1:T(8,128)}");
    let parse = |text: &str| match text.parse::<xla_shape::Shape>() {
        Ok(xla_shape::Shape::Array(a)) => a,
        other => panic!("{text}: {other:?}"),
    };
    let r = Relayout::new(&parse(from), &parse(to)).unwrap();
    let src: Vec<u8> = (0..r.source_bytes())
        .map(|i| (i * 31 + i / 251) as u8)
        .collect();
    let mut expected = vec![0; r.destination_bytes()];
    r.run_reference(&src, &mut expected).unwrap();
    assert!(expected.len() > 8 << 20);
    for jobs in [None, Some("1"), Some("3")] {
        let mut args = vec!["relayout", "--shape", from, "--to", "{0,1:T(8,128)}"];
        if let Some(n) = jobs {
            args.extend(["-j", n]);
        }
        let out = run(&args, &src);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(out.stdout == expected, "-j {jobs:?}");
    }
}
