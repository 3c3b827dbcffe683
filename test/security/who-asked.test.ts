// Who asked: each API request's access-log line names the caller (a token's name, an identity's
// subject) and the role that let it in, never a token; /metrics counts requests per role. Failed
// authentications are slowed per client: a client guessing tokens waits longer and longer, while
// another client (another address) and the same client with a good token are not held up.
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startLoggingTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;
let lines: string[];

const API_TOKEN = 'shared-api-token-0123456789';
const GATE_TOKEN = 'gate-payments-token-0123456789';

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-who-'));
  await writeFile(path.join(dir, 'tokens.yaml'), `tokens:\n  - { name: gate-payments, token: ${GATE_TOKEN}, roles: [pipeline], workspaces: ['*'] }\n`);
  ({ hub, lines } = await startLoggingTestHub(
    testDb.url,
    [],
    { KALYPSO_API_TOKEN: API_TOKEN, KALYPSO_SERVICE_TOKENS: path.join(dir, 'tokens.yaml') },
    { identityTuning: { failedAuth: { freeFailures: 2, firstDelayMs: 300, maxDelayMs: 2_000 } } },
  ));
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** GET from a given local address (the throttle keys clients by address), timed. */
function timedGet(pathAndQuery: string, token: string, localAddress = '127.0.0.1'): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: hub.ports.http, path: pathAndQuery, localAddress, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('who asked', () => {
  it('names the caller and its role in the access log and counts per role, never showing a token', async () => {
    expect((await timedGet('/api/v1/environments', API_TOKEN)).status).toBe(200);
    expect((await timedGet('/api/v1/deployment-state?environment=nowhere&commit=0123456', GATE_TOKEN)).status).toBe(404);
    const access = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'api request');
    expect(access).toContainEqual(expect.objectContaining({ path: '/api/v1/environments', status: 200, who: 'api-token', via: 'token', role: 'viewer' }));
    expect(access).toContainEqual(expect.objectContaining({ path: '/api/v1/deployment-state', status: 404, who: 'gate-payments', role: 'pipeline' }));
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toMatch(/kalypso_admitted_requests_total\{door="api",role="pipeline",via="token"\} 1/);
    for (const line of lines) {
      expect(line).not.toContain(API_TOKEN);
      expect(line).not.toContain(GATE_TOKEN);
    }
  });

  it('slows failed authentications per client, not other clients nor good tokens', async () => {
    const guesses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await timedGet('/api/v1/environments', `guess-${attempt}`, '127.0.0.3');
      expect(answer.status).toBe(401);
      guesses.push(answer.ms);
    }
    // Two free failures, then 300, 600, 1200 ms.
    expect(guesses[0]!).toBeLessThan(250);
    expect(guesses[1]!).toBeLessThan(250);
    expect(guesses[2]!).toBeGreaterThanOrEqual(290);
    expect(guesses[3]!).toBeGreaterThanOrEqual(590);
    expect(guesses[4]!).toBeGreaterThanOrEqual(1_190);
    // Another address fails at once; a good token from the guessing address is not held up.
    expect((await timedGet('/api/v1/environments', 'typo', '127.0.0.4')).ms).toBeLessThan(250);
    expect((await timedGet('/api/v1/environments', API_TOKEN, '127.0.0.3')).ms).toBeLessThan(250);
    const refusals = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'api request unauthenticated');
    expect(refusals.filter((entry) => entry.client === '127.0.0.3').map((entry) => entry.delayMs)).toEqual([0, 0, 300, 600, 1_200]);
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toMatch(/kalypso_refused_requests_total\{door="api",reason="unknown_token"\} 6/);
  });
});
