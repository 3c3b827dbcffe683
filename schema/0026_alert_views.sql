-- What Grafana's alert rules and rollout annotations read (issue 35, "alerts that reach someone";
-- deploy/grafana/provisioning/alerting/, docs/alerts.md). Like every kalypso_* view, these are the
-- stable SQL contract: kalypso_reader may read them and no table.
--
-- Two thresholds become hub settings, written on start as stale-after is (src/store/hub-settings.ts):
-- how long a rollout may take to converge (--rollout-window) and how long a reporting reconciler may
-- run another commit than its target's desired rollout (--off-commit-after). Grafana cannot take them
-- from its own environment: it reads an alert rule's query exactly as the file has it (no variable is
-- expanded there, so that SQL macros survive), and a threshold in the rule would be a second copy.

ALTER TABLE hub_settings
  ADD COLUMN rollout_window interval NOT NULL DEFAULT '30 minutes',
  ADD COLUMN off_commit_after interval NOT NULL DEFAULT '1 hour';

-- New columns go at the end: CREATE OR REPLACE VIEW may only add columns there.
CREATE OR REPLACE VIEW kalypso_settings AS
SELECT stale_after, now() - stale_after AS stale_before, updated_at, environment_order, rollout_window, off_commit_after
  FROM hub_settings;

-- Every target's current rollout (its desired version, from its first commit), judged now as the
-- rollout gate judges it (kalypso_current_rollouts: failed as soon as one subscriber failed,
-- succeeded when all did, stale subscribers keep it in progress). commit_id is the rollout's first
-- commit, so that a later commit carrying the same version does not make it another rollout (the
-- hub's rollout view judges that commit or a later one). overdue: in progress for longer than the
-- rollout window and never converged — one that converged and is back in progress since lost a
-- subscriber to silence or to another commit, which the host and off-commit alerts name.
CREATE VIEW kalypso_current_rollout AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       me.endpoint AS manifests_endpoint, v.version, o.gitops_commit_id AS commit_id, o.assigned_at,
       live.status, live.subscribers, live.succeeded, live.failed, live.in_progress, live.stale,
       greatest(0, extract(epoch FROM now() - o.assigned_at))::bigint AS age_seconds,
       live.status = 'in_progress' AND o.converged_at IS NULL AND o.assigned_at < now() - cfg.rollout_window AS overdue
  FROM kalypso_settings cfg
  CROSS JOIN kalypso_current_rollouts(cfg.stale_before, NULL) live
  JOIN rollout o ON o.assignment_id = live.assignment_id
  JOIN kalypso_deployment_target t ON t.id = o.deployment_target_id
  JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
  JOIN deployment_assignment a ON a.id = o.assignment_id
  JOIN workload_version v ON v.id = a.workload_version_id;

-- Reconcilers that still report (not stale: a silent host is another alert's) but run a commit off
-- their target's desired rollout, since when: the later of the rollout's assignment and the start of
-- the state they report (one that moved off later, by hand or a rollback, is off since then). The
-- drift summaries say who is off (refreshed every second); this view says since when for that reason
-- alone, where kalypso_drift's drifting_since is the earliest of all its reasons.
CREATE VIEW kalypso_off_desired_commit AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, h.type AS host_type, r.name AS reconciler, r.type AS reconciler_type,
       dv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
       av.version AS applied_version, s.gitops_commit_id AS applied_commit, s.status::text AS status, s.status_message,
       greatest(cr.assigned_at, s.observed_at) AS off_since,
       greatest(0, extract(epoch FROM now() - greatest(cr.assigned_at, s.observed_at)))::bigint AS off_for_seconds,
       greatest(cr.assigned_at, s.observed_at) < now() - cfg.off_commit_after AS over_threshold
  FROM drift_item d
  CROSS JOIN kalypso_settings cfg
  JOIN kalypso_deployment_target t ON t.id = d.deployment_target_id
  JOIN deployment_state s ON s.reconciler_id = d.reconciler_id
  JOIN host h ON h.id = d.host_id
  JOIN reconciler r ON r.id = d.reconciler_id
  JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
  JOIN deployment_assignment cr ON cr.id = ca.rollout_id
  JOIN workload_version dv ON dv.id = ca.workload_version_id
  LEFT JOIN target_commit atc ON atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id
  LEFT JOIN deployment_assignment aa ON aa.id = atc.assignment_id
  LEFT JOIN workload_version av ON av.id = aa.workload_version_id
 WHERE d.not_on_desired_rollout AND s.last_seen_at >= cfg.stale_before;

-- Sources that poll (today the Azure Resource Graph pollers, reported_by 'arg:<name>'), from what
-- they stored: the reconcilers each reported last and when any of them was last confirmed. A poll
-- confirms every cluster Azure hears from, so a source whose newest confirmation is older than
-- stale-after has not polled successfully since (or sees no live cluster). Why a poll failed is not
-- stored: the AzureResourceGraph resource's Ready condition and /metrics (kalypso_arg_*) say it.
CREATE VIEW kalypso_polled_source AS
SELECT r.reported_by AS source,
       CASE split_part(r.reported_by, ':', 1) WHEN 'arg' THEN 'azure-resource-graph' ELSE split_part(r.reported_by, ':', 1) END AS source_type,
       substr(r.reported_by, strpos(r.reported_by, ':') + 1) AS source_name,
       count(*)::integer AS reconcilers, count(DISTINCT r.host_id)::integer AS hosts,
       max(s.last_seen_at) AS last_confirmed_at,
       max(s.last_seen_at) < min(cfg.stale_before) AS silent,
       greatest(0, extract(epoch FROM now() - max(s.last_seen_at)))::bigint AS silent_for_seconds
  FROM reconciler r
  JOIN deployment_state s ON s.reconciler_id = r.id
  CROSS JOIN kalypso_settings cfg
 WHERE r.reported_by IS NOT NULL AND r.removed_at IS NULL
 GROUP BY r.reported_by;

-- When rollouts happened, for dashboard annotations and the rollouts-over-time panel: each rollout's
-- assignment, its convergence (every subscriber applied it) and its first failure report, as the
-- rollout refresh recorded them (a few seconds behind the reports). One branch per event, so that a
-- time filter reaches each branch (the assignment's through rollout_by_time).
CREATE VIEW kalypso_rollout_event AS
SELECT e.time, e.event, t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       v.version, o.gitops_commit_id AS commit_id, o.assigned_at, o.subscribers,
       greatest(0, extract(epoch FROM e.time - o.assigned_at))::bigint AS seconds_after_assignment
  FROM (SELECT assignment_id, assigned_at AS time, 'assigned' AS event FROM rollout
        UNION ALL
        SELECT assignment_id, converged_at, 'converged' FROM rollout WHERE converged_at IS NOT NULL
        UNION ALL
        SELECT assignment_id, first_failure_at, 'failed' FROM rollout WHERE first_failure_at IS NOT NULL) e
  JOIN rollout o ON o.assignment_id = e.assignment_id
  JOIN kalypso_deployment_target t ON t.id = o.deployment_target_id
  JOIN deployment_assignment a ON a.id = o.assignment_id
  JOIN workload_version v ON v.id = a.workload_version_id;

DO $$
BEGIN
  GRANT SELECT ON kalypso_current_rollout, kalypso_off_desired_commit, kalypso_polled_source, kalypso_rollout_event TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'alert views not granted to kalypso_reader (%): grant SELECT on them to your reader yourself', SQLERRM;
END $$;
