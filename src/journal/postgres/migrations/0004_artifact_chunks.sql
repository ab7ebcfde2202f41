-- a2a-recover journal (PostgreSQL), version 4: appended artifact chunks in rows of their own.
--
-- The PostgreSQL twin of src/journal/migrations/0004_artifact_chunks.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 4 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.
--
-- A stream's `append: true` artifact update used to rewrite the artifact's whole `parts_json`,
-- so N appends wrote O(N²) bytes. Now each group commit of appends inserts one row here, holding
-- only the parts it appends (a JSON array); an artifact's parts are its `artifacts.parts_json`
-- followed by the parts of its chunks in `seq` order (queries.rs reads them back joined, so
-- every reader sees the one array as before). A replacing update (not `append`, or a snapshot)
-- writes `parts_json` whole and deletes the artifact's chunks. A binary that knows version 3
-- reads a version-4 journal read-only, as any newer journal, and would miss the chunks.
CREATE TABLE artifact_chunks (
    attempt_id  BIGINT  NOT NULL,
    artifact_id TEXT COLLATE "C"    NOT NULL,
    -- 1, 2, … within the artifact, in the order appended.
    seq         BIGINT  NOT NULL,
    -- JSON array of the parts this chunk appends.
    parts_json  TEXT COLLATE "C"    NOT NULL,
    created_at  BIGINT  NOT NULL,
    PRIMARY KEY (attempt_id, artifact_id, seq),
    FOREIGN KEY (attempt_id, artifact_id) REFERENCES artifacts (attempt_id, artifact_id)
);
