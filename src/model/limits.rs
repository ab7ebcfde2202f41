//! An agent's own limits as the registry keeps them (`agents add --concurrency`, `--rate`);
//! the wire (`a2a::Limits`) enforces them.

use std::collections::HashMap;

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
