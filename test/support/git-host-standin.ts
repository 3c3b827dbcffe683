// Stand-ins for the REST APIs the hub reports to, on one local HTTP server, speaking each API's
// shapes as their documentation gives them (docs/research/*-commit-statuses.md): GitHub's commit
// statuses (/github/…, with its rate-limit answers), GitLab's (/gitlab/api/v4/…, refusing a
// `running` over a `running` as GitLab does), Azure DevOps' Git statuses (/azure/…), and a webhook
// receiver (/hooks/…) that checks each event's signature. Every request is recorded with its time;
// faults are planned per route.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Provider = 'github' | 'gitlab' | 'azure';

export interface PostedStatus {
  readonly provider: Provider;
  /** owner/repo (GitHub), project path (GitLab), org/project/repo (Azure DevOps). */
  readonly repo: string;
  readonly commit: string;
  readonly context: string;
  readonly state: string;
  readonly description: string;
  readonly targetUrl: string;
  readonly ref?: string;
  readonly at: number;
}

export interface ReceivedEvent {
  readonly hook: string;
  readonly body: string;
  readonly event: Record<string, any>;
  readonly contentType: string;
  readonly signatureValid: boolean;
  /** What the stand-in answered: 202, 401 on a bad signature, or a planned fault. */
  readonly answered: number;
  readonly at: number;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly at: number;
}

/** An answer to give instead of the normal one. */
export interface PlannedAnswer {
  /** Only for a request whose body contains this (other requests pass it by). */
  readonly onlyIf?: string;
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

export class GitHostStandIn {
  readonly statuses: PostedStatus[] = [];
  readonly events: ReceivedEvent[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Tokens each provider accepts; webhook secrets by hook name. */
  readonly tokens = new Map<Provider, string>();
  readonly secrets = new Map<string, string>();
  readonly #planned = new Map<string, PlannedAnswer[]>();
  readonly #delays = new Map<string, number>();
  readonly #limits = new Map<string, { max: number; perMs: number; times: number[] }>();
  #server: Server | undefined;

  get url(): string {
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  /** The next `answers` requests of `route` (`github:post`, `gitlab:post`, `azure:post`, `hook:<name>`, `*:get`) get these answers. */
  plan(route: string, ...answers: PlannedAnswer[]): void {
    this.#planned.set(route, [...(this.#planned.get(route) ?? []), ...answers]);
  }

  /** The next request of `route` is handled as usual (a status recorded) but answered only after `ms`: a sender may be gone by then. */
  delayNext(route: string, ms: number): void {
    this.#delays.set(route, ms);
  }

  /** A secondary rate limit on `route`: more than `max` requests within `perMs` get 403 with Retry-After, as GitHub answers. */
  rateLimit(route: string, max: number, perMs: number): void {
    this.#limits.set(route, { max, perMs, times: [] });
  }

  async start(): Promise<void> {
    this.#server = createServer((request, response) => void this.#handle(request, response));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  /** The statuses of a commit and context as the provider shows them, oldest first. */
  shown(provider: Provider, commit: string, context: string): PostedStatus[] {
    return this.statuses.filter((status) => status.provider === provider && status.commit === commit && status.context === context);
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = decodeURIComponent(new URL(request.url!, 'http://x').pathname);
    const at = Date.now();
    this.requests.push({ method: request.method!, path, authorization: request.headers.authorization ?? (request.headers['private-token'] as string | undefined), at });
    const route = routeOf(request.method!, path);
    const delay = route === undefined ? undefined : this.#delays.get(route);
    if (delay !== undefined) this.#delays.delete(route!);
    const answer = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      const write = (): void => {
        if (response.destroyed) return;
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(JSON.stringify(value));
      };
      if (delay === undefined) write();
      else setTimeout(write, delay);
    };
    const planned = route === undefined ? undefined : (this.#takePlanned(route, body) ?? this.#takePlanned(`*:${request.method!.toLowerCase()}`, body));
    const limited = route === undefined ? undefined : this.#limited(route, at);
    if (limited !== undefined) {
      return answer(403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' }, { 'retry-after': String(limited) });
    }
    if (path.startsWith('/hooks/')) return this.#hook(path.slice('/hooks/'.length), body, request, answer, at, planned);
    if (planned !== undefined) return answer(planned.status, planned.body ?? { message: `planned ${planned.status}` }, planned.headers);
    const matched = matchStatusPath(path);
    if (matched === undefined) return answer(404, { message: 'Not Found' });
    if (!this.#authorized(matched.provider, request)) return answer(401, { message: 'Bad credentials' });
    if (request.method === 'GET') return answer(200, this.#list(matched.provider, matched.repo, matched.commit));
    this.#post(matched.provider, matched.repo, matched.commit, JSON.parse(body) as Record<string, any>, answer, at);
  }

  /** Seconds to wait, when `route` is over its rate limit at `at`. */
  #limited(route: string, at: number): number | undefined {
    const limit = this.#limits.get(route);
    if (limit === undefined) return undefined;
    limit.times = limit.times.filter((time) => time > at - limit.perMs);
    if (limit.times.length >= limit.max) return Math.ceil((limit.times[0]! + limit.perMs - at) / 1_000);
    limit.times.push(at);
    return undefined;
  }

  #takePlanned(route: string, body: string): PlannedAnswer | undefined {
    const planned = this.#planned.get(route) ?? [];
    const index = planned.findIndex((answer) => answer.onlyIf === undefined || body.includes(answer.onlyIf));
    return index < 0 ? undefined : planned.splice(index, 1)[0];
  }

  #authorized(provider: Provider, request: IncomingMessage): boolean {
    const token = this.tokens.get(provider);
    if (token === undefined) return true;
    if (provider === 'github') return request.headers.authorization === `Bearer ${token}`;
    if (provider === 'gitlab') return request.headers['private-token'] === token;
    return request.headers.authorization === `Basic ${Buffer.from(`:${token}`).toString('base64')}`;
  }

  #list(provider: Provider, repo: string, commit: string): unknown {
    const mine = this.statuses.filter((status) => status.provider === provider && status.repo === repo && status.commit === commit);
    if (provider === 'github') return mine.toReversed().map((status) => ({ context: status.context, state: status.state, description: status.description, target_url: status.targetUrl }));
    if (provider === 'gitlab') return mine.map((status, id) => ({ id: id + 1, name: status.context, status: status.state, description: status.description, target_url: status.targetUrl }));
    return { value: mine.toReversed().map((status) => ({ state: status.state, description: status.description, targetUrl: status.targetUrl, context: JSON.parse(status.context) })) };
  }

  #post(provider: Provider, repo: string, commit: string, body: Record<string, any>, answer: (status: number, value: unknown) => void, at: number): void {
    if (provider === 'github') {
      if (typeof body.description === 'string' && body.description.length > 140) return answer(422, { message: 'Validation Failed', errors: [{ field: 'description' }] });
      this.statuses.push({ provider, repo, commit, context: body.context, state: body.state, description: body.description, targetUrl: body.target_url, at });
      return answer(201, { id: this.statuses.length, state: body.state, context: body.context });
    }
    if (provider === 'gitlab') {
      const last = this.shown('gitlab', commit, body.name).at(-1);
      // GitLab's job state machine: a status already running (or pending) cannot be "run" again.
      if (last !== undefined && last.state === body.state && (body.state === 'running' || body.state === 'pending')) {
        return answer(400, { message: `Cannot transition status via :run from :${body.state} (Reason(s): Status cannot transition via "run".)` });
      }
      this.statuses.push({ provider, repo, commit, context: body.name, state: body.state, description: body.description, targetUrl: body.target_url, ref: body.ref, at });
      return answer(201, { id: this.statuses.length, status: body.state, name: body.name });
    }
    this.statuses.push({ provider, repo, commit, context: JSON.stringify(body.context), state: body.state, description: body.description, targetUrl: body.targetUrl, at });
    answer(201, { id: this.statuses.length, state: body.state, context: body.context });
  }

  #hook(
    name: string,
    body: string,
    request: IncomingMessage,
    answer: (status: number, value: unknown, headers?: Record<string, string>) => void,
    at: number,
    planned: PlannedAnswer | undefined,
  ): void {
    const secret = this.secrets.get(name) ?? '';
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    const given = Buffer.from(String(request.headers['x-kalypso-signature-256'] ?? ''));
    const signatureValid = given.length === expected.length && timingSafeEqual(given, expected);
    const answered = planned?.status ?? (signatureValid ? 202 : 401);
    this.events.push({ hook: name, body, event: JSON.parse(body) as Record<string, any>, contentType: String(request.headers['content-type']), signatureValid, answered, at });
    answer(answered, planned?.body ?? { accepted: signatureValid }, planned?.headers);
  }
}

function routeOf(method: string, path: string): string | undefined {
  if (path.startsWith('/hooks/')) return `hook:${path.slice('/hooks/'.length)}`;
  const matched = matchStatusPath(path);
  return matched === undefined ? undefined : `${matched.provider}:${method.toLowerCase()}`;
}

/** Which provider's statuses a path is about, of which repository and commit. */
function matchStatusPath(path: string): { provider: Provider; repo: string; commit: string } | undefined {
  let found = /^\/github\/repos\/([^/]+\/[^/]+)\/(?:statuses|commits)\/([0-9a-f]{40})(?:\/statuses)?$/.exec(path);
  if (found !== null) return { provider: 'github', repo: found[1]!, commit: found[2]! };
  found = /^\/gitlab\/api\/v4\/projects\/(.+?)\/(?:statuses|repository\/commits)\/([0-9a-f]{40})(?:\/statuses)?$/.exec(path);
  if (found !== null) return { provider: 'gitlab', repo: found[1]!, commit: found[2]! };
  found = /^\/azure\/([^/]+\/[^/]+)\/_apis\/git\/repositories\/([^/]+)\/commits\/([0-9a-f]{40})\/statuses$/.exec(path);
  if (found !== null) return { provider: 'azure', repo: `${found[1]}/${found[2]}`, commit: found[3]! };
  return undefined;
}
