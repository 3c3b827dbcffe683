-- Stable, read-only views for dashboards (Grafana) and ad-hoc SQL, and the kalypso_reader role that
-- may read them and nothing else. The tables stay free to change; these views are the contract
-- (README "Grafana and SQL"), with the same meaning as the /api/v1 reports:
--
--   kalypso_settings                  the stale-after setting the hub runs with
--   kalypso_environment_state         one row per deployment target: desired vs deployed, counts
--   kalypso_environment_discrepancy   one row per workload/target/environment, pivotable
--   kalypso_host_state                one row per reconciler (× the targets on its endpoint)
--   kalypso_environment_history       one row per state transition (real state history)
--   kalypso_assignment_history        one row per assignment (desired state history)
--   kalypso_drift                     one row per reconciler not where its target wants it
--   kalypso_rollout_state             one row per target × subscriber, judged as the rollout gate does
--
-- Statuses are `success`, `failure`, `in_progress` and `stale` (a reconciler silent for longer than
-- stale-after), as in the API.

-- The hub writes its stale-after setting here on start, so views judge staleness as the API does.
CREATE TABLE hub_settings (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  stale_after interval NOT NULL DEFAULT interval '15 minutes',
  updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO hub_settings DEFAULT VALUES;

CREATE VIEW kalypso_settings AS
SELECT stale_after, now() - stale_after AS stale_before, updated_at FROM hub_settings;

-- Environments in promotion order: the operator's rank, else order of first appearance (as the API).
CREATE VIEW kalypso_deployment_target AS
SELECT t.id, t.manifests_endpoint_id, t.current_assignment_id, t.environment, t.workspace, t.application, t.workload,
       t.name AS deployment_target,
       CASE WHEN t.environment_rank IS NULL THEN 2147483648 + t.environment_id ELSE t.environment_rank END AS environment_order
  FROM deployment_target_named t;

CREATE VIEW kalypso_environment_state AS
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
            WHEN a.id IS NOT NULL AND d.on_desired_commit < d.reconcilers THEN 'out_of_date'
            ELSE 'success' END AS status
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
           -- A deployed commit is named by the version assigned with it, else by its short id.
           string_agg(DISTINCT coalesce(v.version, left(s.gitops_commit_id, 12)), ', ') AS deployed_versions
      FROM deployment_state s
      CROSS JOIN kalypso_settings cfg
      LEFT JOIN deployment_assignment sa ON sa.deployment_target_id = t.id AND sa.gitops_commit_id = s.gitops_commit_id
      LEFT JOIN workload_version v ON v.id = sa.workload_version_id
     WHERE s.manifests_endpoint_id = t.manifests_endpoint_id
  ) d ON true;

-- "Environment discrepancies" for any environments: Grafana pivots environment into columns. Each
-- row also says whether its desired version differs from the previous environment in promotion
-- order that has the same workload and target.
CREATE VIEW kalypso_environment_discrepancy AS
SELECT workspace, application, workload, deployment_target, environment, environment_order,
       desired_version, desired_commit, deployed_versions, status,
       lag(environment) OVER chain AS previous_environment,
       lag(desired_version) OVER chain AS previous_desired_version,
       (lag(environment) OVER chain IS NOT NULL AND desired_version IS DISTINCT FROM lag(desired_version) OVER chain) AS differs_from_previous
  FROM kalypso_environment_state
WINDOW chain AS (PARTITION BY workspace, application, workload, deployment_target ORDER BY environment_order);

CREATE VIEW kalypso_host_state AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at AS host_last_seen_at,
       h.last_seen_at < cfg.stale_before AS host_offline,
       r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit,
       CASE WHEN s.last_seen_at < cfg.stale_before THEN 'stale' ELSE s.status::text END AS status,
       s.status::text AS reported_status, s.status_message, s.observed_at AS status_since, s.last_seen_at
  FROM deployment_state s
  CROSS JOIN kalypso_settings cfg
  JOIN host h ON h.id = s.host_id
  JOIN reconciler r ON r.id = s.reconciler_id
  JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN deployment_assignment aa ON aa.deployment_target_id = t.id AND aa.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id;

-- Every state transition, named by the targets on its endpoint (none when no descriptor names it).
CREATE VIEW kalypso_environment_history AS
SELECT x.observed_at, x.received_at, t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       x.gitops_commit_id AS commit_id, v.version, x.status::text AS status, x.status_message
  FROM deployment_state_history x
  JOIN reconciler r ON r.id = x.reconciler_id
  JOIN host h ON h.id = r.host_id
  JOIN manifests_endpoint me ON me.id = x.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = x.manifests_endpoint_id
  LEFT JOIN deployment_assignment a ON a.deployment_target_id = t.id AND a.gitops_commit_id = x.gitops_commit_id
  LEFT JOIN workload_version v ON v.id = a.workload_version_id;

CREATE VIEW kalypso_assignment_history AS
SELECT a.assigned_at, a.received_at, t.environment, t.workspace, t.application, t.workload, t.deployment_target,
       me.endpoint AS manifests_endpoint, v.version, v.build, v.build_commit, v.build_time, a.gitops_commit_id AS commit_id,
       a.id = t.current_assignment_id AS is_current
  FROM deployment_assignment a
  JOIN kalypso_deployment_target t ON t.id = a.deployment_target_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  JOIN workload_version v ON v.id = a.workload_version_id;

-- The API's drift report as rows: on another commit than the target's desired one, failing, or
-- stale; drifting since the earliest moment any of these held.
CREATE VIEW kalypso_drift AS
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
  LEFT JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN deployment_assignment aa ON aa.deployment_target_id = t.id AND aa.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id
  CROSS JOIN LATERAL (
    SELECT coalesce(s.gitops_commit_id <> ca.gitops_commit_id, false) AS not_on_desired_commit,
           s.status = 'failure' AS failing,
           s.last_seen_at < cfg.stale_before AS stale,
           -- least() skips NULLs: the reasons that do not hold.
           least(CASE WHEN s.gitops_commit_id <> ca.gitops_commit_id THEN greatest(ca.assigned_at, s.observed_at) END,
                 CASE WHEN s.status = 'failure' THEN s.observed_at END,
                 CASE WHEN s.last_seen_at < cfg.stale_before THEN s.last_seen_at END) AS drifting_since
  ) f
 WHERE f.not_on_desired_commit OR f.failing OR f.stale;

-- Each target's current desired commit, per subscriber (reconciler pulling the endpoint), judged
-- as the rollout gate judges it: stale never counts as success; a subscriber on another commit
-- is in progress unless that commit was assigned later on the same endpoint (it moved past).
-- A target without subscribers has one row with status `no_subscribers`.
CREATE VIEW kalypso_rollout_state AS
SELECT t.environment, t.workspace, t.application, t.workload, t.deployment_target, me.endpoint AS manifests_endpoint,
       dv.version, ca.gitops_commit_id AS commit_id, ca.assigned_at,
       h.name AS host, r.name AS reconciler, s.gitops_commit_id AS applied_commit,
       CASE WHEN s.reconciler_id IS NULL THEN 'no_subscribers'
            WHEN s.last_seen_at < cfg.stale_before THEN 'stale'
            WHEN s.gitops_commit_id = ca.gitops_commit_id OR coalesce(later.assigned_after, false) THEN s.status::text
            ELSE 'in_progress' END AS status,
       s.status_message, s.last_seen_at
  FROM kalypso_deployment_target t
  JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  JOIN workload_version dv ON dv.id = ca.workload_version_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  CROSS JOIN kalypso_settings cfg
  LEFT JOIN deployment_state s ON s.manifests_endpoint_id = t.manifests_endpoint_id
  LEFT JOIN host h ON h.id = s.host_id
  LEFT JOIN reconciler r ON r.id = s.reconciler_id
  LEFT JOIN LATERAL (
    SELECT min(a.assigned_at) > ca.assigned_at AS assigned_after
      FROM deployment_assignment a
      JOIN deployment_target o ON o.id = a.deployment_target_id
     WHERE o.manifests_endpoint_id = t.manifests_endpoint_id AND a.gitops_commit_id = s.gitops_commit_id
  ) later ON s.gitops_commit_id IS DISTINCT FROM ca.gitops_commit_id;

-- The read-only role for Grafana and analysts: the views above and nothing else. Creating a role
-- needs CREATEROLE; a hub whose database user lacks it says so and carries on (an administrator
-- can run the same statements). Grant it to a login: `GRANT kalypso_reader TO grafana;`.
DO $$
DECLARE
  view_name text;
BEGIN
  BEGIN
    CREATE ROLE kalypso_reader NOLOGIN;
  EXCEPTION
    WHEN duplicate_object OR unique_violation THEN NULL;
    WHEN insufficient_privilege THEN
      RAISE NOTICE 'kalypso_reader not created (%): grant SELECT on the kalypso_* views to your reader yourself', SQLERRM;
      RETURN;
  END;
  BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO kalypso_reader', current_schema());
  EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'USAGE on schema % not granted to kalypso_reader (%)', current_schema(), SQLERRM;
  END;
  FOREACH view_name IN ARRAY ARRAY['kalypso_settings', 'kalypso_environment_state', 'kalypso_environment_discrepancy',
                                   'kalypso_host_state', 'kalypso_environment_history', 'kalypso_assignment_history',
                                   'kalypso_drift', 'kalypso_rollout_state'] LOOP
    EXECUTE format('GRANT SELECT ON %I TO kalypso_reader', view_name);
  END LOOP;
END $$;
