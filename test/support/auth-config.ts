// The auth.yaml a test hub is started with (--auth-config): one trusted OIDC issuer with its rules
// and, when asked, the web sign-in with a fresh session key beside it. Written as YAML from plain
// objects, so that each test states only its rules.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';

export interface AuthRule {
  readonly when: Readonly<Record<string, string>>;
  readonly roles: readonly string[];
  readonly workspaces?: readonly string[];
  readonly workspacesClaim?: string;
}

export interface AuthConfig {
  readonly issuer: string;
  readonly audience: string;
  readonly rules: readonly AuthRule[];
  /** The web UI's sign-in through the issuer, as this client. */
  readonly signIn?: { readonly clientId: string; readonly sessionDuration?: string };
  readonly clockTolerance?: string;
}

/** Writes `dir`/auth.yaml (and `dir`/session.key for a sign-in); returns the file's path. */
export async function writeAuthConfig(dir: string, config: AuthConfig): Promise<string> {
  const file = path.join(dir, 'auth.yaml');
  const sessionKeyFile = path.join(dir, 'session.key');
  if (config.signIn !== undefined) await writeFile(sessionKeyFile, `${randomBytes(36).toString('base64')}\n`);
  const document = {
    issuers: [{ issuer: config.issuer, audience: config.audience, rules: config.rules }],
    ...(config.signIn === undefined ? {} : { signIn: { issuer: config.issuer, clientId: config.signIn.clientId, sessionKeyFile, ...(config.signIn.sessionDuration === undefined ? {} : { sessionDuration: config.signIn.sessionDuration }) } }),
    ...(config.clockTolerance === undefined ? {} : { clockTolerance: config.clockTolerance }),
  };
  await writeFile(file, stringify(document));
  return file;
}
