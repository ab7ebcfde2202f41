//! The SQL of push notifications (schema 19): the config each attempt asked its agent for, the
//! hashes of the tokens sent with it, each agent's push registration, and running listeners.
//! Times are unix milliseconds.

use serde_json::Value;

use super::queries::json_items;
use super::{DbResult, Tx, args};
use crate::journal::model::AttemptId;

/// An attempt's push config as journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::journal) struct ConfigRow {
    /// The attempt.
    pub attempt: AttemptId,
    /// The config id (the last segment of its URL).
    pub config_id: String,
    /// The URL the agent was asked to push to.
    pub url: String,
    /// When a listener last recorded a push for it.
    pub last_push_at: Option<i64>,
}

const CONFIG_COLUMNS: &str = "attempt_id, config_id, url, last_push_at";

fn config_from_row(r: &super::Row<'_>) -> DbResult<ConfigRow> {
    Ok(ConfigRow {
        attempt: AttemptId(r.get(0)?),
        config_id: r.get(1)?,
        url: r.get(2)?,
        last_push_at: r.get(3)?,
    })
}

/// Returns the push config of attempt `id`, if it has one.
pub(in crate::journal) fn config_of(conn: &Tx, id: AttemptId) -> DbResult<Option<ConfigRow>> {
    conn.opt_row(
        &format!("SELECT {CONFIG_COLUMNS} FROM push_configs WHERE attempt_id = ?1"),
        args![id.0],
        config_from_row,
    )
}

/// Returns the push config whose id is `config_id`, if any.
pub(in crate::journal) fn config_by_id(conn: &Tx, config_id: &str) -> DbResult<Option<ConfigRow>> {
    conn.opt_row(
        &format!("SELECT {CONFIG_COLUMNS} FROM push_configs WHERE config_id = ?1"),
        args![config_id],
        config_from_row,
    )
}

/// Returns the push configs of the attempts given.
pub(in crate::journal) fn configs_of(conn: &Tx, ids: &[AttemptId]) -> DbResult<Vec<ConfigRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let list = Value::Array(ids.iter().map(|a| Value::from(a.0)).collect()).to_string();
    conn.rows(
        &format!(
            "SELECT {CONFIG_COLUMNS} FROM push_configs WHERE attempt_id IN ({})
             ORDER BY attempt_id",
            json_items(conn.dialect(), "?1", true)
        ),
        args![list],
        config_from_row,
    )
}

/// Journals attempt `id`'s push config.
pub(in crate::journal) fn insert_config(
    conn: &Tx,
    id: AttemptId,
    config_id: &str,
    url: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "INSERT INTO push_configs (config_id, attempt_id, url, created_at)
         VALUES (?1, ?2, ?3, ?4)",
        args![config_id, id.0, url, now],
    )?;
    Ok(())
}

/// Adds the hash of a token sent with config `config_id`.
pub(in crate::journal) fn insert_token_hash(
    conn: &Tx,
    config_id: &str,
    hash: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "INSERT INTO push_tokens (config_id, token_hash, created_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (config_id, token_hash) DO NOTHING",
        args![config_id, hash, now],
    )?;
    Ok(())
}

/// Returns the token hashes of config `config_id`, oldest first.
pub(in crate::journal) fn token_hashes(conn: &Tx, config_id: &str) -> DbResult<Vec<String>> {
    conn.rows(
        "SELECT token_hash FROM push_tokens WHERE config_id = ?1 ORDER BY created_at, token_hash",
        args![config_id],
        |r| r.get(0),
    )
}

/// Deletes the push config of attempt `id` and its token hashes (an attempt deleted unsent).
pub(in crate::journal) fn delete_config_of(conn: &Tx, id: AttemptId) -> DbResult<()> {
    conn.exec(
        "DELETE FROM push_tokens WHERE config_id IN
             (SELECT config_id FROM push_configs WHERE attempt_id = ?1)",
        args![id.0],
    )?;
    conn.exec(
        "DELETE FROM push_configs WHERE attempt_id = ?1",
        args![id.0],
    )?;
    Ok(())
}

/// Returns an agent's push registration: its listener's base URL and whether it is trusted.
pub(in crate::journal) fn agent_push(
    conn: &Tx,
    card_url: &str,
) -> DbResult<Option<(Option<String>, bool)>> {
    conn.opt_row(
        "SELECT push_url, trust_push FROM agents WHERE card_url = ?1",
        args![card_url],
        |r| Ok((r.get(0)?, r.get::<i64>(1)? != 0)),
    )
}

/// Sets an agent's push registration (`agents add --push`, `--trust-push`).
pub(in crate::journal) fn set_agent_push(
    conn: &Tx,
    card_url: &str,
    push_url: Option<&str>,
    trust: bool,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE agents SET push_url = ?2, trust_push = ?3, updated_at = ?4 WHERE card_url = ?1",
        args![card_url, push_url, i64::from(trust), now],
    )?;
    Ok(())
}

/// Records that a push for config `config_id` was received at `now`, keeping `hint` (the push
/// as received, JSON) when it needs a read-back, clearing any earlier hint otherwise.
pub(in crate::journal) fn record_push(
    conn: &Tx,
    config_id: &str,
    hint: Option<&str>,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE push_configs SET last_push_at = ?2, hint_json = COALESCE(?3, hint_json)
         WHERE config_id = ?1",
        args![config_id, now, hint],
    )?;
    Ok(())
}

/// Clears the hint of attempt `id`'s config (a read settled it); returns whether it had one.
pub(in crate::journal) fn clear_hint(conn: &Tx, id: AttemptId) -> DbResult<bool> {
    let cleared = conn.exec(
        "UPDATE push_configs SET hint_json = NULL WHERE attempt_id = ?1 AND hint_json IS NOT NULL",
        args![id.0],
    )?;
    Ok(cleared > 0)
}

/// A running listener as journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::journal) struct ListenerRow {
    pub owner: String,
    pub host: String,
    pub pid: i64,
    pub bind: String,
    pub started_at: i64,
    pub heartbeat_at: i64,
    pub last_push_at: Option<i64>,
}

/// Journals (or renews) a listener's row.
pub(in crate::journal) fn upsert_listener(conn: &Tx, l: &ListenerRow) -> DbResult<()> {
    conn.exec(
        "INSERT INTO push_listeners (owner, host, pid, bind, started_at, heartbeat_at, last_push_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (owner) DO UPDATE SET heartbeat_at = ?6, last_push_at = ?7",
        args![
            &l.owner,
            &l.host,
            l.pid,
            &l.bind,
            l.started_at,
            l.heartbeat_at,
            l.last_push_at
        ],
    )?;
    Ok(())
}

/// Deletes a listener's row (it stopped).
pub(in crate::journal) fn delete_listener(conn: &Tx, owner: &str) -> DbResult<()> {
    conn.exec("DELETE FROM push_listeners WHERE owner = ?1", args![owner])?;
    Ok(())
}

/// Returns the listeners whose heartbeat is not older than `since`, oldest first.
pub(in crate::journal) fn listeners(conn: &Tx, since: i64) -> DbResult<Vec<ListenerRow>> {
    conn.rows(
        "SELECT owner, host, pid, bind, started_at, heartbeat_at, last_push_at
         FROM push_listeners WHERE heartbeat_at >= ?1 ORDER BY started_at, owner",
        args![since],
        |r| {
            Ok(ListenerRow {
                owner: r.get(0)?,
                host: r.get(1)?,
                pid: r.get(2)?,
                bind: r.get(3)?,
                started_at: r.get(4)?,
                heartbeat_at: r.get(5)?,
                last_push_at: r.get(6)?,
            })
        },
    )
}
