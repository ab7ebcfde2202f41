//! `completions` and the hidden `man`: generated from the clap definition.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;
use crate::context::Context;

/// Prints a shell completion script.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover completions bash \\
      > ~/.local/share/bash-completion/completions/a2a-recover
  a2a-recover completions zsh > ~/.zfunc/_a2a-recover
  a2a-recover completions fish > ~/.config/fish/completions/a2a-recover.fish")]
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

/// The command the man pages describe: without the `help` subcommand, which has no page.
fn man_command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Returns the man page of `a2a-recover` (roff), as the hidden `man` prints it.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(man_command()).render(&mut buf)?;
    Ok(buf)
}

/// Returns every man page that ships in `man/` (file name, roff): `a2a-recover.1`, which lists
/// the subcommands, and one page for each visible subcommand it lists
/// (`a2a-recover-delegate.1`, `a2a-recover-agents-add.1`, …).
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut buf = Vec::new();
        man.render(&mut buf)?;
        out.push((man.get_filename(), buf));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(&man_command(), &mut out)?;
    Ok(out)
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

/// Returns the CLI reference (docs/cli-reference.md), generated from the clap definition.
pub fn cli_reference_markdown() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::from(
        "# CLI reference\n\n<!-- Generated from the clap definition by `tests/generated.rs`; \
         do not edit. Rewrite with A2A_RECOVER_UPDATE_GENERATED=1 cargo test generated. -->\n\n",
    );
    write_command(&mut out, &cmd, "a2a-recover", 2);
    out
}

fn write_command(out: &mut String, cmd: &clap::Command, path: &str, depth: usize) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "{} `{path}`\n", "#".repeat(depth));
    if let Some(about) = cmd.get_long_about().or_else(|| cmd.get_about()) {
        let _ = writeln!(out, "{about}\n");
    }
    let mut usage = cmd.clone().render_usage().to_string();
    if let Some(rest) = usage.strip_prefix("Usage: ") {
        usage = rest.to_owned();
    }
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let args: Vec<_> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .filter(|a| depth == 2 || !a.is_global_set())
        .collect();
    if !args.is_empty() {
        let _ = writeln!(out, "| argument | meaning |\n| --- | --- |");
        for arg in args {
            let name = match (arg.get_long(), arg.get_short()) {
                (Some(l), Some(s)) => format!("`-{s}`, `--{l}`"),
                (Some(l), None) => format!("`--{l}`"),
                (None, Some(s)) => format!("`-{s}`"),
                (None, None) => format!("`{}`", arg.get_id().as_str().to_uppercase()),
            };
            let mut help = arg
                .get_help()
                .map(|h| h.to_string().replace('\n', " ").replace('|', "\\|"))
                .unwrap_or_default();
            if let Some(env) = arg.get_env() {
                let _ = write!(help, " [env: `{}`]", env.to_string_lossy());
            }
            let defaults: Vec<_> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy())
                .collect();
            if !defaults.is_empty() && arg.get_action().takes_values() {
                let _ = write!(help, " [default: `{}`]", defaults.join(","));
            }
            let _ = writeln!(out, "| {name} | {help} |");
        }
        out.push('\n');
    }
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        write_command(
            out,
            sub,
            &format!("{path} {}", sub.get_name()),
            (depth + 1).min(4),
        );
    }
}
