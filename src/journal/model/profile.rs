//! An agent's recovery profile, as `agents probe` measured it: what recovery can rely on.
//!
//! Every field is a measurement with an `unknown` (or `null`) where the probe could not tell;
//! `unknown` is never proof of anything. The profile is stored as JSON on the agent's row with
//! its own `probed_at` column, and shown as `profile` in `agent` records: field names and
//! values are contract (camelCase names, kebab-case values).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What ListTasks offers for a look by context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListTasksSupport {
    /// The agent has no ListTasks (method not found, or unsupported).
    None,
    /// ListTasks lists tasks of other contexts when asked for one context.
    IgnoresFilter,
    /// ListTasks honours its `contextId` filter.
    Ok,
    /// The probe could not tell (the agent showed no task at all, or a call failed).
    Unknown,
}

/// Whether an optional feature is there and works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Support {
    /// Missing, or ignored.
    None,
    /// There and honoured.
    Ok,
    /// The probe could not tell.
    Unknown,
}

/// What the agent does with a client-chosen `contextId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientContextId {
    /// It keeps the contextId the client chose.
    Accepted,
    /// It refuses the send (JSON-RPC -32602 naming `contextId`).
    Refused,
    /// It accepts the send but files the task under a context of its own.
    Replaced,
    /// Not measured (a probe without `--send-test` knows only what the journal learnt).
    Unknown,
}

/// A yes-or-no measurement (`dedup`, `historyKept`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum YesNo {
    /// Measured so.
    Yes,
    /// Measured not so.
    No,
}

/// One interface the card offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferedBinding {
    /// The card's `protocolBinding` (e.g. `JSONRPC`, `HTTP+JSON`, `GRPC`), as declared.
    pub binding: String,
    /// The card's `protocolVersion`, as declared.
    pub protocol_version: String,
    /// The interface URL, as declared.
    pub url: String,
    /// Whether a2a-recover speaks it.
    pub spoken: bool,
    /// Whether it is the interface a2a-recover chose (and the probe measured).
    pub chosen: bool,
}

/// An agent's recovery profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProfile {
    /// The interfaces the card offers, in card order.
    pub bindings: Vec<OfferedBinding>,
    /// Whether ListTasks exists and honours its `contextId` filter.
    pub list_tasks: ListTasksSupport,
    /// Whether ListTasks honours `statusTimestampAfter`.
    pub timestamp_filter: Support,
    /// Whether SubscribeToTask is there.
    pub subscribe: Support,
    /// The error code SubscribeToTask answers for a terminal task (`-32004` on JSON-RPC),
    /// when the probe had one to ask about; `null` otherwise.
    pub terminal_subscribe_code: Option<String>,
    /// The error code SubscribeToTask answers for a task id the agent never had.
    pub unknown_task_subscribe_code: Option<String>,
    /// What the agent does with a client-chosen `contextId`.
    pub client_context_id: ClientContextId,
    /// With `--send-test`: whether sending the same messageId twice returned the same task.
    pub dedup: Option<YesNo>,
    /// With `--send-test`: whether the task's history kept the message sent.
    pub history_kept: Option<YesNo>,
    /// Whether the probe sent test messages (`--send-test`): only then did it create tasks.
    pub send_test: bool,
    /// When the profile was measured.
    pub probed_at: DateTime<Utc>,
}

impl AgentProfile {
    /// Returns whether a probed de-duplication by messageId can be trusted for an attempt whose
    /// intent was journaled at `intent_at`: only a probe made after it counts, since an
    /// in-memory de-duplication does not survive the agent's restart.
    pub fn dedups_since(&self, intent_at: DateTime<Utc>) -> bool {
        self.dedup == Some(YesNo::Yes) && self.probed_at > intent_at
    }
}

impl ListTasksSupport {
    /// Returns the value's name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::IgnoresFilter => "ignores-filter",
            Self::Ok => "ok",
            Self::Unknown => "unknown",
        }
    }
}

impl Support {
    /// Returns the value's name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Ok => "ok",
            Self::Unknown => "unknown",
        }
    }
}

impl ClientContextId {
    /// Returns the value's name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Refused => "refused",
            Self::Replaced => "replaced",
            Self::Unknown => "unknown",
        }
    }
}

impl YesNo {
    /// Returns the value's name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::No => "no",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(dedup: Option<YesNo>, probed_at: DateTime<Utc>) -> AgentProfile {
        AgentProfile {
            bindings: vec![OfferedBinding {
                binding: "JSONRPC".into(),
                protocol_version: "1.0".into(),
                url: "http://a.example/".into(),
                spoken: true,
                chosen: true,
            }],
            list_tasks: ListTasksSupport::IgnoresFilter,
            timestamp_filter: Support::Unknown,
            subscribe: Support::Ok,
            terminal_subscribe_code: Some("-32004".into()),
            unknown_task_subscribe_code: None,
            client_context_id: ClientContextId::Replaced,
            dedup,
            history_kept: Some(YesNo::No),
            send_test: true,
            probed_at,
        }
    }

    #[test]
    fn the_profile_reads_back_as_written_with_the_documented_names() {
        let at = "2026-12-02T01:00:00.123Z".parse().unwrap();
        let p = profile(Some(YesNo::Yes), at);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["listTasks"], "ignores-filter");
        assert_eq!(json["timestampFilter"], "unknown");
        assert_eq!(json["clientContextId"], "replaced");
        assert_eq!(json["terminalSubscribeCode"], "-32004");
        assert_eq!(json["dedup"], "yes");
        assert_eq!(json["historyKept"], "no");
        assert_eq!(json["bindings"][0]["protocolVersion"], "1.0");
        let back: AgentProfile = serde_json::from_value(json).unwrap();
        assert_eq!(back, p);
        assert_eq!(ListTasksSupport::IgnoresFilter.as_str(), "ignores-filter");
    }

    #[test]
    fn dedup_counts_only_when_probed_after_the_intent() {
        let at: DateTime<Utc> = "2026-12-02T01:00:00Z".parse().unwrap();
        let before = at - chrono::Duration::seconds(1);
        assert!(profile(Some(YesNo::Yes), at).dedups_since(before));
        assert!(!profile(Some(YesNo::Yes), at).dedups_since(at), "not after");
        assert!(
            !profile(Some(YesNo::Yes), before).dedups_since(at),
            "older probe"
        );
        assert!(!profile(Some(YesNo::No), at).dedups_since(before));
        assert!(!profile(None, at).dedups_since(before));
    }
}
