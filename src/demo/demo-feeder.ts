// Feeds the demo fleet into a running hub through OTLP/HTTP — the same path real agents use —
// and, when following, keeps it alive: the staging rollout lands host by host, and live hosts
// keep reporting so that only the offline one turns stale.
import type { Logger } from '../log/logger.ts';
import { buildDemoFleet, type DemoFleet } from './demo-fleet.ts';
import { DEMO_TUNING } from './demo-settings.ts';
import { type ResourceLogsToSend, sendLogs } from './otlp-http-sender.ts';

export interface DemoOptions {
  /** The hub's OTLP/HTTP base URL, e.g. http://localhost:4318. */
  readonly otlpEndpoint: string;
  readonly hosts: number;
  readonly token?: string;
  readonly log: Logger;
}

export async function feedDemoFleet(options: DemoOptions): Promise<DemoFleet> {
  const fleet = buildDemoFleet({ hosts: options.hosts, now: new Date() });
  for (const request of fleet.descriptors) await send(options, request);
  for (let i = 0; i < fleet.states.length; i += DEMO_TUNING.batch) await send(options, fleet.states.slice(i, i + DEMO_TUNING.batch));
  const records = fleet.states.reduce((total, entry) => total + entry.logs.length, 0);
  options.log.info({ hosts: fleet.states.length, stateReports: records, ...fleet.scenario, rolloutPending: fleet.scenario.rolloutPending.length }, 'demo fleet sent');
  return fleet;
}

/** Keeps the demo moving until `signal` aborts. */
export async function followDemoFleet(options: DemoOptions, fleet: DemoFleet, signal: AbortSignal): Promise<void> {
  let sinceHeartbeat = 0;
  while (!signal.aborted) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, DEMO_TUNING.rolloutStepMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    if (signal.aborted) return;
    const now = new Date();
    const landed = fleet.scenario.rolloutPending.shift();
    if (landed !== undefined) {
      const key = `${landed.host}/${landed.reconciler}`;
      const previous = fleet.latest.get(key);
      if (previous !== undefined) {
        const attributes = { ...previous.log.attributes, 'vcs.ref.head.revision': landed.revision, 'kalypso.deployment.status': 'success' };
        const log = { ...previous.log, time: now, attributes, body: 'Applied revision' };
        fleet.latest.set(key, { resource: previous.resource, log });
        await send(options, [{ resource: previous.resource, logs: [log] }]).catch((error: unknown) => options.log.warn({ err: (error as Error).message }, 'demo report failed'));
      }
    }
    sinceHeartbeat += DEMO_TUNING.rolloutStepMs;
    if (sinceHeartbeat >= DEMO_TUNING.heartbeatMs) {
      sinceHeartbeat = 0;
      const beats = [...fleet.latest.values()].map(({ resource, log }) => ({ resource, logs: [{ ...log, time: now }] }));
      for (let i = 0; i < beats.length; i += DEMO_TUNING.batch) {
        await send(options, beats.slice(i, i + DEMO_TUNING.batch)).catch((error: unknown) => options.log.warn({ err: (error as Error).message }, 'demo heartbeat failed'));
      }
    }
  }
}

async function send(options: DemoOptions, batch: readonly ResourceLogsToSend[]): Promise<void> {
  const result = await sendLogs(options.otlpEndpoint, batch, options.token);
  if (result.rejected > 0) throw new Error(`the hub rejected ${result.rejected} demo records: ${result.errorMessage}`);
}
