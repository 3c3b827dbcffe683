-- Delivery analytics (README "Delivery analytics"): one row per rollout — a deployment assignment
-- and what its target's reconcilers made of it — maintained incrementally, so that DORA metrics and
-- fleet convergence over any window read one narrow table instead of the whole history.
--
--   rollout                   one row per deployment_assignment: subscribers, success/failure
--                             times, the 50/90/100 % convergence points, restore
--   rollout_laggard           the subscribers that lagged in each rollout
--   rollout_refresh_queue     what the writers changed since the last refresh (endpoint, time range)
--   kalypso_refresh_rollouts  recomputes the rollouts whose lifetime overlaps those ranges
--
-- Definitions, as computed below:
-- * A rollout lives from its assignment until the next assignment of the same target (superseded_at);
--   reports count from one hour before the assignment (a reconciler may apply a commit before the
--   CD pipeline's descriptor arrives) until it is superseded.
-- * Its subscribers are the reconcilers that reported on the target's manifests endpoint during its
--   life, and — while it is current — every active reconciler of the endpoint (a silent one lags).
--   A reconciler removed before it applied the rollout's commit is not counted.
-- * A subscriber succeeded at its first `success` report for the rollout's commit; failed at its
--   first `failure` report for it.
-- * The p % convergence point is the moment the ceil(p·n)-th of n subscribers succeeded.
-- * The laggards are the slowest tenth of the subscribers (at least one) that succeeded after the
--   50 % point or not at all (those that have not succeeded in host name order).
-- * A rollout with a failure is restored at the earliest moment, at or after its first failure, at
--   which it or a later rollout of the same target had converged (100 %).

-- Seconds from one moment to a later one; 0 when it came first, NULL when either has not come.
-- (greatest() would turn NULL into 0: it ignores NULL arguments.) A plain SQL function, so that the
-- planner inlines it.
CREATE FUNCTION kalypso_seconds_between(from_time timestamptz, to_time timestamptz) RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN to_time > from_time THEN date_part('epoch', to_time - from_time) WHEN to_time <= from_time THEN 0 END
$$;

CREATE TABLE rollout (
  assignment_id          bigint PRIMARY KEY REFERENCES deployment_assignment,
  deployment_target_id   bigint NOT NULL REFERENCES deployment_target,
  gitops_commit_id       text NOT NULL,
  assigned_at            timestamptz NOT NULL,
  -- The version's build time when the rollout was last refreshed.
  build_time             timestamptz,
  superseded_at          timestamptz,
  subscribers            integer NOT NULL,
  succeeded              integer NOT NULL,
  failed                 integer NOT NULL,
  first_success_at       timestamptz,
  converged_50_at        timestamptz,
  converged_90_at        timestamptz,
  converged_at           timestamptz,
  first_failure_at       timestamptz,
  restored_at            timestamptz,
  refreshed_at           timestamptz NOT NULL DEFAULT now(),
  -- What the metrics aggregate, computed once on write rather than on every read.
  status text GENERATED ALWAYS AS (
    CASE WHEN subscribers = 0 THEN 'no_subscribers'
         WHEN converged_at IS NOT NULL THEN 'succeeded'
         WHEN first_failure_at IS NOT NULL THEN 'failed'
         WHEN superseded_at IS NOT NULL THEN 'superseded'
         ELSE 'in_progress' END) STORED,
  assigned_day                 date GENERATED ALWAYS AS ((assigned_at AT TIME ZONE 'UTC')::date) STORED,
  lead_time_first_host_seconds double precision GENERATED ALWAYS AS (kalypso_seconds_between(build_time, first_success_at)) STORED,
  lead_time_last_host_seconds  double precision GENERATED ALWAYS AS (kalypso_seconds_between(build_time, converged_at)) STORED,
  convergence_50_seconds       double precision GENERATED ALWAYS AS (kalypso_seconds_between(assigned_at, converged_50_at)) STORED,
  convergence_90_seconds       double precision GENERATED ALWAYS AS (kalypso_seconds_between(assigned_at, converged_90_at)) STORED,
  convergence_100_seconds      double precision GENERATED ALWAYS AS (kalypso_seconds_between(assigned_at, converged_at)) STORED,
  superseded_after_seconds     double precision GENERATED ALWAYS AS (kalypso_seconds_between(assigned_at, superseded_at)) STORED,
  restore_seconds              double precision GENERATED ALWAYS AS (kalypso_seconds_between(first_failure_at, restored_at)) STORED
);
CREATE INDEX rollout_by_time ON rollout (assigned_at);
CREATE INDEX rollout_by_target ON rollout (deployment_target_id, assigned_at);

-- The laggards of each rollout, slowest first (position 1). Rewritten with their rollout.
CREATE TABLE rollout_laggard (
  assignment_id        bigint NOT NULL,
  position             integer NOT NULL,
  deployment_target_id bigint NOT NULL,
  assigned_at          timestamptz NOT NULL,
  reconciler_id        bigint NOT NULL,
  host_id              bigint NOT NULL,
  -- NULL: has not applied the rollout's commit (yet, or before it was superseded).
  succeeded_at         timestamptz,
  -- How long after the 50 % point it succeeded.
  behind_seconds       double precision
);
CREATE INDEX rollout_laggard_by_rollout ON rollout_laggard (assignment_id);
CREATE INDEX rollout_laggard_by_time ON rollout_laggard (assigned_at);

-- One row per writing transaction (not per endpoint), so that concurrent writers never wait on each
-- other here: parallel arrays of endpoint ids and the time range each write touched.
CREATE TABLE rollout_refresh_queue (
  manifests_endpoint_ids bigint[] NOT NULL,
  from_times             timestamptz[] NOT NULL,
  to_times               timestamptz[] NOT NULL,
  queued_at              timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION kalypso_refresh_rollouts(endpoint_ids bigint[], from_times timestamptz[], to_times timestamptz[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  refreshed integer;
BEGIN
  WITH touched AS (
    SELECT e AS manifests_endpoint_id, min(f) AS from_time, max(t) AS to_time
      FROM unnest(endpoint_ids, from_times, to_times) AS x(e, f, t)
     GROUP BY e
  ), lifetimes AS (
    SELECT a.id AS assignment_id, a.deployment_target_id, t.manifests_endpoint_id, a.gitops_commit_id, a.assigned_at,
           v.build_time,
           lead(a.assigned_at) OVER (PARTITION BY a.deployment_target_id ORDER BY a.assigned_at, a.gitops_commit_id) AS superseded_at
      FROM deployment_target t
      JOIN deployment_assignment a ON a.deployment_target_id = t.id
      JOIN workload_version v ON v.id = a.workload_version_id
     WHERE t.manifests_endpoint_id IN (SELECT manifests_endpoint_id FROM touched)
  ), refreshing AS (
    SELECT l.*
      FROM lifetimes l
      JOIN touched x USING (manifests_endpoint_id)
     WHERE x.to_time >= l.assigned_at - interval '1 hour'
       AND (l.superseded_at IS NULL OR x.from_time < l.superseded_at)
  ), reported AS (
    -- Every reconciler that reported on the endpoint during the rollout's life.
    SELECT r.assignment_id, h.reconciler_id,
           min(h.observed_at) FILTER (WHERE h.gitops_commit_id = r.gitops_commit_id AND h.status = 'success') AS succeeded_at,
           min(h.observed_at) FILTER (WHERE h.gitops_commit_id = r.gitops_commit_id AND h.status = 'failure') AS failed_at
      FROM refreshing r
      JOIN deployment_state_history h
        ON h.manifests_endpoint_id = r.manifests_endpoint_id
       AND h.observed_at >= r.assigned_at - interval '1 hour'
       AND h.observed_at < coalesce(r.superseded_at, 'infinity')
     GROUP BY r.assignment_id, h.reconciler_id
  ), subscribed AS (
    SELECT assignment_id, reconciler_id FROM reported
    UNION
    SELECT r.assignment_id, s.reconciler_id
      FROM refreshing r
      JOIN deployment_state s ON s.manifests_endpoint_id = r.manifests_endpoint_id
     WHERE r.superseded_at IS NULL
  ), subscribers AS (
    SELECT m.assignment_id, m.reconciler_id, c.host_id, p.succeeded_at, p.failed_at,
           count(*) OVER (PARTITION BY m.assignment_id) AS n,
           row_number() OVER (PARTITION BY m.assignment_id ORDER BY p.succeeded_at NULLS LAST, hh.name, c.name) AS k
      FROM subscribed m
      JOIN refreshing r USING (assignment_id)
      JOIN reconciler c ON c.id = m.reconciler_id
      JOIN host hh ON hh.id = c.host_id
      LEFT JOIN reported p USING (assignment_id, reconciler_id)
     WHERE c.removed_at IS NULL OR c.removed_at >= coalesce(p.succeeded_at, r.superseded_at, 'infinity')
  ), points AS (
    -- numeric, not float: ceil(0.9 * 10) must be 9.
    SELECT assignment_id, count(*)::int AS subscribers, count(succeeded_at)::int AS succeeded, count(failed_at)::int AS failed,
           min(succeeded_at) AS first_success_at,
           min(succeeded_at) FILTER (WHERE k = ceil(n * 0.5)) AS converged_50_at,
           min(succeeded_at) FILTER (WHERE k = ceil(n * 0.9)) AS converged_90_at,
           min(succeeded_at) FILTER (WHERE k = n) AS converged_at,
           min(failed_at) AS first_failure_at
      FROM subscribers
     GROUP BY assignment_id
  ), laggards AS (
    SELECT s.assignment_id, row_number() OVER (PARTITION BY s.assignment_id ORDER BY s.k DESC)::int AS position,
           r.deployment_target_id, r.assigned_at, s.reconciler_id, s.host_id, s.succeeded_at,
           kalypso_seconds_between(p.converged_50_at, s.succeeded_at) AS behind_seconds
      FROM subscribers s
      JOIN points p USING (assignment_id)
      JOIN refreshing r USING (assignment_id)
     WHERE s.k > s.n - ceil(s.n * 0.1)
       AND (s.succeeded_at IS NULL OR p.converged_50_at IS NULL OR s.succeeded_at > p.converged_50_at)
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
       WHERE t.manifests_endpoint_id = ANY(endpoint_ids)
         AND f.first_failure_at IS NOT NULL
    ) x
   WHERE f.assignment_id = x.assignment_id AND f.restored_at IS DISTINCT FROM x.restored_at;
  UPDATE rollout f SET restored_at = NULL
    FROM deployment_target t
   WHERE t.id = f.deployment_target_id AND t.manifests_endpoint_id = ANY(endpoint_ids)
     AND f.first_failure_at IS NULL AND f.restored_at IS NOT NULL;
  RETURN refreshed;
END $$;
REVOKE EXECUTE ON FUNCTION kalypso_refresh_rollouts(bigint[], timestamptz[], timestamptz[]) FROM PUBLIC;

-- Everything there is, once: rollouts of the data that predates this migration.
SELECT kalypso_refresh_rollouts(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz))
  FROM manifests_endpoint;

-- One row per rollout, named, with the durations the delivery metrics aggregate (seconds; NULL when
-- the moment has not come). Lead times start at the version's build time; convergence at the
-- assignment (a reconciler that applied the commit before the descriptor arrived counts as 0).
-- rollout_id identifies a rollout across queries (it is the assignment's id).
CREATE VIEW kalypso_delivery_rollout AS
SELECT o.assignment_id AS rollout_id, t.environment, t.environment_order, t.workspace, t.application, t.workload,
       t.deployment_target, me.endpoint AS manifests_endpoint, v.version, v.build, o.gitops_commit_id AS commit_id,
       o.build_time, o.assigned_at, o.assigned_day, o.superseded_at, o.subscribers,
       o.succeeded AS subscribers_succeeded, o.failed AS subscribers_failed, o.status,
       o.converged_at IS NOT NULL AS converged, o.first_failure_at IS NOT NULL AS had_failure,
       o.first_success_at, o.converged_50_at, o.converged_90_at, o.converged_at, o.first_failure_at, o.restored_at,
       o.lead_time_first_host_seconds, o.lead_time_last_host_seconds, o.convergence_50_seconds, o.convergence_90_seconds,
       o.convergence_100_seconds, o.superseded_after_seconds, o.restore_seconds,
       ARRAY(SELECT h.name FROM rollout_laggard l JOIN host h ON h.id = l.host_id
              WHERE l.assignment_id = o.assignment_id ORDER BY l.position) AS lagging_hosts
  FROM rollout o
  JOIN kalypso_deployment_target t ON t.id = o.deployment_target_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  JOIN deployment_assignment a ON a.id = o.assignment_id
  JOIN workload_version v ON v.id = a.workload_version_id;

-- One row per laggard of a rollout: which host lagged, and how far behind the 50 % point it succeeded.
CREATE VIEW kalypso_delivery_laggard AS
SELECT l.assignment_id AS rollout_id, t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       o.gitops_commit_id AS commit_id, l.assigned_at, l.position, h.name AS host, r.name AS reconciler, l.succeeded_at,
       l.succeeded_at IS NOT NULL AS converged, l.behind_seconds
  FROM rollout_laggard l
  JOIN rollout o ON o.assignment_id = l.assignment_id
  JOIN reconciler r ON r.id = l.reconciler_id
  JOIN host h ON h.id = l.host_id
  JOIN kalypso_deployment_target t ON t.id = l.deployment_target_id;

DO $$
BEGIN
  GRANT SELECT ON kalypso_delivery_rollout, kalypso_delivery_laggard TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'delivery views not granted to kalypso_reader (%): grant SELECT on them to your reader yourself', SQLERRM;
END $$;
