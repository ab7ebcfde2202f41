//! `status`: the journal at a glance, as `systemctl status` shows a unit: which journal is in
//! use and why, its schema, who holds the pass lock, latest attempts by state, the oldest
//! unfinished attempt, when each agent was last reached, and the agents no pass calls before
//! their not-before time. `--check` turns it into a probe: exit 4 when something needs a
//! human, else 0. It only reads: no lock, no migration.

use clap::Args;
use serde_json::json;

use crate::context::Context;
use crate::exit;
use crate::journal::{AgentNotBefore, InspectFilter, Journal, Overview};
use crate::output::age;
use crate::sanitize::inert;

/// Shows the journal in use, its lock, attempts by state and what needs a human.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover status                 the journal in use and why, its lock, steps by state
  a2a-recover status --check         exit 4 when something needs a human (monitoring)
  a2a-recover status --format json")]
pub struct StatusArgs {
    /// Exits 4 when something needs a human (`inspect --pending` lists it), else 0: a probe
    /// for monitoring.
    #[arg(long)]
    pub check: bool,
}

/// Runs `status`.
pub(crate) async fn run(ctx: &Context, args: &StatusArgs) -> anyhow::Result<u8> {
    ctx.require_journal()?;
    let journal = ctx.open_journal_for_reading()?;
    let overview = journal.overview()?;
    let needs_human = journal
        .inspect(&InspectFilter {
            pending: true,
            limit: Some(1),
            ..InspectFilter::default()
        })?
        .total;
    let holders = ctx.lock_holders(&journal)?;
    let paused = journal.not_befores()?;
    let code = if args.check && needs_human > 0 {
        exit::NEEDS_HUMAN
    } else {
        exit::OK
    };
    // `-q`: nothing at all; the exit code says it (a probe's `status --check -q`).
    if ctx.out.is_quiet() {
        return Ok(code);
    }
    ctx.out.begin("status")?;
    if ctx.out.is_json() {
        ctx.out.record(&record(
            ctx,
            &journal,
            &overview,
            (needs_human, &paused),
            &holders,
            code,
        ))?;
    } else {
        for line in human(ctx, &journal, &overview, (needs_human, &paused), &holders) {
            ctx.out.line(&line)?;
        }
    }
    Ok(code)
}

/// The `status` record.
fn record(
    ctx: &Context,
    journal: &Journal,
    o: &Overview,
    (needs_human, paused): (u64, &[AgentNotBefore]),
    holders: &[(String, String)],
    code: u8,
) -> serde_json::Value {
    let states: serde_json::Map<String, serde_json::Value> = o
        .states
        .iter()
        .map(|(s, n)| (s.as_str().to_owned(), json!(n)))
        .collect();
    json!({
        "type": "status",
        "journal": ctx.journal.to_string(),
        "store": if ctx.journal.is_postgres() { "postgres" } else { "sqlite" },
        "chosenBy": ctx.journal_source.as_str(),
        "schemaVersion": journal.schema_version(),
        "knownSchemaVersion": Journal::known_schema_version(),
        "locks": holders
            .iter()
            .map(|(scope, h)| json!({"scope": scope, "holder": h}))
            .collect::<Vec<_>>(),
        "states": states,
        "needsHuman": needs_human,
        "oldestUnfinished": o.oldest_unfinished.as_ref().map(|(name, n, state, at)| json!({
            "workflow": name.workflow,
            "step": name.step,
            "attempt": n,
            "state": state.as_str(),
            "createdAt": crate::clock::rfc3339(*at),
        })),
        "agents": o.agents.iter().map(|(url, at)| json!({
            "agent": crate::a2a::redact_url(url),
            "lastReached": at.map(crate::clock::rfc3339),
        })).collect::<Vec<_>>(),
        "pausedAgents": paused.iter().map(|p| {
            let (token_env, token_cmd) = token_source(p.credential.as_deref());
            json!({
                "agent": crate::a2a::redact_url(&p.interface_url),
                "tokenEnv": token_env,
                "tokenCmd": token_cmd,
                "notBefore": crate::clock::rfc3339(p.not_before),
                "reason": p.reason,
            })
        }).collect::<Vec<_>>(),
        "exitCode": code,
    })
}

/// Splits the journaled source of an agent's credential (`env:VAR`, `cmd:COMMAND`) into the
/// `tokenEnv` and `tokenCmd` of records.
fn token_source(credential: Option<&str>) -> (Option<&str>, Option<&str>) {
    match credential {
        Some(c) => (c.strip_prefix("env:"), c.strip_prefix("cmd:")),
        None => (None, None),
    }
}

/// The human lines, `systemctl status` style: a headline, then `Label: value` lines.
fn human(
    ctx: &Context,
    journal: &Journal,
    o: &Overview,
    (needs_human, paused): (u64, &[AgentNotBefore]),
    holders: &[(String, String)],
) -> Vec<String> {
    let now = ctx.display_clock.now();
    let when = |t: chrono::DateTime<chrono::Utc>| {
        format!("{} ({} ago)", crate::clock::rfc3339(t), age(now, t))
    };
    let mark = if needs_human > 0 { "×" } else { "●" };
    let mut lines = vec![format!("{mark} a2a-recover journal {}", ctx.journal)];
    let mut field = |label: &str, value: String| lines.push(format!("{label:>17}: {value}"));
    field("Chosen by", ctx.journal_source.describe().to_owned());
    let known = Journal::known_schema_version();
    let version = journal.schema_version();
    field(
        "Schema",
        if version > known {
            format!("version {version}, newer than this binary ({known}): read-only")
        } else {
            format!("version {version}")
        },
    );
    field(
        "Locks",
        if holders.is_empty() {
            "free".to_owned()
        } else {
            holders
                .iter()
                .map(|(scope, h)| {
                    let what = if scope == "journal" {
                        "the journal".to_owned()
                    } else {
                        format!("workflow {scope}")
                    };
                    format!("{what} held by {}", inert(h))
                })
                .collect::<Vec<_>>()
                .join("; ")
        },
    );
    let total: u64 = o.states.iter().map(|(_, n)| n).sum();
    let by_state = o
        .states
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    field(
        "Steps",
        if total == 0 {
            "none journaled".to_owned()
        } else {
            format!("{total} (latest attempts: {by_state})")
        },
    );
    field(
        "Needs a human",
        if needs_human == 0 {
            "nothing".to_owned()
        } else {
            format!("{needs_human} (`a2a-recover inspect --pending` lists each with its remedy)")
        },
    );
    field(
        "Oldest unfinished",
        o.oldest_unfinished.as_ref().map_or_else(
            || "none".to_owned(),
            |(name, n, state, at)| format!("{name} attempt {n}, {state}, since {}", when(*at)),
        ),
    );
    if o.agents.is_empty() {
        field("Agents", "none".to_owned());
    }
    for (i, (url, at)) in o.agents.iter().enumerate() {
        let base = url
            .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
            .map_or_else(|| url.clone(), |b| format!("{b}/"));
        let shown = inert(&crate::a2a::redact_url(&base));
        let reached = at.map_or_else(
            || "never reached".to_owned(),
            |t| format!("last reached {}", when(t)),
        );
        let label = if i == 0 { "Agents:" } else { "" };
        lines.push(format!("{label:>18} {shown}, {reached}"));
    }
    // An agent that asked to wait longer than a pass does: no pass calls it before then.
    for (i, p) in paused.iter().enumerate() {
        let shown = inert(&crate::a2a::redact_url(&p.interface_url));
        let credential = p
            .credential
            .as_deref()
            .map(|c| format!(" (credential {})", inert(c)))
            .unwrap_or_default();
        let label = if i == 0 { "Not before:" } else { "" };
        lines.push(format!(
            "{label:>18} {shown}{credential} until {} (in {}): {}",
            crate::clock::rfc3339(p.not_before),
            age(p.not_before, now),
            inert(&p.reason)
        ));
    }
    lines
}
