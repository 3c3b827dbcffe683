// `kalypso-hub rollout`: the rollout gate for CD pipelines. Asks the hub whether commit C of
// manifests endpoint E — or of an environment's GitOps branch, every deployment target of the
// environment (Kalypso's Check Promote) — has been applied by every subscriber, waiting up to --wait.
//
// Exit codes: 0 every subscriber succeeded; 1 a subscriber failed (as soon as one fails);
// 2 not all succeeded within the wait (in progress, stale, or no subscribers yet);
// 3 could not ask (bad arguments, hub unreachable, hub refused the request).
import { parseArgs } from 'node:util';
import { describeArgvError } from '../config/argv-errors.ts';
import { formatDuration, parseDuration } from '../config/units.ts';
import { shownUrl } from '../http/fetch-failure.ts';
// The short form the web UI shows, so that a commit copied from either is the same text.
import { shortCommit } from '../ui/app/format.ts';
import { type Asked, askHub, isHttpUrl } from './ask-hub.ts';
import { GATE_MAX_PAGE_SIZE, GATE_PAGE_SIZE } from '../contract/routes/deployment-state.ts';
import type { RolloutState } from '../contract/answer-types.ts';
import type { Help } from './help-format.ts';
import { HELP_ENTRY } from './help-request.ts';

export const ROLLOUT_EXIT = { succeeded: 0, failed: 1, timedOut: 2, error: 3 } as const;

/** One request waits at most this long; longer waits are several requests, with progress between. */
const REQUEST_WAIT_MS = 30_000;
const RETRY_DELAY_MS = 2_000;
/**
 * Subscribers (and targets) a table lists: the counts and those holding the rollout up are what a
 * pipeline log needs, not the 80,000 rows of a large environment. --json keeps the hub's default.
 */
export const TABLE_LIMIT = 50;

/** The gate's answer, per manifests endpoint or per environment, as the contract gives it. */
type RolloutAnswer = RolloutState;

export const ROLLOUT_HELP: Help = {
  usage: [
    'kalypso-hub rollout --endpoint <repo/branch/path> --commit <sha> [--wait 10m] [options]',
    'kalypso-hub rollout --environment <env> --commit <sha> [--wait 10m] [options]',
  ],
  about:
    'The rollout gate for CD pipelines: asks the hub whether every subscriber has applied a GitOps commit, ' +
    'waiting up to --wait, and prints the counts and the subscribers, those holding the rollout up first.',
  sections: [
    {
      title: 'Options',
      entries: [
        { term: '--endpoint <repo/branch/path>', description: 'The manifests endpoint the CD pipeline changed.' },
        {
          term: '--environment <env>',
          description:
            'Every deployment target of this environment: the merged commit of its GitOps branch, applied (or a later commit) by every subscriber (Kalypso\'s Check Promote).',
        },
        { term: '--commit <sha>', description: 'The GitOps commit to wait for: the full id or a unique prefix of at least 7 hex digits.' },
        { term: '--wait <duration>', description: 'How long to wait for every subscriber, e.g. 30s or 10m (default 0: answer now).' },
        { term: '--url <url>', description: 'The hub\'s base URL (default $KALYPSO_URL, else http://localhost:8080).' },
        { term: '--token <token>', description: 'Bearer token for the API (default $KALYPSO_API_TOKEN).' },
        {
          term: '--limit <n>',
          description: `Subscribers (and targets) listed, those holding the rollout up first (default ${TABLE_LIMIT}; with --json the hub's default, ${GATE_PAGE_SIZE.toLocaleString('en')}).`,
        },
        { term: '--json', description: 'Print the hub\'s answer as JSON instead of a table.' },
        HELP_ENTRY,
      ],
    },
    {
      title: 'Exit codes',
      entries: [
        { term: '0', description: 'Every subscriber succeeded.' },
        { term: '1', description: 'A subscriber failed (as soon as one fails).' },
        { term: '2', description: 'Not all succeeded within the wait: in progress, stale, or no subscribers yet.' },
        { term: '3', description: 'Could not ask: bad arguments, the hub unreachable, or the hub refused the request.' },
      ],
    },
  ],
};

export async function runRollout(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const request = readRolloutRequest(argv, env);
  if ('usage' in request) return usageError(request.usage);
  const waited = await waitForRollout(request);
  if (waited.kind === 'failed') return failure(waited.reason);
  const { answer } = waited;
  const outcome = answer.failed > 0 ? 'failed' : answer.settled && answer.succeeded === answer.total ? 'succeeded' : 'timedOut';
  if (request.json) process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else process.stdout.write(`${table(answer)}\n\n${summary(answer)}: ${describeOutcome(outcome, answer, request.waitMs)}\n`);
  return ROLLOUT_EXIT[outcome];
}

const ROLLOUT_OPTIONS = {
  endpoint: { type: 'string' },
  environment: { type: 'string' },
  commit: { type: 'string' },
  wait: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  limit: { type: 'string' },
} as const;

/** What to ask the hub, read from the command line and the environment. */
interface RolloutRequest {
  readonly scope: { environment: string } | { manifestsEndpoint: string };
  readonly commit: string;
  readonly waitMs: number;
  /** The hub's base URL, without a trailing slash. */
  readonly base: string;
  readonly token: string | undefined;
  readonly json: boolean;
  /** Subscribers (and targets) to list; undefined: the hub's default. */
  readonly limit: number | undefined;
}

/** The request, or what is wrong with the arguments. */
function readRolloutRequest(argv: readonly string[], env: NodeJS.ProcessEnv): RolloutRequest | { usage: string } {
  let flags: { endpoint?: string; environment?: string; commit?: string; wait?: string; url?: string; token?: string; json?: boolean; limit?: string };
  try {
    flags = parseArgs({ args: [...argv], options: ROLLOUT_OPTIONS, strict: true }).values;
  } catch (error) {
    return { usage: describeArgvError(error, Object.keys(ROLLOUT_OPTIONS)) };
  }
  const endpoint = flags.endpoint === '' ? undefined : flags.endpoint;
  const environment = flags.environment === '' ? undefined : flags.environment;
  if ((endpoint === undefined) === (environment === undefined)) return { usage: 'give --endpoint or --environment (one of them)' };
  if (flags.commit === undefined || flags.commit === '') return { usage: '--commit is required' };
  const waitMs = flags.wait === undefined ? 0 : parseDuration(flags.wait);
  if (waitMs === undefined) return { usage: `--wait must be a duration such as 30s or 10m (got ${JSON.stringify(flags.wait)})` };
  const limit = flags.limit === undefined ? (flags.json === true ? undefined : TABLE_LIMIT) : Number(flags.limit);
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1 && limit <= GATE_MAX_PAGE_SIZE)) {
    return { usage: `--limit must be a whole number from 1 to ${GATE_MAX_PAGE_SIZE} (got ${JSON.stringify(flags.limit)})` };
  }
  const base = (flags.url ?? env.KALYPSO_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  if (!isHttpUrl(base)) return { usage: `--url must be an http:// or https:// URL (got ${JSON.stringify(base)})` };
  return {
    scope: endpoint === undefined ? { environment: environment! } : { manifestsEndpoint: endpoint },
    commit: flags.commit,
    waitMs,
    base,
    token: flags.token ?? env.KALYPSO_API_TOKEN,
    json: flags.json === true,
    limit,
  };
}

/**
 * Asks until the rollout settles, a subscriber fails or the wait is over, showing progress; rides out
 * an unreachable hub or its database being unavailable while there is time left.
 */
async function waitForRollout(request: RolloutRequest): Promise<{ kind: 'answered'; answer: RolloutAnswer } | { kind: 'failed'; reason: string }> {
  const deadline = Date.now() + request.waitMs;
  let answer: RolloutAnswer | undefined;
  for (;;) {
    // The first question is answered at once (so progress shows from the start); later ones wait.
    const remaining = answer === undefined ? 0 : Math.max(0, deadline - Date.now());
    const asked = await askRolloutGate(request, Math.min(remaining, REQUEST_WAIT_MS));
    if (asked.kind === 'unreachable') {
      if (Date.now() + RETRY_DELAY_MS >= deadline) return { kind: 'failed', reason: asked.reason };
      progress(`${asked.reason}; retrying`);
      await sleep(RETRY_DELAY_MS);
      continue;
    }
    if (asked.status === 503 && Date.now() + RETRY_DELAY_MS < deadline) {
      progress('hub database unavailable; retrying');
      await sleep(RETRY_DELAY_MS);
      continue;
    }
    if (!asked.ok) {
      const body = asked.body as { error?: { message?: string } } | undefined;
      return { kind: 'failed', reason: `the hub answered ${asked.status}: ${body?.error?.message ?? asked.statusText} (${shownUrl(asked.url)})` };
    }
    if (asked.body === undefined) return { kind: 'failed', reason: `${shownUrl(asked.url)} answered without JSON: is ${request.base} the hub?` };
    answer = asked.body as RolloutAnswer;
    if (answer.settled || answer.failed > 0 || Date.now() >= deadline) return { kind: 'answered', answer };
    progress(`${summary(answer)} — waiting up to ${formatDuration(Math.ceil((deadline - Date.now()) / 1_000) * 1_000)} more`);
  }
}

/** One question to the rollout gate, answered within `waitMs` (or at once when the rollout settles). */
function askRolloutGate(request: RolloutRequest, waitMs: number): Promise<Asked> {
  const query = new URLSearchParams({
    ...request.scope,
    commit: request.commit,
    wait: `${waitMs}ms`,
    ...(request.limit === undefined ? {} : { limit: String(request.limit) }),
  });
  return askHub(`${request.base}/api/v1/deployment-state?${query.toString()}`, request.token, waitMs + 30_000);
}

function summary(answer: RolloutAnswer): string {
  const where = 'environment' in answer ? `in environment ${answer.environment}` : `on ${answer.manifestsEndpoint}`;
  return (
    `commit ${answer.commit} ${where}: ${answer.succeeded}/${answer.total} succeeded, ` +
    `${answer.failed} failed, ${answer.inProgress} in progress, ${answer.stale} stale`
  );
}

function describeOutcome(outcome: 'succeeded' | 'failed' | 'timedOut', answer: RolloutAnswer, waitMs: number): string {
  if (outcome === 'succeeded') return 'rolled out';
  if (outcome === 'failed') return 'FAILED';
  // Without --wait nothing timed out: the hub was asked once, and saying so points at --wait.
  const why = waitMs === 0 ? 'asked once; --wait to wait for it' : 'timed out';
  return answer.total === 0 ? `no subscribers yet (${why})` : `not rolled out yet (${why})`;
}

function table(answer: RolloutAnswer): string {
  const subscribers = answer.subscribers.map((s) => [
    s.host,
    s.reconciler,
    s.status,
    shortCommit(s.appliedCommit),
    s.observedAt,
    s.statusMessage.replace(/\s+/g, ' ').slice(0, 100),
  ]);
  const listed =
    subscribers.length === 0
      ? `(no reconciler pulls ${'environment' in answer ? 'a deployment target of this environment' : 'this manifests endpoint'} yet)`
      : columns(['HOST', 'RECONCILER', 'STATUS', 'APPLIED', 'SINCE', 'MESSAGE'], subscribers);
  const unlisted = answer.total - subscribers.length;
  const more =
    unlisted > 0
      ? `\n… ${unlisted.toLocaleString('en')} more subscribers not listed (${answer.succeeded.toLocaleString('en')} succeeded in all); --limit lists more, the API pages through every one`
      : '';
  if (answer.targets.length === 0) return `${listed}${more}`;
  const targets = answer.targets.map((t) => [
    t.environment,
    t.workload,
    t.deploymentTarget,
    t.version ?? '—',
    t.desiredVersion ?? '—',
    `${t.succeeded}/${t.total}`,
    String(t.failed),
    String(t.inProgress),
    String(t.stale),
  ]);
  const targetsUnlisted = ('targetsTotal' in answer ? answer.targetsTotal : targets.length) - targets.length;
  const targetsMore = targetsUnlisted > 0 ? `\n… ${targetsUnlisted.toLocaleString('en')} more targets not listed` : '';
  return `${columns(['ENVIRONMENT', 'WORKLOAD', 'TARGET', 'VERSION', 'DESIRED', 'SUCCEEDED', 'FAILED', 'IN PROGRESS', 'STALE'], targets)}${targetsMore}\n\n${listed}${more}`;
}

function columns(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

function progress(message: string): void {
  process.stderr.write(`[rollout] ${message}\n`);
}

function usageError(message: string): number {
  process.stderr.write(`kalypso-hub rollout: ${message}\n(kalypso-hub rollout --help shows the options)\n`);
  return ROLLOUT_EXIT.error;
}

function failure(message: string): number {
  process.stderr.write(`kalypso-hub rollout: ${message}\n`);
  return ROLLOUT_EXIT.error;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
