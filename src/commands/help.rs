//! The command line as parsed, with each subcommand's help kept to its own flags.
//!
//! The global flags (`--journal`, `--format`, `-q`, …) are accepted before or after any
//! subcommand, so clap lists all of them again in every subcommand's help: some sixty lines
//! that bury the few flags the subcommand has. A subcommand's `-h` and `--help` leave them out
//! and say, on one line after its own flags, that `a2a-recover --help` lists them, as `git` and
//! `kubectl options` do. The flags still parse and complete everywhere: they are hidden from
//! the help only, and the man pages and the CLI reference keep their own layout.

use clap::CommandFactory as _;

use super::Cli;

/// A subcommand's help: clap's default layout, and the line that points at the global flags.
const SUBCOMMAND_HELP: &str = "\
{before-help}{about-with-newline}
{usage-heading} {usage}

{all-args}

Global options (--journal, -o/--format, -q, -v, …): see `a2a-recover --help`.{after-help}";

/// Returns the command line `a2a-recover` parses, its subcommands' help without the global
/// flags.
pub fn cli_command() -> clap::Command {
    let mut cmd = Cli::command();
    // Each subcommand gets the global flags before clap would copy them in (it copies only
    // those a subcommand lacks), hidden from its help; still global, so they reach the
    // subcommands below it as they are.
    let globals: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| a.clone().hide_short_help(true).hide_long_help(true))
        .collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, |sub| with_template(sub.args(globals.clone())));
    }
    cmd.after_help(format!("{GLOBALS_NOTE}\n\n{}", crate::exit::HELP))
}

/// Where the global options go, after them in `a2a-recover --help`.
const GLOBALS_NOTE: &str = "\
The global options go before or after the subcommand; a subcommand's --help
lists only its own flags.";

/// `cmd` and every subcommand below it with [`SUBCOMMAND_HELP`].
fn with_template(cmd: clap::Command) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut cmd = cmd.help_template(SUBCOMMAND_HELP);
    for name in names {
        cmd = cmd.mut_subcommand(name, with_template);
    }
    cmd
}
