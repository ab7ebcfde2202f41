-- a2a-recover journal (PostgreSQL), version 18: each agent's health, as reconcile passes found it.
--
-- The PostgreSQL twin of src/journal/migrations/0018_agent_health.sql: the same tables, columns,
-- constraints and indexes, translated (BIGINT for every integer, identity columns for SQLite's
-- INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released migrations are
-- history: never edit this file once released; add the next one to both stores instead.
-- postgres/migrate.rs runs it and records its version in `schema_migrations` in one transaction,
-- under the schema's advisory lock; the search_path is the journal's schema.

-- Unix ms. `last_success_at`: the agent last answered (written on a transition, else at most once
-- a minute); `last_failure_at`: a request to it last failed to get an answer (a connection
-- refused, a timeout, a cut connection, a gateway's 502/503/504; at most once a minute while
-- nothing else changes); `failing_since`: when it stopped answering, NULL while it answers.
ALTER TABLE agents ADD COLUMN last_success_at BIGINT;
ALTER TABLE agents ADD COLUMN last_failure_at BIGINT;
ALTER TABLE agents ADD COLUMN failing_since BIGINT;
