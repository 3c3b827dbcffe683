-- Hosts recounted whole only where a target joined or left their endpoint (issue 38). The summary
-- queue said "desired state changed" for an endpoint, and the refresh recounted every host of it
-- whole: a target added to an endpoint, or moved off it, changes the environments its hosts serve,
-- and the queue could not tell that from a new assignment. A new assignment changes only drift,
-- and a host's drifting count already moves by difference (schema/0047). So the queue now also
-- says which endpoints gained or lost a target (regrouped_endpoint_ids), and only their hosts are
-- recounted whole: a prod-wide assignment at fleet L recounted prod's 6,666 hosts (0.77 s alone, 5.6 s
-- of statement time during the bench's rollout burst).
--
-- A target moved to another endpoint queues both endpoints itself (the one it left was queued only
-- because the writer's upsert of the target touched it first, before the move).

ALTER TABLE summary_queue ADD COLUMN regrouped_endpoint_ids bigint[] NOT NULL DEFAULT '{}';

-- Targets queue the endpoints whose desired state changed; inserted ones, and those whose endpoint
-- or environment changed, also as regrouped (the endpoints on both sides of a move).
CREATE OR REPLACE FUNCTION kalypso_queue_target_summaries() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_TABLE_NAME = 'deployment_target' AND TG_OP = 'INSERT' THEN
    INSERT INTO summary_queue (desired_endpoint_ids, regrouped_endpoint_ids)
    SELECT array_agg(DISTINCT n.manifests_endpoint_id), array_agg(DISTINCT n.manifests_endpoint_id) FROM new_rows n HAVING count(*) > 0;
  ELSIF TG_TABLE_NAME = 'deployment_target' THEN
    INSERT INTO summary_queue (desired_endpoint_ids, regrouped_endpoint_ids)
    SELECT array_agg(DISTINCT side.id), coalesce(array_agg(DISTINCT side.id) FILTER (WHERE side.regrouped), '{}')
      FROM new_rows n
      JOIN old_rows o ON o.id = n.id
     CROSS JOIN LATERAL (VALUES (n.manifests_endpoint_id), (o.manifests_endpoint_id)) AS e(id)
     CROSS JOIN LATERAL (SELECT e.id, n.manifests_endpoint_id IS DISTINCT FROM o.manifests_endpoint_id
                                      OR n.environment_id IS DISTINCT FROM o.environment_id AS regrouped) side
    HAVING count(*) > 0;
  ELSE
    -- deployment_assignment and target_commit: rows of a target.
    INSERT INTO summary_queue (desired_endpoint_ids)
    SELECT array_agg(DISTINCT t.manifests_endpoint_id) FROM new_rows n JOIN deployment_target t ON t.id = n.deployment_target_id HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $function$;

DROP TRIGGER deployment_target_summaries_update ON deployment_target;
CREATE TRIGGER deployment_target_summaries_update AFTER UPDATE ON deployment_target
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();

-- Otherwise as schema/0047.
CREATE OR REPLACE FUNCTION kalypso_refresh_summaries(everything boolean DEFAULT false, at timestamp with time zone DEFAULT now())
RETURNS TABLE(reconcilers integer, hosts integer)
LANGUAGE plpgsql AS $function$
DECLARE
  stale_before timestamptz := at - (SELECT hs.stale_after FROM hub_settings hs);
  changed bigint[];
  desired bigint[];
  touched_hosts bigint[];
  -- Of the touched hosts, those recounted whole; the others' counts move by the difference.
  recount_hosts bigint[];
  -- Endpoints that gained or lost a target: their hosts' environments may change.
  regrouped bigint[];
  -- Hosts of such an endpoint: recounted whole.
  desired_hosts bigint[] := '{}';
  -- The changed reconcilers that drifted off the desired rollout before this refresh, and their hosts.
  gone_reconcilers bigint[];
  gone_hosts bigint[];
  -- Hosts whose count of drifting reconcilers moves, and by how much.
  drift_hosts bigint[] := '{}';
  drift_deltas integer[] := '{}';
  -- Of those, hosts without a summary to move (recounted instead).
  unmoved bigint[];
  -- Hosts a reconciler of which changed type: recounted whole (their reconciler types).
  typed_hosts bigint[];
BEGIN
  WITH taken AS (DELETE FROM summary_queue
                 RETURNING summary_queue.reconciler_ids, summary_queue.desired_endpoint_ids, summary_queue.host_ids,
                           summary_queue.regrouped_endpoint_ids)
  SELECT ARRAY(SELECT DISTINCT x FROM taken, unnest(taken.reconciler_ids) x),
         ARRAY(SELECT DISTINCT y FROM taken, unnest(taken.desired_endpoint_ids) y),
         ARRAY(SELECT DISTINCT z FROM taken, unnest(taken.host_ids) z),
         ARRAY(SELECT DISTINCT w FROM taken, unnest(taken.regrouped_endpoint_ids) w)
    INTO changed, desired, typed_hosts, regrouped;
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
  END IF;
  IF cardinality(regrouped) > 0 THEN
    -- A target added to an endpoint, or moved off it, changes the environments its hosts serve:
    -- those hosts are recounted whole. A new assignment changes only drift, which moves their
    -- drifting counts by difference below, like any changed reconciler's.
    desired_hosts := ARRAY(SELECT s.host_id FROM unnest(regrouped) AS d(id) JOIN deployment_state s ON s.manifests_endpoint_id = d.id);
  END IF;
  IF cardinality(changed) > 0 THEN
    -- A host counts its reconcilers with an item off the desired rollout. The changed ones' items
    -- are all judged again and every other reconciler's stay as they are, so each host's count
    -- moves by the changed ones that now have such an item less those that had one. (Recounting
    -- each such host whole took a sixth of a fold of 20,000 reconcilers at fleet L.)
    WITH gone AS (
      DELETE FROM drift_item d USING unnest(changed) AS x(id) WHERE d.reconciler_id = x.id
      RETURNING d.reconciler_id, d.host_id, d.not_on_desired_rollout
    )
    SELECT array_agg(g.reconciler_id), array_agg(g.host_id) INTO gone_reconcilers, gone_hosts
      FROM (SELECT DISTINCT g.reconciler_id, g.host_id FROM gone g WHERE g.not_on_desired_rollout) g;
    WITH judged AS (
      INSERT INTO drift_item SELECT * FROM kalypso_judge_drift(changed, stale_before)
      RETURNING drift_item.reconciler_id, drift_item.host_id, drift_item.not_on_desired_rollout
    ), sides AS (
      SELECT DISTINCT j.reconciler_id, j.host_id, 1 AS sign FROM judged j WHERE j.not_on_desired_rollout
      UNION ALL
      SELECT g.reconciler_id, g.host_id, -1 FROM unnest(gone_reconcilers, gone_hosts) AS g(reconciler_id, host_id)
    )
    SELECT coalesce(array_agg(d.host_id), '{}'), coalesce(array_agg(d.delta), '{}') INTO drift_hosts, drift_deltas
      FROM (SELECT s.host_id, sum(s.sign)::int AS delta FROM sides s GROUP BY s.host_id HAVING sum(s.sign) <> 0) d;
  END IF;
  IF cardinality(desired_hosts) > 0 THEN
    touched_hosts := ARRAY(SELECT DISTINCT y FROM unnest(touched_hosts || desired_hosts) y);
    recount_hosts := ARRAY(SELECT DISTINCT y FROM unnest(recount_hosts || desired_hosts) y);
  END IF;

  IF cardinality(typed_hosts) > 0 THEN
    touched_hosts := ARRAY(SELECT DISTINCT y FROM unnest(touched_hosts || typed_hosts) y);
    recount_hosts := ARRAY(SELECT DISTINCT y FROM unnest(recount_hosts || typed_hosts) y);
  END IF;

  IF everything THEN
    touched_hosts := ARRAY(SELECT id FROM host);
    recount_hosts := touched_hosts;
  END IF;
  IF cardinality(drift_hosts) > 0 THEN
    -- The drifting counts moved, on hosts not recounted whole anyway (joined, not searched with
    -- = ANY, as above); a host without a summary yet is recounted.
    WITH moving AS (
      SELECT x.host_id, x.delta
        FROM unnest(drift_hosts, drift_deltas) AS x(host_id, delta)
        LEFT JOIN (SELECT DISTINCT y FROM unnest(recount_hosts) y) r(id) ON r.id = x.host_id
       WHERE r.id IS NULL
    ), moved AS (
      UPDATE host_summary h SET drifting = h.drifting + m.delta FROM moving m WHERE h.host_id = m.host_id
      RETURNING h.host_id
    )
    SELECT ARRAY(SELECT m.host_id FROM moving m EXCEPT SELECT d.host_id FROM moved d) INTO unmoved;
    touched_hosts := ARRAY(SELECT DISTINCT y FROM unnest(touched_hosts || drift_hosts) y);
    recount_hosts := recount_hosts || unmoved;
  END IF;
  IF cardinality(recount_hosts) > 0 THEN
    -- A host has a few reconcilers: recounted whole.
    DELETE FROM host_summary h USING unnest(recount_hosts) AS x(id) WHERE h.host_id = x.id;
    INSERT INTO host_summary (host_id, total, succeeded, failed, in_progress, stale, drifting, environment_ids, reconciler_types)
    SELECT h.id,
           count(c.reconciler_id)::int,
           count(*) FILTER (WHERE c.status = 'success')::int,
           count(*) FILTER (WHERE c.status = 'failure')::int,
           count(*) FILTER (WHERE c.status = 'in_progress')::int,
           count(*) FILTER (WHERE c.status = 'stale')::int,
           (SELECT count(DISTINCT d.reconciler_id)::int FROM drift_item d WHERE d.host_id = h.id AND d.not_on_desired_rollout),
           ARRAY(SELECT DISTINCT t.environment_id FROM summary_reconciler r JOIN deployment_target t ON t.manifests_endpoint_id = r.manifests_endpoint_id
                  WHERE r.host_id = h.id ORDER BY 1),
           -- The types from the rows the counts are of, not a lookup per host: the first refresh of
           -- a new fleet fills summary_reconciler in this very transaction, its statistics still
           -- say empty, and a per-host subquery was planned as a scan of every reconciler per host
           -- (20,000 × 240,000 at fleet L: the bench's first report waited minutes).
           coalesce(array_agg(DISTINCT rc.type ORDER BY rc.type) FILTER (WHERE rc.id IS NOT NULL), '{}')
      -- Each host once: a host can be listed twice (new, with a reconciler that came and went
      -- besides one that stayed), and a join to both lists counted its reconcilers twice.
      FROM (SELECT DISTINCT y.id FROM unnest(recount_hosts) AS y(id)) x
      JOIN host h ON h.id = x.id
      LEFT JOIN summary_reconciler c ON c.host_id = h.id
      LEFT JOIN reconciler rc ON rc.id = c.reconciler_id
     GROUP BY h.id;
  END IF;
  RETURN QUERY SELECT cardinality(changed), cardinality(touched_hosts);
END $function$;
