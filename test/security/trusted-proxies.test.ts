// Failed authentications are slowed per client address: the connection's, unless it comes from a
// proxy named in --trusted-proxies, whose X-Forwarded-For then names the client. Through a running
// hub (its API and OTLP/HTTP doors share the throttle), with connections from several loopback
// addresses: 127.0.0.2 is the trusted proxy, 127.0.0.3 a client writing X-Forwarded-For itself.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { ClientAddresses, proxyAddresses } from '../../src/security/client-address.ts';
import { resolveHubConfig } from '../../src/settings.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startLoggingTestHub, testHubFlags } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let lines: string[];
const PROXY = '127.0.0.2';
const flags = (databaseUrl: string, proxies: string): string[] => testHubFlags(databaseUrl, ['--trusted-proxies', proxies]);

beforeAll(async () => {
  testDb = await createTestDatabase();
  // The listener binds 127.0.0.1; connections come from other loopback addresses by localAddress.
  ({ hub, lines } = await startLoggingTestHub(
    testDb.url,
    ['--trusted-proxies', `${PROXY}, 10.0.0.0/8`],
    { KALYPSO_API_TOKEN: 'api-token-0123456789', KALYPSO_INGEST_TOKEN: 'ingest-token-0123456789' },
    { identityTuning: { failedAuth: { freeFailures: 1, firstDelayMs: 300, maxDelayMs: 1_000 } } },
  ));
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await testDb?.drop();
});

/** A refused request (wrong token) from `localAddress`, with an X-Forwarded-For header; its time in ms. */
function refused(port: number, method: 'GET' | 'POST', pathName: string, localAddress: string, forwardedFor: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path: pathName, localAddress, headers: { authorization: 'Bearer wrong-token', 'x-forwarded-for': forwardedFor, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => {
          expect(res.statusCode).toBe(401);
          resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? '{}' : undefined);
  });
}

const api = (localAddress: string, forwardedFor: string): Promise<number> => refused(hub.ports.http, 'GET', '/api/v1/environments', localAddress, forwardedFor);

describe('the client a failed authentication is counted against', () => {
  it('reads X-Forwarded-For from its right end, past trusted proxies, and never believes it from anyone else', () => {
    const addresses = new ClientAddresses(['127.0.0.2', '10.0.0.0/8', 'fd00::/8']);
    expect(addresses.clientOf('127.0.0.2', '198.51.100.7')).toBe('198.51.100.7');
    // The client's own entry (left) is not believed; proxies (right) are skipped.
    expect(addresses.clientOf('127.0.0.2', '203.0.113.66, 198.51.100.7, 10.1.2.3')).toBe('198.51.100.7');
    expect(addresses.clientOf('::ffff:127.0.0.2', '198.51.100.7')).toBe('198.51.100.7');
    expect(addresses.clientOf('fd00::1', '2001:db8::5')).toBe('2001:db8::5');
    expect(addresses.clientOf('127.0.0.2', 'garbage, 198.51.100.7')).toBe('198.51.100.7');
    expect(addresses.clientOf('127.0.0.2', '198.51.100.7, garbage')).toBe('garbage');
    expect(addresses.clientOf('127.0.0.2', undefined)).toBe('127.0.0.2');
    // Not from a trusted proxy: the header is the client's own words.
    expect(addresses.clientOf('127.0.0.3', '198.51.100.7')).toBe('127.0.0.3');
    expect(new ClientAddresses().clientOf('127.0.0.2', '198.51.100.7')).toBe('127.0.0.2');
  });

  it('refuses a setting that names no address, naming the setting and the entry', () => {
    expect(proxyAddresses('10.0.0.0/8, fd00::/8, 192.0.2.7')).toEqual({ ok: true, value: ['10.0.0.0/8', 'fd00::/8', '192.0.2.7'] });
    expect(() => resolveHubConfig(flags('postgres://x@localhost/y', '10.0.0.0/33'), {})).toThrow(/--trusted-proxies.*"10\.0\.0\.0\/33" is no IP address or CIDR range/);
    expect(() => resolveHubConfig(flags('postgres://x@localhost/y', 'proxy.example'), {})).toThrow(/--trusted-proxies.*"proxy\.example"/);
  });

  it('slows each forwarded client on its own behind a trusted proxy, at the API and OTLP alike', async () => {
    // Two failures each from many clients behind the proxy: each client's first is free.
    for (let n = 1; n <= 4; n += 1) expect(await api(PROXY, `198.51.100.${n}`)).toBeLessThan(250);
    // One client failing again is slowed, whichever door it knocks at.
    expect(await refused(hub.ports.otlpHttp, 'POST', '/v1/logs', PROXY, '198.51.100.9')).toBeLessThan(250);
    expect(await api(PROXY, '198.51.100.9')).toBeGreaterThanOrEqual(290);
    const refusals = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'api request unauthenticated');
    expect(refusals.map((entry) => entry.client)).toEqual(['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4', '198.51.100.9']);
  });

  it('keys a client that is no trusted proxy by its connection, whatever X-Forwarded-For it writes', async () => {
    expect(await api('127.0.0.3', '192.0.2.1')).toBeLessThan(250);
    expect(await api('127.0.0.3', '192.0.2.2')).toBeGreaterThanOrEqual(290);
    const refusals = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'api request unauthenticated');
    expect(refusals.slice(-2).map((entry) => entry.client)).toEqual(['127.0.0.3', '127.0.0.3']);
  });
});
