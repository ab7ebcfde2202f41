-- a2a-recover journal, schema version 18: each agent's health, as reconcile passes found it.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. Three nullable columns: a binary that knows version 17 reads this journal as
-- before (read-only, as for any newer journal).

-- Unix ms. `last_success_at`: the agent last answered (written on a transition, else at most once
-- a minute); `last_failure_at`: a request to it last failed to get an answer (a connection
-- refused, a timeout, a cut connection, a gateway's 502/503/504; at most once a minute while
-- nothing else changes); `failing_since`: when it stopped answering, NULL while it answers.
ALTER TABLE agents ADD COLUMN last_success_at INTEGER;
ALTER TABLE agents ADD COLUMN last_failure_at INTEGER;
ALTER TABLE agents ADD COLUMN failing_since INTEGER;
