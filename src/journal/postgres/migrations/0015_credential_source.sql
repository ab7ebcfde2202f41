-- a2a-recover journal (PostgreSQL), version 15: whose credential each attempt carries.
--
-- The PostgreSQL twin of src/journal/migrations/0015_credential_source.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT; SQLite's `IS` is
-- `IS NOT DISTINCT FROM`). Released migrations are history: never edit this file once released;
-- add the next one to both stores instead. postgres/migrate.rs runs it and records its version in
-- `schema_migrations` in one transaction, under the schema's advisory lock; the search_path is
-- the journal's schema.

-- Whose credential `token_env` / `token_cmd` name: `step` (the step's own `--token-env` /
-- `--token-cmd`, at the agent it was given for: the agent of the step's first attempt),
-- `agent` (the attempt's agent's registered credential, `agents add --token-env`), or `none`.
ALTER TABLE attempts ADD COLUMN credential_source TEXT COLLATE "C" NOT NULL DEFAULT 'none'
    CHECK (credential_source IN ('step', 'agent', 'none'));

-- A step's own credential belongs to the agent it was given for. An older binary journaled it
-- on re-delegated attempts too, so every later pass sent one agent's secret to another: such an
-- attempt (another agent than the step's first attempt's, carrying the step's credential, which
-- is not also its agent's registered one) now carries its agent's registered credential, else
-- none.
UPDATE attempts SET
    token_env = (SELECT CASE WHEN ag.registered IS NOT NULL THEN ag.token_env END
                 FROM agents ag WHERE ag.id = attempts.agent_id),
    token_cmd = (SELECT CASE WHEN ag.registered IS NOT NULL THEN ag.token_cmd END
                 FROM agents ag WHERE ag.id = attempts.agent_id)
WHERE number > 1
  AND (token_env IS NOT NULL OR token_cmd IS NOT NULL)
  AND EXISTS (SELECT 1 FROM steps s WHERE s.id = attempts.step_id
              AND s.token_env IS NOT DISTINCT FROM attempts.token_env
              AND s.token_cmd IS NOT DISTINCT FROM attempts.token_cmd)
  AND agent_id IS DISTINCT FROM (SELECT f.agent_id FROM attempts f
                                 WHERE f.step_id = attempts.step_id AND f.number = 1)
  AND NOT EXISTS (SELECT 1 FROM agents ag WHERE ag.id = attempts.agent_id
                  AND ag.registered IS NOT NULL
                  AND ag.token_env IS NOT DISTINCT FROM attempts.token_env
                  AND ag.token_cmd IS NOT DISTINCT FROM attempts.token_cmd);

-- Every attempt with a credential says whose it is.
UPDATE attempts SET credential_source = CASE
    WHEN EXISTS (SELECT 1 FROM steps s WHERE s.id = attempts.step_id
                 AND s.token_env IS NOT DISTINCT FROM attempts.token_env
                 AND s.token_cmd IS NOT DISTINCT FROM attempts.token_cmd)
     AND agent_id IS NOT DISTINCT FROM (SELECT f.agent_id FROM attempts f
                                        WHERE f.step_id = attempts.step_id AND f.number = 1)
    THEN 'step'
    ELSE 'agent'
END
WHERE token_env IS NOT NULL OR token_cmd IS NOT NULL;
