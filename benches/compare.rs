//! The speed table of the crate against its baselines, measured side by side in one
//! process and printed with the ratios: every real `ShapeProto` XLA wrote in
//! `fixtures/messages.jsonl` (the shapes XLA accepts, from lowered and compiled
//! programs and from XLA's own text), each row timed as xla-shape beside its baseline
//! in alternating rounds of about 2 ms, the fastest round of each side reported in ns
//! per message (robust to other work on the machine, which only slows rounds down).
//!
//! Baselines: prost's generated types (`benches/baseline`, the same schema) for the
//! binary rows, pbjson's serde impls on those types for JSON. Text has no Rust peer:
//! its yardstick is prost decoding the same shape's binary form.
//!
//! `cargo bench --bench compare` (about a minute); `-- --quick` for fewer rounds.

use std::hint::black_box;
use std::time::{Duration, Instant};

use prost::Message;
use xla_shape::codec;
use xla_shape::json::{self, ProtoJson};
use xla_shape::proto::ShapeProto;
use xla_shape::text;
use xla_shape::validate::{self, Options};
use xla_shape_baseline::xla as baseline;

#[derive(serde::Deserialize)]
struct Row {
    message: String,
    origin: String,
    hex: String,
    xla: Verdict,
    google: Google,
}

#[derive(serde::Deserialize)]
struct Verdict {
    accepts: Option<bool>,
    text: Option<String>,
}

#[derive(serde::Deserialize)]
struct Google {
    json_camel: Option<serde_json::Value>,
}

/// One real shape: its bytes, Google's JSON for it and XLA's text for it.
struct Sample {
    bytes: Vec<u8>,
    json: String,
    text: String,
}

fn corpus() -> Vec<Sample> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/messages.jsonl");
    let text = std::fs::read_to_string(path).expect("fixtures/messages.jsonl");
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // A few shapes nest past serde_json's recursion limit: left out.
        let Ok(row) = serde_json::from_str::<Row>(line) else {
            continue;
        };
        let real = matches!(row.origin.as_str(), "lowered" | "compiled" | "hlo-text");
        if row.message != "shape" || !real || row.xla.accepts != Some(true) {
            continue;
        }
        let (Some(json), Some(text)) = (row.google.json_camel, row.xla.text) else {
            continue;
        };
        let json = json.to_string();
        let bytes = hex::decode(&row.hex).expect("hex");
        // Only what every path reads, so that both sides of each row do the same work.
        let ok = ShapeProto::decode(bytes.as_slice()).is_ok()
            && baseline::ShapeProto::decode(bytes.as_slice()).is_ok()
            && serde_json::from_str::<baseline::ShapeProto>(&json).is_ok()
            && text::parse_shape(&text).is_ok();
        if ok {
            samples.push(Sample { bytes, json, text });
        }
    }
    samples
}

/// Times `ours` and `base` over `n` messages in alternating rounds; medians in ns per
/// message.
fn measure(n: usize, rounds: usize, mut ours: impl FnMut(), mut base: impl FnMut()) -> (f64, f64) {
    // Warm up, and find how many passes make a round of about 10 ms.
    let start = Instant::now();
    let mut passes = 0u32;
    while start.elapsed() < Duration::from_millis(50) {
        ours();
        base();
        passes += 1;
    }
    let passes = (passes / 25).max(1);
    let mut times = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..passes {
            ours();
        }
        times.0.push(t.elapsed());
        let t = Instant::now();
        for _ in 0..passes {
            base();
        }
        times.1.push(t.elapsed());
    }
    // The fastest round: what the code costs when nothing else runs on its core (the
    // median moves with whatever else the machine does; the minimum barely does).
    let per = |v: Vec<Duration>| {
        let best = v.into_iter().min().unwrap_or_default();
        best.as_secs_f64() * 1e9 / (f64::from(passes) * n as f64)
    };
    (per(times.0), per(times.1))
}

type Measured = (&'static str, &'static str, f64, (f64, f64));

/// Measures a row unless `--only` leaves it out.
fn add(
    rows: &mut Vec<Measured>,
    only: Option<&str>,
    (path, base, target, run): (
        &'static str,
        &'static str,
        f64,
        &mut dyn FnMut() -> (f64, f64),
    ),
) {
    if only.is_none_or(|words| path.contains(words)) {
        rows.push((path, base, target, run()));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only WORDS`: the rows whose path contains WORDS (for a profiler).
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    // `cargo bench -- FILTER` passes --bench; a filter that is not ours skips the table.
    if let Some(filter) = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with("--") && Some(a.as_str()) != only)
    {
        if !"compare".contains(filter.as_str()) {
            return;
        }
    }
    let rounds = if quick { 25 } else { 101 };
    let samples = corpus();
    assert!(samples.len() >= 300, "only {} samples", samples.len());
    let n = samples.len();
    let bytes: usize = samples.iter().map(|s| s.bytes.len()).sum();
    println!(
        "{n} real ShapeProtos ({:.1} bytes on average), best of {rounds} rounds, ns per message\n",
        bytes as f64 / n as f64
    );

    let prost_decoded: Vec<baseline::ShapeProto> = samples
        .iter()
        .map(|s| baseline::ShapeProto::decode(s.bytes.as_slice()).unwrap())
        .collect();
    let ours_decoded: Vec<_> = samples
        .iter()
        .map(|s| codec::decode_shape(&s.bytes).unwrap())
        .collect();
    let protos: Vec<ShapeProto> = ours_decoded.iter().map(|d| d.message.clone()).collect();
    let prost_decode = || {
        for s in &samples {
            black_box(baseline::ShapeProto::decode(black_box(s.bytes.as_slice())).unwrap());
        }
    };
    let print_options = json::PrintOptions::new();
    let parse_options = json::ParseOptions::new();

    let mut rows: Vec<Measured> = Vec::new();
    add(
        &mut rows,
        only,
        (
            "binary decode (keeping unknown fields)",
            "prost decode",
            1.10,
            &mut || {
                measure(
                    n,
                    rounds,
                    || {
                        for s in &samples {
                            black_box(codec::decode_shape(black_box(&s.bytes)).unwrap());
                        }
                    },
                    prost_decode,
                )
            },
        ),
    );
    add(
        &mut rows,
        only,
        (
            "decode + validate into domain types",
            "prost decode",
            1.40,
            &mut || {
                measure(
                    n,
                    rounds,
                    || {
                        for s in &samples {
                            let validated = validate::decode_validated_shape(
                                black_box(&s.bytes),
                                Options::proto(),
                            );
                            black_box(validated.unwrap());
                        }
                    },
                    prost_decode,
                )
            },
        ),
    );
    add(
        &mut rows,
        only,
        ("binary encode", "prost encode_to_vec", 1.10, &mut || {
            measure(
                n,
                rounds,
                || {
                    for d in &ours_decoded {
                        black_box(black_box(d).encode_to_vec());
                    }
                },
                || {
                    for m in &prost_decoded {
                        black_box(black_box(m).encode_to_vec());
                    }
                },
            )
        }),
    );
    add(
        &mut rows,
        only,
        ("JSON encode", "pbjson to_string", 0.80, &mut || {
            measure(
                n,
                rounds,
                || {
                    for m in &protos {
                        black_box(black_box(m).to_json(&print_options));
                    }
                },
                || {
                    for m in &prost_decoded {
                        black_box(serde_json::to_string(black_box(m)).unwrap());
                    }
                },
            )
        }),
    );
    add(
        &mut rows,
        only,
        (
            "JSON decode (Google's JSON text)",
            "pbjson from_str",
            1.00,
            &mut || {
                measure(
                    n,
                    rounds,
                    || {
                        for s in &samples {
                            black_box(
                                ShapeProto::from_json(black_box(&s.json), &parse_options).unwrap(),
                            );
                        }
                    },
                    || {
                        for s in &samples {
                            black_box(
                                serde_json::from_str::<baseline::ShapeProto>(black_box(&s.json))
                                    .unwrap(),
                            );
                        }
                    },
                )
            },
        ),
    );
    add(
        &mut rows,
        only,
        (
            "HLO text print, XLA style",
            "prost decode",
            0.70,
            &mut || {
                measure(
                    n,
                    rounds,
                    || {
                        for m in &protos {
                            black_box(text::print_shape_as_xla(black_box(m)).unwrap());
                        }
                    },
                    prost_decode,
                )
            },
        ),
    );
    add(
        &mut rows,
        only,
        ("HLO text parse", "prost decode", 1.00, &mut || {
            measure(
                n,
                rounds,
                || {
                    for s in &samples {
                        black_box(text::parse_shape(black_box(&s.text)).unwrap());
                    }
                },
                prost_decode,
            )
        }),
    );

    println!(
        "| {:<40} | {:<22} | {:>8} | {:>9} | {:>6} | {:>6} |",
        "path", "baseline", "baseline", "xla-shape", "ratio", "target"
    );
    println!(
        "|{:-<42}|{:-<24}|{:->10}|{:->11}|{:->8}|{:->8}|",
        "", "", "", "", "", ""
    );
    for (path, base, target, (ours, baseline)) in rows {
        let ratio = ours / baseline;
        let mark = if ratio <= target { "" } else { " (over)" };
        println!(
            "| {path:<40} | {base:<22} | {baseline:>8.0} | {ours:>9.0} | {ratio:>5.2}x | <= {target:.2}x{mark} |"
        );
    }
}
