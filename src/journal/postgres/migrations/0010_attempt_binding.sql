-- a2a-recover journal (PostgreSQL), version 10: the binding of every attempt, and what an agent is
-- trusted with.
--
-- The PostgreSQL twin of src/journal/migrations/0010_attempt_binding.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 10 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The binding (`JSONRPC`, `HTTP+JSON`) and A2A protocol version (`1.0`, `0.3`) an attempt is
-- sent over, journaled with its endpoint before the send; every later call on the attempt
-- (get, subscribe, cancel, reply, look) uses them. NULL on attempts journaled by an older
-- binary: they were sent over JSON-RPC 1.0, and read as such.
ALTER TABLE attempts ADD COLUMN binding TEXT COLLATE "C";
ALTER TABLE attempts ADD COLUMN protocol_version TEXT COLLATE "C";

-- The binding of an agent's chosen interface (`interface_url`, `protocol_version` exist), and
-- whether the operator trusts it to de-duplicate by messageId (`agents add --trust-dedup`): an
-- agent whose tasks cannot be searched (no ListTasks) is then resent the same messageId after
-- a crash in the send window, instead of the attempt going UNCERTAIN.
ALTER TABLE agents ADD COLUMN binding TEXT COLLATE "C";
ALTER TABLE agents ADD COLUMN trust_dedup BIGINT  NOT NULL DEFAULT 0;

-- What the operator forced of a step's interface (`--binding jsonrpc|http-json`,
-- `--protocol 1.0|0.3`); NULL forces nothing (v1.0 first, then JSON-RPC).
ALTER TABLE steps ADD COLUMN force_binding TEXT COLLATE "C";
ALTER TABLE steps ADD COLUMN force_protocol TEXT COLLATE "C";
