// --service-tokens FILE: named tokens with their roles and workspaces, so that each pipeline,
// collector and agent holds its own and logs say which one asked. A token is written as its
// SHA-256 (the file then holds no secret) or as itself (a Kubernetes Secret holds it anyway).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { documentError, parseDocument } from './yaml-document.ts';
import { readsData, ROLES, type Role, type WorkspaceScope, workspaceScopeOf } from './roles.ts';

export const SERVICE_TOKENS_SETTING = '--service-tokens';

export interface ServiceToken {
  readonly name: string;
  /** SHA-256 of the token: what a presented token is compared against. */
  readonly digest: Buffer;
  readonly roles: ReadonlySet<Role>;
  readonly workspaces: WorkspaceScope;
}

/** Shortest token accepted as itself: a guessable one would undo the rest. */
export const MIN_TOKEN_LENGTH = 16;

const Entry = z
  .strictObject({
    name: z.string().trim().min(1).max(100).regex(/^[\w.@:-]+$/, 'letters, digits, `.`, `_`, `@`, `:` and `-` only'),
    sha256: z
      .string()
      .trim()
      .regex(/^[0-9a-fA-F]{64}$/, 'the token’s SHA-256 as 64 hex digits (`printf %s "$TOKEN" | sha256sum`)')
      .optional(),
    token: z.string().trim().min(MIN_TOKEN_LENGTH, `at least ${MIN_TOKEN_LENGTH} characters`).optional(),
    roles: z.array(z.enum(ROLES, { error: `one of ${ROLES.join(', ')}` })).min(1, 'name at least one role'),
    workspaces: z.array(z.string().trim().min(1)).min(1, "name at least one workspace, or ['*'] for every one").optional(),
  })
  .refine((entry) => (entry.sha256 === undefined) !== (entry.token === undefined), { message: 'give exactly one of sha256 and token' })
  .refine((entry) => entry.workspaces !== undefined || !readsData(entry.roles), {
    message: "name the workspaces its roles read: workspaces: [names], or ['*'] for every one",
    path: ['workspaces'],
  });

// `tokens:` with nothing under it reads as null: no tokens (every one revoked).
const Document = z.strictObject({ tokens: z.array(Entry).nullish().transform((entries) => entries ?? []) });

export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token).digest();

/** The file's tokens, checked whole; a ConfigError naming the entry and field otherwise. */
export function parseServiceTokens(file: string, text: string): ServiceToken[] {
  const entries = parseDocument(SERVICE_TOKENS_SETTING, file, text, Document).tokens;
  const tokens = entries.map(
    (entry): ServiceToken => ({
      name: entry.name,
      digest: entry.sha256 === undefined ? tokenDigest(entry.token!) : Buffer.from(entry.sha256, 'hex'),
      roles: new Set(entry.roles),
      workspaces: workspaceScopeOf(entry.workspaces ?? ['*']),
    }),
  );
  const names = tokens.map((token) => token.name);
  const twice = names.findIndex((name, index) => names.indexOf(name) !== index);
  if (twice >= 0) throw documentError(SERVICE_TOKENS_SETTING, file, `tokens[${twice}].name`, `${JSON.stringify(names[twice])} names two tokens; logs tell tokens apart by name`);
  const digests = tokens.map((token) => token.digest.toString('hex'));
  const same = digests.findIndex((digest, index) => digests.indexOf(digest) !== index);
  if (same >= 0) throw documentError(SERVICE_TOKENS_SETTING, file, `tokens[${same}]`, `the same token as ${tokens[digests.indexOf(digests[same]!)]!.name}`);
  return tokens;
}
