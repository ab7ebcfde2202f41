-- a2a-recover journal, schema version 3: indexes for `inspect --pending` and `prune`.
--
-- Released migrations are history: never edit this file once released; add 0004_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 3` in one
-- BEGIN IMMEDIATE transaction. Indexes only: a binary that knows version 2 reads a version-3
-- journal exactly as before (read-only, as for any newer journal).

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
