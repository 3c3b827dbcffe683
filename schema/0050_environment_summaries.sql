-- Each environment's counts kept, not aggregated at every request (issue 38). The environments
-- report summed the status counts of every endpoint of every environment and unnested every host's
-- environments at each request: 85 ms of one core at fleet L (12,000 targets, 29,320 endpoint counts,
-- 20,000 hosts) for an answer of three rows.
--
-- environment_summary holds what that report shows per environment: its targets, its hosts, and its
-- reconcilers by status. It is kept two ways:
-- - By difference, in the statement that changes what it sums: the endpoints' status counts and the
--   hosts' summaries. Both are written only by the summary refresh, under its lock, so an
--   environment's counts move with them in the same transaction.
-- - Recounted whole, for the environments of a target that was added or moved to another endpoint
--   or environment: a trigger queues them, and the summary refresh recounts them after its fold.
--   (Moved by difference, a target written while a refresh runs could be missed: the refresh reads
--   the targets as of its statement, and the target's writer reads the counts as of its own.)
--   Targets are never deleted.
-- A caller scoped to workspaces is still counted at the request (over its targets alone).

CREATE TABLE environment_summary (
  environment_id bigint PRIMARY KEY,
  targets        integer NOT NULL DEFAULT 0,
  hosts          integer NOT NULL DEFAULT 0,
  total          integer NOT NULL DEFAULT 0,
  succeeded      integer NOT NULL DEFAULT 0,
  failed         integer NOT NULL DEFAULT 0,
  in_progress    integer NOT NULL DEFAULT 0,
  stale          integer NOT NULL DEFAULT 0
);

CREATE TABLE environment_summary_queue (
  environment_ids bigint[] NOT NULL
);

-- Moves the reconciler counts of the environments of these endpoints by these amounts (one
-- element per endpoint and status; several may name the same endpoint). An endpoint counts once per
-- environment, however many of its targets are there (as the report always counted it).
CREATE FUNCTION kalypso_move_environment_counts(endpoint_ids bigint[], statuses text[], amounts integer[]) RETURNS void
LANGUAGE sql AS $function$
  WITH per_endpoint AS (
    -- Per endpoint first: each is looked up once among the targets.
    SELECT m.endpoint_id, sum(m.amount) AS total,
           coalesce(sum(m.amount) FILTER (WHERE m.status = 'success'), 0) AS succeeded,
           coalesce(sum(m.amount) FILTER (WHERE m.status = 'failure'), 0) AS failed,
           coalesce(sum(m.amount) FILTER (WHERE m.status = 'in_progress'), 0) AS in_progress,
           coalesce(sum(m.amount) FILTER (WHERE m.status = 'stale'), 0) AS stale
      FROM unnest(endpoint_ids, statuses, amounts) AS m(endpoint_id, status, amount)
     GROUP BY m.endpoint_id
  )
  INSERT INTO environment_summary AS s (environment_id, total, succeeded, failed, in_progress, stale)
  SELECT pair.environment_id, sum(m.total), sum(m.succeeded), sum(m.failed), sum(m.in_progress), sum(m.stale)
    FROM per_endpoint m
    JOIN LATERAL (SELECT DISTINCT t.environment_id FROM deployment_target t WHERE t.manifests_endpoint_id = m.endpoint_id) pair ON true
   -- (An update that leaves an endpoint's counts as they were moves nothing.)
   WHERE (m.total, m.succeeded, m.failed, m.in_progress, m.stale) <> (0, 0, 0, 0, 0)
   GROUP BY pair.environment_id
   -- In one order, whoever moves several environments' rows.
   ORDER BY pair.environment_id
  ON CONFLICT (environment_id) DO UPDATE
     SET total = s.total + excluded.total, succeeded = s.succeeded + excluded.succeeded, failed = s.failed + excluded.failed,
         in_progress = s.in_progress + excluded.in_progress, stale = s.stale + excluded.stale
$function$;

-- Moves the host counts of these environments by these amounts (one element per host and environment).
CREATE FUNCTION kalypso_move_environment_hosts(environment_ids bigint[], amounts integer[]) RETURNS void
LANGUAGE sql AS $function$
  INSERT INTO environment_summary AS s (environment_id, hosts)
  SELECT m.environment_id, sum(m.amount)
    FROM unnest(environment_ids, amounts) AS m(environment_id, amount)
   GROUP BY m.environment_id
  HAVING sum(m.amount) <> 0
   ORDER BY m.environment_id
  ON CONFLICT (environment_id) DO UPDATE SET hosts = s.hosts + excluded.hosts
$function$;

-- The endpoints' status counts changed: their environments' counts move by the difference.
CREATE FUNCTION kalypso_environment_counts_moved() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM kalypso_move_environment_counts(array_agg(n.manifests_endpoint_id), array_agg(n.status), array_agg(n.reconcilers))
       FROM new_rows n HAVING count(*) > 0;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM kalypso_move_environment_counts(array_agg(o.manifests_endpoint_id), array_agg(o.status), array_agg(-o.reconcilers))
       FROM old_rows o HAVING count(*) > 0;
  ELSE
    PERFORM kalypso_move_environment_counts(array_agg(c.manifests_endpoint_id), array_agg(c.status), array_agg(c.amount))
       FROM (SELECT n.manifests_endpoint_id, n.status, n.reconcilers AS amount FROM new_rows n
             UNION ALL
             SELECT o.manifests_endpoint_id, o.status, -o.reconcilers FROM old_rows o) c
     HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $function$;

CREATE TRIGGER endpoint_status_count_environments_insert AFTER INSERT ON endpoint_status_count
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_environment_counts_moved();
CREATE TRIGGER endpoint_status_count_environments_update AFTER UPDATE ON endpoint_status_count
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_environment_counts_moved();
CREATE TRIGGER endpoint_status_count_environments_delete AFTER DELETE ON endpoint_status_count
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_environment_counts_moved();

-- The hosts' summaries changed: each environment a host gained or lost moves by one. The refresh
-- recounts a host by deleting its row and inserting it again (statement triggers, with the rows as
-- transition tables); its updates of the counts leave the environments alone and fire nothing (an
-- update of environment_ids, which it never makes, moves them row by row).
CREATE FUNCTION kalypso_environment_hosts_moved() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM kalypso_move_environment_hosts(array_agg(e.id), array_agg(1))
       FROM new_rows n, unnest(n.environment_ids) AS e(id) HAVING count(*) > 0;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM kalypso_move_environment_hosts(array_agg(e.id), array_agg(-1))
       FROM old_rows o, unnest(o.environment_ids) AS e(id) HAVING count(*) > 0;
  ELSE
    PERFORM kalypso_move_environment_hosts(NEW.environment_ids || OLD.environment_ids,
                                           array_fill(1, ARRAY[cardinality(NEW.environment_ids)])
                                             || array_fill(-1, ARRAY[cardinality(OLD.environment_ids)]));
  END IF;
  RETURN NULL;
END $function$;

CREATE TRIGGER host_summary_environments_insert AFTER INSERT ON host_summary
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_environment_hosts_moved();
CREATE TRIGGER host_summary_environments_delete AFTER DELETE ON host_summary
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_environment_hosts_moved();
CREATE TRIGGER host_summary_environments_update AFTER UPDATE OF environment_ids ON host_summary
  FOR EACH ROW WHEN (OLD.environment_ids IS DISTINCT FROM NEW.environment_ids) EXECUTE FUNCTION kalypso_environment_hosts_moved();

-- A target added, or moved to another endpoint or environment: the environments on both sides are
-- recounted by the next summary refresh. (A writer sets a target's endpoint whenever it moves the
-- target to a newer assignment: only a change of it is a move.)
CREATE FUNCTION kalypso_queue_environment_summaries() RETURNS trigger
LANGUAGE plpgsql AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO environment_summary_queue (environment_ids)
    SELECT array_agg(DISTINCT n.environment_id) FROM new_rows n HAVING count(*) > 0;
  ELSE
    INSERT INTO environment_summary_queue (environment_ids) VALUES (ARRAY[NEW.environment_id, OLD.environment_id]);
  END IF;
  RETURN NULL;
END $function$;

CREATE TRIGGER deployment_target_environments_insert AFTER INSERT ON deployment_target
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION kalypso_queue_environment_summaries();
CREATE TRIGGER deployment_target_environments_update AFTER UPDATE OF manifests_endpoint_id, environment_id ON deployment_target
  FOR EACH ROW WHEN (OLD.manifests_endpoint_id IS DISTINCT FROM NEW.manifests_endpoint_id OR OLD.environment_id IS DISTINCT FROM NEW.environment_id)
  EXECUTE FUNCTION kalypso_queue_environment_summaries();

-- Recounts the queued environments whole (every one with `everything`), from the endpoints' status
-- counts and the hosts' summaries; how many. Called by the summary refresh, under its lock, after
-- its fold: the counts it sums are current in this transaction.
CREATE FUNCTION kalypso_count_environments(everything boolean DEFAULT false) RETURNS integer
LANGUAGE plpgsql AS $function$
DECLARE
  environments bigint[];
BEGIN
  WITH taken AS (DELETE FROM environment_summary_queue q RETURNING q.environment_ids)
  SELECT ARRAY(SELECT x FROM taken t, unnest(t.environment_ids) x
               UNION SELECT e.id FROM environment e WHERE everything) INTO environments;
  IF cardinality(environments) = 0 THEN
    RETURN 0;
  END IF;
  -- (Each statement reads with a snapshot taken after the queue rows were: whatever wrote them is seen.)
  WITH asked AS (
    SELECT DISTINCT x AS id FROM unnest(environments) x
  ), pairs AS (
    SELECT DISTINCT t.environment_id, t.manifests_endpoint_id FROM deployment_target t JOIN asked a ON a.id = t.environment_id
  ), counts AS (
    SELECT p.environment_id, sum(c.reconcilers)::int AS total,
           coalesce(sum(c.reconcilers) FILTER (WHERE c.status = 'success'), 0)::int AS succeeded,
           coalesce(sum(c.reconcilers) FILTER (WHERE c.status = 'failure'), 0)::int AS failed,
           coalesce(sum(c.reconcilers) FILTER (WHERE c.status = 'in_progress'), 0)::int AS in_progress,
           coalesce(sum(c.reconcilers) FILTER (WHERE c.status = 'stale'), 0)::int AS stale
      FROM pairs p JOIN endpoint_status_count c ON c.manifests_endpoint_id = p.manifests_endpoint_id
     GROUP BY p.environment_id
  ), targets AS (
    SELECT t.environment_id, count(*)::int AS targets FROM deployment_target t JOIN asked a ON a.id = t.environment_id GROUP BY 1
  ), hosts AS (
    SELECT e.id AS environment_id, count(*)::int AS hosts
      FROM (SELECT unnest(h.environment_ids) AS id FROM host_summary h) e JOIN asked a ON a.id = e.id
     GROUP BY 1
  )
  INSERT INTO environment_summary AS s (environment_id, targets, hosts, total, succeeded, failed, in_progress, stale)
  SELECT a.id, coalesce(t.targets, 0), coalesce(h.hosts, 0), coalesce(c.total, 0), coalesce(c.succeeded, 0),
         coalesce(c.failed, 0), coalesce(c.in_progress, 0), coalesce(c.stale, 0)
    FROM asked a
    LEFT JOIN counts c ON c.environment_id = a.id
    LEFT JOIN targets t ON t.environment_id = a.id
    LEFT JOIN hosts h ON h.environment_id = a.id
   ORDER BY a.id
  ON CONFLICT (environment_id) DO UPDATE
     SET targets = excluded.targets, hosts = excluded.hosts, total = excluded.total, succeeded = excluded.succeeded,
         failed = excluded.failed, in_progress = excluded.in_progress, stale = excluded.stale;
  RETURN cardinality(environments);
END $function$;

REVOKE EXECUTE ON FUNCTION kalypso_move_environment_counts(bigint[], text[], integer[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_move_environment_hosts(bigint[], integer[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION kalypso_count_environments(boolean) FROM PUBLIC;

-- What is there already.
SELECT kalypso_count_environments(true);
