// A hub started while its database does not answer (connection refused): it listens anyway, so
// that collectors queue and retry instead of seeing a dead port; the API and the UI say which
// database cannot be reached and why; once the database answers, the same process migrates and
// becomes ready, and what was queued is stored once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.ts';
import { freeHubPorts, type HubProcess, killHub, readyzStatus, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres.ts';
import { randomName } from '../support/random-ids.ts';
import { expectedHistory, protobufBatch, reportSet } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter } from '../support/retrying-exporter.ts';
import { queryAt, storedHistory } from '../support/stored-reports.ts';
import { waitFor } from '../support/wait-for.ts';

let postgres: OwnPostgres;
let hub: HubProcess | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  postgres = await startOwnPostgres();
  await postgres.server.stop();
});

afterAll(async () => {
  await browser?.close();
  await killHub(hub);
  await postgres?.remove();
});

describe('database unreachable at start', () => {
  it('listens at once, answers "retry later" with the reason, and becomes ready without a restart when the database answers', async () => {
    const port = new URL(postgres.server.url).port;
    hub = spawnHub(postgres.server.url, await freeHubPorts());
    const running = hub;
    const pid = running.process.pid;
    await waitFor(() => running.output().includes('will retry migrations'), 'the hub waiting for its database', 30_000);

    // The API names the database and the cause, as a retryable 503.
    const api = await fetch(`http://127.0.0.1:${running.ports.http}/api/v1/environments`);
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('5');
    const { error } = (await api.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('not_ready');
    expect(error.message).toMatch(new RegExp(`^cannot reach the database at 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}; retry later$`));
    expect(await readyzStatus(running.ports.http)).toBe(503);
    expect((await fetch(`http://127.0.0.1:${running.ports.http}/healthz`)).status).toBe(200);

    // So does the UI.
    browser = await launchBrowser();
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${running.ports.http}/`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(`cannot reach the database at 127.0.0.1:${port}`);

    // The OTLP receivers listen and say "retry later" over both transports; nothing is refused for good.
    const prefix = randomName('queued');
    const reports = reportSet(prefix, 4, 3);
    const answers = new AnswerLog();
    const grpcExporter = grpcRetryingExporter(running.ports.otlpGrpc, answers, { timeScale: 0.05 });
    const httpExporter = httpRetryingExporter(running.ports.otlpHttp, answers, { timeScale: 0.05 });
    const sent = Promise.all([grpcExporter.send(await protobufBatch(reports.slice(0, 6))), httpExporter.send(await protobufBatch(reports.slice(6)))]);
    sent.catch(() => undefined);
    await waitFor(
      () => answers.attempts.some((attempt) => attempt.kind === 'unavailable+retry-info') && answers.attempts.some((attempt) => attempt.kind === '503+retry-after'),
      'both transports answering "retry later"',
    );

    await postgres.server.start();
    await waitHubReady(running, 60_000);
    await sent;
    grpcExporter.close();
    expect(answers.outside(['ok', 'unavailable+retry-info', '503+retry-after'])).toEqual([]);
    expect(running.process.pid).toBe(pid);
    expect(await storedHistory(queryAt(postgres.server.url), prefix)).toEqual(expectedHistory(reports));
    expect(running.output()).toContain('Kalypso Observability Hub ready');
  }, 120_000);
});
