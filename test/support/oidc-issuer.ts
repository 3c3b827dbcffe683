// A real OpenID Connect provider (the `oidc-provider` package, a certified implementation) over
// HTTPS on 127.0.0.1 with the suite's test certificate: discovery, JWKS, the token endpoint
// (client credentials for CI-style tokens, authorization code + PKCE for people, with the package's
// own login and consent pages). Its signing keys can be rotated: the provider is rebuilt with a new
// key at the same address, as an identity provider rolling its keys looks from outside.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { testTls } from './global-tls.ts';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  readonly jwk: JWK;
}

export interface TestIssuerOptions {
  /** Confidential clients minting tokens for themselves (client credentials), with the claims their tokens carry. */
  readonly machines?: Readonly<Record<string, { readonly secret: string; readonly claims: JWTPayload }>>;
  /** The web UI's client (public: PKCE alone), its redirect URI and where sign-out may return to. */
  readonly webClient?: { readonly clientId: string; readonly redirectUri: string; readonly postLogoutRedirectUri?: string };
  /** How long the ID tokens it issues live (asked at each issue; default the provider's hour). */
  readonly idTokenSeconds?: () => number;
  /** Claims of the people who sign in, by login name (the dev login page takes any name). */
  readonly people?: Readonly<Record<string, JWTPayload>>;
  /** The audience the provider's access tokens carry. */
  readonly audience: string;
}

export interface TestIssuer {
  readonly issuer: string;
  readonly key: SigningKey;
  /** A token signed with the issuer's current key (or `key`), with the claims given over sane defaults. */
  sign(claims: JWTPayload, options?: { key?: SigningKey; expiresInSeconds?: number; issuedAgoSeconds?: number }): Promise<string>;
  /** A token from the provider's own token endpoint (client credentials). */
  clientCredentials(clientId: string): Promise<string>;
  /** Serves a new signing key from now on (the old one is gone from the JWKS). */
  rotate(): Promise<SigningKey>;
  close(): Promise<void>;
}

/** The resource indicator (RFC 8707) the hub is known by at the provider; its tokens' `aud` is the configured audience. */
const RESOURCE = 'https://kalypso-hub.test/';

export async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `k-${Math.random().toString(36).slice(2, 10)}`;
  return { kid, privateKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

export async function startTestIssuer(options: TestIssuerOptions): Promise<TestIssuer> {
  const { certFile, keyFile } = await testTls();
  // Replaced by the provider's once the address (its issuer) is known.
  let handler: ReturnType<Provider['callback']> = (_req, res) => {
    res.end();
    return Promise.resolve();
  };
  const server: Server = createServer({ cert: await readFile(certFile), key: await readFile(keyFile) }, (req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let key = await newSigningKey();
  handler = providerFor(issuer, key, options).callback();
  const self: TestIssuer = {
    issuer,
    get key() {
      return key;
    },
    sign: async (claims, signOptions = {}) => {
      const signing = signOptions.key ?? key;
      const now = Math.floor(Date.now() / 1000) - (signOptions.issuedAgoSeconds ?? 0);
      return await new SignJWT({ iss: issuer, aud: options.audience, sub: 'someone', iat: now, exp: now + (signOptions.expiresInSeconds ?? 300), ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: signing.kid, typ: 'JWT' })
        .sign(signing.privateKey);
    },
    clientCredentials: async (clientId) => {
      const secret = options.machines?.[clientId]?.secret ?? '';
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: RESOURCE, scope: 'api' }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (body.access_token === undefined) throw new Error(`token endpoint: ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    rotate: async () => {
      key = await newSigningKey();
      handler = providerFor(issuer, key, options).callback();
      return key;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return self;
}

function providerFor(issuer: string, key: SigningKey, options: TestIssuerOptions): Provider {
  const machines = Object.entries(options.machines ?? {});
  const provider = new Provider(issuer, {
    jwks: { keys: [key.jwk] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    clients: [
      ...machines.map(([clientId, machine]): ClientMetadata => ({
        client_id: clientId,
        client_secret: machine.secret,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      ...(options.webClient === undefined
        ? []
        : [
            {
              client_id: options.webClient.clientId,
              token_endpoint_auth_method: 'none',
              grant_types: ['authorization_code'],
              response_types: ['code'],
              redirect_uris: [options.webClient.redirectUri],
              ...(options.webClient.postLogoutRedirectUri === undefined ? {} : { post_logout_redirect_uris: [options.webClient.postLogoutRedirectUri] }),
            } satisfies ClientMetadata,
          ]),
    ],
    claims: { openid: ['sub'], profile: ['name', 'groups'], email: ['email'] },
    ...(options.idTokenSeconds === undefined ? {} : { ttl: { IdToken: () => options.idTokenSeconds!() } }),
    scopes: ['openid', 'profile', 'email', 'api'],
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...(options.people?.[sub] ?? {}) }) }),
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'api', audience: options.audience, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    // The claims a CI system would put in its run's token (repository, branch, …), per client.
    extraTokenClaims: (_ctx, token) => (token.clientId === undefined ? undefined : options.machines?.[token.clientId]?.claims),
    // ID tokens carry the person's claims directly (the hub maps them without a userinfo call).
    conformIdTokenClaims: false,
  });
  return provider;
}
