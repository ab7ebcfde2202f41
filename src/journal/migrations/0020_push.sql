-- a2a-recover journal, schema version 19: push notifications (`delegate --push`, `listen`).
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. New tables and two agent columns: a binary that knows version 18 reads this
-- journal as before (read-only, as for any newer journal).

-- The push config an attempt asked its agent for: `url` is `BASE/push/CONFIG_ID` as sent. One
-- per attempt; a resend of the attempt's messageId keeps it.
CREATE TABLE push_configs (
    config_id     TEXT    PRIMARY KEY,
    attempt_id    INTEGER NOT NULL UNIQUE REFERENCES attempts (id),
    url           TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    -- When `listen` last recorded a push for it (unix ms), NULL before the first.
    last_push_at  INTEGER,
    -- The last push that needs a read-back before it counts (a terminal state, a question, an
    -- appended chunk, or one for an attempt still INTENT), as received (JSON), until a read
    -- settles it: a hint for the read-back and the next pass, never applied as it is.
    hint_json     TEXT
) STRICT;

-- The hashes of the tokens sent with a config, one per send (never a token): a push carrying
-- any of them is accepted.
CREATE TABLE push_tokens (
    config_id     TEXT    NOT NULL REFERENCES push_configs (config_id),
    token_hash    TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (config_id, token_hash)
) STRICT;

-- Running `listen` processes (a row each, deleted when one stops; a row whose heartbeat is
-- older than its lapse is a listener that died): what `status` shows.
CREATE TABLE push_listeners (
    owner         TEXT    PRIMARY KEY,
    host          TEXT    NOT NULL,
    pid           INTEGER NOT NULL,
    bind          TEXT    NOT NULL,
    started_at    INTEGER NOT NULL,
    heartbeat_at  INTEGER NOT NULL,
    last_push_at  INTEGER
) STRICT;

-- `agents add --push URL` (the listener's public base) and `--trust-push` (a push may make a
-- step terminal without a read-back; 0 or 1).
ALTER TABLE agents ADD COLUMN push_url TEXT;
ALTER TABLE agents ADD COLUMN trust_push INTEGER NOT NULL DEFAULT 0;
