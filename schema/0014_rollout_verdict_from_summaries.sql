-- A current rollout's verdict (kalypso_current_rollouts, schema/0010 and 0013) from the summaries
-- kept current on write (schema/0012) instead of a pass over every reconciler's state: the
-- reconcilers of each endpoint per applied commit and effective status are endpoint_status_count's
-- rows. At fleet L (240,000 reconcilers, 12,000 current rollouts) that pass was half of judging
-- every current rollout.
--
-- The summaries judge staleness as of their last refresh; a caller's `stale_before` may differ (the
-- refresher runs every second, Grafana asks between two runs). The difference is corrected, still
-- exactly, from the few reconcilers whose side of the cut differs — found by index, normally none:
-- * counted live, silent since before the cut: stale now. Their summary row's last_seen_at may be
--   older than their state's (a sign of life from a live reconciler is not queued), so the state
--   decides;
-- * counted stale, seen at or after the cut (a caller with an earlier cut than the refresh's): live,
--   with their own status. A sign of life from a reconciler counted stale is queued, so after the
--   queue is folded in their summary row's last_seen_at is their state's.
-- Callers that must see the latest writes fold the queue in first (the API does); the views read
-- the summaries as the refresher left them, at most a refresh interval behind.
CREATE INDEX summary_reconciler_stale ON summary_reconciler (last_seen_at) WHERE status = 'stale';

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
       WHERE r.status <> 'stale' AND r.last_seen_at < $1 AND s.last_seen_at < $1 %3$s
      UNION ALL
      -- Counted stale, live by this cut.
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, 0, -1, (s.status = 'success')::int, (s.status = 'failure')::int
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.status, s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE r.status = 'stale' AND r.last_seen_at >= $1 AND s.last_seen_at >= $1 %3$s
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
      SELECT c.assignment_id, coalesce(sum(p.n), 0)::int AS subscribers,
             coalesce(sum(p.success) FILTER (WHERE rc.assignment_id IS NOT NULL), 0)::int AS succeeded,
             coalesce(sum(p.failure) FILTER (WHERE rc.assignment_id IS NOT NULL), 0)::int AS failed,
             coalesce(sum(p.stale), 0)::int AS stale
        FROM current_rollout c
        LEFT JOIN per_commit p ON p.manifests_endpoint_id = c.manifests_endpoint_id
        LEFT JOIN rollout_commit rc ON rc.assignment_id = c.assignment_id AND rc.gitops_commit_id = p.gitops_commit_id
       GROUP BY c.assignment_id
    )
    -- Subscribers that all left (removed) leave it waiting, as the gate: not settled, not failed.
    SELECT c.assignment_id, k.subscribers, k.succeeded, k.failed, k.subscribers - k.succeeded - k.failed - k.stale, k.stale,
           CASE WHEN k.subscribers = 0 THEN CASE WHEN c.ever_subscribed = 0 THEN 'no_subscribers' ELSE 'in_progress' END
                WHEN k.failed > 0 THEN 'failed'
                WHEN k.succeeded = k.subscribers THEN 'succeeded'
                ELSE 'in_progress' END,
           c.recorded_status, c.assigned_at
      FROM counted k
      JOIN current_rollout c USING (assignment_id)$query$,
    CASE WHEN target_ids IS NULL THEN '' ELSE 'AND o.deployment_target_id IN (SELECT unnest($2))' END,
    -- A few targets: their endpoints' counts through the primary key.
    CASE WHEN target_ids IS NULL THEN ''
         ELSE 'WHERE c.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target t WHERE t.id IN (SELECT unnest($2)))' END,
    CASE WHEN target_ids IS NULL THEN ''
         ELSE 'AND r.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target t WHERE t.id IN (SELECT unnest($2)))' END)
  USING stale_before, target_ids;
END $function$;
