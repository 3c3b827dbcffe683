-- Whole-fleet delivery (issue 38): the aggregates read the window's rollouts without the slice.
--
-- kalypso_delivery_window kept every rollout of the window whose target is in the slice, and for
-- the whole fleet (every list NULL) the slice is every target: at fleet L, 60,000 rollouts hashed
-- against 12,000 targets in each of the totals, the trend and the outcomes, which the API asks
-- side by side on two cores. The window now reads the rollouts alone when no list is given, and
-- joins the slice otherwise (the callers plan each call with its arguments, so the branch not
-- taken is not run). Whole fleet, 30 days, on a kept fleet L: totals 88 → 65 ms, trend 105 → 87,
-- outcomes 95 → 78; an environment's about 3 ms slower each (46 → 49, 51 → 54, 79 → 82: the
-- union's cost). test/api/delivery-metrics.test.ts holds the answers.
--
-- kalypso_delivery_rollouts keeps the one-branch window (kalypso_delivery_window_ordered, the
-- same rows): its newest few are read by index in time order, which the two branches prevent
-- (20 → 110 ms for the whole fleet, as schema/0033 found for the laggards' window).

-- The window as before, for kalypso_delivery_rollouts.
CREATE FUNCTION kalypso_delivery_window_ordered(since timestamptz, until timestamptz, environments text[], workspaces text[],
                                        applications text[], workloads text[], deployment_targets text[], hosts text[],
                                        fix_window_seconds double precision)
RETURNS TABLE (assignment_id bigint, deployment_target_id bigint, assigned_at timestamptz, assigned_day date,
               superseded_at timestamptz, build_time timestamptz, status text, subscribers integer, succeeded integer,
               failed integer, converged boolean, had_failure boolean, judged boolean, change_failure boolean,
               lead_time_first_host_seconds double precision, lead_time_last_host_seconds double precision,
               convergence_50_seconds double precision, convergence_90_seconds double precision,
               convergence_100_seconds double precision, restore_seconds double precision)
LANGUAGE sql STABLE AS $$
  SELECT o.assignment_id, o.deployment_target_id, o.assigned_at, o.assigned_day, o.superseded_at, o.build_time, o.status,
         o.subscribers, o.succeeded, o.failed, o.converged_at IS NOT NULL, o.first_failure_at IS NOT NULL,
         o.converged_at IS NOT NULL OR o.first_failure_at IS NOT NULL OR o.superseded_at IS NOT NULL,
         o.first_failure_at IS NOT NULL OR coalesce(fix_window_seconds > 0 AND o.superseded_after_seconds <= fix_window_seconds, false),
         o.lead_time_first_host_seconds, o.lead_time_last_host_seconds, o.convergence_50_seconds, o.convergence_90_seconds,
         o.convergence_100_seconds, o.restore_seconds
    FROM rollout o
   WHERE o.assigned_at >= since AND o.assigned_at < until
     AND o.deployment_target_id IN (SELECT s.id FROM kalypso_delivery_slice(environments, workspaces, applications, workloads,
                                                                             deployment_targets, hosts) s(id))
$$;

CREATE OR REPLACE FUNCTION kalypso_delivery_window(since timestamptz, until timestamptz, environments text[], workspaces text[],
                                                   applications text[], workloads text[], deployment_targets text[], hosts text[],
                                                   fix_window_seconds double precision)
RETURNS TABLE (assignment_id bigint, deployment_target_id bigint, assigned_at timestamptz, assigned_day date,
               superseded_at timestamptz, build_time timestamptz, status text, subscribers integer, succeeded integer,
               failed integer, converged boolean, had_failure boolean, judged boolean, change_failure boolean,
               lead_time_first_host_seconds double precision, lead_time_last_host_seconds double precision,
               convergence_50_seconds double precision, convergence_90_seconds double precision,
               convergence_100_seconds double precision, restore_seconds double precision)
LANGUAGE sql STABLE AS $$
  SELECT o.assignment_id, o.deployment_target_id, o.assigned_at, o.assigned_day, o.superseded_at, o.build_time, o.status,
         o.subscribers, o.succeeded, o.failed, o.converged_at IS NOT NULL, o.first_failure_at IS NOT NULL,
         o.converged_at IS NOT NULL OR o.first_failure_at IS NOT NULL OR o.superseded_at IS NOT NULL,
         o.first_failure_at IS NOT NULL OR coalesce(fix_window_seconds > 0 AND o.superseded_after_seconds <= fix_window_seconds, false),
         o.lead_time_first_host_seconds, o.lead_time_last_host_seconds, o.convergence_50_seconds, o.convergence_90_seconds,
         o.convergence_100_seconds, o.restore_seconds
    FROM (SELECT r.* FROM rollout r
           WHERE r.assigned_at >= since AND r.assigned_at < until
             AND coalesce(environments, workspaces, applications, workloads, deployment_targets, hosts) IS NULL
          UNION ALL
          SELECT r.* FROM rollout r
           WHERE r.assigned_at >= since AND r.assigned_at < until
             AND coalesce(environments, workspaces, applications, workloads, deployment_targets, hosts) IS NOT NULL
             AND r.deployment_target_id IN (SELECT s.id FROM kalypso_delivery_slice(environments, workspaces, applications, workloads,
                                                                                     deployment_targets, hosts) s(id))) o
$$;

CREATE OR REPLACE FUNCTION kalypso_delivery_rollouts(
  since timestamptz DEFAULT now() - interval '30 days', until timestamptz DEFAULT now(),
  environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL,
  workloads text[] DEFAULT NULL, deployment_targets text[] DEFAULT NULL, hosts text[] DEFAULT NULL,
  fix_window_seconds double precision DEFAULT 3600, stale_before timestamptz DEFAULT NULL, max_rows integer DEFAULT 50)
RETURNS TABLE (rollout_id bigint, assigned_at timestamptz, environment text, environment_order bigint, workspace text,
               application text, workload text, deployment_target text, manifests_endpoint text, version text, build text,
               commit_id text, build_time timestamptz, superseded_at timestamptz, current boolean, status text,
               change_failure boolean, subscribers integer, subscribers_succeeded integer, subscribers_failed integer,
               lead_time_first_host_seconds double precision, lead_time_last_host_seconds double precision,
               convergence_50_seconds double precision, convergence_90_seconds double precision,
               convergence_100_seconds double precision, restore_seconds double precision,
               lagging_hosts text[], regressed_on text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '64MB' AS $function$
BEGIN
  RETURN QUERY EXECUTE $query$
    WITH newest AS MATERIALIZED (
      -- The newest first, then named: naming every rollout of the window to keep a few costs more.
      SELECT o.* FROM kalypso_delivery_window_ordered($1, $2, $3, $4, $5, $6, $7, $8, $9) o
       WHERE o.subscribers > 0
       ORDER BY o.assigned_at DESC, o.assignment_id DESC
       LIMIT $11
    ), cutoff AS (
      SELECT coalesce($10, (SELECT s.stale_before FROM kalypso_settings s)) AS stale_before
    ), live AS MATERIALIZED (
      SELECT l.* FROM cutoff, kalypso_current_rollouts(cutoff.stale_before,
                                                       ARRAY(SELECT n.deployment_target_id FROM newest n WHERE n.superseded_at IS NULL)) l
    ), regressing AS (
      -- Converged once, not succeeding now.
      SELECT ARRAY(SELECT n.assignment_id FROM newest n JOIN live l USING (assignment_id)
                    WHERE l.status <> 'succeeded' AND n.converged) AS ids
    ), regressed AS (
      SELECT r.* FROM cutoff, regressing g, kalypso_regressed_hosts(cutoff.stale_before, g.ids) r WHERE cardinality(g.ids) > 0
    )
    SELECT n.assignment_id, n.assigned_at, t.environment, t.environment_order, t.workspace, t.application, t.workload,
           t.deployment_target, me.endpoint, v.version, v.build, a.gitops_commit_id, n.build_time, n.superseded_at,
           n.superseded_at IS NULL, coalesce(live.status, n.status), n.change_failure,
           coalesce(live.subscribers, n.subscribers), coalesce(live.succeeded, n.succeeded), coalesce(live.failed, n.failed),
           n.lead_time_first_host_seconds, n.lead_time_last_host_seconds, n.convergence_50_seconds, n.convergence_90_seconds,
           n.convergence_100_seconds, n.restore_seconds,
           ARRAY(SELECT h.name FROM rollout_laggard l JOIN host h ON h.id = l.host_id
                  WHERE l.assignment_id = n.assignment_id ORDER BY l.position),
           coalesce(regressed.hosts, '{}')
      FROM newest n
      JOIN kalypso_deployment_target t ON t.id = n.deployment_target_id
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
      JOIN deployment_assignment a ON a.id = n.assignment_id
      JOIN workload_version v ON v.id = a.workload_version_id
      LEFT JOIN live USING (assignment_id)
      LEFT JOIN regressed USING (assignment_id)
     ORDER BY n.assigned_at DESC, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, fix_window_seconds,
                stale_before, max_rows;
END $function$;

REVOKE EXECUTE ON FUNCTION kalypso_delivery_window_ordered(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision) FROM PUBLIC;
