//! Attempts: their rows, inserts, updates, leases and the in-flight horizon of a send.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::{json_opt, ms, parse_col, parse_opt, time, to_json};
use crate::journal::model::{
    AgentId, Attempt, AttemptId, AttemptState, CredentialSource, EffectState, Lease, StepId,
};
use crate::journal::sql::{Arg, DbError, DbResult, Row, Stmt, Tx, args, insert_id};
use crate::model::ProtocolBinding;

pub(super) const ATTEMPT_COLUMNS: &str = "a.id, a.step_id, a.number, ag.card_url, a.interface_url, a.tenant, \
     a.token_env, a.message_id, a.context_id, a.context_id_ours, a.task_id, a.state, \
     a.remote_state, a.status_timestamp, a.pending_question, a.last_task_json, a.outcome_json, \
     a.error, a.effect, a.cancel_requested_at, a.previous_attempt_id, a.lease_owner_pid, \
     a.lease_owner_host, a.lease_expires_at, a.created_at, a.updated_at, a.continuation_task_id, \
     a.binding, a.protocol_version, a.token_cmd, a.lease_owner_id, a.credential_source";

/// How many columns [`ATTEMPT_COLUMNS`] has.
pub(super) const ATTEMPT_WIDTH: usize = 32;

/// Reads the binding columns of a row whose interface is journaled (`interface` set); both
/// NULL (a row written before bindings were journaled) reads as `None`: the caller then takes
/// the binding from the journaled card, else v1.0 JSON-RPC.
fn binding_cols(
    r: &Row<'_>,
    interface: bool,
    binding: usize,
    version: usize,
) -> DbResult<Option<ProtocolBinding>> {
    let b = r.opt_str(binding)?;
    let v = r.opt_str(version)?;
    if !interface || (b.is_none() && v.is_none()) {
        return Ok(None);
    }
    ProtocolBinding::from_journal(b, v)
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

pub(super) fn attempt_from_row(r: &Row<'_>) -> DbResult<Attempt> {
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
        binding: binding_cols(r, r.opt_str(4)?.is_some(), 27, 28)?,
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
    let insert = insert_id!(
        "INSERT INTO attempts (step_id, number, agent_id, token_env, message_id, context_id,
             context_id_ours, state, previous_attempt_id, created_at, updated_at, token_cmd,
             credential_source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 'INTENT', ?7, ?8, ?8, ?9, ?10)"
    );
    let id = conn.insert_id(
        &insert,
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
    )?;
    Ok(AttemptId(id))
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

/// Returns the highest attempt number of a step (0 if none).
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
    let s = update_attempt_stmt(held, next, send);
    conn.exec(&s.sql, &s.args)?;
    Ok(())
}

/// [`update_attempt_from`] as a statement to run later.
pub(in crate::journal) fn update_attempt_stmt<'a>(
    held: &Attempt,
    next: &'a Attempt,
    send: Option<SendStamp>,
) -> Stmt<'a> {
    let sets = attempt_sets(held, next, send);
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
    let mut args: Vec<Arg<'a>> = Vec::with_capacity(sets.len() + 1);
    args.push(Arg::Int(next.id.0));
    args.extend(sets.into_iter().map(|(_, v)| v));
    Stmt {
        sql: sql.into(),
        args,
        rows: false,
    }
}

/// The columns [`update_attempt_stmt`] sets, each with its value: those that differ between
/// `held` and `next`, `send`'s stamp if any, and `updated_at` (always, last).
pub(in crate::journal) fn attempt_sets<'a>(
    held: &Attempt,
    next: &'a Attempt,
    send: Option<SendStamp>,
) -> Vec<(&'static str, Arg<'a>)> {
    use crate::journal::sql::ToArg;
    let pending_question = Arg::from(to_json(next.pending_question.as_ref()));
    let context_id_ours = Arg::from(next.context_id_ours);
    let state = Arg::from(next.state.as_str());
    let effect = Arg::from(next.effect.map(EffectState::as_str));
    let cancel_requested_at = Arg::from(next.cancel_requested_at.map(ms));
    let updated_at = Arg::Int(ms(next.updated_at));
    let (binding, protocol_version) = binding_names(next.binding);
    let mut sets: Vec<(&'static str, Arg<'a>)> = Vec::new();
    if next.interface_url != held.interface_url {
        sets.push(("interface_url", next.interface_url.to_arg()));
    }
    if next.tenant != held.tenant {
        sets.push(("tenant", next.tenant.to_arg()));
    }
    if next.binding != held.binding {
        sets.push(("binding", binding.into()));
        sets.push(("protocol_version", protocol_version.into()));
    }
    if next.context_id != held.context_id {
        sets.push(("context_id", next.context_id.to_arg()));
    }
    if next.context_id_ours != held.context_id_ours {
        sets.push(("context_id_ours", context_id_ours));
    }
    if next.task_id != held.task_id {
        sets.push(("task_id", next.task_id.to_arg()));
    }
    if next.continuation_task_id != held.continuation_task_id {
        sets.push(("continuation_task_id", next.continuation_task_id.to_arg()));
    }
    if next.state != held.state {
        sets.push(("state", state));
    }
    if next.remote_state != held.remote_state {
        sets.push(("remote_state", next.remote_state.to_arg()));
    }
    if next.status_timestamp != held.status_timestamp {
        sets.push(("status_timestamp", next.status_timestamp.to_arg()));
    }
    if next.pending_question != held.pending_question {
        sets.push(("pending_question", pending_question));
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
        sets.push(("effect", effect));
    }
    if next.cancel_requested_at != held.cancel_requested_at {
        sets.push(("cancel_requested_at", cancel_requested_at));
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
    sets.push(("updated_at", updated_at));
    sets
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
