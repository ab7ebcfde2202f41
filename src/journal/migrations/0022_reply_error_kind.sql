-- a2a-recover journal, schema version 22: a reply's failure keeps the named error it met.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. One nullable column: a binary that knows version 21 reads this journal as before
-- (read-only, as for any newer journal).

-- The named A2A error the agent answered the reply's latest send with, by its `ErrorInfo`
-- reason (`INVALID_PARAMS`, `TASK_NOT_FOUND`, …), beside `error`'s one line; NULL when the send
-- met none (delivered, unreachable, an HTTP status alone, an unnamed code). Reads decide on it,
-- never on `error`'s words.
ALTER TABLE replies ADD COLUMN error_kind TEXT;
-- Replies journaled before this version kept only the line: the one kind reads ask about,
-- invalid parameters (JSON-RPC -32602; HTTP+JSON and gRPC name it by reason), is read from it
-- once, here.
UPDATE replies SET error_kind = 'INVALID_PARAMS'
 WHERE error LIKE '%-32602%' OR error LIKE '%INVALID_PARAMS%';
