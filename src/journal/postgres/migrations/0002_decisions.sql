-- a2a-recover journal (PostgreSQL), version 2: operator decisions per attempt, and when an agent
-- joined the registry.
--
-- The PostgreSQL twin of src/journal/migrations/0002_decisions.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 2 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The operator's last decision on this attempt (`resolve`), its reason and when: the chain of
-- decisions `inspect STEP` shows (the event log keeps every one). The step's own `resolution`
-- column stays the standing decision the passes act on: `done` and `abandoned` take the step
-- out of every pass; `resend` is the approval of ONE send of the latest attempt's messageId
-- without a look, consumed (cleared) before that send.
ALTER TABLE attempts ADD COLUMN resolution TEXT COLLATE "C"
    CHECK (resolution IN ('done', 'abandoned', 'retry', 'resend'));
ALTER TABLE attempts ADD COLUMN resolution_reason TEXT COLLATE "C";
ALTER TABLE attempts ADD COLUMN resolved_at BIGINT;

-- When the agent was (last) put in the registry by `agents add`; NULL while not registered.
ALTER TABLE agents ADD COLUMN registered_at BIGINT;
UPDATE agents SET registered_at = updated_at WHERE registered IS NOT NULL;
