-- The summaries' memory of each reconciler (summary_reconciler, schema/0012) updated in place.
--
-- Under ingest every report that moves a commit or a status updates its reconciler's row there, and
-- that update was the refresh's largest step: 135 of 255 ms for 24,000 reconcilers that all changed.
-- Each update wrote a new row version with an entry in every index, because the indexes named
-- columns that change: `status` in the predicates of the live/stale indexes, `last_seen_at` as
-- their key. Now:
-- * the predicates read `counted_stale`, a column derived from the status that changes only when a
--   reconciler turns stale or comes back;
-- * a live reconciler keeps the last_seen_at it was counted by until that falls behind the cut
--   (then the refresh looks at it anyway, and takes its state's). The readers already allow it: the
--   refresh re-judges the live ones behind the cut by their state, and kalypso_current_rollouts
--   lets the state decide for them;
-- * pages keep room for the new versions (fillfactor).
-- So the row is updated in place (HOT): no index entries. Measured on 24,000 reconcilers each
-- moving commit and status, six refreshes: 269–331 ms before, 177–242 after. Under ingest of a
-- live fleet (bench ingest-core, 1,000 × 4, two runs each way): the refresh's main statement
-- 514–538 ms → 340–380 ms a call, PostgreSQL CPU per record 48–64 µs → 44–61.

-- Before the column is added, so that the rewrite leaves the room.
ALTER TABLE summary_reconciler SET (fillfactor = 70);
ALTER TABLE summary_reconciler ADD COLUMN counted_stale boolean GENERATED ALWAYS AS (status = 'stale') STORED;
DROP INDEX summary_reconciler_live;
DROP INDEX summary_reconciler_stale;
-- The live ones, by when they were counted seen: those crossing stale-after.
CREATE INDEX summary_reconciler_live ON summary_reconciler (last_seen_at) WHERE NOT counted_stale;
-- The ones counted stale, by when they were last seen: a caller's stale-after cut earlier than the
-- refresh's makes some of them live (kalypso_current_rollouts).
CREATE INDEX summary_reconciler_stale ON summary_reconciler (last_seen_at) WHERE counted_stale;

-- schema/0012's refresh; changed: the stale scan reads counted_stale, and the remembered row keeps
-- a live reconciler's last_seen_at.
CREATE OR REPLACE FUNCTION kalypso_refresh_summaries(everything boolean DEFAULT false, at timestamptz DEFAULT now())
RETURNS TABLE (reconcilers integer, hosts integer)
LANGUAGE plpgsql AS $function$
DECLARE
  stale_before timestamptz := at - (SELECT hs.stale_after FROM hub_settings hs);
  changed bigint[];
  desired bigint[];
  touched_hosts bigint[];
  -- Of the touched hosts, those recounted whole; the others' counts move by the difference.
  recount_hosts bigint[];
  drift_hosts bigint[] := '{}';
BEGIN
  WITH taken AS (DELETE FROM summary_queue RETURNING summary_queue.reconciler_ids, summary_queue.desired_endpoint_ids)
  SELECT ARRAY(SELECT DISTINCT x FROM taken, unnest(taken.reconciler_ids) x),
         ARRAY(SELECT DISTINCT y FROM taken, unnest(taken.desired_endpoint_ids) y)
    INTO changed, desired;
  IF everything THEN
    changed := ARRAY(SELECT reconciler_id FROM deployment_state UNION SELECT reconciler_id FROM summary_reconciler);
  ELSE
    changed := ARRAY(SELECT DISTINCT x FROM unnest(changed
      -- Counted live, silent past stale-after: now stale.
      || ARRAY(SELECT c.reconciler_id FROM summary_reconciler c WHERE NOT c.counted_stale AND c.last_seen_at < stale_before)) x);
  END IF;

  -- (Arrays are joined through unnest() throughout: `= ANY(array)` with a variable is searched
  -- linearly per row, which for a refresh of 80,000 reconcilers costs minutes.)
  IF cardinality(changed) > 0 THEN
    -- Where each was counted and where it belongs now (one statement, one snapshot): the
    -- difference is added to the counts, and the new place remembered.
    WITH counted AS (
      SELECT c.reconciler_id, c.manifests_endpoint_id, c.host_id, c.gitops_commit_id, c.status
        FROM unnest(changed) AS x(id) JOIN summary_reconciler c ON c.reconciler_id = x.id
    ), now_state AS (
      SELECT s.reconciler_id, s.manifests_endpoint_id, s.host_id, s.gitops_commit_id,
             kalypso_effective_status(s.status, s.last_seen_at, stale_before) AS status, s.last_seen_at
        FROM unnest(changed) AS x(id) JOIN deployment_state s ON s.reconciler_id = x.id
    ), moves AS (
      SELECT manifests_endpoint_id, host_id, gitops_commit_id, status, -1 AS sign FROM counted
      UNION ALL
      SELECT manifests_endpoint_id, host_id, gitops_commit_id, status, 1 FROM now_state
    ), pairs AS (
      -- Each reconciler's old and new place side by side. (Sets are compared by FULL JOIN and
      -- EXCEPT, which are hashed or merged: an anti-join between two of these CTEs, whose size the
      -- planner cannot see, was planned as a loop over one for each row of the other — 25,000² at
      -- a time under ingest.)
      SELECT coalesce(c.reconciler_id, n.reconciler_id) AS reconciler_id, c.host_id AS old_host, n.host_id AS new_host,
             c.status AS old_status, n.status AS new_status,
             c.reconciler_id IS NULL OR n.reconciler_id IS NULL
               OR c.manifests_endpoint_id <> n.manifests_endpoint_id OR c.host_id <> n.host_id AS regroups
        FROM counted c FULL JOIN now_state n ON n.reconciler_id = c.reconciler_id
    ), added AS (
      INSERT INTO endpoint_status_count AS c (manifests_endpoint_id, gitops_commit_id, status, reconcilers)
      SELECT m.manifests_endpoint_id, m.gitops_commit_id, m.status, sum(m.sign)::int
        FROM moves m GROUP BY 1, 2, 3 HAVING sum(m.sign) <> 0
      ON CONFLICT (manifests_endpoint_id, gitops_commit_id, status) DO UPDATE SET reconcilers = c.reconcilers + excluded.reconcilers
    ), forgotten AS (
      DELETE FROM summary_reconciler c
       USING pairs p
       WHERE c.reconciler_id = p.reconciler_id AND p.new_host IS NULL
    ), remembered AS (
      -- Where it was counted, its row is updated; a reconciler counted for the first time is
      -- inserted. (The refresh is this table's only writer, under its lock: an upsert's
      -- speculative insertion, one more index probe per row, buys nothing.) A live one keeps the
      -- last_seen_at it was counted by until that falls behind the cut, so that its row is
      -- updated in place (see above).
      UPDATE summary_reconciler c
         SET manifests_endpoint_id = n.manifests_endpoint_id, host_id = n.host_id, gitops_commit_id = n.gitops_commit_id,
             status = n.status,
             last_seen_at = CASE WHEN c.counted_stale OR n.status = 'stale' OR c.last_seen_at < stale_before
                                 THEN n.last_seen_at ELSE c.last_seen_at END
        FROM now_state n
       WHERE c.reconciler_id = n.reconciler_id
    ), first_counted AS (
      INSERT INTO summary_reconciler (reconciler_id, manifests_endpoint_id, host_id, gitops_commit_id, status, last_seen_at)
      SELECT n.* FROM now_state n JOIN pairs p ON p.reconciler_id = n.reconciler_id WHERE p.old_host IS NULL
    ), host_sides AS (
      SELECT p.old_host AS host_id, p.old_status AS status, -1 AS sign, p.regroups FROM pairs p WHERE p.old_host IS NOT NULL
      UNION ALL
      SELECT p.new_host, p.new_status, 1, p.regroups FROM pairs p WHERE p.new_host IS NOT NULL
    ), host_moves AS (
      -- Per host, what its counts by status gain and lose; `regroups`: a reconciler joined or
      -- left it, or moved to another endpoint — the environments it serves may change, so it is
      -- recounted whole.
      SELECT h.host_id, sum(h.sign)::int AS total,
             coalesce(sum(h.sign) FILTER (WHERE h.status = 'success'), 0)::int AS succeeded,
             coalesce(sum(h.sign) FILTER (WHERE h.status = 'failure'), 0)::int AS failed,
             coalesce(sum(h.sign) FILTER (WHERE h.status = 'in_progress'), 0)::int AS in_progress,
             coalesce(sum(h.sign) FILTER (WHERE h.status = 'stale'), 0)::int AS stale,
             bool_or(h.regroups) AS regroups
        FROM host_sides h
       GROUP BY h.host_id
    ), shifted AS (
      -- The others' reconcilers changed commit or status only: their counts move by the difference.
      UPDATE host_summary h
         SET total = h.total + d.total, succeeded = h.succeeded + d.succeeded, failed = h.failed + d.failed,
             in_progress = h.in_progress + d.in_progress, stale = h.stale + d.stale
        FROM host_moves d
       WHERE h.host_id = d.host_id AND NOT d.regroups
      RETURNING h.host_id
    )
    -- (Data-modifying CTEs run to completion whether read or not.)
    SELECT ARRAY(SELECT d.host_id FROM host_moves d),
           -- The rest are recounted, hosts without a summary yet among them.
           ARRAY(SELECT d.host_id FROM host_moves d EXCEPT SELECT s.host_id FROM shifted s)
             -- A reconciler that came and went between two refreshes (reported and removed) moves
             -- no count, but its host, new, still gets its summary (of nothing), as a rebuild gives it.
             || ARRAY(SELECT DISTINCT r.host_id
                        FROM (SELECT x.id FROM unnest(changed) AS x(id) EXCEPT SELECT p.reconciler_id FROM pairs p) v
                        JOIN reconciler r ON r.id = v.id
                       WHERE NOT EXISTS (SELECT 1 FROM host_summary h WHERE h.host_id = r.host_id))
      INTO touched_hosts, recount_hosts;
    DELETE FROM endpoint_status_count c WHERE c.reconcilers = 0;
  ELSE
    touched_hosts := '{}';
    recount_hosts := '{}';
  END IF;

  -- Drift: of the reconcilers that changed, and of every reconciler of an endpoint whose desired state did.
  IF cardinality(desired) > 0 THEN
    changed := ARRAY(SELECT DISTINCT x FROM unnest(changed
      || ARRAY(SELECT s.reconciler_id FROM unnest(desired) AS d(id) JOIN deployment_state s ON s.manifests_endpoint_id = d.id)) x);
    drift_hosts := ARRAY(SELECT s.host_id FROM unnest(desired) AS d(id) JOIN deployment_state s ON s.manifests_endpoint_id = d.id);
  END IF;
  IF cardinality(changed) > 0 THEN
    -- A host's count of drifting reconcilers changes only with drift off the desired rollout: the
    -- hosts of such items, before and after, are recounted.
    WITH gone AS (
      DELETE FROM drift_item d USING unnest(changed) AS x(id) WHERE d.reconciler_id = x.id
      RETURNING d.host_id, d.not_on_desired_rollout
    )
    SELECT drift_hosts || ARRAY(SELECT g.host_id FROM gone g WHERE g.not_on_desired_rollout) INTO drift_hosts;
    WITH judged AS (
      INSERT INTO drift_item SELECT * FROM kalypso_judge_drift(changed, stale_before)
      RETURNING drift_item.host_id, drift_item.not_on_desired_rollout
    )
    SELECT drift_hosts || ARRAY(SELECT j.host_id FROM judged j WHERE j.not_on_desired_rollout) INTO drift_hosts;
  END IF;
  IF cardinality(drift_hosts) > 0 THEN
    touched_hosts := ARRAY(SELECT DISTINCT y FROM unnest(touched_hosts || drift_hosts) y);
    recount_hosts := ARRAY(SELECT DISTINCT y FROM unnest(recount_hosts || drift_hosts) y);
  END IF;

  IF everything THEN
    touched_hosts := ARRAY(SELECT id FROM host);
    recount_hosts := touched_hosts;
  END IF;
  IF cardinality(recount_hosts) > 0 THEN
    -- A host has a few reconcilers: recounted whole.
    DELETE FROM host_summary h USING unnest(recount_hosts) AS x(id) WHERE h.host_id = x.id;
    INSERT INTO host_summary (host_id, total, succeeded, failed, in_progress, stale, drifting, environment_ids)
    SELECT h.id,
           count(c.reconciler_id)::int,
           count(*) FILTER (WHERE c.status = 'success')::int,
           count(*) FILTER (WHERE c.status = 'failure')::int,
           count(*) FILTER (WHERE c.status = 'in_progress')::int,
           count(*) FILTER (WHERE c.status = 'stale')::int,
           (SELECT count(DISTINCT d.reconciler_id)::int FROM drift_item d WHERE d.host_id = h.id AND d.not_on_desired_rollout),
           ARRAY(SELECT DISTINCT t.environment_id FROM summary_reconciler r JOIN deployment_target t ON t.manifests_endpoint_id = r.manifests_endpoint_id
                  WHERE r.host_id = h.id ORDER BY 1)
      FROM unnest(recount_hosts) AS x(id)
      JOIN host h ON h.id = x.id
      LEFT JOIN summary_reconciler c ON c.host_id = h.id
     GROUP BY h.id;
  END IF;
  RETURN QUERY SELECT cardinality(changed), cardinality(touched_hosts);
END $function$;

-- schema/0013's verdict; changed: its corrections find their candidates by counted_stale.
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
       WHERE NOT r.counted_stale AND r.last_seen_at < $1 AND s.last_seen_at < $1 %3$s
      UNION ALL
      -- Counted stale, live by this cut.
      SELECT r.manifests_endpoint_id, r.gitops_commit_id, 0, -1, (s.status = 'success')::int, (s.status = 'failure')::int
        FROM summary_reconciler r
       CROSS JOIN LATERAL (SELECT s.status, s.last_seen_at FROM deployment_state s WHERE s.reconciler_id = r.reconciler_id OFFSET 0) s
       WHERE r.counted_stale AND r.last_seen_at >= $1 AND s.last_seen_at >= $1 %3$s
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
