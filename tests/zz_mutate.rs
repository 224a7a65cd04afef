use xla_shape::codec::{decode_any, encode_any};
use xla_shape::MessageKind;
#[derive(serde::Deserialize)]
struct Row {
    message: String,
    hex: String,
}
#[test]
fn mutate() {
    let text = std::fs::read_to_string("/tmp/fx_messages.jsonl").unwrap();
    let corpus: Vec<(MessageKind, Vec<u8>)> = text
        .lines()
        .map(|l| {
            let r: Row = serde_json::from_str(l).unwrap();
            let k = match r.message.as_str() {
                "shape" => MessageKind::Shape,
                "layout" => MessageKind::Layout,
                _ => MessageKind::ProgramShape,
            };
            (k, hex::decode(r.hex).unwrap())
        })
        .collect();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let iters: usize = std::env::var("ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let (mut ok, mut err) = (0usize, 0usize);
    for _ in 0..iters {
        let (kind, base) = &corpus[(rnd() as usize) % corpus.len()];
        let mut b = base.clone();
        let n = 1 + rnd() % 4;
        for _ in 0..n {
            let len = b.len();
            match rnd() % 5 {
                0 if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b[i] = rnd() as u8;
                }
                1 if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b[i] ^= 1 << (rnd() % 8);
                }
                2 => {
                    let i = (rnd() as usize) % (len + 1);
                    b.insert(i, rnd() as u8);
                }
                3 if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b.remove(i);
                }
                _ => {
                    let i = (rnd() as usize) % (len + 1);
                    let (o, _) = corpus[(rnd() as usize) % corpus.len()].clone();
                    let _ = o;
                    let j = (rnd() as usize) % (len + 1);
                    let s = b[i.min(j)..i.max(j)].to_vec();
                    let k = (rnd() as usize) % (len + 1);
                    b.splice(k..k, s);
                }
            }
        }
        let kind = [
            *kind,
            MessageKind::Shape,
            MessageKind::Layout,
            MessageKind::ProgramShape,
        ][(rnd() % 4) as usize];
        match decode_any(kind, &b) {
            Ok(d) => {
                ok += 1;
                let once = encode_any(&d);
                let again = decode_any(kind, &once).expect("redecode");
                assert_eq!(again, d, "{}", hex::encode(&b));
                assert_eq!(encode_any(&again), once);
                let _ = d.unknown_fields();
            }
            Err(e) => {
                err += 1;
                let _ = e.to_string();
            }
        }
    }
    println!("ok {ok} err {err}");
}

#[test]
fn dump() {
    let text = std::fs::read_to_string("/tmp/fx_messages.jsonl").unwrap();
    let corpus: Vec<(MessageKind, Vec<u8>)> = text
        .lines()
        .map(|l| {
            let r: Row = serde_json::from_str(l).unwrap();
            let k = match r.message.as_str() {
                "shape" => MessageKind::Shape,
                "layout" => MessageKind::Layout,
                _ => MessageKind::ProgramShape,
            };
            (k, hex::decode(r.hex).unwrap())
        })
        .collect();
    let mut x: u64 = 0x1234567;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::new();
    for _ in 0..60000 {
        let (kind, base) = &corpus[(rnd() as usize) % corpus.len()];
        let mut b = base.clone();
        let n = 1 + rnd() % 3;
        for _ in 0..n {
            let len = b.len();
            match rnd() % 4 {
                0 if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b[i] = rnd() as u8;
                }
                1 if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b[i] ^= 1 << (rnd() % 8);
                }
                2 => {
                    let i = (rnd() as usize) % (len + 1);
                    b.insert(i, rnd() as u8);
                }
                _ if len > 0 => {
                    let i = (rnd() as usize) % len;
                    b.remove(i);
                }
                _ => {}
            }
        }
        let name = match kind {
            MessageKind::Shape => "s",
            MessageKind::Layout => "l",
            _ => "p",
        };
        let ours = match decode_any(*kind, &b) {
            Ok(d) => hex::encode(encode_any(&d)),
            Err(e) => format!("ERR {e}"),
        };
        out.push_str(&format!("{name}\t{}\t{ours}\n", hex::encode(&b)));
    }
    std::fs::write("/tmp/mutants.tsv", out).unwrap();
}
