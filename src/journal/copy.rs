//! `journal copy`: a journal copied into another store (SQLite to PostgreSQL and back), verified
//! row by row, all or nothing, then the source marked as moved.
//!
//! The copy runs inside two write transactions, one on each side: the source's (which keeps
//! every other writer out while its rows are read, and in which the moved mark is written) and
//! the target's, nested in it. Inside the target's, every table is copied in foreign-key order,
//! its rows in primary-key order with their ids, a page at a time (memory stays bounded); then
//! both sides are read again in key order and compared value by value. Only then does the
//! target commit (on PostgreSQL after an `ANALYZE` of each table: the planner's statistics of
//! the copied rows), and after it the source, with its mark. A failure anywhere before rolls both
//! back: the target holds nothing, the source is not marked. (Between the two commits a crash
//! leaves a complete copy and an unmarked source: `journal copy` refuses the non-empty target if
//! run again, and the operator deletes one of them.)
//!
//! The tables are the store catalogue's, not a list kept here (`sql/catalog.rs`): both sides
//! must hold the same tables and columns, which they do at the same schema version.

use std::collections::BTreeSet;

use super::sql::catalog::{self, NOT_COPIED, Owned, OwnedRow, Table};
use super::sql::{DbError, Tx};
use super::{Journal, JournalError};

/// How many bytes one page of rows may hold, roughly (the next page is sized by the last).
const PAGE_BYTES: usize = 4 << 20;
/// The most rows of one page.
const PAGE_ROWS: usize = 256;
/// The rows of a table's first page.
const FIRST_PAGE: usize = 32;

/// What [`Journal::copy_into`] copied: rows per table, in the order they were copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// Each table's name and how many rows it got.
    pub tables: Vec<(String, u64)>,
}

type ErrMap<'a> = &'a dyn Fn(DbError) -> JournalError;

impl Journal {
    /// Copies every row of this journal into `target`, which must hold no row, verifies the
    /// copy row by row, commits it, and marks this journal as moved to `target` (see the
    /// module's documentation). Both must be writable at this binary's schema version.
    pub fn copy_into(&self, target: &Journal) -> Result<CopyReport, JournalError> {
        self.writable()?;
        target.writable()?;
        let to = target.location().to_string();
        let now = self.now_ms();
        self.store.transaction("copy the journal", |src, src_err| {
            self.refuse_if_moved(src, src_err)?;
            let report = target
                .store
                .transaction("copy the journal", |dst, dst_err| {
                    let tables = self.matching_tables(target, src, dst, src_err, dst_err)?;
                    for t in catalog::tables(dst).map_err(dst_err)? {
                        if catalog::has_rows(dst, &t.name).map_err(dst_err)? {
                            return Err(JournalError::TargetNotEmpty {
                                path: target.path().to_path_buf(),
                                table: t.name,
                            });
                        }
                    }
                    let mut counts = Vec::with_capacity(tables.len());
                    for (s, d) in &tables {
                        let n = copy_table(src, dst, s, d, src_err, dst_err)?;
                        catalog::move_counters(dst, d).map_err(dst_err)?;
                        counts.push((s.name.clone(), n));
                    }
                    for (s, d) in &tables {
                        verify_table(src, dst, s, d, src_err, dst_err)
                            .map_err(|m| m.into_error(target, &s.name))?;
                    }
                    for (_, d) in &tables {
                        catalog::analyze(dst, d).map_err(dst_err)?;
                    }
                    Ok((CopyReport { tables: counts }, true))
                })?;
            catalog::mark_moved(src, &to, now).map_err(src_err)?;
            Ok((report, true))
        })
    }

    /// Fails with [`JournalError::Moved`] when this journal was moved.
    fn refuse_if_moved(&self, db: &Tx, e: ErrMap<'_>) -> Result<(), JournalError> {
        self.refuse_moved(catalog::moved(db).map_err(e)?)
    }

    /// Checks, on this journal's connection, that it was not moved (every open does).
    pub(super) fn check_not_moved(self) -> Result<Self, JournalError> {
        match self.read("read the journal's moved mark", catalog::moved) {
            Ok(found) => self.refuse_moved(found)?,
            // A newer schema may keep its mark elsewhere; what it says is its own business.
            Err(_) if matches!(self.access, super::Access::Newer(_)) => {}
            Err(e) => return Err(e),
        }
        Ok(self)
    }

    fn refuse_moved(&self, found: Option<(String, i64)>) -> Result<(), JournalError> {
        match found {
            None => Ok(()),
            Some((to, at)) => Err(JournalError::Moved {
                path: self.path().to_path_buf(),
                to,
                at: crate::clock::rfc3339(
                    chrono::DateTime::from_timestamp_millis(at).unwrap_or_default(),
                ),
            }),
        }
    }

    /// Returns the tables to copy as each side describes them, the target's columns in the
    /// source's order, in foreign-key order; fails when the two differ.
    fn matching_tables(
        &self,
        target: &Journal,
        src: &Tx,
        dst: &Tx,
        src_err: ErrMap<'_>,
        dst_err: ErrMap<'_>,
    ) -> Result<Vec<(Table, Table)>, JournalError> {
        let differ = |detail: String| JournalError::CopySchema {
            from: self.path().to_path_buf(),
            to: target.path().to_path_buf(),
            detail,
        };
        let copied = |t: &Table| !NOT_COPIED.contains(&t.name.as_str());
        let ours: Vec<Table> = catalog::tables(src)
            .map_err(src_err)?
            .into_iter()
            .filter(copied)
            .collect();
        let theirs: Vec<Table> = catalog::tables(dst)
            .map_err(dst_err)?
            .into_iter()
            .filter(copied)
            .collect();
        let names = |ts: &[Table]| ts.iter().map(|t| t.name.clone()).collect::<BTreeSet<_>>();
        if names(&ours) != names(&theirs) {
            return Err(differ(format!(
                "the source has tables {:?}, the target {:?}",
                names(&ours),
                names(&theirs)
            )));
        }
        let mut pairs = Vec::with_capacity(ours.len());
        for mut s in ours {
            let mut d = theirs
                .iter()
                .find(|d| d.name == s.name)
                .expect("the same names")
                .clone();
            // SQLite's hidden rowid is copied where the other side keeps it as `id` (or is
            // SQLite too), and left to number itself where it does not.
            let has_id = |t: &Table| t.columns.iter().any(|c| c.name == "id");
            if !has_id(&d) {
                s.columns.retain(|c| !c.rowid);
            }
            if !has_id(&s) {
                d.columns.retain(|c| !c.rowid);
            }
            let d = reorder(&d, &s).ok_or_else(|| {
                differ(format!(
                    "table `{}` has columns {:?} in the source, {:?} in the target",
                    s.name,
                    s.columns.iter().map(|c| &c.name).collect::<Vec<_>>(),
                    d.columns.iter().map(|c| &c.name).collect::<Vec<_>>()
                ))
            })?;
            if s.key.is_empty() {
                return Err(differ(format!(
                    "table `{}` has no primary key to copy it by",
                    s.name
                )));
            }
            pairs.push((s, d));
        }
        foreign_key_order(pairs).map_err(differ)
    }
}

/// Returns `d` with its columns in `s`'s order and `s`'s key, when both have the same columns
/// and key.
fn reorder(d: &Table, s: &Table) -> Option<Table> {
    if d.columns.len() != s.columns.len() {
        return None;
    }
    let columns = s
        .columns
        .iter()
        .map(|c| d.columns.iter().find(|x| x.name == c.name).cloned())
        .collect::<Option<Vec<_>>>()?;
    let key_names = |t: &Table| {
        t.key
            .iter()
            .map(|&i| t.columns[i].name.clone())
            .collect::<Vec<_>>()
    };
    if key_names(d) != key_names(s) {
        return None;
    }
    Some(Table {
        name: d.name.clone(),
        columns,
        key: s.key.clone(),
        references: d.references.clone(),
    })
}

/// Orders tables so that every table comes after those it references (ties by name).
fn foreign_key_order(mut left: Vec<(Table, Table)>) -> Result<Vec<(Table, Table)>, String> {
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let Some(i) = left.iter().position(|(s, _)| {
            s.references
                .iter()
                .all(|r| done.contains(r) || NOT_COPIED.contains(&r.as_str()))
        }) else {
            let names: Vec<&str> = left.iter().map(|(s, _)| s.name.as_str()).collect();
            return Err(format!(
                "the foreign keys of tables {names:?} form a cycle, or reference a table \
                 that is not there"
            ));
        };
        let pair = left.remove(i);
        done.insert(pair.0.name.clone());
        out.push(pair);
    }
    Ok(out)
}

/// Returns the size of the next page, from the last one's.
fn next_limit(rows: &[OwnedRow]) -> usize {
    let bytes: usize = rows.iter().flatten().map(Owned::size).sum();
    let per_row = (bytes / rows.len().max(1)).max(1);
    (PAGE_BYTES / per_row).clamp(1, PAGE_ROWS)
}

fn key_of(t: &Table, row: &OwnedRow) -> Vec<Owned> {
    t.key.iter().map(|&i| row[i].clone()).collect()
}

/// Copies `s`'s rows into `d`, a page at a time; returns how many.
fn copy_table(
    src: &Tx,
    dst: &Tx,
    s: &Table,
    d: &Table,
    src_err: ErrMap<'_>,
    dst_err: ErrMap<'_>,
) -> Result<u64, JournalError> {
    let mut after: Option<Vec<Owned>> = None;
    let mut limit = FIRST_PAGE;
    let mut n = 0u64;
    loop {
        let rows = catalog::page(src, s, after.as_deref(), limit).map_err(src_err)?;
        let Some(last) = rows.last() else { break };
        catalog::insert(dst, d, &rows).map_err(dst_err)?;
        n += rows.len() as u64;
        if rows.len() < limit {
            break;
        }
        after = Some(key_of(s, last));
        limit = next_limit(&rows);
    }
    Ok(n)
}

/// What the verification found different.
enum Verify {
    Db(JournalError),
    Differs { key: String, detail: String },
}

impl Verify {
    fn into_error(self, target: &Journal, table: &str) -> JournalError {
        match self {
            Self::Db(e) => e,
            Self::Differs { key, detail } => JournalError::CopyMismatch {
                path: target.path().to_path_buf(),
                table: table.to_owned(),
                key,
                detail,
            },
        }
    }
}

fn show_key(t: &Table, row: &OwnedRow) -> String {
    let parts: Vec<String> = t
        .key
        .iter()
        .map(|&i| format!("{}={}", t.columns[i].name, row[i]))
        .collect();
    format!("({})", parts.join(", "))
}

/// Reads both sides of one table in key order, a page at a time, and compares every value.
fn verify_table(
    src: &Tx,
    dst: &Tx,
    s: &Table,
    d: &Table,
    src_err: ErrMap<'_>,
    dst_err: ErrMap<'_>,
) -> Result<(), Verify> {
    let mut after: Option<Vec<Owned>> = None;
    let mut limit = FIRST_PAGE;
    loop {
        let ours =
            catalog::page(src, s, after.as_deref(), limit).map_err(|e| Verify::Db(src_err(e)))?;
        let theirs =
            catalog::page(dst, d, after.as_deref(), limit).map_err(|e| Verify::Db(dst_err(e)))?;
        for (i, a) in ours.iter().enumerate() {
            let Some(b) = theirs.get(i) else {
                return Err(Verify::Differs {
                    key: show_key(s, a),
                    detail: "the row is missing from the copy".to_owned(),
                });
            };
            for (c, col) in s.columns.iter().enumerate() {
                if !a[c].same(&b[c]) {
                    return Err(Verify::Differs {
                        key: show_key(s, a),
                        detail: format!(
                            "column `{}` is {} in the source, {} in the copy",
                            col.name, a[c], b[c]
                        ),
                    });
                }
            }
        }
        if let Some(extra) = theirs.get(ours.len()) {
            return Err(Verify::Differs {
                key: show_key(d, extra),
                detail: "the copy has a row the source has not".to_owned(),
            });
        }
        let Some(last) = ours.last() else {
            return Ok(());
        };
        if ours.len() < limit {
            return Ok(());
        }
        after = Some(key_of(s, last));
        limit = next_limit(&ours);
    }
}
