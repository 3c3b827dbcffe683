-- Promotion order as a setting (README "Configuration": --environment-order). One rule, used by the
-- API and by every view: the environments listed in the setting come first, in that order; all
-- others follow in the order the hub first saw them.
--
-- "First seen" is the time of the write that created an environment (created_at, the database's
-- clock, so that every hub replica agrees). One write can create several environments at once; its
-- writer ranks them by the earliest record time naming each, then by where each first appears in
-- the write (first_seen_rank). The environment ids cannot serve: the writer inserts new rows in
-- name order so that concurrent writers lock them in one order (src/store/dimension-ids.ts), which
-- would make environments first seen together alphabetical by accident.
--
-- The hub writes its setting into hub_settings on start, as it does stale-after: replicas are
-- expected to run with the same order, and the last one to start wins.

ALTER TABLE hub_settings ADD COLUMN environment_order text[] NOT NULL DEFAULT '{}';

ALTER TABLE environment ADD COLUMN first_seen_rank integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN environment.first_seen_rank IS
  'Place among the environments created by the same write: by earliest record time, then position in the write.';

-- Environments created before this migration by one write share created_at but have no rank. The
-- nearest evidence of their records' times is their earliest assignment; where even that ties,
-- the id decides (as it did before).
UPDATE environment e
   SET first_seen_rank = ranked.rank
  FROM (SELECT e.id,
               (row_number() OVER (PARTITION BY e.created_at ORDER BY min(a.assigned_at) NULLS LAST, e.id) - 1)::integer AS rank
          FROM environment e
          LEFT JOIN deployment_target t ON t.environment_id = e.id
          LEFT JOIN deployment_assignment a ON a.deployment_target_id = t.id
         GROUP BY e.id, e.created_at) ranked
 WHERE ranked.id = e.id AND ranked.rank > 0;

-- Every environment with its place in the promotion order: configured_rank is its 1-based position
-- in the setting (NULL when not listed), environment_rank its 1-based position among all
-- environments. Environments are few, so numbering all of them on every read costs nothing.
-- (A LEFT JOIN: without a settings row the order is simply the order first seen.)
CREATE VIEW environment_in_order AS
SELECT e.id, e.name, array_position(s.environment_order, e.name) AS configured_rank,
       (row_number() OVER (ORDER BY array_position(s.environment_order, e.name) NULLS LAST,
                                    e.created_at, e.first_seen_rank, e.id))::integer AS environment_rank
  FROM environment e
  LEFT JOIN hub_settings s ON true;

-- The same columns as before (CREATE OR REPLACE keeps the views built on it); environment_rank is
-- now the position in the promotion order, never NULL.
CREATE OR REPLACE VIEW deployment_target_named AS
SELECT t.id, t.name, t.manifests_endpoint_id, t.current_assignment_id, t.workload_id, t.environment_id,
       e.name AS environment, e.environment_rank,
       w.name AS workload, app.name AS application, ws.name AS workspace
  FROM deployment_target t
  JOIN environment_in_order e ON e.id = t.environment_id
  JOIN workload w ON w.id = t.workload_id
  JOIN application app ON app.id = w.application_id
  JOIN workspace ws ON ws.id = app.workspace_id;

-- The setting replaces the rank column that nothing ever set.
ALTER TABLE environment DROP COLUMN promotion_rank;

-- environment_order keeps its type (bigint) and meaning (sort by it); its values are now 1, 2, …
CREATE OR REPLACE VIEW kalypso_deployment_target AS
SELECT t.id, t.manifests_endpoint_id, t.current_assignment_id, t.environment, t.workspace, t.application, t.workload,
       t.name AS deployment_target, t.environment_rank::bigint AS environment_order
  FROM deployment_target_named t;

-- New columns go at the end: CREATE OR REPLACE VIEW may only add columns there.
CREATE OR REPLACE VIEW kalypso_settings AS
SELECT stale_after, now() - stale_after AS stale_before, updated_at, environment_order FROM hub_settings;

-- As in 0004, plus environment_order, so that a host's environments can be listed in promotion order.
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
  LEFT JOIN deployment_assignment aa ON aa.deployment_target_id = t.id AND aa.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id;
