-- a2a-recover journal, schema version 2: operator decisions per attempt, the approval of a
-- resend, and when an agent joined the registry.
--
-- Released migrations are history: never edit this file once released; add 0003_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 2` in one
-- BEGIN IMMEDIATE transaction.

-- The operator's last decision on this attempt (`resolve`), its reason and when. The step's own
-- `resolution` column holds only the decisions that take a step out of every pass (`done`,
-- `abandoned`); `retry` and `resend` keep the step going and are recorded here, on the attempt
-- they were decided on (the event log keeps every decision).
ALTER TABLE attempts ADD COLUMN resolution TEXT
    CHECK (resolution IN ('done', 'abandoned', 'retry', 'resend'));
ALTER TABLE attempts ADD COLUMN resolution_reason TEXT;
ALTER TABLE attempts ADD COLUMN resolved_at INTEGER;

-- Set by `resolve --as resend` when an UNCERTAIN attempt goes back to INTENT: the operator
-- approved ONE send of the same messageId without a look (the look could not prove anything).
-- The pass that sends it clears it in a transaction committed BEFORE the send, so a crash
-- around that send leaves an INTENT attempt without approval: it is looked for again, and
-- asks the operator again if the look is still inconclusive.
ALTER TABLE attempts ADD COLUMN resend_approved_at INTEGER;

-- When the agent was (last) put in the registry by `agents add`; NULL while not registered.
ALTER TABLE agents ADD COLUMN registered_at INTEGER;
UPDATE agents SET registered_at = updated_at WHERE registered IS NOT NULL;
