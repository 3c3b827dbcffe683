// --log-format: JSON lines for pipelines, readable lines for people, and JSON by default when
// stdout is not a terminal (here: a pipe).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeHubPorts, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { runKalypsoHub } from '../support/run-command.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});

afterAll(async () => {
  await testDb.drop();
});

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '');
const isJson = (line: string): boolean => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};
/** "[12:34:56] INFO: message …", as pino-pretty writes a record without colours. */
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): \S/;

describe('--log-format', () => {
  it('json: every line a JSON object with level, time and message', async () => {
    const result = await runKalypsoHub(['migrate', '--log-format', 'json'], { DATABASE_URL: testDb.url });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout).length).toBeGreaterThan(0);
    for (const line of lines(result.stdout)) {
      expect(isJson(line), line).toBe(true);
      expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) });
    }
    expect(result.stdout).toContain('"msg":"database schema already up to date"');
  });

  it('pretty: one readable line per record, from the flag or KALYPSO_LOG_FORMAT', async () => {
    for (const [args, env] of [
      [['migrate', '--log-format', 'pretty'], {}],
      [['migrate'], { KALYPSO_LOG_FORMAT: 'pretty' }],
    ] as const) {
      const result = await runKalypsoHub(args, { DATABASE_URL: testDb.url, ...env });
      expect(result.code, result.stderr).toBe(0);
      expect(lines(result.stdout).length).toBeGreaterThan(0);
      for (const line of lines(result.stdout)) {
        expect(isJson(line), line).toBe(false);
        expect(line).toMatch(PRETTY_LINE);
      }
      expect(result.stdout).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: database schema already up to date/m);
    }
  });

  it('auto (the default) writes JSON when stdout is a pipe', async () => {
    const result = await runKalypsoHub(['migrate'], { DATABASE_URL: testDb.url, KALYPSO_LOG_FORMAT: '' });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout).every(isJson)).toBe(true);
  });

  it('a running hub logs its start and its shutdown in readable lines', async () => {
    const hub = spawnHub(testDb.url, await freeHubPorts(), ['--log-format', 'pretty']);
    try {
      await waitHubReady(hub);
      hub.process.kill('SIGTERM');
      expect(await hub.exited).toBe(0);
      const output = lines(hub.output());
      expect(output.filter(isJson)).toEqual([]);
      expect(output.some((line) => /^\[\d\d:\d\d:\d\d\] INFO: HTTP API listening \{"port":\d+/.test(line)), output.join('\n')).toBe(true);
      expect(output.some((line) => /INFO: shutdown complete$/.test(line))).toBe(true);
    } finally {
      await killHub(hub);
    }
    // A hub's start and drained shutdown, as the other tests that spawn one allow: 30 s ran out once
    // in a full run of the suite beside 118 other files.
  }, 60_000);

  it('refuses another format, naming the setting', async () => {
    const result = await runKalypsoHub(['serve', '--log-format', 'yaml']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^kalypso-hub serve: invalid --log-format: must be one of auto, json, pretty \(got "yaml"\)\n/);
  });
});
