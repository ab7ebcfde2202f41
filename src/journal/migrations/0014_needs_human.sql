-- a2a-recover journal, schema version 14: the attempts still INTENT that need a human.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. An index only: a binary that knows version 13 reads this journal exactly as
-- before (read-only, as for any newer journal).

-- A `needs-human` event is journaled when an attempt that stays `INTENT` (tried again by every
-- pass) still needs a human: its agent's card has been unreachable for longer than
-- `--card-patience`, or its send (or the look for it) was answered with more than
-- `--max-response-size`. `inspect --pending` lists such an attempt while that event is its latest
-- (queries.rs `PENDING_SQL`) and starts from this index, beside the two of version 3: a
-- handful of rows among every event.
CREATE INDEX events_needing_human ON events (attempt_id) WHERE kind = 'needs-human';
