-- a2a-recover journal (PostgreSQL), version 23: the state checks of `steps` and `attempts`
-- written as comparisons on SQLite.
--
-- The PostgreSQL twin of src/journal/migrations/0023_check_lists.sql, which rebuilds two tables
-- because SQLite evaluates a CHECK's `IN (…)` list of more than two values by building a
-- temporary index of it on every write. PostgreSQL compares against the list directly, so its
-- checks stay as they are: nothing changes here but the version. Released migrations are
-- history: never edit this file once released; add the next one to both stores instead.
SELECT 1;
