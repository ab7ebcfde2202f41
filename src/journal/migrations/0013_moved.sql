-- a2a-recover journal, schema version 13: the mark of a journal that was moved.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. A new table only: a binary that knows the version before reads this journal
-- exactly as before (read-only, as for any newer journal).

-- At most one row, written by `journal copy` in the transaction that read the rows it copied:
-- this journal was copied to `to_location` (a file path, or a PostgreSQL URL without its
-- password) at `moved_at` (unix milliseconds). Every command refuses a journal with this row,
-- naming the new location, so that two live copies never send the same intents. `journal copy`
-- never copies this table.
CREATE TABLE moved (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    to_location TEXT    NOT NULL,
    moved_at    INTEGER NOT NULL
) STRICT;
