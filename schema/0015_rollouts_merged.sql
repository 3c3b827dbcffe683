-- Rollouts refreshed by what changed, not recomputed from their whole history.
--
-- A rollout's figures rest on each subscriber's first success and first failure on the rollout's
-- commits during its life (schema/0008, 0010). The refresh recomputed them from every report on the
-- endpoint since an hour before the rollout began — on each refresh, for every rollout a new report
-- reached. Under a burst of reports (a collector replaying what it queued) a live rollout's history
-- grows while the refresh re-reads it again and again: in the bench with desired state (README,
-- "Ingest with desired state"), 9 refreshes of 2.7 s each took 24 of the run's database seconds, and
-- the cost per record rose run after run as the history in the rollouts' window grew.
--
-- Now each rollout keeps its subscribers' first success and failure (rollout_reconciler). Reports
-- alone queue the span of their times: those rows are read and merged in (a first time can only move
-- earlier, and a new reconciler join). Whatever changes what counts — an assignment (which also
-- moves the previous rollout's end), a commit's place in the rollouts, a removal — queues a range open
-- to the future, and the rollouts it reaches are recounted from their history as before. The figures
-- themselves (points, laggards, restores) are derived from the kept rows exactly as before. A
-- property test (test/store/rollouts-incremental.test.ts) holds the merged figures to a recount of
-- everything after every step of random writes.

CREATE TABLE rollout_reconciler (
  assignment_id bigint NOT NULL,
  reconciler_id bigint NOT NULL,
  -- The first report of success, and of failure, on the rollout's commits during its life.
  succeeded_at  timestamptz,
  failed_at     timestamptz,
  PRIMARY KEY (assignment_id, reconciler_id)
);

-- schema/0010's refresh; changed: touched rollouts are merged or recounted (above), and the rows they
-- rest on kept.
CREATE OR REPLACE FUNCTION kalypso_refresh_rollouts(endpoint_ids bigint[], from_times timestamptz[], to_times timestamptz[])
RETURNS integer LANGUAGE plpgsql AS $$
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
  ), gone_reconcilers AS (
    DELETE FROM rollout_reconciler k WHERE k.assignment_id IN (SELECT assignment_id FROM gone)
  )
  SELECT count(*) INTO removed FROM gone;

  WITH touched AS (
    SELECT e AS manifests_endpoint_id, min(f) AS from_time, max(t) AS to_time,
           -- Ranges open to the future come from a change of what counts (an assignment, a commit's
           -- place in the rollouts, a removal): the rollouts they reach are recounted from history.
           min(f) FILTER (WHERE t = 'infinity') AS recount_from,
           -- The others are reports: their span is merged into what the rollouts have.
           min(f) FILTER (WHERE t < 'infinity') AS merge_from,
           max(t) FILTER (WHERE t < 'infinity') AS merge_to
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
  ), reached AS (
    SELECT l.*, x.merge_from, x.merge_to,
           coalesce(x.recount_from < coalesce(l.superseded_at, 'infinity'), false)
             -- (Never refreshed: nothing kept to merge into.)
             OR NOT EXISTS (SELECT 1 FROM rollout o WHERE o.assignment_id = l.assignment_id) AS recount
      FROM lifetimes l
      JOIN touched x USING (manifests_endpoint_id)
     WHERE x.to_time >= l.assigned_at - interval '1 hour'
       AND (l.superseded_at IS NULL OR x.from_time < l.superseded_at)
  ), refreshing AS (
    -- What to read of each one's history: all of its life, or the reports' span within it.
    SELECT r.*,
           CASE WHEN r.recount THEN r.assigned_at - interval '1 hour' ELSE greatest(r.merge_from, r.assigned_at - interval '1 hour') END AS read_from,
           CASE WHEN r.recount THEN 'infinity'::timestamptz ELSE r.merge_to END AS read_to
      FROM reached r
  ), reported_now AS (
    -- Every reconciler that reported on the endpoint in what is read of the rollout's life; its
    -- successes and failures count when the commit belongs to the rollout.
    SELECT r.assignment_id, h.reconciler_id,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'success') AS succeeded_at,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'failure') AS failed_at
      FROM refreshing r
      JOIN deployment_state_history h
        ON h.manifests_endpoint_id = r.manifests_endpoint_id
       AND h.observed_at >= r.read_from
       AND h.observed_at <= r.read_to
       AND h.observed_at < coalesce(r.superseded_at, 'infinity')
      LEFT JOIN target_commit tc ON tc.deployment_target_id = r.deployment_target_id AND tc.gitops_commit_id = h.gitops_commit_id
      LEFT JOIN deployment_assignment ma ON ma.id = tc.assignment_id
     GROUP BY r.assignment_id, h.reconciler_id
  ), reported AS (
    -- A recounted rollout: what was read. A merged one: what it kept, each first success and failure
    -- lowered by the reports read (least() skips NULLs).
    SELECT coalesce(n.assignment_id, k.assignment_id) AS assignment_id, coalesce(n.reconciler_id, k.reconciler_id) AS reconciler_id,
           least(n.succeeded_at, k.succeeded_at) AS succeeded_at, least(n.failed_at, k.failed_at) AS failed_at,
           n.reconciler_id IS NOT NULL AS read
      FROM reported_now n
      FULL JOIN (SELECT k.* FROM rollout_reconciler k JOIN refreshing r ON r.assignment_id = k.assignment_id AND NOT r.recount) k
        ON k.assignment_id = n.assignment_id AND k.reconciler_id = n.reconciler_id
  ), unreported AS (
    -- Of a recounted rollout, the reconcilers its history no longer names (the rows of those it
    -- names are written below: the two sets are apart, as one statement's changes must be).
    DELETE FROM rollout_reconciler k
     USING refreshing r
     WHERE k.assignment_id = r.assignment_id AND r.recount
       AND NOT EXISTS (SELECT 1 FROM reported_now n WHERE n.assignment_id = k.assignment_id AND n.reconciler_id = k.reconciler_id)
  ), kept AS (
    INSERT INTO rollout_reconciler AS k (assignment_id, reconciler_id, succeeded_at, failed_at)
    SELECT p.assignment_id, p.reconciler_id, p.succeeded_at, p.failed_at FROM reported p WHERE p.read
    ON CONFLICT (assignment_id, reconciler_id) DO UPDATE SET succeeded_at = excluded.succeeded_at, failed_at = excluded.failed_at
     WHERE (k.succeeded_at, k.failed_at) IS DISTINCT FROM (excluded.succeeded_at, excluded.failed_at)
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
       WHERE t.manifests_endpoint_id IN (SELECT unnest(endpoint_ids))
         AND f.first_failure_at IS NOT NULL
    ) x
   WHERE f.assignment_id = x.assignment_id AND f.restored_at IS DISTINCT FROM x.restored_at;
  UPDATE rollout f SET restored_at = NULL
    FROM deployment_target t
   WHERE t.id = f.deployment_target_id AND t.manifests_endpoint_id IN (SELECT unnest(endpoint_ids))
     AND f.first_failure_at IS NULL AND f.restored_at IS NOT NULL;
  RETURN refreshed + removed;
END $$;

-- schema/0010's carrying of versions forward; changed: a commit carried to a newer assignment queues
-- the rollouts from the start of the one it left, not only of the one it joined: when the two were
-- more than an hour of rollouts apart, the one it left went on counting the commit's reports. (Seen
-- by reading the queue, as the next one was; no random sequence of the property test hit it.)
CREATE OR REPLACE FUNCTION kalypso_carry_forward(target_ids bigint[], commits text[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  frontier_targets bigint[] := target_ids;
  frontier_commits text[] := commits;
  written integer := 0;
  rounds integer := 0;
BEGIN
  WHILE cardinality(frontier_targets) > 0 AND rounds < 10000 LOOP
    rounds := rounds + 1;
    WITH front AS (
      SELECT DISTINCT t, c FROM unnest(frontier_targets, frontier_commits) AS f(t, c)
    ), candidates AS (
      SELECT DISTINCT ON (f.t, s.to_commit) f.t AS target_id, s.to_commit, src.assignment_id, sa.assigned_at
        FROM front f
        JOIN deployment_target dt ON dt.id = f.t
        JOIN target_commit src ON src.deployment_target_id = f.t AND src.gitops_commit_id = f.c
        JOIN deployment_assignment sa ON sa.id = src.assignment_id
        -- Per row, by index (endpoint, commit): a commit is on every endpoint of its branch, and a
        -- join on the commit alone would pair each row with all of them.
        CROSS JOIN LATERAL (
          SELECT DISTINCT s.to_commit
            FROM endpoint_peer p
            JOIN commit_succession s ON s.manifests_endpoint_id = p.peer_id AND s.from_commit = f.c
           WHERE p.endpoint_id = dt.manifests_endpoint_id
        ) s
       ORDER BY f.t, s.to_commit, sa.assigned_at DESC, sa.id DESC
    ), written_rows AS (
      INSERT INTO target_commit AS tc (deployment_target_id, gitops_commit_id, assignment_id, carried)
      SELECT target_id, to_commit, assignment_id, true FROM candidates ORDER BY target_id, to_commit
      ON CONFLICT (deployment_target_id, gitops_commit_id) DO UPDATE SET assignment_id = excluded.assignment_id
       WHERE tc.carried
         AND (SELECT (a.assigned_at, a.id) FROM deployment_assignment a WHERE a.id = tc.assignment_id)
             < (SELECT (a.assigned_at, a.id) FROM deployment_assignment a WHERE a.id = excluded.assignment_id)
      RETURNING tc.deployment_target_id, tc.gitops_commit_id, tc.assignment_id
    ), queued AS (
      -- The rollout the commit now belongs to, and the one before it (which it may have left).
      INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
      SELECT array_agg(dt.manifests_endpoint_id), array_agg(w.since - interval '1 hour'), array_agg('infinity'::timestamptz)
        FROM (SELECT wr.deployment_target_id, least(min(r.assigned_at), min(left_r.assigned_at)) AS since
                FROM written_rows wr
                JOIN deployment_assignment sa ON sa.id = wr.assignment_id
                JOIN deployment_assignment r ON r.id = sa.rollout_id
                -- The rollout the commit left, as this statement sees target_commit (before its own write).
                LEFT JOIN target_commit was ON was.deployment_target_id = wr.deployment_target_id AND was.gitops_commit_id = wr.gitops_commit_id
                LEFT JOIN deployment_assignment wa ON wa.id = was.assignment_id
                LEFT JOIN deployment_assignment left_r ON left_r.id = wa.rollout_id
               GROUP BY wr.deployment_target_id) w
        JOIN deployment_target dt ON dt.id = w.deployment_target_id
      HAVING count(*) > 0
    )
    SELECT coalesce(array_agg(w.deployment_target_id), '{}'), coalesce(array_agg(w.gitops_commit_id), '{}')
      INTO frontier_targets, frontier_commits
      FROM written_rows w;
    written := written + cardinality(frontier_targets);
  END LOOP;
  RETURN written;
END $$;

-- schema/0010's new assignment; changed: when its commit was carried to an earlier rollout, that
-- rollout is queued too. The property test found it: the rollout kept a failure on the commit that a
-- recount no longer counts — with the refresh of 0010 as well, which recomputed only what was queued.
CREATE OR REPLACE FUNCTION kalypso_assignment_added(new_assignment_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  a record;
  previous record;
  following record;
  endpoint bigint;
BEGIN
  SELECT * INTO a FROM deployment_assignment WHERE id = new_assignment_id;
  SELECT manifests_endpoint_id INTO endpoint FROM deployment_target WHERE id = a.deployment_target_id;
  SELECT * INTO previous FROM deployment_assignment p
   WHERE p.deployment_target_id = a.deployment_target_id AND (p.assigned_at, p.id) < (a.assigned_at, a.id)
   ORDER BY p.assigned_at DESC, p.id DESC LIMIT 1;
  SELECT * INTO following FROM deployment_assignment n
   WHERE n.deployment_target_id = a.deployment_target_id AND (n.assigned_at, n.id) > (a.assigned_at, a.id)
   ORDER BY n.assigned_at, n.id LIMIT 1;

  IF following.id IS NULL THEN
    UPDATE deployment_assignment SET rollout_id =
           CASE WHEN previous.workload_version_id = a.workload_version_id THEN previous.rollout_id ELSE a.id END
     WHERE id = a.id;
  ELSE
    -- Arrived out of order: the rollouts after it may split or join.
    PERFORM kalypso_number_rollouts(ARRAY[a.deployment_target_id]);
  END IF;

  -- A commit that carried an earlier version now has its own assignment: the rollout it was counted
  -- for loses its reports, and is recounted (the writer queues only from this assignment on).
  INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
  SELECT ARRAY[endpoint], ARRAY[min(r.assigned_at) - interval '1 hour'], ARRAY['infinity'::timestamptz]
    FROM target_commit tc
    JOIN deployment_assignment ca ON ca.id = tc.assignment_id
    JOIN deployment_assignment r ON r.id = ca.rollout_id
   WHERE tc.deployment_target_id = a.deployment_target_id AND tc.gitops_commit_id = a.gitops_commit_id AND tc.assignment_id <> a.id
  HAVING count(*) > 0;
  INSERT INTO target_commit AS tc (deployment_target_id, gitops_commit_id, assignment_id, carried)
  VALUES (a.deployment_target_id, a.gitops_commit_id, a.id, false)
  ON CONFLICT (deployment_target_id, gitops_commit_id) DO UPDATE SET assignment_id = excluded.assignment_id, carried = false;

  PERFORM kalypso_commits_seen(
    ARRAY[endpoint], ARRAY[a.gitops_commit_id], ARRAY[a.assigned_at],
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN endpoint END, CASE WHEN following.id IS NOT NULL THEN endpoint END], NULL),
    array_remove(ARRAY[previous.gitops_commit_id, CASE WHEN following.id IS NOT NULL THEN a.gitops_commit_id END], NULL),
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN a.gitops_commit_id END, following.gitops_commit_id], NULL),
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN a.assigned_at END, following.assigned_at], NULL));
  -- Its own commit's successors may now carry its version (it is newer than what they carried).
  PERFORM kalypso_carry_forward(ARRAY[a.deployment_target_id], ARRAY[a.gitops_commit_id]);
END $$;

-- Every rollout recounted once, so that each keeps the rows the merges start from.
DELETE FROM rollout_laggard;
DELETE FROM rollout;
DELETE FROM rollout_refresh_queue;
SELECT kalypso_refresh_rollouts(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz))
  FROM manifests_endpoint;
