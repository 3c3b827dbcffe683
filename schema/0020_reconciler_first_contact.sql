-- A reconciler's row is written at its first report, outside the batch's transaction; under a burst
-- of new hosts (a fleet onboarded, a collector replaying what it queued) that insert cost 28 µs per
-- row, half of it its two foreign-key checks: each is a query per row that also locks the host's
-- or endpoint's row (FOR KEY SHARE), a write to that row's page. Hosts and endpoints are never
-- deleted, so the keys' one use was to refuse an id the hub cached for a row that vanished (a
-- database restored from a backup, a failover to a replica behind). The insert now checks that
-- itself, set-wise, and the hub looks its ids up again when a row names one that is not there
-- (dimension-ids.ts, `references`).
ALTER TABLE reconciler
  DROP CONSTRAINT reconciler_host_id_fkey,
  DROP CONSTRAINT reconciler_manifests_endpoint_id_fkey;
