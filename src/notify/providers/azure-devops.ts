// Commit statuses on Azure DevOps (Services, or Server with apiUrl https://HOST/COLLECTION), as
// docs/research/azure-devops-commit-statuses.md found them: the Git Statuses API of the repository,
// states pending/succeeded/failed, context {genre: kalypso, name: <environment>}; a PAT as Basic
// auth. An unaccepted token can be answered with 203 and a sign-in page instead of 401: only a JSON
// answer counts as delivered.
import type { CommitStatusChannel } from '../notifications-file.ts';
import type { ChannelClient, CommitState } from '../messages.ts';
import { type RepoLocation, repoLocation } from '../repo-patterns.ts';
import { genericOutcome, type HttpAnswer, httpRequest } from './http-delivery.ts';
import { type ProviderTiming, sendStatusOnly, type ShownStatus, shownAlready } from './provider-common.ts';

const STATES: Readonly<Record<CommitState, string>> = { pending: 'pending', success: 'succeeded', failure: 'failed' };
const GENRE = 'kalypso';
const API_VERSION = '7.1';

interface AzureRepo {
  readonly organization: string;
  readonly project: string;
  readonly repository: string;
}

interface AzureStatus {
  readonly state?: string;
  readonly description?: string;
  readonly targetUrl?: string;
  readonly context?: { readonly name?: string; readonly genre?: string };
}

/**
 * Organization, project and repository of every URL form Azure Repos hands out:
 * https://dev.azure.com/ORG/PROJECT/_git/REPO, https://ORG.visualstudio.com/[DefaultCollection/]PROJECT/_git/REPO,
 * git@ssh.dev.azure.com:v3/ORG/PROJECT/REPO (and vs-ssh.visualstudio.com); on Azure DevOps Server,
 * https://HOST/COLLECTION/PROJECT/_git/REPO, the collection in the organization's place.
 */
export function azureRepoOf(location: RepoLocation): AzureRepo | undefined {
  const path = location.path;
  const named = (organization: string | undefined, project: string | undefined, repository: string | undefined): AzureRepo | undefined =>
    organization === undefined || project === undefined || repository === undefined ? undefined : { organization, project, repository };
  if (location.host === 'ssh.dev.azure.com' || location.host === 'vs-ssh.visualstudio.com') {
    return path[0] === 'v3' && path.length === 4 ? named(path[1], path[2], path[3]) : undefined;
  }
  const git = path.indexOf('_git');
  if (git < 1 || git !== path.length - 2) return undefined;
  const visualStudio = /^([^.]+)\.visualstudio\.com$/.exec(location.host)?.[1];
  return named(visualStudio ?? path[git - 2], path[git - 1], path[git + 1]);
}

export function azureDevOpsClient(channel: CommitStatusChannel, timing: ProviderTiming): ChannelClient {
  return sendStatusOnly(channel, async (message, signal) => {
    const location = repoLocation(message.repo);
    const repo = location === undefined ? undefined : azureRepoOf(location);
    if (repo === undefined) return { kind: 'refused', reason: `${message.repo} is not an Azure Repos URL (https://dev.azure.com/ORG/PROJECT/_git/REPO)` };
    const url = `${channel.apiUrl}/${[repo.organization, repo.project].map(encodeURIComponent).join('/')}/_apis/git/repositories/${encodeURIComponent(repo.repository)}/commits/${message.commit}/statuses?api-version=${API_VERSION}`;
    const headers = {
      authorization: `Basic ${Buffer.from(`:${await channel.token.read()}`).toString('base64')}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-tfs-fedauthredirect': 'Suppress',
      'user-agent': 'kalypso-observability-hub',
    };
    const state = STATES[message.state];
    const listed = await httpRequest({ method: 'GET', url, headers }, timing.requestTimeoutMs, signal);
    if (!('error' in listed) && listed.status === 200 && shownAlready(latestOf(listed, message.environment), message, state)) return { kind: 'sent', note: 'already shown' };
    const body = JSON.stringify({ state, description: message.description, targetUrl: message.targetUrl, context: { name: message.environment, genre: GENRE } });
    const posted = await httpRequest({ method: 'POST', url, headers, body }, timing.requestTimeoutMs, signal);
    if (!('error' in posted) && posted.status >= 200 && posted.status < 300 && !isJson(posted)) {
      return { kind: 'refused', reason: `HTTP ${posted.status}: Azure DevOps did not accept the token (it answered with a sign-in page, not JSON)` };
    }
    return genericOutcome(posted, Date.now());
  });
}

function isJson(answer: HttpAnswer): boolean {
  try {
    JSON.parse(answer.text);
    return (answer.headers.get('content-type') ?? '').includes('json');
  } catch {
    return false;
  }
}

/** Azure DevOps' newest status of the context (the list is newest first). */
function latestOf(answer: HttpAnswer, environment: string): ShownStatus | undefined {
  try {
    const found = ((JSON.parse(answer.text) as { value?: AzureStatus[] }).value ?? []).find(
      (status) => status.context?.genre === GENRE && status.context.name === environment,
    );
    return found === undefined ? undefined : { state: found.state ?? '', description: found.description ?? '', targetUrl: found.targetUrl ?? '' };
  } catch {
    return undefined;
  }
}
