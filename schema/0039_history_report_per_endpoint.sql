-- A reconciler's reports of two endpoints at the same instant are two rows of history.
--
-- deployment_state_history_report (schema/0001, 0006) made a report unique by reconciler, time,
-- commit and status, so that a report delivered twice is stored once. A reconciler that reports
-- the same commit and status on two endpoints at the same instant (it moved between environments
-- within one reconciliation; a batch carries both) lost the second row to ON CONFLICT DO NOTHING —
-- whichever arrived second — while the current state took the one the fixed tie order chooses
-- (src/store/state-transitions.ts). When that was the lost one, the rollout refresh counted the
-- reconciler on an endpoint its history never named: a removal then queued the endpoints of its
-- history and left that rollout's subscriber count one too high until a later report reached it
-- (test/store/rollouts-follow-changes.test.ts, seed 223654, step 32).
--
-- The endpoint joins the key: a repeated delivery is still stored once, and both states of the
-- same instant are kept, as the rules say. (The status message stays out: it is free text of any
-- length, too long for a btree key at times, and no rollout or summary reads it.)
-- On a partitioned table the index is built on every partition, in this transaction: at fleet L
-- (4.8 million rows) 3.7 s on the 2-core bench machine.
DROP INDEX deployment_state_history_report;
CREATE UNIQUE INDEX deployment_state_history_report
  ON deployment_state_history (reconciler_id, observed_at, gitops_commit_id, status, manifests_endpoint_id);
