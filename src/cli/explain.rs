//! `xla-shape explain`: what a shape string means, in words.

use clap::Args;

use super::Failure;

/// Say what a shape string means: element type, dimensions, layout, sizes.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The shape, in HLO text, e.g. 'bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}'.
    shape: String,
}

pub fn run(args: ExplainArgs) -> Result<(), Failure> {
    let _ = args.shape;
    Err(Failure::unreadable("explain is not implemented yet"))
}
