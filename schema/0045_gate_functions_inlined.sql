-- The rollout gate of one endpoint (issue 38): its statement is prepared (src/store/connect.ts) and
-- planned once per connection, yet the two functions it calls were planned again at every call — a
-- SQL function that is SECURITY DEFINER or has its own search_path is never inlined. Of the gate's
-- 2.3 ms in PostgreSQL at fleet L, about 0.8 ms was planning kalypso_gate_later's body and as much
-- kalypso_gate_endpoints'. As plain SQL functions, the planner writes their bodies into the prepared
-- statement (rollout-gate-report.ts passes the endpoint ids as a column, not a sub-select, which would
-- also keep them from being inlined).
--
-- Nobody loses access: neither is executable by PUBLIC (schema/0027, 0035). The hub runs them as their
-- owner, and readers reach them only through kalypso_gate, which stays SECURITY DEFINER with its own
-- search_path, so the bodies run as the owner, on that path, as before.
ALTER FUNCTION kalypso_gate_endpoints(bigint[], text, timestamptz) SECURITY INVOKER RESET search_path;
ALTER FUNCTION kalypso_gate_later(bigint[], text) SECURITY INVOKER RESET search_path;
