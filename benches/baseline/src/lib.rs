//! Baselines for xla-shape's benchmarks, never a dependency of the library: the
//! schema compiled by prost-build, with the JSON (proto3 mapping) that pbjson
//! generates for it.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

pub mod xla {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));
    include!(concat!(env!("OUT_DIR"), "/xla.serde.rs"));
}
