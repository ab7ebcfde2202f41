//! The PostgreSQL driver against a real server (`scripts/test` starts one; a missing server
//! fails these tests, never skips them). Each test works in a schema of its own.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::conn::{ClientTimeout, PgConn};
use super::url::PgUrl;
use super::{PgStore, locks};
use crate::journal::JournalError;
use crate::journal::migrate::LATEST;
use crate::journal::sql::{Arg, Db, DbResult, Stmt, Value};

use crate::journal::tests::pg as harness;
use harness::{pg_password, pg_server_url, pg_url, with_params};

const TIMEOUT: Duration = Duration::from_secs(20);

fn parse(url: &str) -> PgUrl {
    PgUrl::parse(url).unwrap()
}

fn open(url: &PgUrl) -> (PgStore, i64) {
    PgStore::open(url, TIMEOUT).unwrap_or_else(|e| panic!("{}", report(&e)))
}

/// An error as an operator reads it: message, hint, and the chain of sources.
fn report(e: &JournalError) -> String {
    let mut text = match e {
        JournalError::Storage { hint, .. } => format!("{e}; hint: {hint:?}"),
        _ => e.to_string(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let _ = write!(text, "; {s}");
        source = s.source();
    }
    text
}

/// Every row of `sql`, each column rendered as text.
fn try_rows(conn: &PgConn, sql: &str, args: &[Arg<'_>]) -> DbResult<Vec<Vec<String>>> {
    let mut out = Vec::new();
    conn.each(sql, args, &mut |row| {
        let mut cols = Vec::new();
        let mut i = 0;
        while let Ok(v) = row.0.value(i) {
            cols.push(format!("{v:?}"));
            i += 1;
        }
        out.push(cols);
        Ok(())
    })?;
    Ok(out)
}

fn rows(conn: &PgConn, sql: &str, args: &[Arg<'_>]) -> Vec<Vec<String>> {
    try_rows(conn, sql, args).unwrap()
}

/// The first row of `sql`.
fn one(conn: &PgConn, sql: &str, args: &[Arg<'_>]) -> DbResult<Vec<String>> {
    try_rows(conn, sql, args)?
        .into_iter()
        .next()
        .ok_or(crate::journal::sql::DbError::NoRows)
}

#[test]
fn postgres_opens_a_new_schema_and_migrates_once() {
    let url = parse(&pg_url());
    let (store, had) = open(&url);
    assert_eq!(had, 0);
    let conn = store.lock();
    let applied = rows(
        &conn,
        "SELECT version, name FROM schema_migrations ORDER BY version",
        &[],
    );
    assert_eq!(applied.len(), LATEST as usize);
    assert_eq!(applied[0], ["Int(1)", "Text(\"0001_init\")"]);
    drop(conn);
    drop(store);

    // Again: nothing to do, the version stays.
    let (store, had) = open(&url);
    assert_eq!(had, LATEST);
    let n = one(&store.lock(), "SELECT count(*) FROM schema_migrations", &[]).unwrap();
    assert_eq!(n, [format!("Int({LATEST})")]);
}

/// The tables, columns and indexes of the two stores, by name.
#[test]
fn postgres_schema_has_sqlites_tables_columns_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    std::fs::File::create(&path).unwrap();
    let (sqlite, _) = crate::journal::sqlite::Store::open(&path, TIMEOUT).unwrap();
    let mut want: BTreeMap<String, Vec<String>> = BTreeMap::new();
    {
        let conn = sqlite.lock();
        let mut tables = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap();
        let names: Vec<String> = tables
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for t in names {
            let mut cols = conn
                .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                .unwrap();
            let cols: Vec<String> = cols
                .query_map([&t], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            want.insert(t, cols);
        }
        let mut idx = conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL \
                 ORDER BY name",
            )
            .unwrap();
        let idx: Vec<String> = idx
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        want.insert("(indexes)".to_owned(), idx);
    }

    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let conn = store.lock();
    let schema = Arg::Text(url.schema().into());
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    conn.each(
        "SELECT table_name::text, column_name::text FROM information_schema.columns \
         WHERE table_schema = ?1 AND table_name <> 'schema_migrations' \
         ORDER BY table_name, ordinal_position",
        std::slice::from_ref(&schema),
        &mut |row| {
            let (Value::Text(t), Value::Text(c)) = (row.0.value(0)?, row.0.value(1)?) else {
                panic!("text columns");
            };
            got.entry(t.to_owned()).or_default().push(c.to_owned());
            Ok(())
        },
    )
    .unwrap();
    // Named indexes only: SQLite's automatic ones (UNIQUE, PRIMARY KEY) have no SQL.
    let mut idx = Vec::new();
    conn.each(
        "SELECT indexname::text FROM pg_indexes WHERE schemaname = ?1 \
         AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key' ORDER BY indexname",
        &[schema],
        &mut |row| {
            if let Value::Text(t) = row.0.value(0)? {
                idx.push(t.to_owned());
            }
            Ok(())
        },
    )
    .unwrap();
    got.insert("(indexes)".to_owned(), idx);
    // PostgreSQL's one addition: `artifacts.id`, the insertion order SQLite's rowid gives.
    let artifacts = got.get_mut("artifacts").unwrap();
    assert_eq!(artifacts.remove(0), "id");
    assert_eq!(got, want);
}

#[test]
fn postgres_two_hosts_migrating_at_once_take_turns() {
    let url = parse(&pg_url());
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::open(&url, TIMEOUT).map(|(_, had)| had))
        })
        .collect();
    let had: Vec<i64> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap()
                .unwrap_or_else(|e| panic!("{}", report(&e)))
        })
        .collect();
    // Every opener saw a blank schema or a complete one, never a half-migrated one.
    assert!(had.iter().all(|v| *v == 0 || *v == LATEST), "{had:?}");
    let (store, _) = open(&url);
    let n = one(&store.lock(), "SELECT count(*) FROM schema_migrations", &[]).unwrap();
    assert_eq!(n, [format!("Int({LATEST})")]);
}

#[test]
fn postgres_schema_newer_than_the_binary_is_refused_for_writes() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    store
        .transaction("pretend to be newer", |conn, e| {
            conn.exec(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, 'future', 0)",
                &[Arg::Int(LATEST + 1)],
            )
            .map_err(e)?;
            Ok(((), true))
        })
        .unwrap();
    drop(store);

    let (store, had) = open(&url);
    assert_eq!(had, LATEST + 1);
    let err = store
        .transaction("write", |_, _| Ok(((), true)))
        .unwrap_err();
    assert!(
        matches!(err, JournalError::NewerVersion { found, known, .. } if found == LATEST + 1 && known == LATEST),
        "{err:?}"
    );
    // Reads work; the session itself refuses writes too.
    let n = store
        .read("count", |c| one(c, "SELECT count(*) FROM workflows", &[]))
        .unwrap();
    assert_eq!(n, ["Int(0)"]);
    let refused = store
        .read("write anyway", |c| c.exec("DELETE FROM workflows", &[]))
        .unwrap_err();
    assert!(
        report(&refused).contains("read-only"),
        "{}",
        report(&refused)
    );
}

#[test]
fn postgres_a_foreign_schema_is_not_a_journal() {
    let url = parse(&pg_url());
    let conn = PgConn::connect(&url, TIMEOUT).unwrap();
    conn.batch(&format!(
        "CREATE SCHEMA {s}; CREATE TABLE {s}.other (x int)",
        s = url.schema()
    ))
    .unwrap();
    let err = PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err();
    assert!(matches!(err, JournalError::NotAJournal { .. }), "{err:?}");
}

#[test]
fn postgres_values_round_trip_by_column_type() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let conn = store.lock();
    conn.batch(
        "CREATE TABLE t (i BIGINT, i4 INTEGER, i2 SMALLINT, flag BOOLEAN, r DOUBLE PRECISION, \
         r4 REAL, s TEXT, v VARCHAR(10), j JSONB, b BYTEA, n NUMERIC)",
    )
    .unwrap();
    let blob = [0_u8, 1, 255];
    let changed = conn
        .exec(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11), \
             (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
            &[
                Arg::Int(i64::MAX),
                Arg::Int(-7),
                Arg::Int(3),
                Arg::Int(1),
                Arg::Real(2.5),
                Arg::Real(0.25),
                Arg::Text("it's ?1".into()),
                Arg::Text("short".into()),
                Arg::Text(r#"{"a": [1, "x"]}"#.into()),
                Arg::Blob(&blob),
                Arg::Int(-12_345_678_901),
            ],
        )
        .unwrap();
    assert_eq!(changed, 2);
    let got = rows(&conn, "SELECT * FROM t ORDER BY i NULLS LAST", &[]);
    assert_eq!(
        got[0],
        [
            format!("Int({})", i64::MAX),
            "Int(-7)".into(),
            "Int(3)".into(),
            "Int(1)".into(),
            "Real(2.5)".into(),
            "Real(0.25)".into(),
            "Text(\"it's ?1\")".into(),
            "Text(\"short\")".into(),
            "Text(\"{\\\"a\\\": [1, \\\"x\\\"]}\")".into(),
            "Blob([0, 1, 255])".into(),
            "Int(-12345678901)".into(),
        ]
    );
    assert!(got[1].iter().all(|c| c == "Null"), "{:?}", got[1]);
    // A sum of BIGINT is NUMERIC: read as an integer when it is one.
    let sum = one(&conn, "SELECT sum(i2), avg(r), count(*) FROM t", &[]).unwrap();
    assert_eq!(sum, ["Int(3)", "Real(2.5)", "Int(2)"]);
    // Lenient binding: an integer into a TEXT parameter, text into an INTEGER one.
    let lenient = one(
        &conn,
        "SELECT count(*) FROM t WHERE s <> ?1 AND i4 = ?2",
        &[Arg::Int(5), Arg::Text("-7".into())],
    )
    .unwrap();
    assert_eq!(lenient, ["Int(1)"]);
    // Out of range for an INTEGER parameter: an error, not a wrapped value.
    let err = conn
        .exec("UPDATE t SET i4 = ?1", &[Arg::Int(i64::from(i32::MAX) + 1)])
        .unwrap_err();
    assert!(format!("{err:?}").contains("does not fit"), "{err:?}");
}

#[test]
fn postgres_placeholders_become_dollar_parameters_once_per_statement() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let conn = store.lock();
    let args: Vec<Arg<'_>> = (1..=10).map(Arg::Int).collect();
    let sql = "SELECT ?1::bigint + ?2 + ?3 + ?4 + ?5 + ?6 + ?7 + ?8 + ?9, ?10::bigint, '?1'";
    for _ in 0..3 {
        let got = one(&conn, sql, &args).unwrap();
        assert_eq!(got, ["Int(45)", "Int(10)", "Text(\"?1\")"]);
    }
    // Prepared once: the server holds one statement for the text.
    let prepared = one(
        &conn,
        "SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, ?1) > 0",
        &[Arg::Text("$10::bigint, '?1'".into())],
    )
    .unwrap();
    assert_eq!(prepared, ["Int(1)"]);
}

#[test]
fn postgres_transaction_commits_only_what_changed() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let insert = |name: &'static str, changed: bool| {
        store.transaction("add a workflow", move |conn, e| {
            conn.exec(
                "INSERT INTO workflows (name, created_at, updated_at) VALUES (?1, 0, 0)",
                &[Arg::Text(name.into())],
            )
            .map_err(e)?;
            Ok(((), changed))
        })
    };
    insert("kept", true).unwrap();
    insert("unchanged", false).unwrap();
    let failing = store.transaction("fail", |conn, e| {
        conn.exec(
            "INSERT INTO workflows (name, created_at, updated_at) VALUES ('failed', 0, 0)",
            &[],
        )
        .map_err(e)?;
        Err::<((), bool), _>(JournalError::UnknownWorkflow("x".into()))
    });
    assert!(matches!(failing, Err(JournalError::UnknownWorkflow(_))));
    // A statement that failed inside, its error swallowed: the transaction cannot commit.
    let swallowed = store.transaction("swallow", |conn, _| {
        let _ = conn.exec(
            "INSERT INTO workflows (name, created_at, updated_at) VALUES ('kept', 0, 0)",
            &[],
        );
        Ok(((), true))
    });
    assert!(swallowed.is_err());
    let names = store
        .read("names", |c| {
            Ok(rows(c, "SELECT name FROM workflows ORDER BY id", &[]))
        })
        .unwrap();
    assert_eq!(names, [["Text(\"kept\")"]]);
}

#[test]
fn postgres_a_pipeline_runs_its_statements_in_order() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let insert = |name: String| Stmt {
        sql: "INSERT INTO workflows (name, created_at, updated_at) VALUES (?1, 0, 0) RETURNING id"
            .into(),
        args: vec![Arg::Text(name.into())],
        rows: true,
    };
    // More statements than a small join polls one by one; the last reads what the others wrote.
    let mut stmts: Vec<Stmt<'_>> = (0..100).map(|i| insert(format!("w{i}"))).collect();
    stmts.push(Stmt {
        sql: "SELECT name FROM workflows ORDER BY id".into(),
        args: Vec::new(),
        rows: true,
    });
    let (ids, names) = store
        .transaction("add workflows", |conn, e| {
            let (mut ids, mut names) = (Vec::new(), Vec::new());
            conn.pipeline(&stmts, &mut |i, row| {
                if i < 100 {
                    ids.push((i, row.get::<i64>(0)?));
                } else {
                    names.push(row.get::<String>(0)?);
                }
                Ok(())
            })
            .map_err(e)?;
            Ok(((ids, names), true))
        })
        .unwrap();
    assert_eq!(ids.len(), 100);
    assert!(
        ids.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
        "{ids:?}"
    );
    let expected: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
    assert_eq!(names, expected);
    // A statement that fails fails the pipeline, and nothing of its transaction is kept.
    let failing = store.transaction("add again", |conn, e| {
        let stmts = [
            insert("x1".to_owned()),
            insert("w0".to_owned()),
            insert("x2".to_owned()),
        ];
        conn.pipeline(&stmts, &mut |_, _| Ok(())).map_err(e)?;
        Ok(((), true))
    });
    assert!(failing.is_err());
    let count = |name: &'static str| {
        store
            .read("count", |c| {
                Ok(rows(
                    c,
                    "SELECT count(*) FROM workflows WHERE name = ?1",
                    &[Arg::Text(name.into())],
                ))
            })
            .unwrap()
    };
    assert_eq!(count("x1"), [["Int(0)"]]);
    // The connection goes on.
    store
        .transaction("add one", |conn, e| {
            conn.pipeline(&[insert("x3".to_owned())], &mut |_, _| Ok(()))
                .map_err(e)?;
            Ok(((), true))
        })
        .unwrap();
    assert_eq!(count("x3"), [["Int(1)"]]);
}

#[test]
fn postgres_lock_timeout_is_busy() {
    let url = parse(&pg_url());
    let (holder, _) = open(&url);
    let (waiter, _) = PgStore::open(&url, Duration::from_millis(200)).unwrap();
    let held = holder.lock();
    held.batch("BEGIN; LOCK TABLE workflows IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let err = waiter
        .read("count", |c| one(c, "SELECT count(*) FROM workflows", &[]))
        .unwrap_err();
    assert!(matches!(err, JournalError::Busy { .. }), "{}", report(&err));
    held.batch("ROLLBACK").unwrap();
}

#[test]
fn postgres_advisory_locks_exclude_other_sessions() {
    let url = parse(&pg_url());
    let s = url.schema();
    let a = PgConn::connect(&url, TIMEOUT).unwrap();
    let b = PgConn::connect(&url, TIMEOUT).unwrap();

    // Workflow locks: one holder each; other workflows stay free.
    assert!(locks::try_lock_workflow(&a, s, "trip-1").unwrap());
    assert!(!locks::try_lock_workflow(&b, s, "trip-1").unwrap());
    assert!(locks::try_lock_workflow(&b, s, "trip-2").unwrap());
    // The whole journal excludes every workflow lock, and the other way round.
    assert!(!locks::try_lock_journal(&a, s).unwrap());
    assert!(locks::unlock_workflow(&b, s, "trip-2").unwrap());
    assert!(!locks::unlock_workflow(&b, s, "trip-2").unwrap());
    assert!(!locks::try_lock_journal(&b, s).unwrap());
    assert!(locks::unlock_workflow(&a, s, "trip-1").unwrap());
    assert!(locks::try_lock_journal(&b, s).unwrap());
    assert!(!locks::try_lock_workflow(&a, s, "trip-1").unwrap());
    assert!(!locks::try_lock_journal(&a, s).unwrap());
    // Another schema's locks are apart.
    assert!(locks::try_lock_journal(&a, "another_schema").unwrap());
    assert!(locks::unlock_journal(&b, s).unwrap());
    assert!(locks::try_lock_workflow(&a, s, "trip-1").unwrap());

    // A session that ends (a killed process) releases its locks with it.
    drop(a);
    let mut free = false;
    for _ in 0..500 {
        if locks::try_lock_workflow(&b, s, "trip-1").unwrap() {
            free = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(free, "the lock outlived its session");
}

#[test]
fn postgres_wrong_password_never_shows() {
    let server = url::Url::parse(&pg_server_url()).unwrap();
    let mut wrong = server.clone();
    wrong.set_password(Some("Wr0ngPassw0rdXyz")).unwrap();
    let url = parse(&with_params(wrong.as_str(), "schema=t_wrong"));
    let err = PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err();
    let text = report(&err);
    assert!(!text.contains("Wr0ngPassw0rdXyz"), "{text}");
    assert!(!text.contains(&pg_password()), "{text}");
    assert!(text.contains("password"), "{text}");
    assert!(text.contains(url.redacted()), "{text}");
}

#[test]
fn postgres_refused_connection_names_the_url_without_password() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = parse(&format!(
        "postgres://someone:Secr3tValue@127.0.0.1:{port}/db?connect_timeout=5"
    ));
    let err = PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err();
    let text = report(&err);
    assert!(!text.contains("Secr3tValue"), "{text}");
    assert!(
        text.contains(&format!("postgres://someone@127.0.0.1:{port}/db")),
        "{text}"
    );
    assert!(text.contains("reachable"), "{text}");
}

#[test]
fn postgres_sslmode_require_against_a_server_without_tls_fails_clearly() {
    let url = parse(&with_params(&pg_url(), "sslmode=require"));
    let err = PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err();
    let text = report(&err);
    assert!(text.contains("does not offer TLS"), "{text}");
    assert!(!text.contains(&pg_password()), "{text}");
}

/// A second test server, speaking TLS with a certificate made here: stopped when dropped.
struct TlsServer {
    /// Its URL, with the password (no schema).
    url: String,
    dir: String,
    /// The CA that signed the server's certificate, and the certificates' directory.
    ca: std::path::PathBuf,
    _certs: tempfile::TempDir,
}

impl TlsServer {
    /// Makes a CA and a certificate for `127.0.0.1` only, and starts a server with it.
    fn start() -> Self {
        let certs = tempfile::tempdir().unwrap();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "a2a-recover test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        let ca = certs.path().join("ca.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        std::fs::write(certs.path().join("server.crt"), cert.pem()).unwrap();
        std::fs::write(certs.path().join("server.key"), key.serialize_pem()).unwrap();

        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pg-test-server");
        let out = std::process::Command::new(script)
            .arg("start")
            .env("A2A_RECOVER_PG_SSL_CERT", certs.path().join("server.crt"))
            .env("A2A_RECOVER_PG_SSL_KEY", certs.path().join("server.key"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script} start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let var = |name: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                .unwrap_or_else(|| panic!("no {name} in {stdout}"))
                .to_owned()
        };
        Self {
            url: var("A2A_RECOVER_TEST_PG_URL"),
            dir: var("A2A_RECOVER_TEST_PG_DIR"),
            ca,
            _certs: certs,
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pg-test-server");
        let _ = std::process::Command::new(script)
            .args(["stop", &self.dir])
            .status();
    }
}

/// Whether the session runs over TLS.
fn on_tls(store: &PgStore) -> bool {
    one(
        &store.lock(),
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        &[],
    )
    .unwrap()
        == ["Int(1)"]
}

#[test]
fn postgres_tls_verifies_the_server_certificate_and_name() {
    let server = TlsServer::start();
    let ca = server.ca.display();
    let schema = harness::fresh_schema();

    // The CA named: verified, and the session is encrypted (`require` and `prefer` alike).
    for mode in ["require", "verify-full", "prefer"] {
        let url = parse(&with_params(
            &server.url,
            &format!("schema={schema}&sslmode={mode}&sslrootcert={ca}"),
        ));
        let (store, _) = open(&url);
        assert!(on_tls(&store), "{mode}");
    }

    // Without the CA (the Mozilla roots only), the self-made certificate is refused: require
    // verifies, unlike libpq's.
    let password = url::Url::parse(&server.url)
        .unwrap()
        .password()
        .unwrap()
        .to_owned();
    let url = parse(&with_params(
        &server.url,
        &format!("schema={schema}&sslmode=require"),
    ));
    let text = report(&PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err());
    assert!(text.contains("TLS failed"), "{text}");
    assert!(!text.contains(&password), "{text}");

    // The right CA, but another name than the certificate's (localhost, not 127.0.0.1).
    let by_name = server.url.replace("@127.0.0.1:", "@localhost:");
    let url = parse(&with_params(
        &by_name,
        &format!("schema={schema}&sslmode=require&sslrootcert={ca}"),
    ));
    let text = report(&PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err());
    assert!(text.contains("TLS failed"), "{text}");

    // A CA file that cannot be read: a clear error before any connection.
    let url = parse(&with_params(
        &server.url,
        &format!("schema={schema}&sslmode=require&sslrootcert=/nonexistent/ca.pem"),
    ));
    let text = report(&PgStore::open(&url, TIMEOUT).map(|_| ()).unwrap_err());
    assert!(text.contains("/nonexistent/ca.pem"), "{text}");
}

/// Every shared statement whose text depends on the dialect (and a few that do not), as the
/// recording connection of the seam's tests collects them: the server parses, types and plans
/// each in a migrated schema. A parameter PostgreSQL cannot type, a SQLite-only function or a
/// missing column fails here, before any journal operation reaches it.
#[test]
fn postgres_prepares_every_dialect_statement() {
    let url = parse(&pg_url());
    let (store, _) = open(&url);
    let conn = store.lock();
    let statements = crate::journal::sql::tests::statements(crate::journal::sql::Dialect::Postgres);
    assert!(statements.len() > 20, "{}", statements.len());
    let failed: Vec<String> = statements
        .iter()
        .filter_map(|sql| {
            conn.prepare(sql)
                .err()
                .map(|e| format!("{}\n  in: {sql}", report(&store.err("prepare")(e))))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Whether `e` is the client giving up on the server ([`ClientTimeout`]).
fn is_client_timeout(e: &crate::journal::sql::DbError) -> bool {
    matches!(e, crate::journal::sql::DbError::Backend(b) if b.downcast_ref::<ClientTimeout>().is_some())
}

#[test]
fn postgres_a_request_past_the_client_timeout_abandons_the_connection() {
    let url = parse(&pg_url());
    let wait = Duration::from_millis(300);
    let conn = PgConn::connect(&url, wait).unwrap();
    assert_eq!(one(&conn, "SELECT 1", &[]).unwrap(), ["Int(1)"]);
    // No statement_timeout on this bare connection: only the client's own wait ends it.
    let started = std::time::Instant::now();
    let err = conn.batch("SELECT pg_sleep(3)").unwrap_err();
    assert!(is_client_timeout(&err), "{err:?}");
    assert!(started.elapsed() >= wait);
    // Its state unknown, the connection sends nothing more.
    let err = one(&conn, "SELECT 1", &[]).unwrap_err();
    assert!(is_client_timeout(&err), "{err:?}");
}
