-- Telling people and systems (docs/notifications.md): commit statuses on GitHub, GitLab and Azure
-- DevOps, CloudEvents webhooks.
--
-- What is to be sent is written here in the same transaction as the judgement that causes it (an
-- outbox), and sent from here by one hub at a time (FOR UPDATE SKIP LOCKED); a restart, a second hub
-- or a database restart neither loses nor repeats a message. Nothing here is written by ingest: the
-- rollout refresh marks the endpoints it refreshed (notify_dirty_endpoint), and the notifier judges
-- the rollouts on them afterwards.

-- The repository of an endpoint, when a source named repo and branch apart (descriptors always do):
-- where the statuses about its commits are posted.
ALTER TABLE manifests_endpoint ADD COLUMN repo text;

-- Endpoints whose rollouts the rollout refresh recomputed: their subjects are due to be judged again.
-- Written only while a notifier runs (notify_notifier), so that nothing piles up without one.
CREATE TABLE notify_dirty_endpoint (
  manifests_endpoint_ids bigint[] NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE notify_notifier (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  alive_until timestamptz NOT NULL
);

-- A commit the hub reports on: an environment's GitOps commit (judged as the environment gate
-- judges it, posted on its manifests repositories) or a workload's source commit (judged over the
-- targets of the environment its version was assigned to, posted on the source repository), with
-- what the hub last said of it. One row per environment, kind, repository and commit.
CREATE TABLE notify_subject (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('gitops', 'source')),
  environment_id bigint NOT NULL REFERENCES environment (id),
  repo text NOT NULL,
  commit_id text NOT NULL,
  -- The GitOps commit the subject is judged on (a gitops subject's own; a source subject's newest assignment's).
  gitops_commit_id text NOT NULL,
  -- The endpoints whose changes make it due.
  manifests_endpoint_ids bigint[] NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  -- The last judgement: state (pending, success, failure), the description posted, and the counts.
  state text,
  description text,
  counts jsonb,
  judged_at timestamptz,
  -- When it is to be judged (again): its endpoints changed, or a subscriber counted live turns stale.
  due_at timestamptz,
  -- Changes are announced; a subject first found already settled (at a hub's start) is not.
  announce boolean NOT NULL,
  -- A newer commit of the same kind superseded it and it settled: no longer watched.
  retired_at timestamptz,
  UNIQUE (kind, environment_id, repo, commit_id)
);
CREATE INDEX notify_subject_watched ON notify_subject (environment_id, kind, repo) WHERE retired_at IS NULL;
CREATE INDEX notify_subject_due ON notify_subject (due_at) WHERE retired_at IS NULL AND due_at IS NOT NULL;
CREATE INDEX notify_subject_endpoints ON notify_subject USING gin (manifests_endpoint_ids) WHERE retired_at IS NULL;

-- What is to be sent, per channel (a commitStatus provider or a webhook of the notifications
-- file). `key` is what coalesces: an unsent message for the same channel and key is replaced by a
-- newer one (progress), so at most one waits per key; a sent one is kept as the record of delivery.
CREATE TABLE notify_outbox (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  channel text NOT NULL,
  key text NOT NULL,
  -- What to send, provider-neutral: a commit status (repo, commit, context, state, description,
  -- target URL) or a CloudEvent (its JSON, signed and sent as it is, on every attempt).
  message jsonb NOT NULL,
  -- A final state, sent as soon as it may be; progress waits for the coalescing interval.
  settled boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  not_before timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  -- A hub sending it holds it until then; past it, another hub may take it over.
  claimed_until timestamptz,
  sent_at timestamptz,
  -- Given up: a permanent refusal (any 4xx but a rate limit), with the provider's message in last_error.
  failed_at timestamptz,
  -- Never sent: a newer message for the same channel and key took its place.
  superseded_by bigint
);
-- Undone: neither sent, given up nor superseded.
CREATE INDEX notify_outbox_due ON notify_outbox (not_before, id) WHERE sent_at IS NULL AND failed_at IS NULL AND superseded_by IS NULL;
CREATE UNIQUE INDEX notify_outbox_waiting ON notify_outbox (channel, key)
  WHERE sent_at IS NULL AND failed_at IS NULL AND superseded_by IS NULL AND claimed_until IS NULL;
CREATE INDEX notify_outbox_undone_by_key ON notify_outbox (channel, key, id) WHERE sent_at IS NULL AND failed_at IS NULL AND superseded_by IS NULL;
-- The last sent per channel and key: when the next progress may go.
CREATE INDEX notify_outbox_sent_by_key ON notify_outbox (channel, key, sent_at) WHERE sent_at IS NOT NULL;

-- A channel told to wait (a provider's rate limit is its token's, not one message's): nothing of
-- it is sent before then.
CREATE TABLE notify_channel_pause (
  channel text PRIMARY KEY,
  until timestamptz NOT NULL,
  reason text NOT NULL
);

-- What the hub last said of drift and of hosts, for the drift and host events.
CREATE TABLE notify_drift (
  reconciler_id bigint NOT NULL,
  deployment_target_id bigint NOT NULL,
  drifting_since timestamptz NOT NULL,
  PRIMARY KEY (reconciler_id, deployment_target_id)
);
CREATE TABLE notify_host_offline (
  host_id bigint PRIMARY KEY REFERENCES host (id),
  last_seen_at timestamptz NOT NULL
);
-- Which of the watches above have been set up: the first look takes the fleet as it is, without
-- an event for every host already offline and every drift already standing.
CREATE TABLE notify_baseline (
  watch text PRIMARY KEY,
  taken_at timestamptz NOT NULL DEFAULT now()
);
