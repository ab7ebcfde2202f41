//! Artifacts of attempts: whole, by head, by size, and appended chunk by chunk.

use serde_json::Value;

use super::{json_opt, to_json};
use crate::journal::model::{Artifact, AttemptId};
use crate::journal::sql::{DbResult, Dialect, Row, Tx, args};

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
