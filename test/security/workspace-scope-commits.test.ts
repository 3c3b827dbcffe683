// A short commit asked of the gate by a caller scoped to workspaces is resolved among the commits
// of its own targets' endpoints: an ambiguous prefix names only its workspace's candidates, a prefix
// that only another workspace's commit starts with is unknown (as for a commit that does not exist),
// and one that is ambiguous fleet-wide but unique among its own is resolved. Workspaces A and B
// share the environment's branch, so their endpoints are peers: the unscoped resolution sees both.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { endpointOf, FleetBuilder } from '../support/known-fleet.ts';
import { randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;

const A = { workspace: randomName('ws-a'), application: randomName('app-a'), workload: randomName('wl-a'), target: randomName('tgt-a') };
const B = { workspace: randomName('ws-b'), application: randomName('app-b'), workload: randomName('wl-b'), target: randomName('tgt-b') };
const ENV = randomName('env');
const hex = (length: number): string => randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);
// P: two of A's commits and one of B's start with it; Q: one of A's and one of B's.
const P = hex(8);
const Q = hex(8);
const COMMIT = { a1: P + hex(32), a2: P + hex(32), b1: P + hex(32), a3: Q + hex(32), b2: Q + hex(32) };
const TOKENS = { pipelineA: 'pipeline-of-a-0123456789', admin: 'admin-of-all-0123456789' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-scope-commits-'));
  const tokens = path.join(dir, 'tokens.yaml');
  await writeFile(
    tokens,
    ['tokens:', `  - { name: pipeline-a, token: ${TOKENS.pipelineA}, roles: [pipeline], workspaces: [${A.workspace}] }`, `  - { name: root, token: ${TOKENS.admin}, roles: [admin] }`].join(
      '\n',
    ),
  );
  hub = await startTestHub(testDb.url, ['--service-tokens', tokens]);
  const f = new FleetBuilder(hub.database.db);
  await f.write([f.descriptor(A, ENV, '1.0.0', COMMIT.a1, 70), f.descriptor(B, ENV, '9.0.0', COMMIT.b1, 65)]);
  await f.write([f.descriptor(A, ENV, '1.0.1', COMMIT.a2, 60), f.descriptor(B, ENV, '9.0.1', COMMIT.b2, 55)]);
  await f.write([f.descriptor(A, ENV, '1.0.2', COMMIT.a3, 50)]);
  await f.write([f.state(randomName('host-a'), A, ENV, COMMIT.a3, 'success', 5), f.state(randomName('host-b'), B, ENV, COMMIT.b2, 'success', 4)]);
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function gate(token: string, query: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?${new URLSearchParams(query).toString()}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, text: await response.text() };
}

const B_COMMITS = [COMMIT.b1, COMMIT.b2];

describe('short commits asked by a scoped caller', () => {
  it('names only its own workspace’s candidates when the prefix is ambiguous, in the environment gate and the endpoint gate', async () => {
    const places: Record<string, string>[] = [{ environment: ENV }, { manifestsEndpoint: endpointOf(ENV, A.workload, A.target) }];
    for (const where of places) {
      const answer = await gate(TOKENS.pipelineA, { ...where, commit: P });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.text).toContain(COMMIT.a1);
      expect(answer.text).toContain(COMMIT.a2);
      expect(answer.text).toContain('2 commits');
      for (const commit of B_COMMITS) expect(answer.text).not.toContain(commit);
    }
    // Unscoped, the same prefix has three candidates, B's among them.
    const admin = await gate(TOKENS.admin, { environment: ENV, commit: P });
    expect(admin.status).toBe(400);
    expect(admin.text).toContain('3 commits');
    expect(admin.text).toContain(COMMIT.b1);
  });

  it('resolves a prefix unique among its own commits, and answers one only another workspace’s commit has as unknown', async () => {
    const own = await gate(TOKENS.pipelineA, { environment: ENV, commit: Q });
    expect(own.status, own.text).toBe(200);
    expect(JSON.parse(own.text).commit).toBe(COMMIT.a3);
    expect((await gate(TOKENS.admin, { environment: ENV, commit: Q })).status).toBe(400);

    const others = await gate(TOKENS.pipelineA, { environment: ENV, commit: COMMIT.b1.slice(0, 12) });
    expect(others.status).toBe(400);
    expect(JSON.parse(others.text).error.message).toBe(`commit: no commit the hub has seen in environment ${ENV} starts with ${COMMIT.b1.slice(0, 12)}`);
    expect(others.text).not.toContain(COMMIT.b1);
    // The admin resolves it.
    const admin = await gate(TOKENS.admin, { environment: ENV, commit: COMMIT.b1.slice(0, 12) });
    expect(admin.status, admin.text).toBe(200);
    expect(JSON.parse(admin.text).commit).toBe(COMMIT.b1);
  });
});
