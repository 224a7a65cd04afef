//! Fuzz target `npy`: see `props::npy` in `tests/props/mod.rs` for the property (shared
//! with `tests/fuzz_replay.rs`, which replays the committed corpus).
#![no_main]

#[path = "../../tests/props/mod.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::npy(data));
