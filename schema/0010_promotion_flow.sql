-- The promotion flow as it happens (README "Commits, rollouts and the promotion flow"): every merge
-- moves an environment branch, and most deployment targets on it keep their workload version.
--
--   manifests_endpoint.branch  repo/branch of an endpoint (when a source said), so that endpoints on
--                              one branch share what the hub knows about the branch's commits
--   endpoint_commit            every commit the hub saw on an endpoint, and when first: what a
--                              short commit (a prefix) is resolved among
--   commit_succession          "C came before X on this endpoint", witnessed by a reconciler that
--                              applied C and later X, or by a target assigned C and later X. The hub
--                              cannot read Git: this is the only commit order it trusts (never hex
--                              text, never the time a commit was first seen by some cluster)
--   deployment_assignment.rollout_id
--                              a rollout is a new workload version on a target: consecutive
--                              assignments of one version are one rollout, named by its first
--   target_commit              which assignment's version runs at each commit a target's
--                              reconcilers may apply: its own assignment, or — carried — the newest
--                              assignment the commit came after

ALTER TABLE manifests_endpoint ADD COLUMN branch text;
CREATE INDEX manifests_endpoint_by_branch ON manifests_endpoint (branch) WHERE branch IS NOT NULL;

CREATE TABLE endpoint_commit (
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  gitops_commit_id      text NOT NULL,
  first_seen_at         timestamptz NOT NULL,
  PRIMARY KEY (manifests_endpoint_id, gitops_commit_id)
);
-- Prefix look-ups (`LIKE 'abc1234%'`).
CREATE INDEX endpoint_commit_by_commit ON endpoint_commit (gitops_commit_id text_pattern_ops);

CREATE TABLE commit_succession (
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  from_commit           text NOT NULL,
  to_commit             text NOT NULL,
  first_seen_at         timestamptz NOT NULL,
  -- Walked forward from a commit on given endpoints. The endpoint leads: one commit is on every
  -- endpoint of its branch (hundreds), and a walk must not read them all to find its own.
  PRIMARY KEY (manifests_endpoint_id, from_commit, to_commit)
);

ALTER TABLE deployment_assignment ADD COLUMN rollout_id bigint REFERENCES deployment_assignment;
CREATE INDEX deployment_assignment_by_rollout ON deployment_assignment (rollout_id);

CREATE TABLE target_commit (
  deployment_target_id bigint NOT NULL REFERENCES deployment_target,
  gitops_commit_id     text NOT NULL,
  assignment_id        bigint NOT NULL REFERENCES deployment_assignment,
  carried              boolean NOT NULL,
  PRIMARY KEY (deployment_target_id, gitops_commit_id)
);
CREATE INDEX target_commit_by_assignment ON target_commit (assignment_id);

-- (Large id arrays are joined as sets — `IN (SELECT unnest(…))` — not tested with `= ANY(…)`, which
-- compares every row with every element: minutes at fleet L.)

-- An endpoint's peers: itself and the endpoints on the same branch. What one of them witnessed about
-- the branch's commits holds for all of them. A relation, so that joins through it use the indexes.
CREATE VIEW endpoint_peer AS
SELECT e.id AS endpoint_id, e.id AS peer_id FROM manifests_endpoint e
UNION ALL
SELECT e.id, g.id FROM manifests_endpoint e JOIN manifests_endpoint g ON g.branch = e.branch AND g.id <> e.id;

-- The same as an array. (Read-only, and run with the owner's rights — as the other functions the
-- kalypso_* views call — so that they work for kalypso_reader, which may read the views only.)
CREATE FUNCTION kalypso_endpoint_group(endpoint_id bigint) RETURNS bigint[]
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT coalesce(array_agg(p.peer_id), ARRAY[$1]) FROM endpoint_peer p WHERE p.endpoint_id = $1
$$;

-- Every commit witnessed to have come after `from_commit` on any of the endpoints.
CREATE FUNCTION kalypso_commits_after(endpoint_ids bigint[], from_commit text) RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 20 AS $$
  WITH RECURSIVE later(c) AS (
    SELECT s.to_commit FROM commit_succession s WHERE s.from_commit = $2 AND s.manifests_endpoint_id = ANY($1)
    UNION
    SELECT s.to_commit FROM later l JOIN commit_succession s ON s.from_commit = l.c WHERE s.manifests_endpoint_id = ANY($1)
  )
  SELECT c FROM later WHERE c <> $2
$$;

-- Carries versions forward along the witnessed commit order, from the given rows of target_commit
-- (target, commit): each commit after them gets the newest assignment that it came after, unless the
-- target has an assignment of its own there. Sources only ever get newer, so this ends; changed
-- targets' rollouts are queued for a refresh. Returns the number of rows written.
CREATE FUNCTION kalypso_carry_forward(target_ids bigint[], commits text[]) RETURNS integer
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
        FROM (SELECT wr.deployment_target_id, min(r.assigned_at) AS since
                FROM written_rows wr
                JOIN deployment_assignment sa ON sa.id = wr.assignment_id
                JOIN deployment_assignment r ON r.id = sa.rollout_id
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

-- What a writer learnt about commits, in one call: sightings (endpoint, commit, time) and witnessed
-- successions (endpoint, from, to, time). New successions carry versions forward for every target on
-- the endpoint's branch.
CREATE FUNCTION kalypso_commits_seen(
  seen_endpoints bigint[], seen_commits text[], seen_times timestamptz[],
  edge_endpoints bigint[], edge_from text[], edge_to text[], edge_times timestamptz[]
) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  seeds_targets bigint[];
  seeds_commits text[];
BEGIN
  INSERT INTO endpoint_commit AS ec (manifests_endpoint_id, gitops_commit_id, first_seen_at)
  SELECT e, c, min(t) FROM unnest(seen_endpoints, seen_commits, seen_times) AS x(e, c, t) GROUP BY e, c ORDER BY e, c
  ON CONFLICT (manifests_endpoint_id, gitops_commit_id) DO UPDATE SET first_seen_at = excluded.first_seen_at
   WHERE excluded.first_seen_at < ec.first_seen_at;

  WITH added AS (
    INSERT INTO commit_succession (manifests_endpoint_id, from_commit, to_commit, first_seen_at)
    SELECT e, f, t, min(at) FROM unnest(edge_endpoints, edge_from, edge_to, edge_times) AS x(e, f, t, at)
     WHERE f <> t GROUP BY e, f, t ORDER BY e, f, t
    ON CONFLICT DO NOTHING
    RETURNING manifests_endpoint_id, from_commit
  )
  -- Every target on the branch that knows the version at the edge's start carries it across.
  SELECT coalesce(array_agg(tc.deployment_target_id), '{}'), coalesce(array_agg(tc.gitops_commit_id), '{}')
    INTO seeds_targets, seeds_commits
    FROM (SELECT DISTINCT dt.id, a.from_commit
            FROM (SELECT DISTINCT manifests_endpoint_id, from_commit FROM added) a
            JOIN endpoint_peer p ON p.endpoint_id = a.manifests_endpoint_id
            JOIN deployment_target dt ON dt.manifests_endpoint_id = p.peer_id) s
    JOIN target_commit tc ON tc.deployment_target_id = s.id AND tc.gitops_commit_id = s.from_commit;
  RETURN kalypso_carry_forward(seeds_targets, seeds_commits);
END $$;

-- Numbers the rollouts of the given targets from scratch: a rollout starts where the version changes.
CREATE FUNCTION kalypso_number_rollouts(target_ids bigint[]) RETURNS integer
LANGUAGE sql AS $$
  WITH ordered AS (
    SELECT z.id, z.deployment_target_id, z.assigned_at,
           lag(z.workload_version_id) OVER (PARTITION BY z.deployment_target_id ORDER BY z.assigned_at, z.id)
             IS DISTINCT FROM z.workload_version_id AS starts
      FROM deployment_assignment z
     WHERE z.deployment_target_id IN (SELECT unnest(target_ids))
  ), runs AS (
    SELECT o.*, count(*) FILTER (WHERE o.starts) OVER (PARTITION BY o.deployment_target_id ORDER BY o.assigned_at, o.id) AS run
      FROM ordered o
  ), numbered AS (
    SELECT r.id, first_value(r.id) OVER (PARTITION BY r.deployment_target_id, r.run ORDER BY r.assigned_at, r.id) AS rollout_id
      FROM runs r
  ), changed AS (
    UPDATE deployment_assignment d SET rollout_id = n.rollout_id
      FROM numbered n
     WHERE d.id = n.id AND d.rollout_id IS DISTINCT FROM n.rollout_id
    RETURNING 1
  )
  SELECT count(*)::int FROM changed
$$;

-- A new assignment takes its place in its target's sequence: it joins the rollout before it when it
-- keeps that rollout's version (a later one's rollout is renumbered when it arrived out of order),
-- its commit is witnessed between its neighbours', and its version runs at its commit.
CREATE FUNCTION kalypso_assignment_added(new_assignment_id bigint) RETURNS void
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

-- Rollouts (schema/0008) become one per run of a version: an unrelated merge that moved the branch
-- is no new rollout, no change failure, and its commit counts for the rollout it carries. Otherwise
-- the definitions of 0008 hold, with "the rollout's commit" read as "a commit of the rollout": its
-- assignments' commits and the commits that carry its version.
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
  ), refreshing AS (
    SELECT l.*
      FROM lifetimes l
      JOIN touched x USING (manifests_endpoint_id)
     WHERE x.to_time >= l.assigned_at - interval '1 hour'
       AND (l.superseded_at IS NULL OR x.from_time < l.superseded_at)
  ), reported AS (
    -- Every reconciler that reported on the endpoint during the rollout's life; its successes and
    -- failures count when the commit belongs to the rollout.
    SELECT r.assignment_id, h.reconciler_id,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'success') AS succeeded_at,
           min(h.observed_at) FILTER (WHERE ma.rollout_id = r.assignment_id AND h.status = 'failure') AS failed_at
      FROM refreshing r
      JOIN deployment_state_history h
        ON h.manifests_endpoint_id = r.manifests_endpoint_id
       AND h.observed_at >= r.assigned_at - interval '1 hour'
       AND h.observed_at < coalesce(r.superseded_at, 'infinity')
      LEFT JOIN target_commit tc ON tc.deployment_target_id = r.deployment_target_id AND tc.gitops_commit_id = h.gitops_commit_id
      LEFT JOIN deployment_assignment ma ON ma.id = tc.assignment_id
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
REVOKE EXECUTE ON FUNCTION kalypso_refresh_rollouts(bigint[], timestamptz[], timestamptz[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_carry_forward(bigint[], text[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_commits_seen(bigint[], text[], timestamptz[], bigint[], text[], text[], timestamptz[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_assignment_added(bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_number_rollouts(bigint[]) FROM PUBLIC;

-- For assignments written in bulk, not through kalypso_assignment_added (this migration's backfill,
-- the benchmark fleets): what that function does for each, for all the targets' assignments at once.
CREATE FUNCTION kalypso_adopt_assignments(target_ids bigint[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  seeds_targets bigint[];
  seeds_commits text[];
BEGIN
  PERFORM kalypso_number_rollouts(target_ids);
  INSERT INTO endpoint_commit AS ec (manifests_endpoint_id, gitops_commit_id, first_seen_at)
  SELECT t.manifests_endpoint_id, a.gitops_commit_id, min(a.assigned_at)
    FROM deployment_assignment a JOIN deployment_target t ON t.id = a.deployment_target_id
   WHERE t.id IN (SELECT unnest(target_ids))
   GROUP BY 1, 2
  ON CONFLICT (manifests_endpoint_id, gitops_commit_id) DO UPDATE SET first_seen_at = excluded.first_seen_at
   WHERE excluded.first_seen_at < ec.first_seen_at;
  INSERT INTO commit_succession (manifests_endpoint_id, from_commit, to_commit, first_seen_at)
  SELECT e, f, x, min(at) FROM (
    SELECT t.manifests_endpoint_id, lag(a.gitops_commit_id) OVER w, a.gitops_commit_id, a.assigned_at
      FROM deployment_assignment a JOIN deployment_target t ON t.id = a.deployment_target_id
     WHERE t.id IN (SELECT unnest(target_ids))
    WINDOW w AS (PARTITION BY a.deployment_target_id ORDER BY a.assigned_at, a.id)
  ) s(e, f, x, at)
   WHERE f IS NOT NULL AND f <> x
   GROUP BY e, f, x
  ON CONFLICT DO NOTHING;
  INSERT INTO target_commit AS tc (deployment_target_id, gitops_commit_id, assignment_id, carried)
  SELECT deployment_target_id, gitops_commit_id, id, false FROM deployment_assignment WHERE deployment_target_id IN (SELECT unnest(target_ids))
  ON CONFLICT (deployment_target_id, gitops_commit_id) DO UPDATE SET assignment_id = excluded.assignment_id, carried = false;
  SELECT coalesce(array_agg(deployment_target_id), '{}'), coalesce(array_agg(gitops_commit_id), '{}') INTO seeds_targets, seeds_commits
    FROM target_commit WHERE deployment_target_id IN (SELECT unnest(target_ids)) AND NOT carried;
  RETURN kalypso_carry_forward(seeds_targets, seeds_commits);
END $$;
REVOKE EXECUTE ON FUNCTION kalypso_adopt_assignments(bigint[]) FROM PUBLIC;

-- Backfill from what is stored: sightings and successions the history witnessed, then the
-- assignments adopted (rollouts numbered, their order witnessed, each version at its commit and
-- carried forward), the desired state re-chosen by time alone, and every rollout computed again.
INSERT INTO endpoint_commit (manifests_endpoint_id, gitops_commit_id, first_seen_at)
SELECT e, c, min(at) FROM (
  SELECT manifests_endpoint_id, gitops_commit_id, observed_at FROM deployment_state_history
  UNION ALL
  SELECT manifests_endpoint_id, gitops_commit_id, observed_at FROM deployment_state
) x(e, c, at)
GROUP BY e, c;

INSERT INTO commit_succession (manifests_endpoint_id, from_commit, to_commit, first_seen_at)
SELECT e, f, t, min(at) FROM (
  SELECT manifests_endpoint_id, lag(gitops_commit_id) OVER w, gitops_commit_id, observed_at,
         lag(manifests_endpoint_id) OVER w, lag(observed_at) OVER w
    FROM deployment_state_history
  WINDOW w AS (PARTITION BY reconciler_id ORDER BY observed_at, id)
) x(e, f, t, at, previous_endpoint, previous_at)
WHERE f IS NOT NULL AND f <> t AND previous_endpoint = e AND previous_at < at
GROUP BY e, f, t;

SELECT kalypso_adopt_assignments(array_agg(id)) FROM deployment_target;

UPDATE deployment_target t SET current_assignment_id = (
  SELECT a.id FROM deployment_assignment a WHERE a.deployment_target_id = t.id ORDER BY a.assigned_at DESC, a.id DESC LIMIT 1)
 WHERE current_assignment_id IS NOT NULL;

DELETE FROM rollout_laggard;
DELETE FROM rollout;
DELETE FROM rollout_refresh_queue;
SELECT kalypso_refresh_rollouts(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz))
  FROM manifests_endpoint;

-- The rollout gate (README "The rollout gate"): each reconciler pulling the endpoint, judged on
-- `gate_commit`. On the commit, or on a commit witnessed to have come after it on the endpoint's
-- branch (it moved past), its own status counts; on any other commit it is in progress; silent for
-- longer than stale-after it is stale, which never counts as success.
CREATE FUNCTION kalypso_gate(endpoint_id bigint, gate_commit text, stale_before timestamptz)
RETURNS TABLE (reconciler_id bigint, host_id bigint, applied_commit text, status text, reported_status text,
               status_message text, observed_at timestamptz, last_seen_at timestamptz, moved_past boolean)
-- ROWS: an endpoint's reconcilers are tens, not the thousand the planner assumes (it would join the
-- names by scanning every reconciler and host).
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 50 AS $$
  WITH later AS MATERIALIZED (
    SELECT kalypso_commits_after(kalypso_endpoint_group($1), $2) AS c
  )
  SELECT s.reconciler_id, s.host_id, s.gitops_commit_id,
         CASE WHEN s.last_seen_at < $3 THEN 'stale'
              WHEN s.gitops_commit_id = $2 OR p.moved_past THEN s.status::text
              ELSE 'in_progress' END,
         s.status::text, s.status_message, s.observed_at, s.last_seen_at, p.moved_past
    FROM deployment_state s
    CROSS JOIN LATERAL (SELECT s.gitops_commit_id <> $2 AND s.gitops_commit_id IN (SELECT c FROM later) AS moved_past) p
   WHERE s.manifests_endpoint_id = $1
$$;

-- Views (schema/0004) read a reconciler's version through target_commit: the version that runs at the
-- commit it applied, also when a merge for another target moved its branch.
CREATE OR REPLACE VIEW kalypso_environment_state AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       me.endpoint AS manifests_endpoint,
       dv.version AS desired_version, dv.build AS desired_build, a.gitops_commit_id AS desired_commit, a.assigned_at,
       coalesce(d.deployed_versions, '') AS deployed_versions,
       coalesce(d.reconcilers, 0) AS reconcilers, coalesce(d.succeeded, 0) AS succeeded, coalesce(d.failed, 0) AS failed,
       coalesce(d.in_progress, 0) AS in_progress, coalesce(d.stale, 0) AS stale,
       coalesce(d.on_desired_commit, 0) AS on_desired_commit,
       -- The target at a glance, worst first.
       CASE WHEN coalesce(d.reconcilers, 0) = 0 THEN 'no_reconcilers'
            WHEN d.failed > 0 THEN 'failure'
            WHEN d.stale > 0 THEN 'stale'
            WHEN d.in_progress > 0 THEN 'in_progress'
            WHEN a.id IS NOT NULL AND d.on_desired_version < d.reconcilers THEN 'out_of_date'
            ELSE 'success' END AS status,
       -- On the desired rollout: the desired commit, or another commit that runs the same version.
       coalesce(d.on_desired_version, 0) AS on_desired_version
  FROM kalypso_deployment_target t
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  LEFT JOIN deployment_assignment a ON a.id = t.current_assignment_id
  LEFT JOIN workload_version dv ON dv.id = a.workload_version_id
  LEFT JOIN LATERAL (
    SELECT count(*)::int AS reconcilers,
           count(*) FILTER (WHERE s.status = 'success' AND s.last_seen_at >= cfg.stale_before)::int AS succeeded,
           count(*) FILTER (WHERE s.status = 'failure' AND s.last_seen_at >= cfg.stale_before)::int AS failed,
           count(*) FILTER (WHERE s.status = 'in_progress' AND s.last_seen_at >= cfg.stale_before)::int AS in_progress,
           count(*) FILTER (WHERE s.last_seen_at < cfg.stale_before)::int AS stale,
           count(*) FILTER (WHERE s.gitops_commit_id = a.gitops_commit_id)::int AS on_desired_commit,
           count(*) FILTER (WHERE sa.rollout_id = a.rollout_id)::int AS on_desired_version,
           -- A deployed commit is named by the version that runs at it, else by its short id.
           string_agg(DISTINCT coalesce(v.version, left(s.gitops_commit_id, 12)), ', ') AS deployed_versions
      FROM deployment_state s
      CROSS JOIN kalypso_settings cfg
      LEFT JOIN target_commit stc ON stc.deployment_target_id = t.id AND stc.gitops_commit_id = s.gitops_commit_id
      LEFT JOIN deployment_assignment sa ON sa.id = stc.assignment_id
      LEFT JOIN workload_version v ON v.id = sa.workload_version_id
     WHERE s.manifests_endpoint_id = t.manifests_endpoint_id
  ) d ON true;

CREATE OR REPLACE VIEW kalypso_host_state AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at AS host_last_seen_at,
       h.last_seen_at < cfg.stale_before AS host_offline,
       r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit,
       CASE WHEN s.last_seen_at < cfg.stale_before THEN 'stale' ELSE s.status::text END AS status,
       s.status::text AS reported_status, s.status_message, s.observed_at AS status_since, s.last_seen_at,
       t.environment_order
  FROM deployment_state s
  CROSS JOIN kalypso_settings cfg
  JOIN host h ON h.id = s.host_id
  JOIN reconciler r ON r.id = s.reconciler_id
  JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN target_commit atc ON atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN deployment_assignment aa ON aa.id = atc.assignment_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id;

CREATE OR REPLACE VIEW kalypso_environment_history AS
SELECT x.observed_at, x.received_at, t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       x.gitops_commit_id AS commit_id, v.version, x.status::text AS status, x.status_message
  FROM deployment_state_history x
  JOIN reconciler r ON r.id = x.reconciler_id
  JOIN host h ON h.id = r.host_id
  JOIN manifests_endpoint me ON me.id = x.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = x.manifests_endpoint_id
  LEFT JOIN target_commit tc ON tc.deployment_target_id = t.id AND tc.gitops_commit_id = x.gitops_commit_id
  LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
  LEFT JOIN workload_version v ON v.id = a.workload_version_id;

-- Drift: not on the desired rollout (neither the desired commit nor another commit running the
-- desired version), failing, or stale; out of date since the desired rollout began or since the
-- reconciler entered its state, whichever came later.
CREATE OR REPLACE VIEW kalypso_drift AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, r.name AS reconciler, r.type AS reconciler_type,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit,
       CASE WHEN f.stale THEN 'stale' ELSE s.status::text END AS status, s.status_message,
       f.not_on_desired_commit, f.failing, f.stale,
       concat_ws(', ', CASE WHEN f.not_on_desired_commit THEN 'not_on_desired_commit' END,
                       CASE WHEN f.failing THEN 'failing' END, CASE WHEN f.stale THEN 'stale' END) AS reasons,
       f.drifting_since,
       greatest(0, extract(epoch FROM now() - f.drifting_since))::bigint AS drifting_for_seconds
  FROM kalypso_deployment_target t
  JOIN deployment_state s ON s.manifests_endpoint_id = t.manifests_endpoint_id
  CROSS JOIN kalypso_settings cfg
  JOIN host h ON h.id = s.host_id
  JOIN reconciler r ON r.id = s.reconciler_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN deployment_assignment cr ON cr.id = ca.rollout_id
  LEFT JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN target_commit atc ON atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN deployment_assignment aa ON aa.id = atc.assignment_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id
  CROSS JOIN LATERAL (
    SELECT ca.id IS NOT NULL AND aa.rollout_id IS DISTINCT FROM ca.rollout_id AS off_rollout
  ) o
  CROSS JOIN LATERAL (
    SELECT o.off_rollout AS not_on_desired_commit,
           s.status = 'failure' AS failing,
           s.last_seen_at < cfg.stale_before AS stale,
           -- least() skips NULLs: the reasons that do not hold.
           least(CASE WHEN o.off_rollout THEN greatest(cr.assigned_at, s.observed_at) END,
                 CASE WHEN s.status = 'failure' THEN s.observed_at END,
                 CASE WHEN s.last_seen_at < cfg.stale_before THEN s.last_seen_at END) AS drifting_since
  ) f
 WHERE f.not_on_desired_commit OR f.failing OR f.stale;

-- Each target's current desired commit, per subscriber, judged by the rollout gate itself. A target
-- without subscribers has one row with status `no_subscribers`.
CREATE OR REPLACE VIEW kalypso_rollout_state AS
SELECT t.environment, t.workspace, t.application, t.workload, t.deployment_target, me.endpoint AS manifests_endpoint,
       dv.version, ca.gitops_commit_id AS commit_id, ca.assigned_at,
       h.name AS host, r.name AS reconciler, g.applied_commit,
       coalesce(g.status, 'no_subscribers') AS status,
       g.status_message, g.last_seen_at
  FROM kalypso_deployment_target t
  JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  JOIN workload_version dv ON dv.id = ca.workload_version_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  CROSS JOIN kalypso_settings cfg
  LEFT JOIN LATERAL kalypso_gate(t.manifests_endpoint_id, ca.gitops_commit_id, cfg.stale_before) g ON true
  LEFT JOIN host h ON h.id = g.host_id
  LEFT JOIN reconciler r ON r.id = g.reconciler_id;

-- One verdict: a current rollout (not superseded) is judged now as the rollout gate judges its
-- commit — each reconciler pulling the target's endpoint, on a commit of the rollout (its own
-- status counts), on another commit (in progress), or stale — so that Delivery and the gate agree
-- at every moment. `target_ids` NULL: every current rollout. Planned per call (EXECUTE), as a
-- whole-fleet call and one for a few targets want different plans.
CREATE FUNCTION kalypso_current_rollouts(stale_before timestamptz, target_ids bigint[])
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
       WHERE o.superseded_at IS NULL %s
    ), per_commit AS (
      -- The reconcilers per endpoint, commit and status first (thousands of rows → hundreds).
      SELECT s.manifests_endpoint_id, s.gitops_commit_id, s.status, s.last_seen_at < $1 AS is_stale, count(*)::int AS n
        FROM deployment_state s
       WHERE s.manifests_endpoint_id IN (SELECT manifests_endpoint_id FROM current_rollout)
       GROUP BY 1, 2, 3, 4
    ), judged AS (
      SELECT c.assignment_id, p.n,
             CASE WHEN p.is_stale THEN 'stale' WHEN a.rollout_id = c.assignment_id THEN p.status::text ELSE 'in_progress' END AS status
        FROM current_rollout c
        JOIN per_commit p ON p.manifests_endpoint_id = c.manifests_endpoint_id
        LEFT JOIN target_commit tc ON tc.deployment_target_id = c.deployment_target_id AND tc.gitops_commit_id = p.gitops_commit_id
        LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
    ), counted AS (
      SELECT c.assignment_id, c.ever_subscribed, c.recorded_status, c.assigned_at,
             coalesce(sum(j.n), 0)::int AS subscribers,
             coalesce(sum(j.n) FILTER (WHERE j.status = 'success'), 0)::int AS succeeded,
             coalesce(sum(j.n) FILTER (WHERE j.status = 'failure'), 0)::int AS failed,
             coalesce(sum(j.n) FILTER (WHERE j.status = 'in_progress'), 0)::int AS in_progress,
             coalesce(sum(j.n) FILTER (WHERE j.status = 'stale'), 0)::int AS stale
        FROM current_rollout c
        LEFT JOIN judged j USING (assignment_id)
       GROUP BY c.assignment_id, c.ever_subscribed, c.recorded_status, c.assigned_at
    )
    -- Subscribers that all left (removed) leave it waiting, as the gate: not settled, not failed.
    SELECT k.assignment_id, k.subscribers, k.succeeded, k.failed, k.in_progress, k.stale,
           CASE WHEN k.subscribers = 0 THEN CASE WHEN k.ever_subscribed = 0 THEN 'no_subscribers' ELSE 'in_progress' END
                WHEN k.failed > 0 THEN 'failed'
                WHEN k.succeeded = k.subscribers THEN 'succeeded'
                ELSE 'in_progress' END,
           k.recorded_status, k.assigned_at
      FROM counted k$query$,
    CASE WHEN target_ids IS NULL THEN '' ELSE 'AND o.deployment_target_id IN (SELECT unnest($2))' END)
  USING stale_before, target_ids;
END $function$;

-- The hosts a current rollout regressed on: it had converged, and they no longer succeed on it
-- (failing, stale, or on another version). Asked for the rollouts shown, not for every one.
CREATE FUNCTION kalypso_regressed_hosts(stale_before timestamptz, rollout_ids bigint[])
RETURNS TABLE (assignment_id bigint, hosts text[])
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT o.assignment_id, array_agg(DISTINCT h.name ORDER BY h.name)
    FROM rollout o
    JOIN deployment_target t ON t.id = o.deployment_target_id
    JOIN deployment_state s ON s.manifests_endpoint_id = t.manifests_endpoint_id
    JOIN host h ON h.id = s.host_id
    LEFT JOIN target_commit tc ON tc.deployment_target_id = o.deployment_target_id AND tc.gitops_commit_id = s.gitops_commit_id
    LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
   WHERE o.assignment_id IN (SELECT unnest($2)) AND o.superseded_at IS NULL AND o.converged_at IS NOT NULL
     AND NOT (s.last_seen_at >= $1 AND s.status = 'success' AND coalesce(a.rollout_id = o.assignment_id, false))
   GROUP BY o.assignment_id
$$;
CREATE INDEX rollout_current ON rollout (deployment_target_id) WHERE superseded_at IS NULL;

-- Each rollout named, with its history's verdict: what the API lists (it judges the current ones
-- itself, once per request), what kalypso_delivery_rollout adds the current verdicts to, and what
-- Grafana's panels of history-based numbers read (judging every current rollout for each of them
-- would cost each panel a pass over every reconciler's state).
CREATE VIEW kalypso_delivery_rollout_history AS
SELECT o.assignment_id AS rollout_id, t.environment, t.environment_order, t.workspace, t.application, t.workload,
       t.deployment_target, me.endpoint AS manifests_endpoint, v.version, v.build, o.gitops_commit_id AS commit_id,
       o.build_time, o.assigned_at, o.assigned_day, o.superseded_at, o.subscribers,
       o.succeeded AS subscribers_succeeded, o.failed AS subscribers_failed, o.status,
       o.converged_at IS NOT NULL AS converged, o.first_failure_at IS NOT NULL AS had_failure,
       o.first_success_at, o.converged_50_at, o.converged_90_at, o.converged_at, o.first_failure_at, o.restored_at,
       o.lead_time_first_host_seconds, o.lead_time_last_host_seconds, o.convergence_50_seconds, o.convergence_90_seconds,
       o.convergence_100_seconds, o.superseded_after_seconds, o.restore_seconds,
       ARRAY(SELECT h.name FROM rollout_laggard l JOIN host h ON h.id = l.host_id
              WHERE l.assignment_id = o.assignment_id ORDER BY l.position) AS lagging_hosts,
       o.superseded_at IS NULL AS current
  FROM rollout o
  JOIN kalypso_deployment_target t ON t.id = o.deployment_target_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  JOIN deployment_assignment a ON a.id = o.assignment_id
  JOIN workload_version v ON v.id = a.workload_version_id;

-- Delivery's rollouts with the same verdict as the API: a current rollout's status and subscriber
-- counts judged now (kalypso_current_rollouts, every current rollout at once), a superseded one's
-- from its history.
CREATE OR REPLACE VIEW kalypso_delivery_rollout AS
WITH live AS (
  -- Every current rollout judged at once (a call per row would judge each apart).
  SELECT * FROM kalypso_current_rollouts((SELECT stale_before FROM kalypso_settings), NULL)
), regressed AS (
  SELECT * FROM kalypso_regressed_hosts((SELECT stale_before FROM kalypso_settings),
                                        ARRAY(SELECT l.assignment_id FROM live l WHERE l.status <> 'succeeded'))
)
SELECT n.rollout_id, n.environment, n.environment_order, n.workspace, n.application, n.workload,
       n.deployment_target, n.manifests_endpoint, n.version, n.build, n.commit_id,
       n.build_time, n.assigned_at, n.assigned_day, n.superseded_at,
       coalesce(live.subscribers, n.subscribers) AS subscribers,
       coalesce(live.succeeded, n.subscribers_succeeded) AS subscribers_succeeded,
       coalesce(live.failed, n.subscribers_failed) AS subscribers_failed,
       coalesce(live.status, n.status) AS status,
       n.converged, n.had_failure,
       n.first_success_at, n.converged_50_at, n.converged_90_at, n.converged_at, n.first_failure_at, n.restored_at,
       n.lead_time_first_host_seconds, n.lead_time_last_host_seconds, n.convergence_50_seconds, n.convergence_90_seconds,
       n.convergence_100_seconds, n.superseded_after_seconds, n.restore_seconds, n.lagging_hosts,
       n.current, coalesce(regressed.hosts, '{}') AS regressed_on
  FROM kalypso_delivery_rollout_history n
  LEFT JOIN live ON live.assignment_id = n.rollout_id
  LEFT JOIN regressed ON regressed.assignment_id = n.rollout_id;

DO $$
BEGIN
  GRANT SELECT ON kalypso_delivery_rollout_history TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'kalypso_delivery_rollout_history not granted to kalypso_reader (%): grant SELECT on it to your reader yourself', SQLERRM;
END $$;
