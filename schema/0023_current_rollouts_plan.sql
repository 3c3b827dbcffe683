-- kalypso_current_rollouts (schema/0014) with the same results, and no join of two CTEs of a row per
-- target. Its result joined the rollouts it had counted back to the list of current rollouts; the
-- planner guesses one row for the counted ones (an aggregate over CTEs) and, as
-- test/store/refresh-plans.test.ts shows on a small fleet, plans that join as a nested loop that
-- scans the list again for each counted rollout: fine for a few, but rollouts × rollouts for a fleet
-- of 12,000 targets whenever the statistics make that guess. The same trap held the rollout refresh
-- for 210 s in a replay (schema/0022). Now the rollout's columns come along with its counts.

CREATE OR REPLACE FUNCTION kalypso_current_rollouts(stale_before timestamptz, target_ids bigint[])
RETURNS TABLE (assignment_id bigint, subscribers integer, succeeded integer, failed integer, in_progress integer, stale integer,
               status text, recorded_status text, assigned_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $function$
BEGIN
  RETURN QUERY EXECUTE format($query$
    WITH current_rollout AS (
      SELECT o.assignment_id, o.deployment_target_id, t.manifests_endpoint_id, o.subscribers AS ever_subscribed,
             o.status AS recorded_status, o.assigned_at
        FROM rollout o
        JOIN deployment_target t ON t.id = o.deployment_target_id
       WHERE o.superseded_at IS NULL %1$s
    ), counts AS (
      -- Per endpoint, commit and status, as the summaries have them: n, stale, success, failure.
      SELECT c.manifests_endpoint_id, c.gitops_commit_id, c.reconcilers AS n,
             CASE WHEN c.status = 'stale' THEN c.reconcilers ELSE 0 END AS stale,
             CASE WHEN c.status = 'success' THEN c.reconcilers ELSE 0 END AS success,
             CASE WHEN c.status = 'failure' THEN c.reconcilers ELSE 0 END AS failure
        FROM endpoint_status_count c %2$s
      UNION ALL
      -- Counted live, stale by this cut. (Each candidate's state is looked up by key — OFFSET 0 keeps
      -- the lookup a subquery — so a wrong guess of how many there are cannot turn it into a scan
      -- of every state.)
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, 0, 1, -(r.status = 'success')::int, -(r.status = 'failure')::int
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE NOT r.counted_stale AND r.last_seen_at < $1 AND s.last_seen_at < $1 %3$s
      UNION ALL
      -- Counted stale, live by this cut.
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, 0, -1, (s.status = 'success')::int, (s.status = 'failure')::int
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.status, s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE r.counted_stale AND r.last_seen_at >= $1 AND s.last_seen_at >= $1 %3$s
    ), per_commit AS (
      SELECT k.manifests_endpoint_id, k.gitops_commit_id, sum(k.n)::int AS n, sum(k.stale)::int AS stale,
             sum(k.success)::int AS success, sum(k.failure)::int AS failure
        FROM counts k
       GROUP BY 1, 2
    ), rollout_commit AS (
      -- The commits of each current rollout: its assignments' own, and those that carry its version.
      -- (An assignment is its target's: the target need not be matched again, and a second join
      -- condition that always holds made the planner expect one row and loop over it.)
      SELECT c.assignment_id, tc.gitops_commit_id
        FROM current_rollout c
        JOIN deployment_assignment a ON a.rollout_id = c.assignment_id
        JOIN target_commit tc ON tc.assignment_id = a.id
    ), counted AS (
      -- On a commit of the rollout a reconciler's own status counts; on any other it is in progress.
      -- The rollout's columns come along, so that the result is not joined back to current_rollout.
      SELECT c.assignment_id, c.ever_subscribed, c.recorded_status, c.assigned_at, coalesce(sum(p.n), 0)::int AS subscribers,
             coalesce(sum(p.success) FILTER (WHERE rc.assignment_id IS NOT NULL), 0)::int AS succeeded,
             coalesce(sum(p.failure) FILTER (WHERE rc.assignment_id IS NOT NULL), 0)::int AS failed,
             coalesce(sum(p.stale), 0)::int AS stale
        FROM current_rollout c
        LEFT JOIN per_commit p ON p.manifests_endpoint_id = c.manifests_endpoint_id
        LEFT JOIN rollout_commit rc ON rc.assignment_id = c.assignment_id AND rc.gitops_commit_id = p.gitops_commit_id
       GROUP BY c.assignment_id, c.ever_subscribed, c.recorded_status, c.assigned_at
    )
    -- Subscribers that all left (removed) leave it waiting, as the gate: not settled, not failed.
    SELECT k.assignment_id, k.subscribers, k.succeeded, k.failed, k.subscribers - k.succeeded - k.failed - k.stale, k.stale,
           CASE WHEN k.subscribers = 0 THEN CASE WHEN k.ever_subscribed = 0 THEN 'no_subscribers' ELSE 'in_progress' END
                WHEN k.failed > 0 THEN 'failed'
                WHEN k.succeeded = k.subscribers THEN 'succeeded'
                ELSE 'in_progress' END,
           k.recorded_status, k.assigned_at
      FROM counted k$query$,
    CASE WHEN target_ids IS NULL THEN '' ELSE 'AND o.deployment_target_id IN (SELECT unnest($2))' END,
    -- A few targets: their endpoints' counts through the primary key.
    CASE WHEN target_ids IS NULL THEN ''
         ELSE 'WHERE c.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target t WHERE t.id IN (SELECT unnest($2)))' END,
    CASE WHEN target_ids IS NULL THEN ''
         ELSE 'AND r.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target t WHERE t.id IN (SELECT unnest($2)))' END)
  USING stale_before, target_ids;
END $function$;
