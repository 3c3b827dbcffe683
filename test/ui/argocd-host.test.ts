// The web UI says which kind of reconciler a host runs and, for Argo CD, each application's sync and
// health (issue 36), in headless Chromium against a hub fed through OTLP: a cluster running Flux
// and Argo CD side by side, one Argo CD application Synced and Healthy, one Synced and Degraded.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { applicationObject, applicationRecord, type AppShape, moments } from '../support/argocd-applications.ts';
import { artifactPath, launchBrowser } from '../support/browser.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const CLUSTER = randomName('aks');
const [HEALTHY, DEGRADED]: AppShape[] = ['orders', 'payments'].map((name) => ({
  name: randomName(name),
  destination: { name: 'in-cluster' },
  sources: [{ repoURL: 'https://github.com/contoso/platform-gitops', targetRevision: 'prod', path: name }],
}));

let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  const at = new Date(Math.floor((Date.now() - 60_000) / 1_000) * 1_000);
  const exporter = createExporter('grpc', hub.ports);
  const result = await exportLogs(
    exporter,
    await buildLogRecords([
      stateLog({ host: CLUSTER, reconciler: 'flux-system/infra', commit: randomCommit(), at }),
      applicationRecord(CLUSTER, applicationObject(HEALTHY!, moments.synced([randomCommit()], at)), 'ADDED', at),
      applicationRecord(CLUSTER, applicationObject(DEGRADED!, { ...moments.synced([randomCommit()], at, 'Degraded'), healthMessage: 'Caused by apps/Deployment:payments/api' }), 'ADDED', at),
    ]),
  );
  await exporter.shutdown();
  expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub.stop();
  await testDb.drop();
});

describe('a host running Flux and Argo CD', () => {
  it('lists the kinds of reconciler in the hosts table', async () => {
    await page.goto(`http://127.0.0.1:${hub.ports.http}/hosts?q=${CLUSTER}`);
    await page.waitForSelector(`tr[data-host="${CLUSTER}"]`);
    expect(await page.$eval(`tr[data-host="${CLUSTER}"] td.kinds`, (cell) => cell.textContent)).toBe('Flux, Argo CD');
  });

  it('names each reconciler’s kind and shows an Argo CD application’s sync and health under its status', async () => {
    await page.goto(`http://127.0.0.1:${hub.ports.http}/hosts/${CLUSTER}`);
    await page.waitForSelector('table.reconcilers');
    const rows = await page.$$eval('table.reconcilers tbody tr', (elements) =>
      elements.map((row) => ({
        reconciler: row.getAttribute('data-reconciler'),
        kind: row.querySelector('.kind')?.textContent,
        status: row.querySelector('td[data-label="Status"] .badge')?.textContent,
        argocd: row.querySelector('.argocd-state')?.textContent ?? null,
      })),
    );
    expect(rows).toEqual([
      { reconciler: `argocd/${HEALTHY!.name}`, kind: ' (Argo CD)', status: expect.any(String), argocd: 'Synced · Healthy' },
      { reconciler: `argocd/${DEGRADED!.name}`, kind: ' (Argo CD)', status: expect.any(String), argocd: 'Synced · Degraded' },
      { reconciler: 'flux-system/infra', kind: ' (Flux)', status: expect.any(String), argocd: null },
    ]);
    expect(await page.$eval('h1 + div p, h1 ~ div > p', (line) => line.textContent)).toMatch(/^k8s-cluster · Flux, Argo CD · last seen/);
    await page.screenshot({ path: await artifactPath('host-argocd'), fullPage: true });
  });
});
