-- a2a-recover journal, schema version 8: the continuation of an attempt.
--
-- Released migrations are history: never edit this file once released; add the next one
-- instead (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one
-- BEGIN IMMEDIATE transaction. One nullable column: a binary that knows the version before
-- reads this journal exactly as before (read-only, as for any newer journal).

-- Some agents answer a reply (the answer to INPUT_REQUIRED / AUTH_REQUIRED) with a NEW task in
-- the same context instead of continuing the task. That task is the attempt's continuation:
-- `task_id` stays the task first created, and every later read (reconcile, follow, inspect,
-- compensate) goes to this one. NULL: the attempt was never continued elsewhere.
ALTER TABLE attempts ADD COLUMN continuation_task_id TEXT;
