// A stand-in for the parts of Azure the Resource Graph poller talks to, over HTTPS (the SDK sends
// bearer tokens over TLS only): Microsoft Entra token endpoints (OpenID metadata, client secret
// and client assertion grants), a managed identity endpoint (App Service style), and the Resource
// Graph `resources` API with $skipToken paging, per-user quota headers and injectable throttling.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface AzureRequest {
  readonly kind: 'metadata' | 'token' | 'managed-identity' | 'query' | 'other';
  readonly path: string;
  readonly status: number;
  readonly at: number;
  readonly body?: any;
}

export interface Throttle {
  /** Seconds for Retry-After; undefined sends a 429 without it. */
  readonly retryAfterSeconds?: number;
}

export class AzureStandIn {
  readonly requests: AzureRequest[] = [];
  /** Flux configuration rows the Resource Graph returns, whatever the subscription (table kubernetesconfigurationresources). */
  rows: unknown[] = [];
  /** Cluster resources — connectedClusters, managedClusters — whole, as ARM has them (table resources). */
  clusters: unknown[] = [];
  /** Service principals: client id → secret. */
  readonly clients = new Map<string, string>();
  /** Federated tokens accepted as client assertions (workload identity). */
  readonly assertions = new Set<string>();
  readonly identityHeader = randomBytes(8).toString('hex');
  /** Quota per window (x-ms-user-quota-remaining); a request beyond it is refused with 429. */
  #quota = { perWindow: 1_000, windowMs: 2_000 };
  readonly #throttles: Throttle[] = [];
  readonly #tokens = new Set<string>();
  #windowStart = 0;
  #windowUsed = 0;
  #server: Server | undefined;
  readonly #tls: { readonly cert: string; readonly key: string };

  /** `tls`: PEM certificate and key files, the certificate trusted by the client process. */
  constructor(tls: { readonly certFile: string; readonly keyFile: string }) {
    this.#tls = { cert: readFileSync(tls.certFile, 'utf8'), key: readFileSync(tls.keyFile, 'utf8') };
  }

  async start(): Promise<void> {
    this.#server = createServer(this.#tls, (request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'InternalError', message: String(error) } }));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
  }

  get url(): string {
    return `https://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  /** Sets the per-user quota, starting a fresh window. */
  setQuota(perWindow: number, windowMs: number): void {
    this.#quota = { perWindow, windowMs };
    this.#windowStart = 0;
    this.#windowUsed = 0;
  }

  /** The next query requests are refused with 429, one per entry. */
  throttleNext(...throttles: Throttle[]): void {
    this.#throttles.push(...throttles);
  }

  count(kind: AzureRequest['kind'], status = 200): number {
    return this.requests.filter((request) => request.kind === kind && request.status === status).length;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    const body = await readBody(request);
    const reply = (kind: AzureRequest['kind'], status: number, payload: unknown, headers: Record<string, string> = {}, parsed?: unknown): void => {
      this.requests.push({ kind, path: url.pathname, status, at: Date.now(), body: parsed });
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(payload));
    };

    const metadata = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    if (metadata !== null) {
      const tenant = metadata[1];
      return reply('metadata', 200, {
        token_endpoint: `${this.url}/${tenant}/oauth2/v2.0/token`,
        authorization_endpoint: `${this.url}/${tenant}/oauth2/v2.0/authorize`,
        issuer: `${this.url}/${tenant}/v2.0`,
        jwks_uri: `${this.url}/${tenant}/discovery/v2.0/keys`,
        response_types_supported: ['code', 'id_token', 'token'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        tenant_region_scope: 'WW',
      });
    }

    if (/^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname) && request.method === 'POST') {
      const form = new URLSearchParams(body);
      const clientId = form.get('client_id') ?? '';
      const secret = form.get('client_secret');
      const assertion = form.get('client_assertion');
      const valid = secret !== null ? this.clients.get(clientId) === secret : assertion !== null && this.assertions.has(assertion);
      if (!valid) {
        return reply('token', 401, {
          error: 'invalid_client',
          error_description: 'AADSTS7000215: Invalid client secret provided.',
          error_codes: [7000215],
        });
      }
      return reply('token', 200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: this.#issue() });
    }

    if (url.pathname === '/msi/token') {
      if (request.headers['x-identity-header'] !== this.identityHeader) return reply('managed-identity', 401, { error: 'unauthorized' });
      return reply('managed-identity', 200, {
        access_token: this.#issue(),
        expires_on: String(Math.floor(Date.now() / 1_000) + 3_600),
        resource: url.searchParams.get('resource'),
        token_type: 'Bearer',
        client_id: url.searchParams.get('client_id') ?? 'system-assigned',
      });
    }

    if (url.pathname.toLowerCase() === '/providers/microsoft.resourcegraph/resources' && request.method === 'POST') {
      const token = (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      const parsed = JSON.parse(body) as { subscriptions?: string[]; query?: string; options?: Record<string, unknown> };
      if (!this.#tokens.has(token)) return reply('query', 401, { error: { code: 'InvalidAuthenticationToken', message: 'bad token' } }, {}, parsed);
      const quota = this.#useQuota();
      const throttle = this.#throttles.shift();
      if (throttle !== undefined || quota.remaining < 0) {
        const headers: Record<string, string> = { 'x-ms-user-quota-remaining': '0', 'x-ms-user-quota-resets-after': quota.resetsAfter };
        if (throttle?.retryAfterSeconds !== undefined) headers['retry-after'] = String(throttle.retryAfterSeconds);
        return reply('query', 429, { error: { code: 'RateLimiting', message: 'Please provide below info when asking for support' } }, headers, parsed);
      }
      let ordered: unknown[];
      try {
        ordered = runQuery(parsed.query ?? '', { kubernetesconfigurationresources: this.rows, resources: this.clusters });
      } catch (error) {
        return reply('query', 400, { error: { code: 'BadRequest', message: (error as Error).message } }, {}, parsed);
      }
      const top = Math.min(Number(parsed.options?.['$top'] ?? 100), 1_000);
      const skipToken = parsed.options?.['$skipToken'];
      const offset = typeof skipToken === 'string' ? Number(Buffer.from(skipToken, 'base64').toString('utf8')) : 0;
      const page = ordered.slice(offset, offset + top);
      const next = offset + top < ordered.length ? Buffer.from(String(offset + top)).toString('base64') : undefined;
      return reply(
        'query',
        200,
        {
          totalRecords: ordered.length,
          count: page.length,
          resultTruncated: 'false',
          ...(next === undefined ? {} : { $skipToken: next }),
          data: page,
        },
        { 'x-ms-user-quota-remaining': String(quota.remaining), 'x-ms-user-quota-resets-after': quota.resetsAfter },
        parsed,
      );
    }

    return reply('other', 404, { error: { code: 'NotFound', message: url.pathname } });
  }

  #issue(): string {
    const token = randomBytes(16).toString('hex');
    this.#tokens.add(token);
    return token;
  }

  #useQuota(): { remaining: number; resetsAfter: string } {
    const now = Date.now();
    if (now - this.#windowStart >= this.#quota.windowMs) {
      this.#windowStart = now;
      this.#windowUsed = 0;
    }
    this.#windowUsed += 1;
    const left = Math.max(0, this.#quota.windowMs - (now - this.#windowStart));
    const seconds = Math.ceil(left / 1_000);
    return {
      remaining: this.#quota.perWindow - this.#windowUsed,
      resetsAfter: `00:00:${String(seconds).padStart(2, '0')}`,
    };
  }
}

/**
 * The part of the Kusto Query Language the hub's queries use, over whole resource rows: a table,
 * `where type == '…'` / `where type in~ ('…', …)`, `project` of columns and paths (`a = properties.x.y`,
 * missing values null as in Resource Graph), and `order by id asc`. Anything else is refused, so a
 * query the stand-in does not understand fails the test instead of answering something.
 */
function runQuery(query: string, tables: Record<string, unknown[]>): unknown[] {
  const [table = '', ...operators] = query.split('|').map((part) => part.trim());
  const source = tables[table.toLowerCase()];
  if (source === undefined) throw new Error(`unknown table ${table}`);
  let rows = source.map((row) => row as Record<string, unknown>);
  for (const operator of operators) {
    let match: RegExpExecArray | null;
    if ((match = /^where type == '([^']*)'$/i.exec(operator)) !== null) {
      const type = match[1]!;
      rows = rows.filter((row) => row['type'] === type);
    } else if ((match = /^where type in~ \((.*)\)$/i.exec(operator)) !== null) {
      const types = [...match[1]!.matchAll(/'([^']*)'/g)].map((quoted) => quoted[1]!.toLowerCase());
      rows = rows.filter((row) => types.includes(String(row['type']).toLowerCase()));
    } else if ((match = /^project (.+)$/i.exec(operator)) !== null) {
      const columns = match[1]!.split(',').map((column) => {
        const [name, path] = column.includes('=') ? column.split('=').map((part) => part.trim()) : [column.trim().split('.').pop()!, column.trim()];
        return [name!, path!.split('.')] as const;
      });
      rows = rows.map((row) =>
        Object.fromEntries(columns.map(([name, path]) => [name, path.reduce<unknown>((value, key) => (value as Record<string, unknown> | null | undefined)?.[key] ?? null, row)])),
      );
    } else if (/^order by id asc$/i.test(operator)) {
      rows = [...rows].sort((a, b) => String(a['id']).localeCompare(String(b['id'])));
    } else {
      throw new Error(`the stand-in does not understand "${operator}"`);
    }
  }
  return rows;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
