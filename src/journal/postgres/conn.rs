//! One connection to the server, driven synchronously.
//!
//! The journal is synchronous and is called from inside tokio tasks of a current-thread runtime,
//! where the blocking `postgres` crate panics ("Cannot start a runtime from within a runtime").
//! So tokio-postgres's `Connection` future (the socket) runs on a thread of its own with its own
//! current-thread runtime, and each call polls the `Client`'s future on the calling thread,
//! parking it in between ([`block_on_within`]): the client only exchanges messages with that
//! thread over channels, so its futures need no reactor on the calling thread. Each wait is
//! bounded by the request timeout (the park's own timeout: no timer to arm and cancel on the
//! connection's thread per statement); past it the connection is abandoned.
//!
//! Statements are prepared once per distinct text (a cache per connection). The shared queries
//! use SQLite's `?N` placeholders, rewritten to `$N` here (outside string literals, quoted
//! identifiers and comments). Parameters are encoded by the type PostgreSQL inferred for each,
//! leniently ([`Arg`] into any integer, float, text, JSON or bool type that can hold it); columns
//! are decoded by their type into [`Value`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use futures_util::future::try_join_all;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Statement};

use super::tls::MakeRustls;
use super::url::PgUrl;
use crate::journal::sql::{
    Arg, Db, DbError, DbResult, Dialect, InsertId, RawRow, Row, Stmt, Value,
};

/// A request that got no answer within the request timeout: the connection is abandoned.
#[derive(Debug)]
pub(in crate::journal) struct ClientTimeout(pub(in crate::journal) Duration);

impl fmt::Display for ClientTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server did not answer within {}ms",
            self.0.as_millis()
        )
    }
}

impl StdError for ClientTimeout {}

/// A statement failed earlier in this transaction, so PostgreSQL aborted it.
#[derive(Debug)]
pub(in crate::journal) struct Aborted;

impl fmt::Display for Aborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a statement of this transaction failed, so it was rolled back")
    }
}

impl StdError for Aborted {}

/// The connection could not be set up (TLS configuration, the runtime thread).
#[derive(Debug)]
pub(in crate::journal) struct SetupError(pub(in crate::journal) String);

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for SetupError {}

/// Polls `fut` to completion on this thread, parked while it waits (its waker unparks the
/// thread); `None` when `timeout` passed first.
fn block_on_within<F: Future>(fut: F, timeout: Duration) -> Option<F::Output> {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let std::task::Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return Some(out);
        }
        // A wake-up that came early or for nothing only means one more poll.
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return None;
        }
        std::thread::park_timeout(left);
    }
}

/// One open connection.
pub(in crate::journal) struct PgConn {
    /// `None` only while dropping.
    client: Option<Client>,
    thread: Option<JoinHandle<()>>,
    statements: RefCell<HashMap<String, Statement>>,
    timeout: Duration,
    /// Set when a request timed out: the connection's state is unknown, so nothing more is sent.
    abandoned: Cell<bool>,
    /// Set while a transaction is open, and when a statement in it failed.
    in_transaction: Cell<bool>,
    failed_in_transaction: Cell<bool>,
}

impl PgConn {
    /// Connects (bounded by the URL's `connect_timeout`); `timeout` bounds every later request.
    pub(in crate::journal) fn connect(url: &PgUrl, timeout: Duration) -> DbResult<Self> {
        let tls = MakeRustls::new(url.root_cert()).map_err(|e| backend(SetupError(e)))?;
        let config = url.config().clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("a2a-recover-postgres".to_owned())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(backend(SetupError(format!(
                            "cannot start the connection's runtime: {e}"
                        )))));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match config.connect(tls).await {
                        Ok((client, connection)) => {
                            if tx.send(Ok(client)).is_ok()
                                && let Err(e) = connection.await
                            {
                                tracing::debug!("journal connection closed: {e}");
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Err(backend(e)));
                        }
                    }
                });
            })
            .map_err(|e| backend(SetupError(format!("cannot start a thread: {e}"))))?;
        let client = rx.recv().map_err(|_| {
            backend(SetupError(
                "the connection thread ended before connecting".to_owned(),
            ))
        })??;
        Ok(Self {
            client: Some(client),
            thread: Some(thread),
            statements: RefCell::new(HashMap::new()),
            timeout,
            abandoned: Cell::new(false),
            in_transaction: Cell::new(false),
            failed_in_transaction: Cell::new(false),
        })
    }

    fn client(&self) -> &Client {
        self.client
            .as_ref()
            .expect("the client lives until the connection is dropped")
    }

    /// Waits for `fut`, at most the request timeout.
    fn wait<T>(&self, fut: impl Future<Output = Result<T, tokio_postgres::Error>>) -> DbResult<T> {
        if self.abandoned.get() {
            return Err(backend(ClientTimeout(self.timeout)));
        }
        let timeout = self.timeout;
        // A closed connection fails the request by itself (its channel closes).
        match block_on_within(fut, timeout) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => {
                if self.in_transaction.get() {
                    self.failed_in_transaction.set(true);
                }
                Err(backend(e))
            }
            None => {
                self.abandoned.set(true);
                Err(backend(ClientTimeout(timeout)))
            }
        }
    }

    /// Returns the prepared statement for `sql` (`?N` placeholders), preparing it once.
    fn statement(&self, sql: &str) -> DbResult<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let text = rewrite_placeholders(sql);
        let statement = self.wait(self.client().prepare(&text))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Prepares `sql` without running it (tests: the server parses, plans and types it).
    #[cfg(test)]
    pub(in crate::journal) fn prepare(&self, sql: &str) -> DbResult<()> {
        self.statement(sql).map(drop)
    }

    /// Marks the start of a transaction (after `BEGIN` succeeded).
    pub(in crate::journal) fn began(&self) {
        self.in_transaction.set(true);
        self.failed_in_transaction.set(false);
    }

    /// Marks its end; returns whether a statement in it failed (then it cannot commit).
    pub(in crate::journal) fn ended(&self) -> bool {
        self.in_transaction.set(false);
        self.failed_in_transaction.replace(false)
    }

    /// Returns whether the connection can still be used.
    pub(in crate::journal) fn is_usable(&self) -> bool {
        !self.abandoned.get() && !self.client().is_closed()
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Dropping the client ends the connection future (a Terminate is sent), and with it
        // the thread; an abandoned connection is not waited for.
        drop(self.client.take());
        if let Some(thread) = self.thread.take()
            && !self.abandoned.get()
        {
            let _ = thread.join();
        }
    }
}

fn backend(e: impl StdError + Send + Sync + 'static) -> DbError {
    DbError::Backend(Box::new(e))
}

fn params<'a>(args: &'a [Arg<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

impl Db for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn exec(&self, sql: &str, args: &[Arg<'_>]) -> DbResult<u64> {
        let statement = self.statement(sql)?;
        self.wait(self.client().execute(&statement, &params(args)))
    }

    fn each(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        f: &mut dyn FnMut(&Row<'_>) -> DbResult<()>,
    ) -> DbResult<()> {
        let statement = self.statement(sql)?;
        let rows = self.wait(self.client().query(&statement, &params(args)))?;
        for row in &rows {
            f(&Row(row))?;
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> DbResult<()> {
        self.wait(self.client().batch_execute(sql))
    }

    fn insert_id(&self, insert: &InsertId, args: &[Arg<'_>]) -> DbResult<i64> {
        let db: &dyn Db = self;
        db.row(insert.returning, args, |r| r.get(0))
    }

    /// Sends every statement before waiting for any answer: tokio-postgres pipelines the
    /// requests whose futures are polled together, sending each at its first poll, and
    /// `try_join_all` polls them first in their order, so the server runs them in that order.
    /// The statements not prepared yet are prepared first, pipelined the same way.
    fn pipeline(
        &self,
        stmts: &[Stmt<'_>],
        f: &mut dyn FnMut(usize, &Row<'_>) -> DbResult<()>,
    ) -> DbResult<()> {
        let mut unprepared: Vec<&str> = Vec::new();
        {
            let cache = self.statements.borrow();
            for s in stmts {
                if !cache.contains_key(s.sql.as_ref()) && !unprepared.contains(&s.sql.as_ref()) {
                    unprepared.push(&s.sql);
                }
            }
        }
        if !unprepared.is_empty() {
            let texts: Vec<String> = unprepared.iter().map(|s| rewrite_placeholders(s)).collect();
            let client = self.client();
            let prepared = self.wait(try_join_all(texts.iter().map(|t| client.prepare(t))))?;
            let mut cache = self.statements.borrow_mut();
            for (sql, statement) in unprepared.into_iter().zip(prepared) {
                cache.insert(sql.to_owned(), statement);
            }
        }
        let statements: Vec<Statement> = {
            let cache = self.statements.borrow();
            stmts
                .iter()
                .map(|s| cache[s.sql.as_ref()].clone())
                .collect()
        };
        let params: Vec<_> = stmts.iter().map(|s| params(&s.args)).collect();
        let client = self.client();
        let answers = self.wait(try_join_all(
            stmts
                .iter()
                .zip(&statements)
                .zip(&params)
                .map(|((s, statement), p)| async move {
                    if s.rows {
                        client.query(statement, p).await
                    } else {
                        client.execute(statement, p).await.map(|_| Vec::new())
                    }
                }),
        ))?;
        for (i, rows) in answers.iter().enumerate() {
            for row in rows {
                f(i, &Row(row))?;
            }
        }
        Ok(())
    }
}

/// Rewrites SQLite's `?N` placeholders to PostgreSQL's `$N`, leaving string literals, quoted
/// identifiers and comments alone.
pub(in crate::journal) fn rewrite_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                // To the closing quote; a doubled quote is an escaped one and re-opens.
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                out.push(c);
                let mut prev = ' ';
                for d in chars.by_ref() {
                    out.push(d);
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
            }
            '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            c => out.push(c),
        }
    }
    out
}

fn mismatch(what: &str, ty: &Type) -> Box<dyn StdError + Sync + Send> {
    format!("cannot bind {what} to a parameter of type {ty}").into()
}

impl ToSql for Arg<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Self::Null => Ok(IsNull::Yes),
            Self::Int(v) => int_to_sql(*v, ty, out),
            Self::Real(v) => match *ty {
                Type::FLOAT8 => v.to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::NUMERIC if v.fract() == 0.0 && v.abs() < 9.2e18 => {
                    int_to_sql(*v as i64, ty, out)
                }
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    v.to_string().as_str().to_sql(&Type::TEXT, out)
                }
                _ => Err(mismatch("a real", ty)),
            },
            Self::Text(s) => text_to_sql(s, ty, out),
            Self::Blob(b) => match *ty {
                Type::BYTEA => b.to_sql(ty, out),
                _ => Err(mismatch("a blob", ty)),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn int_to_sql(
    v: i64,
    ty: &Type,
    out: &mut BytesMut,
) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
    let range = || format!("{v} does not fit a parameter of type {ty}");
    match *ty {
        Type::INT8 => v.to_sql(ty, out),
        Type::INT4 => i32::try_from(v).map_err(|_| range())?.to_sql(ty, out),
        Type::INT2 => i16::try_from(v).map_err(|_| range())?.to_sql(ty, out),
        Type::OID => u32::try_from(v).map_err(|_| range())?.to_sql(ty, out),
        Type::BOOL => (v != 0).to_sql(ty, out),
        Type::FLOAT8 => (v as f64).to_sql(ty, out),
        Type::FLOAT4 => (v as f32).to_sql(ty, out),
        Type::NUMERIC => {
            numeric_from_int(v, out);
            Ok(IsNull::No)
        }
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            v.to_string().as_str().to_sql(&Type::TEXT, out)
        }
        _ => Err(mismatch("an integer", ty)),
    }
}

fn text_to_sql(
    s: &str,
    ty: &Type,
    out: &mut BytesMut,
) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
    match *ty {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            out.put_slice(s.as_bytes());
            Ok(IsNull::No)
        }
        Type::JSONB => {
            // Version 1 of jsonb's binary format: the text after one version byte.
            out.put_u8(1);
            out.put_slice(s.as_bytes());
            Ok(IsNull::No)
        }
        Type::INT8 | Type::INT4 | Type::INT2 | Type::OID | Type::BOOL | Type::NUMERIC => {
            let v: i64 = s
                .parse()
                .map_err(|_| format!("cannot bind text `{s}` to a parameter of type {ty}"))?;
            int_to_sql(v, ty, out)
        }
        Type::BYTEA => s.as_bytes().to_sql(ty, out),
        _ => Err(mismatch("text", ty)),
    }
}

/// Writes `v` in NUMERIC's binary format: digit count, weight, sign, scale, base-10000 digits.
fn numeric_from_int(v: i64, out: &mut BytesMut) {
    let mut magnitude = v.unsigned_abs();
    let mut digits = Vec::new();
    while magnitude > 0 {
        digits.push((magnitude % 10_000) as i16);
        magnitude /= 10_000;
    }
    digits.reverse();
    out.put_i16(digits.len() as i16);
    out.put_i16(digits.len().saturating_sub(1) as i16);
    out.put_u16(if v < 0 { 0x4000 } else { 0 });
    out.put_u16(0);
    for d in digits {
        out.put_i16(d);
    }
}

/// Reads NUMERIC's binary format: an integer when it is one (and fits), else a float.
fn numeric_value(raw: &[u8]) -> Result<Value<'static>, Box<dyn StdError + Sync + Send>> {
    let word = |i: usize| -> Result<i16, Box<dyn StdError + Sync + Send>> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a truncated numeric".into())
    };
    let ndigits = word(0)? as usize;
    let weight = i32::from(word(1)?);
    let sign = word(2)? as u16;
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let negative = sign == 0x4000;
    let mut int: Option<i64> = Some(0);
    let mut real = 0.0_f64;
    let mut integral = true;
    for i in 0..ndigits {
        let d = i64::from(word(4 + i)?);
        let power = weight - i as i32;
        real += d as f64 * 10_000_f64.powi(power);
        if power < 0 {
            integral &= d == 0;
        } else {
            int = int.and_then(|acc| {
                10_000_i64
                    .checked_pow(power as u32)
                    .and_then(|p| d.checked_mul(p))
                    .and_then(|t| acc.checked_add(t))
            });
        }
    }
    Ok(match (integral, int) {
        (true, Some(v)) => Value::Int(if negative { -v } else { v }),
        _ => Value::Real(if negative { -real } else { real }),
    })
}

/// A column decoded by its type.
struct Column<'a>(Value<'a>);

impl<'a> FromSql<'a> for Column<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(Column(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::NUMERIC => numeric_value(raw)?,
            Type::BYTEA => Value::Blob(raw),
            Type::JSONB => match raw.split_first() {
                Some((1, text)) => Value::Text(std::str::from_utf8(text)?),
                _ => return Err("an unknown jsonb version".into()),
            },
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
                Value::Text(std::str::from_utf8(raw)?)
            }
            _ => {
                return Err(format!("a column of type {ty}, which the journal never reads").into());
            }
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(Column(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

impl RawRow for tokio_postgres::Row {
    fn value(&self, idx: usize) -> DbResult<Value<'_>> {
        self.try_get::<_, Column<'_>>(idx)
            .map(|c| c.0)
            .map_err(|e| DbError::Conversion {
                idx,
                detail: e
                    .source()
                    .map_or_else(|| e.to_string(), ToString::to_string),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_placeholders_are_rewritten_outside_literals() {
        assert_eq!(
            rewrite_placeholders("SELECT ?1, ?10 FROM t WHERE a = ?2"),
            "SELECT $1, $10 FROM t WHERE a = $2"
        );
        assert_eq!(
            rewrite_placeholders("SELECT '?1', 'it''s ?2', \"?3\", ?4 -- ?5\n, ?6 /* ?7 */ ?8"),
            "SELECT '?1', 'it''s ?2', \"?3\", $4 -- ?5\n, $6 /* ?7 */ $8"
        );
        assert_eq!(rewrite_placeholders("a ? b ?x"), "a ? b ?x");
    }

    #[test]
    fn postgres_numeric_round_trips_integers() {
        for v in [0, 1, -1, 9_999, 10_000, 123_456_789, i64::MAX, i64::MIN + 1] {
            let mut out = BytesMut::new();
            numeric_from_int(v, &mut out);
            assert_eq!(numeric_value(&out).unwrap(), Value::Int(v), "{v}");
        }
        // 1.5: one digit before the point (weight 0), 5000 after, scale 1.
        let mut out = BytesMut::new();
        for w in [2_i16, 0, 0, 1, 1, 5000] {
            out.put_i16(w);
        }
        assert_eq!(numeric_value(&out).unwrap(), Value::Real(1.5));
    }
}
