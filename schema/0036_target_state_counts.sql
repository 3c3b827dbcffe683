-- Counts per deployment target kept on write, for the Environment state panels (issue 38).
--
-- kalypso_environment_state summed every target's counts at every read: one grouped pass over the
-- summaries' counts per endpoint and commit (endpoint_status_count), each row joined to the
-- target's commits, assignments and versions to tell whether it runs the desired rollout, and the
-- deployed versions named and de-duplicated per target (a sort). At fleet L that is 29,000 count
-- rows, 60,000 target commits and 60,000 assignments for each read: 200–300 ms of the Environment
-- state tables, Deployment targets and Differences (and of the dashboards' variables), whether a
-- query asks for one target or for all 12,000.
--
-- Now those sums are kept, one row per target with reconcilers in target_state_count, and the
-- view reads them. A row changes when the summaries' counts of its endpoint change, and when the
-- target's desired state does (its current assignment or endpoint, its commits, their rollouts):
-- * every statement that changes one of those tables appends the targets it touched to
--   target_state_count_queue (a trigger; appends, so concurrent writers never wait on each other);
-- * the summary refresh recounts what is queued at its end (src/store/summary-refresh.ts), every
--   tick, after taking a transaction-level advisory lock, so that a later recount sees an earlier
--   one's commit and no row is left counted from an older state;
-- * readers never wait for that: the view reads the kept rows of the targets not queued and sums
--   the queued ones (a handful between two ticks) as before. A recount deletes its queue rows and
--   writes the rows it recounted in one commit, so a reader sees either the queue row or the new
--   count. The answers are those of schema/0032's view at every moment:
--   test/store/target-state-counts.test.ts compares them after random writes, before and after
--   each refresh, and holds the kept rows to a recount.

-- A target's counts summed from the summaries, for every target (schema/0032's grouped pass); a
-- query that names targets (`deployment_target_id IN …`) sums only theirs.
CREATE VIEW target_state_sum AS
SELECT x.deployment_target_id,
       sum(x.reconcilers)::int AS reconcilers,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'success'), 0)::int AS succeeded,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'failure'), 0)::int AS failed,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'in_progress'), 0)::int AS in_progress,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.status = 'stale'), 0)::int AS stale,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.gitops_commit_id = x.desired_commit), 0)::int AS on_desired_commit,
       coalesce(sum(x.reconcilers) FILTER (WHERE x.on_desired), 0)::int AS on_desired_version,
       -- A deployed commit is named by the version that runs at it, else by its short id.
       string_agg(DISTINCT coalesce(x.version, left(x.gitops_commit_id, 12)), ', ') AS deployed_versions
  FROM target_deployment x
 GROUP BY x.deployment_target_id;

CREATE TABLE target_state_count (
  deployment_target_id bigint PRIMARY KEY,
  reconcilers          integer NOT NULL,
  succeeded            integer NOT NULL,
  failed               integer NOT NULL,
  in_progress          integer NOT NULL,
  stale                integer NOT NULL,
  on_desired_commit    integer NOT NULL,
  on_desired_version   integer NOT NULL,
  deployed_versions    text NOT NULL
);

-- Appended to, never updated: one row per statement that changed what a target's counts are made of.
CREATE TABLE target_state_count_queue (
  deployment_target_ids bigint[] NOT NULL
);

-- Recounts the targets queued (and `target_ids`); returns how many.
-- (work_mem: the grouped pass over every target sorts 29,000 rows at fleet L, on disk with the default.)
CREATE FUNCTION kalypso_count_target_states(target_ids bigint[]) RETURNS integer
LANGUAGE plpgsql
SET work_mem = '32MB'
AS $$
DECLARE
  targets bigint[];
  many boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('kalypso_target_state_count'));
  WITH taken AS (DELETE FROM target_state_count_queue q RETURNING q.deployment_target_ids)
  SELECT ARRAY(SELECT x FROM unnest(target_ids) x UNION SELECT x FROM taken t, unnest(t.deployment_target_ids) x) INTO targets;
  IF cardinality(targets) = 0 THEN
    RETURN 0;
  END IF;
  -- (Each statement reads with a snapshot taken after the queue rows were: whatever wrote them is seen.)
  DELETE FROM target_state_count k
   WHERE k.deployment_target_id IN (SELECT unnest(targets))
     AND NOT EXISTS (SELECT 1 FROM endpoint_status_count c JOIN deployment_target t ON t.manifests_endpoint_id = c.manifests_endpoint_id
                      WHERE t.id = k.deployment_target_id);
  -- Many targets (a rebuild of the summaries): the grouped pass over every target, hashed. A few (a
  -- tick's changes): each target's counts looked up by key. (`many` is a constant to the planner:
  -- the other branch is left out or never run.)
  many := cardinality(targets) > 1000;
  WITH sums AS (
    SELECT s.* FROM target_state_sum s WHERE many AND s.deployment_target_id IN (SELECT unnest(targets))
    UNION ALL
    SELECT s.* FROM target_state_sum s WHERE NOT many AND s.deployment_target_id = ANY(ARRAY(SELECT unnest(targets)))
  )
  INSERT INTO target_state_count AS k
  SELECT * FROM sums
  ON CONFLICT (deployment_target_id) DO UPDATE
     SET reconcilers = excluded.reconcilers, succeeded = excluded.succeeded, failed = excluded.failed,
         in_progress = excluded.in_progress, stale = excluded.stale, on_desired_commit = excluded.on_desired_commit,
         on_desired_version = excluded.on_desired_version, deployed_versions = excluded.deployed_versions
   WHERE (k.reconcilers, k.succeeded, k.failed, k.in_progress, k.stale, k.on_desired_commit, k.on_desired_version, k.deployed_versions)
         IS DISTINCT FROM (excluded.reconcilers, excluded.succeeded, excluded.failed, excluded.in_progress, excluded.stale,
                           excluded.on_desired_commit, excluded.on_desired_version, excluded.deployed_versions);
  RETURN cardinality(targets);
END $$;

REVOKE EXECUTE ON FUNCTION kalypso_count_target_states(bigint[]) FROM PUBLIC;

-- The targets a statement changed the counts or the desired state of, queued. (One trigger per
-- event: a trigger with transition tables has one event. An upsert fires the insert's and the update's.)
CREATE FUNCTION kalypso_queue_target_state_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'endpoint_status_count' THEN
    -- The targets on the endpoints whose counts changed.
    INSERT INTO target_state_count_queue (deployment_target_ids)
    SELECT array_agg(t.id)
      FROM (SELECT DISTINCT c.manifests_endpoint_id FROM changed c) e
      JOIN deployment_target t ON t.manifests_endpoint_id = e.manifests_endpoint_id
    HAVING count(*) > 0;
  ELSIF TG_TABLE_NAME = 'deployment_target' THEN
    INSERT INTO target_state_count_queue (deployment_target_ids)
    SELECT array_agg(DISTINCT c.id) FROM changed c HAVING count(*) > 0;
  ELSE
    -- deployment_assignment and target_commit: rows of a target.
    INSERT INTO target_state_count_queue (deployment_target_ids)
    SELECT array_agg(DISTINCT c.deployment_target_id) FROM changed c HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER endpoint_status_count_targets_insert AFTER INSERT ON endpoint_status_count
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER endpoint_status_count_targets_update AFTER UPDATE ON endpoint_status_count
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER endpoint_status_count_targets_delete AFTER DELETE ON endpoint_status_count
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
-- A target's current assignment and endpoint (its counts are its endpoint's).
CREATE TRIGGER deployment_target_state_counts_insert AFTER INSERT ON deployment_target
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER deployment_target_state_counts_update AFTER UPDATE ON deployment_target
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER deployment_target_state_counts_delete AFTER DELETE ON deployment_target
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
-- Which assignment (version) a commit belongs to on a target.
CREATE TRIGGER target_commit_state_counts_insert AFTER INSERT ON target_commit
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER target_commit_state_counts_update AFTER UPDATE ON target_commit
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER target_commit_state_counts_delete AFTER DELETE ON target_commit
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
-- An assignment's rollout (on the desired rollout or not).
CREATE TRIGGER deployment_assignment_state_counts_insert AFTER INSERT ON deployment_assignment
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER deployment_assignment_state_counts_update AFTER UPDATE ON deployment_assignment
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();
CREATE TRIGGER deployment_assignment_state_counts_delete AFTER DELETE ON deployment_assignment
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_target_state_counts();

INSERT INTO target_state_count SELECT * FROM target_state_sum;

-- Same columns and answers as schema/0032's: the counts are read from the rows kept, but for the
-- targets queued since the last recount, which are summed here.
CREATE OR REPLACE VIEW kalypso_environment_state AS
WITH queued AS (
  SELECT DISTINCT x.id FROM target_state_count_queue q, unnest(q.deployment_target_ids) AS x(id)
), counts AS (
  SELECT k.* FROM target_state_count k WHERE NOT EXISTS (SELECT 1 FROM queued q WHERE q.id = k.deployment_target_id)
  UNION ALL
  -- (= ANY of an array, not IN: the target ids are pushed into the sum and looked up by key; a
  -- semi-join would sum every target first.)
  SELECT s.* FROM target_state_sum s WHERE s.deployment_target_id = ANY(ARRAY(SELECT q.id FROM queued q))
)
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
  LEFT JOIN counts d ON d.deployment_target_id = t.id;

-- Cluster State / Reconcilers shows the failing first, then the stale, the in progress and the
-- succeeded, rank by rank (schema/0032), and finding a rank's reconcilers read all of them: at fleet
-- L a sequential scan of 240,000 current states, each judged stale or not, to keep the 4,800 that
-- report a failure (two thirds of the panel's time). The failing and the in progress are among the
-- reconcilers whose own report is not a success: a partial index finds those, and the panel asks
-- for them by the column added here (`reported_problem`, the condition the index is made for), so
-- a quiet fleet's page is read from the few thousand with a problem. (The index adds the status to
-- the columns a HOT update must leave alone: a transition of status is no longer a HOT update of
-- deployment_state — it writes a history row anyway — and a report of the same status still is.)
CREATE INDEX deployment_state_reported_problem ON deployment_state (host_id) WHERE status <> 'success';

CREATE OR REPLACE VIEW kalypso_host_state AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at AS host_last_seen_at,
       h.last_seen_at < cfg.stale_before AS host_offline,
       r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       (SELECT dv.version FROM deployment_assignment ca JOIN workload_version dv ON dv.id = ca.workload_version_id
         WHERE ca.id = t.current_assignment_id) AS desired_version,
       (SELECT ca.gitops_commit_id FROM deployment_assignment ca WHERE ca.id = t.current_assignment_id) AS desired_commit,
       (SELECT av.version FROM target_commit atc
          JOIN deployment_assignment aa ON aa.id = atc.assignment_id
          JOIN workload_version av ON av.id = aa.workload_version_id
         WHERE atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id) AS applied_version,
       s.gitops_commit_id AS applied_commit,
       kalypso_effective_status(s.status, s.last_seen_at, cfg.stale_before) AS status,
       s.status::text AS reported_status, s.status_message, s.observed_at AS status_since, s.last_seen_at,
       t.environment_order,
       -- The reconciler's own report is a failure or in progress (whether or not it is stale now).
       s.status <> 'success' AS reported_problem
  FROM deployment_state s
  CROSS JOIN kalypso_settings cfg
  JOIN host h ON h.id = s.host_id
  JOIN reconciler r ON r.id = s.reconciler_id
  JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id;
