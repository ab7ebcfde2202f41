//! How many artifacts an attempt holds, counted without loading one.

use super::{DbResult, Tx, args};
use crate::journal::model::AttemptId;

/// Returns how many artifacts an attempt holds; no part of one is read.
pub(in crate::journal) fn artifact_count(conn: &Tx, attempt: AttemptId) -> DbResult<u64> {
    conn.row(
        "SELECT COUNT(*) FROM artifacts WHERE attempt_id = ?1",
        args![attempt.0],
        |r| Ok(u64::try_from(r.get::<i64>(0)?).unwrap_or(0)),
    )
}
