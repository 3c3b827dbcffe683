// Commit statuses on GitLab (gitlab.com or self-managed: apiUrl https://HOST/api/v4), as
// docs/research/gitlab-commit-statuses.md found them: the project by its URL-encoded path, states
// running/success/failed, the branch as `ref` (without it GitLab picks any branch holding the
// commit). GitLab refuses a status that is already the job's (400 "Cannot transition status via
// :run from :running"): GitLab shows it already, so it counts as delivered.
import type { CommitStatusChannel } from '../notifications-file.ts';
import type { ChannelClient, CommitState } from '../messages.ts';
import { repoLocation } from '../repo-patterns.ts';
import { genericOutcome, type HttpAnswer, httpRequest, receiverMessage } from './http-delivery.ts';
import { type ProviderTiming, sendStatusOnly, type ShownStatus, shownAlready } from './provider-common.ts';

const STATES: Readonly<Record<CommitState, string>> = { pending: 'running', success: 'success', failure: 'failed' };

interface GitLabStatus {
  readonly id?: number;
  readonly name?: string;
  readonly status?: string;
  readonly description?: string | null;
  readonly target_url?: string | null;
}

export function gitlabClient(channel: CommitStatusChannel, timing: ProviderTiming): ChannelClient {
  return sendStatusOnly(channel, async (message, signal) => {
    const location = repoLocation(message.repo);
    if (location === undefined || location.path.length < 2) return { kind: 'refused', reason: `${message.repo} is not a GitLab project URL (https://HOST/GROUP/PROJECT)` };
    const project = `${channel.apiUrl}/projects/${encodeURIComponent(location.path.join('/'))}`;
    const headers = { 'private-token': await channel.token.read(), 'content-type': 'application/json', 'user-agent': 'kalypso-observability-hub' };
    const state = STATES[message.state];
    const listed = await httpRequest(
      { method: 'GET', url: `${project}/repository/commits/${message.commit}/statuses?name=${encodeURIComponent(message.context)}&per_page=100`, headers },
      timing.requestTimeoutMs,
      signal,
    );
    if (!('error' in listed) && listed.status === 200 && shownAlready(latestOf(listed, message.context), message, state)) return { kind: 'sent', note: 'already shown' };
    const body = JSON.stringify({
      state,
      name: message.context,
      target_url: message.targetUrl,
      description: message.description,
      ...(message.ref === undefined ? {} : { ref: message.ref }),
    });
    const posted = await httpRequest({ method: 'POST', url: `${project}/statuses/${message.commit}`, headers, body }, timing.requestTimeoutMs, signal);
    if (!('error' in posted) && posted.status === 400 && /cannot transition status/i.test(posted.text)) {
      return { kind: 'sent', note: `GitLab keeps the job ${state}: ${receiverMessage(posted)}` };
    }
    return genericOutcome(posted, Date.now());
  });
}

/** GitLab's newest status of the context (the highest id). */
function latestOf(answer: HttpAnswer, context: string): ShownStatus | undefined {
  try {
    const statuses = (JSON.parse(answer.text) as GitLabStatus[]).filter((status) => status.name === context);
    const newest = statuses.sort((a, b) => (b.id ?? 0) - (a.id ?? 0))[0];
    return newest === undefined ? undefined : { state: newest.status ?? '', description: newest.description ?? '', targetUrl: newest.target_url ?? '' };
  } catch {
    return undefined;
  }
}
