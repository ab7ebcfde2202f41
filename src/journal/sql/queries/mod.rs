//! All SQL of the journal, and the mapping between rows and model types.
//!
//! Functions here take a connection of the store seam ([`Tx`](super::Tx), inside a transaction
//! or not) and return [`DbResult`]; the operation files run them through the journal's store,
//! which wraps them in transactions and maps errors. The SQL runs on SQLite and PostgreSQL alike
//! (`?N` parameters, `COALESCE`, `CASE` rather than two-argument `MAX` or a boolean read as an
//! integer, sums cast to `BIGINT`); where the two truly differ (JSON functions), a statement
//! picks its text by [`Db::dialect`](super::Db::dialect). A one-row insert that returns its id
//! runs through [`Db::insert_id`](super::Db::insert_id), which adds `RETURNING id` where the
//! store wants it. Times are unix milliseconds.
//!
//! One file per seam; this module holds the row conversions they share and names their
//! functions as one face (`queries::…`).

mod agents;
mod artifacts;
mod attempts;
mod events;
mod group;
mod group_writes;
mod health;
mod inspect;
mod operator;
mod passes;
mod replies;
mod row_facts;
mod steps;

pub(in crate::journal) use agents::*;
pub(in crate::journal) use artifacts::*;
pub(in crate::journal) use attempts::*;
pub(in crate::journal) use events::*;
pub(in crate::journal) use group::*;
pub(in crate::journal) use group_writes::*;
pub(in crate::journal) use health::*;
pub(in crate::journal) use inspect::*;
pub(in crate::journal) use operator::*;
pub(in crate::journal) use passes::*;
pub(in crate::journal) use replies::*;
pub(in crate::journal) use steps::*;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::journal::sql::{DbError, DbResult, Dialect, Row};

/// Converts a time to stored unix milliseconds.
pub(in crate::journal) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(in crate::journal) fn time(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn parse_col<T>(row: &Row<'_>, idx: usize) -> DbResult<T>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    row.str(idx)?
        .parse()
        .map_err(|e| DbError::conversion(idx, e))
}

fn parse_opt<T>(row: &Row<'_>, idx: usize) -> DbResult<Option<T>>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    row.opt_str(idx)?
        .map(|s| s.parse().map_err(|e| DbError::conversion(idx, e)))
        .transpose()
}

fn json_opt(row: &Row<'_>, idx: usize) -> DbResult<Option<Value>> {
    row.opt_str(idx)?
        .map(|s| serde_json::from_str(s).map_err(|e| DbError::conversion(idx, e)))
        .transpose()
}

fn to_json(v: Option<&Value>) -> Option<String> {
    v.map(Value::to_string)
}

/// The rows of a JSON array parameter (`?N`, text), as a subquery of one column `value`:
/// the items as text, or as integers with `int`. (PostgreSQL reads the parameter as text, then
/// as `jsonb`: the parameter's own type stays text.)
pub(in crate::journal) fn json_items(d: Dialect, param: &str, int: bool) -> String {
    match (d, int) {
        (Dialect::Sqlite, _) => format!("SELECT value FROM json_each({param})"),
        (Dialect::Postgres, false) => format!(
            "SELECT value FROM jsonb_array_elements_text(CAST(CAST({param} AS TEXT) AS jsonb)) \
             AS j (value)"
        ),
        (Dialect::Postgres, true) => format!(
            "SELECT CAST(value AS BIGINT) \
             FROM jsonb_array_elements_text(CAST(CAST({param} AS TEXT) AS jsonb)) AS j (value)"
        ),
    }
}

/// The text of a JSON object column's member `key` (NULL when absent): `json_extract` on
/// SQLite, `->>` on PostgreSQL.
fn json_member(d: Dialect, column: &str, key: &str) -> String {
    match d {
        Dialect::Sqlite => format!("json_extract({column}, '$.{key}')"),
        Dialect::Postgres => format!("(CAST({column} AS jsonb) ->> '{key}')"),
    }
}
