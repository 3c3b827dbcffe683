// CloudEvents to a webhook (docs/research/cloudevents-webhooks.md): structured mode, the body as
// the outbox holds it — so a redelivery carries the same id, data and signature — signed with
// HMAC-SHA256 of the body under the webhook's secret, hex, in X-Kalypso-Signature-256 (the form
// GitHub's webhooks use: `sha256=<hex>`; receivers compare it in constant time).
import { createHmac } from 'node:crypto';
import type { WebhookChannel } from '../notifications-file.ts';
import type { ChannelClient } from '../messages.ts';
import { genericOutcome, httpRequest } from './http-delivery.ts';
import type { ProviderTiming } from './provider-common.ts';

export const SIGNATURE_HEADER = 'x-kalypso-signature-256';

export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function webhookClient(channel: WebhookChannel, timing: ProviderTiming): ChannelClient {
  return {
    send: async (message, signal) => {
      if (message.kind !== 'event') return { kind: 'refused', reason: `${channel.name} takes events, not commit statuses` };
      let secret: string;
      try {
        secret = await channel.secret.read();
      } catch (error) {
        return { kind: 'retry', reason: `${channel.name}: cannot read its secret from ${channel.secret.origin}: ${(error as Error).message}` };
      }
      const answer = await httpRequest(
        {
          method: 'POST',
          url: channel.url,
          headers: {
            'content-type': 'application/cloudevents+json; charset=utf-8',
            'user-agent': 'kalypso-observability-hub',
            [SIGNATURE_HEADER]: signature(message.body, secret),
          },
          body: message.body,
        },
        timing.requestTimeoutMs,
        signal,
      );
      return genericOutcome(answer, Date.now());
    },
  };
}
