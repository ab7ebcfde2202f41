-- a2a-recover journal, schema version 9: an agent's recovery profile (`agents probe`).
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. Two nullable columns: a binary that knows the previous version reads this
-- journal exactly as before (read-only, as for any newer journal).

-- The profile `agents probe` measured, as a JSON object (bindings offered, ListTasks and its
-- filters, SubscribeToTask, client context ids, and with --send-test de-duplication by
-- messageId and history retention), and when it was measured (unix ms). NULL: never probed.
-- Recovery trusts a probed de-duplication only for attempts whose intent is older than
-- `probed_at` (an in-memory de-duplication does not survive the agent's restart).
ALTER TABLE agents ADD COLUMN profile_json TEXT;
ALTER TABLE agents ADD COLUMN probed_at INTEGER;
