-- a2a-recover journal, schema version 4: appended artifact chunks in rows of their own.
--
-- Released migrations are history: never edit this file once released; add 0005_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 4` in one
-- BEGIN IMMEDIATE transaction.
--
-- A stream's `append: true` artifact update used to rewrite the artifact's whole `parts_json`,
-- so N appends wrote O(N²) bytes. Now each group commit of appends inserts one row here, holding
-- only the parts it appends (a JSON array); an artifact's parts are its `artifacts.parts_json`
-- followed by the parts of its chunks in `seq` order (queries.rs reads them back joined, so
-- every reader sees the one array as before). A replacing update (not `append`, or a snapshot)
-- writes `parts_json` whole and deletes the artifact's chunks. A binary that knows version 3
-- reads a version-4 journal read-only, as any newer journal, and would miss the chunks.
CREATE TABLE artifact_chunks (
    attempt_id  INTEGER NOT NULL,
    artifact_id TEXT    NOT NULL,
    -- 1, 2, … within the artifact, in the order appended.
    seq         INTEGER NOT NULL,
    -- JSON array of the parts this chunk appends.
    parts_json  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (attempt_id, artifact_id, seq),
    FOREIGN KEY (attempt_id, artifact_id) REFERENCES artifacts (attempt_id, artifact_id)
) STRICT;
