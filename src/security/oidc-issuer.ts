// One trusted OpenID Connect issuer: its discovery document (`/.well-known/openid-configuration`:
// the JWKS location, and for sign-in the authorization and token endpoints) and its signing keys.
// Keys come from jose's remote JWKS, which fetches them again when a token names a key it does not
// have (the provider rotated), at most once per cool-down.
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { trimmed } from './auth-config-file.ts';

export interface Discovery {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  /** Where sign-out ends the provider's session (RP-Initiated Logout 1.0, 2.1), if it offers that. */
  readonly end_session_endpoint?: string;
}

export const OIDC_TUNING = {
  /** After fetching the keys, no new fetch for this long, even for an unknown key (jose's cool-down). */
  jwksCooldownMs: 30_000,
  /** Keys are fetched again after this, whatever tokens name. */
  jwksMaxAgeMs: 10 * 60_000,
  /** A discovery that failed is tried again after this. */
  discoveryRetryMs: 30_000,
  /** Discovery and key requests give up after this. */
  requestTimeoutMs: 5_000,
} as const;
export type OidcTuning = { readonly [K in keyof typeof OIDC_TUNING]: number };

/** Only asymmetric signatures: the keys are public, so an HMAC "signed" with one proves nothing. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export class OidcIssuer {
  readonly issuer: string;
  readonly #tuning: OidcTuning;
  #discovered: Promise<{ discovery: Discovery; keys: ReturnType<typeof createRemoteJWKSet> }> | undefined;
  #failedAt = 0;

  constructor(issuer: string, tuning: OidcTuning) {
    this.issuer = trimmed(issuer);
    this.#tuning = tuning;
  }

  /** The discovery document, fetched once (again after a failure, past the retry interval). */
  async discovery(): Promise<Discovery> {
    return (await this.#discover()).discovery;
  }

  /**
   * The token's claims when it is signed by one of the issuer's keys, issued by it for one of
   * `audience`, and within its lifetime give or take `clockToleranceMs`; throws otherwise.
   */
  async verify(token: string, audience: readonly string[], clockToleranceMs: number): Promise<JWTPayload> {
    const { keys, discovery } = await this.#discover();
    const { payload } = await jwtVerify(token, keys, {
      issuer: [discovery.issuer, this.issuer],
      audience: [...audience],
      clockTolerance: Math.round(clockToleranceMs / 1_000),
      algorithms: ALGORITHMS,
      requiredClaims: ['exp', 'iat'],
    });
    return payload;
  }

  #discover(): Promise<{ discovery: Discovery; keys: ReturnType<typeof createRemoteJWKSet> }> {
    if (this.#discovered === undefined || (this.#failedAt > 0 && Date.now() - this.#failedAt > this.#tuning.discoveryRetryMs)) {
      this.#failedAt = 0;
      this.#discovered = this.#fetchDiscovery();
      this.#discovered.catch(() => {
        this.#failedAt = Date.now();
      });
    }
    return this.#discovered;
  }

  async #fetchDiscovery(): Promise<{ discovery: Discovery; keys: ReturnType<typeof createRemoteJWKSet> }> {
    const url = `${this.issuer}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(this.#tuning.requestTimeoutMs), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    const discovery = (await response.json()) as Partial<Discovery>;
    // The document must speak for the issuer it was asked for (OpenID Connect Discovery 1.0, 4.3).
    if (typeof discovery.issuer !== 'string' || trimmed(discovery.issuer) !== this.issuer) throw new Error(`${url}: names issuer ${String(discovery.issuer)}`);
    if (typeof discovery.jwks_uri !== 'string') throw new Error(`${url}: no jwks_uri`);
    const keys = createRemoteJWKSet(new URL(discovery.jwks_uri), {
      cooldownDuration: this.#tuning.jwksCooldownMs,
      cacheMaxAge: this.#tuning.jwksMaxAgeMs,
      timeoutDuration: this.#tuning.requestTimeoutMs,
    });
    return { discovery: discovery as Discovery, keys };
  }
}
