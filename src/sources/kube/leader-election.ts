// Leader election on a coordination.k8s.io/v1 Lease, as Kubernetes controllers do it: the leader
// renews the lease every few seconds; another replica takes over once the lease has not been
// renewed for its duration, judged by its own clock from when it last saw the lease change (so
// clock skew between replicas does not matter). Updates carry the resourceVersion they read:
// when two replicas race, the API server accepts one and answers 409 to the other.
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import { sleep } from './backoff.ts';

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly retryPeriodMs: number;
}

export interface LeadershipCallbacks {
  /** Called when this replica becomes leader; the signal aborts when it stops being leader. */
  onStartedLeading(signal: AbortSignal): Promise<void>;
  /** Called (and awaited) when this replica stops being leader or shuts down as leader. */
  onStoppedLeading(): Promise<void>;
}

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server parses it. */
function microTime(date: Date): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}

export class LeaderElection {
  readonly #api: CoordinationV1Api;
  readonly #options: LeaderElectionOptions;
  readonly #callbacks: LeadershipCallbacks;
  readonly #log: Logger;
  #leading: AbortController | undefined;
  #lastRenewal = 0;
  #observed: { record: string; at: number } | undefined;

  constructor(api: CoordinationV1Api, options: LeaderElectionOptions, callbacks: LeadershipCallbacks, log: Logger) {
    this.#api = api;
    this.#options = options;
    this.#callbacks = callbacks;
    this.#log = log.child({ component: 'leader-election', identity: options.identity });
  }

  get isLeader(): boolean {
    return this.#leading !== undefined;
  }

  /** Campaigns until `signal` aborts; then steps down and releases the lease if it held it. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const leader = await this.#tryAcquireOrRenew();
        if (leader) {
          this.#lastRenewal = Date.now();
          if (this.#leading === undefined) await this.#startLeading();
        } else if (this.#leading !== undefined) {
          await this.#stopLeading('another replica holds the lease');
        }
      } catch (error) {
        this.#log.warn({ err: (error as Error).message }, 'lease update failed');
        // A leader that cannot renew must assume it lost the lease before anyone can take it over.
        if (this.#leading !== undefined && Date.now() - this.#lastRenewal > this.#options.leaseDurationMs * 0.8) {
          await this.#stopLeading('could not renew the lease in time');
        }
      }
      await sleep(this.#options.retryPeriodMs, signal);
    }
    if (this.#leading !== undefined) {
      await this.#stopLeading('shutting down');
      await this.#release().catch((error: unknown) => this.#log.warn({ err: (error as Error).message }, 'could not release the lease'));
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, leaseName: name, identity } = this.#options;
    const now = new Date();
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
      return this.#createLease(now);
    }
    const spec = lease.spec ?? {};
    // Observed on every read, whoever holds it: expiry counts from when this replica last saw it change.
    const expired = this.#observeExpiry(spec);
    const holder = spec.holderIdentity ?? '';
    if (holder !== identity && !expired) return false;
    return this.#renewLease(lease, holder, now);
  }

  /** No lease yet: create it, held by this replica. A replica that creates it first wins (409). */
  async #createLease(now: Date): Promise<boolean> {
    const { namespace, leaseName: name, identity, leaseDurationMs } = this.#options;
    try {
      await this.#api.createNamespacedLease({
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(leaseDurationMs / 1_000),
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        },
      });
      return true;
    } catch (createError) {
      if ((createError as { code?: number }).code === 409) return false;
      throw createError;
    }
  }

  /**
   * Notes when the lease last changed, by this replica's clock, and tells whether it has expired:
   * no holder, or not renewed for its duration since then.
   */
  #observeExpiry(spec: NonNullable<V1Lease['spec']>): boolean {
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime]);
    if (this.#observed?.record !== record) this.#observed = { record, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.#options.leaseDurationMs / 1_000)) * 1_000;
    return holder === '' || Date.now() - this.#observed.at > durationMs;
  }

  /** Renews the lease this replica holds, or takes over an expired one; a replica that updates it first wins (409). */
  async #renewLease(lease: V1Lease, holder: string, now: Date): Promise<boolean> {
    const { namespace, leaseName: name, identity, leaseDurationMs } = this.#options;
    const spec = lease.spec ?? {};
    const takingOver = holder !== identity;
    try {
      await this.#api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(leaseDurationMs / 1_000),
            renewTime: microTime(now),
            ...(takingOver ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
      });
    } catch (error) {
      if ((error as { code?: number }).code === 409) return false;
      throw error;
    }
    if (takingOver) this.#log.info({ previousHolder: holder || undefined }, 'acquired the lease');
    return true;
  }

  /** Gives the lease up at once (no holder), so that another replica need not wait for it to expire. */
  async #release(): Promise<void> {
    const { namespace, leaseName: name, identity } = this.#options;
    const lease = await this.#api.readNamespacedLease({ name, namespace });
    if (lease.spec?.holderIdentity !== identity) return;
    const { holderIdentity: _holder, ...rest } = lease.spec;
    await this.#api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: { ...rest, renewTime: microTime(new Date()) } } });
  }

  async #startLeading(): Promise<void> {
    this.#leading = new AbortController();
    this.#log.info('became leader');
    await this.#callbacks.onStartedLeading(this.#leading.signal);
  }

  async #stopLeading(reason: string): Promise<void> {
    const leading = this.#leading;
    if (leading === undefined) return;
    this.#leading = undefined;
    leading.abort();
    this.#log.info({ reason }, 'stopped leading');
    await this.#callbacks.onStoppedLeading();
  }
}
