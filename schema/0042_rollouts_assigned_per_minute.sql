-- Grafana's Rollouts per environment at fleet L (issue 38): rollouts assigned, counted per minute.
--
-- The panel counted the 'assigned' events of kalypso_rollout_event (schema/0026): for 7 days of
-- fleet L, 60,000 rollouts, each joined to its rollout row again, its target's names, its assignment
-- and its version — columns the count never shows — 253 ms at p50, 280 at p95.
--
-- kalypso_rollouts_assigned counts the rollouts of the range per minute and environment from the
-- rollout table and the targets chosen, named once: the same rollouts (every rollout has an
-- assignment and a version, so those joins dropped none). 77 ms. The panel sums its minutes
-- into Grafana's interval, as State transitions does (a minute is the finest step either draws).
-- test/grafana/dashboards.test.ts holds the panel to a count of the view's events.
CREATE FUNCTION kalypso_rollouts_assigned(since timestamptz, until timestamptz, environments text[] DEFAULT NULL,
                                          workspaces text[] DEFAULT NULL, applications text[] DEFAULT NULL)
RETURNS TABLE (minute timestamptz, environment text, environment_order integer, rollouts bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$
  -- The targets chosen, named once (12,000 at fleet L); each rollout then meets its target in one
  -- hash join. (Counted per target first and named after, each of the 60,000 went through the five
  -- joins of kalypso_deployment_target: 200 ms.)
  WITH chosen AS MATERIALIZED (
    SELECT t.id, t.environment, t.environment_order::int AS environment_order
      FROM kalypso_deployment_target t
     WHERE (environments IS NULL OR t.environment = ANY (environments))
       AND (workspaces IS NULL OR t.workspace = ANY (workspaces))
       AND (applications IS NULL OR t.application = ANY (applications))
  )
  SELECT date_bin('1 minute', o.assigned_at, 'epoch'), c.environment, c.environment_order, count(*)
    FROM rollout o
    JOIN chosen c ON c.id = o.deployment_target_id
   WHERE o.assigned_at BETWEEN since AND until
   GROUP BY 1, 2, 3
$$;

REVOKE EXECUTE ON FUNCTION kalypso_rollouts_assigned(timestamptz, timestamptz, text[], text[], text[]) FROM PUBLIC;
DO $$
BEGIN
  GRANT EXECUTE ON FUNCTION kalypso_rollouts_assigned(timestamptz, timestamptz, text[], text[], text[]) TO kalypso_reader;
EXCEPTION WHEN undefined_object OR insufficient_privilege THEN
  RAISE NOTICE 'kalypso_rollouts_assigned not granted to kalypso_reader (%): grant EXECUTE on it to your reader yourself', SQLERRM;
END $$;
