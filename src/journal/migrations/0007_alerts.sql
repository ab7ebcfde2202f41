-- a2a-recover journal, schema version 7: what `reconcile --alert new` has reported.
--
-- Released migrations are history: never edit this file once released; add 0007_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 6` in one
-- BEGIN IMMEDIATE transaction. One new table: a binary that knows version 5 reads a version-6
-- journal exactly as before (read-only, as for any newer journal).

-- One row per attempt a non-dry-run `reconcile --alert new` pass reported as needing a human:
-- the item's key when reported (the attempt's state and status timestamp, '' for none) and
-- when. The item is new again once either part of its key changes, or, with `--realert`, once
-- `reported_at` is older than that.
CREATE TABLE alerts (
    attempt_id       INTEGER PRIMARY KEY REFERENCES attempts (id),
    state            TEXT    NOT NULL,
    status_timestamp TEXT    NOT NULL,
    reported_at      INTEGER NOT NULL
) STRICT;
