// What the outbox holds for each channel, provider-neutral: a commit status, or a CloudEvent
// already serialized (so that every attempt sends the same bytes, id and signature), and what a
// channel's client makes of sending one.

export type CommitState = 'pending' | 'success' | 'failure';

export interface StatusMessage {
  readonly kind: 'status';
  /** The repository as the hub knows it (descriptors' manifests or source repo). */
  readonly repo: string;
  /** Full commit id. */
  readonly commit: string;
  /** The branch that carries the commit, when the hub knows it (GitLab attaches the status to it). */
  readonly ref?: string;
  readonly environment: string;
  /** `kalypso/<environment>`. */
  readonly context: string;
  readonly state: CommitState;
  /** At most 140 characters. */
  readonly description: string;
  readonly targetUrl: string;
}

export interface EventMessage {
  readonly kind: 'event';
  readonly type: string;
  readonly id: string;
  /** The structured-mode CloudEvent, as sent (and signed). */
  readonly body: string;
}

export type OutboxMessage = StatusMessage | EventMessage;

/** What became of one attempt: expected failures are values, not exceptions. */
export type SendOutcome =
  | { readonly kind: 'sent'; readonly note?: string }
  /** Try again: after `afterMs` when the receiver said so (Retry-After, a rate limit's reset), else with backoff. */
  | { readonly kind: 'retry'; readonly reason: string; readonly afterMs?: number; readonly rateLimited?: boolean }
  /** Refused for good (a 4xx other than a rate limit): the receiver's reason. */
  | { readonly kind: 'refused'; readonly reason: string };

export interface ChannelClient {
  send(message: OutboxMessage, signal: AbortSignal): Promise<SendOutcome>;
}

export const contextOf = (environment: string): string => `kalypso/${environment}`;
