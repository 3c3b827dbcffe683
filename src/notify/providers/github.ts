// Commit statuses on GitHub (and GitHub Enterprise Server: apiUrl https://HOST/api/v3), as
// docs/research/github-commit-statuses.md found them: a status per commit and context, at most
// 140 characters of description; rate limits answered with 403 or 429, the wait in Retry-After or
// x-ratelimit-reset, a secondary limit sometimes with neither (then at least a minute).
import type { CommitStatusChannel } from '../notifications-file.ts';
import type { ChannelClient, SendOutcome } from '../messages.ts';
import { repoLocation } from '../repo-patterns.ts';
import { genericOutcome, type HttpAnswer, httpRequest, receiverMessage, retryAfterMs } from './http-delivery.ts';
import { type ProviderTiming, sendStatusOnly, type ShownStatus, shownAlready } from './provider-common.ts';

interface GitHubStatus {
  readonly context?: string;
  readonly state?: string;
  readonly description?: string | null;
  readonly target_url?: string | null;
}

export function githubClient(channel: CommitStatusChannel, timing: ProviderTiming): ChannelClient {
  return sendStatusOnly(channel, async (message, signal) => {
    const location = repoLocation(message.repo);
    if (location?.path.length !== 2) return { kind: 'refused', reason: `${message.repo} is not a GitHub repository URL (https://HOST/OWNER/REPO)` };
    const base = `${channel.apiUrl}/repos/${location.path.map(encodeURIComponent).join('/')}`;
    const headers = {
      authorization: `Bearer ${await channel.token.read()}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'kalypso-observability-hub',
      'content-type': 'application/json',
    };
    // Read first, as Flux does: a status GitHub already shows (sent before a crash, or by another
    // hub) is not posted again.
    const listed = await httpRequest({ method: 'GET', url: `${base}/commits/${message.commit}/statuses?per_page=100`, headers }, timing.requestTimeoutMs, signal);
    if (!('error' in listed) && listed.status === 200 && shownAlready(latestOf(listed, message.context), message)) return { kind: 'sent', note: 'already shown' };
    const body = JSON.stringify({ state: message.state, target_url: message.targetUrl, description: message.description, context: message.context });
    const posted = await httpRequest({ method: 'POST', url: `${base}/statuses/${message.commit}`, headers, body }, timing.requestTimeoutMs, signal);
    return githubOutcome(posted, Date.now(), timing);
  });
}

/** GitHub's newest status of the context (the list is newest first). */
function latestOf(answer: HttpAnswer, context: string): ShownStatus | undefined {
  try {
    const found = (JSON.parse(answer.text) as GitHubStatus[]).find((status) => status.context === context);
    return found === undefined ? undefined : { state: found.state ?? '', description: found.description ?? '', targetUrl: found.target_url ?? '' };
  } catch {
    return undefined;
  }
}

/** GitHub's rate limits first (both kinds answer 403 or 429), then the rules every receiver shares. */
export function githubOutcome(answer: HttpAnswer | { readonly error: string }, now: number, timing: ProviderTiming): SendOutcome {
  if ('error' in answer || (answer.status !== 403 && answer.status !== 429)) return genericOutcome(answer, now);
  const after = retryAfterMs(answer.headers, now);
  const reset = Number(answer.headers.get('x-ratelimit-reset'));
  const reason = receiverMessage(answer);
  if (answer.headers.get('x-ratelimit-remaining') === '0' && Number.isFinite(reset) && reset > 0) {
    return { kind: 'retry', reason, rateLimited: true, afterMs: Math.max(after ?? 0, reset * 1_000 - now + 1_000) };
  }
  if (after !== undefined || answer.status === 429 || /secondary rate limit|abuse/i.test(reason)) {
    return { kind: 'retry', reason, rateLimited: true, afterMs: after ?? timing.rateLimitedBackoffMs };
  }
  return { kind: 'refused', reason };
}
