-- a2a-recover journal, schema version 17: agents' not-before times.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction. A new table only: a binary that knows version 14 reads this journal exactly as
-- before (read-only, as for any newer journal).

-- An agent that answered 429 or 503 with a `Retry-After` longer than a2a-recover waits (30 s,
-- or the time left before a pass's deadline) is not called again before its not-before time:
-- now plus what it asked, at most a day ahead. Journaled by the command that was told, so every
-- later pass honours it too (skipped at once, no request). Keyed by the agent as the request
-- limiter keys it: its interface URL and the source of its credential.
CREATE TABLE agent_not_before (
    interface_url TEXT    NOT NULL,
    -- Where the credential comes from (`env:VAR`, `cmd:COMMAND`; never a token), '' for none.
    credential    TEXT    NOT NULL,
    -- No request to the agent before this (unix milliseconds).
    not_before    INTEGER NOT NULL,
    -- Why, for a human: what the agent asked.
    reason        TEXT    NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (interface_url, credential)
) STRICT;
