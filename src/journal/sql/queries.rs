//! All SQL of the journal, and the mapping between rows and model types.
//!
//! Functions here take a connection of the store seam ([`Tx`], inside a transaction or not)
//! and return [`DbResult`]; the operation files run them through the journal's store, which
//! wraps them in transactions and maps errors. The SQL runs on SQLite and PostgreSQL alike
//! (`?N` parameters, `RETURNING`, `COALESCE`, `CASE` rather than two-argument `MAX` or a
//! boolean read as an integer, sums cast to `BIGINT`); where the two truly differ (JSON
//! functions), a statement picks its text by [`Db::dialect`](super::Db::dialect). Times are
//! unix milliseconds.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Arg, DbError, DbResult, Dialect, Row, Tx, args};
use crate::journal::health::{AgentHealth, Unheard};
use crate::journal::model::{
    Agent, AgentCard, AgentId, AgentNotBefore, AgentProfile, Artifact, Attempt, AttemptId,
    AttemptRow, AttemptState, Binding, CredentialSource, EffectState, Event, InspectFilter, Lease,
    NeedsHuman, NewReply, Reply, ReplyId, ReplyState, Resolution, Step, StepId, StepName, StepSpec,
    Target, WorkflowState, WorkflowSummary,
};
use crate::journal::operator::AttemptResolution;
use crate::model::{InterfaceChoice, ProtocolBinding, ProtocolVersion, WireBinding};

/// Converts a time to stored unix milliseconds.
pub(in crate::journal) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn time(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn parse_col<T>(row: &Row<'_>, idx: usize) -> DbResult<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let s: String = row.get(idx)?;
    s.parse().map_err(|e| DbError::conversion(idx, e))
}

fn parse_opt<T>(row: &Row<'_>, idx: usize) -> DbResult<Option<T>>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let s: Option<String> = row.get(idx)?;
    s.map(|s| s.parse().map_err(|e| DbError::conversion(idx, e)))
        .transpose()
}

fn json_opt(row: &Row<'_>, idx: usize) -> DbResult<Option<Value>> {
    let s: Option<String> = row.get(idx)?;
    s.map(|s| serde_json::from_str(&s).map_err(|e| DbError::conversion(idx, e)))
        .transpose()
}

fn to_json(v: Option<&Value>) -> Option<String> {
    v.map(Value::to_string)
}

/// The rows of a JSON array parameter (`?N`, text), as a subquery of one column `value`:
/// the items as text, or as integers with `int`. (PostgreSQL reads the parameter as text, then
/// as `jsonb`: the parameter's own type stays text.)
pub(in crate::journal) fn json_items(d: Dialect, param: &str, int: bool) -> String {
    match (d, int) {
        (Dialect::Sqlite, _) => format!("SELECT value FROM json_each({param})"),
        (Dialect::Postgres, false) => format!(
            "SELECT value FROM jsonb_array_elements_text(CAST(CAST({param} AS TEXT) AS jsonb)) \
             AS j (value)"
        ),
        (Dialect::Postgres, true) => format!(
            "SELECT CAST(value AS BIGINT) \
             FROM jsonb_array_elements_text(CAST(CAST({param} AS TEXT) AS jsonb)) AS j (value)"
        ),
    }
}

/// The text of a JSON object column's member `key` (NULL when absent): `json_extract` on
/// SQLite, `->>` on PostgreSQL.
fn json_member(d: Dialect, column: &str, key: &str) -> String {
    match d {
        Dialect::Sqlite => format!("json_extract({column}, '$.{key}')"),
        Dialect::Postgres => format!("(CAST({column} AS jsonb) ->> '{key}')"),
    }
}

// ---------------------------------------------------------------------------------------------
// Workflows and steps
// ---------------------------------------------------------------------------------------------

/// Returns the workflow's id, creating it `ACTIVE` if needed.
pub(in crate::journal) fn workflow_id_or_insert(conn: &Tx, name: &str, now: i64) -> DbResult<i64> {
    conn.exec(
        "INSERT INTO workflows (name, created_at, updated_at) VALUES (?1, ?2, ?2)
         ON CONFLICT (name) DO NOTHING",
        args![name, now],
    )?;
    conn.row(
        "SELECT id FROM workflows WHERE name = ?1",
        args![name],
        |r| r.get(0),
    )
}

/// Returns a workflow's id, if the journal has it.
pub(in crate::journal) fn workflow_id(conn: &Tx, name: &str) -> DbResult<Option<i64>> {
    conn.opt_row(
        "SELECT id FROM workflows WHERE name = ?1",
        args![name],
        |r| r.get(0),
    )
}

/// Returns the id of a workflow's step of that name, if any.
pub(in crate::journal) fn step_id_in(
    conn: &Tx,
    workflow_id: i64,
    name: &str,
) -> DbResult<Option<StepId>> {
    conn.opt_row(
        "SELECT id FROM steps WHERE workflow_id = ?1 AND name = ?2",
        args![workflow_id, name],
        |r| Ok(StepId(r.get(0)?)),
    )
}

/// Returns a workflow's state.
pub(in crate::journal) fn workflow_state(conn: &Tx, name: &str) -> DbResult<Option<WorkflowState>> {
    conn.opt_row(
        "SELECT state FROM workflows WHERE name = ?1",
        args![name],
        |r| parse_col(r, 0),
    )
}

/// Sets a workflow's state; returns (id, previous state) when it changed.
pub(in crate::journal) fn set_workflow_state(
    conn: &Tx,
    name: &str,
    state: WorkflowState,
    now: i64,
) -> DbResult<Option<(i64, WorkflowState)>> {
    let Some((id, old)) = conn.opt_row(
        "SELECT id, state FROM workflows WHERE name = ?1",
        args![name],
        |r| Ok((r.get::<i64>(0)?, parse_col::<WorkflowState>(r, 1)?)),
    )?
    else {
        return Ok(None);
    };
    if old == state {
        return Ok(None);
    }
    conn.exec(
        "UPDATE workflows SET state = ?2, updated_at = ?3 WHERE id = ?1",
        args![id, state.as_str(), now],
    )?;
    Ok(Some((id, old)))
}

const STEP_COLUMNS: &str = "s.id, w.name, s.name, s.seq, s.text, s.agent_url, s.skill, s.command, \
     s.token_env, s.metadata_json, s.max_attempts, s.allow_cross_origin, s.effect_json, \
     s.compensate_json, s.verify_json, s.cwd, s.compensates_step_id, s.resolution, \
     s.resolution_reason, w.state, s.created_at, s.updated_at, s.force_binding, s.force_protocol, s.token_cmd";

fn binding_from(
    agent: Option<String>,
    skill: Option<String>,
    command: Option<String>,
) -> DbResult<Binding> {
    match (agent, skill, command) {
        (Some(a), None, None) => Ok(Binding::Agent(a)),
        (None, Some(s), None) => Ok(Binding::Skill(s)),
        (None, None, Some(c)) => Ok(Binding::Command(c)),
        _ => Err(DbError::conversion(
            5,
            "not exactly one of agent_url, skill and command is set",
        )),
    }
}

/// Reads a step's forced `--binding` or `--protocol` column.
fn parse_forced<T: std::str::FromStr<Err = String>>(r: &Row<'_>, i: usize) -> DbResult<Option<T>> {
    r.get::<Option<String>>(i)?
        .map(|s| s.parse::<T>().map_err(|e| DbError::conversion(i, e)))
        .transpose()
}

fn step_from_row(r: &Row<'_>) -> DbResult<Step> {
    let metadata = match json_opt(r, 9)? {
        Some(Value::Object(m)) => Some(m),
        Some(_) => {
            return Err(DbError::conversion(9, "metadata is not a JSON object"));
        }
        None => None,
    };
    Ok(Step {
        id: StepId(r.get(0)?),
        spec: StepSpec {
            name: StepName::from_parts(r.get::<String>(1)?, r.get::<String>(2)?),
            text: r.get(4)?,
            binding: binding_from(r.get(5)?, r.get(6)?, r.get(7)?)?,
            token_env: r.get(8)?,
            token_cmd: r.get(24)?,
            metadata,
            max_attempts: r.get(10)?,
            allow_cross_origin: r.get(11)?,
            interface: InterfaceChoice {
                binding: parse_forced(r, 22)?,
                protocol: parse_forced(r, 23)?,
            },
            effect: json_opt(r, 12)?,
            compensate: json_opt(r, 13)?,
            verify: json_opt(r, 14)?,
            cwd: r.get(15)?,
        },
        seq: r.get(3)?,
        compensates: r.get::<Option<i64>>(16)?.map(StepId),
        resolution: parse_opt::<Resolution>(r, 17)?,
        resolution_reason: r.get(18)?,
        workflow_state: parse_col(r, 19)?,
        created_at: time(r.get(20)?),
        updated_at: time(r.get(21)?),
    })
}

/// Returns a step by name.
pub(in crate::journal) fn step_by_name(conn: &Tx, name: &StepName) -> DbResult<Option<Step>> {
    conn.opt_row(
        &format!(
            "SELECT {STEP_COLUMNS} FROM steps s JOIN workflows w ON w.id = s.workflow_id
             WHERE w.name = ?1 AND s.name = ?2"
        ),
        args![name.workflow, name.step],
        step_from_row,
    )
}

/// Returns a step by id.
pub(in crate::journal) fn step_by_id(conn: &Tx, id: StepId) -> DbResult<Option<Step>> {
    conn.opt_row(
        &format!(
            "SELECT {STEP_COLUMNS} FROM steps s JOIN workflows w ON w.id = s.workflow_id
             WHERE s.id = ?1"
        ),
        args![id.0],
        step_from_row,
    )
}

/// Inserts a step at the end of the journal's delegation order; returns its id.
pub(in crate::journal) fn insert_step(
    conn: &Tx,
    workflow_id: i64,
    spec: &StepSpec,
    compensates: Option<StepId>,
    now: i64,
) -> DbResult<StepId> {
    let (agent, skill, command) = match &spec.binding {
        Binding::Agent(a) => (Some(a.as_str()), None, None),
        Binding::Skill(s) => (None, Some(s.as_str()), None),
        Binding::Command(c) => (None, None, Some(c.as_str())),
    };
    let metadata = spec
        .metadata
        .as_ref()
        .map(|m| Value::Object(m.clone()).to_string());
    conn.row(
        "INSERT INTO steps (workflow_id, name, seq, text, agent_url, skill, command, token_env,
             metadata_json, max_attempts, allow_cross_origin, effect_json, compensate_json,
             verify_json, cwd, compensates_step_id, created_at, updated_at, force_binding,
             force_protocol, token_cmd)
         VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps), ?3, ?4, ?5, ?6, ?7, ?8,
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?16, ?17, ?18, ?19)
         RETURNING id",
        args![
            workflow_id,
            spec.name.step,
            spec.text,
            agent,
            skill,
            command,
            spec.token_env,
            metadata,
            spec.max_attempts,
            spec.allow_cross_origin,
            to_json(spec.effect.as_ref()),
            to_json(spec.compensate.as_ref()),
            to_json(spec.verify.as_ref()),
            spec.cwd,
            compensates.map(|s| s.0),
            now,
            spec.interface.binding.map(WireBinding::card_name),
            spec.interface.protocol.map(ProtocolVersion::as_str),
            spec.token_cmd,
        ],
        |r| Ok(StepId(r.get(0)?)),
    )
}

/// Records an operator's decision on a step.
pub(in crate::journal) fn set_resolution(
    conn: &Tx,
    step: StepId,
    resolution: Option<Resolution>,
    reason: Option<&str>,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE steps SET resolution = ?2, resolution_reason = ?3, resolved_at = ?4,
             updated_at = ?4 WHERE id = ?1",
        args![step.0, resolution.map(Resolution::as_str), reason, now],
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------------------------

const AGENT_COLUMNS: &str = "id, card_url, interface_url, protocol_version, tenant, token_env, \
     card_json, skills_json, accepts_context_id, registered, fetched_at, profile_json, binding, \
     trust_dedup, token_cmd";

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

// ---------------------------------------------------------------------------------------------
// Attempts
// ---------------------------------------------------------------------------------------------

const ATTEMPT_COLUMNS: &str = "a.id, a.step_id, a.number, ag.card_url, a.interface_url, a.tenant, \
     a.token_env, a.message_id, a.context_id, a.context_id_ours, a.task_id, a.state, \
     a.remote_state, a.status_timestamp, a.pending_question, a.last_task_json, a.outcome_json, \
     a.error, a.effect, a.cancel_requested_at, a.previous_attempt_id, a.lease_owner_pid, \
     a.lease_owner_host, a.lease_expires_at, a.created_at, a.updated_at, a.continuation_task_id, \
     a.binding, a.protocol_version, a.token_cmd, a.lease_owner_id, a.credential_source";

/// How many columns [`ATTEMPT_COLUMNS`] has.
const ATTEMPT_WIDTH: usize = 32;

/// Reads the binding columns of a row whose interface is journaled (`interface` set); both
/// NULL (a row written before bindings were journaled) reads as `None`: the caller then takes
/// the binding from the journaled card, else v1.0 JSON-RPC.
fn binding_cols(
    r: &Row<'_>,
    interface: bool,
    binding: usize,
    version: usize,
) -> DbResult<Option<ProtocolBinding>> {
    let b: Option<String> = r.get(binding)?;
    let v: Option<String> = r.get(version)?;
    if !interface || (b.is_none() && v.is_none()) {
        return Ok(None);
    }
    ProtocolBinding::from_journal(b.as_deref(), v.as_deref())
        .map(Some)
        .ok_or_else(|| {
            DbError::conversion(
                binding,
                format_args!(
                    "unknown binding {} {}",
                    b.unwrap_or_default(),
                    v.unwrap_or_default()
                ),
            )
        })
}

/// Returns the journal's names of a binding (`JSONRPC`, `1.0`).
fn binding_names(b: Option<ProtocolBinding>) -> (Option<&'static str>, Option<&'static str>) {
    (
        b.map(|b| b.wire().card_name()),
        b.map(|b| b.version().as_str()),
    )
}

fn attempt_from_row(r: &Row<'_>) -> DbResult<Attempt> {
    let lease = match (
        r.get::<Option<u32>>(21)?,
        r.get::<Option<String>>(22)?,
        r.get::<Option<i64>>(23)?,
    ) {
        (Some(pid), Some(host), Some(exp)) => Some(Lease {
            owner: r.get(30)?,
            pid,
            host,
            expires_at: time(exp),
        }),
        _ => None,
    };
    Ok(Attempt {
        id: AttemptId(r.get(0)?),
        step_id: StepId(r.get(1)?),
        number: r.get(2)?,
        agent_url: r.get(3)?,
        interface_url: r.get(4)?,
        tenant: r.get(5)?,
        binding: binding_cols(r, r.get::<Option<String>>(4)?.is_some(), 27, 28)?,
        token_env: r.get(6)?,
        token_cmd: r.get(29)?,
        credential_source: parse_col::<CredentialSource>(r, 31)?,
        message_id: r.get(7)?,
        context_id: r.get(8)?,
        context_id_ours: r.get(9)?,
        task_id: r.get(10)?,
        continuation_task_id: r.get(26)?,
        state: parse_col::<AttemptState>(r, 11)?,
        remote_state: r.get(12)?,
        status_timestamp: r.get(13)?,
        pending_question: json_opt(r, 14)?,
        last_task_json: r.get(15)?,
        outcome_json: r.get(16)?,
        error: r.get(17)?,
        effect: parse_opt::<EffectState>(r, 18)?,
        cancel_requested_at: r.get::<Option<i64>>(19)?.map(time),
        previous_attempt: r.get::<Option<i64>>(20)?.map(AttemptId),
        lease,
        created_at: time(r.get(24)?),
        updated_at: time(r.get(25)?),
    })
}

/// The columns of a new attempt.
pub(in crate::journal) struct NewAttemptRow<'a> {
    pub(in crate::journal) step: StepId,
    pub(in crate::journal) number: u32,
    pub(in crate::journal) agent: Option<AgentId>,
    pub(in crate::journal) token_env: Option<&'a str>,
    pub(in crate::journal) token_cmd: Option<&'a str>,
    pub(in crate::journal) credential_source: CredentialSource,
    pub(in crate::journal) message_id: &'a str,
    pub(in crate::journal) context_id: Option<&'a str>,
    pub(in crate::journal) previous: Option<AttemptId>,
    pub(in crate::journal) now: i64,
}

/// Inserts an `INTENT` attempt; returns its id.
pub(in crate::journal) fn insert_attempt(conn: &Tx, a: &NewAttemptRow<'_>) -> DbResult<AttemptId> {
    conn.row(
        "INSERT INTO attempts (step_id, number, agent_id, token_env, message_id, context_id,
             context_id_ours, state, previous_attempt_id, created_at, updated_at, token_cmd,
             credential_source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 'INTENT', ?7, ?8, ?8, ?9, ?10)
         RETURNING id",
        args![
            a.step.0,
            a.number,
            a.agent.map(|x| x.0),
            a.token_env,
            a.message_id,
            a.context_id,
            a.previous.map(|x| x.0),
            a.now,
            a.token_cmd,
            a.credential_source.as_str(),
        ],
        |r| Ok(AttemptId(r.get(0)?)),
    )
}

/// Returns the attempt [`insert_attempt`] just inserted as `id`, built from its columns
/// without reading it back (`agent_url` is the card URL of `a.agent`).
pub(in crate::journal) fn inserted_attempt(
    id: AttemptId,
    a: &NewAttemptRow<'_>,
    agent_url: Option<String>,
) -> Attempt {
    Attempt {
        id,
        step_id: a.step,
        number: a.number,
        agent_url,
        interface_url: None,
        tenant: None,
        binding: None,
        token_env: a.token_env.map(str::to_owned),
        token_cmd: a.token_cmd.map(str::to_owned),
        credential_source: a.credential_source,
        message_id: a.message_id.to_owned(),
        context_id: a.context_id.map(str::to_owned),
        context_id_ours: true,
        task_id: None,
        continuation_task_id: None,
        state: AttemptState::Intent,
        remote_state: None,
        status_timestamp: None,
        pending_question: None,
        last_task_json: None,
        outcome_json: None,
        error: None,
        effect: None,
        cancel_requested_at: None,
        previous_attempt: a.previous,
        lease: None,
        created_at: time(a.now),
        updated_at: time(a.now),
    }
}

/// Returns whether an attempt of the agent has a continuation (see
/// [`crate::journal::Journal::agent_continues_replies`]).
pub(in crate::journal) fn agent_continues_replies(conn: &Tx, card_url: &str) -> DbResult<bool> {
    conn.row(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM attempts a JOIN agents ag ON ag.id = a.agent_id
             WHERE ag.card_url = ?1 AND a.continuation_task_id IS NOT NULL) THEN 1 ELSE 0 END",
        args![card_url],
        |r| r.get(0),
    )
}

/// Returns an attempt by id.
pub(in crate::journal) fn attempt_by_id(conn: &Tx, id: AttemptId) -> DbResult<Option<Attempt>> {
    // Every journaled stream event reads its attempt.
    conn.opt_row(
        &format!(
            "SELECT {ATTEMPT_COLUMNS} FROM attempts a LEFT JOIN agents ag ON ag.id = a.agent_id
             WHERE a.id = ?1"
        ),
        args![id.0],
        attempt_from_row,
    )
}

/// Returns a step's attempts by number.
pub(in crate::journal) fn attempts_of_step(conn: &Tx, step: StepId) -> DbResult<Vec<Attempt>> {
    conn.rows(
        &format!(
            "SELECT {ATTEMPT_COLUMNS} FROM attempts a LEFT JOIN agents ag ON ag.id = a.agent_id
             WHERE a.step_id = ?1 ORDER BY a.number"
        ),
        args![step.0],
        attempt_from_row,
    )
}

/// Returns the highest attempt number of a step (0 if none).
/// Returns the agent of a step's first attempt: the agent the step's own credential was given
/// for (`None`: no first attempt, or one without an agent).
pub(in crate::journal) fn first_attempt_agent(
    conn: &Tx,
    step: StepId,
) -> DbResult<Option<AgentId>> {
    Ok(conn
        .opt_row(
            "SELECT agent_id FROM attempts WHERE step_id = ?1 AND number = 1",
            args![step.0],
            |r| r.get::<Option<i64>>(0),
        )?
        .flatten()
        .map(AgentId))
}

pub(in crate::journal) fn max_attempt_number(conn: &Tx, step: StepId) -> DbResult<u32> {
    conn.row(
        "SELECT COALESCE(MAX(number), 0) FROM attempts WHERE step_id = ?1",
        args![step.0],
        |r| r.get(0),
    )
}

/// Writes every mutable column of an attempt (the lease has its own statement).
pub(in crate::journal) fn update_attempt(conn: &Tx, a: &Attempt) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET interface_url = ?2, tenant = ?3, context_id = ?4,
             context_id_ours = ?5, task_id = ?6, state = ?7, remote_state = ?8,
             status_timestamp = ?9, pending_question = ?10, last_task_json = ?11,
             outcome_json = ?12, error = ?13, effect = ?14, cancel_requested_at = ?15,
             updated_at = ?16, continuation_task_id = ?17, binding = ?18, protocol_version = ?19
         WHERE id = ?1",
        args![
            a.id.0,
            a.interface_url,
            a.tenant,
            a.context_id,
            a.context_id_ours,
            a.task_id,
            a.state.as_str(),
            a.remote_state,
            a.status_timestamp,
            to_json(a.pending_question.as_ref()),
            a.last_task_json,
            a.outcome_json,
            a.error,
            a.effect.map(EffectState::as_str),
            a.cancel_requested_at.map(ms),
            ms(a.updated_at),
            a.continuation_task_id,
            binding_names(a.binding).0,
            binding_names(a.binding).1,
        ],
    )?;
    Ok(())
}

/// The start of a send and its request timeout, stamped on an attempt as it is claimed to be
/// sent (its in-flight horizon).
#[derive(Debug, Clone, Copy)]
pub(in crate::journal) struct SendStamp {
    /// When the send starts.
    pub(in crate::journal) at: chrono::DateTime<chrono::Utc>,
    /// The request timeout of the send.
    pub(in crate::journal) timeout: std::time::Duration,
}

impl SendStamp {
    fn args(self) -> [Arg<'static>; 2] {
        let timeout_ms = i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX);
        [Arg::Int(ms(self.at)), Arg::Int(timeout_ms)]
    }
}

/// Writes the mutable columns of an attempt that differ between `held` and `next`, and
/// `updated_at` (and `send`'s stamp, if any): an index whose columns are not set is not
/// touched, and a large unchanged column (the last task's raw JSON) is not copied again.
pub(in crate::journal) fn update_attempt_from(
    conn: &Tx,
    held: &Attempt,
    next: &Attempt,
    send: Option<SendStamp>,
) -> DbResult<()> {
    use super::ToArg;
    let pending_question = to_json(next.pending_question.as_ref());
    let context_id_ours = next.context_id_ours;
    let state = next.state.as_str();
    let effect = next.effect.map(EffectState::as_str);
    let cancel_requested_at = next.cancel_requested_at.map(ms);
    let updated_at = ms(next.updated_at);
    let (binding, protocol_version) = binding_names(next.binding);
    let mut sets: Vec<(&str, Arg<'_>)> = Vec::new();
    if next.interface_url != held.interface_url {
        sets.push(("interface_url", next.interface_url.to_arg()));
    }
    if next.tenant != held.tenant {
        sets.push(("tenant", next.tenant.to_arg()));
    }
    if next.binding != held.binding {
        sets.push(("binding", binding.to_arg()));
        sets.push(("protocol_version", protocol_version.to_arg()));
    }
    if next.context_id != held.context_id {
        sets.push(("context_id", next.context_id.to_arg()));
    }
    if next.context_id_ours != held.context_id_ours {
        sets.push(("context_id_ours", context_id_ours.to_arg()));
    }
    if next.task_id != held.task_id {
        sets.push(("task_id", next.task_id.to_arg()));
    }
    if next.continuation_task_id != held.continuation_task_id {
        sets.push(("continuation_task_id", next.continuation_task_id.to_arg()));
    }
    if next.state != held.state {
        sets.push(("state", state.to_arg()));
    }
    if next.remote_state != held.remote_state {
        sets.push(("remote_state", next.remote_state.to_arg()));
    }
    if next.status_timestamp != held.status_timestamp {
        sets.push(("status_timestamp", next.status_timestamp.to_arg()));
    }
    if next.pending_question != held.pending_question {
        sets.push(("pending_question", pending_question.to_arg()));
    }
    if next.last_task_json != held.last_task_json {
        sets.push(("last_task_json", next.last_task_json.to_arg()));
    }
    if next.outcome_json != held.outcome_json {
        sets.push(("outcome_json", next.outcome_json.to_arg()));
    }
    if next.error != held.error {
        sets.push(("error", next.error.to_arg()));
    }
    if next.effect != held.effect {
        sets.push(("effect", effect.to_arg()));
    }
    if next.cancel_requested_at != held.cancel_requested_at {
        sets.push(("cancel_requested_at", cancel_requested_at.to_arg()));
    }
    // A lease released with the change it ends (one UPDATE, not two).
    if next.lease != held.lease {
        sets.extend(
            LEASE_COLUMNS
                .into_iter()
                .zip(lease_args(next.lease.as_ref())),
        );
    }
    if let Some(send) = send {
        let [at, timeout] = send.args();
        sets.extend([("send_started_at", at), ("send_timeout_ms", timeout)]);
    }
    sets.push(("updated_at", updated_at.to_arg()));
    // One string, not one per column: this runs for every change a group commit journals.
    let mut sql = String::with_capacity(64 + 24 * sets.len());
    sql.push_str("UPDATE attempts SET ");
    for (i, (column, _)) in sets.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let _ = write!(sql, "{column} = ?{}", i + 2);
    }
    sql.push_str(" WHERE id = ?1");
    let mut values: Vec<Arg<'_>> = Vec::with_capacity(sets.len() + 1);
    values.push(Arg::Int(next.id.0));
    values.extend(sets.into_iter().map(|(_, v)| v));
    conn.exec(&sql, &values)?;
    Ok(())
}

/// Returns one artifact of an attempt, if it is held.
pub(in crate::journal) fn artifact_of(
    conn: &Tx,
    attempt: AttemptId,
    artifact_id: &str,
) -> DbResult<Option<Artifact>> {
    conn.opt_row(
        "SELECT artifact_id, name, description, parts_json, metadata_json, last_chunk
         FROM artifacts WHERE attempt_id = ?1 AND artifact_id = ?2",
        args![attempt.0, artifact_id],
        artifact_from_row,
    )?
    .map(|mut a| {
        conn.each(
            "SELECT parts_json FROM artifact_chunks
             WHERE attempt_id = ?1 AND artifact_id = ?2 ORDER BY seq",
            args![attempt.0, artifact_id],
            &mut |r| {
                extend_parts(&mut a.parts, json_opt(r, 0)?);
                Ok(())
            },
        )?;
        Ok(a)
    })
    .transpose()
}

/// An artifact from the columns `artifact_id, name, description, parts_json, metadata_json,
/// last_chunk` (its own parts only, without its chunks).
fn artifact_from_row(r: &Row<'_>) -> DbResult<Artifact> {
    Ok(Artifact {
        artifact_id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        parts: json_opt(r, 3)?.unwrap_or(Value::Null),
        metadata: json_opt(r, 4)?,
        last_chunk: r.get(5)?,
    })
}

/// Appends a chunk's parts (a JSON array) to an artifact's parts as read.
fn extend_parts(parts: &mut Value, chunk: Option<Value>) {
    let Some(Value::Array(added)) = chunk else {
        return;
    };
    match parts {
        Value::Array(held) => held.extend(added),
        // Chunks are only written after an array of parts.
        _ => *parts = Value::Array(added),
    }
}

/// What an artifact holds but its parts: enough to append to it without reading them.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::journal) struct ArtifactHead {
    /// The artifact, its `parts` an empty array.
    pub(in crate::journal) artifact: Artifact,
    /// Whether its parts are a JSON array (an append adds to them).
    pub(in crate::journal) parts_are_array: bool,
    /// The bytes of its parts' JSON, chunks included (as [`artifact_sizes`]).
    pub(in crate::journal) size: u64,
}

/// Returns an artifact's head (all but its parts), if it is held; reads no part.
pub(in crate::journal) fn artifact_head(
    conn: &Tx,
    attempt: AttemptId,
    artifact_id: &str,
) -> DbResult<Option<ArtifactHead>> {
    let is_array = match conn.dialect() {
        Dialect::Sqlite => "json_type(parts_json) = 'array'",
        Dialect::Postgres => {
            "CASE WHEN jsonb_typeof(CAST(parts_json AS jsonb)) = 'array' THEN 1 ELSE 0 END"
        }
    };
    conn.opt_row(
        &format!(
            "SELECT artifact_id, name, description, metadata_json, last_chunk,
                 {is_array}, {ARTIFACT_SIZE}
             FROM artifacts ar WHERE attempt_id = ?1 AND artifact_id = ?2"
        ),
        args![attempt.0, artifact_id],
        |r| {
            Ok(ArtifactHead {
                artifact: Artifact {
                    artifact_id: r.get(0)?,
                    name: r.get(1)?,
                    description: r.get(2)?,
                    parts: Value::Array(Vec::new()),
                    metadata: json_opt(r, 3)?,
                    last_chunk: r.get(4)?,
                },
                parts_are_array: r.get(5)?,
                size: u64::try_from(r.get::<i64>(6)?).unwrap_or(0),
            })
        },
    )
}

/// The columns of an attempt's lease, in the order of [`lease_args`].
const LEASE_COLUMNS: [&str; 4] = [
    "lease_owner_pid",
    "lease_owner_host",
    "lease_expires_at",
    "lease_owner_id",
];

/// The values of a lease's columns ([`LEASE_COLUMNS`]), all NULL for none.
fn lease_args(lease: Option<&Lease>) -> [Arg<'_>; 4] {
    let Some(l) = lease else {
        return [Arg::Null, Arg::Null, Arg::Null, Arg::Null];
    };
    [
        Arg::Int(l.pid.into()),
        Arg::Text(l.host.as_str().into()),
        Arg::Int(ms(l.expires_at)),
        l.owner
            .as_deref()
            .map_or(Arg::Null, |o| Arg::Text(o.into())),
    ]
}

/// Sets an attempt's lease and stamps it with a send's start and request timeout, in one
/// statement (a claim right before a first send).
pub(in crate::journal) fn set_lease_and_stamp_send(
    conn: &Tx,
    id: AttemptId,
    lease: &Lease,
    send: SendStamp,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET lease_owner_pid = ?2, lease_owner_host = ?3, lease_expires_at = ?4,
             lease_owner_id = ?5, send_started_at = ?6, send_timeout_ms = ?7
         WHERE id = ?1",
        &{
            let [pid, host, expires, owner] = lease_args(Some(lease));
            let [at, timeout] = send.args();
            [Arg::Int(id.0), pid, host, expires, owner, at, timeout]
        },
    )?;
    Ok(())
}

/// Sets or clears an attempt's lease.
pub(in crate::journal) fn set_lease(
    conn: &Tx,
    id: AttemptId,
    lease: Option<&Lease>,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET lease_owner_pid = ?2, lease_owner_host = ?3, lease_expires_at = ?4,
             lease_owner_id = ?5
         WHERE id = ?1",
        &{
            let [pid, host, expires, owner] = lease_args(lease);
            [Arg::Int(id.0), pid, host, expires, owner]
        },
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Artifacts
// ---------------------------------------------------------------------------------------------

/// Returns an attempt's artifacts, in the order they were first seen.
pub(in crate::journal) fn artifacts_of(conn: &Tx, attempt: AttemptId) -> DbResult<Vec<Artifact>> {
    // Artifacts first seen together (one observation) keep the order they were inserted in:
    // SQLite's `rowid`; the PostgreSQL schema gives `artifacts` an identity column `id`.
    let sql = match conn.dialect() {
        Dialect::Sqlite => {
            "SELECT artifact_id, name, description, parts_json, metadata_json, last_chunk
             FROM artifacts WHERE attempt_id = ?1 ORDER BY created_at, rowid"
        }
        Dialect::Postgres => {
            "SELECT artifact_id, name, description, parts_json, metadata_json, last_chunk
             FROM artifacts WHERE attempt_id = ?1 ORDER BY created_at, id"
        }
    };
    let mut all = conn.rows(sql, args![attempt.0], artifact_from_row)?;
    conn.each(
        "SELECT artifact_id, parts_json FROM artifact_chunks WHERE attempt_id = ?1
         ORDER BY artifact_id, seq",
        args![attempt.0],
        &mut |r| {
            let artifact_id: String = r.get(0)?;
            if let Some(a) = all.iter_mut().find(|a| a.artifact_id == artifact_id) {
                extend_parts(&mut a.parts, json_opt(r, 1)?);
            }
            Ok(())
        },
    )?;
    Ok(all)
}

/// The bytes an artifact (`ar`) takes: its parts' JSON, its chunks joined in (each chunk adds
/// its array but for the brackets, plus a comma), and its head (id, name, description,
/// metadata), as `observe::artifact_len` counts them. Read from record headers: no part is
/// loaded.
const ARTIFACT_SIZE: &str = "octet_length(ar.parts_json)
     + COALESCE((SELECT SUM(octet_length(c.parts_json) - 1) FROM artifact_chunks c
                 WHERE c.attempt_id = ar.attempt_id AND c.artifact_id = ar.artifact_id), 0)
     + octet_length(ar.artifact_id) + COALESCE(octet_length(ar.name), 0)
     + COALESCE(octet_length(ar.description), 0) + COALESCE(octet_length(ar.metadata_json), 0)";

/// Returns the size in bytes of each artifact of an attempt (parts, chunks joined, and head):
/// no artifact is loaded.
pub(in crate::journal) fn artifact_sizes(
    conn: &Tx,
    attempt: AttemptId,
) -> DbResult<Vec<(String, u64)>> {
    conn.rows(
        &format!("SELECT artifact_id, {ARTIFACT_SIZE} FROM artifacts ar WHERE attempt_id = ?1"),
        args![attempt.0],
        |r| Ok((r.get(0)?, u64::try_from(r.get::<i64>(1)?).unwrap_or(0))),
    )
}

/// Inserts or replaces one artifact.
pub(in crate::journal) fn upsert_artifact(
    conn: &Tx,
    attempt: AttemptId,
    a: &Artifact,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "INSERT INTO artifacts (attempt_id, artifact_id, name, description, parts_json,
             metadata_json, last_chunk, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
         ON CONFLICT (attempt_id, artifact_id) DO UPDATE SET name = excluded.name,
             description = excluded.description, parts_json = excluded.parts_json,
             metadata_json = excluded.metadata_json, last_chunk = excluded.last_chunk,
             updated_at = excluded.updated_at",
        args![
            attempt.0,
            a.artifact_id,
            a.name,
            a.description,
            a.parts.to_string(),
            to_json(a.metadata.as_ref()),
            a.last_chunk,
            now
        ],
    )?;
    // The parts are whole again: the appended chunks are in them.
    conn.exec(
        "DELETE FROM artifact_chunks WHERE attempt_id = ?1 AND artifact_id = ?2",
        args![attempt.0, a.artifact_id],
    )?;
    Ok(())
}

/// Appends parts to a held artifact as one chunk (nothing when `added` is empty), and writes
/// its head (`a`'s name, description, metadata and `last_chunk`) only when it differs from
/// `held`: an append writes the chunk, not the artifact.
pub(in crate::journal) fn append_artifact_chunk(
    conn: &Tx,
    attempt: AttemptId,
    held: &Artifact,
    a: &Artifact,
    added: &[Value],
    now: i64,
) -> DbResult<()> {
    if !added.is_empty() {
        conn.exec(
            "INSERT INTO artifact_chunks (attempt_id, artifact_id, seq, parts_json, created_at)
             VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifact_chunks
                              WHERE attempt_id = ?1 AND artifact_id = ?2), ?3, ?4)",
            args![
                attempt.0,
                a.artifact_id,
                Value::Array(added.to_vec()).to_string(),
                now
            ],
        )?;
    }
    if (&a.name, &a.description, &a.metadata, a.last_chunk)
        != (
            &held.name,
            &held.description,
            &held.metadata,
            held.last_chunk,
        )
    {
        conn.exec(
            "UPDATE artifacts SET name = ?3, description = ?4, metadata_json = ?5,
                 last_chunk = ?6, updated_at = ?7
             WHERE attempt_id = ?1 AND artifact_id = ?2",
            args![
                attempt.0,
                a.artifact_id,
                a.name,
                a.description,
                to_json(a.metadata.as_ref()),
                a.last_chunk,
                now
            ],
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/// An event to append.
pub(in crate::journal) struct NewEvent<'a> {
    pub(in crate::journal) at: i64,
    pub(in crate::journal) workflow: Option<i64>,
    pub(in crate::journal) step: Option<StepId>,
    pub(in crate::journal) attempt: Option<AttemptId>,
    pub(in crate::journal) kind: &'a str,
    pub(in crate::journal) from: Option<&'a str>,
    pub(in crate::journal) to: Option<&'a str>,
    pub(in crate::journal) detail: Option<&'a Value>,
}

/// Appends an event; the workflow defaults to the step's. Returns its id.
pub(in crate::journal) fn insert_event(conn: &Tx, e: &NewEvent<'_>) -> DbResult<i64> {
    conn.row(
        "INSERT INTO events (at, workflow_id, step_id, attempt_id, kind, from_state, to_state,
             detail_json)
         VALUES (?1, COALESCE(?2, (SELECT workflow_id FROM steps WHERE id = ?3)), ?3, ?4, ?5,
             ?6, ?7, ?8)
         RETURNING id",
        args![
            e.at,
            e.workflow,
            e.step.map(|s| s.0),
            e.attempt.map(|a| a.0),
            e.kind,
            e.from,
            e.to,
            to_json(e.detail),
        ],
        |r| r.get(0),
    )
}

/// Returns a step's events (its attempts' too), oldest first.
pub(in crate::journal) fn events_of_step(conn: &Tx, step: StepId) -> DbResult<Vec<Event>> {
    conn.rows(
        "SELECT e.id, e.at, w.name, s.name, a.number, e.kind, e.from_state, e.to_state,
             e.detail_json
         FROM events e
         LEFT JOIN workflows w ON w.id = e.workflow_id
         LEFT JOIN steps s ON s.id = e.step_id
         LEFT JOIN attempts a ON a.id = e.attempt_id
         WHERE e.step_id = ?1
         ORDER BY e.id",
        args![step.0],
        |r| {
            Ok(Event {
                id: r.get(0)?,
                at: time(r.get(1)?),
                workflow: r.get(2)?,
                step: r.get(3)?,
                attempt: r.get(4)?,
                kind: r.get(5)?,
                from: r.get(6)?,
                to: r.get(7)?,
                detail: json_opt(r, 8)?,
            })
        },
    )
}

/// Returns the number of events (for tests and measurements).
pub(in crate::journal) fn event_count(conn: &Tx) -> DbResult<i64> {
    conn.row("SELECT count(*) FROM events", args![], |r| r.get(0))
}

// ---------------------------------------------------------------------------------------------
// Attempt rows: inspect and the passes
// ---------------------------------------------------------------------------------------------

const ROW_FROM: &str = "FROM attempts a
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id
     LEFT JOIN agents ag ON ag.id = a.agent_id
     LEFT JOIN attempts prev ON prev.id = a.previous_attempt_id";

const IS_LATEST: &str =
    "(a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id))";

/// The SQL twin of `AttemptRow::remedy`: the latest attempt of an unresolved step, outside a
/// COMPENSATED workflow, that needs a human. Keep the two in step (a test compares them).
pub(in crate::journal) const PENDING_SQL: &str =
    "(s.resolution IS NULL AND w.state <> 'COMPENSATED'
     AND (a.state IN ('INPUT_REQUIRED', 'AUTH_REQUIRED', 'UNCERTAIN', 'REFUSED', 'LOST')
          OR (a.state IN ('FAILED', 'REJECTED')
              AND (s.agent_url IS NOT NULL OR a.number >= s.max_attempts))
          OR (a.state = 'CANCELED' AND a.cancel_requested_at IS NULL)
          OR a.effect IN ('absent', 'unknown', 'compensation-failed')
          OR EXISTS (SELECT 1 FROM events fe
                     WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good')
          OR (a.state = 'INTENT'
              AND (SELECT le.kind FROM events le WHERE le.attempt_id = a.id
                     AND le.kind NOT IN ('in-flight', 'dedup-trusted', 'duplicate-task', 'push-disagrees')
                   ORDER BY le.id DESC LIMIT 1) = 'needs-human')))";

/// The part of [`PENDING_SQL`] that reads the attempt row alone, widened to what an index can
/// hold (any FAILED or REJECTED attempt): word for word the WHERE clause of the partial index
/// `attempts_needing_human` (migration 0003), since SQLite uses a partial index only for a query
/// that repeats its WHERE clause. A test holds the two together. `=` and `OR` rather than
/// `IN (…)`: SQLite evaluates the index's clause on every UPDATE of these columns, and an `IN`
/// list of more than two values builds a temporary b-tree each time.
pub(in crate::journal) const PENDING_ATTEMPT_SQL: &str = "state = 'INPUT_REQUIRED' \
     OR state = 'AUTH_REQUIRED' OR state = 'UNCERTAIN' OR state = 'REFUSED' OR state = 'LOST' \
     OR state = 'FAILED' OR state = 'REJECTED' \
     OR (state = 'CANCELED' AND cancel_requested_at IS NULL) \
     OR effect = 'absent' OR effect = 'unknown' OR effect = 'compensation-failed'";

/// The rows `inspect --pending` starts from: every attempt [`PENDING_SQL`] can hold true for,
/// found through three small partial indexes (migrations 0003 and 0014) rather than by reading
/// every attempt. [`PENDING_SQL`] then decides on these rows only.
fn pending_from() -> String {
    format!(
        "WITH pending_candidates (id) AS (
             SELECT id FROM attempts WHERE {PENDING_ATTEMPT_SQL}
             UNION
             SELECT attempt_id FROM events WHERE kind = 'failed-for-good'
             UNION
             SELECT attempt_id FROM events WHERE kind = 'needs-human')"
    )
}

/// The pending candidates with their step and workflow (`CROSS JOIN` keeps the candidates the
/// outer loop): what the pending count reads.
const PENDING_FROM: &str = "FROM pending_candidates pc
     CROSS JOIN attempts a ON a.id = pc.id
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id";

/// [`ROW_FROM`] starting from the pending candidates: what the pending page reads.
const PENDING_ROW_FROM: &str = "FROM pending_candidates pc
     CROSS JOIN attempts a ON a.id = pc.id
     JOIN steps s ON s.id = a.step_id
     JOIN workflows w ON w.id = s.workflow_id
     LEFT JOIN agents ag ON ag.id = a.agent_id
     LEFT JOIN attempts prev ON prev.id = a.previous_attempt_id";

fn row_from(r: &Row<'_>) -> DbResult<AttemptRow> {
    let attempt = attempt_from_row(r)?;
    let o = ATTEMPT_WIDTH;
    Ok(AttemptRow {
        attempt,
        step: StepName::from_parts(r.get::<String>(o)?, r.get::<String>(o + 1)?),
        binding: binding_from(r.get(o + 2)?, r.get(o + 3)?, r.get(o + 4)?)?,
        max_attempts: r.get(o + 5)?,
        resolution: parse_opt::<Resolution>(r, o + 6)?,
        workflow_state: parse_col(r, o + 7)?,
        previous_task_id: r.get(o + 8)?,
        is_latest: r.get(o + 9)?,
        artifact_count: r.get(o + 10)?,
        failed_for_good: r.get(o + 11)?,
        allow_cross_origin: r.get(o + 12)?,
        needs_human: r
            .get::<Option<String>>(o + 13)?
            .map(|json| NeedsHuman::from_detail(&json)),
    })
}

fn row_select(d: Dialect) -> String {
    row_select_with(d, "")
}

/// [`row_select`] with `extra` columns after the row's own (`", s.seq"`).
fn row_select_with(d: Dialect, extra: &str) -> String {
    row_select_from(d, extra, ROW_FROM)
}

/// The reason of the latest `failed-for-good` event of attempt `a` (`''` when it has none).
fn failed_for_good_reason(d: Dialect) -> String {
    format!(
        "(SELECT COALESCE({}, '')
                FROM events fe WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good'
                ORDER BY fe.id DESC LIMIT 1)",
        json_member(d, "fe.detail_json", "reason")
    )
}

/// The detail of the latest event of attempt `a` (notes aside: [`Note`](crate::journal::Note))
/// if it is a `needs-human` one and the attempt is still `INTENT` (NULL otherwise): why an
/// attempt still `INTENT` needs a human. [`PENDING_SQL`] reads the same latest event.
pub(in crate::journal) const NEEDS_HUMAN_DETAIL: &str = "CASE WHEN a.state = 'INTENT' THEN
         (SELECT CASE WHEN le.kind = 'needs-human' THEN le.detail_json END
            FROM events le WHERE le.attempt_id = a.id
              AND le.kind NOT IN ('in-flight', 'dedup-trusted', 'duplicate-task', 'push-disagrees')
            ORDER BY le.id DESC LIMIT 1) END";

/// [`row_select_with`] over `from` ([`ROW_FROM`] or [`PENDING_ROW_FROM`]).
fn row_select_from(d: Dialect, extra: &str, from: &str) -> String {
    format!(
        "SELECT {ATTEMPT_COLUMNS}, w.name, s.name, s.agent_url, s.skill, s.command,
             s.max_attempts, s.resolution, w.state, prev.task_id,
             CASE WHEN {IS_LATEST} THEN 1 ELSE 0 END,
             (SELECT count(*) FROM artifacts ar WHERE ar.attempt_id = a.id),
             {},
             s.allow_cross_origin, {NEEDS_HUMAN_DETAIL}{extra}
         {from}",
        failed_for_good_reason(d)
    )
}

/// The pass rows' columns: [`row_select_with`]'s, but `is_latest` is the constant 1 (the pass
/// WHERE keeps only latest attempts, so a second correlated `MAX()` per row would only repeat
/// it), `artifact_count` 0 (no decision of a pass reads it; `Pass::row_of` builds its rows
/// the same way) and `needs_human` NULL (a pass tries an `INTENT` attempt again, and says what
/// it needs from that try). Three index searches fewer per row (docs/performance.md).
fn pass_select(d: Dialect) -> String {
    format!(
        "SELECT {ATTEMPT_COLUMNS}, w.name, s.name, s.agent_url, s.skill, s.command,
             s.max_attempts, s.resolution, w.state, prev.task_id, 1, 0,
             {},
             s.allow_cross_origin, CAST(NULL AS TEXT), s.seq
         {ROW_FROM}",
        failed_for_good_reason(d)
    )
}

/// The WHERE clause of inspect with its parameters (?1 workflow, ?2 step, ?3 states as a
/// JSON array or NULL), and the filters ?4 agent (card URL or NULL), ?5 updated at or after
/// (unix ms or NULL), ?6 unresolved steps only (0 or 1) and ?7 updated at or before (unix ms
/// or NULL). ?8 is the page's LIMIT, last so that the count takes ?1 to ?7 alone (PostgreSQL
/// types every parameter up to the highest).
/// A parameter tested for NULL is cast: PostgreSQL cannot type `?N IS NULL` by itself.
fn inspect_where(d: Dialect) -> String {
    format!(
        "WHERE (CAST(?1 AS TEXT) IS NULL OR w.name = ?1)
       AND (CAST(?2 AS TEXT) IS NULL OR s.name = ?2)
       AND (CAST(?3 AS TEXT) IS NULL OR a.state IN ({}))
       AND (CAST(?4 AS TEXT) IS NULL
            OR a.agent_id = (SELECT id FROM agents WHERE card_url = ?4))
       AND (CAST(?5 AS BIGINT) IS NULL OR a.updated_at >= ?5)
       AND (?6 = 0 OR s.resolution IS NULL)
       AND (CAST(?7 AS BIGINT) IS NULL OR a.updated_at <= ?7)",
        json_items(d, "?3", false)
    )
}

/// The two statements of `inspect` (the total count, then the page) and their parameters.
struct InspectSql {
    count: String,
    /// Whether `count` takes the filter's parameters (an unfiltered count takes none).
    count_filtered: bool,
    page: String,
    workflow: Option<String>,
    step: Option<String>,
    states: Option<String>,
    limit: i64,
    agent: Option<String>,
    since: Option<i64>,
    unresolved: bool,
    until: Option<i64>,
}

impl InspectSql {
    /// The parameters of the page, ?1 to ?8; the count takes ?1 to ?7 (all but the LIMIT).
    fn params(&self) -> [Arg<'_>; 8] {
        use super::ToArg;
        [
            self.workflow.to_arg(),
            self.step.to_arg(),
            self.states.to_arg(),
            self.agent.to_arg(),
            self.since.to_arg(),
            self.unresolved.to_arg(),
            self.until.to_arg(),
            self.limit.to_arg(),
        ]
    }

    /// The parameters of the count: the page's but the LIMIT; none when it is unfiltered.
    fn count_params<'a>(&self, params: &'a [Arg<'a>; 8]) -> &'a [Arg<'a>] {
        if self.count_filtered {
            &params[..7]
        } else {
            &[]
        }
    }
}

fn inspect_sql(d: Dialect, f: &InspectFilter) -> InspectSql {
    let inspect_where = inspect_where(d);
    let (workflow, step) = match &f.target {
        None => (None, None),
        Some(Target::Workflow(w)) => (Some(w.clone()), None),
        Some(Target::Step(s)) => (Some(s.workflow.clone()), Some(s.step.clone())),
    };
    let states = (!f.states.is_empty()).then(|| {
        Value::Array(
            f.states
                .iter()
                .map(|s| Value::String(s.as_str().to_owned()))
                .collect(),
        )
        .to_string()
    });
    // Unfiltered, every attempt is a row (each has its step and workflow): SQLite counts the
    // smallest index of `attempts` instead of joining every row to its step and workflow.
    // Pending, both statements start from the pending candidates (a few rows of two partial
    // indexes) and sort what passes the predicate, instead of reading every attempt.
    let count_filtered = f.target.is_some()
        || states.is_some()
        || f.pending
        || f.agent.is_some()
        || f.since.is_some()
        || f.until.is_some()
        || f.unresolved;
    let (mut count, mut page) = if f.pending {
        let with = pending_from();
        let pending = format!("{inspect_where} AND {IS_LATEST} AND {PENDING_SQL}");
        (
            format!("{with} SELECT count(*) {PENDING_FROM} {pending}"),
            format!(
                "{with} {} {pending} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select_from(d, "", PENDING_ROW_FROM)
            ),
        )
    } else if count_filtered {
        (
            format!("SELECT count(*) {ROW_FROM} {inspect_where}"),
            format!(
                "{} {inspect_where} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select(d)
            ),
        )
    } else {
        (
            "SELECT count(*) FROM attempts".to_owned(),
            format!(
                "{} {inspect_where} ORDER BY w.id, s.seq, a.number LIMIT ?8",
                row_select(d)
            ),
        )
    };
    if d == Dialect::Postgres {
        // `CROSS JOIN … ON` is SQLite's way to fix the join order; PostgreSQL plans its own.
        count = count.replace("CROSS JOIN", "JOIN");
        page = page.replace("CROSS JOIN", "JOIN");
    }
    InspectSql {
        count,
        count_filtered,
        page,
        workflow,
        step,
        states,
        // No limit is the largest (a negative LIMIT, SQLite's "none", is an error in
        // PostgreSQL).
        limit: f
            .limit
            .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX)),
        agent: f.agent.clone(),
        since: f.since.map(ms),
        unresolved: f.unresolved,
        until: f.until.map(ms),
    }
}

/// Returns inspect rows (ordered by workflow, delegation order, attempt) and the total count.
pub(in crate::journal) fn inspect(
    conn: &Tx,
    f: &InspectFilter,
) -> DbResult<(Vec<AttemptRow>, u64)> {
    let q = inspect_sql(conn.dialect(), f);
    let params = q.params();
    let total: i64 = conn.row(&q.count, q.count_params(&params), |r| r.get(0))?;
    let total = u64::try_from(total).unwrap_or_default();
    let rows = conn.rows(&q.page, &params, row_from)?;
    Ok((rows, total))
}

/// Returns each statement `inspect` runs for `f` with the store's plan for it, one line per
/// step (SQLite's `EXPLAIN QUERY PLAN` indented by depth, PostgreSQL's `EXPLAIN` as it is),
/// for `docs/performance.md` and the benchmarks.
pub(in crate::journal) fn explain_inspect(
    conn: &Tx,
    f: &InspectFilter,
) -> DbResult<Vec<(String, Vec<String>)>> {
    let d = conn.dialect();
    let q = inspect_sql(d, f);
    let params = q.params();
    let mut out = Vec::new();
    for (name, sql, args) in [
        ("count", &q.count, q.count_params(&params)),
        ("page", &q.page, &params[..]),
    ] {
        let lines = match d {
            Dialect::Sqlite => {
                let rows: Vec<(i64, i64, String)> =
                    conn.rows(&format!("EXPLAIN QUERY PLAN {sql}"), args, |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(3)?))
                    })?;
                let mut depth: HashMap<i64, usize> = HashMap::new();
                rows.into_iter()
                    .map(|(id, parent, detail)| {
                        let d = depth.get(&parent).map_or(0, |d| d + 1);
                        depth.insert(id, d);
                        format!("{}{detail}", "  ".repeat(d))
                    })
                    .collect()
            }
            Dialect::Postgres => conn.rows(&format!("EXPLAIN {sql}"), args, |r| r.get(0))?,
        };
        out.push((name.to_owned(), lines));
    }
    Ok(out)
}

/// Returns the latest attempt of every unresolved step that is not finished, optionally only
/// in some workflows, in delegation order.
pub(in crate::journal) fn unfinished(conn: &Tx, workflows: &[String]) -> DbResult<Vec<AttemptRow>> {
    let d = conn.dialect();
    conn.rows(
        &format!(
            "{} WHERE a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                     'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
               AND s.resolution IS NULL AND {IS_LATEST}
               AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
             ORDER BY s.seq, a.number",
            row_select(d),
            json_items(d, "?1", false)
        ),
        args![workflows_filter(workflows)],
        row_from,
    )
}

/// Returns every workflow (in creation order, at most `limit`) with its steps counted by the
/// state of their latest attempt, how many of those need a human ([`PENDING_SQL`]) and how many
/// the operator resolved, and the total count of workflows.
pub(in crate::journal) fn workflow_summaries(
    conn: &Tx,
    limit: Option<u64>,
) -> DbResult<(Vec<WorkflowSummary>, u64)> {
    let total: i64 = conn.row("SELECT count(*) FROM workflows", args![], |r| r.get(0))?;
    let limit = limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let heads = conn.rows(
        "SELECT id, name, state, created_at, updated_at FROM workflows ORDER BY id LIMIT ?1",
        args![limit],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
            ))
        },
    )?;
    let counts = format!(
        "SELECT a.state, count(*),
                CAST(sum(CASE WHEN {PENDING_SQL} THEN 1 ELSE 0 END) AS BIGINT),
                CAST(sum(CASE WHEN s.resolution IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT),
                max(a.updated_at)
           FROM steps s
           JOIN workflows w ON w.id = s.workflow_id
           JOIN attempts a ON a.step_id = s.id AND {IS_LATEST}
          WHERE s.workflow_id = ?1
          GROUP BY a.state ORDER BY a.state"
    );
    let mut out = Vec::with_capacity(heads.len());
    for (id, name, state, created, updated) in heads {
        let mut summary = WorkflowSummary {
            name,
            state: state.parse().map_err(|e| DbError::conversion(2, e))?,
            steps: BTreeMap::new(),
            needs_human: 0,
            resolved: 0,
            created_at: time(created),
            updated_at: time(updated),
        };
        let rows = conn.rows(&counts, args![id], |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<i64>(1)?,
                r.get::<i64>(2)?,
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
            ))
        })?;
        for (state, n, human, resolved, last) in rows {
            let n = u64::try_from(n).unwrap_or_default();
            summary.steps.insert(state, n);
            summary.needs_human += u64::try_from(human).unwrap_or_default();
            summary.resolved += u64::try_from(resolved).unwrap_or_default();
            summary.updated_at = summary.updated_at.max(time(last));
        }
        out.push(summary);
    }
    Ok((out, u64::try_from(total).unwrap_or_default()))
}

/// Returns whether a workflow exists.
pub(in crate::journal) fn workflow_exists(conn: &Tx, name: &str) -> DbResult<bool> {
    conn.row(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM workflows WHERE name = ?1) THEN 1 ELSE 0 END",
        args![name],
        |r| r.get(0),
    )
}

// ---------------------------------------------------------------------------------------------
// Pruning (`journal/prune.rs`)
// ---------------------------------------------------------------------------------------------

/// The events of ids `?1 <= id < ?2`, older than `?3` (unix ms), that `prune` deletes: status
/// refreshes (`observed`) recording no artifact and no question, never the newest event of their
/// attempt. An event whose details are not JSON is kept (on PostgreSQL, whose `jsonb` cast
/// fails on one, the journal writes none).
fn prunable(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => {
            "e.id >= ?1 AND e.id < ?2 AND e.kind IN ('observed', 'push') AND e.at < ?3
     AND e.attempt_id IS NOT NULL
     AND CASE WHEN json_valid(e.detail_json)
              THEN json_array_length(e.detail_json, '$.artifacts') = 0
                   AND json_type(e.detail_json, '$.question') = 'null'
              ELSE 0 END
     AND e.id < (SELECT max(x.id) FROM events x WHERE x.attempt_id = e.attempt_id)"
        }
        // `json_array_length` is 0 for a member that is not an array, NULL for none.
        Dialect::Postgres => {
            "e.id >= ?1 AND e.id < ?2 AND e.kind IN ('observed', 'push') AND e.at < ?3
     AND e.attempt_id IS NOT NULL
     AND CASE WHEN jsonb_typeof(CAST(e.detail_json AS jsonb) -> 'artifacts') = 'array'
              THEN jsonb_array_length(CAST(e.detail_json AS jsonb) -> 'artifacts') = 0
              ELSE (CAST(e.detail_json AS jsonb) -> 'artifacts') IS NOT NULL END
     AND jsonb_typeof(CAST(e.detail_json AS jsonb) -> 'question') = 'null'
     AND e.id < (SELECT max(x.id) FROM events x WHERE x.attempt_id = e.attempt_id)"
        }
    }
}

/// Returns the lowest and highest event id, if there is an event.
pub(in crate::journal) fn event_id_range(conn: &Tx) -> DbResult<Option<(i64, i64)>> {
    conn.row("SELECT min(id), max(id) FROM events", args![], |r| {
        Ok(match (r.get(0)?, r.get(1)?) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => None,
        })
    })
}

/// Counts the events [`prune_events`] would delete.
pub(in crate::journal) fn prunable_events(
    conn: &Tx,
    from: i64,
    to: i64,
    cutoff_ms: i64,
) -> DbResult<u64> {
    conn.row(
        &format!(
            "SELECT count(*) FROM events e WHERE {}",
            prunable(conn.dialect())
        ),
        args![from, to, cutoff_ms],
        |r| r.get::<i64>(0),
    )
    .map(|n| u64::try_from(n).unwrap_or_default())
}

/// Deletes the prunable events of ids `from..to` older than `cutoff_ms`; returns how many.
pub(in crate::journal) fn prune_events(
    conn: &Tx,
    from: i64,
    to: i64,
    cutoff_ms: i64,
) -> DbResult<u64> {
    conn.exec(
        &format!("DELETE FROM events AS e WHERE {}", prunable(conn.dialect())),
        args![from, to, cutoff_ms],
    )
}

// ---------------------------------------------------------------------------------------------
// Operator decisions and registry times (schema v2, `journal/operator.rs`)
// ---------------------------------------------------------------------------------------------

/// Records the operator's decision on one attempt.
pub(in crate::journal) fn set_attempt_resolution(
    conn: &Tx,
    id: AttemptId,
    resolution: Resolution,
    reason: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET resolution = ?2, resolution_reason = ?3, resolved_at = ?4,
             updated_at = ?4
         WHERE id = ?1",
        args![id.0, resolution.as_str(), reason, now],
    )?;
    Ok(())
}

/// Returns the decision recorded on attempt `id` and whether its endpoint was ever journaled
/// for a send (`send_started_at`, stamped before every send): `resolve --undo` reads both.
pub(in crate::journal) fn attempt_decision(
    conn: &Tx,
    id: AttemptId,
) -> DbResult<(Option<Resolution>, bool)> {
    conn.row(
        "SELECT resolution, send_started_at IS NOT NULL FROM attempts WHERE id = ?1",
        args![id.0],
        |r| Ok((parse_opt::<Resolution>(r, 0)?, r.get(1)?)),
    )
}

/// Clears the decision recorded on attempt `id` (`resolve --undo`).
pub(in crate::journal) fn clear_attempt_resolution(
    conn: &Tx,
    id: AttemptId,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE attempts SET resolution = NULL, resolution_reason = NULL, resolved_at = NULL,
             updated_at = ?2
         WHERE id = ?1",
        args![id.0, now],
    )?;
    Ok(())
}

/// Deletes attempt `id` and its events: only for an `INTENT` attempt a `retry` journaled and
/// nothing ever sent (`resolve --undo`); it has no task, reply or artifact.
pub(in crate::journal) fn delete_unsent_attempt(conn: &Tx, id: AttemptId) -> DbResult<()> {
    super::push::delete_config_of(conn, id)?;
    conn.exec("DELETE FROM events WHERE attempt_id = ?1", args![id.0])?;
    conn.exec("DELETE FROM alerts WHERE attempt_id = ?1", args![id.0])?;
    conn.exec(
        "DELETE FROM attempts WHERE id = ?1 AND state = 'INTENT' AND task_id IS NULL
             AND send_started_at IS NULL",
        args![id.0],
    )?;
    Ok(())
}

/// Returns every `COMPENSATING` workflow, in creation order, and whether one of its attempts'
/// compensations failed (`compensation-failed`).
pub(in crate::journal) fn compensating_workflows(conn: &Tx) -> DbResult<Vec<(String, bool)>> {
    conn.rows(
        "SELECT w.name, EXISTS (SELECT 1 FROM steps s JOIN attempts a ON a.step_id = s.id
                                WHERE s.workflow_id = w.id AND a.effect = 'compensation-failed')
         FROM workflows w WHERE w.state = 'COMPENSATING' ORDER BY w.id",
        args![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Returns the names of every workflow not yet `COMPENSATED`, in creation order (the
/// workflows a pass over all of them locks).
pub(in crate::journal) fn open_workflow_names(conn: &Tx) -> DbResult<Vec<String>> {
    conn.rows(
        "SELECT name FROM workflows WHERE state <> 'COMPENSATED' ORDER BY id",
        args![],
        |r| r.get(0),
    )
}

/// Returns how many latest attempts are in each state (`status`).
pub(in crate::journal) fn latest_state_counts(conn: &Tx) -> DbResult<Vec<(AttemptState, u64)>> {
    let sql =
        format!("SELECT a.state, COUNT(*) FROM attempts a WHERE {IS_LATEST} GROUP BY a.state");
    conn.rows(&sql, args![], |r| {
        Ok((
            parse_col::<AttemptState>(r, 0)?,
            r.get::<i64>(1)?.unsigned_abs(),
        ))
    })
}

/// A step, an attempt number, its state and when it was journaled.
pub(in crate::journal) type Unfinished = (StepName, u32, AttemptState, DateTime<Utc>);

/// Returns the oldest latest attempt that is not finished, of a step without a decision
/// (`status`): its name, number, state and when it was journaled.
pub(in crate::journal) fn oldest_unfinished(conn: &Tx) -> DbResult<Option<Unfinished>> {
    let sql = format!(
        "SELECT w.name, s.name, a.number, a.state, a.created_at
         FROM attempts a JOIN steps s ON s.id = a.step_id JOIN workflows w ON w.id = s.workflow_id
         WHERE {IS_LATEST} AND s.resolution IS NULL AND w.state <> 'COMPENSATED'
           AND a.state NOT IN ('COMPLETED', 'FAILED', 'CANCELED', 'REJECTED', 'REPLIED',
                               'REFUSED', 'LOST')
         ORDER BY a.created_at, a.id LIMIT 1"
    );
    conn.opt_row(&sql, args![], |r| {
        Ok((
            StepName::from_parts(r.get::<String>(0)?, r.get::<String>(1)?),
            r.get(2)?,
            parse_col::<AttemptState>(r, 3)?,
            time(r.get(4)?),
        ))
    })
}

/// The columns of an agent's health, in [`health_from`]'s order.
const HEALTH_COLUMNS: &str = "g.card_url, g.fetched_at, g.last_success_at, g.last_failure_at, \
     g.failing_since, g.registered";

/// Whether agent `g` has an unfinished latest attempt of a step without a decision, outside a
/// COMPENSATED workflow: work waits on it.
const HAS_UNFINISHED: &str = "EXISTS (SELECT 1 FROM attempts a
         JOIN steps s ON s.id = a.step_id JOIN workflows w ON w.id = s.workflow_id
         WHERE a.agent_id = g.id
           AND a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                           'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
           AND s.resolution IS NULL AND w.state <> 'COMPENSATED'
           AND (a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id)))";

fn health_from(r: &Row<'_>) -> DbResult<AgentHealth> {
    let at =
        |i: usize| -> DbResult<Option<DateTime<Utc>>> { Ok(r.get::<Option<i64>>(i)?.map(time)) };
    Ok(AgentHealth {
        card_url: r.get(0)?,
        fetched_at: at(1)?,
        last_success_at: at(2)?,
        last_failure_at: at(3)?,
        failing_since: at(4)?,
        registered: r.get::<Option<i64>>(5)?.is_some(),
        waited_on: r.get::<i64>(6)? != 0,
    })
}

/// Returns every agent's health (`status`, the metrics): failing agents first, then by when
/// each was last reached (the later of its card's fetch and its last answer), newest first.
pub(in crate::journal) fn agents_health(conn: &Tx) -> DbResult<Vec<AgentHealth>> {
    conn.rows(
        &format!(
            "SELECT {HEALTH_COLUMNS}, CASE WHEN {HAS_UNFINISHED} THEN 1 ELSE 0 END
             FROM agents g
             ORDER BY CASE WHEN g.failing_since IS NULL THEN 1 ELSE 0 END,
                 CASE WHEN COALESCE(g.fetched_at, 0) >= COALESCE(g.last_success_at, 0)
                      THEN COALESCE(g.fetched_at, 0) ELSE g.last_success_at END DESC,
                 g.card_url"
        ),
        args![],
        health_from,
    )
}

/// Returns one agent's health, `None` for an agent the journal does not know.
pub(in crate::journal) fn agent_health(conn: &Tx, card_url: &str) -> DbResult<Option<AgentHealth>> {
    conn.opt_row(
        &format!(
            "SELECT {HEALTH_COLUMNS}, CASE WHEN {HAS_UNFINISHED} THEN 1 ELSE 0 END
             FROM agents g WHERE g.card_url = ?1"
        ),
        args![card_url],
        health_from,
    )
}

/// Writes an agent's health columns; returns whether its row exists.
pub(in crate::journal) fn set_agent_health(conn: &Tx, h: &AgentHealth) -> DbResult<bool> {
    let ms_of = |t: Option<DateTime<Utc>>| t.map(ms);
    Ok(conn.exec(
        "UPDATE agents SET last_success_at = ?2, last_failure_at = ?3, failing_since = ?4
         WHERE card_url = ?1",
        args![
            h.card_url,
            ms_of(h.last_success_at),
            ms_of(h.last_failure_at),
            ms_of(h.failing_since)
        ],
    )? > 0)
}

/// Returns the card URL of the agent a request URL belongs to: the agent whose card URL it is,
/// else one whose chosen interface it is.
pub(in crate::journal) fn card_url_of(conn: &Tx, url: &str) -> DbResult<Option<String>> {
    conn.opt_row(
        "SELECT card_url FROM agents WHERE card_url = ?1 OR interface_url = ?1
         ORDER BY CASE WHEN card_url = ?1 THEN 0 ELSE 1 END, id LIMIT 1",
        args![url],
        |r| r.get(0),
    )
}

/// The attempts `status --stale` weighs: the latest attempt of each step without a decision,
/// outside a COMPENSATED workflow, unfinished and not needing a human ([`PENDING_SQL`]), each
/// with when it was last heard of: the later of its last state change or observed change
/// (`state`, `observed` and `artifact` events; its creation before any) and its agent's last
/// answer. A failed read moves neither.
fn heard_sql() -> String {
    format!(
        "SELECT t.wn, t.sn, t.number, t.state, t.card_url,
             CASE WHEN COALESCE(t.ok, 0) > t.changed THEN t.ok ELSE t.changed END AS heard
         FROM (SELECT w.name AS wn, s.name AS sn, a.number AS number, a.state AS state,
                   ag.card_url AS card_url, ag.last_success_at AS ok,
                   COALESCE((SELECT MAX(e.at) FROM events e WHERE e.attempt_id = a.id
                               AND e.kind IN ('state', 'observed', 'artifact')),
                            a.created_at) AS changed
               FROM attempts a
               JOIN steps s ON s.id = a.step_id
               JOIN workflows w ON w.id = s.workflow_id
               LEFT JOIN agents ag ON ag.id = a.agent_id
               WHERE a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                                 'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN')
                 AND {IS_LATEST}
                 -- Not `NOT`: the pending test is NULL, not false, for an attempt without an
                 -- effect.
                 AND CASE WHEN {PENDING_SQL} THEN 0 ELSE 1 END = 1) t"
    )
}

/// Returns the unfinished attempts not needing a human last heard of before `before` (unix
/// ms), the longest unheard first, at most `limit`, and how many there are in all.
pub(in crate::journal) fn unheard_attempts(
    conn: &Tx,
    before: i64,
    limit: u64,
) -> DbResult<(Vec<Unheard>, u64)> {
    let heard = heard_sql();
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = conn.rows(
        &format!(
            "SELECT h.wn, h.sn, h.number, h.state, h.card_url, h.heard FROM ({heard}) h
             WHERE h.heard < ?1 ORDER BY h.heard, h.wn, h.sn LIMIT ?2"
        ),
        args![before, limit],
        |r| {
            Ok(Unheard {
                step: StepName::from_parts(r.get::<String>(0)?, r.get::<String>(1)?),
                attempt: r.get(2)?,
                state: parse_col::<AttemptState>(r, 3)?,
                agent: r.get(4)?,
                heard: time(r.get(5)?),
            })
        },
    )?;
    let total: i64 = conn.row(
        &format!("SELECT count(*) FROM ({heard}) h WHERE h.heard < ?1"),
        args![before],
        |r| r.get(0),
    )?;
    Ok((rows, u64::try_from(total).unwrap_or(0)))
}

/// Returns the agents failing since before `before` (unix ms) that work waits on (an
/// unfinished attempt), the longest failing first.
pub(in crate::journal) fn failing_agents(
    conn: &Tx,
    before: i64,
) -> DbResult<Vec<(String, DateTime<Utc>)>> {
    conn.rows(
        &format!(
            "SELECT g.card_url, g.failing_since FROM agents g
             WHERE g.failing_since IS NOT NULL AND g.failing_since < ?1 AND {HAS_UNFINISHED}
             ORDER BY g.failing_since, g.card_url"
        ),
        args![before],
        |r| Ok((r.get(0)?, time(r.get(1)?))),
    )
}

/// Returns what `reconcile --alert new` recorded for attempt `id`: the state and status
/// timestamp (`''` for none) it reported, and when.
pub(in crate::journal) fn alert_of(
    conn: &Tx,
    id: AttemptId,
) -> DbResult<Option<(String, String, DateTime<Utc>)>> {
    conn.opt_row(
        "SELECT state, status_timestamp, reported_at FROM alerts WHERE attempt_id = ?1",
        args![id.0],
        |r| Ok((r.get(0)?, r.get(1)?, time(r.get(2)?))),
    )
}

/// Records that attempt `id` was reported in this state and status timestamp, at `now`.
pub(in crate::journal) fn upsert_alert(
    conn: &Tx,
    id: AttemptId,
    state: &str,
    status_timestamp: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "INSERT INTO alerts (attempt_id, state, status_timestamp, reported_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (attempt_id) DO UPDATE SET state = excluded.state,
             status_timestamp = excluded.status_timestamp, reported_at = excluded.reported_at",
        args![id.0, state, status_timestamp, now],
    )?;
    Ok(())
}

/// Returns when a step was resolved (its standing decision's time), if it is.
pub(in crate::journal) fn resolved_at(conn: &Tx, step: StepId) -> DbResult<Option<DateTime<Utc>>> {
    Ok(conn
        .opt_row(
            "SELECT resolved_at FROM steps WHERE id = ?1 AND resolution IS NOT NULL",
            args![step.0],
            |r| r.get::<Option<i64>>(0),
        )?
        .flatten()
        .map(time))
}

/// Returns whether `table` has `column`: a journal opened read-only may predate schema v2 (or be
/// an artificial "newer" one), and reads of v2 columns then find nothing rather than fail.
fn has_column(conn: &Tx, table: &str, column: &str) -> DbResult<bool> {
    let sql = match conn.dialect() {
        Dialect::Sqlite => {
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)
                 THEN 1 ELSE 0 END"
        }
        Dialect::Postgres => {
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = ?1
                   AND column_name = ?2) THEN 1 ELSE 0 END"
        }
    };
    conn.row(sql, args![table, column], |r| r.get(0))
}

/// Returns the decisions recorded on the attempts `filter` (a WHERE condition on `a`, `s`
/// and `w`, with `args`) keeps, in delegation order.
fn resolutions_where(
    conn: &Tx,
    filter: &str,
    args: &[Arg<'_>],
) -> DbResult<Vec<AttemptResolution>> {
    conn.rows(
        &format!(
            "SELECT a.id, a.resolution, a.resolution_reason, a.resolved_at,
                 CASE WHEN a.resolution = 'resend' AND a.state = 'INTENT'
                     AND s.resolution = 'resend' AND {IS_LATEST} THEN 1 ELSE 0 END
             FROM attempts a
             JOIN steps s ON s.id = a.step_id
             JOIN workflows w ON w.id = s.workflow_id
             WHERE {filter} AND a.resolution IS NOT NULL
             ORDER BY w.id, s.seq, a.number"
        ),
        args,
        |r| {
            Ok(AttemptResolution {
                attempt: AttemptId(r.get(0)?),
                resolution: parse_col::<Resolution>(r, 1)?,
                reason: r.get::<Option<String>>(2)?.unwrap_or_default(),
                resolved_at: time(r.get(3)?),
                resend_pending: r.get(4)?,
            })
        },
    )
}

/// Returns the decisions recorded on attempts, optionally of one workflow or step, in
/// delegation order.
pub(in crate::journal) fn attempt_resolutions(
    conn: &Tx,
    target: Option<&Target>,
) -> DbResult<Vec<AttemptResolution>> {
    if !has_column(conn, "attempts", "resolution")? {
        return Ok(Vec::new());
    }
    let (workflow, step) = match target {
        None => (None, None),
        Some(Target::Workflow(w)) => (Some(w.as_str()), None),
        Some(Target::Step(s)) => (Some(s.workflow.as_str()), Some(s.step.as_str())),
    };
    resolutions_where(
        conn,
        "(CAST(?1 AS TEXT) IS NULL OR w.name = ?1) AND (CAST(?2 AS TEXT) IS NULL OR s.name = ?2)",
        args![workflow, step],
    )
}

/// Returns the decisions recorded on the given attempts, in delegation order: an index lookup
/// per attempt, where [`attempt_resolutions`] of a whole journal reads every attempt.
pub(in crate::journal) fn resolutions_of(
    conn: &Tx,
    attempts: &[AttemptId],
) -> DbResult<Vec<AttemptResolution>> {
    if attempts.is_empty() || !has_column(conn, "attempts", "resolution")? {
        return Ok(Vec::new());
    }
    let ids = Value::Array(attempts.iter().map(|a| Value::from(a.0)).collect()).to_string();
    let filter = format!("a.id IN ({})", json_items(conn.dialect(), "?1", true));
    resolutions_where(conn, &filter, args![ids])
}

/// Returns when a registered agent was put in the registry.
pub(in crate::journal) fn registered_at(
    conn: &Tx,
    card_url: &str,
) -> DbResult<Option<DateTime<Utc>>> {
    if !has_column(conn, "agents", "registered_at")? {
        return Ok(None);
    }
    Ok(conn
        .opt_row(
            "SELECT registered_at FROM agents WHERE card_url = ?1 AND registered IS NOT NULL",
            args![card_url],
            |r| r.get::<Option<i64>>(0),
        )?
        .flatten()
        .map(time))
}

/// Returns the latest attempt of every step a reconcile pass visits, in delegation order.
///
/// That is every delegated step (not a compensation or command step) outside a COMPENSATED
/// workflow, not resolved `done`/`abandoned`, whose latest attempt is unfinished, terminal but
/// not yet decided (FAILED, REJECTED, CANCELED, LOST, REFUSED), completed with a declared effect
/// not yet claimed, or has an effect a human must look at. A step resolved `resend` is visited:
/// its `INTENT` attempt is sent once without a look (`Journal::take_resend_approval`).
pub(in crate::journal) fn pass_rows(conn: &Tx, workflows: &[String]) -> DbResult<Vec<AttemptRow>> {
    let all = PassWindow {
        workflows: workflows_filter(workflows),
        skip: None,
        after: i64::MIN,
        through: i64::MAX,
    };
    Ok(pass_page(conn, &all, i64::MAX)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// What a pass visits (see [`pass_rows`]), with the parameters ?1 (workflows as a JSON array or
/// NULL), ?2 (attempt ids visited otherwise, a JSON array or NULL) and ?3, ?4 (the steps' `seq`
/// window, `?3 < seq <= ?4`).
fn pass_where(d: Dialect) -> String {
    format!(
        "WHERE s.seq > ?3 AND s.seq <= ?4 AND {IS_LATEST}
       AND w.state <> 'COMPENSATED'
       AND s.compensates_step_id IS NULL AND s.command IS NULL
       AND (s.resolution IS NULL OR s.resolution = 'resend')
       AND (a.state NOT IN ('COMPLETED', 'REPLIED')
            OR (a.state = 'COMPLETED' AND s.effect_json IS NOT NULL
                AND (a.effect IS NULL OR a.effect = 'claimed'))
            OR (a.state = 'COMPLETED'
                AND EXISTS (SELECT 1 FROM events fe
                            WHERE fe.attempt_id = a.id AND fe.kind = 'failed-for-good'))
            OR a.effect IN ('absent', 'unknown', 'compensation-failed'))
       AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
       AND (CAST(?2 AS TEXT) IS NULL OR a.id NOT IN ({}))",
        json_items(d, "?1", false),
        json_items(d, "?2", true)
    )
}

/// A window of a pass's rows: the workflows and attempts it covers and its `seq` bounds.
#[derive(Clone)]
pub(in crate::journal) struct PassWindow {
    /// The workflows (a JSON array), or all.
    pub(in crate::journal) workflows: Option<String>,
    /// Attempt ids left out (a JSON array), or none.
    pub(in crate::journal) skip: Option<String>,
    /// Rows of steps after this delegation position…
    pub(in crate::journal) after: i64,
    /// …up to and including this one.
    pub(in crate::journal) through: i64,
}

/// Returns a workflow filter as the JSON array the pass queries take (NULL for all).
pub(in crate::journal) fn workflows_filter(workflows: &[String]) -> Option<String> {
    (!workflows.is_empty())
        .then(|| Value::Array(workflows.iter().cloned().map(Value::String).collect()).to_string())
}

/// Returns the last delegation position of the journal (0 when it has no step).
pub(in crate::journal) fn max_seq(conn: &Tx) -> DbResult<i64> {
    conn.row("SELECT COALESCE(max(seq), 0) FROM steps", args![], |r| {
        r.get(0)
    })
}

/// Counts the pass rows in a window.
pub(in crate::journal) fn pass_count(conn: &Tx, w: &PassWindow) -> DbResult<u64> {
    let n: i64 = conn.row(
        &format!("SELECT count(*) {ROW_FROM} {}", pass_where(conn.dialect())),
        args![w.workflows, w.skip, w.after, w.through],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or_default())
}

/// Returns at most `limit` pass rows of a window (all for a negative limit) in delegation order,
/// each with its step's `seq`.
///
/// A negative limit is SQLite's "none", an error in PostgreSQL: it becomes the largest.
pub(in crate::journal) fn pass_page(
    conn: &Tx,
    w: &PassWindow,
    limit: i64,
) -> DbResult<Vec<(i64, AttemptRow)>> {
    let d = conn.dialect();
    let limit = if limit < 0 { i64::MAX } else { limit };
    conn.rows(
        &format!(
            "{} {} ORDER BY s.seq, a.number LIMIT ?5",
            pass_select(d),
            pass_where(d)
        ),
        args![w.workflows, w.skip, w.after, w.through, limit],
        |r| Ok((r.get(ATTEMPT_WIDTH + 14)?, row_from(r)?)),
    )
}

/// Returns the reason of an attempt's `failed-for-good` event, if it has one.
pub(in crate::journal) fn failed_for_good(conn: &Tx, id: AttemptId) -> DbResult<Option<String>> {
    conn.opt_row(
        &format!(
            "SELECT COALESCE({}, '') FROM events
             WHERE attempt_id = ?1 AND kind = 'failed-for-good' ORDER BY id DESC LIMIT 1",
            json_member(conn.dialect(), "detail_json", "reason")
        ),
        args![id.0],
        |r| r.get(0),
    )
}

// ---------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------

const REPLY_COLUMNS: &str = "r.id, r.attempt_id, r.message_id, r.text, r.answers, r.state, r.error, r.created_at, \
     r.updated_at, r.data_json";

fn reply_from_row(r: &Row<'_>) -> DbResult<Reply> {
    Ok(Reply {
        id: ReplyId(r.get(0)?),
        attempt_id: AttemptId(r.get(1)?),
        message_id: r.get(2)?,
        text: r.get(3)?,
        answers: r.get(4)?,
        state: parse_col::<ReplyState>(r, 5)?,
        error: r.get(6)?,
        created_at: time(r.get(7)?),
        updated_at: time(r.get(8)?),
        data: r
            .get::<Option<String>>(9)?
            .and_then(|j| serde_json::from_str(&j).ok()),
    })
}

/// Inserts an `INTENT` reply; returns its id.
pub(in crate::journal) fn insert_reply(
    conn: &Tx,
    attempt: AttemptId,
    new: &NewReply,
    now: i64,
) -> DbResult<ReplyId> {
    conn.row(
        "INSERT INTO replies (attempt_id, message_id, text, answers, state, created_at, updated_at,
                              data_json)
         VALUES (?1, ?2, ?3, ?4, 'INTENT', ?5, ?5, ?6)
         RETURNING id",
        args![
            attempt.0,
            new.message_id,
            new.text,
            new.answers,
            now,
            new.data.as_ref().map(Value::to_string)
        ],
        |r| Ok(ReplyId(r.get(0)?)),
    )
}

/// Returns the answer of each attempt's latest reply (`{"text": …}` or `{"data": …}`), for
/// the attempts given.
pub(in crate::journal) fn last_answers(
    conn: &Tx,
    attempts: &[AttemptId],
) -> DbResult<Vec<(AttemptId, Value)>> {
    if attempts.is_empty() {
        return Ok(Vec::new());
    }
    let ids = Value::Array(attempts.iter().map(|a| Value::from(a.0)).collect()).to_string();
    let rows = conn.rows(
        &format!(
            "SELECT r.attempt_id, r.text, r.data_json FROM replies r
             WHERE r.attempt_id IN ({}) ORDER BY r.attempt_id, r.id",
            json_items(conn.dialect(), "?1", true)
        ),
        args![ids],
        |r| {
            let data: Option<String> = r.get(2)?;
            let data = data.and_then(|j| serde_json::from_str::<Value>(&j).ok());
            let text: String = r.get(1)?;
            Ok((
                AttemptId(r.get(0)?),
                super::super::model::answer_json(&text, data.as_ref()),
            ))
        },
    )?;
    // Oldest first: the last of each attempt wins.
    let mut last: Vec<(AttemptId, Value)> = Vec::new();
    for (id, answer) in rows {
        match last.last_mut() {
            Some((held, a)) if *held == id => *a = answer,
            _ => last.push((id, answer)),
        }
    }
    Ok(last)
}

/// Returns a reply by id.
pub(in crate::journal) fn reply_by_id(conn: &Tx, id: ReplyId) -> DbResult<Option<Reply>> {
    conn.opt_row(
        &format!("SELECT {REPLY_COLUMNS} FROM replies r WHERE r.id = ?1"),
        args![id.0],
        reply_from_row,
    )
}

/// Returns an attempt's replies, oldest first.
pub(in crate::journal) fn replies_of(conn: &Tx, attempt: AttemptId) -> DbResult<Vec<Reply>> {
    conn.rows(
        &format!("SELECT {REPLY_COLUMNS} FROM replies r WHERE r.attempt_id = ?1 ORDER BY r.id"),
        args![attempt.0],
        reply_from_row,
    )
}

/// Returns every reply still `INTENT` whose attempt is its step's latest, outside COMPENSATED
/// workflows, optionally only in some workflows, oldest first.
pub(in crate::journal) fn undelivered_replies(
    conn: &Tx,
    workflows: &[String],
) -> DbResult<Vec<Reply>> {
    conn.rows(
        &format!(
            "SELECT {REPLY_COLUMNS} FROM replies r
             JOIN attempts a ON a.id = r.attempt_id
             JOIN steps s ON s.id = a.step_id
             JOIN workflows w ON w.id = s.workflow_id
             WHERE r.state = 'INTENT' AND {IS_LATEST} AND w.state <> 'COMPENSATED'
               AND (CAST(?1 AS TEXT) IS NULL OR w.name IN ({}))
             ORDER BY r.id",
            json_items(conn.dialect(), "?1", false)
        ),
        args![workflows_filter(workflows)],
        reply_from_row,
    )
}

/// Sets a reply's state and error.
pub(in crate::journal) fn set_reply_state(
    conn: &Tx,
    id: ReplyId,
    state: ReplyState,
    error: Option<&str>,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE replies SET state = ?2, error = ?3, updated_at = ?4 WHERE id = ?1",
        args![id.0, state.as_str(), error, now],
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The in-flight horizon of a send (schema 4)
// ---------------------------------------------------------------------------------------------

/// Returns when an attempt's last send started and the request timeout it was made with.
pub(in crate::journal) fn send_stamp(
    conn: &Tx,
    id: AttemptId,
) -> DbResult<Option<(DateTime<Utc>, std::time::Duration)>> {
    conn.opt_row(
        "SELECT send_started_at, send_timeout_ms FROM attempts WHERE id = ?1",
        args![id.0],
        |r| {
            let at = r.get::<Option<i64>>(0)?;
            let timeout = r.get::<Option<i64>>(1)?;
            Ok(at.zip(timeout).map(|(at, t)| {
                let t = std::time::Duration::from_millis(u64::try_from(t).unwrap_or(0));
                (time(at), t)
            }))
        },
    )
    .map(Option::flatten)
}

/// Returns whether attempt `id` has a `needs-human` event of this `cause`.
pub(in crate::journal) fn needs_human_for(conn: &Tx, id: AttemptId, cause: &str) -> DbResult<bool> {
    let d = conn.dialect();
    conn.row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM events
                 WHERE attempt_id = ?1 AND kind = 'needs-human' AND {} = ?2)",
            json_member(d, "detail_json", "cause")
        ),
        args![id.0, cause],
        |r| r.get::<bool>(0),
    )
}

/// Returns when the first event of `kind` was appended for an attempt, if any.
pub(in crate::journal) fn first_event_at(
    conn: &Tx,
    id: AttemptId,
    kind: &str,
) -> DbResult<Option<DateTime<Utc>>> {
    conn.row(
        "SELECT MIN(at) FROM events WHERE attempt_id = ?1 AND kind = ?2",
        args![id.0, kind],
        |r| Ok(r.get::<Option<i64>>(0)?.map(time)),
    )
}
