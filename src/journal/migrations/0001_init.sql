-- a2a-recover journal, schema version 1.
--
-- Released migrations are history: never edit this file; add 0002_….sql instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 1` in one
-- BEGIN IMMEDIATE transaction.
--
-- Conventions: local times are INTEGER unix milliseconds; remote status timestamps are TEXT
-- exactly as the agent sent them (full precision); JSON columns are TEXT holding JSON;
-- booleans are INTEGER 0/1. Credentials are never stored: only the NAME of the environment
-- variable that holds one.

-- 'A2AR': tells an a2a-recover journal from any other SQLite file.
PRAGMA application_id = 1093812562;

-- A named group of steps (`trip-42`); single steps delegated without one live in `default`.
CREATE TABLE workflows (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    state       TEXT    NOT NULL DEFAULT 'ACTIVE'
                CHECK (state IN ('ACTIVE', 'COMPENSATING', 'COMPENSATED')),
    -- The plan as committed by `delegate --plan` (JSON), for the diff against a re-run.
    plan_json   TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

-- Every agent we have talked to or registered; keyed by its Agent Card URL.
CREATE TABLE agents (
    id                  INTEGER PRIMARY KEY,
    card_url            TEXT    NOT NULL UNIQUE,
    -- The JSON-RPC interface chosen from the card's supportedInterfaces, and its tenant.
    interface_url       TEXT,
    protocol_version    TEXT,
    tenant              TEXT,
    -- The NAME of the environment variable holding this agent's credential (`agents add`).
    token_env           TEXT,
    card_json           TEXT,
    -- JSON array of the card's skill ids, for `--skill` and re-delegation.
    skills_json         TEXT    NOT NULL DEFAULT '[]',
    -- NULL: not known yet; 0: the agent refused a client-chosen contextId; 1: accepted one.
    accepts_context_id  INTEGER CHECK (accepts_context_id IN (0, 1)),
    -- Registration order in the registry (`agents add`); NULL when only used via --agent.
    registered          INTEGER UNIQUE,
    fetched_at          INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) STRICT;

-- One unit of delegated work, `WORKFLOW/STEP`; everything needed to send it again.
CREATE TABLE steps (
    id                  INTEGER PRIMARY KEY,
    workflow_id         INTEGER NOT NULL REFERENCES workflows (id),
    name                TEXT    NOT NULL,
    -- Order of first intent across the journal (plan order for plans); compensation runs
    -- in reverse.
    seq                 INTEGER NOT NULL UNIQUE,
    text                TEXT    NOT NULL,
    -- The binding: exactly one of an agent (card URL as resolved from --agent), a skill of
    -- the registry, or a command (compensation steps run with `compensate_cmd`).
    agent_url           TEXT,
    skill               TEXT,
    command             TEXT,
    token_env           TEXT,
    -- JSON object sent as message.metadata.
    metadata_json       TEXT,
    max_attempts        INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
    allow_cross_origin  INTEGER NOT NULL DEFAULT 0 CHECK (allow_cross_origin IN (0, 1)),
    -- Declared effect (JSON object; NULL = no effect), its compensation and verification
    -- recipes (JSON), and the absolute directory commands run in.
    effect_json         TEXT,
    compensate_json     TEXT,
    verify_json         TEXT,
    cwd                 TEXT,
    -- For a compensation step `STEP~compensate`: the step it undoes.
    compensates_step_id INTEGER REFERENCES steps (id),
    -- The operator's decision (`resolve`).
    resolution          TEXT CHECK (resolution IN ('done', 'abandoned', 'retry', 'resend')),
    resolution_reason   TEXT,
    resolved_at         INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    CHECK ((agent_url IS NOT NULL) + (skill IS NOT NULL) + (command IS NOT NULL) = 1),
    UNIQUE (workflow_id, name)
) STRICT;

CREATE INDEX steps_by_workflow ON steps (workflow_id, seq);

-- One delegation of a step to one agent: its own messageId, contextId and (once known) taskId.
CREATE TABLE attempts (
    id                  INTEGER PRIMARY KEY,
    step_id             INTEGER NOT NULL REFERENCES steps (id),
    number              INTEGER NOT NULL CHECK (number >= 1),
    -- NULL only for command attempts (compensation commands).
    agent_id            INTEGER REFERENCES agents (id),
    -- The endpoint this attempt is sent to, journaled BEFORE the send: NULL means it was
    -- never sent. Resends and looks use exactly this endpoint.
    interface_url       TEXT,
    tenant              TEXT,
    token_env           TEXT,
    message_id          TEXT    NOT NULL UNIQUE,
    context_id          TEXT,
    -- 1 while context_id is the one we chose (and may search by); 0 once it came from the agent.
    context_id_ours     INTEGER NOT NULL DEFAULT 1 CHECK (context_id_ours IN (0, 1)),
    task_id             TEXT,
    state               TEXT    NOT NULL CHECK (state IN (
                            'INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                            'AUTH_REQUIRED', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED',
                            'REPLIED', 'LOST', 'UNCERTAIN', 'REFUSED', 'UNKNOWN')),
    -- The remote state name as reported (`TASK_STATE_WORKING`, or an unknown spelling).
    remote_state        TEXT,
    -- The last applied status timestamp, as the agent sent it.
    status_timestamp    TEXT,
    -- The full status message of INPUT_REQUIRED / AUTH_REQUIRED (JSON), while pending.
    pending_question    TEXT,
    -- The raw JSON of the last task snapshot that changed anything.
    last_task_json      TEXT,
    -- The raw JSON of a direct Message reply (REPLIED), or a command's result.
    outcome_json        TEXT,
    -- The last failure, one line.
    error               TEXT,
    effect              TEXT CHECK (effect IN ('claimed', 'verified', 'absent', 'unknown',
                            'compensating', 'compensated', 'compensation-failed')),
    -- Set when `compensate` asked the agent to cancel (CANCELED is then not a failure).
    cancel_requested_at INTEGER,
    previous_attempt_id INTEGER REFERENCES attempts (id),
    lease_owner_pid     INTEGER,
    lease_owner_host    TEXT,
    lease_expires_at    INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (step_id, number)
) STRICT;

-- What a reconcile pass visits: attempts not yet finished.
CREATE INDEX attempts_unfinished ON attempts (step_id)
    WHERE state IN ('INTENT', 'SENT', 'SUBMITTED', 'WORKING', 'INPUT_REQUIRED',
                    'AUTH_REQUIRED', 'UNKNOWN', 'UNCERTAIN');
CREATE INDEX attempts_by_task ON attempts (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX attempts_by_agent ON attempts (agent_id);

-- Further messages on an attempt's task (answers to INPUT_REQUIRED, resumes after AUTH_REQUIRED).
CREATE TABLE replies (
    id          INTEGER PRIMARY KEY,
    attempt_id  INTEGER NOT NULL REFERENCES attempts (id),
    message_id  TEXT    NOT NULL UNIQUE,
    text        TEXT    NOT NULL,
    metadata_json TEXT,
    -- The status timestamp of the question this answers.
    answers     TEXT,
    state       TEXT    NOT NULL CHECK (state IN ('INTENT', 'DELIVERED', 'UNCERTAIN', 'REFUSED')),
    error       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX replies_by_attempt ON replies (attempt_id, id);

-- Artifacts of an attempt's task, idempotent by artifactId.
CREATE TABLE artifacts (
    attempt_id  INTEGER NOT NULL REFERENCES attempts (id),
    artifact_id TEXT    NOT NULL,
    name        TEXT,
    description TEXT,
    -- JSON array of parts, as received (appends accumulate).
    parts_json  TEXT    NOT NULL,
    metadata_json TEXT,
    last_chunk  INTEGER NOT NULL DEFAULT 0 CHECK (last_chunk IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (attempt_id, artifact_id)
) STRICT;

-- Append-only audit: every change and every failure.
CREATE TABLE events (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    workflow_id INTEGER REFERENCES workflows (id),
    step_id     INTEGER REFERENCES steps (id),
    attempt_id  INTEGER REFERENCES attempts (id),
    kind        TEXT    NOT NULL,
    from_state  TEXT,
    to_state    TEXT,
    detail_json TEXT
) STRICT;

CREATE INDEX events_by_attempt ON events (attempt_id, id);
CREATE INDEX events_by_step ON events (step_id, id);
CREATE INDEX events_by_workflow ON events (workflow_id, id);
