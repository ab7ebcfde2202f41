//! `demo`: the worked example of DESIGN.md §6 with a real crash.

use clap::Args;

use crate::context::Context;

/// Runs the worked example end to end against scripted agents, with a real crash.
///
/// Uses a temporary journal unless --journal is given.
#[derive(Debug, Args)]
pub struct DemoArgs {}

/// Runs `demo`.
pub(crate) async fn run(_ctx: &Context, _args: &DemoArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`demo` is not built yet")
}
