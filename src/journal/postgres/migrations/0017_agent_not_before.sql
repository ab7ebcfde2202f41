-- a2a-recover journal (PostgreSQL), version 17: agents' not-before times.
--
-- The PostgreSQL twin of src/journal/migrations/0017_agent_not_before.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records its version in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- An agent that answered 429 or 503 with a `Retry-After` longer than a2a-recover waits (30 s,
-- or the time left before a pass's deadline) is not called again before its not-before time:
-- now plus what it asked, at most a day ahead. Journaled by the command that was told, so every
-- later pass honours it too (skipped at once, no request). Keyed by the agent as the request
-- limiter keys it: its interface URL and the source of its credential.
CREATE TABLE agent_not_before (
    interface_url TEXT COLLATE "C" NOT NULL,
    -- Where the credential comes from (`env:VAR`, `cmd:COMMAND`; never a token), '' for none.
    credential    TEXT COLLATE "C" NOT NULL,
    -- No request to the agent before this (unix milliseconds).
    not_before    BIGINT NOT NULL,
    -- Why, for a human: what the agent asked.
    reason        TEXT COLLATE "C" NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (interface_url, credential)
);
