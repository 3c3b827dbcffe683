-- The environment gate at fleet L (issue 38): nothing to look for after the newest merge.
--
-- kalypso_gate_later (schema/0035) looks for the commits that came after the gate's commit on the
-- branch of every asked endpoint, one lookup per endpoint of each asked endpoint's group: for prod
-- of fleet L, 4,000 lookups, 50 of the 178 ms of an answer. A gate mostly asks of the newest merge,
-- after which nothing has come anywhere yet: one look in an index by commit now says so (0.1 ms),
-- and only otherwise are the endpoints' branches searched, as before.
-- (Searched from the commit instead — every succession of it, kept where it happened on an asked
-- group — an older commit of fleet L, whose endpoints have no branch and are each a group of their
-- own, took minutes: every one of its 12,000 successions was met with every group.)
-- The gate's tests (test/store/counted-gate.test.ts, test/api/*gate*) hold its answers.
CREATE INDEX commit_succession_by_from ON commit_succession (from_commit);

CREATE OR REPLACE FUNCTION kalypso_gate_later(endpoint_ids bigint[], gate_commit text)
RETURNS TABLE (endpoint_id bigint, later_commit text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT ROWS 100 AS $$
  WITH RECURSIVE asked AS MATERIALIZED (
    -- An endpoint without a branch is a group of its own (endpoint_peer).
    SELECT me.id, coalesce(me.branch, me.id::text) AS grp
      FROM (SELECT DISTINCT x.id FROM unnest($1) AS x(id)) x
     CROSS JOIN LATERAL (SELECT me.id, me.branch FROM manifests_endpoint me WHERE me.id = x.id OFFSET 0) me
     -- Nothing came after the commit anywhere (one look in the index, evaluated once): nothing to
     -- look up. (Written as the first commit at or after it: as EXISTS (… = $2), planned for any
     -- commit, it was a scan of every succession — one commit shared by all endpoints of fleet L
     -- is guessed to be a quarter of them — 11 ms, the rollout gate of one endpoint 7 ms slower.)
     WHERE (SELECT s.from_commit FROM commit_succession s WHERE s.from_commit >= $2 ORDER BY s.from_commit LIMIT 1) = $2
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
