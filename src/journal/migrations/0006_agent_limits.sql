-- a2a-recover journal, schema version 6: per-agent request limits in the registry.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. Two nullable columns: NULL means "the pass's flag decides"
-- (`--agent-concurrency`, `--agent-rate`).

-- Requests in flight at once to this agent (`agents add --concurrency N`).
ALTER TABLE agents ADD COLUMN max_concurrency INTEGER;
-- Requests per second to this agent (`agents add --rate PER_SECOND`).
ALTER TABLE agents ADD COLUMN max_rate REAL;
