-- PostgreSQL version of sqlite/0036: nothing to do. Ids come from identity sequences, which
-- never give a number twice.
SELECT 1;
