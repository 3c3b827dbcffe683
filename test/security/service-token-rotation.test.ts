// Rotating a named service token without a restart, under load: clients ask the API without pause
// while the file is rewritten (as kubectl or an editor does: a new file renamed over the old) to
// hold the old and the new token, the clients move to the new one, and the old one is removed. No
// request may fail on the way; afterwards the old token is refused, and a file that does not parse
// leaves the tokens in force.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;
let file: string;

const OLD = 'old-token-0123456789abcdef';
const NEW = 'new-token-fedcba9876543210';

/** Written beside the file and renamed over it: readers see the old file or the new, never half of one. */
async function writeTokens(...tokens: string[]): Promise<void> {
  const lines = ['tokens:', ...tokens.map((token, index) => `  - { name: gate-${index}-${token.slice(0, 3)}, token: ${token}, roles: [viewer], workspaces: ['*'] }`)];
  const temporary = `${file}.tmp`;
  await writeFile(temporary, lines.join('\n'));
  await rename(temporary, file);
}

async function status(token: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/environments`, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-rotation-'));
  file = path.join(dir, 'tokens.yaml');
  await writeTokens(OLD);
  hub = await startTestHub(testDb.url, ['--service-tokens', file], { identityTuning: { serviceTokens: { pollMs: 250 }, failedAuth: { freeFailures: 1_000 } } });
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('service token rotation', () => {
  it('rotates a token under load with no failed request, then refuses the old one', async () => {
    let current = OLD;
    let stop = false;
    const failures: string[] = [];
    let requests = 0;
    const client = async (): Promise<void> => {
      while (!stop) {
        const token = current;
        const answer = await status(token);
        requests += 1;
        if (answer !== 200) failures.push(`${answer} with ${token === OLD ? 'old' : 'new'} token`);
      }
    };
    const clients = Array.from({ length: 6 }, () => client());

    await new Promise((resolve) => setTimeout(resolve, 500));
    await writeTokens(OLD, NEW);
    // The operator moves clients once the hub takes the new token (the reload is seen, not slept on).
    await waitFor(async () => (await status(NEW)) === 200, 'the new token taken');
    current = NEW;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await writeTokens(NEW);
    await waitFor(async () => (await status(OLD)) === 401, 'the old token refused');
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop = true;
    await Promise.all(clients);

    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(50);
    expect(await status(NEW)).toBe(200);
  });

  it('keeps the tokens in force when the file is rewritten with a mistake, and takes the next good one', async () => {
    const temporary = `${file}.tmp`;
    await writeFile(temporary, 'tokens:\n  - { name: broken, token: short, roles: [viewer] }');
    await rename(temporary, file);
    // Two polls later the bad file has been read and refused; the token in force still works.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await status(NEW)).toBe(200);
    await writeTokens(OLD);
    await waitFor(async () => (await status(OLD)) === 200, 'the next good file taken');
    expect(await status(NEW)).toBe(401);
  });
});
