-- a2a-recover journal (PostgreSQL), version 8: the continuation of an attempt.
--
-- The PostgreSQL twin of src/journal/migrations/0008_continuation.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 8 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- Some agents answer a reply (the answer to INPUT_REQUIRED / AUTH_REQUIRED) with a NEW task in
-- the same context instead of continuing the task. That task is the attempt's continuation:
-- `task_id` stays the task first created, and every later read (reconcile, follow, inspect,
-- compensate) goes to this one. NULL: the attempt was never continued elsewhere.
ALTER TABLE attempts ADD COLUMN continuation_task_id TEXT COLLATE "C";
