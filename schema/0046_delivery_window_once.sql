-- The delivery window written once (issue 38). schema/0043 gave kalypso_delivery_window two branches
-- (the whole fleet without the slice, a slice through it) and kept the one-branch window under the
-- name kalypso_delivery_window_ordered for kalypso_delivery_rollouts, so a window row's rules (judged,
-- change failure) stood in two functions. One branch does both: the slice is asked only when a list
-- is given. The delivery functions plan each call with its arguments (EXECUTE … USING), so for the
-- whole fleet the condition folds to true and the slice is not read (the plan is the index scan of
-- the window alone), and for a slice the rollouts are filtered by its targets, hashed once. On the kept fleet L in psql, the two definitions alternated three times, two
-- calls each (ms): whole fleet totals 56–78 → 37–64, trend 69–93 → 51–81, outcomes 54–87 → 44–71,
-- rollouts 11–21 → 10–22; prod alike within the runs' spread (totals 29–45 → 27–46, outcomes
-- 50–81 → 61–76). test/api/delivery-metrics.test.ts holds the answers, whole fleet and sliced.
-- kalypso_delivery_window_ordered stays, as the same window, for kalypso_delivery_rollouts.

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
    FROM rollout o
   WHERE o.assigned_at >= since AND o.assigned_at < until
     AND (coalesce(environments, workspaces, applications, workloads, deployment_targets, hosts) IS NULL
          OR o.deployment_target_id IN (SELECT s.id FROM kalypso_delivery_slice(environments, workspaces, applications, workloads,
                                                                                  deployment_targets, hosts) s(id)))
$$;

CREATE OR REPLACE FUNCTION kalypso_delivery_window_ordered(since timestamptz, until timestamptz, environments text[], workspaces text[],
                                                           applications text[], workloads text[], deployment_targets text[], hosts text[],
                                                           fix_window_seconds double precision)
RETURNS TABLE (assignment_id bigint, deployment_target_id bigint, assigned_at timestamptz, assigned_day date,
               superseded_at timestamptz, build_time timestamptz, status text, subscribers integer, succeeded integer,
               failed integer, converged boolean, had_failure boolean, judged boolean, change_failure boolean,
               lead_time_first_host_seconds double precision, lead_time_last_host_seconds double precision,
               convergence_50_seconds double precision, convergence_90_seconds double precision,
               convergence_100_seconds double precision, restore_seconds double precision)
LANGUAGE sql STABLE AS $$
  SELECT * FROM kalypso_delivery_window(since, until, environments, workspaces, applications, workloads, deployment_targets, hosts,
                                        fix_window_seconds)
$$;
