// Keeps the latest Flux objects per cluster (flux_object) and derives the real state of every
// Kustomization the write touched: those in the batch, and those pulling from a GitRepository in
// the batch. Either half may arrive first; the state appears once both are known. Runs before the
// main transaction, in one statement each, and is idempotent: a retried request derives the
// same states again, which the state writer stores once.
import { type Kysely, sql } from 'kysely';
import type { RealStateRecord, ReconcilerRemovedRecord } from '../model/deployment-records.ts';
import type { FluxObjectRecord, GitRepositoryFacts, KustomizationFacts } from '../model/flux-objects.ts';
import { kustomizationState } from '../normalize/k8sobjects.ts';
import type { HubDatabase } from './database-schema.ts';

export interface FluxDerivedRecords {
  readonly realStates: RealStateRecord[];
  readonly removals: ReconcilerRemovedRecord[];
}

interface KustomizationRow {
  cluster: string;
  namespace: string;
  name: string;
  facts: KustomizationFacts;
  observed_at: Date;
  repository: GitRepositoryFacts;
  repository_observed_at: Date;
}

export async function writeFluxObjects(db: Kysely<HubDatabase>, records: readonly FluxObjectRecord[]): Promise<FluxDerivedRecords> {
  if (records.length === 0) return { realStates: [], removals: [] };
  // One row per object (the latest), or the upsert would touch a row twice.
  const latest = new Map<string, FluxObjectRecord>();
  for (const record of records) {
    const key = JSON.stringify([record.cluster, record.objectKind, record.namespace, record.name]);
    const seen = latest.get(key);
    if (seen === undefined || seen.observedAt <= record.observedAt) latest.set(key, record);
  }
  const rows = [...latest.values()];
  await sql`
    INSERT INTO flux_object (cluster, kind, namespace, name, facts, observed_at)
    SELECT * FROM unnest(${rows.map((r) => r.cluster)}::text[], ${rows.map((r) => r.objectKind)}::text[],
                         ${rows.map((r) => r.namespace)}::text[], ${rows.map((r) => r.name)}::text[],
                         ${rows.map((r) => (r.facts === undefined ? null : JSON.stringify(r.facts)))}::jsonb[],
                         ${rows.map((r) => r.observedAt)}::timestamptz[])
    ON CONFLICT (cluster, kind, namespace, name) DO UPDATE
       SET facts = excluded.facts, observed_at = excluded.observed_at
     WHERE excluded.observed_at >= flux_object.observed_at`.execute(db);

  const kustomizations = rows.filter((r) => r.objectKind === 'Kustomization');
  const repositories = rows.filter((r) => r.objectKind === 'GitRepository');
  const found = await sql<KustomizationRow>`
    SELECT k.cluster, k.namespace, k.name, k.facts, k.observed_at,
           g.facts AS repository, g.observed_at AS repository_observed_at
      FROM flux_object k
      JOIN flux_object g ON g.cluster = k.cluster AND g.kind = 'GitRepository'
                        AND g.namespace = k.facts->'source'->>'namespace' AND g.name = k.facts->'source'->>'name'
     WHERE k.kind = 'Kustomization' AND k.facts IS NOT NULL AND g.facts IS NOT NULL
       AND k.facts->'source'->>'kind' = 'GitRepository'
       AND ((k.cluster, k.namespace, k.name) IN
              (SELECT * FROM unnest(${kustomizations.map((r) => r.cluster)}::text[], ${kustomizations.map((r) => r.namespace)}::text[],
                                    ${kustomizations.map((r) => r.name)}::text[]))
         OR (k.cluster, k.facts->'source'->>'namespace', k.facts->'source'->>'name') IN
              (SELECT * FROM unnest(${repositories.map((r) => r.cluster)}::text[], ${repositories.map((r) => r.namespace)}::text[],
                                    ${repositories.map((r) => r.name)}::text[])))`.execute(db);

  const realStates: RealStateRecord[] = [];
  for (const row of found.rows) {
    // The state as of the later of the two observations: a GitRepository that moved to another
    // branch moves its Kustomizations' endpoint now, not back when they last changed.
    const observedAt = row.repository_observed_at > row.observed_at ? row.repository_observed_at : row.observed_at;
    const state = kustomizationState(row.cluster, { namespace: row.namespace, name: row.name, facts: row.facts, observedAt }, row.repository);
    if (state !== undefined) realStates.push(state);
  }
  // A deleted Kustomization leaves the current state (its history stays); a deleted GitRepository
  // does not: its Kustomizations keep their last state, and Flux reports what follows.
  const removals: ReconcilerRemovedRecord[] = kustomizations
    .filter((r) => r.facts === undefined)
    .map((r) => ({ kind: 'reconciler-removed', host: r.cluster, reconciler: `${r.namespace}/${r.name}`, removedAt: r.observedAt }));
  return { realStates, removals };
}
