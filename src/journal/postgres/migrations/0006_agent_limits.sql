-- a2a-recover journal (PostgreSQL), version 6: per-agent request limits in the registry.
--
-- The PostgreSQL twin of src/journal/migrations/0006_agent_limits.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 6 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- Requests in flight at once to this agent (`agents add --concurrency N`).
ALTER TABLE agents ADD COLUMN max_concurrency BIGINT;
-- Requests per second to this agent (`agents add --rate PER_SECOND`).
ALTER TABLE agents ADD COLUMN max_rate DOUBLE PRECISION;
