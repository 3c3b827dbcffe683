-- Grafana's slow panels at fleet L (issue 38; docs/benchmarks/consumers-at-fleet-l.md): the views
-- keep their columns and meaning; only how they are read changes.

-- Deployment history names each history row's target by its endpoint. Through
-- kalypso_deployment_target (whose environments are ranked by a window function, a subquery the
-- planner keeps whole) it could not look a target up by endpoint: the newest 1,000 rows were each
-- compared with the 12,000 targets materialized. Named here from the tables, each join a lookup by a
-- key, so the newest rows are named one by one. The environment's rank is not a column of this view.
CREATE OR REPLACE VIEW kalypso_environment_history AS
SELECT x.observed_at, x.received_at, e.name AS environment, ws.name AS workspace, app.name AS application, w.name AS workload,
       dt.name AS deployment_target, h.name AS host, r.name AS reconciler, r.type AS reconciler_type, me.endpoint AS manifests_endpoint,
       x.gitops_commit_id AS commit_id, v.version, x.status::text AS status, x.status_message
  FROM deployment_state_history x
  JOIN reconciler r ON r.id = x.reconciler_id
  JOIN host h ON h.id = r.host_id
  JOIN manifests_endpoint me ON me.id = x.manifests_endpoint_id
  LEFT JOIN deployment_target dt ON dt.manifests_endpoint_id = x.manifests_endpoint_id
  -- Every target has its environment and workload, every workload its application and workspace
  -- (foreign keys): these outer joins find a row exactly when the target was found.
  LEFT JOIN environment e ON e.id = dt.environment_id
  LEFT JOIN workload w ON w.id = dt.workload_id
  LEFT JOIN application app ON app.id = w.application_id
  LEFT JOIN workspace ws ON ws.id = app.workspace_id
  LEFT JOIN target_commit tc ON tc.deployment_target_id = dt.id AND tc.gitops_commit_id = x.gitops_commit_id
  LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
  LEFT JOIN workload_version v ON v.id = a.workload_version_id;

-- The current desired commit beside each deployed commit's counts, so that a target's counts can be
-- summed for every target at once (below).
CREATE OR REPLACE VIEW target_deployment AS
SELECT t.id AS deployment_target_id, c.gitops_commit_id, v.version, coalesce(a.rollout_id = ca.rollout_id, false) AS on_desired,
       c.status, c.reconcilers, ca.gitops_commit_id AS desired_commit
  FROM deployment_target t
  JOIN endpoint_status_count c ON c.manifests_endpoint_id = t.manifests_endpoint_id
  LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  LEFT JOIN target_commit tc ON tc.deployment_target_id = t.id AND tc.gitops_commit_id = c.gitops_commit_id
  LEFT JOIN deployment_assignment a ON a.id = tc.assignment_id
  LEFT JOIN workload_version v ON v.id = a.workload_version_id;

-- A target's counts were a LATERAL subquery, run once per target: 12,000 runs of a dozen index
-- lookups each at fleet L for every panel, variable and stat that reads this view. Summed here for
-- every target in one grouped pass over the counts kept on write; a query of a few targets pays for
-- the pass too (tens of milliseconds at fleet L), a query of all of them no longer pays per target.
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
  LEFT JOIN (
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
     GROUP BY x.deployment_target_id
  ) d ON d.deployment_target_id = t.id;

-- A host's environments, in promotion order, were a subquery per host over environment_in_order
-- (environments ranked by a window function): 20,000 rankings for the Hosts panel at fleet L. The
-- ranking is read once here and each host picks its environments from it.
CREATE OR REPLACE VIEW kalypso_host_summary AS
SELECT h.name AS host, h.type AS host_type, h.last_seen_at, h.last_seen_at < cfg.stale_before AS offline,
       coalesce(hs.total, 0) AS reconcilers, coalesce(hs.succeeded, 0) AS succeeded, coalesce(hs.failed, 0) AS failed,
       coalesce(hs.in_progress, 0) AS in_progress, coalesce(hs.stale, 0) AS stale, coalesce(hs.drifting, 0) AS drifting,
       (SELECT string_agg(o.name, ', ' ORDER BY o.rank) FROM unnest(ranked.ids, ranked.names) WITH ORDINALITY AS o(id, name, rank)
         WHERE o.id = ANY(hs.environment_ids)) AS environments
  FROM host h
  CROSS JOIN kalypso_settings cfg
  CROSS JOIN (SELECT array_agg(e.id ORDER BY e.environment_rank) AS ids, array_agg(e.name ORDER BY e.environment_rank) AS names
                FROM environment_in_order e) ranked
  LEFT JOIN host_summary hs ON hs.host_id = h.id;

-- The Cluster State dashboard's Reconcilers table shows the first 1,000 of a status's reconcilers by
-- host (a quiet fleet L has 4,700 failing). The versions desired and applied are looked up per row
-- here, not joined: PostgreSQL leaves such lookups in a query's select list until after its sort and
-- limit, so they are made for the rows shown, not for every row sorted (and not at all by a query
-- that does not ask for them, such as the host variable's).
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
       t.environment_order
  FROM deployment_state s
  CROSS JOIN kalypso_settings cfg
  JOIN host h ON h.id = s.host_id
  JOIN reconciler r ON r.id = s.reconciler_id
  JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
  LEFT JOIN kalypso_deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id;
