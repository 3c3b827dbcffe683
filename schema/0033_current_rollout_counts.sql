-- Whole-fleet delivery from counts kept per current rollout (issue 38, item 3).
--
-- kalypso_current_rollouts judged a current rollout now by matching, at every call, its endpoint's
-- status counts (endpoint_status_count, kept by the summary refresh) with the rollout's commits.
-- For the whole fleet that is every current rollout: at fleet L 12,000 targets, their counts and
-- their commits joined again for each delivery answer (kalypso_delivery_outcomes: 400 ms of a 30-day
-- whole-fleet answer under load), and again for Grafana's Delivery dashboard and the alert views.
--
-- Now those sums are kept, one row per current rollout in current_rollout_count: its subscribers,
-- and of them succeeded and failed on a commit of the rollout, and stale — what the summaries count
-- (a reconciler stale or live as the summary refresh last judged it). They change when the
-- summaries' counts change and when the rollouts or their commits do, so both refreshes keep them:
-- * a statement that changes endpoint_status_count (the summary refresh, also its rebuild of
--   everything) queues its endpoints, by a trigger, in current_rollout_count_queue; the summary
--   refresh recounts what is queued at its end (src/store/summary-refresh.ts);
-- * the rollout refresh recounts the current rollouts of the endpoints it refreshed (a rollout
--   became current or was superseded; its commits changed: every writer of assignments and
--   target_commit queues the endpoint for that refresh), and what is queued.
-- A recount takes a transaction-level advisory lock in a statement before it reads, so that the
-- later of two concurrent recounts sees the earlier one's commit — the counts of one and the
-- rollouts of the other — and neither leaves a row counted from the other's older state. The lock
-- is taken at the end of each refresh: a summary refresh under ingest runs for seconds, and the
-- timers' ticks give up on a lock they wait for longer than 500 ms.
--
-- kalypso_current_rollouts reads those rows and adds, as before, what the cut it is asked for
-- changes: reconcilers the summaries count live that are stale by the cut, and the reverse (a
-- handful: the summary refresh moves them every 2 s, and the delivery report refreshes the
-- summaries at the moment it describes first). Its results are the same:
-- test/store/current-rollout-counts.test.ts holds the kept rows to a recount, and the judgement to
-- that of schema/0023 at three cuts, after every refresh (either one first) of random writes.

CREATE TABLE current_rollout_count (
  assignment_id        bigint PRIMARY KEY,
  deployment_target_id bigint NOT NULL,
  subscribers          integer NOT NULL,
  succeeded            integer NOT NULL,
  failed               integer NOT NULL,
  stale                integer NOT NULL
);

CREATE INDEX current_rollout_count_by_target ON current_rollout_count (deployment_target_id);

-- Appended to, never updated: concurrent writers never wait on each other here (one row per statement).
CREATE TABLE current_rollout_count_queue (
  manifests_endpoint_ids bigint[] NOT NULL
);

-- Recounts the current rollouts of the targets on these endpoints and on those queued, from the
-- summaries' counts; returns how many endpoints it recounted.
CREATE FUNCTION kalypso_count_current_rollouts(endpoint_ids bigint[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  endpoints bigint[];
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('kalypso_current_rollout_count'));
  WITH taken AS (DELETE FROM current_rollout_count_queue q RETURNING q.manifests_endpoint_ids)
  SELECT ARRAY(SELECT e FROM unnest(endpoint_ids) e UNION SELECT e FROM taken t, unnest(t.manifests_endpoint_ids) e) INTO endpoints;
  IF cardinality(endpoints) = 0 THEN
    RETURN 0;
  END IF;
  -- Rows of rollouts no longer current (superseded, or no rollout any more).
  DELETE FROM current_rollout_count k
   USING deployment_target t
   WHERE t.manifests_endpoint_id IN (SELECT unnest(endpoints)) AND k.deployment_target_id = t.id
     AND NOT EXISTS (SELECT 1 FROM rollout o WHERE o.assignment_id = k.assignment_id AND o.superseded_at IS NULL);
  -- On a commit of the rollout (its assignments' own, and those that carry its version: the target's
  -- commit is one of the rollout's) a reconciler's own status counts; on any other it is in progress.
  -- Tables joined by key, no CTE: nothing a wrong guess of a CTE's size could loop over.
  WITH counted AS (
    SELECT o.assignment_id, o.deployment_target_id, coalesce(sum(k.reconcilers), 0)::int AS subscribers,
           coalesce(sum(k.reconcilers) FILTER (WHERE k.status = 'success' AND a.rollout_id = o.assignment_id), 0)::int AS succeeded,
           coalesce(sum(k.reconcilers) FILTER (WHERE k.status = 'failure' AND a.rollout_id = o.assignment_id), 0)::int AS failed,
           coalesce(sum(k.reconcilers) FILTER (WHERE k.status = 'stale'), 0)::int AS stale
      FROM deployment_target t
      JOIN rollout o ON o.deployment_target_id = t.id AND o.superseded_at IS NULL
      LEFT JOIN endpoint_status_count k ON k.manifests_endpoint_id = t.manifests_endpoint_id
      LEFT JOIN target_commit tc ON tc.deployment_target_id = t.id AND tc.gitops_commit_id = k.gitops_commit_id
      LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
     WHERE t.manifests_endpoint_id IN (SELECT unnest(endpoints))
     GROUP BY o.assignment_id, o.deployment_target_id
  )
  INSERT INTO current_rollout_count AS k (assignment_id, deployment_target_id, subscribers, succeeded, failed, stale)
  SELECT * FROM counted
  ON CONFLICT (assignment_id) DO UPDATE
     SET deployment_target_id = excluded.deployment_target_id, subscribers = excluded.subscribers,
         succeeded = excluded.succeeded, failed = excluded.failed, stale = excluded.stale
   WHERE (k.deployment_target_id, k.subscribers, k.succeeded, k.failed, k.stale)
         IS DISTINCT FROM (excluded.deployment_target_id, excluded.subscribers, excluded.succeeded, excluded.failed, excluded.stale);
  RETURN cardinality(endpoints);
END $$;

REVOKE EXECUTE ON FUNCTION kalypso_count_current_rollouts(bigint[]) FROM PUBLIC;

-- The endpoints a statement changed the summaries' counts of, queued. (One trigger per event: a
-- trigger with transition tables has one event. An upsert fires the insert's and the update's.)
CREATE FUNCTION kalypso_queue_current_rollout_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO current_rollout_count_queue (manifests_endpoint_ids)
  SELECT array_agg(DISTINCT c.manifests_endpoint_id) FROM changed c HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE TRIGGER endpoint_status_count_rollouts_insert AFTER INSERT ON endpoint_status_count
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_current_rollout_counts();
CREATE TRIGGER endpoint_status_count_rollouts_update AFTER UPDATE ON endpoint_status_count
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_current_rollout_counts();
-- The summary refresh deletes only rows it brought to 0, which change no sum; another delete might.
CREATE TRIGGER endpoint_status_count_rollouts_delete AFTER DELETE ON endpoint_status_count
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_current_rollout_counts();

-- The rollout refresh of schema/0022, which now also recounts its endpoints' current rollouts at the end.
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
      LEFT JOIN target_commit tc ON tc.deployment_target_id = s.deployment_target_id AND tc.gitops_commit_id = h.gitops_commit_id
      LEFT JOIN deployment_assignment ma ON ma.id = tc.assignment_id
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

-- The judgement of now (schema/0023) from the kept counts, with the same results.
CREATE OR REPLACE FUNCTION kalypso_current_rollouts(stale_before timestamptz, target_ids bigint[])
RETURNS TABLE (assignment_id bigint, subscribers integer, succeeded integer, failed integer, in_progress integer, stale integer,
               status text, recorded_status text, assigned_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $function$
BEGIN
  RETURN QUERY EXECUTE format($query$
    WITH current_rollout AS (
      SELECT o.assignment_id, o.subscribers AS ever_subscribed, o.status AS recorded_status, o.assigned_at
        FROM rollout o
       WHERE o.superseded_at IS NULL %1$s
    ), moved AS (
      -- Counted live, stale by this cut. (Each candidate's state is looked up by key — OFFSET 0 keeps
      -- the lookup a subquery — so a wrong guess of how many there are cannot turn it into a scan
      -- of every state.)
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, 1 AS stale, -(r.status = 'success')::int AS success,
             -(r.status = 'failure')::int AS failure
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE NOT r.counted_stale AND r.last_seen_at < $1 AND s.last_seen_at < $1 %2$s
      UNION ALL
      -- Counted stale, live by this cut.
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, -1, (s.status = 'success')::int, (s.status = 'failure')::int
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.status, s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE r.counted_stale AND r.last_seen_at >= $1 AND s.last_seen_at >= $1 %2$s
    ), corrected AS (
      -- What the moves change in the kept counts of their endpoints' current rollouts: found by key
      -- from each move (a few), a success or failure counting where its commit is the rollout's.
      SELECT o.assignment_id, sum(m.stale)::int AS stale,
             coalesce(sum(m.success) FILTER (WHERE a.rollout_id = o.assignment_id), 0)::int AS succeeded,
             coalesce(sum(m.failure) FILTER (WHERE a.rollout_id = o.assignment_id), 0)::int AS failed
        FROM moved m
        JOIN deployment_target t ON t.manifests_endpoint_id = m.manifests_endpoint_id
        JOIN rollout o ON o.deployment_target_id = t.id AND o.superseded_at IS NULL
        LEFT JOIN target_commit tc ON tc.deployment_target_id = t.id AND tc.gitops_commit_id = m.gitops_commit_id
        LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
       GROUP BY o.assignment_id
    ), counted AS (
      SELECT c.assignment_id, c.ever_subscribed, c.recorded_status, c.assigned_at, coalesce(k.subscribers, 0) AS subscribers,
             coalesce(k.succeeded, 0) + coalesce(x.succeeded, 0) AS succeeded, coalesce(k.failed, 0) + coalesce(x.failed, 0) AS failed,
             coalesce(k.stale, 0) + coalesce(x.stale, 0) AS stale
        FROM current_rollout c
        LEFT JOIN current_rollout_count k ON k.assignment_id = c.assignment_id
        LEFT JOIN corrected x ON x.assignment_id = c.assignment_id
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
    -- A few targets: only moves on their endpoints.
    CASE WHEN target_ids IS NULL THEN ''
         ELSE 'AND r.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM deployment_target t WHERE t.id IN (SELECT unnest($2)))' END)
  USING stale_before, target_ids;
END $function$;

-- The laggards of a whole-fleet window (every list of the slice NULL) are read alone. The slice
-- then names every target, and a laggard's target is always one (its rollout's): the join to the
-- 12,000 targets of fleet L (with their environments, workloads, applications and workspaces)
-- changed nothing and cost a hash of them per call. The callers plan each call with its arguments
-- (EXECUTE), so the guards fold to constants and the planner keeps one branch: the laggards alone,
-- or joined to the slice as before. (Two branches, not `NULL lists OR target IN slice`: an IN under
-- an OR is no join, and a host's or a workload's slice then filtered every row of the window.) The
-- rollouts' window (kalypso_delivery_window) is left as it was: the same two branches there kept
-- kalypso_delivery_rollouts from reading the newest rollouts by index (15 ms became 96 at L).
CREATE OR REPLACE FUNCTION kalypso_delivery_window_laggards(since timestamptz, until timestamptz, environments text[], workspaces text[],
                                                            applications text[], workloads text[], deployment_targets text[], hosts text[])
RETURNS SETOF rollout_laggard LANGUAGE sql STABLE AS $$
  SELECT l.* FROM rollout_laggard l
   WHERE l.assigned_at >= since AND l.assigned_at < until
     AND coalesce(environments, workspaces, applications, workloads, deployment_targets, hosts) IS NULL
  UNION ALL
  SELECT l.* FROM rollout_laggard l
   WHERE l.assigned_at >= since AND l.assigned_at < until
     AND coalesce(environments, workspaces, applications, workloads, deployment_targets, hosts) IS NOT NULL
     AND l.deployment_target_id IN (SELECT s.id FROM kalypso_delivery_slice(environments, workspaces, applications, workloads,
                                                                             deployment_targets, hosts) s(id))
$$;

-- The laggards of a whole-fleet window (schema/0013) with the same results, and less work around
-- the hosts' counts: at fleet L the window's 53,000 laggard rows were written aside for the medians
-- of the 20-odd hosts listed, and all 20,000 hosts hashed to name them.
CREATE OR REPLACE FUNCTION kalypso_delivery_laggards(
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
      -- A contender's laggards read again by host (rollout_laggard_by_host), not the window's
      -- laggards kept for it: kept, all of them (53,000 at fleet L) were written aside first.
      SELECT c.host_id, (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY l.behind_seconds)
                           FROM kalypso_delivery_window_laggards($1, $2, $3, $4, $5, $6, $7, $8) l
                          WHERE l.host_id = c.host_id) AS median_behind
        FROM contenders c
    )
    -- Named by key (OFFSET 0 keeps the lookup a subquery): the contenders are a few, but guessed
    -- to be thousands, for which every host (20,000 at fleet L) was hashed.
    SELECT h.name, c.lagged, c.not_converged, m.median_behind, c.max_behind
      FROM contenders c
      JOIN medians m USING (host_id)
     CROSS JOIN LATERAL (SELECT h.name FROM host h WHERE h.id = c.host_id OFFSET 0) h
     ORDER BY c.lagged DESC, c.not_converged DESC, m.median_behind DESC NULLS FIRST, h.name
     LIMIT $9
  $query$ USING since, until, environments, workspaces, applications, workloads, deployment_targets, hosts, max_rows;
END $function$;

-- Every current rollout counted once, for the databases migrated here.
SELECT kalypso_count_current_rollouts(ARRAY(SELECT id FROM manifests_endpoint));
