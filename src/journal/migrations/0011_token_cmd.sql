-- a2a-recover journal, schema version 11: credentials printed by a command.
--
-- Released migrations are history: never edit this file once released; add a new one instead
-- (docs/journal.md). migrate.rs runs it and sets `PRAGMA user_version = 11` in one
-- BEGIN IMMEDIATE transaction. Nullable columns only: a binary that knows version 10 reads a
-- version-11 journal exactly as before (read-only, as for any newer journal).

-- The command (`--token-cmd CMD`, split into argv without a shell) that prints the bearer
-- token, next to `token_env` (the name of a variable holding one). The command line is
-- journaled so that every later pass can run it again; what it prints never is. NULL: the
-- credential, if any, comes from `token_env`.
ALTER TABLE steps ADD COLUMN token_cmd TEXT;
ALTER TABLE attempts ADD COLUMN token_cmd TEXT;
ALTER TABLE agents ADD COLUMN token_cmd TEXT;
