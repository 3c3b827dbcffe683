// Hostile values for every parameter of every /api/v1 endpoint: SQL injection, unicode, NUL,
// lone surrogates, percent-encoding junk and 100 KB values. Properties: the answer is 200, 400
// or 404 (never 500), in the documented shape; a 400 names the parameter; an injection finds
// nothing that is not there; and the database is unchanged.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { fuzzRuns, hostileString } from '../support/fuzz.ts';
import { writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const RUNS = fuzzRuns(40);
let testDb: TestDatabase;
let hub: RunningHub;
let client: pg.Client;
let snapshot: string;
/** Every name stored in the fleet: a filter matching one of these may rightly find something. */
let knownNames: Set<string>;

/** Row counts and a checksum of the names: what a successful injection would change. */
async function databaseSnapshot(): Promise<string> {
  const { rows } = await client.query<{ snapshot: string }>(`
    SELECT concat_ws(',',
      (SELECT count(*) FROM host), (SELECT count(*) FROM reconciler), (SELECT count(*) FROM deployment_state),
      (SELECT count(*) FROM deployment_state_history), (SELECT count(*) FROM deployment_assignment),
      (SELECT count(*) FROM environment), (SELECT count(*) FROM deployment_target), (SELECT count(*) FROM workload_version),
      (SELECT md5(string_agg(name, ',' ORDER BY name)) FROM host),
      (SELECT md5(string_agg(status::text || gitops_commit_id, ',' ORDER BY reconciler_id)) FROM deployment_state)) AS snapshot`);
  return rows[0]!.snapshot;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--max-wait', '1s']);
  await writeKnownFleet(hub.database.db);
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  snapshot = await databaseSnapshot();
  const { rows } = await client.query<{ name: string }>(
    `SELECT name FROM host UNION SELECT name FROM reconciler UNION SELECT name FROM environment UNION SELECT name FROM workspace
     UNION SELECT name FROM application UNION SELECT name FROM workload UNION SELECT name FROM deployment_target`,
  );
  knownNames = new Set(rows.map((row) => row.name));
});

afterAll(async () => {
  await client.end();
  await hub.stop();
  await testDb.drop();
});

interface Endpoint {
  readonly path: string;
  /** Valid values for the required parameters; the one under test replaces its own. */
  readonly query: Record<string, string>;
  readonly params: readonly string[];
  /** Parameters that filter by name: a value naming nothing must find nothing. */
  readonly filters: readonly string[];
  /** The keys a 200 answer has. */
  readonly shape: readonly string[];
}

const ENDPOINTS: readonly Endpoint[] = [
  { path: '/environments', query: {}, params: [], filters: [], shape: ['items'] },
  { path: '/environments/{environment}/state', query: {}, params: ['environment'], filters: ['environment'], shape: ['environment', 'items'] },
  { path: '/hosts', query: {}, params: ['environment', 'status', 'offline', 'drifting', 'q', 'limit', 'cursor'], filters: ['environment'], shape: ['items', 'nextCursor', 'totals', 'fleet'] },
  { path: '/hosts/{host}', query: {}, params: ['host'], filters: ['host'], shape: ['name', 'reconcilers'] },
  {
    path: '/history',
    query: {},
    params: ['environment', 'workspace', 'application', 'workload', 'deploymentTarget', 'host', 'reconciler', 'since', 'until', 'limit', 'cursor'],
    filters: ['environment', 'workspace', 'application', 'workload', 'deploymentTarget', 'host', 'reconciler'],
    shape: ['items', 'nextCursor'],
  },
  { path: '/compare', query: { environments: 'dev,qa' }, params: ['environments', 'workspace', 'application', 'limit', 'cursor'], filters: ['workspace', 'application'], shape: ['environments', 'items', 'nextCursor'] },
  { path: '/drift', query: {}, params: ['environment'], filters: ['environment'], shape: ['items'] },
  {
    path: '/deployment-state',
    query: { manifestsEndpoint: 'https://github.com/contoso/gitops/dev/hello-world-functional-test', commit: 'c-dev-3' },
    params: ['manifestsEndpoint', 'commit', 'wait'],
    filters: ['manifestsEndpoint'],
    shape: ['total', 'subscribers'],
  },
  {
    path: '/metrics/delivery',
    query: {},
    params: ['since', 'until', 'environment', 'workspace', 'application', 'workload', 'deploymentTarget', 'host', 'fixWindow', 'limit'],
    filters: ['environment', 'workspace', 'application', 'workload', 'deploymentTarget', 'host'],
    shape: ['rollouts', 'leadTime', 'convergence', 'changeFailureRate', 'timeToRestore', 'laggingHosts', 'trend', 'recentRollouts'],
  },
];

/** Percent-encoding that also writes lone surrogates (as their WTF-8 bytes, which is what arrives from a broken client). */
function percentEncode(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(char);
  }
  return out;
}

const value = fc.oneof(
  { weight: 6, arbitrary: hostileString.map((text) => ({ text, raw: false })) },
  // Unencoded: percent junk and reserved characters as a broken client would send them.
  { weight: 2, arbitrary: fc.constantFrom('%', '%zz', '%ED%A0%80', '%00', '%C0%AF', 'a%2', '%%', "'", '"', ';', '+', '%FF%FE').map((text) => ({ text, raw: true })) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(100_000), '%00'.repeat(30_000)).map((text) => ({ text, raw: false })) },
);

const cases = fc.constantFrom(...ENDPOINTS.flatMap((endpoint) => endpoint.params.map((param) => ({ endpoint, param }))));

describe('/api/v1 parameters', () => {
  it('answer 200, 400 naming the parameter, or 404 — in the documented shape, finding nothing that is not there, changing nothing', async () => {
    await fc.assert(
      fc.asyncProperty(cases, value, async ({ endpoint, param }, { text, raw }) => {
        const encoded = raw ? text : percentEncode(text);
        let path = endpoint.path;
        const query = Object.entries(endpoint.query)
          .filter(([name]) => name !== param)
          .map(([name, valid]) => `${name}=${encodeURIComponent(valid)}`);
        if (path.includes(`{${param}}`)) {
          // '', '.' and '..' are no path segment at all: the URL names another endpoint.
          if (['', '.', '..', '%2E', '%2e'].includes(encoded)) return;
          path = path.replace(`{${param}}`, encoded);
        }
        else query.push(`${param}=${encoded}`);
        const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${path}?${query.join('&')}`);
        const status = response.status;
        // A URL beyond Node's 16 KiB header limit is refused before the API sees it.
        if (encoded.length > 16_000 && status === 431) return;
        expect([200, 400, 404], `${path} ${param}=${JSON.stringify(text.slice(0, 80))}: ${status}`).toContain(status);
        const body = (await response.json()) as Record<string, any>;
        if (status === 200) {
          for (const key of endpoint.shape) expect(body).toHaveProperty(key);
          const named = knownNames.has(text.trim()) || knownNames.has(decodeOrSelf(text).trim());
          if (endpoint.filters.includes(param) && !named && Array.isArray(body['items'])) expect(body['items']).toEqual([]);
          if (endpoint.filters.includes(param) && !named && Array.isArray(body['subscribers'])) expect(body['subscribers']).toEqual([]);
          if (endpoint.filters.includes(param) && !named && Array.isArray(body['recentRollouts'])) expect(body['recentRollouts']).toEqual([]);
        } else {
          expect(typeof body['error']?.code).toBe('string');
          expect(typeof body['error']?.message).toBe('string');
          if (status === 400) expect(body['error'].message).toContain(param);
        }
      }),
      { numRuns: RUNS * ENDPOINTS.length },
    );
    expect(await databaseSnapshot()).toBe(snapshot);
    expect((await fetch(`http://127.0.0.1:${hub.ports.http}/healthz`)).status).toBe(200);
  });
});

function decodeOrSelf(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
