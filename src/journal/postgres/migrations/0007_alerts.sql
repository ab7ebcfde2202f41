-- a2a-recover journal (PostgreSQL), version 7: what `reconcile --alert new` has reported.
--
-- The PostgreSQL twin of src/journal/migrations/0007_alerts.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 7 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- One row per attempt a non-dry-run `reconcile --alert new` pass reported as needing a human:
-- the item's key when reported (the attempt's state and status timestamp, '' for none) and
-- when. The item is new again once either part of its key changes, or, with `--realert`, once
-- `reported_at` is older than that.
CREATE TABLE alerts (
    attempt_id       BIGINT PRIMARY KEY REFERENCES attempts (id),
    state            TEXT COLLATE "C"    NOT NULL,
    status_timestamp TEXT COLLATE "C"    NOT NULL,
    reported_at      BIGINT  NOT NULL
);
