-- a2a-recover journal (PostgreSQL), version 5: the in-flight horizon of a send.
--
-- The PostgreSQL twin of src/journal/migrations/0005_send_horizon.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 5 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- When the attempt's endpoint was last journaled for a send (unix ms), stamped before EVERY
-- send and resend, and the request timeout (ms) that send was made with. A look that finds
-- nothing proves absence only after `send_started_at + 2 × send_timeout_ms` (the in-flight
-- horizon): an overloaded agent may still process a send the client gave up on. NULL on
-- attempts journaled by an older binary: no horizon is known (the look behaves as before).
ALTER TABLE attempts ADD COLUMN send_started_at BIGINT;
ALTER TABLE attempts ADD COLUMN send_timeout_ms BIGINT;
