//! The SQL of push configs deleted at their agents (schema 21): the configs of ended attempts
//! still to delete, and what each delete came to. Times are unix milliseconds.

use serde_json::Value;

use super::queries::json_items;
use super::{DbResult, Tx, args};
use crate::journal::model::AttemptId;

/// Returns up to `limit` configs whose attempt ended (COMPLETED, FAILED, CANCELED, REJECTED)
/// with a known task, not yet deleted, and whose agent never said it deletes none: `(attempt,
/// config id)`, oldest attempt first; only those of `workflows` unless it is empty.
pub(in crate::journal) fn untidied(
    conn: &Tx,
    workflows: &[String],
    limit: i64,
) -> DbResult<Vec<(AttemptId, String)>> {
    let list = Value::Array(workflows.iter().map(|w| Value::from(w.as_str())).collect());
    let only = format!(
        "AND (CAST(?2 AS TEXT) = '[]' OR w.name IN ({}))",
        json_items(conn.dialect(), "?2", false)
    );
    conn.rows(
        &format!(
            "SELECT pc.attempt_id, pc.config_id FROM push_configs pc
             JOIN attempts a ON a.id = pc.attempt_id
             JOIN steps s ON s.id = a.step_id
             JOIN workflows w ON w.id = s.workflow_id
             LEFT JOIN agents ag ON ag.id = a.agent_id
             WHERE pc.tidied IS NULL
               AND a.state IN ('COMPLETED', 'FAILED', 'CANCELED', 'REJECTED')
               AND a.task_id IS NOT NULL
               AND ag.push_delete_unsupported_at IS NULL
               {only}
             ORDER BY pc.attempt_id
             LIMIT ?1"
        ),
        args![limit, list.to_string()],
        |r| Ok((AttemptId(r.get(0)?), r.get(1)?)),
    )
}

/// Records what the delete of attempt `id`'s config came to (`deleted`, `gone`, `refused`,
/// `unsupported`).
pub(in crate::journal) fn set_tidied(
    conn: &Tx,
    id: AttemptId,
    outcome: &str,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE push_configs SET tidied = ?2, tidied_at = ?3
         WHERE attempt_id = ?1 AND tidied IS NULL",
        args![id.0, outcome, now],
    )?;
    Ok(())
}

/// Records that the agent of attempt `id` does not delete push configs: it is not asked again.
pub(in crate::journal) fn set_agent_unsupported(
    conn: &Tx,
    id: AttemptId,
    now: i64,
) -> DbResult<()> {
    conn.exec(
        "UPDATE agents SET push_delete_unsupported_at = ?2
         WHERE id = (SELECT agent_id FROM attempts WHERE id = ?1)
           AND push_delete_unsupported_at IS NULL",
        args![id.0, now],
    )?;
    Ok(())
}
