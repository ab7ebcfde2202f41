//! Agents: cards, the registry, limits, probed profiles and not-before times.

use super::{ms, time};
use crate::journal::model::{Agent, AgentCard, AgentId, AgentNotBefore, AgentProfile};
use crate::journal::sql::{DbError, DbResult, Dialect, Row, Tx, args};
use crate::model::ProtocolBinding;

const AGENT_COLUMNS: &str = "id, card_url, interface_url, protocol_version, tenant, token_env, \
     card_json, skills_json, accepts_context_id, registered, fetched_at, profile_json, binding, \
     trust_dedup, token_cmd, push_url";

fn agent_from_row(r: &Row<'_>) -> DbResult<Agent> {
    let skills_json: String = r.get(7)?;
    let skills: Vec<String> =
        serde_json::from_str(&skills_json).map_err(|e| DbError::conversion(7, e))?;
    Ok(Agent {
        id: AgentId(r.get(0)?),
        card_url: r.get(1)?,
        interface_url: r.get(2)?,
        protocol_version: r.get(3)?,
        binding: match r.get::<Option<String>>(2)? {
            None => None,
            // The version column predates the binding one: a NULL binding is JSON-RPC.
            Some(_) => ProtocolBinding::from_journal(
                Some(r.get::<Option<String>>(12)?.as_deref().unwrap_or("JSONRPC")),
                Some(r.get::<Option<String>>(3)?.as_deref().unwrap_or("1.0")),
            ),
        },
        tenant: r.get(4)?,
        trust_dedup: r.get(13)?,
        token_env: r.get(5)?,
        token_cmd: r.get(14)?,
        card_json: r.get(6)?,
        skills,
        accepts_context_id: r.get(8)?,
        push_url: r.get(15)?,
        registered: r.get(9)?,
        fetched_at: r.get::<Option<i64>>(10)?.map(time),
        // A profile this binary cannot read is no profile: nothing is trusted from it.
        profile: r
            .get::<Option<String>>(11)?
            .and_then(|json| serde_json::from_str(&json).ok()),
    })
}

/// Returns an agent by card URL.
pub(in crate::journal) fn agent_by_url(conn: &Tx, card_url: &str) -> DbResult<Option<Agent>> {
    conn.opt_row(
        &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE card_url = ?1"),
        args![card_url],
        agent_from_row,
    )
}

/// What an intent needs of its agent's row: its id, whether it refuses client context ids
/// and, when registered, its credential variable.
#[derive(Debug, Clone)]
pub(in crate::journal) struct IntentAgent {
    pub(in crate::journal) id: AgentId,
    pub(in crate::journal) refuses_context_id: bool,
    pub(in crate::journal) registered_token_env: Option<String>,
    pub(in crate::journal) registered_token_cmd: Option<String>,
}

/// Returns what an intent needs of the agent's row, inserting a bare row (no card yet) if
/// needed; one read, no card or skills parsed.
pub(in crate::journal) fn intent_agent(
    conn: &Tx,
    card_url: &str,
    now: i64,
) -> DbResult<IntentAgent> {
    conn.exec(
        "INSERT INTO agents (card_url, created_at, updated_at) VALUES (?1, ?2, ?2)
         ON CONFLICT (card_url) DO NOTHING",
        args![card_url, now],
    )?;
    conn.row(
        "SELECT id, accepts_context_id, registered, token_env, token_cmd FROM agents
         WHERE card_url = ?1",
        args![card_url],
        |r| {
            let registered: Option<i64> = r.get(2)?;
            Ok(IntentAgent {
                id: AgentId(r.get(0)?),
                refuses_context_id: r.get::<Option<bool>>(1)? == Some(false),
                registered_token_env: if registered.is_some() {
                    r.get(3)?
                } else {
                    None
                },
                registered_token_cmd: if registered.is_some() {
                    r.get(4)?
                } else {
                    None
                },
            })
        },
    )
}

/// Stores a fetched card on the agent's row (inserting it if needed); returns its id.
pub(in crate::journal) fn store_card(conn: &Tx, card: &AgentCard, now: i64) -> DbResult<AgentId> {
    let skills = serde_json::to_string(&card.skills).unwrap_or_else(|_| "[]".to_owned());
    conn.exec(
        "INSERT INTO agents (card_url, interface_url, protocol_version, tenant, card_json,
             skills_json, fetched_at, created_at, updated_at, binding)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?7, ?8)
         ON CONFLICT (card_url) DO UPDATE SET interface_url = excluded.interface_url,
             protocol_version = excluded.protocol_version, tenant = excluded.tenant,
             card_json = excluded.card_json, skills_json = excluded.skills_json,
             fetched_at = excluded.fetched_at, updated_at = excluded.updated_at,
             binding = excluded.binding",
        args![
            card.card_url,
            card.interface_url,
            card.protocol_version,
            card.tenant,
            card.card_json,
            skills,
            now,
            card.binding.wire().card_name(),
        ],
    )?;
    conn.row(
        "SELECT id FROM agents WHERE card_url = ?1",
        args![card.card_url],
        |r| Ok(AgentId(r.get(0)?)),
    )
}

/// Puts an agent in the registry (after the last one) with its credential variable name.
pub(in crate::journal) fn register_agent(
    conn: &Tx,
    card_url: &str,
    token_env: Option<&str>,
    token_cmd: Option<&str>,
    trust_dedup: bool,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE agents SET token_env = ?2, updated_at = ?3, trust_dedup = ?4, token_cmd = ?5,
             registered_at = CASE WHEN registered IS NULL THEN ?3 ELSE registered_at END,
             registered = COALESCE(registered,
                 (SELECT COALESCE(MAX(registered), 0) + 1 FROM agents))
         WHERE card_url = ?1",
        args![card_url, token_env, now, trust_dedup, token_cmd],
    )?;
    Ok(())
}

/// Takes an agent out of the registry (its row stays: attempts refer to it).
pub(in crate::journal) fn unregister_agent(conn: &Tx, card_url: &str, now: i64) -> DbResult<bool> {
    Ok(conn.exec(
        "UPDATE agents SET registered = NULL, registered_at = NULL, updated_at = ?2
         WHERE card_url = ?1 AND registered IS NOT NULL",
        args![card_url, now],
    )? > 0)
}

/// Returns registered agents in registration order, optionally only those with a skill.
pub(in crate::journal) fn registered_agents(
    conn: &Tx,
    skill: Option<&str>,
) -> DbResult<Vec<Agent>> {
    let skills = match conn.dialect() {
        Dialect::Sqlite => "json_each(skills_json)",
        Dialect::Postgres => "jsonb_array_elements_text(CAST(skills_json AS jsonb)) AS sk (value)",
    };
    conn.rows(
        &format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE registered IS NOT NULL
               AND (CAST(?1 AS TEXT) IS NULL
                    OR EXISTS (SELECT 1 FROM {skills} WHERE value = ?1))
             ORDER BY registered"
        ),
        args![skill],
        agent_from_row,
    )
}

/// Sets a registered agent's own request limits (`None`: the pass's flag decides).
pub(in crate::journal) fn set_agent_limits(
    conn: &Tx,
    card_url: &str,
    concurrency: Option<u32>,
    rate: Option<f64>,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE agents SET max_concurrency = ?2, max_rate = ?3, updated_at = ?4
         WHERE card_url = ?1",
        args![card_url, concurrency, rate, now],
    )?;
    Ok(())
}

/// Stores an agent's probed recovery profile, inserting a bare row (no card) if needed.
pub(in crate::journal) fn store_profile(
    conn: &Tx,
    card_url: &str,
    profile: &AgentProfile,
    now: i64,
) -> DbResult<()> {
    let json = serde_json::to_string(profile).map_err(|e| DbError::Backend(Box::new(e)))?;
    conn.exec(
        "INSERT INTO agents (card_url, profile_json, probed_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT (card_url) DO UPDATE SET profile_json = excluded.profile_json,
             probed_at = excluded.probed_at, updated_at = excluded.updated_at",
        args![card_url, json, profile.probed_at.timestamp_millis(), now],
    )?;
    Ok(())
}

/// Journals an agent's not-before time (replacing the one it had), and forgets those passed.
pub(in crate::journal) fn record_not_before(
    conn: &Tx,
    nb: &AgentNotBefore,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "DELETE FROM agent_not_before WHERE not_before <= ?1",
        args![now],
    )?;
    conn.exec(
        "INSERT INTO agent_not_before (interface_url, credential, not_before, reason, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (interface_url, credential) DO UPDATE SET not_before = excluded.not_before,
             reason = excluded.reason, updated_at = excluded.updated_at",
        args![
            nb.interface_url,
            nb.credential.clone().unwrap_or_default(),
            ms(nb.not_before),
            nb.reason,
            now
        ],
    )?;
    Ok(())
}

/// Returns the agents' not-before times still ahead of `now`, by interface URL and credential.
pub(in crate::journal) fn not_befores(conn: &Tx, now: i64) -> DbResult<Vec<AgentNotBefore>> {
    conn.rows(
        "SELECT interface_url, credential, not_before, reason FROM agent_not_before
         WHERE not_before > ?1 ORDER BY interface_url, credential",
        args![now],
        |r| {
            let credential: String = r.get(1)?;
            Ok(AgentNotBefore {
                interface_url: r.get(0)?,
                credential: Some(credential).filter(|c| !c.is_empty()),
                not_before: time(r.get(2)?),
                reason: r.get(3)?,
            })
        },
    )
}

/// A registered agent's own request limits.
pub(in crate::journal) struct AgentLimitRow {
    pub(in crate::journal) card_url: String,
    pub(in crate::journal) interface_url: Option<String>,
    pub(in crate::journal) concurrency: Option<u32>,
    pub(in crate::journal) rate: Option<f64>,
}

/// Returns the own limits of every registered agent that has one.
pub(in crate::journal) fn agent_limits(conn: &Tx) -> DbResult<Vec<AgentLimitRow>> {
    conn.rows(
        "SELECT card_url, interface_url, max_concurrency, max_rate FROM agents
         WHERE registered IS NOT NULL AND (max_concurrency IS NOT NULL OR max_rate IS NOT NULL)
         ORDER BY registered",
        args![],
        |r| {
            Ok(AgentLimitRow {
                card_url: r.get(0)?,
                interface_url: r.get(1)?,
                concurrency: r.get(2)?,
                rate: r.get(3)?,
            })
        },
    )
}

/// Returns what is journaled of whether an agent accepts client-chosen context ids (`None`:
/// no such agent, or not known).
pub(in crate::journal) fn accepts_context_id(conn: &Tx, card_url: &str) -> DbResult<Option<bool>> {
    Ok(conn
        .opt_row(
            "SELECT accepts_context_id FROM agents WHERE card_url = ?1",
            args![card_url],
            |r| r.get::<Option<bool>>(0),
        )?
        .flatten())
}

/// Records whether an agent accepts client-chosen context ids; returns whether it changed.
pub(in crate::journal) fn set_accepts_context_id(
    conn: &Tx,
    card_url: &str,
    accepts: bool,
    now: i64,
) -> DbResult<bool> {
    Ok(conn.exec(
        "UPDATE agents SET accepts_context_id = ?2, updated_at = ?3
         WHERE card_url = ?1 AND (accepts_context_id IS NULL OR accepts_context_id <> ?2)",
        args![card_url, accepts, now],
    )? > 0)
}
