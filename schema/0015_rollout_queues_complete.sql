-- Every change that alters a rollout's figures queues that rollout for a refresh.
--
-- The rollout table (schema/0008, 0010) is refreshed only where a writer queued a range (endpoint,
-- from, to). A test that recounts every rollout from the whole history after each step of random
-- writes (test/store/rollouts-follow-changes.test.ts) found changes that queued nothing for some of
-- the rollouts they alter; those stayed stale until a later report happened to reach them, and the
-- delivery report (lead time, change failures, convergence) read the stale figures meanwhile:
--
-- * a commit carried to one rollout that then gets an assignment of its own, or is carried to a
--   newer assignment, leaves the rollout it belonged to: that rollout is queued now, not only the
--   one the commit joins (kalypso_assignment_added, kalypso_carry_forward);
-- * a reconciler removed, or back after a removal, is counted differently by every rollout it
--   reported to since, on every endpoint it reported on, not only its current one
--   (kalypso_queue_subscriber_rollouts, called by the writers);
-- * a reconciler whose current state moves to another endpoint leaves the live rollouts of the one it
--   left (the writer queues that endpoint).

-- Queues, for the given reconcilers, every endpoint they ever reported on or hold a state on, from
-- the given time on: the rollouts that count them as subscribers.
CREATE FUNCTION kalypso_queue_subscriber_rollouts(reconciler_ids bigint[], from_times timestamptz[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
  SELECT array_agg(e.endpoint_id), array_agg(e.from_time), array_agg('infinity'::timestamptz)
    FROM (SELECT x.endpoint_id, min(x.from_time) AS from_time
            FROM (SELECT DISTINCT h.manifests_endpoint_id AS endpoint_id, r.from_time
                    FROM unnest(reconciler_ids, from_times) AS r(id, from_time)
                    JOIN deployment_state_history h ON h.reconciler_id = r.id
                  UNION
                  SELECT s.manifests_endpoint_id, r.from_time
                    FROM unnest(reconciler_ids, from_times) AS r(id, from_time)
                    JOIN deployment_state s ON s.reconciler_id = r.id) x
           GROUP BY x.endpoint_id) e
  HAVING count(*) > 0
$$;
REVOKE EXECUTE ON FUNCTION kalypso_queue_subscriber_rollouts(bigint[], timestamptz[]) FROM PUBLIC;

-- schema/0010's function; changed: the rollout a rewritten row's commit belonged to is queued too.
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
    ), before AS (
      -- The rollout each commit belonged to before this round (the statement sees the rows as they were).
      SELECT c.target_id, c.to_commit, r.assigned_at AS left_since
        FROM candidates c
        JOIN target_commit tc ON tc.deployment_target_id = c.target_id AND tc.gitops_commit_id = c.to_commit
        JOIN deployment_assignment la ON la.id = tc.assignment_id
        JOIN deployment_assignment r ON r.id = la.rollout_id
    ), written_rows AS (
      INSERT INTO target_commit AS tc (deployment_target_id, gitops_commit_id, assignment_id, carried)
      SELECT target_id, to_commit, assignment_id, true FROM candidates ORDER BY target_id, to_commit
      ON CONFLICT (deployment_target_id, gitops_commit_id) DO UPDATE SET assignment_id = excluded.assignment_id
       WHERE tc.carried
         AND (SELECT (a.assigned_at, a.id) FROM deployment_assignment a WHERE a.id = tc.assignment_id)
             < (SELECT (a.assigned_at, a.id) FROM deployment_assignment a WHERE a.id = excluded.assignment_id)
      RETURNING tc.deployment_target_id, tc.gitops_commit_id, tc.assignment_id
    ), queued AS (
      -- The rollout the commit now belongs to, and the one it left.
      INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
      SELECT array_agg(dt.manifests_endpoint_id), array_agg(w.since - interval '1 hour'), array_agg('infinity'::timestamptz)
        FROM (SELECT wr.deployment_target_id, min(least(r.assigned_at, b.left_since)) AS since
                FROM written_rows wr
                JOIN deployment_assignment sa ON sa.id = wr.assignment_id
                JOIN deployment_assignment r ON r.id = sa.rollout_id
                LEFT JOIN before b ON b.target_id = wr.deployment_target_id AND b.to_commit = wr.gitops_commit_id
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

-- schema/0010's function; changed: when the commit was carried to an earlier rollout, that rollout
-- is queued (the writer queues the new assignment's own span).
CREATE OR REPLACE FUNCTION kalypso_assignment_added(new_assignment_id bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  a record;
  previous record;
  following record;
  endpoint bigint;
  left_since timestamptz;
BEGIN
  SELECT * INTO a FROM deployment_assignment WHERE id = new_assignment_id;
  SELECT manifests_endpoint_id INTO endpoint FROM deployment_target WHERE id = a.deployment_target_id;
  SELECT * INTO previous FROM deployment_assignment p
   WHERE p.deployment_target_id = a.deployment_target_id AND (p.assigned_at, p.id) < (a.assigned_at, a.id)
   ORDER BY p.assigned_at DESC, p.id DESC LIMIT 1;
  SELECT * INTO following FROM deployment_assignment n
   WHERE n.deployment_target_id = a.deployment_target_id AND (n.assigned_at, n.id) > (a.assigned_at, a.id)
   ORDER BY n.assigned_at, n.id LIMIT 1;
  -- The rollout the commit was carried to, which it leaves now (read before any renumbering).
  SELECT r.assigned_at INTO left_since
    FROM target_commit tc
    JOIN deployment_assignment ca ON ca.id = tc.assignment_id
    JOIN deployment_assignment r ON r.id = ca.rollout_id
   WHERE tc.deployment_target_id = a.deployment_target_id AND tc.gitops_commit_id = a.gitops_commit_id AND tc.carried;

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
  IF left_since IS NOT NULL THEN
    INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
    VALUES (ARRAY[endpoint], ARRAY[left_since - interval '1 hour'], ARRAY['infinity'::timestamptz]);
  END IF;

  PERFORM kalypso_commits_seen(
    ARRAY[endpoint], ARRAY[a.gitops_commit_id], ARRAY[a.assigned_at],
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN endpoint END, CASE WHEN following.id IS NOT NULL THEN endpoint END], NULL),
    array_remove(ARRAY[previous.gitops_commit_id, CASE WHEN following.id IS NOT NULL THEN a.gitops_commit_id END], NULL),
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN a.gitops_commit_id END, following.gitops_commit_id], NULL),
    array_remove(ARRAY[CASE WHEN previous.id IS NOT NULL THEN a.assigned_at END, following.assigned_at], NULL));
  -- Its own commit's successors may now carry its version (it is newer than what they carried).
  PERFORM kalypso_carry_forward(ARRAY[a.deployment_target_id], ARRAY[a.gitops_commit_id]);
END $$;

-- Rollouts left stale by the missing queues before this migration: every endpoint is refreshed once,
-- by the first refresh after it (a hub's timer, or the first delivery report).
INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
SELECT array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz) FROM manifests_endpoint
HAVING count(*) > 0;
