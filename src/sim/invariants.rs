//! The invariants checked after every run, against the journal (read with plain SQL) and what
//! the agents saw.

use std::collections::{BTreeMap, BTreeSet};

use super::Sim;

/// One attempt as the journal holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `WORKFLOW/STEP`.
    pub step: String,
    /// The attempt's id.
    pub id: i64,
    /// Its state.
    pub state: String,
    /// Its messageId.
    pub message_id: String,
    /// Its task id.
    pub task_id: Option<String>,
    /// Its context id.
    pub context_id: Option<String>,
    /// Its interface URL.
    pub interface_url: Option<String>,
    /// Its pending question (JSON).
    pub pending_question: Option<String>,
    /// The operator's decision on it, if any (`resolve`).
    pub resolution: Option<String>,
}

fn db(sim: &Sim) -> Result<rusqlite::Connection, String> {
    rusqlite::Connection::open(&sim.journal).map_err(|e| format!("open the journal: {e}"))
}

/// Every attempt, in id order.
pub fn rows(sim: &Sim) -> Result<Vec<Row>, String> {
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare(
            "SELECT w.name || '/' || s.name, a.id, a.state, a.message_id, a.task_id, \
             a.context_id, a.interface_url, a.pending_question, s.resolution \
             FROM attempts a JOIN steps s ON s.id = a.step_id \
             JOIN workflows w ON w.id = s.workflow_id ORDER BY a.id",
        )
        .map_err(|e| e.to_string())?;
    stmt.query_map([], |r| {
        Ok(Row {
            step: r.get(0)?,
            id: r.get(1)?,
            state: r.get(2)?,
            message_id: r.get(3)?,
            task_id: r.get(4)?,
            context_id: r.get(5)?,
            interface_url: r.get(6)?,
            pending_question: r.get(7)?,
            resolution: r.get(8)?,
        })
    })
    .and_then(Iterator::collect)
    .map_err(|e| e.to_string())
}

/// What changes between passes: every attempt's state and task, and the workflows' states.
pub fn snapshot(sim: &Sim) -> Result<Vec<(String, String, Option<String>)>, String> {
    let mut out: Vec<_> = rows(sim)?
        .into_iter()
        .map(|r| (r.step, r.state, r.task_id))
        .collect();
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare("SELECT name, state FROM workflows ORDER BY id")
        .map_err(|e| e.to_string())?;
    let workflows: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())?;
    out.extend(workflows.into_iter().map(|(w, s)| (w, s, None)));
    Ok(out)
}

fn replies(sim: &Sim) -> Result<BTreeMap<i64, Vec<String>>, String> {
    let conn = db(sim)?;
    let mut stmt = conn
        .prepare("SELECT attempt_id, message_id FROM replies")
        .map_err(|e| e.to_string())?;
    let all: Vec<(i64, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(|e| e.to_string())?;
    let mut by = BTreeMap::<i64, Vec<String>>::new();
    for (a, m) in all {
        by.entry(a).or_default().push(m);
    }
    Ok(by)
}

/// Checks every invariant; `Err` names the first one broken.
pub fn check(sim: &Sim) -> Result<(), String> {
    let rows = rows(sim)?;
    let replies = replies(sim)?;
    let stats: Vec<_> = sim.world.agents.iter().map(|(_, a)| a.stats()).collect();
    let agent_of = |url: Option<&str>| {
        url.and_then(|u| {
            sim.world
                .agents
                .iter()
                .position(|(base, _)| u.starts_with(base.as_str()))
        })
    };
    // 1. At most one task per messageId on an agent that does not de-duplicate, and one more
    // for each send without a look the workload approved (`resolve --as resend`).
    let resends = super::resolve::resends(sim)?;
    for (i, s) in stats.iter().enumerate() {
        if sim.world.dedup[i] {
            continue;
        }
        for (mid, n) in &s.tasks_per_message_id {
            if *n > 1 + resends.get(mid).copied().unwrap_or_default() {
                return Err(format!(
                    "one task per messageId: {mid} created {n} tasks on agent {i}"
                ));
            }
        }
    }
    for r in rows.iter().filter(|r| r.task_id.is_some()) {
        let task_id = r.task_id.as_deref().unwrap_or_default();
        let Some(a) = agent_of(r.interface_url.as_deref()) else {
            return Err(format!(
                "{} attempt {}: no agent at its interface",
                r.step, r.id
            ));
        };
        let Some(t) = stats[a].tasks.iter().find(|t| t.id == task_id) else {
            return Err(format!(
                "{} attempt {}: task {task_id} unknown to its agent",
                r.step, r.id
            ));
        };
        // 2. No attempt holds another message's task, or a task of another context.
        let mut ours: BTreeSet<&str> = BTreeSet::from([r.message_id.as_str()]);
        ours.extend(replies.get(&r.id).into_iter().flatten().map(String::as_str));
        if !ours.contains(t.message_id.as_str()) {
            return Err(format!(
                "foreign task: {} attempt {} holds task {task_id} of messageId {}",
                r.step, r.id, t.message_id
            ));
        }
        // An agent that files tasks under contexts of its own: the documented exception (the
        // task is the attempt's by its messageId, checked above).
        let replaced = sim.world.agents[a].1.replaces_context_ids();
        if !replaced && r.context_id.as_deref().is_some_and(|c| c != t.context_id) {
            return Err(format!(
                "foreign context: {} attempt {} holds task {task_id} of context {}",
                r.step, r.id, t.context_id
            ));
        }
        // 3. The journal agrees with the agent, but for LOST (forgotten), UNCERTAIN, and an
        // attempt the operator took out of the passes (`resolve --as done|abandoned`).
        let remote = serde_json::to_value(&t.state).unwrap_or_default();
        let remote = remote
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("TASK_STATE_")
            .to_owned();
        let decided = matches!(r.resolution.as_deref(), Some("done" | "abandoned"));
        let documented = r.state == "UNCERTAIN" || (r.state == "LOST" && t.forgotten) || decided;
        if r.state != remote && !documented {
            return Err(format!(
                "journal vs agent: {} attempt {} is {} in the journal, {remote} on the agent",
                r.step, r.id, r.state
            ));
        }
        // 4. A question still pending is journaled whole.
        if r.state == "INPUT_REQUIRED"
            && !r
                .pending_question
                .as_deref()
                .is_some_and(|q| q.contains("two rooms or one?"))
        {
            return Err(format!("question lost: {} attempt {}", r.step, r.id));
        }
    }
    compensations(sim, &rows, &stats)
}

/// Invariant 6: compensations started newest step first (the reverse of the order the steps'
/// first intents were journaled: docs/sagas.md), and reached their agent at most once each.
///
/// Their arrival order at the agents is not checked: `compensate` goes on to older steps while a
/// newer one's compensation is still in flight (`compensating`), so a late delivery may reach the
/// agent after an older step's.
fn compensations(
    sim: &Sim,
    rows: &[Row],
    stats: &[crate::scripted_agent::Stats],
) -> Result<(), String> {
    let _ = sim;
    let saga = |r: &&Row| r.step.starts_with("trip/");
    let mut delegated: Vec<&str> = Vec::new();
    let mut started: Vec<&str> = Vec::new();
    for r in rows.iter().filter(saga) {
        match r.step.strip_suffix("~compensate") {
            Some(step) if !started.contains(&step) => started.push(step),
            None if !delegated.contains(&r.step.as_str()) => delegated.push(&r.step),
            _ => {}
        }
    }
    let position = |step: &str| delegated.iter().position(|s| *s == step);
    let order: Vec<Option<usize>> = started.iter().map(|s| position(s)).collect();
    if order.windows(2).any(|w| w[0] < w[1]) {
        return Err(format!(
            "compensations out of reverse order: started {started:?}, delegated {delegated:?}"
        ));
    }
    let saga_tasks: BTreeMap<&str, &str> = rows
        .iter()
        .filter(saga)
        .filter(|r| !r.step.contains('~'))
        .filter_map(|r| Some((r.task_id.as_deref()?, r.step.as_str())))
        .collect();
    for (i, s) in stats.iter().enumerate() {
        let mut count = BTreeMap::<&str, u32>::new();
        for m in &s.messages {
            let Some(task) = m.text.strip_prefix("cancel ") else {
                continue;
            };
            if let Some(step) = saga_tasks.get(task.trim()) {
                *count.entry(step).or_default() += 1;
            }
        }
        if let Some((step, n)) = count.iter().find(|(_, n)| **n > 1) {
            return Err(format!(
                "compensation of {step} sent {n} times to agent {i}"
            ));
        }
    }
    Ok(())
}
