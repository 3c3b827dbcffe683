// A scoped caller's rollout gate is paged in the database like everyone's (issue 38), so its
// workspaces must restrict the gate's queries before counting and paging (issue 39): an environment
// gate where workspace B's subscribers hold the rollout up (failing, so first in the unscoped
// order) answers a viewer of A with counts over all of A's subscribers on every page, pages of
// exactly `limit` until the last, cursors that walk through A's subscribers and targets once each,
// and none of B's names anywhere.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { endpointOf, FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import type { EnvironmentRolloutState } from '../../src/contract/answer-types.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;

const WS_A = randomName('ws-a');
const WS_B = randomName('ws-b');
const WS_C = randomName('ws-c');
const A1 = { workspace: WS_A, application: randomName('app-a'), workload: randomName('wl-a1'), target: randomName('tgt-a1') };
const A2 = { workspace: WS_A, application: A1.application, workload: randomName('wl-a2'), target: randomName('tgt-a2') };
const B1 = { workspace: WS_B, application: randomName('app-b'), workload: randomName('wl-b1'), target: randomName('tgt-b1') };
const B2 = { workspace: WS_B, application: B1.application, workload: randomName('wl-b2'), target: randomName('tgt-b2') };
const ENV = randomName('env');
// One merge to the environment's branch: the commit every target of it is judged on.
const COMMIT = randomCommit();
const A_HOSTS = [1, 2, 3, 4, 5].map((n) => randomName(`host-a${n}`));
const B_HOSTS = [1, 2, 3, 4].map((n) => randomName(`host-b${n}`));
const B_NAMES = [WS_B, B1.application, B1.workload, B1.target, B2.workload, B2.target, ...B_HOSTS];

const TOKENS = { viewerA: 'viewer-of-a-0123456789', viewerAC: 'viewer-of-a-and-c-0123456789', admin: 'admin-of-all-0123456789' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-scope-gate-'));
  const tokens = path.join(dir, 'tokens.yaml');
  await writeFile(
    tokens,
    [
      'tokens:',
      `  - { name: viewer-a, token: ${TOKENS.viewerA}, roles: [viewer], workspaces: [${WS_A}] }`,
      `  - { name: viewer-ac, token: ${TOKENS.viewerAC}, roles: [viewer], workspaces: [${WS_A}, ${WS_C}] }`,
      `  - { name: root, token: ${TOKENS.admin}, roles: [admin] }`,
    ].join('\n'),
  );
  hub = await startTestHub(testDb.url, ['--service-tokens', tokens]);
  const f = new FleetBuilder(hub.database.db);
  await f.write([A1, A2, B1, B2].map((workload, index) => f.descriptor(workload, ENV, '1.0.0', COMMIT, 60 - index)));
  await f.write([
    // A: 2 failing, 1 in progress, 2 succeeded.
    f.state(A_HOSTS[0]!, A1, ENV, COMMIT, 'failure', 5, 'a1 failed'),
    f.state(A_HOSTS[1]!, A1, ENV, COMMIT, 'in_progress', 5),
    f.state(A_HOSTS[2]!, A1, ENV, COMMIT, 'success', 5),
    f.state(A_HOSTS[3]!, A2, ENV, COMMIT, 'failure', 5, 'a2 failed'),
    f.state(A_HOSTS[4]!, A2, ENV, COMMIT, 'success', 5),
    // B: all failing, so first in the unscoped order.
    ...B_HOSTS.map((host, index) => f.state(host, index < 2 ? B1 : B2, ENV, COMMIT, 'failure', 4, 'b failed')),
  ]);
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

type Gate = EnvironmentRolloutState;

async function gate(token: string, query: Record<string, string>): Promise<{ text: string; state: Gate }> {
  const params = new URLSearchParams({ environment: ENV, commit: COMMIT, ...query });
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?${params.toString()}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, state: JSON.parse(text) as Gate };
}

/** Every page of subscribers (limit `limit`), following nextCursor. */
async function subscriberPages(token: string, limit: number): Promise<{ text: string; state: Gate }[]> {
  const pages = [await gate(token, { limit: String(limit) })];
  while (pages.at(-1)!.state.nextCursor !== null && pages.length < 20) {
    pages.push(await gate(token, { limit: String(limit), cursor: pages.at(-1)!.state.nextCursor! }));
  }
  return pages;
}

const A_COUNTS = { total: 5, failed: 2, inProgress: 1, succeeded: 2, stale: 0, settled: false, targetsTotal: 2 };

describe('a scoped caller’s environment gate, paged', () => {
  it('is judged over both workspaces for an admin (B holds the rollout up first)', async () => {
    const { state } = await gate(TOKENS.admin, { limit: '2' });
    expect(state).toMatchObject({ total: 9, failed: 6, inProgress: 1, succeeded: 2, targetsTotal: 4 });
    expect(state.subscribers).toHaveLength(2);
  });

  for (const [who, token] of [
    ['a viewer of A', TOKENS.viewerA],
    ['a viewer of A and C', TOKENS.viewerAC],
  ] as const) {
    it(`answers ${who} with counts over all of A’s subscribers and full pages of them`, async () => {
      const pages = await subscriberPages(token, 2);
      expect(pages.map((page) => page.state.subscribers.length)).toEqual([2, 2, 1]);
      for (const page of pages) {
        expect(page.state).toMatchObject(A_COUNTS);
        for (const name of B_NAMES) expect(page.text, `a page names ${name}`).not.toContain(name);
      }
      const hosts = pages.flatMap((page) => page.state.subscribers.map((subscriber) => subscriber.host));
      // The two failing first (by host name), then the one in progress, then the two succeeded.
      expect(hosts).toEqual([...[A_HOSTS[0]!, A_HOSTS[3]!].sort(), A_HOSTS[1], ...[A_HOSTS[2]!, A_HOSTS[4]!].sort()]);
      // Unpaged, the same subscribers in the same order.
      const all = await gate(token, { limit: '100' });
      expect(all.state.subscribers.map((subscriber) => subscriber.host)).toEqual(hosts);
      expect(all.state.nextCursor).toBeNull();
    });

    it(`pages ${who}’s targets: its own only, counted in targetsTotal`, async () => {
      const first = await gate(token, { limit: '1' });
      expect(first.state.targets).toHaveLength(1);
      expect(first.state.nextTargetsCursor).not.toBeNull();
      const second = await gate(token, { limit: '1', targetsCursor: first.state.nextTargetsCursor! });
      expect(second.state.targets).toHaveLength(1);
      expect(second.state.nextTargetsCursor).toBeNull();
      const targets = [...first.state.targets, ...second.state.targets];
      expect(targets.map((target) => target.workspace)).toEqual([WS_A, WS_A]);
      expect(new Set(targets.map((target) => target.deploymentTarget))).toEqual(new Set([A1.target, A2.target]));
      for (const page of [first, second]) {
        expect(page.state).toMatchObject(A_COUNTS);
        for (const name of B_NAMES) expect(page.text, `a page names ${name}`).not.toContain(name);
      }
    });
  }

  it('answers another workspace’s endpoint gate as a manifests endpoint that does not exist', async () => {
    const endpoint = endpointOf(ENV, B1.workload, B1.target);
    const response = await fetch(
      `http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?${new URLSearchParams({ manifestsEndpoint: endpoint, commit: COMMIT }).toString()}`,
      { headers: { authorization: `Bearer ${TOKENS.viewerA}` } },
    );
    const body = await response.text();
    expect(response.status, body).toBe(404);
    expect(JSON.parse(body).error.message).toBe(`manifests endpoint ${JSON.stringify(endpoint)} not found`);
    // The message names only what was asked, as for an endpoint that does not exist.
    for (const name of [WS_B, B1.application, ...B_HOSTS]) expect(body).not.toContain(name);
  });
});
