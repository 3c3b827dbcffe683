-- The environment gate at fleet L (issue 38): nothing to look for after the newest merge.
--
-- kalypso_gate_later (schema/0035) looks for the commits that came after the gate's commit on the
-- branch of every asked endpoint, one lookup per endpoint of each asked endpoint's group: for prod
-- of fleet L, 4,000 lookups, 50 of the 178 ms of an answer. A gate mostly asks of the newest merge,
-- after which nothing has come anywhere yet: one lookup by the commit now says so (an index on
-- commit_succession.from_commit), and only otherwise are the endpoints' branches searched, as before.
-- (Searched from the commit instead — every succession of it, kept where it happened on an asked
-- group — an older commit of fleet L, whose endpoints have no branch and are each a group of their
-- own, took minutes: every one of its 12,000 successions was met with every group.)
-- The gate's tests (test/store/counted-gate.test.ts, test/api/*gate*) hold its answers.
CREATE INDEX commit_succession_by_from ON commit_succession (from_commit);

CREATE OR REPLACE FUNCTION kalypso_gate_later(endpoint_ids bigint[], gate_commit text)
RETURNS TABLE (endpoint_id bigint, later_commit text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 100 AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM commit_succession s WHERE s.from_commit = gate_commit) THEN
    RETURN;
  END IF;
  RETURN QUERY
  WITH RECURSIVE asked AS MATERIALIZED (
    -- An endpoint without a branch is a group of its own (endpoint_peer).
    SELECT me.id, coalesce(me.branch, me.id::text) AS grp
      FROM (SELECT DISTINCT x.id FROM unnest(endpoint_ids) AS x(id)) x
     CROSS JOIN LATERAL (SELECT me.id, me.branch FROM manifests_endpoint me WHERE me.id = x.id OFFSET 0) me
  ), member AS MATERIALIZED (
    -- Every endpoint of each asked endpoint's group, through one of its members.
    SELECT r.grp, p.peer_id AS id
      FROM (SELECT a.grp, min(a.id) AS rep FROM asked a GROUP BY a.grp) r
     CROSS JOIN LATERAL (SELECT p.peer_id FROM endpoint_peer p WHERE p.endpoint_id = r.rep OFFSET 0) p
  ), later(grp, c) AS (
    SELECT m.grp, s.to_commit
      FROM member m
     CROSS JOIN LATERAL (SELECT s.to_commit FROM commit_succession s WHERE s.manifests_endpoint_id = m.id AND s.from_commit = gate_commit OFFSET 0) s
    UNION
    SELECT l.grp, s.to_commit
      FROM later l
      JOIN member m ON m.grp = l.grp
     CROSS JOIN LATERAL (SELECT s.to_commit FROM commit_succession s WHERE s.manifests_endpoint_id = m.id AND s.from_commit = l.c OFFSET 0) s
  ), moved AS MATERIALIZED (
    SELECT DISTINCT l.grp, l.c FROM later l WHERE l.c <> gate_commit
  )
  SELECT a.id, m.c FROM asked a JOIN moved m ON m.grp = a.grp;
END $function$;
