// Who may export to the OTLP receivers: the ingest token, a service token or an OIDC identity with
// the `ingest` (or `admin`) role. Both transports ask the same function with the request's
// `authorization` header and where the request came from; refusals are counted by reason and slowed
// per client (the connection's address, or a trusted proxy's X-Forwarded-For), admissions counted by
// role (never by token).
import type { Logger } from '../../log/logger.ts';
import type { HubMetrics } from '../../metrics/hub-metrics.ts';
import { admit } from '../../security/admission.ts';
import type { Authenticator } from '../../security/authenticator.ts';
import { ClientAddresses } from '../../security/client-address.ts';
import type { FailedAuthThrottle } from '../../security/failed-auth-throttle.ts';
import { ingestibleWorkspaces } from '../../security/roles.ts';

export interface OtlpAccess {
  readonly authenticator: Authenticator;
  readonly throttle: FailedAuthThrottle;
  /** Which address is the client's (--trusted-proxies); without it, the connection's. */
  readonly clientAddresses?: ClientAddresses;
}

/** Where a request came from: the connection's address and the X-Forwarded-For header, if any. */
export interface Peer {
  readonly address: string;
  readonly forwardedFor: string | undefined;
}

export type IngestVerdict =
  /** `workspaces`: those whose reports the sender may send; undefined for every one. */
  | { readonly kind: 'admitted'; readonly workspaces: readonly string[] | undefined }
  | { readonly kind: 'unauthenticated' | 'forbidden'; readonly message: string };

/** Judges one export request; undefined when the door is open (no check at all on the hot path). */
export type IngestGate = (header: string | undefined, peer: Peer, transport: 'grpc' | 'http') => Promise<IngestVerdict>;

export function ingestGate(access: OtlpAccess, metrics: HubMetrics, log: Logger): IngestGate | undefined {
  if (!access.authenticator.requires('ingest')) return undefined;
  const addresses = access.clientAddresses ?? new ClientAddresses();
  return async (header, peer, transport) => {
    const admission = await admit(access.authenticator, 'ingest', 'ingest', header);
    if (admission.kind === 'admitted') {
      metrics.admittedRequests.inc({ door: 'ingest', role: admission.role, via: admission.principal.via });
      log.debug({ transport, who: admission.principal.name, via: admission.principal.via, role: admission.role }, 'OTLP export admitted');
      return { kind: 'admitted', workspaces: ingestibleWorkspaces(admission.principal) };
    }
    if (admission.kind === 'forbidden') {
      metrics.refusedRequests.inc({ door: 'ingest', reason: 'forbidden' });
      log.info({ transport, who: admission.principal.name }, 'OTLP export forbidden');
      return { kind: 'forbidden', message: admission.message };
    }
    metrics.refusedRequests.inc({ door: 'ingest', reason: admission.reason });
    const client = addresses.clientOf(peer.address, peer.forwardedFor);
    const delayMs = await access.throttle.failed(client);
    log.info({ transport, client, reason: admission.reason, delayMs }, 'OTLP export unauthenticated');
    return { kind: 'unauthenticated', message: admission.reason === 'missing' || admission.reason === 'unknown_token' ? 'missing or wrong bearer token' : admission.message };
  };
}
