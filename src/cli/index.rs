//! `xla-shape index`: where an element of a shape lives in linear memory.

use clap::Args;

use super::Failure;

/// Map a multi-dimensional index to its linear index, or back with `--linear`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The shape, in HLO text, e.g. 'f32[3,5]{1,0:T(2,2)}'.
    shape: String,
    /// The multi-dimensional index, e.g. `2,3`.
    index: Option<String>,
}

pub fn run(args: IndexArgs) -> Result<(), Failure> {
    let _ = (args.shape, args.index);
    Err(Failure::unreadable("index is not implemented yet"))
}
