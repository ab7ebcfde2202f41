-- a2a-recover journal (PostgreSQL), version 13: the mark of a journal that was moved.
--
-- The PostgreSQL twin of src/journal/migrations/0013_moved.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records its version in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- At most one row, written by `journal copy` in the transaction that read the rows it copied:
-- this journal was copied to `to_location` (a file path, or a PostgreSQL URL without its
-- password) at `moved_at` (unix milliseconds). Every command refuses a journal with this row,
-- naming the new location, so that two live copies never send the same intents. `journal copy`
-- never copies this table.
CREATE TABLE moved (
    id          BIGINT  PRIMARY KEY CHECK (id = 1),
    to_location TEXT    NOT NULL,
    moved_at    BIGINT  NOT NULL
);
