-- A reconciler's drift judged once per row (issue 38). `judged` names off_rollout once, but the
-- planner inlined the CTE into the three places that read it (the column, the time it began, and
-- the filter), and with it the lookup of the applied commit's rollout: three probes of target_commit
-- per reconciler. Materialized, each reconciler is looked up once: a fold of 20,000 reconcilers at
-- fleet L judged them in 439 ms before (auto_explain showed 60,000 probes). Otherwise as schema/0012.
CREATE OR REPLACE FUNCTION kalypso_judge_drift(reconciler_ids bigint[], stale_before timestamptz)
RETURNS TABLE (deployment_target_id bigint, reconciler_id bigint, environment_id bigint, manifests_endpoint_id bigint,
               host_id bigint, not_on_desired_rollout boolean, failing boolean, stale boolean, drifting_since timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  WITH judged AS MATERIALIZED (
    SELECT t.id AS target_id, t.environment_id, s.reconciler_id, s.manifests_endpoint_id, s.host_id, s.status, s.observed_at, s.last_seen_at,
           ca.id IS NOT NULL AND s.gitops_commit_id IS DISTINCT FROM ca.gitops_commit_id
             -- The applied commit's rollout is looked up (by index) only for reconcilers off the desired commit.
             AND (SELECT a.rollout_id FROM target_commit tc JOIN deployment_assignment a ON a.id = tc.assignment_id
                   WHERE tc.deployment_target_id = t.id AND tc.gitops_commit_id = s.gitops_commit_id) IS DISTINCT FROM ca.rollout_id
             AS off_rollout,
           cr.assigned_at AS rollout_started_at
      FROM unnest($1) AS x(id)
      JOIN deployment_state s ON s.reconciler_id = x.id
      JOIN deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
      LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
      LEFT JOIN deployment_assignment cr ON cr.id = ca.rollout_id
  )
  SELECT j.target_id, j.reconciler_id, j.environment_id, j.manifests_endpoint_id, j.host_id,
         j.off_rollout, j.status = 'failure', j.last_seen_at < $2,
         -- least() skips NULLs: the reasons that do not hold.
         least(CASE WHEN j.off_rollout THEN greatest(j.rollout_started_at, j.observed_at) END,
               CASE WHEN j.status = 'failure' THEN j.observed_at END,
               CASE WHEN j.last_seen_at < $2 THEN j.last_seen_at END)
    FROM judged j
   WHERE j.off_rollout OR j.status = 'failure' OR j.last_seen_at < $2
$$;
