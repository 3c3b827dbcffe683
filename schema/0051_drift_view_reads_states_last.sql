-- kalypso_drift reads each reconciler's state, and the versions, only for the rows it returns
-- (issue 38). Joined, every drift item was matched with its state before anything else: Grafana's
-- Drift table (1,000 rows of 21,212 at fleet L) hashed all 240,000 states first, 281 ms p50, and the
-- drift counts (which read no column of the state) 214 ms — over the 250 ms goal at p95. As scalar
-- subqueries, the columns of the state and the versions are computed after the sort and LIMIT
-- (PostgreSQL evaluates such costly output columns above the Sort), and not at all for a count:
-- in psql, the table 287-317 -> 192-247 ms, the counts 281-334 -> 140-143 ms.
--
-- What the join also did: a drift item whose reconciler's state is gone (removed since the last
-- summary refresh, about a second ago at most) was left out; it now shows, with no applied commit
-- or status, until the refresh deletes it. Same columns, in the same order.
CREATE OR REPLACE VIEW kalypso_drift AS
SELECT t.environment, t.environment_order, t.workspace, t.application, t.workload, t.deployment_target,
       h.name AS host, r.name AS reconciler, r.type AS reconciler_type,
       (SELECT dv.version FROM deployment_assignment ca JOIN workload_version dv ON dv.id = ca.workload_version_id
         WHERE ca.id = t.current_assignment_id) AS desired_version,
       (SELECT ca.gitops_commit_id FROM deployment_assignment ca WHERE ca.id = t.current_assignment_id) AS desired_commit,
       (SELECT av.version
          FROM deployment_state s
          JOIN target_commit atc ON atc.deployment_target_id = t.id AND atc.gitops_commit_id = s.gitops_commit_id
          JOIN deployment_assignment aa ON aa.id = atc.assignment_id
          JOIN workload_version av ON av.id = aa.workload_version_id
         WHERE s.reconciler_id = d.reconciler_id) AS applied_version,
       (SELECT s.gitops_commit_id FROM deployment_state s WHERE s.reconciler_id = d.reconciler_id) AS applied_commit,
       CASE WHEN d.stale THEN 'stale' ELSE (SELECT s.status::text FROM deployment_state s WHERE s.reconciler_id = d.reconciler_id) END AS status,
       (SELECT s.status_message FROM deployment_state s WHERE s.reconciler_id = d.reconciler_id) AS status_message,
       d.not_on_desired_rollout AS not_on_desired_commit, d.failing, d.stale,
       concat_ws(', ', CASE WHEN d.not_on_desired_rollout THEN 'not_on_desired_commit' END,
                       CASE WHEN d.failing THEN 'failing' END, CASE WHEN d.stale THEN 'stale' END) AS reasons,
       d.drifting_since,
       greatest(0, extract(epoch FROM now() - d.drifting_since))::bigint AS drifting_for_seconds
  FROM drift_item d
  JOIN kalypso_deployment_target t ON t.id = d.deployment_target_id
  JOIN host h ON h.id = d.host_id
  JOIN reconciler r ON r.id = d.reconciler_id;
