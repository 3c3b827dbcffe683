-- History partitioned by month of observed_at (UTC), so that retention drops whole months instead
-- of deleting rows, and the newest month's indexes stay small and hot. A DEFAULT partition takes
-- reports from months that have no partition (clocks far in the past or future); when such a month
-- gets its partition, its rows move there. The hub creates partitions ahead of time and applies
-- the retention setting (src/store/history-partitions.ts), through the two functions below.
--
-- The unique report key already contains observed_at, so duplicates are still refused across the
-- whole table; the primary key becomes (id, observed_at) as partitioning requires.

CREATE FUNCTION kalypso_ensure_history_partitions(from_time timestamptz, to_time timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  month timestamp := date_trunc('month', from_time AT TIME ZONE 'UTC');
  last_month timestamp := date_trunc('month', to_time AT TIME ZONE 'UTC');
  lower_bound timestamptz;
  upper_bound timestamptz;
  partition_name text;
  created integer := 0;
BEGIN
  -- Replicas maintain partitions at the same moments; one at a time.
  PERFORM pg_advisory_xact_lock(hashtext('kalypso_history_partitions'));
  WHILE month <= last_month LOOP
    partition_name := 'deployment_state_history_' || to_char(month, '"y"YYYY"m"MM');
    IF to_regclass(partition_name) IS NULL THEN
      lower_bound := month AT TIME ZONE 'UTC';
      upper_bound := (month + interval '1 month') AT TIME ZONE 'UTC';
      -- Created apart and attached: ATTACH does not block writers of the other partitions.
      EXECUTE format('CREATE TABLE %I (LIKE deployment_state_history INCLUDING DEFAULTS)', partition_name);
      EXECUTE format('WITH moved AS (DELETE FROM deployment_state_history_default
                                      WHERE observed_at >= %L AND observed_at < %L RETURNING *)
                      INSERT INTO %I SELECT * FROM moved', lower_bound, upper_bound, partition_name);
      EXECUTE format('ALTER TABLE deployment_state_history ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     partition_name, lower_bound, upper_bound);
      created := created + 1;
    END IF;
    month := month + interval '1 month';
  END LOOP;
  RETURN created;
END $$;

-- Retention: drops the months that ended before the cutoff, and default-partition rows older
-- than it. Returns the number of months dropped.
CREATE FUNCTION kalypso_drop_history_before(cutoff timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  partition record;
  dropped integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('kalypso_history_partitions'));
  FOR partition IN
    SELECT c.relname,
           (make_timestamp(substr(c.relname, 27, 4)::int, substr(c.relname, 32, 2)::int, 1, 0, 0, 0)
            + interval '1 month') AT TIME ZONE 'UTC' AS upper_bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'deployment_state_history'::regclass
       AND c.relname ~ '^deployment_state_history_y[0-9]{4}m[0-9]{2}$'
  LOOP
    IF partition.upper_bound <= cutoff THEN
      EXECUTE format('DROP TABLE %I', partition.relname);
      dropped := dropped + 1;
    END IF;
  END LOOP;
  DELETE FROM deployment_state_history_default WHERE observed_at < cutoff;
  RETURN dropped;
END $$;

-- The view over history is bound to the table, not its name: it is dropped and created again.
DROP VIEW kalypso_environment_history;
ALTER TABLE deployment_state_history RENAME TO deployment_state_history_unpartitioned;

CREATE TABLE deployment_state_history (
  id                    bigint GENERATED ALWAYS AS IDENTITY,
  reconciler_id         bigint NOT NULL,
  manifests_endpoint_id bigint NOT NULL,
  gitops_commit_id      text NOT NULL,
  status                deployment_status NOT NULL,
  status_message        text NOT NULL DEFAULT '',
  observed_at           timestamptz NOT NULL,
  received_at           timestamptz NOT NULL DEFAULT now()
) PARTITION BY RANGE (observed_at);
CREATE TABLE deployment_state_history_default PARTITION OF deployment_state_history DEFAULT;

-- Months with history (the last two years of it; older rows stay in the default partition), this
-- month and the next.
SELECT kalypso_ensure_history_partitions(
         greatest(coalesce((SELECT min(observed_at) FROM deployment_state_history_unpartitioned), now()), now() - interval '2 years'),
         now() + interval '1 month');

INSERT INTO deployment_state_history OVERRIDING SYSTEM VALUE SELECT * FROM deployment_state_history_unpartitioned;
SELECT setval(pg_get_serial_sequence('deployment_state_history', 'id'),
              coalesce((SELECT max(id) FROM deployment_state_history_unpartitioned), 0) + 1, false);
DROP TABLE deployment_state_history_unpartitioned;

ALTER TABLE deployment_state_history ADD PRIMARY KEY (id, observed_at);
-- One row per report: a report delivered twice is stored once. Also serves per-reconciler history.
CREATE UNIQUE INDEX deployment_state_history_report
  ON deployment_state_history (reconciler_id, observed_at, gitops_commit_id, status);
CREATE INDEX deployment_state_history_by_time ON deployment_state_history (observed_at DESC, id DESC);
CREATE INDEX deployment_state_history_by_endpoint ON deployment_state_history (manifests_endpoint_id, observed_at DESC);

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

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'kalypso_reader') THEN
    GRANT SELECT ON kalypso_environment_history TO kalypso_reader;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'SELECT on kalypso_environment_history not granted to kalypso_reader (%)', SQLERRM;
END $$;
