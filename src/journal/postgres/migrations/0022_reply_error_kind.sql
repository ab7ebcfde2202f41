-- a2a-recover journal (PostgreSQL), version 22: a reply's failure keeps the named error it met.
--
-- The PostgreSQL twin of src/journal/migrations/0022_reply_error_kind.sql: the same column and
-- backfill. Released migrations are history: never edit this file once released; add the next
-- one to both stores instead. postgres/migrate.rs runs it and records its version in
-- `schema_migrations` in one transaction, under the schema's advisory lock; the search_path is
-- the journal's schema.

-- The named A2A error the agent answered the reply's latest send with, by its `ErrorInfo`
-- reason (`INVALID_PARAMS`, `TASK_NOT_FOUND`, …), beside `error`'s one line; NULL when the send
-- met none (delivered, unreachable, an HTTP status alone, an unnamed code). Reads decide on it,
-- never on `error`'s words.
ALTER TABLE replies ADD COLUMN error_kind TEXT COLLATE "C";
-- Replies journaled before this version kept only the line: the one kind reads ask about,
-- invalid parameters (JSON-RPC -32602; HTTP+JSON and gRPC name it by reason), is read from it
-- once, here.
UPDATE replies SET error_kind = 'INVALID_PARAMS'
 WHERE error LIKE '%-32602%' OR error LIKE '%INVALID_PARAMS%';
