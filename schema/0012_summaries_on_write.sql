-- Reports kept current on write (issue 20). Every rule a report applies is defined here once, and the
-- API and the kalypso_* views read the same definitions:
--
--   kalypso_effective_status(status, last_seen_at, stale_before)   a reconciler's status as reports show it
--   kalypso_judge_drift(reconciler_ids, stale_before)              which reconcilers drift from which target, why, since when
--   target_deployment (a view)                                     per target, the commits it runs, their versions, counts by status
--
-- The whole-fleet reports no longer recount every reconciler per request: summaries are kept
-- current the way the rollout table is (schema/0008). Writers queue the reconcilers they changed in
-- their own statement (triggers, so that no writer can forget), a refresher folds the queue in, and
-- readers fold it in before they read, so they see their own writes:
--
--   summary_reconciler      each reconciler as the summaries count it (endpoint, commit, effective status)
--   endpoint_status_count   reconcilers per endpoint, applied commit and effective status
--   drift_item              each (target, reconciler) that drifts, with its reasons and since when
--   host_summary            per host: reconcilers by status, how many drift, its environments
--
-- A refresh costs what changed, not the size of what it touched: a reconciler's old and new place in
-- the counts are compared and the difference added, so an endpoint pulled by 10,000 devices is not
-- recounted for each report of one of them. Staleness is an event, not a clock reading: the
-- reconcilers counted live whose last sign of life is older than stale-after (an index finds them)
-- are folded in as if they had been queued — counts including "stale" stay exact without a scan,
-- and the views, which read the summaries, agree with the API to the refresher's interval.

-- STABLE, not IMMUTABLE: it casts an enum to text, which is stable, and PostgreSQL inlines an
-- IMMUTABLE SQL function only when its body is immutable too — declared IMMUTABLE it was called once
-- per reconciler (857,000 calls in the ingest benchmark) instead of being inlined.
CREATE FUNCTION kalypso_effective_status(status deployment_status, last_seen_at timestamptz, stale_before timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN last_seen_at < stale_before THEN 'stale' ELSE status::text END
$$;

-- What changed; one row per writing statement (appends never contend): reconcilers whose state
-- changed, and endpoints whose desired state changed (the drift of every reconciler pulling them).
CREATE TABLE summary_queue (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reconciler_ids       bigint[] NOT NULL DEFAULT '{}',
  desired_endpoint_ids bigint[] NOT NULL DEFAULT '{}'
);

CREATE TABLE summary_reconciler (
  reconciler_id         bigint PRIMARY KEY,
  manifests_endpoint_id bigint NOT NULL,
  host_id               bigint NOT NULL,
  gitops_commit_id      text NOT NULL,
  status                text NOT NULL,
  last_seen_at          timestamptz NOT NULL
);
-- The live ones, by when they were last seen: those crossing stale-after.
CREATE INDEX summary_reconciler_live ON summary_reconciler (last_seen_at) WHERE status <> 'stale';
CREATE INDEX summary_reconciler_by_host ON summary_reconciler (host_id);
-- The ones counted stale, by when they were last seen: a caller's stale-after cut earlier than the
-- refresh's makes some of them live (kalypso_current_rollouts, schema/0013).
CREATE INDEX summary_reconciler_stale ON summary_reconciler (last_seen_at) WHERE status = 'stale';

CREATE TABLE endpoint_status_count (
  manifests_endpoint_id bigint NOT NULL,
  gitops_commit_id      text NOT NULL,
  status                text NOT NULL,
  reconcilers           integer NOT NULL,
  PRIMARY KEY (manifests_endpoint_id, gitops_commit_id, status)
);
-- Emptied counts, removed after each refresh.
CREATE INDEX endpoint_status_count_empty ON endpoint_status_count (manifests_endpoint_id) WHERE reconcilers = 0;

CREATE TABLE drift_item (
  deployment_target_id   bigint NOT NULL,
  reconciler_id          bigint NOT NULL,
  environment_id         bigint NOT NULL,
  manifests_endpoint_id  bigint NOT NULL,
  host_id                bigint NOT NULL,
  not_on_desired_rollout boolean NOT NULL,
  failing                boolean NOT NULL,
  stale                  boolean NOT NULL,
  drifting_since         timestamptz NOT NULL,
  -- Found by its reconciler: the refresh replaces a reconciler's items.
  PRIMARY KEY (reconciler_id, deployment_target_id)
);
CREATE INDEX drift_item_by_host ON drift_item (host_id);
-- Longest first, a page at a time, for the fleet or one environment.
CREATE INDEX drift_item_page ON drift_item (drifting_since, reconciler_id, deployment_target_id);
CREATE INDEX drift_item_environment_page ON drift_item (environment_id, drifting_since, reconciler_id, deployment_target_id);

CREATE TABLE host_summary (
  host_id         bigint PRIMARY KEY,
  total           integer NOT NULL,
  succeeded       integer NOT NULL,
  failed          integer NOT NULL,
  in_progress     integer NOT NULL,
  stale           integer NOT NULL,
  -- Reconcilers not on their target's desired rollout (failing and silent ones are in the counts).
  drifting        integer NOT NULL,
  environment_ids bigint[] NOT NULL
);

-- Drift: not on the desired rollout (neither the desired commit nor another commit running the
-- desired version), failing, or stale; out of date since the desired rollout began or since the
-- reconciler entered its state, whichever came later; failing since it entered its state; stale
-- since it was last seen. The earliest reason that holds is the drift's start.
CREATE FUNCTION kalypso_judge_drift(reconciler_ids bigint[], stale_before timestamptz)
RETURNS TABLE (deployment_target_id bigint, reconciler_id bigint, environment_id bigint, manifests_endpoint_id bigint, host_id bigint,
               not_on_desired_rollout boolean, failing boolean, stale boolean, drifting_since timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  WITH judged AS (
    SELECT t.id AS target_id, t.environment_id, s.reconciler_id, s.manifests_endpoint_id, s.host_id, s.status, s.observed_at, s.last_seen_at,
           ca.id IS NOT NULL AND s.gitops_commit_id IS DISTINCT FROM ca.gitops_commit_id
             -- The applied commit's rollout is looked up (by index) only for reconcilers off the desired commit.
             AND (SELECT a.rollout_id FROM target_commit tc JOIN deployment_assignment a ON a.id = tc.assignment_id
                   WHERE tc.deployment_target_id = t.id AND tc.gitops_commit_id = s.gitops_commit_id) IS DISTINCT FROM ca.rollout_id
             AS off_rollout,
           cr.assigned_at AS rollout_started_at
      FROM unnest($1) AS x(id)
      JOIN deployment_state s ON s.reconciler_id = x.id
      JOIN deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
      LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
      LEFT JOIN deployment_assignment cr ON cr.id = ca.rollout_id
  )
  SELECT j.target_id, j.reconciler_id, j.environment_id, j.manifests_endpoint_id, j.host_id,
         j.off_rollout, j.status = 'failure', j.last_seen_at < $2,
         -- least() skips NULLs: the reasons that do not hold.
         least(CASE WHEN j.off_rollout THEN greatest(j.rollout_started_at, j.observed_at) END,
               CASE WHEN j.status = 'failure' THEN j.observed_at END,
               CASE WHEN j.last_seen_at < $2 THEN j.last_seen_at END)
    FROM judged j
   WHERE j.off_rollout OR j.status = 'failure' OR j.last_seen_at < $2
$$;

-- Per deployment target, the commits its reconcilers run: the version each commit runs there
-- (assigned with it, or carried), whether it is on the desired rollout, and counts by status. A view
-- (not a function), so that a filter on targets reaches its indexes, for the API and the views alike.
CREATE VIEW target_deployment AS
SELECT t.id AS deployment_target_id, c.gitops_commit_id, v.version, coalesce(a.rollout_id = ca.rollout_id, false) AS on_desired,
       c.status, c.reconcilers
  FROM deployment_target t
  JOIN endpoint_status_count c ON c.manifests_endpoint_id = t.manifests_endpoint_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN target_commit tc ON tc.deployment_target_id = t.id AND tc.gitops_commit_id = c.gitops_commit_id
  LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
  LEFT JOIN workload_version v ON v.id = a.workload_version_id;

-- Folds the queued changes into the summaries, and the reconcilers that have turned stale by `at`
-- (the hub's clock; now() unless a test pins it). Serialized by the caller (an advisory lock,
-- src/store/summary-refresh.ts). `everything`: rebuild all (to fill them first, and after the
-- stale-after setting changed). Returns how many reconcilers and hosts it looked at.
--
-- Hosts: a host whose reconcilers only changed commit or status (or turned stale) has its counts by
-- status moved by the difference, as the endpoint counts are; it is recounted whole only when a
-- reconciler joined, left or moved to another endpoint (the environments it serves may change), when
-- its drift off the desired rollout may have changed, when the desired state of one of its endpoints
-- changed, or when it has no summary yet. (Recounting every touched host whole was a quarter of the
-- refresh under ingest: 100 µs per host.)
CREATE FUNCTION kalypso_refresh_summaries(everything boolean DEFAULT false, at timestamptz DEFAULT now())
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
      || ARRAY(SELECT c.reconciler_id FROM summary_reconciler c WHERE c.status <> 'stale' AND c.last_seen_at < stale_before)) x);
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
      -- speculative insertion, one more index probe per row, buys nothing.)
      UPDATE summary_reconciler c
         SET manifests_endpoint_id = n.manifests_endpoint_id, host_id = n.host_id, gitops_commit_id = n.gitops_commit_id,
             status = n.status, last_seen_at = n.last_seen_at
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

-- The writers' side: every statement that changes reconcilers' state queues them. An update that
-- changes nothing the summaries count — a sign of life from a reconciler counted live — queues
-- nothing: when it would have turned stale, the refresher looks at it again and finds it live.
CREATE FUNCTION kalypso_queue_state_summaries() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO summary_queue (reconciler_ids) SELECT array_agg(n.reconciler_id) FROM new_rows n HAVING count(*) > 0;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO summary_queue (reconciler_ids) SELECT array_agg(o.reconciler_id) FROM old_rows o HAVING count(*) > 0;
  ELSE
    INSERT INTO summary_queue (reconciler_ids)
    SELECT array_agg(n.reconciler_id)
      FROM old_rows o
      JOIN new_rows n ON n.reconciler_id = o.reconciler_id
      CROSS JOIN kalypso_settings cfg
     WHERE o.manifests_endpoint_id IS DISTINCT FROM n.manifests_endpoint_id OR o.host_id IS DISTINCT FROM n.host_id
        OR o.gitops_commit_id IS DISTINCT FROM n.gitops_commit_id OR o.status IS DISTINCT FROM n.status
        OR o.observed_at IS DISTINCT FROM n.observed_at
        OR n.last_seen_at < cfg.stale_before
        -- Counted stale, and a sign of life: asked of the summaries, not of a clock (the refresher
        -- may judge by another clock than this server's).
        OR (o.last_seen_at IS DISTINCT FROM n.last_seen_at
            AND EXISTS (SELECT 1 FROM summary_reconciler c WHERE c.reconciler_id = o.reconciler_id AND c.status = 'stale'))
    HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $function$;

CREATE TRIGGER deployment_state_summaries_insert AFTER INSERT ON deployment_state
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_state_summaries();
CREATE TRIGGER deployment_state_summaries_update AFTER UPDATE ON deployment_state
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_state_summaries();
CREATE TRIGGER deployment_state_summaries_delete AFTER DELETE ON deployment_state
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_state_summaries();

-- Desired state moves drift too: a new current assignment, a renumbered rollout, a commit a target
-- carries its version to. Those statements queue the endpoints of the targets they touched.
CREATE FUNCTION kalypso_queue_target_summaries() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_TABLE_NAME = 'deployment_target' THEN
    INSERT INTO summary_queue (desired_endpoint_ids)
    SELECT array_agg(DISTINCT n.manifests_endpoint_id) FROM new_rows n HAVING count(*) > 0;
  ELSE
    -- deployment_assignment and target_commit: rows of a target.
    INSERT INTO summary_queue (desired_endpoint_ids)
    SELECT array_agg(DISTINCT t.manifests_endpoint_id) FROM new_rows n JOIN deployment_target t ON t.id = n.deployment_target_id HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $function$;

CREATE TRIGGER deployment_target_summaries_insert AFTER INSERT ON deployment_target
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();
CREATE TRIGGER deployment_target_summaries_update AFTER UPDATE ON deployment_target
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();
CREATE TRIGGER deployment_assignment_summaries_update AFTER UPDATE ON deployment_assignment
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();
CREATE TRIGGER target_commit_summaries_insert AFTER INSERT ON target_commit
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();
CREATE TRIGGER target_commit_summaries_update AFTER UPDATE ON target_commit
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_summaries();

-- The views read the same definitions and summaries as the API.
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
    SELECT sum(x.reconcilers)::int AS reconcilers,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'success'), 0)::int AS succeeded,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'failure'), 0)::int AS failed,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'in_progress'), 0)::int AS in_progress,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'stale'), 0)::int AS stale,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.gitops_commit_id = a.gitops_commit_id), 0)::int AS on_desired_commit,
           coalesce(sum(x.reconcilers) FILTER (WHERE x.on_desired), 0)::int AS on_desired_version,
           -- A deployed commit is named by the version that runs at it, else by its short id.
           string_agg(DISTINCT coalesce(x.version, left(x.gitops_commit_id, 12)), ', ') AS deployed_versions
      FROM target_deployment x WHERE x.deployment_target_id = t.id
  ) d ON true;

CREATE OR REPLACE VIEW kalypso_host_state AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at AS host_last_seen_at,
       h.last_seen_at < cfg.stale_before AS host_offline,
       r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit,
       kalypso_effective_status(s.status, s.last_seen_at, cfg.stale_before) AS status,
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

CREATE OR REPLACE VIEW kalypso_drift AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, r.name AS reconciler, r.type AS reconciler_type,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit,
       CASE WHEN d.stale THEN 'stale' ELSE s.status::text END AS status, s.status_message,
       d.not_on_desired_rollout AS not_on_desired_commit, d.failing, d.stale,
       concat_ws(', ', CASE WHEN d.not_on_desired_rollout THEN 'not_on_desired_commit' END,
                       CASE WHEN d.failing THEN 'failing' END, CASE WHEN d.stale THEN 'stale' END) AS reasons,
       d.drifting_since,
       greatest(0, extract(epoch FROM now() - d.drifting_since))::bigint AS drifting_for_seconds
  FROM drift_item d
  JOIN kalypso_deployment_target t ON t.id = d.deployment_target_id
  JOIN deployment_state s ON s.reconciler_id = d.reconciler_id
  JOIN host h ON h.id = d.host_id
  JOIN reconciler r ON r.id = d.reconciler_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN target_commit atc ON atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN deployment_assignment aa ON aa.id = atc.assignment_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id;

-- One row per host, from its summary: what Grafana's host panels read (one pass over the hosts,
-- not over every reconciler).
CREATE VIEW kalypso_host_summary AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at, h.last_seen_at < cfg.stale_before AS offline,
       coalesce(hs.total, 0) AS reconcilers, coalesce(hs.succeeded, 0) AS succeeded, coalesce(hs.failed, 0) AS failed,
       coalesce(hs.in_progress, 0) AS in_progress, coalesce(hs.stale, 0) AS stale, coalesce(hs.drifting, 0) AS drifting,
       (SELECT string_agg(e.name, ', ' ORDER BY e.environment_rank) FROM environment_in_order e WHERE e.id = ANY(hs.environment_ids)) AS environments
  FROM host h
  CROSS JOIN kalypso_settings cfg
  LEFT JOIN host_summary hs ON hs.host_id = h.id;

DO $$
BEGIN
  GRANT SELECT ON kalypso_host_summary TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'kalypso_host_summary not granted to kalypso_reader (%): grant SELECT on it to your reader yourself', SQLERRM;
END $$;

-- Filled once from what is stored.
SELECT kalypso_refresh_summaries(true);

-- The refresh writes, and judging drift reads every table: the hub's alone. (kalypso_effective_status
-- reads nothing; the views read target_deployment with their owner's rights.)
REVOKE EXECUTE ON FUNCTION kalypso_refresh_summaries(boolean, timestamptz) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_judge_drift(bigint[], timestamptz) FROM PUBLIC;
