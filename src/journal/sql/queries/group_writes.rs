//! A group commit's writes (its changed attempts and their events) as statements to run
//! together. On SQLite one prepared statement per row, as one change alone writes it (in
//! process, they cost little). On PostgreSQL one statement per kind: an `UPDATE … FROM` the
//! rows for each set of changed columns, and one `INSERT … SELECT` of every event, the rows
//! passed as one JSON parameter, so a commit runs a handful of statements whatever its size
//! rather than two for each change (each planned and run on its own).

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use serde::ser::{Error as _, Serialize, SerializeMap, Serializer};

use super::attempts::{attempt_sets, update_attempt_stmt};
use super::events::{EVENT_ARG_COLUMNS, INSERT_EVENT, NewEvent, insert_event_stmt};
use super::json_items;
use crate::journal::model::{Attempt, AttemptId};
use crate::journal::sql::{Arg, Dialect, Stmt};

/// One change of a group commit: the attempt as it held before it, as it leaves it, and the
/// change's event.
pub(in crate::journal) struct GroupChange<'a> {
    /// The row the change was decided against.
    pub(in crate::journal) held: &'a Attempt,
    /// The row as the change leaves it.
    pub(in crate::journal) next: &'a Attempt,
    /// Its event.
    pub(in crate::journal) event: NewEvent<'a>,
}

/// Events, in order, from rows of a JSON array (`?1`) of objects named as the columns. The
/// rows are read by one `json_to_recordset` with the columns' types (one call for the array,
/// not one `json_populate_record` per row); a row without a workflow takes its step's, as
/// [`insert_event_stmt`] does.
const INSERT_EVENTS: &str = "INSERT INTO events (at, workflow_id, step_id, attempt_id, kind, \
     from_state, to_state, detail_json)
     SELECT v.at, COALESCE(v.workflow_id, (SELECT s.workflow_id FROM steps s WHERE s.id = v.step_id)),
         v.step_id, v.attempt_id, v.kind, v.from_state, v.to_state, v.detail_json
     FROM ROWS FROM (json_to_recordset(CAST(?1 AS json)) AS (at BIGINT, workflow_id BIGINT,
         step_id BIGINT, attempt_id BIGINT, kind TEXT, from_state TEXT, to_state TEXT,
         detail_json TEXT)) WITH ORDINALITY
         AS v (at, workflow_id, step_id, attempt_id, kind, from_state, to_state, detail_json, n)
     ORDER BY v.n";

/// The statements that write `changes` (each row as its changes leave it, and every event in
/// their order), to run in one [`Db::pipeline`](crate::journal::sql::Db::pipeline). No change
/// writes an artifact.
pub(in crate::journal) fn group_write_stmts<'a>(
    d: Dialect,
    changes: &[GroupChange<'a>],
) -> Vec<Stmt<'a>> {
    if d == Dialect::Postgres
        && let Some(stmts) = multi_row_stmts(changes)
    {
        return stmts;
    }
    let mut stmts = Vec::with_capacity(changes.len() * 2);
    for c in changes {
        stmts.push(update_attempt_stmt(c.held, c.next, None));
        stmts.push(insert_event_stmt(&c.event));
    }
    stmts
}

/// [`group_write_stmts`], the events' statements also returning their ids (ascending in the
/// changes' order: one id per event). For a store that pipelines (PostgreSQL): SQLite reads
/// each id as it inserts it, without `RETURNING`.
pub(in crate::journal) fn group_write_stmts_returning<'a>(
    d: Dialect,
    changes: &[GroupChange<'a>],
) -> Vec<Stmt<'a>> {
    let mut stmts = group_write_stmts(d, changes);
    for s in &mut stmts {
        if s.sql == INSERT_EVENTS {
            s.sql = Cow::Owned(format!("{INSERT_EVENTS}\n     RETURNING id"));
            s.rows = true;
        } else if s.sql == INSERT_EVENT.sql {
            s.sql = Cow::Borrowed(INSERT_EVENT.returning);
            s.rows = true;
        }
    }
    stmts
}

/// One statement that clears the leases of `ids` (a group commit's releases that change
/// nothing else of their attempts).
pub(in crate::journal) fn release_leases_stmt(d: Dialect, ids: &[AttemptId]) -> Stmt<'static> {
    let list = serde_json::to_string(&ids.iter().map(|a| a.0).collect::<Vec<_>>())
        .unwrap_or_else(|_| "[]".to_owned());
    Stmt {
        sql: Cow::Owned(format!(
            "UPDATE attempts SET lease_owner_pid = NULL, lease_owner_host = NULL, \
             lease_expires_at = NULL, lease_owner_id = NULL WHERE id IN ({})",
            json_items(d, "?1", true)
        )),
        args: vec![Arg::Text(Cow::Owned(list))],
        rows: false,
    }
}

/// A row of a multi-row statement: its columns, each with its value.
type JsonRow<'a> = Vec<(&'static str, Arg<'a>)>;

/// The PostgreSQL form of [`group_write_stmts`]; `None` when a value has no JSON form (no
/// attempt or event column holds one), for the statements row by row.
fn multi_row_stmts(changes: &[GroupChange<'_>]) -> Option<Vec<Stmt<'static>>> {
    // An attempt changed twice is written once, from the row first held to the row last left:
    // an `UPDATE … FROM` sets a row once however many of its source rows match it.
    let mut spans: Vec<(&Attempt, &Attempt)> = Vec::new();
    let mut index: HashMap<i64, usize> = HashMap::new();
    for c in changes {
        match index.entry(c.held.id.0) {
            Entry::Occupied(at) => spans[*at.get()].1 = c.next,
            Entry::Vacant(at) => {
                at.insert(spans.len());
                spans.push((c.held, c.next));
            }
        }
    }
    // One UPDATE for each set of columns, in the order each set first comes.
    let mut groups: Vec<(Vec<&'static str>, Vec<JsonRow<'_>>)> = Vec::new();
    for (held, next) in spans {
        let sets = attempt_sets(held, next, None);
        let columns: Vec<&'static str> = sets.iter().map(|(c, _)| *c).collect();
        let mut row = Vec::with_capacity(sets.len() + 1);
        row.push(("id", Arg::Int(next.id.0)));
        row.extend(sets);
        match groups.iter_mut().find(|(cols, _)| *cols == columns) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((columns, vec![row])),
        }
    }
    let mut stmts = Vec::with_capacity(groups.len() + 1);
    for (columns, rows) in &groups {
        let mut sql = String::from("UPDATE attempts AS a SET ");
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "{column} = v.{column}");
        }
        sql.push_str(
            " FROM json_populate_recordset(CAST(NULL AS attempts), CAST(?1 AS json)) AS v \
             WHERE a.id = v.id",
        );
        stmts.push(json_stmt(sql.into(), rows)?);
    }
    let events: Vec<JsonRow<'_>> = changes
        .iter()
        .map(|c| {
            EVENT_ARG_COLUMNS
                .into_iter()
                .zip(insert_event_stmt(&c.event).args)
                .collect()
        })
        .collect();
    stmts.push(json_stmt(Cow::Borrowed(INSERT_EVENTS), &events)?);
    Some(stmts)
}

/// `sql` with its one parameter, `rows` as a JSON array of objects.
fn json_stmt(sql: Cow<'static, str>, rows: &[JsonRow<'_>]) -> Option<Stmt<'static>> {
    let json = serde_json::to_string(&rows.iter().map(Object).collect::<Vec<_>>()).ok()?;
    Some(Stmt {
        sql,
        args: vec![Arg::Text(Cow::Owned(json))],
        rows: false,
    })
}

/// A row as a JSON object.
struct Object<'r, 'a>(&'r JsonRow<'a>);

impl Serialize for Object<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (column, value) in self.0 {
            match value {
                Arg::Null => map.serialize_entry(column, &())?,
                Arg::Int(i) => map.serialize_entry(column, i)?,
                Arg::Text(t) => map.serialize_entry(column, t.as_ref())?,
                Arg::Real(_) | Arg::Blob(_) => {
                    return Err(S::Error::custom(format_args!("{column}: no JSON form")));
                }
            }
        }
        map.end()
    }
}
