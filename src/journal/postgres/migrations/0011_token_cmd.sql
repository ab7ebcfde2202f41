-- a2a-recover journal (PostgreSQL), version 11: credentials printed by a command.
--
-- The PostgreSQL twin of src/journal/migrations/0011_token_cmd.sql: the same tables,
-- columns, constraints and indexes, translated (BIGINT for every integer, identity columns for
-- SQLite's INTEGER PRIMARY KEY, DOUBLE PRECISION for REAL; JSON stays TEXT). Released
-- migrations are history: never edit this file once released; add the next one to both stores
-- instead. postgres/migrate.rs runs it and records version 11 in `schema_migrations` in one
-- transaction, under the schema's advisory lock; the search_path is the journal's schema.

-- The command (`--token-cmd CMD`, split into argv without a shell) that prints the bearer
-- token, next to `token_env` (the name of a variable holding one). The command line is
-- journaled so that every later pass can run it again; what it prints never is. NULL: the
-- credential, if any, comes from `token_env`.
ALTER TABLE steps ADD COLUMN token_cmd TEXT COLLATE "C";
ALTER TABLE attempts ADD COLUMN token_cmd TEXT COLLATE "C";
ALTER TABLE agents ADD COLUMN token_cmd TEXT COLLATE "C";
