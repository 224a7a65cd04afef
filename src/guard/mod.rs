//! The layout guard: list every shape of a dump ([`listing`]), compare two dumps
//! semantically ([`diff`]) and enforce a team's layout policy ([`policy`]).
//!
//! The command line's `shapes`, `diff` and `validate --policy` run this; so will the
//! Python binding.

pub mod diff;
mod held;
pub mod listing;
mod pairing;
pub mod policy;
pub mod spooled;

pub use diff::{
    diff_listings, diff_named_each, diff_paths, diff_paths_each, ChangeKind, DiffReport, DiffWriter,
};
pub use listing::{read_bytes, read_path, Listing, ReadOptions, Source};
pub use policy::Policy;

/// Draws for the guard's randomised unit tests: `next(n)` is in `0..n`, from a
/// xorshift generator started at `seed`, the same draws on every run.
#[cfg(test)]
pub(crate) fn draws(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}
