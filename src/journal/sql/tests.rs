//! The seam's conversions, and the dialects' texts: every query run on a recording connection
//! of each dialect, none of SQLite's own words in what PostgreSQL gets.

use std::cell::RefCell;

use super::queries::{self, PassWindow};
use super::{Arg, Db, DbError, DbResult, Dialect, FromValue, InsertId, RawRow, Row, Tx, Value};
use crate::journal::model::{
    AttemptId, CredentialSource, InspectFilter, NewReply, StepId, StepName, Target,
};

/// A connection that runs nothing: it records each statement and returns no row.
struct Recorder {
    dialect: Dialect,
    seen: RefCell<Vec<String>>,
}

impl Db for Recorder {
    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn exec(&self, sql: &str, _: &[Arg<'_>]) -> DbResult<u64> {
        self.seen.borrow_mut().push(sql.to_owned());
        Ok(0)
    }

    fn each(
        &self,
        sql: &str,
        _: &[Arg<'_>],
        _: &mut dyn FnMut(&Row<'_>) -> DbResult<()>,
    ) -> DbResult<()> {
        self.seen.borrow_mut().push(sql.to_owned());
        Ok(())
    }

    fn batch(&self, sql: &str) -> DbResult<()> {
        self.seen.borrow_mut().push(sql.to_owned());
        Ok(())
    }

    fn insert_id(&self, insert: &InsertId, _: &[Arg<'_>]) -> DbResult<i64> {
        let sql = match self.dialect {
            Dialect::Sqlite => insert.sql,
            Dialect::Postgres => insert.returning,
        };
        self.seen.borrow_mut().push(sql.to_owned());
        Ok(0)
    }
}

/// Runs the queries whose text depends on the dialect, and a few that do not; returns every
/// statement they ran (the PostgreSQL store's tests prepare each on a real server).
pub(in crate::journal) fn statements(dialect: Dialect) -> Vec<String> {
    let rec = Recorder {
        dialect,
        seen: RefCell::new(Vec::new()),
    };
    let c: &Tx = &rec;
    let workflows = ["w".to_owned()];
    let a = AttemptId(1);
    // Their results are nothing here (no row): only the statements matter.
    let _ = queries::registered_agents(c, Some("skill"));
    let _ = queries::artifact_head(c, a, "x");
    let _ = queries::artifacts_of(c, a);
    let _ = queries::artifact_sizes(c, a);
    for pending in [false, true] {
        let f = InspectFilter {
            target: Some(Target::Workflow("w".to_owned())),
            pending,
            ..InspectFilter::default()
        };
        let _ = queries::inspect(c, &f);
        let _ = queries::inspect(c, &InspectFilter::default());
    }
    let _ = queries::unfinished(c, &workflows);
    let _ = queries::workflow_summaries(c, None);
    let _ = queries::prunable_events(c, 0, 10, 0);
    let _ = queries::prune_events(c, 0, 10, 0);
    let _ = queries::agents_health(c);
    let _ = queries::agent_health(c, "u");
    let _ = queries::set_agent_health(
        c,
        &crate::journal::AgentHealth {
            card_url: "u".to_owned(),
            fetched_at: None,
            last_success_at: None,
            last_failure_at: None,
            failing_since: None,
            registered: false,
            waited_on: false,
        },
    );
    let _ = queries::card_url_of(c, "u");
    let _ = queries::unheard_attempts(c, 0, 10);
    let _ = queries::failing_agents(c, 0);
    let _ = queries::attempt_resolutions(c, None);
    let _ = queries::resolutions_of(c, &[a]);
    let _ = queries::registered_at(c, "u");
    let _ = queries::pass_rows(c, &workflows);
    let window = PassWindow {
        workflows: queries::workflows_filter(&workflows),
        skip: Some("[1]".to_owned()),
        after: 0,
        through: 10,
    };
    let _ = queries::pass_count(c, &window);
    let _ = queries::failed_for_good(c, a);
    let _ = queries::attempts_by_ids(c, &[a]);
    let _ = queries::undelivered_replies(c, &workflows);
    let _ = queries::agent_continues_replies(c, "u");
    let _ = queries::workflow_exists(c, "w");
    let _ = queries::step_by_name(c, &StepName::from_parts("w", "s"));
    let _ = queries::events_of_step(c, StepId(1));
    // One-row inserts that return their id: PostgreSQL runs them with `RETURNING id`.
    let _ = queries::insert_attempt(
        c,
        &queries::NewAttemptRow {
            step: StepId(1),
            number: 1,
            agent: None,
            token_env: None,
            token_cmd: None,
            credential_source: CredentialSource::None,
            message_id: "m",
            context_id: None,
            previous: None,
            now: 0,
        },
    );
    let _ = queries::insert_event(
        c,
        &queries::NewEvent {
            at: 0,
            workflow: None,
            step: Some(StepId(1)),
            attempt: Some(a),
            kind: "k",
            from: None,
            to: None,
            detail: None,
        },
    );
    let reply = NewReply {
        message_id: "m".to_owned(),
        text: "t".to_owned(),
        data: None,
        answers: None,
    };
    let _ = queries::insert_reply(c, a, &reply, 0);
    rec.seen.into_inner()
}

#[test]
fn postgres_gets_none_of_sqlites_own_words() {
    let sqlite = statements(Dialect::Sqlite);
    let postgres = statements(Dialect::Postgres);
    assert_eq!(sqlite.len(), postgres.len());
    let sqlite_only = [
        "json_each",
        "json_extract",
        "json_type",
        "json_valid",
        "json_array_length",
        "rowid",
        "pragma",
        "ifnull",
        "last_insert_rowid",
        "cross join",
        " is '",
        " is not ?",
    ];
    for sql in &postgres {
        let lower = sql.to_lowercase();
        for word in sqlite_only {
            assert!(!lower.contains(word), "`{word}` in PostgreSQL's\n{sql}");
        }
    }
    // The recorder saw the dialect-specific statements: SQLite's texts differ.
    let differ = sqlite.iter().zip(&postgres).filter(|(s, p)| s != p).count();
    assert!(differ >= 15, "only {differ} statements differ");
}

/// A row of fixed values.
struct Fixed(Vec<Value<'static>>);

impl RawRow for Fixed {
    fn value(&self, idx: usize) -> DbResult<Value<'_>> {
        self.0
            .get(idx)
            .copied()
            .ok_or_else(|| DbError::conversion(idx, "no such column"))
    }
}

#[test]
fn columns_convert_as_rusqlite_did() {
    let raw = Fixed(vec![
        Value::Int(7),
        Value::Null,
        Value::Text("hi"),
        Value::Int(-1),
        Value::Real(1.5),
        Value::Int(1),
        Value::Blob(b"ab"),
    ]);
    let r = Row(&raw);
    assert_eq!(r.get::<i64>(0).unwrap(), 7);
    assert_eq!(r.get::<u32>(0).unwrap(), 7);
    assert_eq!(r.get::<Option<i64>>(1).unwrap(), None);
    assert_eq!(r.get::<Option<String>>(2).unwrap().as_deref(), Some("hi"));
    assert_eq!(r.get::<f64>(0).unwrap().to_bits(), 7.0_f64.to_bits());
    assert_eq!(r.get::<f64>(4).unwrap().to_bits(), 1.5_f64.to_bits());
    assert!(r.get::<bool>(5).unwrap());
    // Any integer but 0 is true, as rusqlite read it.
    assert!(r.get::<bool>(3).unwrap());
    assert!(!Row(&Fixed(vec![Value::Int(0)])).get::<bool>(0).unwrap());
    assert_eq!(r.get::<Vec<u8>>(6).unwrap(), b"ab");
    // A wrong kind or an integer out of range names the column and what it held.
    let err = r.get::<u32>(3).unwrap_err().to_string();
    assert!(err.contains("index 3") && err.contains("-1"), "{err}");
    let err = r.get::<String>(0).unwrap_err().to_string();
    assert!(err.contains("index 0") && err.contains("integer"), "{err}");
    assert!(matches!(
        r.get::<i64>(1),
        Err(DbError::Conversion { idx: 1, .. })
    ));
    assert!(<i64 as FromValue>::from_value(Value::Real(1.0), 9).is_err());
}

#[test]
fn args_take_their_values_by_reference() {
    let name = "n".to_owned();
    let none: Option<&str> = None;
    let args = args![name, 3_u32, true, none, Some(2.5), "t"];
    assert_eq!(
        args,
        &[
            Arg::Text("n".into()),
            Arg::Int(3),
            Arg::Int(1),
            Arg::Null,
            Arg::Real(2.5),
            Arg::Text("t".into()),
        ]
    );
    assert_eq!(name, "n");
    assert_eq!(Arg::from(Some(u64::MAX)), Arg::Int(i64::MAX));
}
