-- a2a-recover journal (PostgreSQL), version 14: the attempts still INTENT that need a human.
--
-- The PostgreSQL twin of src/journal/migrations/0014_needs_human.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records its version in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- A `needs-human` event is journaled when an attempt that stays `INTENT` (tried again by every
-- pass) still needs a human: its agent's card has been unreachable for longer than
-- `--card-patience`, or its send (or the look for it) was answered with more than
-- `--max-response-size`. `inspect --pending` lists such an attempt while that event is its latest
-- (queries.rs `PENDING_SQL`) and starts from this index, beside the two of version 3: a
-- handful of rows among every event.
CREATE INDEX events_needing_human ON events (attempt_id) WHERE kind = 'needs-human';
