// The environment gate counted from the summaries (schema/0035, counted-gate.ts) against the gate
// judging every subscriber (kalypso_gate_endpoints): after every step of random writes — state
// reports (late ones too), assignments of new commits, reconciler removals, time moving past
// stale-after — with the summaries refreshed as of the step's moment, as of a later one, or not at
// all (the writes still queued), the counts per endpoint and the subscribers, whole and page by
// page, are the same at cuts before, at and after the refresh's.
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { countedSubscribers } from '../../src/store/reports/counted-gate.ts';
import { decodeTargetCursor, environmentGateReport } from '../../src/store/reports/environment-gate-report.ts';
import { decodeSubscriberCursor, type GatePage, type GateRow, judgeSubscribers } from '../../src/store/reports/rollout-gate-report.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { ENVIRONMENTS } from '../support/known-fleet.ts';
import { randomStep, randomWriteFleet } from '../support/random-writes.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 10 * 60_000;
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [...ENVIRONMENTS] });
});

afterAll(() => closeTestDatabase({ testDb, database }));

function endpointsOf(environment: string): RawBuilder<unknown> {
  return sql`ARRAY(SELECT t.manifests_endpoint_id FROM deployment_target_named t WHERE t.environment = ${environment})`;
}

/** The GateRow columns only (each statement adds columns of its own to its summary row). */
function gateRow(row: GateRow): GateRow {
  const { endpoint_id, endpoint, rank, host, reconciler, type, applied_commit, status, status_message, observed_at, last_seen_at, moved_past } = row;
  return { endpoint_id, endpoint, rank, host, reconciler, type, applied_commit, status, status_message, observed_at, last_seen_at, moved_past };
}

/** Every subscriber, page after page of `limit`, as the counted gate names them. */
async function pagedRows(asOf: Date, environment: string, commit: string, limit: number): Promise<GateRow[]> {
  const rows: GateRow[] = [];
  let page: GatePage = { limit };
  for (;;) {
    const part = await countedSubscribers(database.db, { asOf, staleAfterMs: STALE_AFTER_MS }, endpointsOf(environment), commit, page);
    rows.push(...part.rows.slice(0, limit).map(gateRow));
    const last = part.rows[limit - 1];
    if (part.rows.length <= limit || last === undefined) return rows;
    page = { limit, after: { rank: last.rank, host: last.host, reconciler: last.reconciler } };
  }
}

/** The environment gate's answers, page by page (subscribers and targets), without the facts only the notifier reads. */
async function answers(asOf: Date, environment: string, commit: string, answerOnly: boolean): Promise<unknown[]> {
  const pages: unknown[] = [];
  let cursors: { cursor: string | null; targetsCursor: string | null } = { cursor: null, targetsCursor: null };
  for (let n = 0; n < 20; n += 1) {
    const gate = await environmentGateReport(database.db, { asOf, staleAfterMs: STALE_AFTER_MS }, environment, commit, {
      limit: 2,
      after: cursors.cursor === null ? undefined : decodeSubscriberCursor(cursors.cursor),
      targetsAfter: cursors.targetsCursor === null ? undefined : decodeTargetCursor(cursors.targetsCursor),
      answerOnly,
    });
    pages.push({ ...gate.answer, endpoints: gate.endpoints });
    if (gate.answer.nextCursor === null && gate.answer.nextTargetsCursor === null) break;
    cursors = { cursor: gate.answer.nextCursor, targetsCursor: gate.answer.nextTargetsCursor };
  }
  return pages;
}

describe('the environment gate counted from the summaries', () => {
  it('equals the judgement of every subscriber after every step of random writes, refreshed or not, at cuts around the refresh', async () => {
    const { seed, random, t0, fleet, hosts, commits } = randomWriteFleet(database.db);
    let minutes = 0;
    const seen = { statuses: new Set<string>(), queued: 0, countedStale: 0, moved: 0 };
    const everyPathTaken = (): boolean => seen.statuses.size === 4 && seen.queued > 0 && seen.countedStale > 0;
    // Thirty steps, then on (up to ninety) while a path is still untaken: a seed that draws no
    // failing subscriber of the picked environment in thirty steps (142677 did) is not a finding.
    let step = 0;
    for (; step < 30 || (step < 90 && !everyPathTaken()); step += 1) {
      // Time moves on, now and then past stale-after for the hosts that stay silent.
      minutes += random.int(8);
      await fleet.write(randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 10, weights: { states: 8, descriptors: 3, removals: 1 } }));
      const at = t0 + minutes * 60_000;
      // Refreshed as of now, as of a later clock (another replica's), or not: the writes stay queued.
      const refreshed = random.int(3);
      if (refreshed < 2) await refreshSummaries(database.db, { wait: true, at: new Date(at + refreshed * 5 * 60_000) });
      seen.queued += Number((await testDb.query('SELECT count(*) AS n FROM summary_queue'))[0]!['n'] ?? 0) > 0 ? 1 : 0;
      seen.countedStale += Number((await testDb.query(`SELECT count(*) AS n FROM summary_reconciler WHERE status = 'stale'`))[0]!['n'] ?? 0) > 0 ? 1 : 0;
      const environment = random.pick(ENVIRONMENTS);
      const commit = random.pick(commits);
      const context = `seed ${seed}, step ${step}, ${['refreshed', 'refreshed later', 'not refreshed'][refreshed]}, ${environment} ${commit}`;
      for (const minutesOff of [-3, 0, 3, 12]) {
        const asOf = new Date(at + minutesOff * 60_000);
        const all = { limit: undefined };
        const judged = await judgeSubscribers(database.db, { asOf, staleAfterMs: STALE_AFTER_MS }, endpointsOf(environment), commit, all);
        const counted = await countedSubscribers(database.db, { asOf, staleAfterMs: STALE_AFTER_MS }, endpointsOf(environment), commit, all);
        expect(counted.counts, `${context}, ${minutesOff} min`).toEqual(judged.counts);
        expect(counted.rows.map(gateRow), `${context}, ${minutesOff} min`).toEqual(judged.rows.map(gateRow));
        expect(await pagedRows(asOf, environment, commit, 2), `${context}, ${minutesOff} min, pages of 2`).toEqual(judged.rows.map(gateRow));
        for (const row of judged.rows) seen.statuses.add(row.status);
        seen.moved += judged.rows.filter((row) => row.moved_past).length;
      }
      const asOf = new Date(at);
      expect(await answers(asOf, environment, commit, true), `${context}, answers`).toEqual(await answers(asOf, environment, commit, false));
    }
    // Every path was taken: each status, writes still queued, reconcilers counted stale.
    expect([...seen.statuses].sort(), `seed ${seed}, ${step} steps`).toEqual(['failure', 'in_progress', 'stale', 'success']);
    expect(seen.queued, `seed ${seed}`).toBeGreaterThan(0);
    expect(seen.countedStale, `seed ${seed}`).toBeGreaterThan(0);
  }, 300_000);
});
