//! `Journal::copy_into` over many rows: pages, text keys in byte order on both stores, large
//! values, identity counters moved past the copied ids, and the moved mark.

use super::*;

use super::journal_dump::content;
use super::pg as harness;
use crate::journal::sql::args;

#[test]
fn journal_copy_pages_through_many_rows_both_ways() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    let a = created(&j, "big/one");
    {
        let c = j.store.sqlite().lock();
        for i in 0..700 {
            c.execute(
                "INSERT INTO workflows (name, plan_json, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?3)",
                rusqlite::params![format!("w-{i:04}-é\"'"), format!("{{\"n\":{i}}}"), i],
            )
            .unwrap();
        }
        // Text keys whose byte order differs from a language's: upper before lower, `_`, `é`.
        // Some values are large, so pages shrink to stay within their byte budget.
        let big = "x".repeat(1 << 20);
        for (i, id) in ["b", "B", "_x", "é", "a", "Z", "a b", "ab", "A", "-"]
            .iter()
            .cycle()
            .take(300)
            .enumerate()
        {
            let parts = if i % 50 == 0 {
                big.clone()
            } else {
                format!("[{i}]")
            };
            c.execute(
                "INSERT INTO artifacts (attempt_id, artifact_id, parts_json, created_at, \
                 updated_at) VALUES (?1, ?2, ?3, 1, 2)",
                rusqlite::params![a.id.0, format!("{id}{i}"), parts],
            )
            .unwrap();
        }
        c.execute(
            "UPDATE agents SET max_rate = 2.5, accepts_context_id = 1",
            [],
        )
        .unwrap();
    }
    let original = content(&path);

    let pg = Location::parse(Path::new(&harness::pg_url())).unwrap();
    let on_pg = Journal::open_at(&pg, T).unwrap();
    let report = j.copy_into(&on_pg).unwrap();
    let count = |r: &CopyReport, t: &str| r.tables.iter().find(|(n, _)| n == t).unwrap().1;
    assert_eq!(count(&report, "workflows"), 701);
    assert_eq!(count(&report, "artifacts"), 300);
    // Analyzed with the copy: the planner knows the rows (a table never analyzed has -1).
    let planned: i64 = on_pg
        .store
        .read("read the statistics", |db| {
            db.opt_row(
                "SELECT CAST(reltuples AS BIGINT) FROM pg_catalog.pg_class \
                 WHERE oid = CAST('workflows' AS regclass)",
                args![],
                |r| r.get(0),
            )
        })
        .unwrap()
        .unwrap();
    assert_eq!(planned, 701);
    // Foreign-key order: a table comes after those it references.
    let pos = |t: &str| report.tables.iter().position(|(n, _)| n == t).unwrap();
    assert!(pos("workflows") < pos("steps") && pos("steps") < pos("attempts"));
    assert!(pos("attempts") < pos("artifacts") && pos("artifacts") < pos("artifact_chunks"));
    // The source is marked.
    drop(j);
    assert!(matches!(
        Journal::open(&path, T),
        Err(JournalError::Moved { ref to, .. }) if *to == pg.to_string()
    ));

    let back = path.with_file_name("back.sqlite3");
    let on_file = Journal::open(&back, T).unwrap();
    on_pg.copy_into(&on_file).unwrap();
    assert_eq!(content(&back), original);
    // The artifacts' insertion order (SQLite's rowid, PostgreSQL's `id`), which reads sort
    // by, came back too: it is not their key order.
    let order = |p: &Path| -> Vec<(i64, String)> {
        let c = Connection::open(p).unwrap();
        let mut stmt = c
            .prepare("SELECT rowid, artifact_id FROM artifacts ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = order(&path);
    assert_eq!(order(&back), before);
    let mut by_key = before.clone();
    by_key.sort_by(|a, b| a.1.cmp(&b.1));
    assert_ne!(by_key, before, "insertion order differs from key order");
    drop(on_pg);
    assert!(matches!(
        Journal::open_at(&pg, T),
        Err(JournalError::Moved { .. })
    ));

    // A copy on PostgreSQL takes new rows with fresh ids: its counters were moved past.
    let pg2 = Location::parse(Path::new(&harness::pg_url())).unwrap();
    let again = Journal::open_at(&pg2, T).unwrap();
    on_file.copy_into(&again).unwrap();
    let later = created(&again, "big/later");
    assert!(later.id.0 > a.id.0, "{later:?}");
    let w = again
        .create_intents(&[intent("fresh/wf", "go", "http://127.0.0.1:9/")])
        .unwrap();
    assert!(matches!(w[0], IntentOutcome::Created(_)));
}

/// Runs `sql` on a PostgreSQL journal's own connection.
fn pg_batch(j: &Journal, sql: &str) {
    match &j.store {
        store::Store::Postgres(s) => {
            use crate::journal::sql::Db as _;
            s.lock().batch(sql).unwrap();
        }
        store::Store::Sqlite(_) => panic!("a PostgreSQL journal"),
    }
}

/// Whether any of the journal's tables holds a row.
fn holds_rows(j: &Journal) -> bool {
    j.read("test", |db| {
        let mut any = false;
        for t in sql::catalog::tables(db)? {
            any |= sql::catalog::has_rows(db, &t.name)?;
        }
        Ok(any)
    })
    .unwrap()
}

fn chain(e: &JournalError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[test]
fn journal_copy_into_postgres_failing_half_way_leaves_it_empty_and_the_source_unmarked() {
    let (_dir, path) = tmp_journal();
    let j = Journal::open(&path, T).unwrap();
    for i in 0..5 {
        created(&j, &format!("w/s{i}"));
    }
    // A row refused half-way (the events come after every table they reference), then the
    // target's connection killed half-way: each rolls everything back.
    for (name, body) in [
        ("refuse", "RAISE EXCEPTION 'refused by the test'"),
        ("kill", "PERFORM pg_terminate_backend(pg_backend_pid())"),
    ] {
        let pg = Location::parse(Path::new(&harness::pg_url())).unwrap();
        let target = Journal::open_at(&pg, T).unwrap();
        pg_batch(
            &target,
            &format!(
                "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS \
                 $$ BEGIN {body}; RETURN NEW; END $$; \
                 CREATE TRIGGER {name} BEFORE INSERT ON events FOR EACH ROW \
                 WHEN (NEW.id = 3) EXECUTE FUNCTION {name}()"
            ),
        );
        let err = j.copy_into(&target).unwrap_err();
        if name == "refuse" {
            assert!(
                chain(&err).contains("refused by the test"),
                "{}",
                chain(&err)
            );
        }
        drop(target);
        let target = Journal::open_at(&pg, T).unwrap();
        assert!(!holds_rows(&target), "{name}: nothing was committed");
        // The source is not marked.
        drop(Journal::open(&path, T).unwrap());
    }
}
