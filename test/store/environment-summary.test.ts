// The environments report reads each environment's counts as kept (schema/0050), and a caller
// scoped to workspaces has them counted at the request. Scoped to every workspace, the two ways
// must give the same answer, through the writes that move the kept counts: reports, a target moved
// to another environment, a host's environments changed by hand.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Environment } from '../../src/contract/answer-types.ts';
import type { Database } from '../../src/store/connect.ts';
import { environmentsReport } from '../../src/store/reports/environments-report.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { CART, type FleetBuilder, GREETER, HELLO, writeKnownFleet } from '../support/known-fleet.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;
let fleet: FleetBuilder;
const context = () => ({ asOf: new Date(), staleAfterMs: 60 * 60_000 });

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  fleet = await writeKnownFleet(database.db);
});

afterAll(() => closeTestDatabase({ testDb, database }));

const WORKSPACES = [...new Set([HELLO.workspace, GREETER.workspace, CART.workspace])];

/** The kept answer, and the one counted at the request (scoped to every workspace: environments without a target left out). */
async function bothWays(): Promise<{ kept: Environment[]; counted: Environment[] }> {
  const kept = await environmentsReport(database.db, context());
  const counted = await environmentsReport(database.db, context(), WORKSPACES);
  return { kept: kept.filter((environment) => environment.deploymentTargets > 0), counted };
}

it('answers from the kept counts as the counts at the request, for the known fleet and after more reports', async () => {
  const first = await bothWays();
  expect(first.kept).toEqual(first.counted);
  expect(first.kept.find((environment) => environment.name === 'dev')).toMatchObject({
    deploymentTargets: 3,
    hosts: 2,
    reconcilers: { total: 6, succeeded: 4, failed: 1, inProgress: 1, stale: 0 },
  });
  await fleet.write([
    fleet.state('prod-4', HELLO, 'prod', 'c-prod-1', 'failure', 0, 'image pull'),
    fleet.state('dev-2', CART, 'dev', 'k-dev-51', 'success', 0),
  ]);
  const after = await bothWays();
  expect(after.kept).toEqual(after.counted);
  expect(after.kept.find((environment) => environment.name === 'prod')?.reconcilers.failed).toBe(1);
});

it('recounts both environments of a target moved from one to another, and follows a host whose environments are changed by hand', async () => {
  const prodBefore = (await environmentsReport(database.db, context())).find((environment) => environment.name === 'prod')!;
  // The edge store's cart target is moved to qa (its endpoint with it): prod loses it, qa gains it.
  await sql`UPDATE deployment_target SET environment_id = (SELECT id FROM environment WHERE name = 'qa')
             WHERE id = (SELECT t.id FROM deployment_target_named t WHERE t.environment = 'prod' AND t.workload = ${CART.workload})`.execute(database.db);
  const moved = await bothWays();
  expect(moved.kept).toEqual(moved.counted);
  const prodAfter = moved.kept.find((environment) => environment.name === 'prod')!;
  expect(prodAfter.deploymentTargets).toBe(prodBefore.deploymentTargets - 1);
  expect(prodAfter.reconcilers.total).toBe(prodBefore.reconcilers.total - 1);
  expect(prodAfter.hosts).toBe(prodBefore.hosts - 1);

  // Not a write the hub makes (the refresh recounts a host by deleting and inserting its row), but
  // an update of a host's environments moves the counts too.
  await refreshSummaries(database.db, { wait: true, at: new Date() });
  const staging = (await environmentsReport(database.db, context())).find((environment) => environment.name === 'staging')!;
  await sql`UPDATE host_summary SET environment_ids = environment_ids || (SELECT id FROM environment WHERE name = 'staging')
             WHERE host_id = (SELECT id FROM host WHERE name = 'prod-1')`.execute(database.db);
  const widened = (await environmentsReport(database.db, context())).find((environment) => environment.name === 'staging')!;
  expect(widened.hosts).toBe(staging.hosts + 1);
});
