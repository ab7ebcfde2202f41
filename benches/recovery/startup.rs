//! Issue 9 §5: start-up. `inspect --limit 20` on a journal of 1,000,000 attempts and
//! `--version`, each a fresh process, beside two floors measured in the same run: spawning
//! `/bin/true` (process creation and exec alone), and this bench binary re-executed to open the
//! same journal read-only with rusqlite and read one row (a minimal Rust program that opens
//! SQLite; what any journal command must at least pay).
//!
//! The journal is written with SQL in one transaction (matching the schema the migrations
//! create: `Journal::open` creates it first): 1,000 workflows of 1,000 steps, one attempt each
//! (1 % WORKING, 0.1 % INPUT_REQUIRED, the rest COMPLETED with a task snapshot), two events per
//! attempt, and a `failed-for-good` event on one attempt in 10,000: 1,100 pending rows.

use std::path::Path;
use std::time::{Duration, Instant};

use a2a_recover::journal::{InspectFilter, Journal};
use anyhow::bail;

use crate::report::{Row, Table, Value};
use crate::support::{Cfg, median, run_child, spawn_wait};

/// Steps per workflow in the generated journal.
const STEPS_PER_WORKFLOW: usize = 1_000;

/// Writes `n` attempts (and their steps, workflows and events) into a fresh journal.
fn generate(path: &Path, n: usize) -> anyhow::Result<()> {
    drop(Journal::open(path, Duration::from_secs(30))?);
    let mut conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let tx = conn.transaction()?;
    let now: i64 = 1_780_000_000_000;
    let card = "http://127.0.0.1:9/.well-known/agent-card.json";
    tx.execute(
        "INSERT INTO agents (id, card_url, interface_url, created_at, updated_at)
         VALUES (1, ?1, 'http://127.0.0.1:9/', ?2, ?2)",
        rusqlite::params![card, now],
    )?;
    let workflows = n.div_ceil(STEPS_PER_WORKFLOW);
    tx.execute(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?1)
         INSERT INTO workflows (id, name, created_at, updated_at)
         SELECT i + 1, 'wf-' || i, ?2, ?2 FROM c",
        rusqlite::params![workflows as i64, now],
    )?;
    tx.execute(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?1)
         INSERT INTO steps (id, workflow_id, name, seq, text, agent_url, created_at, updated_at)
         SELECT i + 1, 1 + i / ?2, 's' || (i % ?2), i + 1, 'work:100', ?3, ?4 + i, ?4 + i FROM c",
        rusqlite::params![n as i64, STEPS_PER_WORKFLOW as i64, card, now],
    )?;
    tx.execute(
        "INSERT INTO attempts (id, step_id, number, agent_id, interface_url, message_id,
                               context_id, task_id, state, remote_state, status_timestamp,
                               last_task_json, created_at, updated_at)
         SELECT id, id, 1, 1, 'http://127.0.0.1:9/', printf('m-%08d', id), printf('c-%08d', id),
                printf('t-%08d', id),
                CASE WHEN id % 100 = 0 THEN 'WORKING'
                     WHEN id % 1000 = 500 THEN 'INPUT_REQUIRED' ELSE 'COMPLETED' END,
                CASE WHEN id % 100 = 0 THEN 'TASK_STATE_WORKING'
                     WHEN id % 1000 = 500 THEN 'TASK_STATE_INPUT_REQUIRED'
                     ELSE 'TASK_STATE_COMPLETED' END,
                '2026-06-01T00:00:00.000000Z',
                json_object('id', printf('t-%08d', id), 'contextId', printf('c-%08d', id),
                    'status', json_object('state', 'TASK_STATE_COMPLETED',
                                          'timestamp', '2026-06-01T00:00:00.000000Z'),
                    'artifacts', json_array(json_object('artifactId', 'result',
                        'parts', json_array(json_object('text', 'done'))))),
                created_at, updated_at + 60000
         FROM steps",
        [],
    )?;
    tx.execute(
        "INSERT INTO events (at, step_id, attempt_id, kind, from_state, to_state, detail_json)
         SELECT created_at, step_id, id, 'intent', NULL, 'INTENT',
                json_object('messageId', message_id, 'contextId', context_id,
                            'agent', 'http://127.0.0.1:9/', 'previousAttempt', NULL)
         FROM attempts",
        [],
    )?;
    tx.execute(
        "INSERT INTO events (at, step_id, attempt_id, kind, from_state, to_state, detail_json)
         SELECT updated_at, step_id, id, 'state', 'INTENT', state,
                json_object('source', 'send', 'taskId', task_id, 'remoteState', remote_state,
                            'statusTimestamp', status_timestamp, 'question', NULL,
                            'artifacts', json_array())
         FROM attempts",
        [],
    )?;
    // Steps a pass gave up on: pending through their event alone (the attempt is COMPLETED).
    tx.execute(
        "INSERT INTO events (at, step_id, attempt_id, kind, from_state, to_state, detail_json)
         SELECT updated_at, step_id, id, 'failed-for-good', state, state,
                json_object('reason', 'no agent left')
         FROM attempts WHERE id % 10000 = 1",
        [],
    )?;
    tx.commit()?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;")?;
    Ok(())
}

/// Takes the generated journal back to schema version 2 (what a journal written before
/// migration 0003 holds), so that the next command migrates it.
fn downgrade_to_v2(path: &Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.execute_batch(
        "ALTER TABLE agents DROP COLUMN max_concurrency;
         ALTER TABLE agents DROP COLUMN max_rate;
         DROP TABLE alerts;
         DROP TABLE artifact_chunks;
         ALTER TABLE attempts DROP COLUMN send_started_at;
         ALTER TABLE attempts DROP COLUMN send_timeout_ms;
         ALTER TABLE attempts DROP COLUMN continuation_task_id;
         ALTER TABLE agents DROP COLUMN profile_json;
         ALTER TABLE agents DROP COLUMN probed_at;
         ALTER TABLE attempts DROP COLUMN binding;
         ALTER TABLE attempts DROP COLUMN protocol_version;
         ALTER TABLE agents DROP COLUMN binding;
         ALTER TABLE agents DROP COLUMN trust_dedup;
         ALTER TABLE steps DROP COLUMN force_binding;
         ALTER TABLE steps DROP COLUMN force_protocol;
         ALTER TABLE steps DROP COLUMN token_cmd;
         ALTER TABLE attempts DROP COLUMN token_cmd;
         ALTER TABLE agents DROP COLUMN token_cmd;
         ALTER TABLE attempts DROP COLUMN lease_owner_id;
         ALTER TABLE attempts DROP COLUMN credential_source;
         ALTER TABLE replies DROP COLUMN data_json;
         ALTER TABLE replies DROP COLUMN error_kind;
         ALTER TABLE steps DROP COLUMN data_json;
         DROP TABLE agent_not_before;
         ALTER TABLE agents DROP COLUMN last_success_at;
         ALTER TABLE agents DROP COLUMN last_failure_at;
         ALTER TABLE agents DROP COLUMN failing_since;
         DROP TABLE push_tokens;
         DROP TABLE push_configs;
         DROP TABLE push_listeners;
         ALTER TABLE agents DROP COLUMN push_url;
         ALTER TABLE agents DROP COLUMN trust_push;
         ALTER TABLE agents DROP COLUMN push_delete_unsupported_at;
         DROP TABLE moved;
         DROP INDEX attempts_needing_human;
         DROP INDEX events_failed_for_good;
         DROP INDEX events_needing_human;
         CREATE INDEX events_by_workflow ON events (workflow_id, id);
         CREATE INDEX attempts_unfinished ON attempts (step_id)
             WHERE state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                             'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN');
         PRAGMA user_version = 2;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )?;
    Ok(())
}

/// The floor child: opens the journal read-only and reads one row.
pub(crate) fn child_open_read(path: &str) -> anyhow::Result<String> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let id: String = conn.query_row("SELECT message_id FROM attempts LIMIT 1", [], |r| r.get(0))?;
    Ok(id)
}

/// Runs `program args` `times` times; returns the median wall seconds.
fn median_spawn(program: &Path, args: &[&str], times: usize) -> anyhow::Result<f64> {
    let mut xs = Vec::with_capacity(times);
    for _ in 0..times {
        xs.push(spawn_wait(program, args)?.as_secs_f64());
    }
    Ok(median(xs))
}

/// Prints the query plans of `inspect`'s statements on the generated journal.
fn print_plans(path: &Path, filter: &InspectFilter, label: &str) -> anyhow::Result<()> {
    let journal = Journal::open_read_only(path, Duration::from_secs(30))?;
    println!("  EXPLAIN QUERY PLAN, {label}:");
    for (sql, plan) in journal.explain_inspect(filter)? {
        println!("    -- {sql}");
        for line in plan {
            println!("    {line}");
        }
    }
    Ok(())
}

/// Measures start-up on 1,000,000 attempts (quick: 100,000).
#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: each start-up case in turn"
)]
pub(crate) fn run(cfg: &Cfg, table: &mut Table) -> anyhow::Result<()> {
    let n = if cfg.quick { 100_000 } else { 1_000_000 };
    let times = if cfg.quick { 3 } else { 9 };
    let dir = cfg.tempdir()?;
    let path = dir.path().join("journal.sqlite3");
    let started = Instant::now();
    generate(&path, n)?;
    println!(
        "  (set-up: {n} attempts, {} events written in {:.1} s; {:.0} MB)",
        2 * n + n / 10_000,
        started.elapsed().as_secs_f64(),
        crate::support::journal_bytes(&path) as f64 / 1e6
    );
    let journal = path.display().to_string();
    // An operator's first command after upgrading from schema 2 pays migrations 0003 (two
    // partial indexes built, two indexes dropped), 0004 (a table), 0005 and 0006 (two columns
    // each), 0007 (a table), 0008 (a column), 0009 (two columns), 0010 (six columns), 0011
    // (three columns), 0012 (a column), 0013 (a table) and 0014 (a partial index): once,
    // measured once.
    downgrade_to_v2(&path)?;
    let upgrade = run_child(
        &cfg.bin,
        &["--journal", &journal, "inspect", "--limit", "20"],
    )?;
    if upgrade.code != 0 {
        bail!(
            "the first inspect after the upgrade exited {}",
            upgrade.code
        );
    }
    let me = std::env::current_exe()?;
    let true_floor = median_spawn(Path::new("/bin/true"), &[], times)?;
    let open_floor = median_spawn(&me, &["--child", "open-read", &journal], times)?;
    let version = median_spawn(&cfg.bin, &["--version"], times)?;
    let middle = format!("wf-{}", n / STEPS_PER_WORKFLOW / 2);
    let mut rows = Vec::new();
    for (label, args) in [
        (
            // `--wide`: the attempts table (with no argument and no filter, the workflows).
            format!("inspect --wide --limit 20, {n} attempts"),
            vec!["--journal", &journal, "inspect", "--wide", "--limit", "20"],
        ),
        (
            format!("inspect --limit 20 (the workflows), {n} attempts"),
            vec!["--journal", &journal, "inspect", "--limit", "20"],
        ),
        (
            format!("inspect {middle} --limit 20 (one workflow of 1,000 steps)"),
            vec!["--journal", &journal, "inspect", &middle, "--limit", "20"],
        ),
        (
            format!("inspect --pending --limit 20, {n} attempts"),
            vec![
                "--journal",
                &journal,
                "inspect",
                "--pending",
                "--limit",
                "20",
            ],
        ),
    ] {
        let mut xs = Vec::with_capacity(times);
        for _ in 0..times {
            let run = run_child(&cfg.bin, &args)?;
            if run.code != 0 {
                bail!("`{label}` exited {}", run.code);
            }
            xs.push(run.wall.as_secs_f64());
        }
        rows.push((label, median(xs)));
    }
    table.add(Row {
        section: "startup",
        what: format!(
            "first `inspect --limit 20` after upgrading: migration 0003 on {n} attempts (once)"
        ),
        figure: Value::Secs(upgrade.wall.as_secs_f64()),
        floor: None,
        target: None,
        paired: None,
    });
    table.add(Row {
        section: "startup",
        what: "a2a-recover --version".to_owned(),
        figure: Value::Secs(version),
        floor: Some(("spawn /bin/true".to_owned(), Value::Secs(true_floor))),
        target: None,
        paired: None,
    });
    for (label, secs) in rows {
        table.add(Row {
            section: "startup",
            what: label,
            figure: Value::Secs(secs),
            floor: Some((
                "a minimal Rust binary: open the journal, read one row".to_owned(),
                Value::Secs(open_floor),
            )),
            target: None,
            paired: None,
        });
    }
    print_plans(
        &path,
        &InspectFilter {
            limit: Some(20),
            ..InspectFilter::default()
        },
        "inspect --limit 20",
    )?;
    print_plans(
        &path,
        &InspectFilter {
            pending: true,
            limit: Some(20),
            ..InspectFilter::default()
        },
        "inspect --pending --limit 20",
    )?;
    Ok(())
}
