-- The Environments report's latest assignment of each environment (issue 38): assignments newest
-- first, so that the report walks them from the newest until one is the current assignment of a
-- target of the environment, instead of joining every target's current assignment and sorting them.
-- At fleet L (12,000 targets, 60,000 assignments, 3 environments) 28–38 ms → 0.4–0.7 ms in psql.
-- CD pipelines insert assignments a few at a time: the index costs little on write.
CREATE INDEX deployment_assignment_newest_first ON deployment_assignment (assigned_at DESC, id DESC);
