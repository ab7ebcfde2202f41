-- a2a-recover journal, schema version 23: the state checks of `steps` and `attempts` written as
-- comparisons.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version` in one BEGIN IMMEDIATE
-- transaction, with foreign keys off and `PRAGMA foreign_key_check` before the commit.
--
-- SQLite evaluates `x IN ('a', 'b', 'c', …)` by building a temporary index of the list each
-- time a statement runs, and a write to `attempts` built up to four (docs/performance.md).
-- `x = 'a' OR x = 'b' OR …` accepts exactly the same values
-- (NULL included: both are NULL, which a CHECK lets pass) without one. SQLite cannot change a
-- CHECK in place, so both tables are rebuilt as SQLite documents it (create, copy, drop,
-- rename, the indexes again), the same columns in the same order with the same constraints.

CREATE TABLE steps_new (
    id                  INTEGER PRIMARY KEY,
    workflow_id         INTEGER NOT NULL REFERENCES workflows (id),
    name                TEXT    NOT NULL,
    seq                 INTEGER NOT NULL UNIQUE,
    text                TEXT    NOT NULL,
    agent_url           TEXT,
    skill               TEXT,
    command             TEXT,
    token_env           TEXT,
    metadata_json       TEXT,
    max_attempts        INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
    allow_cross_origin  INTEGER NOT NULL DEFAULT 0 CHECK (allow_cross_origin IN (0, 1)),
    effect_json         TEXT,
    compensate_json     TEXT,
    verify_json         TEXT,
    cwd                 TEXT,
    compensates_step_id INTEGER REFERENCES steps (id),
    resolution          TEXT CHECK (resolution = 'done' OR resolution = 'abandoned'
                            OR resolution = 'retry' OR resolution = 'resend'),
    resolution_reason   TEXT,
    resolved_at         INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    force_binding       TEXT,
    force_protocol      TEXT,
    token_cmd           TEXT,
    data_json           TEXT,
    CHECK ((agent_url IS NOT NULL) + (skill IS NOT NULL) + (command IS NOT NULL) = 1),
    UNIQUE (workflow_id, name)
) STRICT;
INSERT INTO steps_new (id, workflow_id, name, seq, text, agent_url, skill, command, token_env,
        metadata_json, max_attempts, allow_cross_origin, effect_json, compensate_json,
        verify_json, cwd, compensates_step_id, resolution, resolution_reason, resolved_at,
        created_at, updated_at, force_binding, force_protocol, token_cmd, data_json)
    SELECT id, workflow_id, name, seq, text, agent_url, skill, command, token_env,
        metadata_json, max_attempts, allow_cross_origin, effect_json, compensate_json,
        verify_json, cwd, compensates_step_id, resolution, resolution_reason, resolved_at,
        created_at, updated_at, force_binding, force_protocol, token_cmd, data_json
    FROM steps;
DROP TABLE steps;
ALTER TABLE steps_new RENAME TO steps;
CREATE INDEX steps_by_workflow ON steps (workflow_id, seq);

CREATE TABLE attempts_new (
    id                  INTEGER PRIMARY KEY,
    step_id             INTEGER NOT NULL REFERENCES steps (id),
    number              INTEGER NOT NULL CHECK (number >= 1),
    agent_id            INTEGER REFERENCES agents (id),
    interface_url       TEXT,
    tenant              TEXT,
    token_env           TEXT,
    message_id          TEXT    NOT NULL UNIQUE,
    context_id          TEXT,
    context_id_ours     INTEGER NOT NULL DEFAULT 1 CHECK (context_id_ours IN (0, 1)),
    task_id             TEXT,
    state               TEXT    NOT NULL CHECK (state = 'INTENT' OR state = 'SENT'
                            OR state = 'SUBMITTED' OR state = 'WORKING'
                            OR state = 'INPUT_REQUIRED' OR state = 'AUTH_REQUIRED'
                            OR state = 'COMPLETED' OR state = 'FAILED' OR state = 'CANCELED'
                            OR state = 'REJECTED' OR state = 'REPLIED' OR state = 'LOST'
                            OR state = 'UNCERTAIN' OR state = 'REFUSED' OR state = 'UNKNOWN'),
    remote_state        TEXT,
    status_timestamp    TEXT,
    pending_question    TEXT,
    last_task_json      TEXT,
    outcome_json        TEXT,
    error               TEXT,
    effect              TEXT CHECK (effect = 'claimed' OR effect = 'verified'
                            OR effect = 'absent' OR effect = 'unknown'
                            OR effect = 'compensating' OR effect = 'compensated'
                            OR effect = 'compensation-failed'),
    cancel_requested_at INTEGER,
    previous_attempt_id INTEGER REFERENCES attempts (id),
    lease_owner_pid     INTEGER,
    lease_owner_host    TEXT,
    lease_expires_at    INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    resolution          TEXT CHECK (resolution = 'done' OR resolution = 'abandoned'
                            OR resolution = 'retry' OR resolution = 'resend'),
    resolution_reason   TEXT,
    resolved_at         INTEGER,
    send_started_at     INTEGER,
    send_timeout_ms     INTEGER,
    continuation_task_id TEXT,
    binding             TEXT,
    protocol_version    TEXT,
    token_cmd           TEXT,
    lease_owner_id      TEXT,
    credential_source   TEXT    NOT NULL DEFAULT 'none' CHECK (credential_source = 'step'
                            OR credential_source = 'agent' OR credential_source = 'none'),
    UNIQUE (step_id, number)
) STRICT;
INSERT INTO attempts_new (id, step_id, number, agent_id, interface_url, tenant, token_env,
        message_id, context_id, context_id_ours, task_id, state, remote_state,
        status_timestamp, pending_question, last_task_json, outcome_json, error, effect,
        cancel_requested_at, previous_attempt_id, lease_owner_pid, lease_owner_host,
        lease_expires_at, created_at, updated_at, resolution, resolution_reason, resolved_at,
        send_started_at, send_timeout_ms, continuation_task_id, binding, protocol_version,
        token_cmd, lease_owner_id, credential_source)
    SELECT id, step_id, number, agent_id, interface_url, tenant, token_env,
        message_id, context_id, context_id_ours, task_id, state, remote_state,
        status_timestamp, pending_question, last_task_json, outcome_json, error, effect,
        cancel_requested_at, previous_attempt_id, lease_owner_pid, lease_owner_host,
        lease_expires_at, created_at, updated_at, resolution, resolution_reason, resolved_at,
        send_started_at, send_timeout_ms, continuation_task_id, binding, protocol_version,
        token_cmd, lease_owner_id, credential_source
    FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_new RENAME TO attempts;
CREATE INDEX attempts_by_task ON attempts (task_id) WHERE task_id IS NOT NULL;
CREATE INDEX attempts_by_agent ON attempts (agent_id);
CREATE INDEX attempts_needing_human ON attempts (id)
    WHERE state = 'INPUT_REQUIRED' OR state = 'AUTH_REQUIRED' OR state = 'UNCERTAIN'
       OR state = 'REFUSED' OR state = 'LOST' OR state = 'FAILED' OR state = 'REJECTED'
       OR (state = 'CANCELED' AND cancel_requested_at IS NULL)
       OR effect = 'absent' OR effect = 'unknown' OR effect = 'compensation-failed';
