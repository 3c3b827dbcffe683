-- The rollout refresh looks up each report's rollout once per commit (issue 38). Every report in a
-- refreshed span met target_commit and then deployment_assignment, to learn which rollout its commit
-- belongs to on the target. PostgreSQL remembered the first lookup per (target, commit) (Memoize) but
-- probed deployment_assignment once per report: in the first refresh after a prod-wide assignment
-- on the kept fleet L, 479,952 probes for 11,889 distinct pairs. As one subquery both lookups are
-- remembered together. That refresh, alternated four times each in one transaction: 4.4-5.8 s →
-- 3.7-4.4 s. Otherwise as schema/0033.
CREATE OR REPLACE FUNCTION kalypso_refresh_rollouts(endpoint_ids bigint[], from_times timestamptz[], to_times timestamptz[])
RETURNS integer LANGUAGE plpgsql
SET work_mem = '64MB'
AS $$
DECLARE
  refreshed integer;
  removed integer;
BEGIN
  -- Rollouts whose first assignment no longer starts a run (a late descriptor joined them to another).
  WITH gone AS (
    DELETE FROM rollout o
     USING deployment_target t, deployment_assignment a
     WHERE t.id = o.deployment_target_id AND t.manifests_endpoint_id IN (SELECT unnest(endpoint_ids))
       AND a.id = o.assignment_id AND a.rollout_id IS DISTINCT FROM a.id
    RETURNING o.assignment_id
  ), gone_laggards AS (
    DELETE FROM rollout_laggard l WHERE l.assignment_id IN (SELECT assignment_id FROM gone)
  )
  SELECT count(*) INTO removed FROM gone;

  WITH touched AS (
    SELECT e AS manifests_endpoint_id, min(f) AS from_time, max(t) AS to_time
      FROM unnest(endpoint_ids, from_times, to_times) AS x(e, f, t)
     GROUP BY e
  ), runs AS (
    SELECT a.deployment_target_id, a.rollout_id, min(a.assigned_at) AS assigned_at
      FROM deployment_target t
      JOIN deployment_assignment a ON a.deployment_target_id = t.id
     WHERE t.manifests_endpoint_id IN (SELECT manifests_endpoint_id FROM touched)
     GROUP BY a.deployment_target_id, a.rollout_id
  ), lifetimes AS (
    SELECT r.rollout_id AS assignment_id, r.deployment_target_id, t.manifests_endpoint_id, f.gitops_commit_id, r.assigned_at,
           v.build_time,
           lead(r.assigned_at) OVER (PARTITION BY r.deployment_target_id ORDER BY r.assigned_at, r.rollout_id) AS superseded_at
      FROM runs r
      JOIN deployment_target t ON t.id = r.deployment_target_id
      JOIN deployment_assignment f ON f.id = r.rollout_id
      JOIN workload_version v ON v.id = f.workload_version_id
  ), refreshing AS MATERIALIZED (
    SELECT l.*
      FROM lifetimes l
      JOIN touched x USING (manifests_endpoint_id)
     WHERE x.to_time >= l.assigned_at - interval '1 hour'
       AND (l.superseded_at IS NULL OR x.from_time < l.superseded_at)
  ), spans AS (
    -- Per target, the span its refreshing rollouts' lives cover (each from an hour before it), and
    -- those rollouts, as arrays: each report meets them by unnest, not by a join to `refreshing`.
    SELECT deployment_target_id, manifests_endpoint_id, min(assigned_at) - interval '1 hour' AS from_time,
           max(coalesce(superseded_at, 'infinity')) AS to_time,
           array_agg(assignment_id) AS rollout_ids, array_agg(assigned_at) AS assigned, array_agg(superseded_at) AS superseded
      FROM refreshing
     GROUP BY deployment_target_id, manifests_endpoint_id
  ), reported AS (
    -- Every reconciler that reported on the endpoint during the rollout's life; its successes and
    -- failures count when the commit belongs to the rollout. Each report in a span is read once,
    -- with the rollout its commit belongs to on that target, and paired with the rollouts whose
    -- lives it falls in. The rollout's columns come along, so that no later step joins back to
    -- `refreshing`.
    SELECT r.assignment_id, s.deployment_target_id, r.assigned_at, r.superseded_at, h.reconciler_id,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'success') AS succeeded_at,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'failure') AS failed_at
      FROM spans s
      JOIN deployment_state_history h
        ON h.manifests_endpoint_id = s.manifests_endpoint_id AND h.observed_at >= s.from_time AND h.observed_at < s.to_time
      -- The commit's rollout on the target, looked up as one subquery (OFFSET 0 keeps it one): a span's
      -- reports carry a few commits, so PostgreSQL remembers each pair's answer (Memoize) instead of
      -- probing deployment_assignment once per report.
      LEFT JOIN LATERAL (SELECT a.rollout_id FROM target_commit tc JOIN deployment_assignment a ON a.id = tc.assignment_id
                          WHERE tc.deployment_target_id = s.deployment_target_id AND tc.gitops_commit_id = h.gitops_commit_id OFFSET 0) ma ON true
     CROSS JOIN LATERAL unnest(s.rollout_ids, s.assigned, s.superseded) AS r(assignment_id, assigned_at, superseded_at)
     WHERE h.observed_at >= r.assigned_at - interval '1 hour' AND h.observed_at < coalesce(r.superseded_at, 'infinity')
     GROUP BY r.assignment_id, s.deployment_target_id, r.assigned_at, r.superseded_at, h.reconciler_id
  ), subscribed AS (
    -- Every reporter, and while the rollout is live every current state on its endpoint: once each.
    SELECT assignment_id, deployment_target_id, assigned_at, superseded_at, reconciler_id,
           min(succeeded_at) AS succeeded_at, min(failed_at) AS failed_at
      FROM (SELECT * FROM reported
            UNION ALL
            SELECT r.assignment_id, r.deployment_target_id, r.assigned_at, r.superseded_at, s.reconciler_id, NULL, NULL
              FROM refreshing r
              JOIN deployment_state s ON s.manifests_endpoint_id = r.manifests_endpoint_id
             WHERE r.superseded_at IS NULL) m
     GROUP BY assignment_id, deployment_target_id, assigned_at, superseded_at, reconciler_id
  ), subscribers AS MATERIALIZED (
    -- A removed reconciler counts for the rollouts it applied before its removal, or that were
    -- superseded before it. k orders by success time alone: ties in any order.
    SELECT m.assignment_id, m.deployment_target_id, m.assigned_at, m.reconciler_id, m.succeeded_at, m.failed_at,
           count(*) OVER (PARTITION BY m.assignment_id) AS n,
           row_number() OVER (PARTITION BY m.assignment_id ORDER BY m.succeeded_at NULLS LAST) AS k
      FROM subscribed m
      LEFT JOIN reconciler gone ON gone.id = m.reconciler_id AND gone.removed_at IS NOT NULL
     WHERE gone.removed_at IS NULL OR gone.removed_at >= coalesce(m.succeeded_at, m.superseded_at, 'infinity')
  ), points AS (
    -- Positions in integers: ceil(n × 0.5) = (n + 1) / 2, ceil(n × 0.9) = (9n + 9) / 10, and the
    -- laggards are the last ceil(n × 0.1) = (n + 9) / 10.
    SELECT assignment_id, count(*)::int AS subscribers, count(succeeded_at)::int AS succeeded, count(failed_at)::int AS failed,
           min(succeeded_at) AS first_success_at,
           min(succeeded_at) FILTER (WHERE k = (n + 1) / 2) AS converged_50_at,
           min(succeeded_at) FILTER (WHERE k = (9 * n + 9) / 10) AS converged_90_at,
           min(succeeded_at) FILTER (WHERE k = n) AS converged_at,
           min(failed_at) AS first_failure_at
      FROM subscribers
     GROUP BY assignment_id
  ), placed AS (
    -- The laggards are the last in order of success time, then host and reconciler name: among those
    -- whose success time is at or after the first laggard position's. What tells them is computed
    -- beside each subscriber, as window aggregates, not joined from `points`.
    SELECT s.*,
           min(s.succeeded_at) FILTER (WHERE s.k = (s.n + 1) / 2) OVER w AS converged_50_at,
           min(s.succeeded_at) FILTER (WHERE s.k = s.n - (s.n + 9) / 10 + 1) OVER w AS laggard_from,
           bool_or(s.succeeded_at IS NULL AND s.k = s.n - (s.n + 9) / 10 + 1) OVER w AS laggard_from_unapplied
      FROM subscribers s
    WINDOW w AS (PARTITION BY s.assignment_id)
  ), candidates AS (
    SELECT s.assignment_id, s.deployment_target_id, s.assigned_at, s.reconciler_id, c.host_id, s.succeeded_at, s.n,
           s.converged_50_at,
           count(*) OVER (PARTITION BY s.assignment_id) AS tail,
           row_number() OVER (PARTITION BY s.assignment_id ORDER BY s.succeeded_at NULLS LAST, hh.name, c.name) AS tail_k
      FROM placed s
      JOIN reconciler c ON c.id = s.reconciler_id
      JOIN host hh ON hh.id = c.host_id
     WHERE s.succeeded_at IS NULL OR (NOT s.laggard_from_unapplied AND s.succeeded_at >= s.laggard_from)
  ), laggards AS (
    -- A candidate's place among all subscribers comes after every subscriber that is no candidate:
    -- n - tail + tail_k.
    SELECT assignment_id, (tail - tail_k + 1)::int AS position, deployment_target_id, assigned_at, reconciler_id, host_id,
           succeeded_at, kalypso_seconds_between(converged_50_at, succeeded_at) AS behind_seconds
      FROM candidates
     WHERE n - tail + tail_k > n - (n + 9) / 10
       AND (succeeded_at IS NULL OR converged_50_at IS NULL OR succeeded_at > converged_50_at)
  ), cleared AS (
    -- No unique key here: this statement's DELETE sees only the rows from before it, its INSERT adds the new ones.
    DELETE FROM rollout_laggard WHERE assignment_id IN (SELECT assignment_id FROM refreshing)
  ), lagging AS (
    INSERT INTO rollout_laggard (assignment_id, position, deployment_target_id, assigned_at, reconciler_id, host_id,
                                 succeeded_at, behind_seconds)
    SELECT assignment_id, position, deployment_target_id, assigned_at, reconciler_id, host_id, succeeded_at, behind_seconds
      FROM laggards
  )
  INSERT INTO rollout AS o (assignment_id, deployment_target_id, gitops_commit_id, assigned_at, build_time, superseded_at,
                            subscribers, succeeded, failed, first_success_at, converged_50_at, converged_90_at,
                            converged_at, first_failure_at)
  SELECT r.assignment_id, r.deployment_target_id, r.gitops_commit_id, r.assigned_at, r.build_time, r.superseded_at,
         coalesce(p.subscribers, 0), coalesce(p.succeeded, 0), coalesce(p.failed, 0), p.first_success_at,
         p.converged_50_at, p.converged_90_at, p.converged_at, p.first_failure_at
    FROM refreshing r
    LEFT JOIN points p USING (assignment_id)
  ON CONFLICT (assignment_id) DO UPDATE
     SET deployment_target_id = excluded.deployment_target_id, gitops_commit_id = excluded.gitops_commit_id,
         assigned_at = excluded.assigned_at, build_time = excluded.build_time, superseded_at = excluded.superseded_at,
         subscribers = excluded.subscribers,
         succeeded = excluded.succeeded, failed = excluded.failed, first_success_at = excluded.first_success_at,
         converged_50_at = excluded.converged_50_at, converged_90_at = excluded.converged_90_at,
         converged_at = excluded.converged_at, first_failure_at = excluded.first_failure_at, refreshed_at = now()
   WHERE (o.build_time, o.superseded_at, o.subscribers, o.succeeded, o.failed, o.first_success_at, o.converged_50_at, o.converged_90_at,
          o.converged_at, o.first_failure_at)
         IS DISTINCT FROM
         (excluded.build_time, excluded.superseded_at, excluded.subscribers, excluded.succeeded, excluded.failed, excluded.first_success_at,
          excluded.converged_50_at, excluded.converged_90_at, excluded.converged_at, excluded.first_failure_at);
  GET DIAGNOSTICS refreshed = ROW_COUNT;

  -- Restores depend on the later rollouts of the same target: recompute them for every target touched.
  UPDATE rollout f
     SET restored_at = x.restored_at, refreshed_at = now()
    FROM (
      SELECT f.assignment_id,
             (SELECT min(o.converged_at)
                FROM rollout o
               WHERE o.deployment_target_id = f.deployment_target_id
                 AND o.assigned_at >= f.assigned_at
                 AND o.converged_at >= f.first_failure_at) AS restored_at
        FROM rollout f
        JOIN deployment_target t ON t.id = f.deployment_target_id
       WHERE t.manifests_endpoint_id IN (SELECT unnest(endpoint_ids))
         AND f.first_failure_at IS NOT NULL
    ) x
   WHERE f.assignment_id = x.assignment_id AND f.restored_at IS DISTINCT FROM x.restored_at;
  UPDATE rollout f SET restored_at = NULL
    FROM deployment_target t
   WHERE t.id = f.deployment_target_id AND t.manifests_endpoint_id IN (SELECT unnest(endpoint_ids))
     AND f.first_failure_at IS NULL AND f.restored_at IS NOT NULL;
  -- The current rollouts' counts of now, for the endpoints refreshed (a rollout may have become
  -- current or been superseded, or its commits changed) and any the summaries' counts queued.
  PERFORM kalypso_count_current_rollouts(endpoint_ids);
  RETURN refreshed + removed;
END $$;
