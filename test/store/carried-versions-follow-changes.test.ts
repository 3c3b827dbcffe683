// Which version runs at each commit a target's reconcilers may apply (target_commit, schema/0010)
// is kept step by step: each assignment, each witnessed succession and each endpoint's branch
// carries versions forward as it arrives. After every write of a random promotion flow — one
// environment branch that moves on every merge, four endpoints (paths) on it, three with a target,
// reconcilers applying its commits in order and skipping some, descriptors delivered late, reports
// that name only the joined endpoint until a source names repo and branch apart (a descriptor
// always does) — it holds what a recount from the stored evidence alone finds
// (kalypso_adopt_assignments over every target), and so do the rollouts assignments are numbered into.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { Database } from '../../src/store/connect.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => ({ testDb, database } = await openTestDatabase(2)));

afterAll(() => closeTestDatabase({ testDb, database }));

/** target_commit by the names it concerns: target, commit, the commit of the assignment whose version runs there. */
const CARRIED = `
  SELECT t.name AS target, tc.gitops_commit_id AS commit, a.gitops_commit_id AS assigned_at_commit, tc.carried
    FROM target_commit tc
    JOIN deployment_target t ON t.id = tc.deployment_target_id
    JOIN deployment_assignment a ON a.id = tc.assignment_id
   ORDER BY 1, 2`;

/** Each assignment's rollout, by the commit of the assignment that starts it. */
const NUMBERED = `
  SELECT t.name AS target, a.gitops_commit_id AS commit, r.gitops_commit_id AS rollout_commit
    FROM deployment_assignment a
    JOIN deployment_target t ON t.id = a.deployment_target_id
    JOIN deployment_assignment r ON r.id = a.rollout_id
   ORDER BY 1, 2`;

async function kept(): Promise<{ carried: unknown[]; numbered: unknown[] }> {
  return { carried: await testDb.query(CARRIED), numbered: await testDb.query(NUMBERED) };
}

async function recounted(): Promise<{ carried: unknown[]; numbered: unknown[] }> {
  return await testDb.rolledBack(async (client) => {
    await client.query('DELETE FROM target_commit');
    await client.query('UPDATE deployment_assignment SET rollout_id = NULL');
    await client.query('SELECT kalypso_adopt_assignments(array_agg(id)) FROM deployment_target');
    return { carried: (await client.query(CARRIED)).rows, numbered: (await client.query(NUMBERED)).rows };
  });
}

describe('the versions carried to commits', () => {
  it('are what a recount from the stored evidence finds, after every write of a random promotion flow', async () => {
    const seed = testSeed();
    const random = seededPicker(seed);
    const writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1 });
    const t0 = Date.now() - 24 * 60 * 60_000;
    const minute = (m: number) => new Date(t0 + m * 60_000);
    const environment = randomName('env');
    const branch = `https://github.com/contoso/gitops/${environment}`;
    // p3 has no deployment target: its clusters witness the branch's commits for the others.
    const paths = ['p0', 'p1', 'p2', 'p3'].map((path) => ({ path, endpoint: `${branch}/${path}`, branchKnown: false }));
    const targeted = 3;
    // The branch's commits in merge order; merge i at minute 10 × i.
    const commits = Array.from({ length: 12 }, () => randomCommit());
    const reconcilers = paths.flatMap((_, p) => [0, 1].map(() => ({ host: randomName('host'), p, applied: -1 })));
    let merged = 0;
    let compared = 0;
    for (let step = 0; step < 40; step += 1) {
      merged = Math.min(commits.length - 1, merged + random.int(2));
      for (const path of paths) if (!path.branchKnown && random.int(10) === 0) path.branchKnown = true;
      const manifests = (p: number) => {
        const { endpoint, branchKnown } = paths[p]!;
        return { storageType: 'git', endpoint, ...(branchKnown ? { branch } : {}) };
      };
      const records: NormalizedRecord[] = [];
      for (let n = 1 + random.int(4); n > 0; n -= 1) {
        if (random.int(10) < 3) {
          // An assignment of a merged commit, perhaps delivered late; a new version every fourth merge.
          // A descriptor names repo and branch apart.
          const p = random.int(targeted);
          const i = random.int(merged + 1);
          paths[p]!.branchKnown = true;
          records.push({
            kind: 'desired-state',
            workspace: 'contoso',
            application: 'shop',
            workload: { name: 'cart', source: undefined },
            environment,
            deploymentTarget: { name: paths[p]!.path, manifests: manifests(p) },
            workloadVersion: { version: `1.${Math.floor(i / 4)}`, build: 'b', commit: undefined, buildTime: undefined },
            commitId: commits[i]!,
            assignedAt: minute(10 * i + 1),
          });
        } else {
          // A reconciler moves forward along the branch, perhaps skipping merges.
          const reconciler = random.pick(reconcilers);
          const i = Math.max(reconciler.applied, reconciler.applied + random.int(merged - reconciler.applied + 1));
          if (i < 0) continue;
          reconciler.applied = i;
          records.push({
            kind: 'real-state',
            host: { name: reconciler.host, type: undefined },
            reconciler: { name: 'flux-system/cart', type: 'flux' },
            manifests: manifests(reconciler.p),
            commitId: commits[i]!,
            status: 'success',
            statusMessage: '',
            observedAt: minute(10 * i + 2 + random.int(7)),
          });
        }
      }
      await writer.write(records);
      const now = await kept();
      expect(now, `seed ${seed}, step ${step}`).toEqual(await recounted());
      compared += now.carried.filter((row) => (row as { carried: boolean }).carried).length;
    }
    // Carried versions were compared, not only the targets' own assignments.
    expect(compared).toBeGreaterThan(0);
  }, 120_000);
});
