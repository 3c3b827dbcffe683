-- State transitions counted per minute, manifests endpoint and status, kept on write (issue 38).
-- Grafana's State transitions panel counted the history itself: 7 days of fleet L are 4.8 M rows,
-- 4.8 s at best and 10–14 s with the host variable at All. The counts are what it draws; a minute is
-- the finest step it draws them in.
--
-- Kept the way the other summaries are (schema/0012): the statement that writes history appends
-- its counts to a queue (a trigger, so that no writer can forget; appends never wait on each other,
-- where an upsert of the same minute by concurrent writers would serialize them to their commits),
-- and the summary refresh timer folds the queue in, a bounded part at a time. Readers read both, so
-- they see every committed write and never wait for a fold.
-- Counts are per endpoint, not per target: a report names its endpoint, and which target an
-- endpoint serves is read when the counts are (as kalypso_environment_history reads it).

CREATE TABLE transition_count (
  bucket                timestamptz NOT NULL,
  manifests_endpoint_id bigint NOT NULL,
  status                deployment_status NOT NULL,
  transitions           integer NOT NULL,
  PRIMARY KEY (bucket, manifests_endpoint_id, status)
);

CREATE TABLE transition_count_queue (
  bucket                timestamptz NOT NULL,
  manifests_endpoint_id bigint NOT NULL,
  status                deployment_status NOT NULL,
  transitions           integer NOT NULL
);

CREATE FUNCTION kalypso_queue_transition_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO transition_count_queue (bucket, manifests_endpoint_id, status, transitions)
  SELECT date_bin('1 minute', observed_at, 'epoch'), manifests_endpoint_id, status, count(*)
    FROM added
   GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;

-- On the partitioned table: every insert through it (the writer, the bench's fleet). Rows moved
-- between partitions by kalypso_ensure_history_partitions go to a partition directly and are not
-- counted twice.
CREATE TRIGGER deployment_state_history_transition_counts AFTER INSERT ON deployment_state_history
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_transition_counts();

-- Folds up to max_rows queued rows (NULL: all) into the counts; returns how many it folded. A row
-- queued meanwhile stays for the next fold (DELETE sees only what its snapshot sees), and two folds
-- at once cannot both take a row (the second skips what the first deleted).
CREATE FUNCTION kalypso_fold_transition_counts(max_rows integer DEFAULT NULL) RETURNS integer
LANGUAGE sql AS $$
  WITH moved AS (
    DELETE FROM transition_count_queue
     WHERE ctid = ANY (ARRAY(SELECT q.ctid FROM transition_count_queue q LIMIT $1))
    RETURNING *
  ), folded AS (
    INSERT INTO transition_count (bucket, manifests_endpoint_id, status, transitions)
    SELECT bucket, manifests_endpoint_id, status, sum(transitions) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (bucket, manifests_endpoint_id, status) DO UPDATE SET transitions = transition_count.transitions + excluded.transitions
  )
  SELECT count(*)::int FROM moved
$$;

-- The history written before this migration.
INSERT INTO transition_count (bucket, manifests_endpoint_id, status, transitions)
SELECT date_bin('1 minute', observed_at, 'epoch'), manifests_endpoint_id, status, count(*)
  FROM deployment_state_history
 GROUP BY 1, 2, 3;

-- Retention drops the counts of what it drops. Months are dropped whole; rows of the default
-- partition one by one, so their counts are taken off one by one.
CREATE OR REPLACE FUNCTION kalypso_drop_history_before(cutoff timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  partition record;
  dropped integer := 0;
  dropped_until timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('kalypso_history_partitions'));
  PERFORM kalypso_fold_transition_counts(NULL);
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
      dropped_until := greatest(dropped_until, partition.upper_bound);
    END IF;
  END LOOP;
  -- Every month ending by then is dropped, and default-partition rows before the cutoff go below.
  IF dropped_until IS NOT NULL THEN
    DELETE FROM transition_count WHERE bucket < dropped_until;
  END IF;
  WITH gone AS (
    DELETE FROM deployment_state_history_default WHERE observed_at < cutoff RETURNING observed_at, manifests_endpoint_id, status
  ), less AS (
    SELECT date_bin('1 minute', observed_at, 'epoch') AS bucket, manifests_endpoint_id, status, count(*)::int AS n FROM gone GROUP BY 1, 2, 3
  )
  UPDATE transition_count c SET transitions = c.transitions - less.n
    FROM less
   WHERE c.bucket = less.bucket AND c.manifests_endpoint_id = less.manifests_endpoint_id AND c.status = less.status;
  DELETE FROM transition_count WHERE transitions <= 0;
  RETURN dropped;
END $$;

REVOKE EXECUTE ON FUNCTION kalypso_drop_history_before(timestamptz) FROM PUBLIC;

-- What Grafana reads: transitions per minute by the status entered, of the deployment targets in
-- the environments, workspaces and applications asked for (NULL: any), folded or still queued.
-- Summed per minute before anything is named: joining the 309,000 minute-endpoint rows of fleet L to
-- the targets' names first took 0.9 s. An endpoint counts once however many targets it serves (a
-- transition is one, as the history holds it).
CREATE FUNCTION kalypso_transition_counts(since timestamptz, until timestamptz, environments text[] DEFAULT NULL,
                                          workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL)
RETURNS TABLE (bucket timestamptz, success bigint, failure bigint, in_progress bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  SELECT c.bucket,
         coalesce(sum(c.transitions) FILTER (WHERE c.status = 'success'), 0)::bigint,
         coalesce(sum(c.transitions) FILTER (WHERE c.status = 'failure'), 0)::bigint,
         coalesce(sum(c.transitions) FILTER (WHERE c.status = 'in_progress'), 0)::bigint
    FROM (SELECT q.bucket, q.manifests_endpoint_id, q.status, q.transitions FROM transition_count q WHERE q.bucket BETWEEN $1 AND $2
          UNION ALL
          SELECT q.bucket, q.manifests_endpoint_id, q.status, q.transitions FROM transition_count_queue q WHERE q.bucket BETWEEN $1 AND $2) c
   WHERE c.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM kalypso_deployment_target t
                                      WHERE ($3 IS NULL OR t.environment = ANY ($3))
                                        AND ($4 IS NULL OR t.workspace = ANY ($4))
                                        AND ($5 IS NULL OR t.application = ANY ($5)))
   GROUP BY c.bucket
$$;

REVOKE EXECUTE ON FUNCTION kalypso_transition_counts(timestamptz, timestamptz, text[], text[], text[]) FROM PUBLIC;
DO $$
BEGIN
  GRANT EXECUTE ON FUNCTION kalypso_transition_counts(timestamptz, timestamptz, text[], text[], text[]) TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'kalypso_transition_counts not granted to kalypso_reader (%): grant EXECUTE on it to your reader yourself', SQLERRM;
END $$;
