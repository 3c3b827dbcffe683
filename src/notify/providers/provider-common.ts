// What the commit-status providers share: statuses only (events go to webhooks), a token that
// cannot be read now is a reason to try again later (it may be mid-rotation), and the check that
// the provider already shows what is about to be posted.
import type { CommitStatusChannel } from '../notifications-file.ts';
import type { ChannelClient, SendOutcome, StatusMessage } from '../messages.ts';

export interface ProviderTiming {
  readonly requestTimeoutMs: number;
  /** A rate limit whose answer names no time to wait. */
  readonly rateLimitedBackoffMs: number;
}

export interface ShownStatus {
  readonly state: string;
  readonly description: string;
  readonly targetUrl: string;
}

export function sendStatusOnly(
  channel: CommitStatusChannel,
  sendStatus: (message: StatusMessage, signal: AbortSignal) => Promise<SendOutcome>,
): ChannelClient {
  return {
    send: async (message, signal) => {
      if (message.kind !== 'status') return { kind: 'refused', reason: `${channel.name} posts commit statuses, not events` };
      try {
        return await sendStatus(message, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        return { kind: 'retry', reason: `${channel.name}: cannot read its token from ${channel.token.origin}: ${(error as Error).message}` };
      }
    },
  };
}

/** The provider's newest status of the context says what is about to be posted (in the provider's words for the state). */
export function shownAlready(shown: ShownStatus | undefined, message: StatusMessage, providerState: string = message.state): boolean {
  return shown !== undefined && shown.state === providerState && shown.description === message.description && shown.targetUrl === message.targetUrl;
}
