//! `status`: the journal at a glance, as `systemctl status` shows a unit: which journal is in
//! use and why, its schema, who holds the pass lock, latest attempts by state, the oldest
//! unfinished attempt, each agent's health (last reached, failing since), and the agents no pass
//! calls before their not-before time. `--check` turns it
//! into a probe: exit 4 when something needs a human (or, with `--stale`, when work or an agent
//! has been quiet too long), else 0. It only reads: no lock, no migration.

use std::fmt::Write as _;

use clap::Args;
use serde_json::json;

use crate::context::Context;
use crate::exit;
use crate::journal::{AgentNotBefore, InspectFilter, Journal, Overview, Stale};
use crate::output::age;
use crate::sanitize::inert;

use super::util::records::health_fields;

/// Shows the journal in use, its lock, attempts by state and what needs a human.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  a2a-recover status            # the journal in use and why, locks, steps
  a2a-recover status --check    # exit 4 when something needs a human
  a2a-recover status --check --stale 2h   # ... or work or an agent quiet for 2h
  a2a-recover status --format json")]
pub struct StatusArgs {
    /// Exits 4 when something needs a human (`inspect --pending` lists it), else 0: a probe
    /// for monitoring.
    #[arg(long)]
    pub check: bool,
    /// Also lists what is stale: an unfinished step not needing a human with no state change
    /// and no answer from its agent for longer than DURATION, or an agent work waits on that
    /// has been failing for longer; with `--check`, either exits 4.
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse_duration)]
    pub stale: Option<std::time::Duration>,
}

/// How many stale steps `status` names (the record says how many there are in all).
const STALE_SHOWN: u64 = 20;

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
    let stale = match args.stale {
        Some(d) => {
            let before = chrono::Duration::from_std(d)
                .ok()
                .and_then(|d| ctx.display_clock.now().checked_sub_signed(d))
                .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
            Some(journal.stale(before, STALE_SHOWN)?)
        }
        None => None,
    };
    let is_stale = stale.as_ref().is_some_and(Stale::any);
    let code = if args.check && (needs_human > 0 || is_stale) {
        exit::NEEDS_HUMAN
    } else {
        exit::OK
    };
    // `-q`: nothing at all; the exit code says it (a probe's `status --check -q`).
    if ctx.out.is_quiet() {
        return Ok(code);
    }
    ctx.out.begin("status")?;
    let paused = journal.not_befores()?;
    let seen = Seen {
        overview: &overview,
        needs_human,
        holders: &holders,
        paused: &paused,
        stale: stale.as_ref().zip(args.stale),
    };
    if ctx.out.is_json() {
        ctx.out.record(&record(ctx, &journal, &seen, code))?;
    } else {
        for line in human(ctx, &journal, &seen) {
            ctx.out.line(&line)?;
        }
    }
    Ok(code)
}

/// What `status` read of the journal.
struct Seen<'a> {
    overview: &'a Overview,
    needs_human: u64,
    holders: &'a [(String, String)],
    /// The agents no pass calls before their not-before time.
    paused: &'a [AgentNotBefore],
    /// With `--stale`: what is stale, and the duration given.
    stale: Option<(&'a Stale, std::time::Duration)>,
}

/// The `status` record.
fn record(ctx: &Context, journal: &Journal, seen: &Seen<'_>, code: u8) -> serde_json::Value {
    let o = seen.overview;
    let states: serde_json::Map<String, serde_json::Value> = o
        .states
        .iter()
        .map(|(s, n)| (s.as_str().to_owned(), json!(n)))
        .collect();
    let agents: Vec<serde_json::Value> = o
        .agents
        .iter()
        .map(|h| {
            let mut m = serde_json::Map::new();
            m.insert("agent".into(), json!(crate::a2a::redact_url(&h.card_url)));
            m.insert(
                "lastReached".into(),
                json!(h.last_reached().map(crate::clock::rfc3339)),
            );
            m.extend(health_fields(Some(h)));
            serde_json::Value::Object(m)
        })
        .collect();
    let stale = seen.stale.map(|(stale, d)| {
        json!({
            "olderThanSeconds": d.as_secs_f64(),
            "attempts": stale.attempts.iter().map(|u| json!({
                "workflow": u.step.workflow,
                "step": u.step.step,
                "attempt": u.attempt,
                "state": u.state.as_str(),
                "agent": u.agent.as_deref().map(crate::a2a::redact_url),
                "heardAt": crate::clock::rfc3339(u.heard),
            })).collect::<Vec<_>>(),
            "attemptsTotal": stale.attempts_total,
            "agents": stale.agents.iter().map(|(url, since)| json!({
                "agent": crate::a2a::redact_url(url),
                "failingSince": crate::clock::rfc3339(*since),
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "type": "status",
        "journal": ctx.journal.to_string(),
        "store": if ctx.journal.is_postgres() { "postgres" } else { "sqlite" },
        "chosenBy": ctx.journal_source.as_str(),
        "schemaVersion": journal.schema_version(),
        "knownSchemaVersion": Journal::known_schema_version(),
        "locks": seen.holders
            .iter()
            .map(|(scope, h)| json!({"scope": scope, "holder": h}))
            .collect::<Vec<_>>(),
        "states": states,
        "needsHuman": seen.needs_human,
        "oldestUnfinished": o.oldest_unfinished.as_ref().map(|(name, n, state, at, changed)| json!({
            "workflow": name.workflow,
            "step": name.step,
            "attempt": n,
            "state": state.as_str(),
            "createdAt": crate::clock::rfc3339(*at),
            "stateChangedAt": crate::clock::rfc3339(*changed),
        })),
        "agents": agents,
        "pausedAgents": seen.paused.iter().map(|p| {
            let (token_env, token_cmd) = token_source(p.credential.as_deref());
            json!({
                "agent": crate::a2a::redact_url(&p.interface_url),
                "tokenEnv": token_env,
                "tokenCmd": token_cmd,
                "notBefore": crate::clock::rfc3339(p.not_before),
                "reason": p.reason,
            })
        }).collect::<Vec<_>>(),
        "stale": stale,
        "listeners": journal.listeners().unwrap_or_default().iter().map(|l| json!({
            "host": l.host,
            "pid": l.pid,
            "bind": l.bind,
            "startedAt": crate::clock::rfc3339(l.started_at),
            "heartbeatAt": crate::clock::rfc3339(l.heartbeat_at),
            "lastPushAt": l.last_push_at.map(crate::clock::rfc3339),
        })).collect::<Vec<_>>(),
        "exitCode": code,
    })
}

/// An agent's card URL as `status` shows it: its base URL (the card URL less the well-known
/// path, with its `/`), redacted and inert.
fn shown_agent(card_url: &str) -> String {
    let base = card_url
        .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
        .map_or_else(|| card_url.to_owned(), |b| format!("{b}/"));
    inert(&crate::a2a::redact_url(&base))
}

/// The human lines, `systemctl status` style: a headline, then `Label: value` lines.
/// The running `listen` processes, one line each (none on a journal older than schema 19).
fn listeners(
    journal: &Journal,
    when: &dyn Fn(chrono::DateTime<chrono::Utc>) -> String,
) -> Vec<String> {
    journal
        .listeners()
        .unwrap_or_default()
        .into_iter()
        .map(|l| {
            let last = l.last_push_at.map_or_else(
                || "no push yet".to_owned(),
                |t| format!("last push {}", when(t)),
            );
            let (host, pid, bind) = (inert(&l.host), l.pid, inert(&l.bind));
            format!("{:>17}: {host} pid {pid} on {bind}, {last}", "Listener")
        })
        .collect()
}

fn human(ctx: &Context, journal: &Journal, seen: &Seen<'_>) -> Vec<String> {
    let (o, needs_human, holders) = (seen.overview, seen.needs_human, seen.holders);
    let now = ctx.display_clock.now();
    let when = |t: chrono::DateTime<chrono::Utc>| {
        format!("{} ({} ago)", crate::clock::rfc3339(t), age(now, t))
    };
    let is_stale = seen.stale.is_some_and(|(s, _)| s.any());
    let mark = if needs_human > 0 || is_stale {
        "×"
    } else {
        "●"
    };
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
            format!("{needs_human} (`a2a-recover inspect --pending` says what to run)")
        },
    );
    field(
        "Oldest unfinished",
        o.oldest_unfinished.as_ref().map_or_else(
            || "none".to_owned(),
            // Within 80 columns: the time itself is in JSON and in `inspect STEP`.
            // AGE as every view measures it: since the last state change.
            |(name, n, state, _, at)| format!("{name} attempt {n}: {state} for {}", age(now, *at)),
        ),
    );
    if let Some((stale, d)) = seen.stale {
        stale_lines(&mut lines, stale, d, &when);
    }
    if o.agents.is_empty() {
        lines.push(format!("{:>17}: none", "Agents"));
    }
    agent_lines(&mut lines, ctx.out.width(), &o.agents, now, &when);
    lines.extend(paused_lines(seen.paused, now));
    lines.extend(listeners(journal, &when));
    lines
}

/// The `Agents:` lines: each agent and its health, or, when that is wider than the width, the
/// agent and then each part of its health on a line of its own.
fn agent_lines(
    lines: &mut Vec<String>,
    width: Option<usize>,
    agents: &[crate::journal::AgentHealth],
    now: chrono::DateTime<chrono::Utc>,
    when: &dyn Fn(chrono::DateTime<chrono::Utc>) -> String,
) {
    for (i, h) in agents.iter().enumerate() {
        // A failed request never moves "last reached"; a failing agent says since when, and
        // how long ago it last answered.
        let health = match (h.failing_since, h.last_reached()) {
            (Some(since), Some(t)) => format!(
                "failing since {}, last reached {} ago",
                when(since),
                age(now, t)
            ),
            (Some(since), None) => format!("failing since {}, never reached", when(since)),
            (None, Some(t)) => format!("last reached {}", when(t)),
            (None, None) => "never reached".to_owned(),
        };
        let label = if i == 0 { "Agents:" } else { "" };
        let agent = shown_agent(&h.card_url);
        let one = format!("{label:>18} {agent}, {health}");
        if width.is_some_and(|w| crate::output::display_width(&one) > w) {
            lines.push(format!("{label:>18} {agent}"));
            for part in health.split(", ") {
                lines.push(format!("{:>18}   {part}", ""));
            }
        } else {
            lines.push(one);
        }
    }
}

/// The `Not before:` lines: each agent that asked to wait longer than a pass does, which no pass
/// calls before then.
fn paused_lines(paused: &[AgentNotBefore], now: chrono::DateTime<chrono::Utc>) -> Vec<String> {
    paused
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let shown = inert(&crate::a2a::redact_url(&p.interface_url));
            let credential = p
                .credential
                .as_deref()
                .map(|c| format!(" (credential {})", inert(c)))
                .unwrap_or_default();
            let label = if i == 0 { "Not before:" } else { "" };
            format!(
                "{label:>18} {shown}{credential} until {} (in {}): {}",
                crate::clock::rfc3339(p.not_before),
                age(p.not_before, now),
                inert(&p.reason)
            )
        })
        .collect()
}

/// Splits the journaled source of an agent's credential (`env:VAR`, `cmd:COMMAND`) into the
/// `tokenEnv` and `tokenCmd` of records.
fn token_source(credential: Option<&str>) -> (Option<&str>, Option<&str>) {
    match credential {
        Some(c) => (c.strip_prefix("env:"), c.strip_prefix("cmd:")),
        None => (None, None),
    }
}

/// The `Stale:` lines of `status --stale`: each stale step (at most [`STALE_SHOWN`]) and each
/// agent failing for longer than the duration, or that nothing is.
fn stale_lines(
    lines: &mut Vec<String>,
    stale: &Stale,
    d: std::time::Duration,
    when: &dyn Fn(chrono::DateTime<chrono::Utc>) -> String,
) {
    let over = compound(d);
    let mut items: Vec<String> = stale
        .attempts
        .iter()
        .map(|u| {
            format!(
                "{} attempt {}, {}, no change or answer since {}",
                u.step,
                u.attempt,
                u.state,
                when(u.heard)
            )
        })
        .collect();
    let more = stale
        .attempts_total
        .saturating_sub(stale.attempts.len() as u64);
    if more > 0 {
        items.push(format!(
            "… and {more} more step(s) quiet for longer than {over} (`--format json` counts them)"
        ));
    }
    items.extend(
        stale.agents.iter().map(|(url, since)| {
            format!("agent {} failing since {}", shown_agent(url), when(*since))
        }),
    );
    if items.is_empty() {
        lines.push(format!(
            "{:>17}: nothing quiet for longer than {over}",
            "Stale"
        ));
    }
    for (i, item) in items.into_iter().enumerate() {
        let label = if i == 0 { "Stale:" } else { "" };
        lines.push(format!("{label:>18} {item}"));
    }
}

/// A duration as `--stale` takes one: `2h`, `1h30m`, `45s`, `500ms`.
fn compound(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    let parts = [
        (secs / 86_400, "d"),
        (secs / 3600 % 24, "h"),
        (secs / 60 % 60, "m"),
        (secs % 60, "s"),
    ];
    let mut out = String::new();
    for (n, unit) in parts.iter().filter(|(n, _)| *n > 0) {
        let _ = write!(out, "{n}{unit}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_they_are_given() {
        let s = std::time::Duration::from_secs;
        assert_eq!(compound(s(7200)), "2h");
        assert_eq!(compound(s(5400)), "1h30m");
        assert_eq!(compound(s(1)), "1s");
        assert_eq!(compound(s(90_061)), "1d1h1m1s");
        assert_eq!(compound(std::time::Duration::from_millis(500)), "500ms");
    }
}
