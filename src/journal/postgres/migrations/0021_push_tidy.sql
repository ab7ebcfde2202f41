-- a2a-recover journal (PostgreSQL), version 21: push configs deleted at their agents once their
-- attempt ends.
--
-- The PostgreSQL twin of src/journal/migrations/0021_push_tidy.sql: the same columns and index,
-- translated (BIGINT for every integer). Released migrations are history: never edit this file
-- once released; add the next one to both stores instead. postgres/migrate.rs runs it and
-- records its version in `schema_migrations` in one transaction, under the schema's advisory
-- lock; the search_path is the journal's schema.

-- What became of the request to delete the config at its agent, once its attempt ended:
-- `deleted` (the agent said so), `gone` (the agent knew neither the task nor the config),
-- `refused` (the agent answered with another error), `unsupported` (the agent does not delete
-- configs); NULL while not asked, or while asking failed in a way worth one more try next pass.
ALTER TABLE push_configs ADD COLUMN tidied TEXT;
-- When that answer came (unix ms).
ALTER TABLE push_configs ADD COLUMN tidied_at BIGINT;
-- The configs still to delete, found without reading the others.
CREATE INDEX push_configs_untidied ON push_configs (attempt_id) WHERE tidied IS NULL;

-- When the agent answered a delete with "unsupported" (unix ms): it is not asked again.
ALTER TABLE agents ADD COLUMN push_delete_unsupported_at BIGINT;
