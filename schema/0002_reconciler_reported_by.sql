-- Which polled feed last reported a reconciler (e.g. `arg:kalypso-system/contoso-dev`). A feed that
-- sees its whole world on every poll (Azure Resource Graph) removes the reconcilers it reported
-- before and no longer sees; pushed feeds (OTLP) leave this empty.
ALTER TABLE reconciler ADD COLUMN reported_by text;
CREATE INDEX reconciler_by_reporter ON reconciler (reported_by) WHERE reported_by IS NOT NULL AND removed_at IS NULL;
