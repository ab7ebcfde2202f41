//! The invariants of the fixed point: every lease released or expired (7), and the exit codes
//! of the last `reconcile` and `compensate` agreeing with the journal (8). Read with plain SQL,
//! apart from the product's own queries, so that the two can disagree.

use super::{Exit, Sim};

fn db(sim: &Sim) -> Result<rusqlite::Connection, String> {
    rusqlite::Connection::open(&sim.journal).map_err(|e| format!("open the journal: {e}"))
}

fn strings(conn: &rusqlite::Connection, sql: &str) -> Result<Vec<(String, String)>, String> {
    let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())
}

/// Invariant 7: at the fixed point no attempt holds a lease that is still running: each was
/// released, or (held by a process that was killed, whose release never ran) has expired, virtual
/// time having gone past it. A lease left by a process that exited is a release that did not run.
pub fn leases(sim: &Sim) -> Result<(), String> {
    let now = crate::sim_seam::virtual_now()
        .ok_or("leases: no virtual clock")?
        .timestamp_millis();
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare(
            "SELECT w.name || '/' || s.name, a.id, a.lease_expires_at, a.lease_owner_id \
             FROM attempts a JOIN steps s ON s.id = a.step_id \
             JOIN workflows w ON w.id = s.workflow_id \
             WHERE a.lease_expires_at IS NOT NULL ORDER BY a.id",
        )
        .map_err(|e| e.to_string())?;
    let held: Vec<(String, i64, i64, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())?;
    for (step, id, expires, owner) in held {
        if expires > now {
            return Err(format!(
                "lease still held at the fixed point: {step} attempt {id} until {} ms past now",
                expires - now
            ));
        }
        if !owner
            .as_deref()
            .is_some_and(|o| sim.killed_owners.contains(o))
        {
            return Err(format!(
                "lease not released: {step} attempt {id} is held by a process that exited"
            ));
        }
    }
    Ok(())
}

/// The latest attempt of each step that counts (unresolved, outside a `COMPENSATED` workflow),
/// sorted into "needs a human" and "work remains" as the exit-code table defines them.
const COUNTED: &str = "FROM attempts a JOIN steps s ON s.id = a.step_id \
     JOIN workflows w ON w.id = s.workflow_id \
     WHERE s.resolution IS NULL AND w.state <> 'COMPENSATED' \
     AND a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id)";

/// A pending question or auth, failed for good (`FAILED`/`REJECTED` of a step bound to one
/// agent or with its budget spent, `CANCELED` by the agent), `LOST`, `UNCERTAIN`, `REFUSED`, an
/// effect unverified or whose compensation failed, an `INTENT` journaled as needing a human.
pub const HUMAN: &str = "(a.state IN ('INPUT_REQUIRED', 'AUTH_REQUIRED', 'LOST', 'UNCERTAIN', 'REFUSED') \
     OR (a.state IN ('FAILED', 'REJECTED') AND (s.agent_url IS NOT NULL OR a.number >= s.max_attempts)) \
     OR (a.state = 'CANCELED' AND a.cancel_requested_at IS NULL) \
     OR a.effect IN ('absent', 'unknown', 'compensation-failed') \
     OR (a.state = 'INTENT' AND EXISTS (SELECT 1 FROM events e WHERE e.attempt_id = a.id \
         AND e.kind = 'needs-human')))";

/// Tasks not yet terminal, sends not yet settled, effects not yet verified or undone.
const REMAINS: &str = "(a.state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'UNKNOWN') \
     OR a.effect IN ('claimed', 'compensating'))";

/// The exit code the exit-code table gives for the journal as it is: 4 wins over 3, 3 over 0;
/// with an example of what decided it.
fn expected_pass_exit(conn: &rusqlite::Connection) -> Result<(u8, Option<String>), String> {
    let example = |cond: &str| -> Result<Option<String>, String> {
        let sql = format!(
            "SELECT w.name || '/' || s.name, a.state || ' ' || coalesce(a.effect, '') \
             {COUNTED} AND {cond} ORDER BY a.id LIMIT 1"
        );
        Ok(strings(conn, &sql)?
            .into_iter()
            .next()
            .map(|(step, state)| format!("{step} {}", state.trim_end())))
    };
    if let Some(e) = example(HUMAN)? {
        return Ok((4, Some(e)));
    }
    if let Some(e) = example(REMAINS)? {
        return Ok((3, Some(e)));
    }
    Ok((0, None))
}

/// Invariant 8, for one `reconcile` that exited (not killed): 0 only when nothing is unfinished
/// or needs a human, 4 only when something needs a human, 3 only when work remains and nothing
/// needs a human.
pub fn reconcile_exit(sim: &Sim, exit: Exit) -> Result<(), String> {
    let Exit::Code(code) = exit else {
        return Ok(());
    };
    let (want, why) = expected_pass_exit(&db(sim)?)?;
    if code != want {
        return Err(format!(
            "exit code vs journal: reconcile exited {code}, the journal says {want}{}",
            why.map(|w| format!(" ({w})")).unwrap_or_default()
        ));
    }
    Ok(())
}

/// Invariant 8, for one `compensate` of the saga that exited (not killed): 0 only for a
/// `COMPENSATED` saga, and a `COMPENSATED` saga only with 0.
pub fn compensate_exit(sim: &Sim, exit: Exit) -> Result<(), String> {
    let Exit::Code(code) = exit else {
        return Ok(());
    };
    let sql = format!(
        "SELECT name, state FROM workflows WHERE name = '{}'",
        super::workload::SAGA
    );
    if let Some((_, state)) = strings(&db(sim)?, &sql)?.first()
        && (state == "COMPENSATED") != (code == 0)
    {
        return Err(format!(
            "exit code vs journal: compensate exited {code}, the saga is {state}"
        ));
    }
    Ok(())
}

/// The latest attempt of `step` (`WORKFLOW/STEP`): its state, whether it has a task id, and the
/// state of its latest reply, if any.
fn latest(sim: &Sim, step: &str) -> Result<Option<(String, bool, Option<String>)>, String> {
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare(
            "SELECT a.state, a.task_id IS NOT NULL, \
             (SELECT r.state FROM replies r WHERE r.attempt_id = a.id ORDER BY r.id DESC LIMIT 1) \
             FROM attempts a JOIN steps s ON s.id = a.step_id \
             JOIN workflows w ON w.id = s.workflow_id WHERE w.name || '/' || s.name = ?1 \
             ORDER BY a.number DESC LIMIT 1",
        )
        .map_err(|e| e.to_string())?;
    let mut rows = stmt
        .query_map([step], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(|e| e.to_string())?;
    rows.next().transpose().map_err(|e| e.to_string())
}

/// Invariant 8, for one `delegate` of `step` that exited (not killed): 0 only once its task id
/// (or a direct answer) is journaled, 3 only while its send's outcome is unknown (no task id), 4
/// only for `REFUSED`.
pub fn delegate_exit(sim: &Sim, step: &str, exit: Exit) -> Result<(), String> {
    let Exit::Code(code) = exit else {
        return Ok(());
    };
    let (state, task, _) = latest(sim, step)?.unwrap_or_default();
    let agrees = match code {
        0 => task || state == "REPLIED",
        3 => !task && state != "REPLIED" && state != "REFUSED",
        4 => state == "REFUSED",
        _ => false,
    };
    if agrees {
        return Ok(());
    }
    Err(format!(
        "exit code vs journal: delegate {step} exited {code}, its attempt is {state} {}",
        if task {
            "with a task"
        } else {
            "without a task"
        }
    ))
}

/// Invariant 8, for one `reply` to `step` that exited (not killed): 0 only once the reply is
/// journaled `DELIVERED`, 3 only while its latest reply is not, 2 (no pending question) only
/// while the step is not waiting for input.
pub fn reply_exit(sim: &Sim, step: &str, exit: Exit) -> Result<(), String> {
    let Exit::Code(code) = exit else {
        return Ok(());
    };
    let (state, _, reply) = latest(sim, step)?.unwrap_or_default();
    let agrees = match code {
        0 => reply.as_deref() == Some("DELIVERED"),
        3 => reply.as_deref().is_some_and(|r| r != "DELIVERED"),
        2 => state != "INPUT_REQUIRED",
        _ => false,
    };
    if agrees {
        return Ok(());
    }
    Err(format!(
        "exit code vs journal: reply {step} exited {code}, its attempt is {state}, its reply {reply:?}"
    ))
}

/// Invariant 8 at the fixed point: its `reconcile` and `compensate` (run with nothing changing
/// in between).
pub fn exits(sim: &Sim) -> Result<(), String> {
    let Some((reconcile, compensate)) = sim.fixed_point else {
        return Ok(());
    };
    reconcile_exit(sim, reconcile)?;
    compensate_exit(sim, compensate)
}

/// Invariant 8, for one `follow` of `step` (or `delegate --follow`) that exited (not killed): 0
/// only once the task is terminal (or the step `REPLIED`), 4 only while it waits for a human
/// (a question, `LOST`, `UNCERTAIN`, `REFUSED`), 3 only while it is not terminal.
pub fn follow_exit(sim: &Sim, step: &str, exit: Exit) -> Result<(), String> {
    let Exit::Code(code) = exit else {
        return Ok(());
    };
    let (state, _, _) = latest(sim, step)?.unwrap_or_default();
    let terminal = ["COMPLETED", "FAILED", "CANCELED", "REJECTED", "REPLIED"];
    let human = [
        "INPUT_REQUIRED",
        "AUTH_REQUIRED",
        "LOST",
        "UNCERTAIN",
        "REFUSED",
    ];
    let agrees = match code {
        0 => terminal.contains(&state.as_str()),
        4 => human.contains(&state.as_str()),
        3 => !terminal.contains(&state.as_str()),
        _ => false,
    };
    if agrees {
        return Ok(());
    }
    Err(format!(
        "exit code vs journal: follow of {step} exited {code}, its attempt is {state}"
    ))
}
