//! Workflows and steps: their rows, states, resolutions and the workflow lists of the passes.

use serde_json::Value;

use super::{json_opt, parse_col, parse_opt, time, to_json};
use crate::journal::model::{Binding, Resolution, Step, StepId, StepName, StepSpec, WorkflowState};
use crate::journal::sql::{DbError, DbResult, Row, Tx, args, insert_id};
use crate::model::{InterfaceChoice, ProtocolVersion, WireBinding};

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
     s.resolution_reason, w.state, s.created_at, s.updated_at, s.force_binding, s.force_protocol, s.token_cmd, \
     s.data_json";

pub(super) fn binding_from(
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
            data: json_opt(r, 25)?,
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
    let insert = insert_id!(
        "INSERT INTO steps (workflow_id, name, seq, text, agent_url, skill, command, token_env,
             metadata_json, max_attempts, allow_cross_origin, effect_json, compensate_json,
             verify_json, cwd, compensates_step_id, created_at, updated_at, force_binding,
             force_protocol, token_cmd, data_json)
         VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps), ?3, ?4, ?5, ?6, ?7, ?8,
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?16, ?17, ?18, ?19, ?20)"
    );
    let id = conn.insert_id(
        &insert,
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
            to_json(spec.data.as_ref()),
        ],
    )?;
    Ok(StepId(id))
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
