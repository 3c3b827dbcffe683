-- Delivery analytics defined once, in the database (README "Delivery analytics", issue 20). Every
-- number of GET /api/v1/metrics/delivery and of the Grafana dashboard "Delivery" is one of these
-- functions' columns; the API adds only paging and the shape of its answer, the panels only their
-- presentation. Each takes the window (rollouts assigned at or after `since`, before `until`) and a
-- slice of the fleet (lists of names; NULL: any):
--
--   kalypso_delivery_totals     one row: deployment frequency, lead times, convergence, change
--                               failure rate, time to restore (from the rollouts' history)
--   kalypso_delivery_outcomes   one row: the rollouts by status, current ones judged now as the
--                               rollout gate judges them
--   kalypso_delivery_trend      one row per UTC day of assignment
--   kalypso_delivery_laggards   the hosts that lagged most often
--   kalypso_delivery_rollouts   the newest rollouts, named, with their numbers and status now
--
-- They read the rollout table (schema/0008, 0010), whose per-rollout moments and durations are
-- computed once on write, and kalypso_current_rollouts (below) for a current rollout's verdict.
-- Read-only and run with the owner's rights, as the other functions the views call, so that
-- kalypso_reader (Grafana) may call them and still read no table.

-- The deployment targets of a slice: those matching every list given (NULL: any). A host selects
-- the targets on the endpoints its reconcilers pull or pulled (removed ones too: the rollouts they
-- took part in are the host's history). Inlined into the callers (plain SQL, no SET), which plan
-- with the lists known: the conditions of the NULL lists fold away, and so do the joins to the
-- names they needed (outer joins to unique keys that nothing reads) — the whole fleet is every
-- target, no join. A host's endpoints are few: an array, which the planner counts as few.
CREATE FUNCTION kalypso_delivery_slice(environments text[], workspaces text[], applications text[], workloads text[],
                                       deployment_targets text[], hosts text[])
RETURNS SETOF bigint LANGUAGE sql STABLE AS $$
  SELECT t.id
    FROM deployment_target t
    LEFT JOIN environment e ON e.id = t.environment_id
    LEFT JOIN workload w ON w.id = t.workload_id
    LEFT JOIN application a ON a.id = w.application_id
    LEFT JOIN workspace s ON s.id = a.workspace_id
   WHERE (environments IS NULL OR e.name = ANY (environments)) AND (workspaces IS NULL OR s.name = ANY (workspaces))
     AND (applications IS NULL OR a.name = ANY (applications)) AND (workloads IS NULL OR w.name = ANY (workloads))
     AND (deployment_targets IS NULL OR t.name = ANY (deployment_targets))
     AND (hosts IS NULL OR t.manifests_endpoint_id = ANY (ARRAY(
           SELECT c.manifests_endpoint_id FROM host h JOIN reconciler c ON c.host_id = h.id WHERE h.name = ANY (hosts))))
$$;

-- The rollouts of a window and slice, with what the aggregates judge each by:
-- * judged: it ended — converged, had a failure report, or was superseded (one under way is not
--   judged yet);
-- * change_failure: a failure report for a commit of the rollout, or superseded within the fix
--   window of its assignment (a quick replacement is taken for a fix; 0 disables). Every change
--   failure is judged.
-- Inlined into the callers as kalypso_delivery_slice is.
CREATE FUNCTION kalypso_delivery_window(since timestamptz, until timestamptz, environments text[], workspaces text[],
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
-- The laggards (rollout_laggard) of the rollouts of a window and slice. Each laggard row carries
-- its rollout's assignment time and target, so that it is chosen by the same window and slice
-- without reading the rollout table (at fleet L 4 ms instead of 25).
CREATE FUNCTION kalypso_delivery_window_laggards(since timestamptz, until timestamptz, environments text[], workspaces text[],
                                                 applications text[], workloads text[], deployment_targets text[], hosts text[])
RETURNS SETOF rollout_laggard LANGUAGE sql STABLE AS $$
  SELECT l.* FROM rollout_laggard l
   WHERE l.assigned_at >= since AND l.assigned_at < until
     AND l.deployment_target_id IN (SELECT s.id FROM kalypso_delivery_slice(environments, workspaces, applications, workloads,
                                                                             deployment_targets, hosts) s(id))
$$;
-- The newest rollouts of a window first (kalypso_delivery_rollouts), in a stable order; the
-- laggards of a host.
DROP INDEX rollout_by_time;
CREATE INDEX rollout_by_time ON rollout (assigned_at, assignment_id);
CREATE INDEX rollout_laggard_by_host ON rollout_laggard (host_id, assigned_at);

REVOKE EXECUTE ON FUNCTION kalypso_delivery_slice(text[], text[], text[], text[], text[], text[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_delivery_window(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_delivery_window_laggards(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[]) FROM PUBLIC;

-- A current rollout's verdict (kalypso_current_rollouts, schema/0010), the same rule from the
-- summaries kept current on write (schema/0012) instead of a pass over every reconciler's state: the
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
-- (The commits of each current rollout are found from its assignments first, and only then matched
-- with the counts: one hash on endpoint and commit. At fleet L judging every current rollout took
-- 180 ms in schema/0010, 85 ms here.)
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

-- The numbers of a window and slice that come from the rollouts' history, over the rollouts with
-- subscribers (those without are counted by kalypso_delivery_outcomes only):
-- * deployment frequency: rollouts that converged (a later regression does not undo a deployment)
--   per day of the window;
-- * lead time: build time → the first subscriber succeeded, and → the last one;
-- * convergence to 50, 90 and 100 %: assignment → ⌈p·n⌉ of the n subscribers had succeeded;
-- * change failure rate: change failures ÷ judged rollouts (kalypso_delivery_window);
-- * time to restore: a rollout with a failure report, from its first failure until it or a later
--   rollout of its target had converged; not_restored counts those still waiting.
-- Medians and 90th percentiles are percentile_cont (interpolated) over the rollouts that have the
-- duration; counts say how many have it.
CREATE FUNCTION kalypso_delivery_totals(
  since timestamptz DEFAULT now() - interval '30 days', until timestamptz DEFAULT now(),
  environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL,
  workloads text[] DEFAULT NULL, deployment_targets text[] DEFAULT NULL, hosts text[] DEFAULT NULL,
  fix_window_seconds double precision DEFAULT 3600)
RETURNS TABLE (window_days double precision, successful_rollouts integer, deployments_per_day double precision,
               lead_time_first_host_count integer, lead_time_first_host_median double precision, lead_time_first_host_p90 double precision,
               lead_time_last_host_count integer, lead_time_last_host_median double precision, lead_time_last_host_p90 double precision,
               without_build_time integer,
               convergence_50_count integer, convergence_50_median double precision, convergence_50_p90 double precision,
               convergence_90_count integer, convergence_90_median double precision, convergence_90_p90 double precision,
               convergence_100_count integer, convergence_100_median double precision, convergence_100_p90 double precision,
               judged integer, change_failures integer, with_failure_reports integer, superseded_within_fix_window integer,
               change_failure_rate double precision,
               restore_count integer, restore_median double precision, restore_p90 double precision, not_restored integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '64MB' AS $function$
BEGIN
  -- Planned per call (EXECUTE): the slice's lists decide the plan.
  RETURN QUERY EXECUTE $query$
    SELECT d.days, x.successful, CASE WHEN d.days > 0 THEN x.successful / d.days ELSE 0 END,
           x.lead_first_n, x.lead_first[1], x.lead_first[2], x.lead_last_n, x.lead_last[1], x.lead_last[2], x.without_build_time,
           x.conv50_n, x.conv50[1], x.conv50[2], x.conv90_n, x.conv90[1], x.conv90[2], x.conv100_n, x.conv100[1], x.conv100[2],
           x.judged, x.change_failures, x.with_failure_reports, x.change_failures - x.with_failure_reports,
           x.change_failures::float8 / nullif(x.judged, 0),
           x.restore_n, x.restore[1], x.restore[2], x.with_failure_reports - x.restore_n
      FROM (SELECT CASE WHEN isfinite($1) AND isfinite($2) THEN extract(epoch FROM $2 - $1)::float8 / 86400 END AS days) d,
           (SELECT count(*) FILTER (WHERE o.converged)::int AS successful,
                   count(o.lead_time_first_host_seconds)::int AS lead_first_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.lead_time_first_host_seconds) AS lead_first,
                   count(o.lead_time_last_host_seconds)::int AS lead_last_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.lead_time_last_host_seconds) AS lead_last,
                   count(*) FILTER (WHERE o.build_time IS NULL)::int AS without_build_time,
                   count(o.convergence_50_seconds)::int AS conv50_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.convergence_50_seconds) AS conv50,
                   count(o.convergence_90_seconds)::int AS conv90_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.convergence_90_seconds) AS conv90,
                   count(o.convergence_100_seconds)::int AS conv100_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.convergence_100_seconds) AS conv100,
                   count(*) FILTER (WHERE o.judged)::int AS judged,
                   count(*) FILTER (WHERE o.change_failure)::int AS change_failures,
                   count(*) FILTER (WHERE o.had_failure)::int AS with_failure_reports,
                   count(o.restore_seconds)::int AS restore_n,
                   percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY o.restore_seconds) AS restore
              FROM kalypso_delivery_window($1, $2, $3, $4, $5, $6, $7, $8, $9) o
             WHERE o.subscribers > 0) x
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, fix_window_seconds;
END $function$;

-- The rollouts of a window and slice by status: a current rollout (not superseded) as the rollout
-- gate judges its commit now (kalypso_current_rollouts), a superseded one by its history —
-- succeeded (converged), failed (a failure report, never converged) or superseded. `rollouts`
-- counts those with subscribers; without_subscribers those no reconciler pulls, counted nowhere else.
-- Apart from kalypso_delivery_totals: judging the current rollouts reads every subscriber's state.
CREATE FUNCTION kalypso_delivery_outcomes(
  since timestamptz DEFAULT now() - interval '30 days', until timestamptz DEFAULT now(),
  environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL,
  workloads text[] DEFAULT NULL, deployment_targets text[] DEFAULT NULL, hosts text[] DEFAULT NULL,
  stale_before timestamptz DEFAULT NULL)
RETURNS TABLE (rollouts integer, succeeded integer, failed integer, superseded integer, in_progress integer, without_subscribers integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '64MB' AS $function$
BEGIN
  RETURN QUERY EXECUTE $query$
    WITH history AS (
      -- Those with subscribers; the superseded ones by their history.
      SELECT count(*) FILTER (WHERE o.subscribers > 0)::int AS rollouts,
             count(*) FILTER (WHERE o.superseded_at IS NOT NULL AND o.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE o.superseded_at IS NOT NULL AND o.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE o.superseded_at IS NOT NULL AND o.status = 'superseded')::int AS superseded,
             count(*) FILTER (WHERE o.superseded_at IS NOT NULL AND o.status = 'in_progress')::int AS in_progress,
             count(*) FILTER (WHERE o.superseded_at IS NOT NULL AND o.status = 'no_subscribers')::int AS without_subscribers
        FROM kalypso_delivery_window($1, $2, $3, $4, $5, $6, $7, $8, 0) o
    ), now AS (
      -- The current ones of the window judged now: for the whole fleet every current rollout (NULL,
      -- not a list of them all), kept to the window by its assignment time.
      SELECT count(*) FILTER (WHERE l.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE l.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE l.status = 'in_progress')::int AS in_progress,
             count(*) FILTER (WHERE l.status = 'no_subscribers')::int AS without_subscribers
        FROM kalypso_current_rollouts(coalesce($9, (SELECT s.stale_before FROM kalypso_settings s)),
                                      CASE WHEN coalesce($3, $4, $5, $6, $7, $8) IS NOT NULL
                                           THEN ARRAY(SELECT o.deployment_target_id FROM kalypso_delivery_window($1, $2, $3, $4, $5, $6, $7, $8, 0) o
                                                       WHERE o.superseded_at IS NULL) END) l
       WHERE l.assigned_at >= $1 AND l.assigned_at < $2
    )
    SELECT h.rollouts, h.succeeded + n.succeeded, h.failed + n.failed, h.superseded, h.in_progress + n.in_progress,
           h.without_subscribers + n.without_subscribers
      FROM history h, now n
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, stale_before;
END $function$;

-- The window day by day: one row per UTC day of assignment from the day of `since` until `until`,
-- days without rollouts included (with zero counts and no medians) — unless that is more than 400
-- days, then the days with rollouts only. Over the rollouts with subscribers, as kalypso_delivery_totals.
CREATE FUNCTION kalypso_delivery_trend(
  since timestamptz DEFAULT now() - interval '30 days', until timestamptz DEFAULT now(),
  environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL,
  workloads text[] DEFAULT NULL, deployment_targets text[] DEFAULT NULL, hosts text[] DEFAULT NULL,
  fix_window_seconds double precision DEFAULT 3600)
RETURNS TABLE (day date, rollouts integer, successful_rollouts integer, judged integer, change_failures integer,
               change_failure_rate double precision, lead_time_first_host_median double precision,
               lead_time_last_host_median double precision, convergence_50_median double precision,
               convergence_90_median double precision, convergence_100_median double precision)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '64MB' AS $function$
BEGIN
  RETURN QUERY EXECUTE $query$
    WITH per_day AS (
      SELECT o.assigned_day AS day, count(*)::int AS rollouts, count(*) FILTER (WHERE o.converged)::int AS successful,
             count(*) FILTER (WHERE o.judged)::int AS judged, count(*) FILTER (WHERE o.change_failure)::int AS change_failures,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.lead_time_first_host_seconds) AS lead_first,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.lead_time_last_host_seconds) AS lead_last,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.convergence_50_seconds) AS conv50,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.convergence_90_seconds) AS conv90,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.convergence_100_seconds) AS conv100
        FROM kalypso_delivery_window($1, $2, $3, $4, $5, $6, $7, $8, $9) o
       WHERE o.subscribers > 0
       GROUP BY o.assigned_day
    ), first_day AS (
      SELECT ($1 AT TIME ZONE 'UTC')::date AS day
    ), every_day AS (
      -- Days that begin before `until`; none when the window is infinite or longer than 400 days.
      SELECT d::date AS day
        FROM first_day f, generate_series(f.day::timestamp, f.day::timestamp + interval '400 days', interval '1 day') d
       WHERE isfinite($1) AND isfinite($2) AND d < ($2 AT TIME ZONE 'UTC')
         AND ($2 AT TIME ZONE 'UTC') <= f.day::timestamp + interval '400 days'
    ), days AS (
      SELECT day FROM every_day UNION SELECT day FROM per_day
    )
    SELECT d.day, coalesce(p.rollouts, 0), coalesce(p.successful, 0), coalesce(p.judged, 0), coalesce(p.change_failures, 0),
           p.change_failures::float8 / nullif(p.judged, 0), p.lead_first, p.lead_last, p.conv50, p.conv90, p.conv100
      FROM days d LEFT JOIN per_day p USING (day)
     ORDER BY d.day
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, fix_window_seconds;
END $function$;

-- The hosts that lag: in each rollout, the slowest tenth of its subscribers (at least one) that
-- succeeded after the 50 % point or have not (schema/0008, rollout_laggard). Per host: how often it
-- lagged, how often it had not applied the commit, how far behind the 50 % point it succeeded
-- (median, max) — most often first, then most often not converged, then furthest behind; at most
-- `max_rows` (NULL: all). With hosts given, only their own lag.
CREATE FUNCTION kalypso_delivery_laggards(
  since timestamptz DEFAULT now() - interval '30 days', until timestamptz DEFAULT now(),
  environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL,
  workloads text[] DEFAULT NULL, deployment_targets text[] DEFAULT NULL, hosts text[] DEFAULT NULL,
  max_rows integer DEFAULT 20)
RETURNS TABLE (host text, lagged integer, not_converged integer, median_behind_seconds double precision, max_behind_seconds double precision)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '64MB' AS $function$
BEGIN
  RETURN QUERY EXECUTE $query$
    WITH laggard AS (
      SELECT l.host_id, l.succeeded_at, l.behind_seconds
        FROM kalypso_delivery_window_laggards($1, $2, $3, $4, $5, $6, $7, $8) l
       WHERE $8 IS NULL OR l.host_id = ANY (ARRAY(SELECT h.id FROM host h WHERE h.name = ANY ($8)))
    ), per_host AS MATERIALIZED (
      SELECT l.host_id, count(*)::int AS lagged, count(*) FILTER (WHERE l.succeeded_at IS NULL)::int AS not_converged,
             max(l.behind_seconds) AS max_behind
        FROM laggard l
       GROUP BY l.host_id
    ), contenders AS MATERIALIZED (
      -- The median only orders the hosts that lagged as often as the last one listed: computed for those.
      SELECT p.* FROM per_host p
       WHERE $9 IS NULL
          OR (p.lagged, p.not_converged) >= ALL (SELECT q.lagged, q.not_converged FROM per_host q
                                                  ORDER BY q.lagged DESC, q.not_converged DESC OFFSET $9 - 1 LIMIT 1)
    ), medians AS (
      SELECT l.host_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY l.behind_seconds) AS median_behind
        FROM laggard l
       WHERE l.host_id IN (SELECT c.host_id FROM contenders c)
       GROUP BY l.host_id
    )
    SELECT h.name, c.lagged, c.not_converged, m.median_behind, c.max_behind
      FROM contenders c
      JOIN medians m USING (host_id)
      JOIN host h ON h.id = c.host_id
     ORDER BY c.lagged DESC, c.not_converged DESC, m.median_behind DESC NULLS FIRST, h.name
     LIMIT $9
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, max_rows;
END $function$;

-- The newest rollouts of a window and slice with subscribers (at most `max_rows`, NULL: all),
-- named, newest first, with their numbers (seconds) and status: a current one's status and
-- subscriber counts as the rollout gate judges its commit now, and — when it had converged and no
-- longer succeeds everywhere — the hosts it regressed on (failing, stale or moved away); a
-- superseded one's from its history. lagging_hosts: its laggards, slowest first.
CREATE FUNCTION kalypso_delivery_rollouts(
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
      SELECT o.* FROM kalypso_delivery_window($1, $2, $3, $4, $5, $6, $7, $8, $9) o
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

-- Grafana's role calls these and nothing else of them; no other role may (they run with the owner's
-- rights). The building blocks above are the owner's alone.
REVOKE EXECUTE ON FUNCTION
  kalypso_delivery_totals(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision),
  kalypso_delivery_outcomes(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], timestamptz),
  kalypso_delivery_trend(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision),
  kalypso_delivery_laggards(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], integer),
  kalypso_delivery_rollouts(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision, timestamptz, integer)
  FROM PUBLIC;
DO $$
BEGIN
  GRANT EXECUTE ON FUNCTION
    kalypso_delivery_totals(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision),
    kalypso_delivery_outcomes(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], timestamptz),
    kalypso_delivery_trend(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision),
    kalypso_delivery_laggards(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], integer),
    kalypso_delivery_rollouts(timestamptz, timestamptz, text[], text[], text[], text[], text[], text[], double precision, timestamptz, integer)
    TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'kalypso_delivery_* functions not granted to kalypso_reader (%): grant EXECUTE on them to your reader yourself', SQLERRM;
END $$;
