-- Flux objects seen by the OpenTelemetry Collector's k8sobjects receiver, per cluster. A
-- Kustomization becomes a reconciler's state only together with the GitRepository it pulls from
-- (url + branch), and the two arrive in any order: the latest of each is kept here so that
-- either can complete the other, across restarts and replicas.
CREATE TABLE flux_object (
  cluster     text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('Kustomization', 'GitRepository')),
  namespace   text NOT NULL,
  name        text NOT NULL,
  -- The fields the hub uses (see src/normalize/k8sobjects.ts), not the whole object. NULL once
  -- the object was deleted: the tombstone keeps a late, older event from bringing it back.
  facts       jsonb,
  observed_at timestamptz NOT NULL,
  PRIMARY KEY (cluster, kind, namespace, name)
);
-- A GitRepository that changes finds the Kustomizations that pull from it.
CREATE INDEX flux_object_by_source ON flux_object (cluster, (facts->'source'->>'namespace'), (facts->'source'->>'name'))
  WHERE kind = 'Kustomization';
