// The CloudEvents the hub sends (CONTRACT section 7): a rollout progressed, succeeded, failed or
// regressed; drift started or resolved; a host offline or online. Each event's id is derived from
// the change it reports (a hash of its type, subject and state), so the same change always has the
// same id and receivers can drop a repeat; the event is serialized once, into the outbox, and sent
// as it is on every attempt.
import { createHash } from 'node:crypto';
import { CloudEvent, HTTP } from 'cloudevents';
import type { StatusCounts } from '../contract/answer-types.ts';
import type { DriftChange, HostChange } from '../store/notify/fleet-watches.ts';
import type { Subject } from '../store/notify/subjects.ts';
import type { CommitState, EventMessage } from './messages.ts';

export const EVENT_TYPES = {
  rolloutProgressed: 'io.kalypso.rollout.progressed',
  rolloutSucceeded: 'io.kalypso.rollout.succeeded',
  rolloutFailed: 'io.kalypso.rollout.failed',
  rolloutRegressed: 'io.kalypso.rollout.regressed',
  driftStarted: 'io.kalypso.drift.started',
  driftResolved: 'io.kalypso.drift.resolved',
  hostOffline: 'io.kalypso.host.offline',
  hostOnline: 'io.kalypso.host.online',
} as const;

/** An event for the outbox, and its key there: progress of one rollout coalesces; every other event is its own. */
export interface QueuedEvent {
  readonly key: string;
  readonly settled: boolean;
  readonly message: EventMessage;
}

function event(type: string, subject: string, identity: string, publicUrl: string, time: Date, data: Record<string, unknown>): EventMessage {
  const id = createHash('sha256').update(`${type}\u0000${identity}`).digest('hex').slice(0, 32);
  const cloudEvent = new CloudEvent({ id, source: publicUrl, type, subject, time: time.toISOString(), datacontenttype: 'application/json', data });
  return { kind: 'event', type, id, body: HTTP.structured(cloudEvent).body as string };
}

/**
 * The rollout event of a judgement that changed what the hub says of an environment's commit, if
 * it is one: settled and failed states as they come, a converged rollout falling back as
 * `regressed`, any other change of counts as `progressed`.
 */
export function rolloutEvent(
  subject: Subject,
  judged: { readonly state: CommitState; readonly counts: StatusCounts; readonly description: string },
  publicUrl: string,
  url: string,
  now: Date,
): QueuedEvent {
  const type =
    subject.state === 'success' && judged.state !== 'success'
      ? EVENT_TYPES.rolloutRegressed
      : judged.state === 'success'
        ? EVENT_TYPES.rolloutSucceeded
        : judged.state === 'failure'
          ? EVENT_TYPES.rolloutFailed
          : EVENT_TYPES.rolloutProgressed;
  const { total, succeeded, failed, inProgress, stale } = judged.counts;
  const data = { environment: subject.environment, commit: subject.commit, state: judged.state, total, succeeded, failed, inProgress, stale, description: judged.description, url };
  const message = event(type, `${subject.environment}/${subject.commit}`, `${subject.environment}\u0000${subject.commit}\u0000${JSON.stringify(data)}`, publicUrl, now, data);
  const progress = type === EVENT_TYPES.rolloutProgressed;
  return { key: progress ? `rollout.progressed:${subject.environment}:${subject.commit}` : message.id, settled: !progress, message };
}

export function driftEvent(change: DriftChange, publicUrl: string, now: Date): QueuedEvent {
  const type = change.change === 'started' ? EVENT_TYPES.driftStarted : EVENT_TYPES.driftResolved;
  const data = {
    environment: change.environment,
    workload: change.workload,
    deploymentTarget: change.deploymentTarget,
    host: change.host,
    reconciler: change.reconciler,
    driftingSince: change.since.toISOString(),
    reasons: change.reasons,
    url: `${publicUrl}/drift${change.environment === null ? '' : `?environment=${encodeURIComponent(change.environment)}`}`,
  };
  const message = event(type, `${change.host}/${change.reconciler}`, `${change.reconcilerId}\u0000${change.targetId}\u0000${change.since.toISOString()}`, publicUrl, now, data);
  return { key: message.id, settled: true, message };
}

export function hostEvent(change: HostChange, publicUrl: string, now: Date): QueuedEvent {
  const type = change.change === 'offline' ? EVENT_TYPES.hostOffline : EVENT_TYPES.hostOnline;
  const data = { host: change.host, lastSeenAt: change.lastSeenAt.toISOString(), url: `${publicUrl}/hosts/${encodeURIComponent(change.host)}` };
  const message = event(type, change.host, `${change.hostId}\u0000${change.lastSeenAt.toISOString()}`, publicUrl, now, data);
  return { key: message.id, settled: true, message };
}
