//! The layout guard: list every shape of a dump ([`listing`]), compare two dumps
//! semantically ([`diff`]) and enforce a team's layout policy ([`policy`]).
//!
//! The command line's `shapes`, `diff` and `validate --policy` run this; so will the
//! Python binding.

pub mod diff;
mod held;
pub mod listing;
pub mod policy;
pub mod spooled;

pub use diff::{diff_listings, diff_paths, ChangeKind, DiffReport};
pub use listing::{read_bytes, read_path, Listing, ReadOptions, Source};
pub use policy::Policy;
