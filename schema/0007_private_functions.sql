-- The partition maintenance functions are the hub's own. PostgreSQL lets every role execute a new
-- function; they run with the caller's rights, so a reader could not drop anything anyway, but
-- Grafana's role (and any other) has no business calling them at all.
REVOKE EXECUTE ON FUNCTION kalypso_ensure_history_partitions(timestamptz, timestamptz) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_drop_history_before(timestamptz) FROM PUBLIC;
