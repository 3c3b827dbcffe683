// `npm run screenshots`: starts a hub with the demo fleet (embedded PostgreSQL in a temporary
// directory) and photographs every page of the web UI into docs/screenshots/ for the docs (docs/web-ui.md).
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildDemoFleet } from '../src/demo/demo-fleet.ts';
import { launchBrowser } from '../test/support/browser.ts';
import { freePort } from '../test/support/ports.ts';

const out = path.resolve(import.meta.dirname, '../docs/screenshots');
const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-screenshots-'));
await chmod(directory, 0o755);
const [http, grpc, otlpHttp, pg] = [await freePort(), await freePort(), await freePort(), await freePort()];
const hub: ChildProcess = spawn(
  process.execPath,
  [
    '--disable-warning=ExperimentalWarning',
    path.resolve(import.meta.dirname, '../src/cli/main.ts'),
    'serve',
    '--demo',
    '--data-dir', directory,
    '--listen-host', '127.0.0.1',
    '--http-port', String(http),
    '--otlp-grpc-port', String(grpc),
    '--otlp-http-port', String(otlpHttp),
    '--embedded-pg-port', String(pg),
    '--log-level', 'warn',
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);
const base = `http://127.0.0.1:${http}`;
try {
  for (let attempt = 0; ; attempt += 1) {
    const hosts = await fetch(`${base}/api/v1/hosts`).then((r) => (r.ok ? (r.json() as Promise<{ items: unknown[] }>) : undefined), () => undefined);
    if (hosts !== undefined && hosts.items.length >= 40) break;
    if (attempt > 300) throw new Error('the demo hub did not come up');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const { scenario } = buildDemoFleet({ hosts: 40, now: new Date() });
  const pages: [string, string][] = [
    ['environments', '/'],
    ['hosts', '/hosts'],
    ['host', `/hosts/${scenario.driftingHost}`],
    ['history', '/history?environment=staging'],
    ['drift', '/drift'],
    ['rollout', `/rollout?endpoint=${encodeURIComponent(scenario.rolloutEndpoint)}&commit=${scenario.rolloutCommit}`],
    ['promotion-check', `/rollout?environment=staging&commit=${scenario.rolloutCommit}`],
    ['delivery', '/delivery'],
  ];
  // A desktop, and a phone for the views people check on the go.
  const phone = new Set(['environments', 'hosts', 'host', 'rollout']);
  const browser = await launchBrowser();
  for (const [width, height, suffix] of [[1440, 900, ''], [390, 844, '-phone']] as const) {
    const page = await browser.newPage({ viewport: { width, height } });
    for (const [name, url] of pages) {
      if (suffix !== '' && !phone.has(name)) continue;
      await page.goto(base + url);
      await page.waitForSelector('main table, main ol.timeline li, main .all-good, main .tiles');
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(out, `${name}${suffix}.png`) });
      process.stderr.write(`[screenshots] ${name}${suffix}.png\n`);
    }
    await page.close();
  }
  await browser.close();
} finally {
  const exited = new Promise((resolve) => hub.once('exit', resolve));
  hub.kill('SIGTERM');
  await exited;
  await rm(directory, { recursive: true, force: true });
}
