// --auth-config FILE: the identity providers the hub trusts, how their tokens' claims become roles
// and workspaces, and the web UI's sign-in. Read once at start and checked whole: a mistake stops
// start-up naming the field. Secrets (the client secret, the session key) are files it names.
import { z } from 'zod';
import { parseDuration } from '../config/units.ts';
import { readsData, ROLES } from './roles.ts';
import { documentError, readDocument } from './yaml-document.ts';

export const AUTH_CONFIG_SETTING = '--auth-config';

/** A claim's condition: the claim equals one of the values (a list claim: contains one); `*` matches any run of characters. */
const ClaimValues = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((value) => (Array.isArray(value) ? value : [value]));

const Rule = z
  .strictObject({
    when: z.record(z.string().min(1), ClaimValues).refine((when) => Object.keys(when).length > 0, 'name at least one claim'),
    roles: z.array(z.enum(ROLES, { error: `one of ${ROLES.join(', ')}` })).min(1, 'name at least one role'),
    workspaces: z.array(z.string().trim().min(1)).min(1).optional(),
    workspacesClaim: z.string().min(1).optional(),
  })
  .refine((rule) => rule.workspaces !== undefined || rule.workspacesClaim !== undefined || !readsData(rule.roles), {
    message: "name the workspaces its roles read: workspaces: [names] (['*'] for every one), or workspacesClaim: <claim>",
    path: ['workspaces'],
  });

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https:// URL' });
const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, context) => {
      const ms = parseDuration(text);
      if (ms === undefined) context.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is no duration (e.g. 30s, 8h)` });
      return ms ?? 0;
    });

const Issuer = z.strictObject({
  issuer: httpsUrl,
  /** What bearer tokens must be issued for (their `aud`): the hub's own name at this provider. */
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((value) => (Array.isArray(value) ? value : [value])),
  /** The claim logs name the caller by. */
  nameClaim: z.string().min(1).default('sub'),
  rules: z.array(Rule).min(1, 'name at least one rule: a token that matches none has no role'),
});

const SignIn = z.strictObject({
  issuer: httpsUrl,
  clientId: z.string().min(1),
  /** Without it the hub is a public client: PKCE alone protects the code. */
  clientSecretFile: z.string().min(1).optional(),
  scopes: z.array(z.string().min(1)).default(['openid', 'profile', 'email']),
  sessionKeyFile: z.string().min(1),
  sessionDuration: duration('8h'),
});

const Document = z.strictObject({
  issuers: z.array(Issuer).nullish().transform((entries) => entries ?? []),
  signIn: SignIn.optional(),
  clockTolerance: duration('60s'),
});

export type AuthConfig = z.output<typeof Document>;
export type IssuerConfig = AuthConfig['issuers'][number];
export type ClaimRule = IssuerConfig['rules'][number];
export type SignInConfig = NonNullable<AuthConfig['signIn']>;

/** The file, checked whole; a ConfigError naming the field otherwise. */
export async function loadAuthConfig(file: string): Promise<AuthConfig> {
  const config = await readDocument(AUTH_CONFIG_SETTING, file, Document);
  const fail = (where: string, reason: string) => documentError(AUTH_CONFIG_SETTING, file, where, reason);
  const issuers = config.issuers.map((entry) => trimmed(entry.issuer));
  const twice = issuers.findIndex((issuer, index) => issuers.indexOf(issuer) !== index);
  if (twice >= 0) throw fail(`issuers[${twice}].issuer`, `${issuers[twice]} is listed twice`);
  if (config.signIn !== undefined && !issuers.includes(trimmed(config.signIn.issuer))) {
    throw fail('signIn.issuer', `${config.signIn.issuer} is not among issuers: list it there with the rules that map its claims`);
  }
  if (config.issuers.length === 0 && config.signIn === undefined) throw fail('', 'name at least one issuer');
  return config;
}

/** Issuers are compared as written, less a trailing slash (some providers write one, some not). */
export const trimmed = (issuer: string): string => issuer.replace(/\/+$/, '');
