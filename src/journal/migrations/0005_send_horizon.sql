-- a2a-recover journal, schema version 5: the in-flight horizon of a send.
--
-- Released migrations are history: never edit this file once released; add 0006_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 5` in one
-- BEGIN IMMEDIATE transaction. Two nullable columns: a binary that knows version 4 reads a
-- version-5 journal exactly as before (read-only, as for any newer journal).

-- When the attempt's endpoint was last journaled for a send (unix ms), stamped before EVERY
-- send and resend, and the request timeout (ms) that send was made with. A look that finds
-- nothing proves absence only after `send_started_at + 2 × send_timeout_ms` (the in-flight
-- horizon): an overloaded agent may still process a send the client gave up on. NULL on
-- attempts journaled by an older binary: no horizon is known (the look behaves as before).
ALTER TABLE attempts ADD COLUMN send_started_at INTEGER;
ALTER TABLE attempts ADD COLUMN send_timeout_ms INTEGER;
