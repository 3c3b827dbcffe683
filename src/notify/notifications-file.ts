// --notifications FILE: where the hub reports to (CONTRACT section 7). Read once at start and
// checked whole: a mistake stops start-up with a message naming the entry and the field, before
// anything is sent. Secrets are named (a file or an environment variable), never written in the
// file, and read again on every use, so that a rotated token needs no restart.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { parse } from 'yaml';
import { ConfigError } from '../config/config.ts';
import { type RepoPattern, repoPattern } from './repo-patterns.ts';

export type ProviderType = 'github' | 'gitlab' | 'azuredevops';

/** Each provider's public API, unless the entry names another (GitHub Enterprise, GitLab self-managed, a stand-in). */
export const DEFAULT_API_URLS: Readonly<Record<ProviderType, string>> = {
  github: 'https://api.github.com',
  gitlab: 'https://gitlab.com/api/v4',
  azuredevops: 'https://dev.azure.com',
};

/** A secret named by the file: read when it is used; a file's trailing newline is not part of it. */
export interface SecretSource {
  /** Where it comes from, for messages (`file /etc/…`, `environment GITHUB_TOKEN`): never the value. */
  readonly origin: string;
  read(): Promise<string>;
}

export interface CommitStatusChannel {
  readonly kind: 'commit-status';
  readonly name: string;
  readonly type: ProviderType;
  readonly apiUrl: string;
  readonly token: SecretSource;
  readonly repos: readonly RepoPattern[];
}

export interface WebhookChannel {
  readonly kind: 'webhook';
  readonly name: string;
  readonly url: string;
  readonly secret: SecretSource;
  /** Globs over event types (`io.kalypso.rollout.*`); every type when the file names none. */
  readonly types: readonly RegExp[];
}

export type Channel = CommitStatusChannel | WebhookChannel;

const name = z.string().trim().min(1).max(100).regex(/^[\w.-]+$/, 'letters, digits, `.`, `_` and `-` only');
const secretFields = { file: z.string().trim().min(1).optional(), env: z.string().trim().min(1).optional() };
const url = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

const CommitStatusEntry = z.strictObject({
  name,
  type: z.enum(['github', 'gitlab', 'azuredevops']),
  apiUrl: url.optional(),
  tokenFile: secretFields.file,
  tokenEnv: secretFields.env,
  repos: z.array(z.string().trim().min(1)).min(1),
});

const WebhookEntry = z.strictObject({
  name,
  url,
  secretFile: secretFields.file,
  secretEnv: secretFields.env,
  types: z.array(z.string().trim().min(1)).min(1).optional(),
});

// A list left empty (`webhooks:` with nothing under it) reads as null in YAML: no entries.
const NotificationsDocument = z.strictObject({
  commitStatus: z.array(CommitStatusEntry).nullish().transform((entries) => entries ?? []),
  webhooks: z.array(WebhookEntry).nullish().transform((entries) => entries ?? []),
});

/** The file's channels, checked; a ConfigError naming the entry and field otherwise. */
export async function loadNotifications(file: string, env: NodeJS.ProcessEnv): Promise<Channel[]> {
  const fail = (where: string, reason: string): ConfigError => new ConfigError(`invalid --notifications ${file}: ${where}${where === '' ? '' : ': '}${reason}`);
  let document: unknown;
  try {
    document = parse(await readFile(file, 'utf8')) ?? {};
  } catch (error) {
    throw fail('', (error as Error).message);
  }
  const parsed = NotificationsDocument.safeParse(document);
  if (!parsed.success) {
    // A misspelt field is also a missing one: naming the misspelling helps more.
    const issue = parsed.error.issues.find((found) => found.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    throw fail(issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('').replace(/^\./, ''), issue.message);
  }
  const channels: Channel[] = [
    ...parsed.data.commitStatus.map((entry, index): CommitStatusChannel => ({
      kind: 'commit-status',
      name: entry.name,
      type: entry.type,
      apiUrl: (entry.apiUrl ?? DEFAULT_API_URLS[entry.type]).replace(/\/+$/, ''),
      token: secretOf(`commitStatus[${index}]`, 'token', entry.tokenFile, entry.tokenEnv, env, fail),
      repos: entry.repos.map((pattern, at) => {
        const compiled = repoPattern(pattern);
        if (!compiled.ok) throw fail(`commitStatus[${index}].repos[${at}]`, compiled.reason);
        return compiled.value;
      }),
    })),
    ...parsed.data.webhooks.map((entry, index): WebhookChannel => ({
      kind: 'webhook',
      name: entry.name,
      url: entry.url,
      secret: secretOf(`webhooks[${index}]`, 'secret', entry.secretFile, entry.secretEnv, env, fail),
      types: (entry.types ?? ['**']).map(typeGlob),
    })),
  ];
  const names = channels.map((channel) => channel.name);
  const twice = names.find((channelName, index) => names.indexOf(channelName) !== index);
  if (twice !== undefined) throw fail('name', `${JSON.stringify(twice)} names two entries; each commitStatus and webhook entry needs its own name`);
  await Promise.all(channels.map((channel) => readable(channel, fail)));
  return channels;
}

function secretOf(
  where: string,
  what: 'token' | 'secret',
  file: string | undefined,
  variable: string | undefined,
  env: NodeJS.ProcessEnv,
  fail: (where: string, reason: string) => ConfigError,
): SecretSource {
  if ((file === undefined) === (variable === undefined)) throw fail(where, `give exactly one of ${what}File and ${what}Env`);
  if (file !== undefined) return { origin: `file ${file}`, read: async () => (await readFile(file, 'utf8')).replace(/\r?\n$/, '') };
  const named = variable!;
  return {
    origin: `environment ${named}`,
    read: () => {
      const value = env[named];
      return value === undefined || value === '' ? Promise.reject(new Error(`environment variable ${named} is not set`)) : Promise.resolve(value);
    },
  };
}

/** A secret that cannot be read at start would fail every send: say so now. */
async function readable(channel: Channel, fail: (where: string, reason: string) => ConfigError): Promise<void> {
  const secret = channel.kind === 'commit-status' ? channel.token : channel.secret;
  try {
    if ((await secret.read()) === '') throw new Error('it is empty');
  } catch (error) {
    throw fail(channel.name, `cannot read its ${channel.kind === 'commit-status' ? 'token' : 'secret'} from ${secret.origin}: ${(error as Error).message}`);
  }
}

/** `io.kalypso.rollout.*`: `*` within one dot-separated part, `**` across parts. */
function typeGlob(glob: string): RegExp {
  const pattern = glob
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^.]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`);
}
