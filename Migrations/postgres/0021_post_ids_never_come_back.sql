-- PostgreSQL version of sqlite/0021: nothing to do. Posts' ids come from an identity sequence,
-- which never gives a number twice.
SELECT 1;
