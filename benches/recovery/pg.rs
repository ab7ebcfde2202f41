//! The PostgreSQL server of the `postgres` and `hosts` sections: the one
//! `A2A_RECOVER_TEST_PG_URL` names, or else one this run starts with `scripts/pg-test-server`
//! (a throwaway server on 127.0.0.1; it runs as an unprivileged user when the bench runs as
//! root) and stops when it ends, on an error too. Every measurement gets a schema of its own,
//! dropped after it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

/// The variable naming a server to use instead of starting one (as the tests read it).
const PG_URL_VAR: &str = "A2A_RECOVER_TEST_PG_URL";

/// A PostgreSQL server for the run.
pub(crate) struct PgServer {
    /// `postgres://ROLE:PASSWORD@HOST:PORT/DB`, no schema (never printed: it has the password).
    url: String,
    /// The data directory of the server this run started (stopped on drop); `None` for one
    /// named by `A2A_RECOVER_TEST_PG_URL`.
    started: Option<String>,
}

/// `scripts/pg-test-server` of this checkout.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-test-server")
}

impl PgServer {
    /// Returns the run's server, starting it on first use.
    pub(crate) fn get(slot: &mut Option<Self>) -> anyhow::Result<&Self> {
        if slot.is_none() {
            *slot = Some(Self::start()?);
        }
        slot.as_ref().context("no PostgreSQL server")
    }

    fn start() -> anyhow::Result<Self> {
        if let Ok(url) = std::env::var(PG_URL_VAR) {
            let server = Self { url, started: None };
            println!("  (PostgreSQL: {}, from {PG_URL_VAR})", server.address());
            return Ok(server);
        }
        let started = Instant::now();
        let out = Command::new(script())
            .arg("start")
            .stdin(Stdio::null())
            .output()
            .context("failed to run scripts/pg-test-server")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let export = |var: &str| {
            stdout.lines().find_map(|l| {
                l.strip_prefix(&format!("export {var}="))
                    .map(|v| v.trim_matches('\'').to_owned())
            })
        };
        let (Some(url), Some(dir)) = (
            export("A2A_RECOVER_TEST_PG_URL"),
            export("A2A_RECOVER_TEST_PG_DIR"),
        ) else {
            bail!(
                "scripts/pg-test-server start failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        };
        let server = Self {
            url,
            started: Some(dir),
        };
        println!(
            "  (PostgreSQL 15 started by scripts/pg-test-server on {} in {:.1} s)",
            server.address(),
            started.elapsed().as_secs_f64()
        );
        Ok(server)
    }

    /// Returns `HOST:PORT` (what may be shown of the URL).
    fn address(&self) -> String {
        url::Url::parse(&self.url).map_or_else(
            |_| "an unparsable URL".to_owned(),
            |u| {
                format!(
                    "{}:{}",
                    u.host_str().unwrap_or("?"),
                    u.port().unwrap_or(5432)
                )
            },
        )
    }

    /// Returns a fresh schema on this server, dropped (with everything in it) on drop.
    pub(crate) fn schema(&self) -> Schema<'_> {
        Schema {
            server: self,
            name: format!("bench_{}", uuid::Uuid::new_v4().simple()),
        }
    }

    /// Connects (no TLS: the server is local); the connection runs until the client is dropped.
    async fn connect(
        &self,
    ) -> anyhow::Result<(
        tokio_postgres::Client,
        tokio::task::JoinHandle<Result<(), tokio_postgres::Error>>,
    )> {
        let (client, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await?;
        Ok((client, tokio::spawn(conn)))
    }

    /// Runs `sql` on the server.
    fn execute(&self, sql: &str) -> anyhow::Result<()> {
        crate::support::runtime()?.block_on(async {
            let (client, conn) = self.connect().await?;
            client.batch_execute(sql).await?;
            drop(client);
            conn.await??;
            anyhow::Ok(())
        })
    }

    /// Returns durable single-row commits per second (`synchronous_commit` as the server has
    /// it, on by default): `n` INSERTs in a row, each its own transaction, as
    /// `floors::commit_rate` does on SQLite.
    pub(crate) fn commit_rate(&self, n: usize) -> anyhow::Result<f64> {
        let schema = self.schema();
        crate::support::runtime()?.block_on(async {
            let (client, conn) = self.connect().await?;
            let s = &schema.name;
            client
                .batch_execute(&format!(
                    "CREATE SCHEMA {s}; \
                     CREATE TABLE {s}.t (id bigserial PRIMARY KEY, at bigint NOT NULL, v text NOT NULL)"
                ))
                .await?;
            let insert = client
                .prepare(&format!("INSERT INTO {s}.t (at, v) VALUES ($1, $2)"))
                .await?;
            let payload = "x".repeat(200);
            let started = Instant::now();
            for i in 0..n {
                client.execute(&insert, &[&(i as i64), &payload]).await?;
            }
            let rate = n as f64 / started.elapsed().as_secs_f64();
            drop(client);
            conn.await??;
            Ok(rate)
        })
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let Some(dir) = &self.started else { return };
        match Command::new(script())
            .args(["stop", dir])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
        {
            Ok(s) if s.success() => {}
            other => println!("  (scripts/pg-test-server stop {dir} failed: {other:?})"),
        }
    }
}

/// A schema of its own for one journal; dropped with `DROP SCHEMA … CASCADE` on drop.
pub(crate) struct Schema<'a> {
    server: &'a PgServer,
    name: String,
}

impl Schema<'_> {
    /// Returns the journal URL of this schema (`…?schema=NAME`; it holds the password).
    pub(crate) fn url(&self) -> String {
        let sep = if self.server.url.contains('?') {
            '&'
        } else {
            '?'
        };
        format!("{}{sep}schema={}", self.server.url, self.name)
    }
}

impl Drop for Schema<'_> {
    fn drop(&mut self) {
        if let Err(e) = self
            .server
            .execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name))
        {
            println!("  (could not drop schema {}: {e:#})", self.name);
        }
    }
}
