-- The summary refresh in bounded slices (issue 38: the views current within 2 s of a write at fleet
-- L, also while a whole environment rolls out).
--
-- Under ingest at L (a new version for every target of prod, its 80,000 reconcilers reporting it
-- twice: 160,000 records) the refresh folded the whole queue in one transaction: 80,000 reconcilers
-- and the drift of every reconciler of the 4,000 endpoints, 8.3 s of database time, after the timer
-- had given way to the writes for the whole burst. The views (Grafana reads the summaries directly)
-- lagged by the burst and that refresh.
--
-- Now a refresh can take a slice: the oldest queue rows that begin within `max_reconcilers`
-- reconcilers (at least one row; a row is one writer's statement, folded whole), and says whether
-- more is queued, so the timer folds a burst in slices that each commit within a fraction of a
-- second (src/store/summary-refresh.ts). Reports still fold the whole queue (NULL) before they read.
-- Folding in slices is the same fold: the refresh reads the reconcilers' stored states, not what
-- the queue says of them, so which rows a slice takes changes only when they are counted
-- (test/store/summaries-incremental.test.ts folds random writes in slices of one row and holds the
-- result to a rebuild).
--
-- A slice of a few thousand reconcilers was planned like the whole fleet: summary_reconciler
-- scanned and hashed twice and deployment_state read whole by index (0.9 s of a 1.5 s statement
-- for 10,000 reconcilers under load). The reconcilers are now looked up by key (a LATERAL subquery
-- kept by OFFSET 0), and the update of summary_reconciler is given the list to its index as well.
--
-- Otherwise the function is schema/0019's, unchanged; its result gains `more`. (The signature
-- changes, so the old function is dropped: a second overload would make a call with two arguments
-- ambiguous.)

-- How many reconcilers a queue row names, kept with it: a slice is cut by a running sum of them,
-- which read from the arrays themselves (a writer's statement of 1,000 reconcilers is 8 kB,
-- compressed out of line) cost 50–150 ms a slice under ingest.
ALTER TABLE summary_queue ADD COLUMN reconcilers integer GENERATED ALWAYS AS (cardinality(reconciler_ids)) STORED;

DROP FUNCTION kalypso_refresh_summaries(boolean, timestamptz);

CREATE FUNCTION kalypso_refresh_summaries(everything boolean DEFAULT false, at timestamptz DEFAULT now(), max_reconcilers integer DEFAULT NULL)
RETURNS TABLE (reconcilers integer, hosts integer, more boolean)
LANGUAGE plpgsql AS $function$
DECLARE
  stale_before timestamptz := at - (SELECT hs.stale_after FROM hub_settings hs);
  changed bigint[];
  desired bigint[];
  touched_hosts bigint[];
  -- Of the touched hosts, those recounted whole; the others' counts move by the difference.
  recount_hosts bigint[];
  drift_hosts bigint[] := '{}';
  -- The slice: its first queue row, and the endpoints of new desired states it judges.
  first_taken bigint;
  slice_desired bigint[];
  endpoint bigint;
  budget bigint;
BEGIN
  -- The oldest queue rows, as many as begin within max_reconcilers reconcilers (at least one row;
  -- all of them when NULL). A row is a writer's statement: its reconcilers are folded together.
  WITH slice AS (
    SELECT s.id FROM (
      SELECT q.id, sum(q.reconcilers) OVER (ORDER BY q.id) - q.reconcilers AS before
        FROM (SELECT q.id, q.reconcilers FROM summary_queue q ORDER BY q.id LIMIT coalesce(max_reconcilers, 2147483647)) q
    ) s
     WHERE max_reconcilers IS NULL OR s.before < max_reconcilers
  ), taken AS (
    DELETE FROM summary_queue q USING slice s WHERE q.id = s.id RETURNING q.id, q.reconciler_ids, q.desired_endpoint_ids
  )
  SELECT ARRAY(SELECT DISTINCT x FROM taken, unnest(taken.reconciler_ids) x),
         ARRAY(SELECT DISTINCT y FROM taken, unnest(taken.desired_endpoint_ids) y ORDER BY y),
         (SELECT min(taken.id) FROM taken)
    INTO changed, desired, first_taken;
  -- A new desired state re-judges every reconciler of its endpoints: an environment's new version
  -- is thousands of endpoints in one write (80,000 reconcilers at L). A slice takes the endpoints
  -- whose reconcilers fit in what its reconcilers left of max_reconcilers, or in half of it (so that
  -- they keep pace with the reports that follow them; at least one endpoint), and puts the others
  -- back at the head of the queue, as one row.
  IF max_reconcilers IS NOT NULL AND cardinality(desired) > 1 THEN
    -- (Endpoint by endpoint, in order, until the budget is spent: counting every endpoint's
    -- reconcilers to cut a running sum cost 0.4 s a slice for 4,000 endpoints.)
    budget := greatest(max_reconcilers - cardinality(changed), max_reconcilers / 2, 1);
    slice_desired := '{}';
    FOREACH endpoint IN ARRAY desired LOOP
      EXIT WHEN budget <= 0;
      slice_desired := slice_desired || endpoint;
      budget := budget - (SELECT count(*) FROM deployment_state s WHERE s.manifests_endpoint_id = endpoint);
    END LOOP;
    IF cardinality(slice_desired) < cardinality(desired) THEN
      INSERT INTO summary_queue (id, desired_endpoint_ids) OVERRIDING SYSTEM VALUE
      VALUES (first_taken, desired[cardinality(slice_desired) + 1:]);
      desired := slice_desired;
    END IF;
  END IF;
  more := EXISTS (SELECT 1 FROM summary_queue);
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
      -- Each looked up by key (OFFSET 0: a subquery the planner keeps): a slice of a few thousand
      -- of 240,000 reconcilers was planned as a scan of the whole table, hashed.
      SELECT c.reconciler_id, c.manifests_endpoint_id, c.host_id, c.gitops_commit_id, c.status
        FROM unnest(changed) AS x(id)
        CROSS JOIN LATERAL (SELECT c.* FROM summary_reconciler c WHERE c.reconciler_id = x.id OFFSET 0) c
    ), now_state AS (
      SELECT s.reconciler_id, s.manifests_endpoint_id, s.host_id, s.gitops_commit_id,
             kalypso_effective_status(s.status, s.last_seen_at, stale_before) AS status, s.last_seen_at
        FROM unnest(changed) AS x(id)
        CROSS JOIN LATERAL (SELECT s.* FROM deployment_state s WHERE s.reconciler_id = x.id OFFSET 0) s
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
       -- (The list again, to the index: joined to the CTE alone, a slice's rows were found by a
       -- scan of the whole table.)
       WHERE c.reconciler_id = n.reconciler_id AND c.reconciler_id = ANY (changed)
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
      -- Each host once: a host can be listed twice (new, with a reconciler that came and went
      -- besides one that stayed), and a join to both lists counted its reconcilers twice.
      FROM (SELECT DISTINCT y.id FROM unnest(recount_hosts) AS y(id)) x
      JOIN host h ON h.id = x.id
      LEFT JOIN summary_reconciler c ON c.host_id = h.id
     GROUP BY h.id;
  END IF;
  RETURN QUERY SELECT cardinality(changed), cardinality(touched_hosts), more;
END $function$;

REVOKE EXECUTE ON FUNCTION kalypso_refresh_summaries(boolean, timestamptz, integer) FROM PUBLIC;
