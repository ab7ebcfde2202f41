//! What a group commit reads in one statement rather than one per record.

use super::attempts::{ATTEMPT_COLUMNS, attempt_from_row};
use super::json_items;
use crate::journal::model::{Attempt, AttemptId};
use crate::journal::sql::{DbResult, Tx, args};

/// Returns the attempts of `ids` that exist (in no particular order), in one statement.
pub(in crate::journal) fn attempts_by_ids(conn: &Tx, ids: &[AttemptId]) -> DbResult<Vec<Attempt>> {
    let list = serde_json::to_string(&ids.iter().map(|a| a.0).collect::<Vec<_>>())
        .unwrap_or_else(|_| "[]".to_owned());
    conn.rows(
        &format!(
            "SELECT {ATTEMPT_COLUMNS} FROM attempts a LEFT JOIN agents ag ON ag.id = a.agent_id
             WHERE a.id IN ({})",
            json_items(conn.dialect(), "?1", true)
        ),
        args![list],
        attempt_from_row,
    )
}
