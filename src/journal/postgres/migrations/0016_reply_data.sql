-- a2a-recover journal, schema version 16: a reply can be a data part.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets the schema version in one transaction. One
-- nullable column: a binary that knows version 15 reads this journal as before (read-only, as
-- for any newer journal).

-- `reply STEP --data JSON` sends one data part instead of text: its JSON, compact. NULL for a
-- text reply (`text` holds it), and `text` is empty for a data reply.
ALTER TABLE replies ADD COLUMN data_json TEXT COLLATE "C";
