-- The write path, measured (README "Benchmarks"): every state report costs a history row and a
-- current-state update, so both must be cheap.
--
-- History rows reference reconcilers and endpoints that the writer resolved from committed rows
-- in the same request, and neither is ever deleted: the foreign keys only cost a trigger per row.
ALTER TABLE deployment_state_history
  DROP CONSTRAINT deployment_state_history_reconciler_id_fkey,
  DROP CONSTRAINT deployment_state_history_manifests_endpoint_id_fkey;

-- Current states change commit and status on every transition. With no index on those columns
-- and room left on each page, PostgreSQL updates them in place (HOT): no index entries to add.
-- The reports find a target's reconcilers by endpoint and filter the commit on the few rows.
DROP INDEX deployment_state_by_endpoint_commit;
CREATE INDEX deployment_state_by_endpoint ON deployment_state (manifests_endpoint_id);
ALTER TABLE deployment_state SET (fillfactor = 70);
