-- The environment gate from the summaries' counts (issue 38): prod of fleet L has 80,000
-- subscribers, and every answer judged each of them (kalypso_gate_endpoints) to count them and to
-- find the few thousand holding the rollout up — 500 ms at p95, whatever the page.
--
-- The summary refresh already keeps, per endpoint, applied commit and status, how many reconcilers
-- there are (endpoint_status_count, schema/0012), and per reconciler where it is counted
-- (summary_reconciler). A subscriber's gate status is a function of exactly those — its applied
-- commit (C, a commit after C on the branch, or another), its reported status — and of whether it
-- is stale, which depends on the moment asked, not on writes. So the gate reads the counts of
-- each (endpoint, commit, status), judges each such class once, and re-judges from
-- deployment_state only the reconcilers whose counted place may differ from their state at the cut
-- asked for (src/store/reports/counted-gate.ts): those queued since the last refresh, those counted
-- live whose last sign of life is older than the cut, and every one counted stale. Everything
-- else cannot differ (the argument is in counted-gate.ts).
--
-- Here: the gate's rule and the commits after C once each, shared by kalypso_gate_endpoints and
-- the counted gate, and an index that finds a class's reconcilers (the page of holders).

-- A subscriber's status at the gate: stale when silent past the cut; its own status on C or on a
-- commit that came after C; in progress on any other commit. (SQL, immutable, no settings: inlined.)
CREATE FUNCTION kalypso_gate_status(stale boolean, on_commit_or_later boolean, reported text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN stale THEN 'stale' WHEN on_commit_or_later THEN reported ELSE 'in_progress' END
$$;

-- The commits witnessed to have come after gate_commit on the branch of each endpoint (any endpoint
-- of its group, transitively), gate_commit itself left out. As in schema/0027: each branch's
-- commits are looked up once, however many of its endpoints are asked.
CREATE FUNCTION kalypso_gate_later(endpoint_ids bigint[], gate_commit text)
RETURNS TABLE (endpoint_id bigint, later_commit text)
LANGUAGE sql STABLE SECURITY DEFINER ROWS 100 SET search_path = "$user", public AS $$
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
  SELECT a.id, m.c FROM asked a JOIN moved m ON m.grp = a.grp
$$;

REVOKE EXECUTE ON FUNCTION kalypso_gate_later(bigint[], text) FROM PUBLIC;

-- The same judgement as schema/0027's, its two parts now shared with the counted gate.
CREATE OR REPLACE FUNCTION kalypso_gate_endpoints(endpoint_ids bigint[], gate_commit text, stale_before timestamptz)
RETURNS TABLE (endpoint_id bigint, reconciler_id bigint, host_id bigint, applied_commit text, status text, reported_status text,
               status_message text, observed_at timestamptz, last_seen_at timestamptz, moved_past boolean)
LANGUAGE sql STABLE SECURITY DEFINER ROWS 100 SET search_path = "$user", public AS $$
  WITH asked AS MATERIALIZED (
    SELECT DISTINCT x.id FROM unnest($1) AS x(id)
  ), later AS MATERIALIZED (
    SELECT l.endpoint_id, l.later_commit FROM kalypso_gate_later($1, $2) l
  )
  SELECT s.manifests_endpoint_id, s.reconciler_id, s.host_id, s.gitops_commit_id,
         kalypso_gate_status(s.last_seen_at < $3, s.gitops_commit_id = $2 OR p.moved_past, s.status::text),
         s.status::text, s.status_message, s.observed_at, s.last_seen_at, p.moved_past
    FROM asked a
   CROSS JOIN LATERAL (SELECT * FROM deployment_state s WHERE s.manifests_endpoint_id = a.id OFFSET 0) s
   CROSS JOIN LATERAL (SELECT s.gitops_commit_id <> $2
                              AND EXISTS (SELECT 1 FROM later l WHERE l.endpoint_id = a.id AND l.later_commit = s.gitops_commit_id) AS moved_past) p
$$;

-- The reconcilers counted in one (endpoint, status, commit) of endpoint_status_count: the page of
-- holders looks up those of the holding classes only (4,800 of prod's 80,000 at fleet L).
-- Written by the summary refresh only, never by ingest.
CREATE INDEX summary_reconciler_by_class ON summary_reconciler (manifests_endpoint_id, status, gitops_commit_id) INCLUDE (reconciler_id, host_id);
