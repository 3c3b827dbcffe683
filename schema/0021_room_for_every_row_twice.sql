-- Pages with room for a second version of every row they hold, in the three tables updated on
-- every report or refresh: the current states, hosts and the summaries' memory of each reconciler.
--
-- Their rows are updated in place (HOT: no index entries, nothing for vacuum to clean in the
-- indexes) only when the new version fits on the row's page. Rows written together are updated
-- together: a host's reconcilers were created by one batch and report in one, the refresh
-- remembers every changed reconciler in one statement. The old versions stay until that statement
-- ends, so a page needs room for a new version of every row on it; at 70 % (schema/0005, 0014) it
-- had room for about half of them. Measured on 24,000 reconcilers of 2,000 hosts, each round of
-- reports updating every one: at 70 % 82 % of the current states' updates were HOT, 92 % of the
-- hosts', 62 % of summary_reconciler's; at 40 %, all of them. The tables do not grow for it: after
-- five rounds the current states took 8.6 MB at 40 % against 10.2 MB at 70 % (the versions that
-- moved pages), their indexes half as much. Under ingest (bench ingest-core, two sets of three runs
-- each way) the current-state update took 9–11 ms per 1,000 instead of 14–15.
--
-- Pages already written keep their fill until their rows move; new rows and moved ones get the room.
ALTER TABLE deployment_state SET (fillfactor = 40);
ALTER TABLE host SET (fillfactor = 40);
ALTER TABLE summary_reconciler SET (fillfactor = 40);
