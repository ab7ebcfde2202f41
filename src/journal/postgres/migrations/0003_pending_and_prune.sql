-- a2a-recover journal (PostgreSQL), version 3: indexes for `inspect --pending` and `prune`.
--
-- The PostgreSQL twin of src/journal/migrations/0003_pending_and_prune.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 3 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The attempts that may need a human by themselves (queries.rs `PENDING_ATTEMPT_SQL`, which
-- must stay this very expression: SQLite uses a partial index only for a query that repeats its
-- WHERE clause). `inspect --pending` starts from these rows and from the `failed-for-good`
-- events below, then applies the whole predicate (`PENDING_SQL`: latest attempt, unresolved
-- step, workflow not COMPENSATED) to them only, instead of reading every attempt. Keyed by id,
-- so that the union of the two lookups merges in id order without a sort. Written with `=` and
-- `OR`, not `IN (…)`: SQLite evaluates this clause on every UPDATE of these columns, and an
-- `IN` list of more than two values builds a temporary b-tree each time.
CREATE INDEX attempts_needing_human ON attempts (id)
    WHERE state = 'INPUT_REQUIRED' OR state = 'AUTH_REQUIRED' OR state = 'UNCERTAIN'
       OR state = 'REFUSED' OR state = 'LOST' OR state = 'FAILED' OR state = 'REJECTED'
       OR (state = 'CANCELED' AND cancel_requested_at IS NULL)
       OR effect = 'absent' OR effect = 'unknown' OR effect = 'compensation-failed';

-- A step a pass gave up on (`failed-for-good`): a handful of rows among every event.
CREATE INDEX events_failed_for_good ON events (attempt_id) WHERE kind = 'failed-for-good';

-- Written with every event and read by no query (events are read by step, by attempt, or by
-- kind above): about 30 bytes per event for nothing.
DROP INDEX events_by_workflow;

-- Built by schema 1 for a query no command runs (the reconcile pass walks steps by `seq` and
-- each step's attempts by `(step_id, number)`), and evaluated on every UPDATE of `state`: its
-- `IN (…)` list built two temporary b-trees per state change, for the old and the new row
-- (docs/performance.md §1, the first pass).
DROP INDEX attempts_unfinished;
