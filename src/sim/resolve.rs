//! `resolve` in the workloads: an operator's decision on a step that needs a human, its step
//! chosen from the journal as the run reached it, and the invariants' allowances for it.
//!
//! `resend` goes to the first step whose latest attempt is `UNCERTAIN`, the other decisions to
//! the first step needing a human (the exit-code table's sense), else to the first step
//! delegated: the product refuses what the journal's state does not allow (exit 2), and that is
//! checked too.

use std::collections::BTreeMap;

use super::{Exit, Sim};

/// The decisions drawn, one of ten each: `resend` four times in ten, `retry` three, `done`
/// two, `abandoned` one.
pub const DECISIONS: [&str; 10] = [
    "resend",
    "resend",
    "resend",
    "resend",
    "retry",
    "retry",
    "retry",
    "done",
    "done",
    "abandoned",
];

/// The reason every decision gives.
const REASON: &str = "the simulator decides";

fn db(sim: &Sim) -> Result<rusqlite::Connection, String> {
    rusqlite::Connection::open(&sim.journal).map_err(|e| format!("open the journal: {e}"))
}

/// The first step (by its latest attempt's id) whose latest attempt matches `cond`.
fn first_step(sim: &Sim, cond: &str) -> Result<Option<String>, String> {
    let sql = format!(
        "SELECT w.name || '/' || s.name FROM attempts a JOIN steps s ON s.id = a.step_id \
         JOIN workflows w ON w.id = s.workflow_id \
         WHERE a.number = (SELECT MAX(x.number) FROM attempts x WHERE x.step_id = a.step_id) \
         AND s.name NOT LIKE '%~%' AND {cond} ORDER BY a.id LIMIT 1"
    );
    let conn = db(sim)?;
    let mut stmt = conn.prepare(&sql).map_err(|e| e.to_string())?;
    let mut rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(|e| e.to_string())?;
    rows.next().transpose().map_err(|e| e.to_string())
}

/// How many decisions the journal holds for `step` (`resolved` events).
fn decisions(sim: &Sim, step: &str) -> Result<u32, String> {
    db(sim)?
        .query_row(
            "SELECT count(*) FROM events e JOIN steps s ON s.id = e.step_id \
             JOIN workflows w ON w.id = s.workflow_id \
             WHERE e.kind = 'resolved' AND w.name || '/' || s.name = ?1",
            [step],
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())
}

/// How many sends without a look the workload approved (`resolve --as resend`), by messageId:
/// each may make one more task on an agent that does not de-duplicate (invariant 1).
pub fn resends(sim: &Sim) -> Result<BTreeMap<String, u32>, String> {
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare(
            "SELECT a.message_id, count(*) FROM events e JOIN attempts a ON a.id = e.attempt_id \
             WHERE e.kind = 'resolved' \
             AND json_extract(e.detail_json, '$.resolution') = 'resend' GROUP BY a.message_id",
        )
        .map_err(|e| e.to_string())?;
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())
}

impl Sim {
    /// Runs `resolve --as DECISION` (under faults, `--wait` added when `wait`) on the step the
    /// journal points to, and checks its exit: 0 only with one more decision journaled for the
    /// step, 2 only with none (invariant 8).
    pub async fn resolve(&mut self, decision: &str, first: &str, wait: bool) -> Result<(), String> {
        let cond = if decision == "resend" {
            "a.state = 'UNCERTAIN'".to_owned()
        } else {
            format!("s.resolution IS NULL AND {}", super::settled::HUMAN)
        };
        let step = first_step(self, &cond)?.unwrap_or_else(|| first.to_owned());
        let before = decisions(self, &step)?;
        // The flags first: a schedule names the process `resolve` whichever step it decides.
        let mut args: Vec<String> = ["resolve", "--as", decision, "--reason", REASON, "--yes"]
            .iter()
            .map(|w| (*w).to_owned())
            .collect();
        if wait {
            args.extend(["--wait".to_owned(), super::workload::WAIT.to_owned()]);
        }
        args.push(step.clone());
        let crash = self.world.faults.crash();
        let exit = self.process(&args, crash).await;
        let after = decisions(self, &step)?;
        // No companion journals a decision, so the count holds beside them too; any other
        // exit beside them may be theirs to answer for (a lease they held).
        let agrees = match exit {
            Exit::Killed | Exit::Beside(_) if !matches!(exit, Exit::Beside(0 | 2)) => true,
            Exit::Code(0) | Exit::Beside(0) => after == before + 1,
            Exit::Code(2) | Exit::Beside(2) => after == before,
            _ => false,
        };
        if after > before {
            *self.outcome.decided.entry(decision.to_owned()).or_default() += 1;
        }
        if agrees {
            return Ok(());
        }
        Err(format!(
            "exit code vs journal: resolve {step} --as {decision} exited {exit:?}, \
             {} decision(s) journaled",
            after - before
        ))
    }
}
