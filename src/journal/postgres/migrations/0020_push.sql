-- a2a-recover journal (PostgreSQL), version 19: push notifications (`delegate --push`, `listen`).
--
-- The PostgreSQL twin of src/journal/migrations/0019_push.sql: the same tables, columns,
-- constraints and indexes, translated (BIGINT for every integer, identity columns for SQLite's
-- INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released migrations are
-- history: never edit this file once released; add the next one to both stores instead.
-- postgres/migrate.rs runs it and records its version in `schema_migrations` in one transaction,
-- under the schema's advisory lock; the search_path is the journal's schema.

-- The push config an attempt asked its agent for: `url` is `BASE/push/CONFIG_ID` as sent. One
-- per attempt; a resend of the attempt's messageId keeps it.
CREATE TABLE push_configs (
    config_id     TEXT    PRIMARY KEY,
    attempt_id    BIGINT  NOT NULL UNIQUE REFERENCES attempts (id),
    url           TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    -- When `listen` last recorded a push for it (unix ms), NULL before the first.
    last_push_at  BIGINT,
    -- The last push that needs a read-back before it counts (a terminal state, a question, an
    -- appended chunk, or one for an attempt still INTENT), as received (JSON), until a read
    -- settles it: a hint for the read-back and the next pass, never applied as it is.
    hint_json     TEXT
);

-- The hashes of the tokens sent with a config, one per send (never a token): a push carrying
-- any of them is accepted.
CREATE TABLE push_tokens (
    config_id     TEXT    NOT NULL REFERENCES push_configs (config_id),
    token_hash    TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    PRIMARY KEY (config_id, token_hash)
);

-- Running `listen` processes (a row each, deleted when one stops; a row whose heartbeat is
-- older than its lapse is a listener that died): what `status` shows.
CREATE TABLE push_listeners (
    owner         TEXT    PRIMARY KEY,
    host          TEXT    NOT NULL,
    pid           BIGINT  NOT NULL,
    bind          TEXT    NOT NULL,
    started_at    BIGINT  NOT NULL,
    heartbeat_at  BIGINT  NOT NULL,
    last_push_at  BIGINT
);

-- `agents add --push URL` (the listener's public base) and `--trust-push` (a push may make a
-- step terminal without a read-back; 0 or 1).
ALTER TABLE agents ADD COLUMN push_url TEXT;
ALTER TABLE agents ADD COLUMN trust_push BIGINT NOT NULL DEFAULT 0;
