//! Arbitrary bytes through the binary codec: decoding never panics, and whatever
//! decodes re-encodes to a fixed point that decodes back to the same message, with
//! its known fields as prost reads them.
//!
//! `cargo +nightly fuzz run decode_roundtrip` (from the crate root). The first byte
//! picks the message kind; the rest is the message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use xla_shape::codec::{decode_any, encode_any, Decoded};
use xla_shape::proto::{LayoutProto, ProgramShapeProto, ShapeProto};
use xla_shape::{AnyMessage, MessageKind};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let kind = match selector % 3 {
        0 => MessageKind::Shape,
        1 => MessageKind::Layout,
        _ => MessageKind::ProgramShape,
    };
    let Ok(decoded) = decode_any(kind, bytes) else {
        return;
    };
    let once = encode_any(&decoded);
    let again = decode_any(kind, &once).expect("the codec's own output decodes");
    assert_eq!(again, decoded);
    assert_eq!(encode_any(&again), once);

    // Without unknown fields, prost reads the same message from our encoding.
    let known = encode_any(&Decoded {
        message: decoded.message.clone(),
        unknown: Default::default(),
    });
    let by_prost = match kind {
        MessageKind::Shape => ShapeProto::decode(known.as_slice()).map(AnyMessage::Shape),
        MessageKind::Layout => LayoutProto::decode(known.as_slice()).map(AnyMessage::Layout),
        MessageKind::ProgramShape => {
            ProgramShapeProto::decode(known.as_slice()).map(AnyMessage::ProgramShape)
        }
    };
    assert_eq!(by_prost.expect("prost decodes our encoding"), decoded.message);
});
