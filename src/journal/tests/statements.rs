//! How many statements an operation runs on SQLite, counted on the connection (the
//! `Db` calls of this thread): what a step of a plan costs in SQL beside its rows.

use super::*;
use crate::journal::sqlite::STATEMENTS;

/// Returns what `f` returns and the statements it ran.
fn counting<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = STATEMENTS.with(std::cell::Cell::get);
    let out = f();
    (out, STATEMENTS.with(std::cell::Cell::get) - before)
}

fn plan(workflow: &str, n: usize, agent: &str) -> Vec<NewIntent> {
    (0..n)
        .map(|i| intent(&format!("{workflow}/s{i}"), "x", agent))
        .collect()
}

/// A plan's intents in a new workflow: each step's three rows (step, attempt, `intent` event)
/// and nothing else per step; the workflow's row and the agent's are read once per plan.
#[test]
fn sqlite_a_new_workflows_intents_run_three_statements_a_step() {
    let (_fresh, j) = Fresh::journal(Kind::Sqlite);
    let agent = "http://127.0.0.1:9/";
    for n in [1, 10, 100] {
        let intents = plan(&format!("w{n}"), n, agent);
        let (outcomes, statements) = counting(|| j.create_intents(&intents).unwrap());
        assert!(
            outcomes
                .iter()
                .all(|o| matches!(o, IntentOutcome::Created(_)))
        );
        // The workflow read, then inserted (an insert and a read); the agent's row (an insert
        // if missing and a read).
        assert_eq!(statements, 3 * n as u64 + 5, "{n} steps");
    }
    // The same plan again: every step found as it is, none inserted.
    let again = plan("w10", 10, agent);
    let outcomes = j.create_intents(&again).unwrap();
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, IntentOutcome::Existing(_)))
    );
    // A plan adding to a workflow that exists asks for each step whether it is there.
    let mixed: Vec<NewIntent> = plan("w10", 12, agent);
    let outcomes = j.create_intents(&mixed).unwrap();
    let created = outcomes
        .iter()
        .filter(|o| matches!(o, IntentOutcome::Created(_)))
        .count();
    assert_eq!(created, 2);
    // A step named twice in one plan is created once, then found.
    let twice = vec![
        intent("w-twice/a", "x", agent),
        intent("w-twice/a", "x", agent),
    ];
    let outcomes = j.create_intents(&twice).unwrap();
    assert!(matches!(outcomes[0], IntentOutcome::Created(_)));
    assert!(matches!(outcomes[1], IntentOutcome::Existing(_)));
    assert_eq!(j.workflow_steps("w-twice").unwrap().len(), 1);
}
