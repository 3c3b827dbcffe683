// The lifecycle of Azure Resource Graph poll loops, as sources of real state that are started,
// reconfigured and stopped by `AzureResourceGraph` resources (or by --arg-config entries).
import type { ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';

/** Why a poll went as it did: the reason of its resource's Ready condition. */
export const POLL_REASON = {
  polled: 'Polled',
  storeUnavailable: 'StoreUnavailable',
  throttled: 'Throttled',
  /** The credential was refused; it is built afresh (from a new secret, maybe) for the next poll. */
  authenticationFailed: 'AuthenticationFailed',
  pollFailed: 'PollFailed',
} as const;

export type PollReason = (typeof POLL_REASON)[keyof typeof POLL_REASON];

/** The outcome of a source's latest poll, written to its resource's Ready condition. */
export interface PollStatus {
  readonly ready: boolean;
  readonly reason: PollReason;
  readonly message: string;
  readonly lastPollTime?: Date;
  readonly rowsSeen?: number;
}

/** Reads a Kubernetes Secret's data (decoded), for sources whose credential is a secretRef. */
export type SecretReader = (namespace: string, name: string) => Promise<Readonly<Record<string, string>>>;

export interface ResourceGraphPollers {
  /** Starts the poll loop of a source, or reconfigures the running one of the same name. */
  upsert(source: ResourceGraphSourceSpec, onStatus: (status: PollStatus) => void): void;
  /** Stops the poll loop of a source (its resource was deleted, or its watcher stopped leading). */
  remove(name: string): Promise<void>;
}
