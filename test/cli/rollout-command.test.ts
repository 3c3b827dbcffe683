// `kalypso-hub rollout` as a CD pipeline step runs it: exit codes, table and JSON output.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { endpointOf, writeKnownFleet } from '../support/known-fleet.ts';
import { randomCommit } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  await writeKnownFleet(hub.database.db);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

function rollout(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'rollout', ...args], { env: { ...process.env, KALYPSO_URL: `http://127.0.0.1:${hub.ports.http}`, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('kalypso-hub rollout', () => {
  it('exits 0 when every subscriber succeeded, with a table of subscribers', async () => {
    const result = await rollout(['--endpoint', endpointOf('prod', 'greeter-api', 'main'), '--commit', 'g-prod-19']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^HOST\s+RECONCILER\s+STATUS\s+APPLIED\s+SINCE\s+MESSAGE$/m);
    expect(result.stdout).toMatch(/^prod-1\s+flux-system\/greeter-api\s+success\s+g-prod-19/m);
    expect(result.stdout).toContain('1/1 succeeded, 0 failed, 0 in progress, 0 stale: rolled out');
    // What the commit is to the people following it: environment, workload, target, version.
    expect(result.stdout).toMatch(/^ENVIRONMENT\s+WORKLOAD\s+TARGET\s+VERSION\s+DESIRED\s+SUCCEEDED/m);
    expect(result.stdout).toMatch(/^prod\s+greeter-api\s+main\s+1\.9\.0\s+1\.9\.0\s+1\/1\s/m);
  });

  it('exits 1 when a subscriber failed', async () => {
    const result = await rollout(['--endpoint', endpointOf('dev', 'greeter-api', 'main'), '--commit', 'g-dev-2', '--wait', '30s']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^dev-2\s+flux-system\/greeter-api\s+failure\s+g-dev-2\s+\S+\s+health check failed$/m);
    expect(result.stdout).toContain('FAILED');
  });

  it('exits 2 when the rollout does not finish within the wait, reporting progress meanwhile', async () => {
    const result = await rollout(['--endpoint', endpointOf('dev', 'hello-world', 'functional-test'), '--commit', 'c-dev-3', '--wait', '2s']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('[rollout] commit c-dev-3');
    expect(result.stdout).toContain('not rolled out yet (timed out)');
  });

  it('exits 2 for a stale subscriber and for an endpoint without subscribers', async () => {
    const stale = await rollout(['--endpoint', endpointOf('prod', 'hello-world', 'functional-test'), '--commit', 'c-prod-1']);
    expect(stale.code).toBe(2);
    // Asked without --wait: nothing timed out, and the line says how to wait.
    expect(stale.stdout).toContain('not rolled out yet (asked once; --wait to wait for it)');
    const none = await rollout(['--endpoint', 'https://github.com/contoso/none/main/x', '--commit', randomCommit()]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('no subscribers yet');
  });

  it('lists those holding the rollout up first, at most --limit, and says how many more there are', async () => {
    const result = await rollout(['--endpoint', endpointOf('prod', 'hello-world', 'functional-test'), '--commit', 'c-prod-1', '--limit', '1']);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^prod-3\s+flux-system\/hello-world\s+stale\s/m);
    expect(result.stdout).not.toMatch(/^prod-[12]\s/m);
    expect(result.stdout).toContain('… 2 more subscribers not listed (2 succeeded in all)');
    expect(result.stdout).toContain('2/3 succeeded, 0 failed, 0 in progress, 1 stale');
    const bad = await rollout(['--endpoint', 'x', '--commit', 'c-prod-1', '--limit', '0']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('--limit must be a whole number');
  });

  it('prints the hub’s answer as JSON with --json', async () => {
    const result = await rollout(['--endpoint', endpointOf('dev', 'hello-world', 'functional-test'), '--commit', 'c-dev-2', '--json']);
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer).toMatchObject({ commit: 'c-dev-2', total: 2, succeeded: 2, settled: true });
    expect(answer.subscribers.map((s: { host: string }) => s.host)).toEqual(['dev-1', 'dev-2']);
  });

  it('exits 3 when it cannot ask', async () => {
    const missing = await rollout(['--endpoint', 'x']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('--commit is required');
    const unreachable = await rollout(['--endpoint', 'x', '--commit', 'c', '--url', 'http://127.0.0.1:1']);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toBe('kalypso-hub rollout: cannot reach http://127.0.0.1:1/api/v1/deployment-state: bad port\n');
    const refused = await rollout(['--endpoint', 'x', '--commit', 'c'.repeat(300)]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/the hub answered 400: commit: /);
  });
});
