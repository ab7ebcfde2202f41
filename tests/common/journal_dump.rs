//! A SQLite journal file's logical content, for tests that compare two journals (`journal
//! copy` there and back). Also compiled into the library's unit tests
//! (`src/journal/tests/mod.rs`), so it uses only std and the library's own dependencies.

use std::collections::BTreeMap;
use std::path::Path;

/// Every table's rows (`moved` apart), each row rendered, sorted: the journal's logical
/// content, as a SQLite file holds it.
pub fn content(path: &Path) -> BTreeMap<String, Vec<String>> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'table' \
             AND name NOT LIKE 'sqlite_%' AND name <> 'moved' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
            let width = stmt.column_count();
            let mut rows: Vec<String> = stmt
                .query_map([], |r| {
                    (0..width)
                        .map(|i| r.get::<_, rusqlite::types::Value>(i))
                        .collect::<Result<Vec<_>, _>>()
                })
                .unwrap()
                .map(|r| format!("{:?}", r.unwrap()))
                .collect();
            rows.sort();
            (t, rows)
        })
        .collect()
}
