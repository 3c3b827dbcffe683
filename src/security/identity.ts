// The hub's identities, made once at start from its settings: the shared tokens, the service-token
// file (watched from then on) and the trusted issuers. A mistake in either file stops start-up
// naming the field; the authenticator and the failed-authentication throttle are shared by every
// door, so a client guessing at OTLP is slowed at the API too.
import { readFile } from 'node:fs/promises';
import type { Logger } from '../log/logger.ts';
import { AUTH_CONFIG_SETTING, type AuthConfig, loadAuthConfig, type SignInConfig } from './auth-config-file.ts';
import { Authenticator } from './authenticator.ts';
import { ClientAddresses } from './client-address.ts';
import { FailedAuthThrottle, type FailedAuthTuning } from './failed-auth-throttle.ts';
import type { OidcTuning } from './oidc-issuer.ts';
import type { SignIn } from './oidc-sign-in.ts';
import { ServiceTokens, type ServiceTokensTuning } from './service-tokens.ts';
import { MIN_SESSION_KEY_LENGTH, SessionSealer } from './session-cookie.ts';
import { documentError } from './yaml-document.ts';

export interface IdentityConfig {
  readonly apiToken: readonly string[] | undefined;
  readonly ingestToken: readonly string[] | undefined;
  readonly serviceTokens: string | undefined;
  readonly authConfig: string | undefined;
  readonly trustedProxies: readonly string[];
}

export interface IdentityTuning {
  readonly oidc?: Partial<OidcTuning>;
  readonly serviceTokens?: Partial<ServiceTokensTuning>;
  readonly failedAuth?: Partial<FailedAuthTuning>;
}

export interface Identity {
  readonly authenticator: Authenticator;
  readonly throttle: FailedAuthThrottle;
  /** Which address is a request's client, for the throttle and the logs (--trusted-proxies). */
  readonly clientAddresses: ClientAddresses;
  /** The --auth-config file, checked (its sign-in section configures the web UI's). */
  readonly auth: AuthConfig | undefined;
  /** The web UI's sign-in through the organisation's identity provider, when configured. */
  readonly signIn: SignIn | undefined;
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
  const signIn = auth?.signIn === undefined ? undefined : await loadSignIn(config.authConfig!, auth.signIn);
  const clientAddresses = new ClientAddresses(config.trustedProxies);
  return { authenticator, throttle: new FailedAuthThrottle(tuning.failedAuth), clientAddresses, auth, signIn, close: () => serviceTokens?.close() };
}

/** The sign-in's secrets from the files it names: a missing file or a short key stops start-up, naming the field. */
async function loadSignIn(file: string, config: SignInConfig): Promise<SignIn> {
  const read = async (field: string, path: string): Promise<string> => {
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw documentError(AUTH_CONFIG_SETTING, file, field, `${path}: ${error.code ?? error.message}`);
    });
    // A secret file's trailing newline is no part of the secret.
    return text.replace(/\r?\n$/, '');
  };
  const sessionKey = await read('signIn.sessionKeyFile', config.sessionKeyFile);
  if (sessionKey.length < MIN_SESSION_KEY_LENGTH) {
    throw documentError(AUTH_CONFIG_SETTING, file, 'signIn.sessionKeyFile', `the key must be at least ${MIN_SESSION_KEY_LENGTH} characters (e.g. openssl rand -base64 48)`);
  }
  const clientSecret = config.clientSecretFile === undefined ? undefined : await read('signIn.clientSecretFile', config.clientSecretFile);
  return { config, clientSecret, sealer: new SessionSealer(sessionKey) };
}
