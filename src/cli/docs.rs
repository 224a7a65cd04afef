//! `xla-shape completions SHELL` and `xla-shape man [COMMAND]`: shell completions
//! (clap_complete) and man pages (clap_mangen), generated from the argument definitions
//! so they never drift from them.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, Failure, OutputArg};

/// Print a shell completion script.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    xla-shape completions bash > ~/.local/share/bash-completion/completions/xla-shape\n  \
    xla-shape completions zsh -o ~/.zfunc/_xla-shape\n  \
    xla-shape completions fish > ~/.config/fish/completions/xla-shape.fish\n  \
    xla-shape completions powershell >> $PROFILE")]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: Shell,
    #[command(flatten)]
    output: OutputArg,
}

pub fn completions(args: CompletionsArgs) -> Result<(), Failure> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "xla-shape", &mut out);
    args.output.write(&out)
}

/// Print a man page (roff): the command's, or one subcommand's.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    xla-shape man | man -l -\n  \
    xla-shape man convert -o xla-shape-convert.1\n  \
    for c in '' convert validate index explain shapes diff completions man; do\n    \
    xla-shape man $c -o xla-shape${c:+-$c}.1; done")]
pub struct ManArgs {
    /// The subcommand whose page to print (xla-shape-COMMAND(1)); none for xla-shape(1).
    command: Option<String>,
    #[command(flatten)]
    output: OutputArg,
}

pub fn man(args: ManArgs) -> Result<(), Failure> {
    let mut command = Cli::command();
    command.build();
    let page = match args.command.as_deref().filter(|c| !c.is_empty()) {
        None => command,
        Some(name) => match command.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                let names: Vec<&str> = command
                    .get_subcommands()
                    .map(clap::Command::get_name)
                    .filter(|n| *n != "help")
                    .collect();
                return Err(Failure::unreadable(format!(
                    "no command '{name}' (commands: {})",
                    names.join(", ")
                )));
            }
        },
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .source(concat!("xla-shape ", env!("CARGO_PKG_VERSION")))
        .render(&mut out)
        .map_err(|e| Failure::unreadable(format!("man page: {e}")))?;
    args.output.write(&out)
}
