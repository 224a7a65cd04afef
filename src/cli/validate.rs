//! `xla-shape validate`: check shapes, layouts and program shapes as XLA would.

use std::path::PathBuf;

use clap::Args;

use super::{Failure, MessageArg};

/// Validate messages and report every problem with its field path.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Which message each input holds.
    #[arg(long, value_enum, default_value_t)]
    message: MessageArg,
    /// Inputs; `-` or none reads standard input.
    files: Vec<PathBuf>,
}

pub fn run(args: ValidateArgs) -> Result<(), Failure> {
    let _ = (args.message, args.files);
    Err(Failure::unreadable("validate is not implemented yet"))
}
