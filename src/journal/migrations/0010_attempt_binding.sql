-- a2a-recover journal, schema version 10: the binding of every attempt, and what an agent is
-- trusted with.
--
-- Released migrations are history: never edit this file once released; add 0007_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 6` in one
-- BEGIN IMMEDIATE transaction. Nullable columns only: a binary that knows version 5 reads a
-- version-6 journal exactly as before (read-only, as for any newer journal).

-- The binding (`JSONRPC`, `HTTP+JSON`) and A2A protocol version (`1.0`, `0.3`) an attempt is
-- sent over, journaled with its endpoint before the send; every later call on the attempt
-- (get, subscribe, cancel, reply, look) uses them. NULL on attempts journaled by an older
-- binary: they were sent over JSON-RPC 1.0, and read as such.
ALTER TABLE attempts ADD COLUMN binding TEXT;
ALTER TABLE attempts ADD COLUMN protocol_version TEXT;

-- The binding of an agent's chosen interface (`interface_url`, `protocol_version` exist), and
-- whether the operator trusts it to de-duplicate by messageId (`agents add --trust-dedup`): an
-- agent whose tasks cannot be searched (no ListTasks) is then resent the same messageId after
-- a crash in the send window, instead of the attempt going UNCERTAIN.
ALTER TABLE agents ADD COLUMN binding TEXT;
ALTER TABLE agents ADD COLUMN trust_dedup INTEGER NOT NULL DEFAULT 0;

-- What the operator forced of a step's interface (`--binding jsonrpc|http-json`,
-- `--protocol 1.0|0.3`); NULL forces nothing (v1.0 first, then JSON-RPC).
ALTER TABLE steps ADD COLUMN force_binding TEXT;
ALTER TABLE steps ADD COLUMN force_protocol TEXT;
