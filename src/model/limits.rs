//! An agent's own limits as the registry keeps them (`agents add --concurrency`, `--rate`);
//! the wire (`a2a::Limits`) enforces them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

/// One agent's own limits; a field left `None` keeps the default's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AgentOverride {
    /// Requests in flight at once.
    pub concurrency: Option<usize>,
    /// Requests started per second.
    pub rate: Option<f64>,
}

/// Agents' own limits by interface URL.
pub type Overrides = HashMap<String, AgentOverride>;

/// An agent's not-before time: no request to it before `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotBefore {
    /// No request before this.
    pub at: DateTime<Utc>,
    /// Why, for a human: "it asked to wait 315360000s (Retry-After), longer than 30s".
    pub reason: String,
}

/// Not-before times by agent (interface URL, credential key as `Credential::key` gives it).
pub type NotBefores = HashMap<(String, Option<String>), NotBefore>;
