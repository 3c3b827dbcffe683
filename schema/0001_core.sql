-- Kalypso Observability Hub: the core data model.
--
-- Desired state (what CD pipelines assigned) and real state (what reconcilers applied) meet at
-- the manifests endpoint (repo/branch/path) and the GitOps commit id.
--
--   workspace ─< application ─< workload ─< deployment_target >─ environment
--                                  │              │  └─ manifests_endpoint ─┐
--                                  └< workload_version ─< deployment_assignment (target ← version @ commit)
--   host ─< reconciler ─── manifests_endpoint                                 │
--             ├── deployment_state          (current state, one row per reconciler)
--             └─< deployment_state_history  (append-only, every transition)
--
-- Reports read "latest" from deployment_state and deployment_target.current_assignment_id,
-- both maintained on write, so no query searches history for the newest row.

CREATE TYPE deployment_status AS ENUM ('success', 'failure', 'in_progress');

CREATE TABLE workspace (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE application (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspace,
  name         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);

CREATE TABLE workload (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  application_id bigint NOT NULL REFERENCES application,
  name           text NOT NULL,
  source_repo    text,
  source_branch  text,
  source_path    text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (application_id, name)
);

CREATE TABLE environment (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text NOT NULL UNIQUE,
  -- Position in the promotion chain when an operator set it; otherwise environments are
  -- ordered by first appearance.
  promotion_rank integer,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE manifests_endpoint (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Normal form: repo (no .git, no trailing /) + "/" + branch + "/" + path (no ./, no outer /).
  endpoint     text NOT NULL UNIQUE,
  storage_type text NOT NULL DEFAULT 'git',
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deployment_target (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workload_id           bigint NOT NULL REFERENCES workload,
  environment_id        bigint NOT NULL REFERENCES environment,
  name                  text NOT NULL,
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  -- The newest assignment (by assigned_at): the target's desired state. Set on write.
  current_assignment_id bigint,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workload_id, environment_id, name)
);
CREATE INDEX deployment_target_by_environment ON deployment_target (environment_id);
CREATE INDEX deployment_target_by_endpoint ON deployment_target (manifests_endpoint_id);
-- The discrepancy report lines targets up by workload and name across environments.
CREATE INDEX deployment_target_by_workload_name ON deployment_target (workload_id, name);

-- A deployment target with the names of everything it belongs to: reports name targets this way.
CREATE VIEW deployment_target_named AS
SELECT t.id, t.name, t.manifests_endpoint_id, t.current_assignment_id, t.workload_id, t.environment_id,
       e.name AS environment, e.promotion_rank AS environment_rank,
       w.name AS workload, app.name AS application, ws.name AS workspace
  FROM deployment_target t
  JOIN environment e ON e.id = t.environment_id
  JOIN workload w ON w.id = t.workload_id
  JOIN application app ON app.id = w.application_id
  JOIN workspace ws ON ws.id = app.workspace_id;

CREATE TABLE workload_version (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workload_id  bigint NOT NULL REFERENCES workload,
  version      text NOT NULL,
  build        text NOT NULL DEFAULT '',
  build_commit text,
  build_time   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workload_id, version, build)
);

CREATE TABLE deployment_assignment (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  deployment_target_id bigint NOT NULL REFERENCES deployment_target,
  workload_version_id  bigint NOT NULL REFERENCES workload_version,
  gitops_commit_id     text NOT NULL,
  assigned_at          timestamptz NOT NULL,
  received_at          timestamptz NOT NULL DEFAULT now(),
  -- The same descriptor delivered twice is one assignment.
  UNIQUE (deployment_target_id, gitops_commit_id)
);
CREATE INDEX deployment_assignment_by_target_time ON deployment_assignment (deployment_target_id, assigned_at DESC);
CREATE INDEX deployment_assignment_by_version ON deployment_assignment (workload_version_id);

ALTER TABLE deployment_target
  ADD CONSTRAINT deployment_target_current_assignment_fkey
  FOREIGN KEY (current_assignment_id) REFERENCES deployment_assignment;

CREATE TABLE host (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name          text NOT NULL UNIQUE,
  type          text NOT NULL DEFAULT 'k8s-cluster',
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  -- Newest report from any of its reconcilers (host clock, never later than receipt).
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE reconciler (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  host_id               bigint NOT NULL REFERENCES host,
  name                  text NOT NULL,
  type                  text NOT NULL,
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  first_seen_at         timestamptz NOT NULL DEFAULT now(),
  -- Set when the reconciler was deleted at its source; it then leaves current-state reports.
  removed_at            timestamptz,
  UNIQUE (host_id, name)
);
-- The rollout gate and environment state find a target's reconcilers by endpoint.
CREATE INDEX reconciler_by_endpoint ON reconciler (manifests_endpoint_id) WHERE removed_at IS NULL;

-- Current state: one row per active reconciler that has reported. Removing a reconciler deletes its
-- row here (its history stays), so reports read active reconcilers from this table alone.
CREATE TABLE deployment_state (
  reconciler_id         bigint PRIMARY KEY REFERENCES reconciler,
  -- Copied from the reconciler, so that reports aggregate this table without joining it.
  host_id               bigint NOT NULL REFERENCES host,
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  gitops_commit_id      text NOT NULL,
  status                deployment_status NOT NULL,
  status_message        text NOT NULL DEFAULT '',
  -- When this state was first observed: the transition into it (host clock).
  observed_at           timestamptz NOT NULL,
  -- The newest report that confirmed it (host clock) and when the hub received a report last.
  last_observed_at      timestamptz NOT NULL,
  last_received_at      timestamptz NOT NULL DEFAULT now(),
  -- The newest moment the reconciler is known alive: its clock, never later than receipt.
  -- Stale when older than the stale-after setting.
  last_seen_at          timestamptz GENERATED ALWAYS AS (least(last_observed_at, last_received_at)) STORED
);
CREATE INDEX deployment_state_by_endpoint_commit ON deployment_state (manifests_endpoint_id, gitops_commit_id);
CREATE INDEX deployment_state_by_host ON deployment_state (host_id);

-- Append-only: every state transition of every reconciler, including late (out-of-order) reports.
CREATE TABLE deployment_state_history (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  reconciler_id         bigint NOT NULL REFERENCES reconciler,
  manifests_endpoint_id bigint NOT NULL REFERENCES manifests_endpoint,
  gitops_commit_id      text NOT NULL,
  status                deployment_status NOT NULL,
  status_message        text NOT NULL DEFAULT '',
  observed_at           timestamptz NOT NULL,
  received_at           timestamptz NOT NULL DEFAULT now()
);
-- One row per report: a report delivered twice is stored once. Also serves per-reconciler history.
CREATE UNIQUE INDEX deployment_state_history_report
  ON deployment_state_history (reconciler_id, observed_at, gitops_commit_id, status);
CREATE INDEX deployment_state_history_by_time ON deployment_state_history (observed_at DESC, id DESC);
CREATE INDEX deployment_state_history_by_endpoint ON deployment_state_history (manifests_endpoint_id, observed_at DESC);
