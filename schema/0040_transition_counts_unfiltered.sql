-- Grafana's State transitions panel at fleet L with its variables at All (issue 38).
--
-- kalypso_transition_counts (schema/0028) kept only the counts of endpoints that a chosen
-- environment's, workspace's and application's targets name: each count of the range was matched
-- to those endpoints. With every variable at All that is every target, and at fleet L 309,000
-- counts of 7 days were matched to 12,000 endpoints to keep them all: 300 ms, where summing the
-- same counts by minute alone takes 67 ms.
--
-- Now the endpoints chosen are counted first (a few milliseconds: one row per target). When they
-- are every endpoint the hub knows, no count can be left out and none is matched; otherwise the
-- counts are matched as before. Endpoints no target names (reconcilers reporting before any
-- descriptor) stay out either way, as before: they are in no environment.
-- test/store/transition-counts.test.ts holds both ways to a recount of the history by target.
CREATE OR REPLACE FUNCTION kalypso_transition_counts(since timestamptz, until timestamptz,
                                                     environments text[] DEFAULT NULL, workspaces text[] DEFAULT NULL,
                                                     applications text[] DEFAULT NULL)
RETURNS TABLE (bucket timestamptz, success bigint, failure bigint, in_progress bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $function$
DECLARE
  chosen bigint[];
BEGIN
  SELECT array_agg(DISTINCT t.manifests_endpoint_id) INTO chosen
    FROM kalypso_deployment_target t
   WHERE (environments IS NULL OR t.environment = ANY (environments))
     AND (workspaces IS NULL OR t.workspace = ANY (workspaces))
     AND (applications IS NULL OR t.application = ANY (applications));
  IF chosen IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE format($query$
    SELECT c.bucket,
           coalesce(sum(c.transitions) FILTER (WHERE c.status = 'success'), 0)::bigint,
           coalesce(sum(c.transitions) FILTER (WHERE c.status = 'failure'), 0)::bigint,
           coalesce(sum(c.transitions) FILTER (WHERE c.status = 'in_progress'), 0)::bigint
      FROM (SELECT q.bucket, q.manifests_endpoint_id, q.status, q.transitions FROM transition_count q WHERE q.bucket BETWEEN $1 AND $2
            UNION ALL
            SELECT q.bucket, q.manifests_endpoint_id, q.status, q.transitions FROM transition_count_queue q WHERE q.bucket BETWEEN $1 AND $2) c
     %s
     GROUP BY c.bucket$query$,
    -- Every endpoint: nothing to match.
    CASE WHEN cardinality(chosen) = (SELECT count(*) FROM manifests_endpoint) THEN ''
         ELSE 'WHERE c.manifests_endpoint_id IN (SELECT unnest($3))' END)
  USING since, until, chosen;
END $function$;
