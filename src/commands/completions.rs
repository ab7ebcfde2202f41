//! `completions` and the hidden `man`: generated from the clap definition.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;
use crate::context::Context;

/// Prints a shell completion script.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: Shell,
}

/// Returns the completion script for a shell.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "a2a-recover", &mut buf);
    buf
}

/// Returns the man page (roff).
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(Cli::command()).render(&mut buf)?;
    Ok(buf)
}

/// Runs `completions`.
pub(crate) fn run(ctx: &Context, args: &CompletionsArgs) -> anyhow::Result<u8> {
    ctx.out.raw(&completion_script(args.shell))?;
    Ok(crate::exit::OK)
}

/// Runs the hidden `man`.
pub(crate) fn man(ctx: &Context) -> anyhow::Result<u8> {
    ctx.out.raw(&man_page()?)?;
    Ok(crate::exit::OK)
}
