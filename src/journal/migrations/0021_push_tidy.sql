-- a2a-recover journal, schema version 21: push configs deleted at their agents once their
-- attempt ends.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. Two new columns and an index: a binary that knows version 20 reads this journal
-- as before (read-only, as for any newer journal).

-- What became of the request to delete the config at its agent, once its attempt ended:
-- `deleted` (the agent said so), `gone` (the agent knew neither the task nor the config),
-- `refused` (the agent answered with another error), `unsupported` (the agent does not delete
-- configs); NULL while not asked, or while asking failed in a way worth one more try next pass.
ALTER TABLE push_configs ADD COLUMN tidied TEXT;
-- When that answer came (unix ms).
ALTER TABLE push_configs ADD COLUMN tidied_at INTEGER;
-- The configs still to delete, found without reading the others.
CREATE INDEX push_configs_untidied ON push_configs (attempt_id) WHERE tidied IS NULL;

-- When the agent answered a delete with "unsupported" (unix ms): it is not asked again.
ALTER TABLE agents ADD COLUMN push_delete_unsupported_at INTEGER;
