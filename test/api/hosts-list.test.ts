// GET /api/v1/hosts at fleet scale: totals over every page (not the page), natural order of names
// across pages with the cursor, every filter and its 400, and drift per host as the drift report and
// the kalypso_drift view have it — on a generated fleet with random names and numbers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { byNumber, expected, type FleetHost, type HostsFleet, planHostsFleet, writeHostsFleet } from '../support/hosts-fleet.ts';
import { randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { apiGet } from '../support/api-get.ts';

interface ApiHost {
  name: string;
  stale: boolean;
  environments: string[];
  reconcilers: { total: number; failed: number };
  drifting: number;
}
interface HostsAnswer {
  items: ApiHost[];
  nextCursor: string | null;
  totals: Totals;
  fleet: Totals;
  offset: number;
}
interface Totals {
  hosts: number;
  offline: number;
  failing: number;
  drifting: number;
}

let testDb: TestDatabase;
let hub: RunningHub;
let fleet: HostsFleet;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  fleet = planHostsFleet(90, 3);
  await writeHostsFleet(hub.database.db, fleet);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

const get = (path: string) => apiGet(hub, path);

async function hosts(query: string): Promise<HostsAnswer> {
  const { status, body } = await get(`/hosts?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as HostsAnswer;
}

/** Every page of a query, `limit` hosts at a time. */
async function allPages(query: string, limit: number): Promise<HostsAnswer[]> {
  const pages = [await hosts(`${query}&limit=${limit}`)];
  while (pages.at(-1)!.nextCursor !== null) pages.push(await hosts(`${query}&limit=${limit}&cursor=${encodeURIComponent(pages.at(-1)!.nextCursor!)}`));
  return pages;
}

function totalsOf(hosts: readonly FleetHost[]): Totals {
  const judged = hosts.map(expected);
  return {
    hosts: hosts.length,
    offline: judged.filter((host) => host.offline).length,
    failing: judged.filter((host) => host.failing).length,
    drifting: judged.filter((host) => host.drifting > 0).length,
  };
}

const names = (hosts: readonly FleetHost[]) => [...hosts].sort(byNumber).map((host) => host.name);

describe('GET /hosts totals', () => {
  it('counts the whole fleet on every page, whatever the page size', async () => {
    const fleetTotals = totalsOf(fleet.hosts);
    // The fleet has every kind of host, or the counts below prove little.
    expect(Object.values(fleetTotals).every((count) => count > 0)).toBe(true);
    const pages = await allPages('', 13);
    expect(pages.length).toBeGreaterThan(5);
    let before = 0;
    for (const page of pages) {
      expect(page.totals).toEqual(fleetTotals);
      expect(page.fleet).toEqual(fleetTotals);
      expect(page.offset).toBe(before);
      before += page.items.length;
    }
    expect((await hosts('limit=1')).totals).toEqual(fleetTotals);
    expect((await hosts('limit=5000')).totals).toEqual(fleetTotals);
  });

  it('counts the hosts matching the filters apart from the whole fleet', async () => {
    const environment = fleet.environments[1]!;
    const answer = await hosts(`environment=${environment}&limit=2`);
    expect(answer.totals).toEqual(totalsOf(fleet.hosts.filter((host) => host.environment === environment)));
    expect(answer.fleet).toEqual(totalsOf(fleet.hosts));
    expect(answer.items).toHaveLength(2);
  });
});

describe('GET /hosts order', () => {
  it('pages through the hosts in natural order of their names with the cursor', async () => {
    const natural = names(fleet.hosts);
    // Random numbers of different lengths: text order differs from natural order, or the test proves nothing.
    expect([...natural].sort()).not.toEqual(natural);
    for (const limit of [1, 7, 200]) {
      const pages = await allPages('', limit);
      expect(pages.flatMap((page) => page.items.map((host) => host.name)), `limit ${limit}`).toEqual(natural);
    }
  });

  it('orders every run of digits by value, and letters without regard to case', async () => {
    // Hosts of their own (no reconcilers): two numbers in a name, random widths and leading zeros.
    const prefix = randomName('nat').toLowerCase();
    const pairs = Array.from({ length: 40 }, () => [Math.floor(10 ** (Math.random() * 4)), Math.floor(10 ** (Math.random() * 4))] as const);
    const unique = [...new Map(pairs.map((pair) => [pair.join('/'), pair])).values()];
    const named = unique.map(([a, b], i) => ({ a, b, name: `${i % 3 === 0 ? prefix.toUpperCase() : prefix}-r${a}-n${String(b).padStart(i % 4, '0')}` }));
    await hub.database.db.insertInto('host').values(named.map(({ name }) => ({ name }))).execute();
    const expectedOrder = [...named].sort((x, y) => x.a - y.a || x.b - y.b).map(({ name }) => name);
    const pages = await allPages(`q=${encodeURIComponent(prefix)}`, 6);
    expect(pages.flatMap((page) => page.items.map((host) => host.name))).toEqual(expectedOrder);
    await hub.database.db.deleteFrom('host').where('name', 'in', named.map(({ name }) => name)).execute();
  });
});

describe('GET /hosts filters', () => {
  const cases: [query: string, matches: (host: FleetHost) => boolean][] = [
    ['status=failure', (host) => expected(host).statuses.has('failure')],
    ['status=in_progress', (host) => expected(host).statuses.has('in_progress')],
    ['status=stale', (host) => expected(host).statuses.has('stale')],
    ['status=success', (host) => expected(host).statuses.has('success')],
    ['offline=true', (host) => host.offline],
    ['offline=false', (host) => !host.offline],
    ['drifting=true', (host) => expected(host).drifting > 0],
    ['drifting=false', (host) => expected(host).drifting === 0],
  ];
  for (const [query, matches] of cases) {
    it(`${query}: the matching hosts, counted over every page`, async () => {
      const want = fleet.hosts.filter(matches);
      expect(want.length).toBeGreaterThan(0);
      expect(want.length).toBeLessThan(fleet.hosts.length);
      const pages = await allPages(query, 11);
      expect(pages.flatMap((page) => page.items.map((host) => host.name))).toEqual(names(want));
      expect(pages[0]!.totals).toEqual(totalsOf(want));
      expect(pages[0]!.fleet).toEqual(totalsOf(fleet.hosts));
    });
  }

  it('environment, a name search in any case, and all filters together', async () => {
    const environment = fleet.environments[2]!;
    expect((await allPages(`environment=${environment}`, 9)).flatMap((page) => page.items.map((host) => host.name))).toEqual(
      names(fleet.hosts.filter((host) => host.environment === environment)),
    );
    // A piece of a random host's number, upper-cased with the rest of the name around it.
    const probe = fleet.hosts[Math.floor(Math.random() * fleet.hosts.length)]!;
    const search = `NODE-${String(probe.n).slice(0, 2)}`;
    const found = fleet.hosts.filter((host) => host.name.toLowerCase().includes(search.toLowerCase()));
    const answer = await hosts(`q=${encodeURIComponent(search)}`);
    expect(answer.items.map((host) => host.name)).toEqual(names(found));
    expect(answer.totals).toEqual(totalsOf(found));
    const all = (host: FleetHost) => host.environment === environment && !host.offline && expected(host).drifting > 0 && expected(host).statuses.has('success');
    const combined = await allPages(`environment=${environment}&offline=false&drifting=true&status=success&q=${encodeURIComponent(fleet.prefix.toUpperCase())}`, 4);
    expect(combined.flatMap((page) => page.items.map((host) => host.name))).toEqual(names(fleet.hosts.filter(all)));
    expect(combined[0]!.totals).toEqual(totalsOf(fleet.hosts.filter(all)));
  });

  it('refuses bad values with a 400 naming the parameter', async () => {
    for (const [query, name] of [
      ['offline=yes', 'offline'],
      ['drifting=1', 'drifting'],
      ['status=broken', 'status'],
      ['q=', 'q'],
      ['limit=0', 'limit'],
      [`cursor=${'x'.repeat(300)}`, 'cursor'],
    ]) {
      const { status, body } = await get(`/hosts?${query}`);
      expect(status, query).toBe(400);
      expect(body.error.code).toBe('invalid_parameter');
      expect(body.error.message, query).toMatch(new RegExp(`^${name}: `));
    }
    expect((await get('/hosts?offline=maybe')).body.error.message).toBe('offline: must be true or false');
  });
});

describe('GET /hosts drift', () => {
  it('gives each host the number of its reconcilers off the desired rollout, as /drift and kalypso_drift have them', async () => {
    const items = (await allPages('', 5000)).flatMap((page) => page.items);
    const fromApi = new Map(items.map((host) => [host.name, host.drifting]));
    // The drift report: reconcilers not on the desired commit's rollout, per host.
    const drift = (await get('/drift')).body.items as { host: string; reconciler: string; reasons: string[] }[];
    const fromReport = new Map<string, Set<string>>();
    for (const item of drift.filter((entry) => entry.reasons.includes('not_on_desired_commit'))) {
      fromReport.set(item.host, (fromReport.get(item.host) ?? new Set()).add(item.reconciler));
    }
    const fromView = new Map(
      (
        await testDb.query<{ host: string; reconcilers: number }>(
          'SELECT host, count(DISTINCT reconciler)::int AS reconcilers FROM kalypso_drift WHERE not_on_desired_commit GROUP BY host',
        )
      ).map((row) => [row.host, row.reconcilers]),
    );
    for (const host of fleet.hosts) {
      const want = expected(host).drifting;
      expect([fromApi.get(host.name), fromReport.get(host.name)?.size ?? 0, fromView.get(host.name) ?? 0], host.name).toEqual([want, want, want]);
    }
    // On w2 (the desired version, not the desired commit): no drift, however green or not.
    expect(fleet.hosts.some((host) => host.reconcilers.some((reconciler) => reconciler.commit === fleet.commits[host.environment]!.w2))).toBe(true);
    expect(Math.max(...items.map((host) => host.drifting))).toBe(2);
  });
});
