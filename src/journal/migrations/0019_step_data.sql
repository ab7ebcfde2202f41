-- a2a-recover journal, schema version 19: a step's message can carry a data part.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets the schema version in one transaction. One
-- nullable column: a binary that knows version 18 reads this journal as before (read-only, as
-- for any newer journal).

-- `delegate --data JSON` and a plan step's `data` send one data part beside the text: its
-- JSON, compact. NULL when the message is text only.
ALTER TABLE steps ADD COLUMN data_json TEXT;
