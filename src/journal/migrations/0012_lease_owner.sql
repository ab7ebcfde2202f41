-- a2a-recover journal, schema version 12: lease owner ids.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 12` in one
-- BEGIN IMMEDIATE transaction. Nullable columns only: a binary that knows version 11 reads a
-- version-12 journal exactly as before (read-only, as for any newer journal).

-- The random id (UUIDv4) of the process holding the attempt's lease, made once per process: a
-- lease is "mine" only when the ids match (two containers can both be pid 1 on hosts of the same
-- name). `lease_owner_pid` and `lease_owner_host` stay, to name the holder and to break the
-- lease of a dead process on the same host. NULL (a lease written before version 12): nobody's;
-- it lapses at its expiry.
ALTER TABLE attempts ADD COLUMN lease_owner_id TEXT;
