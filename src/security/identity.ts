// The hub's identities, made once at start from its settings: the shared tokens, the service-token
// file (watched from then on) and the trusted issuers. A mistake in either file stops start-up
// naming the field; the authenticator and the failed-authentication throttle are shared by every
// door, so a client guessing at OTLP is slowed at the API too.
import type { Logger } from '../log/logger.ts';
import { type AuthConfig, loadAuthConfig } from './auth-config-file.ts';
import { Authenticator } from './authenticator.ts';
import { FailedAuthThrottle, type FailedAuthTuning } from './failed-auth-throttle.ts';
import type { OidcTuning } from './oidc-issuer.ts';
import { ServiceTokens, type ServiceTokensTuning } from './service-tokens.ts';

export interface IdentityConfig {
  readonly apiToken: readonly string[] | undefined;
  readonly ingestToken: readonly string[] | undefined;
  readonly serviceTokens: string | undefined;
  readonly authConfig: string | undefined;
}

export interface IdentityTuning {
  readonly oidc?: Partial<OidcTuning>;
  readonly serviceTokens?: Partial<ServiceTokensTuning>;
  readonly failedAuth?: Partial<FailedAuthTuning>;
}

export interface Identity {
  readonly authenticator: Authenticator;
  readonly throttle: FailedAuthThrottle;
  /** The --auth-config file, checked (its sign-in section configures the web UI's). */
  readonly auth: AuthConfig | undefined;
  close(): void;
}

export async function loadIdentity(config: IdentityConfig, log: Logger, tuning: IdentityTuning = {}): Promise<Identity> {
  const auth = config.authConfig === undefined ? undefined : await loadAuthConfig(config.authConfig);
  const serviceTokens = config.serviceTokens === undefined ? undefined : await ServiceTokens.load(config.serviceTokens, log, tuning.serviceTokens);
  const authenticator = new Authenticator({
    apiTokens: config.apiToken,
    ingestTokens: config.ingestToken,
    serviceTokens,
    auth,
    ...(tuning.oidc === undefined ? {} : { oidcTuning: tuning.oidc }),
  });
  if (auth !== undefined) log.info({ issuers: auth.issuers.map((issuer) => issuer.issuer), signIn: auth.signIn?.issuer ?? null }, 'trusted OpenID Connect issuers');
  return { authenticator, throttle: new FailedAuthThrottle(tuning.failedAuth), auth, close: () => serviceTokens?.close() };
}
