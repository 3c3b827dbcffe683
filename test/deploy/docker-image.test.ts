// The Dockerfile, checked without a Docker engine: its runtime stage is non-root on a Node LTS
// that the project supports, exposes the default ports, and holds enough to run the hub. The
// last point is tested by assembling the same files (what the stage COPYs, plus the production,
// non-optional packages the first stage installs) in a directory and starting the hub from it.
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveHubConfig } from '../../src/settings.ts';
import { freePort } from '../support/ports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEFAULTS = resolveHubConfig([], {});

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions per stage, continuation lines joined, comments dropped. */
async function dockerfileStages(): Promise<{ args: Map<string, string>; stages: Instruction[][] }> {
  const text = (await readFile(path.join(ROOT, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
  const args = new Map<string, string>();
  const stages: Instruction[][] = [];
  for (const line of text.split('\n').map((raw) => raw.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(line)!;
    const instruction = { keyword: keyword!.toUpperCase(), args: rest!.trim() };
    if (instruction.keyword === 'FROM') stages.push([instruction]);
    else if (stages.length === 0 && instruction.keyword === 'ARG') {
      const [name, value] = instruction.args.split('=');
      args.set(name!, value ?? '');
    } else stages.at(-1)!.push(instruction);
  }
  return { args, stages };
}

const packageJson = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
};

describe('Dockerfile', () => {
  it('runs a non-root, supported Node LTS and exposes the default ports', async () => {
    const { args, stages } = await dockerfileStages();
    expect(stages.length, 'multi-stage').toBeGreaterThanOrEqual(2);
    const runtime = stages.at(-1)!;
    const from = runtime[0]!.args.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? '');
    const major = Number(/^node:(\d+)/.exec(from)?.[1]);
    expect(major % 2, `${from} is an LTS line`).toBe(0);
    expect(major).toBeGreaterThanOrEqual(Number(/(\d+)/.exec(packageJson.engines.node)![1]));
    const user = runtime.filter((instruction) => instruction.keyword === 'USER').at(-1)?.args;
    expect(user, 'numeric user, so runAsNonRoot can verify it').toMatch(/^[1-9]\d*(:\d+)?$/);
    const exposed = runtime.filter((instruction) => instruction.keyword === 'EXPOSE').flatMap((instruction) => instruction.args.split(/\s+/).map(Number));
    expect(exposed.sort()).toEqual([DEFAULTS.httpPort, DEFAULTS.otlpGrpcPort, DEFAULTS.otlpHttpPort].sort());
    const install = stages[0]!.find((instruction) => instruction.keyword === 'RUN')!.args;
    expect(install).toContain('--omit=dev');
  });

  it('imports, from src/, only Node built-ins and production dependencies', async () => {
    const files = (await readdir(path.join(ROOT, 'src'), { recursive: true })).filter((file) => file.endsWith('.ts'));
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(ROOT, 'src', file), 'utf8');
      for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g)) {
        const specifier = match[1] ?? match[2]!;
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!(name in packageJson.dependencies)) missing.push(`${file}: ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
    expect(files.length).toBeGreaterThan(50);
  });

  describe('the runtime stage’s files', () => {
    let appDir: string;
    let testDb: TestDatabase;
    let hub: ChildProcess | undefined;
    let output = '';

    beforeAll(async () => {
      testDb = await createTestDatabase();
      appDir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-image-'));
      const { stages } = await dockerfileStages();
      for (const instruction of stages.at(-1)!.filter((candidate) => candidate.keyword === 'COPY' && !candidate.args.startsWith('--from'))) {
        const parts = instruction.args.split(/\s+/);
        const destination = parts.pop()!;
        for (const source of parts) {
          // `COPY a ./` puts a in the directory; `COPY a ./b` names the copy b.
          const target = destination.endsWith('/') ? path.join(appDir, destination, path.basename(source)) : path.join(appDir, destination);
          await cp(path.join(ROOT, source), target, { recursive: true });
        }
      }
      // What `npm install --omit=dev --omit=optional` installs: the lockfile's production packages.
      const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
      };
      for (const [key, entry] of Object.entries(lock.packages)) {
        if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || entry.dev === true || entry.optional === true || entry.devOptional === true) continue;
        const target = path.join(appDir, key);
        await mkdir(path.dirname(target), { recursive: true });
        await symlink(path.join(ROOT, key), target);
      }
    });

    afterAll(async () => {
      if (hub !== undefined && hub.exitCode === null) hub.kill('SIGKILL');
      await rm(appDir, { recursive: true, force: true });
      await testDb.drop();
    });

    it('start the hub against an external database, serve the API, UI and docs, and stop cleanly', async () => {
      const { stages } = await dockerfileStages();
      const runtime = stages.at(-1)!;
      const entrypoint = JSON.parse(runtime.find((instruction) => instruction.keyword === 'ENTRYPOINT')!.args) as string[];
      const command = JSON.parse(runtime.find((instruction) => instruction.keyword === 'CMD')!.args) as string[];
      expect(entrypoint[0]).toBe('node');
      const ports = { http: await freePort(), grpc: await freePort(), otlpHttp: await freePort() };
      hub = spawn(process.execPath, [...entrypoint.slice(1), ...command], {
        cwd: appDir,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'production',
          DATABASE_URL: testDb.url,
          KALYPSO_KUBE: 'off',
          KALYPSO_LISTEN_HOST: '127.0.0.1',
          KALYPSO_HTTP_PORT: String(ports.http),
          KALYPSO_OTLP_GRPC_PORT: String(ports.grpc),
          KALYPSO_OTLP_HTTP_PORT: String(ports.otlpHttp),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      hub.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      hub.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => hub!.once('exit', resolve));
      const base = `http://127.0.0.1:${ports.http}`;
      let ready = 0;
      for (let attempt = 0; attempt < 200 && ready !== 200 && hub.exitCode === null; attempt += 1) {
        ready = await fetch(`${base}/readyz`).then((response) => response.status, () => 0);
        if (ready !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ready, output).toBe(200);
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      // The shell's script and stylesheet, served from the copied src/ui.
      const assets = [...(await page.text()).matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((match) => match[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) expect((await fetch(new URL(asset, base))).status, asset).toBe(200);
      expect((await fetch(`${base}/api/docs`)).status).toBe(200);
      expect((await fetch(`${base}/api/v1/openapi.json`)).status).toBe(200);
      expect((await fetch(`${base}/api/v1/environments`)).status).toBe(200);
      // The image's HEALTHCHECK, run as Docker runs it (in the container's environment).
      const healthcheck = runtime.find((instruction) => instruction.keyword === 'HEALTHCHECK')!.args;
      const probe = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD') + 3)) as string[];
      const runProbe = () =>
        new Promise<number | null>((resolve) => spawn(process.execPath, probe.slice(1), { env: { KALYPSO_HTTP_PORT: String(ports.http) } }).once('exit', resolve));
      expect(await runProbe()).toBe(0);
      hub.kill('SIGTERM');
      expect(await exited, output).toBe(0);
      expect(await runProbe()).toBe(1);
    });
  });
});
