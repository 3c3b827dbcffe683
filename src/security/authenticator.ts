// One place that turns a presented credential into a principal, for every door of the hub (the
// API, the gate, OTLP over HTTP and gRPC): the two shared tokens of small installs, the named
// service tokens of --service-tokens, and bearer JWTs from the issuers of --auth-config. Which kind
// a token is shows in its shape: a JWT is three base64url parts whose payload names an issuer;
// anything else is compared, in constant time, with the shared and the named tokens.
import { decodeJwt, errors as joseErrors } from 'jose';
import type { AuthConfig, IssuerConfig } from './auth-config-file.ts';
import { bearerTokenMatches } from './bearer-token.ts';
import { principalFromClaims } from './claim-mapping.ts';
import { OIDC_TUNING, OidcIssuer, type OidcTuning } from './oidc-issuer.ts';
import type { Principal, Role } from './roles.ts';
import type { ServiceTokens } from './service-tokens.ts';
import { trimmed } from './auth-config-file.ts';

/** The hub's doors: each closes when a credential for it is configured. */
export type Door = 'api' | 'ingest';

/** Why a credential was refused, as metrics label it (a few fixed values). */
export type RefusalReason = 'missing' | 'unknown_token' | 'untrusted_issuer' | 'expired' | 'audience' | 'signature' | 'invalid_token' | 'issuer_unreachable';

export type Authentication = { readonly kind: 'ok'; readonly principal: Principal } | { readonly kind: 'refused'; readonly reason: RefusalReason; readonly message: string };

export interface AuthenticatorOptions {
  /** --api-token: the shared token of small installs; it reads and asks the gate, every workspace. */
  readonly apiTokens?: readonly string[] | undefined;
  /** --ingest-token: the shared token collectors and agents send. */
  readonly ingestTokens?: readonly string[] | undefined;
  readonly serviceTokens?: ServiceTokens | undefined;
  readonly auth?: AuthConfig | undefined;
  readonly oidcTuning?: Partial<OidcTuning>;
}

const SHARED_API: Omit<Principal, 'name'> = { via: 'token', roles: new Set<Role>(['viewer', 'pipeline']), workspaces: 'all', ingestWorkspaces: [] };
const SHARED_INGEST: Omit<Principal, 'name'> = { via: 'token', roles: new Set<Role>(['ingest']), workspaces: [], ingestWorkspaces: 'all' };
/** Where nothing is configured for a door, everyone may use it, as before identities existed. */
export const ANONYMOUS: Principal = {
  via: 'anonymous',
  name: 'anonymous',
  roles: new Set<Role>(['viewer', 'pipeline', 'ingest']),
  workspaces: 'all',
  ingestWorkspaces: 'all',
};

export class Authenticator {
  readonly #options: AuthenticatorOptions;
  readonly #issuers: ReadonlyMap<string, { readonly config: IssuerConfig; readonly oidc: OidcIssuer }>;
  readonly #clockToleranceMs: number;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
    const tuning = { ...OIDC_TUNING, ...options.oidcTuning };
    this.#issuers = new Map((options.auth?.issuers ?? []).map((config) => [trimmed(config.issuer), { config, oidc: new OidcIssuer(config.issuer, tuning) }]));
    this.#clockToleranceMs = options.auth?.clockTolerance ?? 60_000;
  }

  /** Whether the door asks for a credential; an open door lets everyone in as ANONYMOUS. */
  requires(door: Door): boolean {
    const own = door === 'api' ? this.#options.apiTokens : this.#options.ingestTokens;
    return own !== undefined || this.#options.serviceTokens !== undefined || this.#issuers.size > 0;
  }

  /** The issuer a web sign-in goes through (it is one of the trusted issuers). */
  issuer(issuer: string): OidcIssuer | undefined {
    return this.#issuers.get(trimmed(issuer))?.oidc;
  }

  /**
   * The principal behind an `authorization` header (`Bearer <token>`) at a door, or why there is
   * none. The shared tokens open only their own door (an ingest token is unknown at the API, and the
   * reverse); named tokens and identities are judged by their roles after.
   */
  async authenticate(header: string | undefined, door: Door): Promise<Authentication> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(header?.trim() ?? '')?.[1];
    if (token === undefined) return refused('missing', 'missing bearer token: send authorization: Bearer <token>');
    const issuer = this.#issuers.size > 0 ? issuerOf(token) : undefined;
    if (issuer !== undefined) return await this.#verifyJwt(token, issuer);
    return this.#matchToken(token, door);
  }

  /** The claims of a JWT from a trusted issuer, mapped to a principal (also for web sign-in's ID tokens). */
  async verifiedPrincipal(token: string, via: 'oidc' | 'session', audience?: readonly string[]): Promise<Authentication> {
    const issuer = issuerOf(token);
    if (issuer === undefined) return refused('invalid_token', 'not a JWT naming its issuer');
    return await this.#verifyJwt(token, issuer, via, audience);
  }

  #matchToken(token: string, door: Door): Authentication {
    const shared = door === 'api' ? this.#options.apiTokens : this.#options.ingestTokens;
    // Both lists are compared whole, whatever matched: no early exit tells which kind it was.
    const sharedMatch = shared !== undefined && bearerTokenMatches(`Bearer ${token}`, shared);
    const named = this.#options.serviceTokens?.match(token);
    // A token's workspaces hold for each of its roles: what it reads and what it may send.
    if (named !== undefined) {
      return { kind: 'ok', principal: { via: 'token', name: named.name, roles: named.roles, workspaces: named.workspaces, ingestWorkspaces: named.workspaces } };
    }
    if (sharedMatch) return { kind: 'ok', principal: door === 'api' ? { ...SHARED_API, name: 'api-token' } : { ...SHARED_INGEST, name: 'ingest-token' } };
    return refused('unknown_token', 'wrong bearer token');
  }

  async #verifyJwt(token: string, issuer: string, via: 'oidc' | 'session' = 'oidc', audience?: readonly string[]): Promise<Authentication> {
    const trusted = this.#issuers.get(trimmed(issuer));
    if (trusted === undefined) return refused('untrusted_issuer', `issuer ${JSON.stringify(issuer)} is not trusted (--auth-config issuers)`);
    try {
      const claims = await trusted.oidc.verify(token, audience ?? trusted.config.audience, this.#clockToleranceMs);
      return { kind: 'ok', principal: principalFromClaims(trusted.config, claims, via) };
    } catch (error) {
      return refusalOf(error, issuer);
    }
  }
}

function refused(reason: RefusalReason, message: string): Authentication {
  return { kind: 'refused', reason, message };
}

/** The `iss` of a token shaped as a JWT (not yet verified: it only picks the keys to verify with). */
function issuerOf(token: string): string | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** jose's verdict in the words an operator needs, naming the claim that failed; never the token. */
function refusalOf(error: unknown, issuer: string): Authentication {
  if (error instanceof joseErrors.JWTExpired) return refused('expired', 'token expired (exp)');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const reason = error.claim === 'aud' ? 'audience' : 'invalid_token';
    return refused(reason, `token refused: claim ${error.claim} ${error.reason === 'check_failed' ? 'does not match' : error.reason}`);
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return refused('signature', `token not signed by a key of ${issuer}`);
  }
  if (error instanceof joseErrors.JOSEError) return refused('invalid_token', `token refused: ${error.code}`);
  return refused('issuer_unreachable', `could not fetch the keys of ${issuer}: ${(error as Error).message}`);
}
