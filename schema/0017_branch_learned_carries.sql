-- An endpoint whose branch becomes known shares what its peers witnessed about the branch's commits
-- (schema/0010) — including what they witnessed before. Until now only successions witnessed after
-- that carried versions forward, so a target whose endpoint was first seen without its branch (a
-- state report naming only the joined endpoint, before the descriptor that names repo and branch)
-- never learned which version runs at the commits its peers had seen: its reconcilers' commits stayed
-- without a desired version, and each later merge found nothing to carry from. Found by
-- test/store/carried-versions-follow-changes.test.ts (a recount after every write of a random
-- promotion flow).

-- Carries versions forward, from every commit they know, for the targets of the given endpoints'
-- branches (the endpoints and their peers). Returns the number of rows written.
CREATE FUNCTION kalypso_branch_learned(endpoint_ids bigint[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  seeds_targets bigint[];
  seeds_commits text[];
BEGIN
  SELECT coalesce(array_agg(tc.deployment_target_id ORDER BY tc.deployment_target_id, tc.gitops_commit_id), '{}'),
         coalesce(array_agg(tc.gitops_commit_id ORDER BY tc.deployment_target_id, tc.gitops_commit_id), '{}')
    INTO seeds_targets, seeds_commits
    FROM target_commit tc
   WHERE tc.deployment_target_id IN (
           SELECT dt.id
             FROM endpoint_peer p
             JOIN deployment_target dt ON dt.manifests_endpoint_id = p.peer_id
            WHERE p.endpoint_id IN (SELECT unnest(endpoint_ids)));
  RETURN kalypso_carry_forward(seeds_targets, seeds_commits);
END $$;
REVOKE EXECUTE ON FUNCTION kalypso_branch_learned(bigint[]) FROM PUBLIC;

-- Endpoints whose branch was learned before this migration: carried once, now.
SELECT kalypso_branch_learned(array_agg(id)) FROM manifests_endpoint WHERE branch IS NOT NULL HAVING count(*) > 0;
