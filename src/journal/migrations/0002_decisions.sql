-- a2a-recover journal, schema version 2: operator decisions per attempt, and when an agent
-- joined the registry.
--
-- Released migrations are history: never edit this file once released; add 0003_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 2` in one
-- BEGIN IMMEDIATE transaction.

-- The operator's last decision on this attempt (`resolve`), its reason and when: the chain of
-- decisions `inspect STEP` shows (the event log keeps every one). The step's own `resolution`
-- column stays the standing decision the passes act on: `done` and `abandoned` take the step
-- out of every pass; `resend` is the approval of ONE send of the latest attempt's messageId
-- without a look, consumed (cleared) before that send.
ALTER TABLE attempts ADD COLUMN resolution TEXT
    CHECK (resolution IN ('done', 'abandoned', 'retry', 'resend'));
ALTER TABLE attempts ADD COLUMN resolution_reason TEXT;
ALTER TABLE attempts ADD COLUMN resolved_at INTEGER;

-- When the agent was (last) put in the registry by `agents add`; NULL while not registered.
ALTER TABLE agents ADD COLUMN registered_at INTEGER;
UPDATE agents SET registered_at = updated_at WHERE registered IS NOT NULL;
