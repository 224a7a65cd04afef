//! What the throughput benches share: the real fixture messages as (kind, bytes).
#![allow(dead_code)]

use prost::Message;
use xla_shape::codec::decode_any;
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::{AnyMessage, MessageKind};

/// The fields of a fixture line the benches read. Typed, so that serde skips Google's
/// JSON columns (deeply nested for some shapes) without a recursion limit.
#[derive(serde::Deserialize)]
struct Row {
    message: String,
    hex: String,
}

/// The message kind of a fixture line's `message` column.
pub fn kind(name: &str) -> Option<MessageKind> {
    match name {
        "shape" => Some(MessageKind::Shape),
        "layout" => Some(MessageKind::Layout),
        "program-shape" => Some(MessageKind::ProgramShape),
        _ => None,
    }
}

/// Every message of `fixtures/messages.jsonl` the codec decodes, in file order; empty
/// when the file is missing (each bench then falls back to built-in messages).
pub fn fixture_messages() -> Vec<(MessageKind, Vec<u8>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/messages.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut corpus = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(row) = serde_json::from_str::<Row>(line) else {
            continue;
        };
        let (Some(kind), Ok(bytes)) = (kind(&row.message), hex::decode(&row.hex)) else {
            continue;
        };
        if decode_any(kind, &bytes).is_ok() {
            corpus.push((kind, bytes));
        }
    }
    corpus
}

/// f32[2,3]{1,0} as XLA's C++ writes it (reference §8).
pub fn f32_2x3() -> Vec<u8> {
    hex::decode("100b1a0202032a070a02010080010132020000").expect("builtin hex")
}

/// prost's own decode of the same bytes (unknown fields dropped), the baseline.
pub fn prost_decode(kind: MessageKind, bytes: &[u8]) -> Option<AnyMessage> {
    Some(match kind {
        MessageKind::Shape => AnyMessage::Shape(ShapeProto::decode(bytes).ok()?),
        MessageKind::Layout => AnyMessage::Layout(LayoutProto::decode(bytes).ok()?),
        MessageKind::ProgramShape => {
            AnyMessage::ProgramShape(ProgramShapeProto::decode(bytes).ok()?)
        }
    })
}
