-- a2a-recover journal (PostgreSQL), version 12: lease owner ids.
--
-- The PostgreSQL twin of src/journal/migrations/0012_lease_owner.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 12 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The random id (UUIDv4) of the process holding the attempt's lease, made once per process: a
-- lease is "mine" only when the ids match. NULL (a lease written before version 12): nobody's;
-- it lapses at its expiry (on PostgreSQL a lease held by another owner is broken only by
-- expiry).
ALTER TABLE attempts ADD COLUMN lease_owner_id TEXT;
