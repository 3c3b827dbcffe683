-- The rollout gate over many endpoints at once (issue 38). An environment gate at fleet L asks about
-- 4,000 endpoints; kalypso_gate, called once per endpoint, looked up the commits that came after C
-- once per endpoint (each call planned anew: a SQL function with its own search_path is never
-- inlined) — 4.5 s for the 80,000 subscribers of one environment. Here the commits that came after C
-- are looked up once per branch (an endpoint's group, endpoint_peer), and every subscriber is judged
-- in one statement. kalypso_gate keeps its meaning and now reads this, so the rule is written once.
--
-- Each lookup is a LATERAL subquery kept apart with OFFSET 0: the planner cannot see how many
-- endpoints are asked about, and, allowed to flatten them, it hashed every endpoint and succession
-- of the fleet to answer for one (80 ms instead of 3).
CREATE FUNCTION kalypso_gate_endpoints(endpoint_ids bigint[], gate_commit text, stale_before timestamptz)
RETURNS TABLE (endpoint_id bigint, reconciler_id bigint, host_id bigint, applied_commit text, status text, reported_status text,
               status_message text, observed_at timestamptz, last_seen_at timestamptz, moved_past boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 100 AS $$
  WITH RECURSIVE asked AS MATERIALIZED (
    -- An endpoint without a branch is a group of its own (endpoint_peer).
    SELECT me.id, coalesce(me.branch, me.id::text) AS grp
      FROM (SELECT DISTINCT x.id FROM unnest($1) AS x(id)) x
     CROSS JOIN LATERAL (SELECT me.id, me.branch FROM manifests_endpoint me WHERE me.id = x.id OFFSET 0) me
  ), member AS MATERIALIZED (
    -- Every endpoint of each asked endpoint's group, through one of its members.
    SELECT r.grp, p.peer_id AS id
      FROM (SELECT a.grp, min(a.id) AS rep FROM asked a GROUP BY a.grp) r
     CROSS JOIN LATERAL (SELECT p.peer_id FROM endpoint_peer p WHERE p.endpoint_id = r.rep OFFSET 0) p
  ), later(grp, c) AS (
    -- The commits witnessed to have come after C on any endpoint of the group, transitively.
    SELECT m.grp, s.to_commit
      FROM member m
     CROSS JOIN LATERAL (SELECT s.to_commit FROM commit_succession s WHERE s.manifests_endpoint_id = m.id AND s.from_commit = $2 OFFSET 0) s
    UNION
    SELECT l.grp, s.to_commit
      FROM later l
      JOIN member m ON m.grp = l.grp
     CROSS JOIN LATERAL (SELECT s.to_commit FROM commit_succession s WHERE s.manifests_endpoint_id = m.id AND s.from_commit = l.c OFFSET 0) s
  ), moved AS MATERIALIZED (
    SELECT DISTINCT l.grp, l.c FROM later l WHERE l.c <> $2
  )
  SELECT s.manifests_endpoint_id, s.reconciler_id, s.host_id, s.gitops_commit_id,
         CASE WHEN s.last_seen_at < $3 THEN 'stale'
              WHEN s.gitops_commit_id = $2 OR p.moved_past THEN s.status::text
              ELSE 'in_progress' END,
         s.status::text, s.status_message, s.observed_at, s.last_seen_at, p.moved_past
    FROM asked a
   CROSS JOIN LATERAL (SELECT * FROM deployment_state s WHERE s.manifests_endpoint_id = a.id OFFSET 0) s
   CROSS JOIN LATERAL (SELECT s.gitops_commit_id <> $2
                              AND EXISTS (SELECT 1 FROM moved l WHERE l.grp = a.grp AND l.c = s.gitops_commit_id) AS moved_past) p
$$;

REVOKE EXECUTE ON FUNCTION kalypso_gate_endpoints(bigint[], text, timestamptz) FROM PUBLIC;

-- One endpoint, as before: the same judgement.
CREATE OR REPLACE FUNCTION kalypso_gate(endpoint_id bigint, gate_commit text, stale_before timestamptz)
RETURNS TABLE (reconciler_id bigint, host_id bigint, applied_commit text, status text, reported_status text,
               status_message text, observed_at timestamptz, last_seen_at timestamptz, moved_past boolean)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 50 AS $$
  SELECT g.reconciler_id, g.host_id, g.applied_commit, g.status, g.reported_status, g.status_message, g.observed_at,
         g.last_seen_at, g.moved_past
    FROM kalypso_gate_endpoints(ARRAY[$1], $2, $3) g
$$;
