//! `--metrics-file`: a Prometheus textfile for node_exporter's textfile collector.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::context::Context;
use crate::journal::{AgentHealth, InspectFilter, Journal, Unheard};

/// Renders the metrics after a pass that exited `code` after `took`; the journal's gauges
/// are read afresh (read-only) and left out when it cannot be read.
pub(super) fn render(ctx: &Context, code: u8, took: Duration) -> String {
    let mut out = String::new();
    let gauges = Journal::open_read_only_at(&ctx.journal, ctx.timeout)
        .ok()
        .and_then(|j| {
            let overview = j.overview().ok()?;
            let pending = j
                .inspect(&InspectFilter {
                    pending: true,
                    limit: Some(1),
                    ..InspectFilter::default()
                })
                .ok()?
                .total;
            let unheard = j.longest_unheard().ok()?;
            Some((overview, pending, unheard))
        });
    let now = ctx.clock.now();
    if let Some((overview, pending, unheard)) = gauges {
        out.push_str(
            "# HELP a2a_recover_attempts Latest attempts of the journal's steps, by state.\n\
             # TYPE a2a_recover_attempts gauge\n",
        );
        for state in crate::journal::AttemptState::ALL {
            let n = overview
                .states
                .iter()
                .find(|(s, _)| *s == state)
                .map_or(0, |(_, n)| *n);
            let _ = writeln!(out, "a2a_recover_attempts{{state=\"{state}\"}} {n}");
        }
        let _ = write!(
            out,
            "# HELP a2a_recover_needs_human Items a human must act on (inspect --pending).\n\
             # TYPE a2a_recover_needs_human gauge\n\
             a2a_recover_needs_human {pending}\n"
        );
        health(&mut out, now, &overview.agents, unheard.as_ref());
    }
    let _ = write!(
        out,
        "# HELP a2a_recover_pass_duration_seconds How long the last reconcile pass took.\n\
         # TYPE a2a_recover_pass_duration_seconds gauge\n\
         a2a_recover_pass_duration_seconds {:.3}\n\
         # HELP a2a_recover_last_pass_timestamp_seconds When the last reconcile pass ended.\n\
         # TYPE a2a_recover_last_pass_timestamp_seconds gauge\n\
         a2a_recover_last_pass_timestamp_seconds {:.3}\n\
         # HELP a2a_recover_pass_exit_code The exit code of the last reconcile pass.\n\
         # TYPE a2a_recover_pass_exit_code gauge\n\
         a2a_recover_pass_exit_code {code}\n",
        took.as_secs_f64(),
        now.timestamp_millis() as f64 / 1000.0,
    );
    out
}

/// The health series: the age of the unfinished attempt not needing a human heard of
/// longest ago (as `status --stale` measures it; 0 when there is none), and each agent's
/// last answer and, while it fails, since when, for every agent work waits on and every
/// registered one.
fn health(out: &mut String, now: DateTime<Utc>, agents: &[AgentHealth], unheard: Option<&Unheard>) {
    let age = unheard.map_or(0.0, |u| {
        ((now - u.heard).num_milliseconds().max(0) as f64) / 1000.0
    });
    let _ = write!(
        out,
        "# HELP a2a_recover_oldest_unfinished_age_seconds How long the unfinished step not \
         needing a human heard of longest ago has gone without a state change or an answer \
         from its agent.\n\
         # TYPE a2a_recover_oldest_unfinished_age_seconds gauge\n\
         a2a_recover_oldest_unfinished_age_seconds {age:.3}\n"
    );
    // One series per label: two card URLs of one base URL keep the first (failing first,
    // then the latest reached).
    let mut by_label: BTreeMap<String, &AgentHealth> = BTreeMap::new();
    for h in agents.iter().filter(|h| h.waited_on || h.registered) {
        by_label.entry(label(&h.card_url)).or_insert(h);
    }
    let seconds = |t: DateTime<Utc>| t.timestamp_millis() as f64 / 1000.0;
    out.push_str(
        "# HELP a2a_recover_agent_last_success_timestamp_seconds When the agent last \
         answered (to within a minute).\n\
         # TYPE a2a_recover_agent_last_success_timestamp_seconds gauge\n",
    );
    for (agent, h) in &by_label {
        if let Some(t) = h.last_success_at {
            let _ = writeln!(
                out,
                "a2a_recover_agent_last_success_timestamp_seconds{{agent=\"{agent}\"}} {:.3}",
                seconds(t)
            );
        }
    }
    out.push_str(
        "# HELP a2a_recover_agent_failing_since_timestamp_seconds Since when the agent has \
         not answered (absent while it answers).\n\
         # TYPE a2a_recover_agent_failing_since_timestamp_seconds gauge\n",
    );
    for (agent, h) in &by_label {
        if let Some(t) = h.failing_since {
            let _ = writeln!(
                out,
                "a2a_recover_agent_failing_since_timestamp_seconds{{agent=\"{agent}\"}} {:.3}",
                seconds(t)
            );
        }
    }
}

/// An agent's `agent` label: its base URL (the card URL less the well-known path, else the
/// card URL), redacted, escaped as the text format wants a label value.
fn label(card_url: &str) -> String {
    let url = crate::a2a::redact_url(card_url);
    let base = url
        .strip_suffix(crate::a2a::WELL_KNOWN_CARD_PATH)
        .unwrap_or(&url);
    escape(base)
}

/// A label value escaped as the text format wants it: `\\`, `\"` and `\n`.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Writes `text` to `path` atomically: a temporary file beside it, synced, then renamed
/// over it, so node_exporter never reads half a file.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "metrics".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_label_is_its_base_url_escaped() {
        assert_eq!(
            label("http://a.example:8001/.well-known/agent-card.json"),
            "http://a.example:8001"
        );
        assert_eq!(
            label("http://a.example/cards/x.json"),
            "http://a.example/cards/x.json"
        );
        assert_eq!(escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }

    #[test]
    fn the_textfile_replaces_the_old_one_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a2a.prom");
        write_atomically(&path, "a 1\n").unwrap();
        write_atomically(&path, "b 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b 2\n");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
