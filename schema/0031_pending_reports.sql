-- Append first, derive after (issue 40). With --append-first, an export of real-state reports is
-- acknowledged once its reports are rows of this table: one INSERT, no row lock, no read of current
-- state, no trigger. The projector (src/store/projector.ts) folds them, in id order, into everything
-- derived from reports — history (transitions only), current state, reconcilers, hosts, commit
-- evidence and, through the queues its statements fill, summaries, rollouts and notifications —
-- and deletes them in the same transaction. So the rows left here are the projector's durable
-- cursor: a restart, or another hub taking over, resumes at the first row not yet folded. (A
-- cursor kept as a number would skip a row whose inserting transaction took its id before another
-- one's and committed after it.)
--
-- The same report delivered twice may be here twice: folding it twice changes nothing the second
-- time (the state rules, state-transitions.ts, and history's unique report key), so it is stored once.
-- No foreign keys: they would cost a check per row in the acknowledged write; the writer checks
-- every id of a batch in the same statement instead (write-pending-reports.ts).
CREATE TABLE pending_report (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reconciler_id         bigint NOT NULL,
  host_id               bigint NOT NULL,
  manifests_endpoint_id bigint NOT NULL,
  gitops_commit_id      text NOT NULL,
  status                deployment_status NOT NULL,
  status_message        text NOT NULL,
  observed_at           timestamptz NOT NULL,
  received_at           timestamptz NOT NULL,
  -- As the report said them; NULL when it did not (the host keeps its type, the reconciler its sender).
  host_type             text,
  reconciler_type       text NOT NULL,
  reported_by           text,
  details               jsonb
);
