-- What a reconciler kind says beyond status and message, for people to read: for an Argo CD
-- Application its sync and health status and the phase of its last operation
-- ({"argocd": {"sync": "Synced", "health": "Healthy", "operation": "Succeeded"}}). Kept with the
-- current state only, written by the newest report: a change of it alone (health going from
-- Progressing to Healthy while the status stays) is not a transition, so history keeps its columns.
-- NULL for kinds that say nothing more.
ALTER TABLE deployment_state ADD COLUMN details jsonb;
