//! Fuzz target `decode_roundtrip`: see `props::decode_roundtrip` in
//! `tests/props/mod.rs` for the property (shared with `tests/fuzz_replay.rs`, which
//! replays the committed corpus). The first byte picks the message kind.
#![no_main]

#[path = "../../tests/props/mod.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::decode_roundtrip(data));
