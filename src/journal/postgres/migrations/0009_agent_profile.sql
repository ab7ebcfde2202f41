-- a2a-recover journal (PostgreSQL), version 9: an agent's recovery profile (`agents probe`).
--
-- The PostgreSQL twin of src/journal/migrations/0009_agent_profile.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 9 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The profile `agents probe` measured, as a JSON object (bindings offered, ListTasks and its
-- filters, SubscribeToTask, client context ids, and with --send-test de-duplication by
-- messageId and history retention), and when it was measured (unix ms). NULL: never probed.
-- Recovery trusts a probed de-duplication only for attempts whose intent is older than
-- `probed_at` (an in-memory de-duplication does not survive the agent's restart).
ALTER TABLE agents ADD COLUMN profile_json TEXT COLLATE "C";
ALTER TABLE agents ADD COLUMN probed_at BIGINT;
