// The service-token and auth-config files: a mistake stops start-up with a message that names the
// setting, the file and the field, and never shows a token.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuthConfig } from '../../src/security/auth-config-file.ts';
import { parseServiceTokens } from '../../src/security/service-tokens-file.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-identity-files-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function authError(text: string): Promise<string> {
  const file = path.join(dir, 'auth.yaml');
  await writeFile(file, text);
  return await loadAuthConfig(file).then(
    () => 'accepted',
    (error: Error) => error.message.replace(file, 'auth.yaml'),
  );
}

describe('--service-tokens', () => {
  it('names the entry and field of each mistake, and never the token', () => {
    const cases: [string, string][] = [
      ['tokens:\n  - name: a\n    token: short\n    roles: [ingest]', 'tokens[0].token: at least 16 characters'],
      ['tokens:\n  - name: a\n    token: a-secret-long-enough-1\n    roles: [reader]', 'tokens[0].roles[0]: one of viewer, pipeline, ingest, admin'],
      ['tokens:\n  - name: a\n    token: a-secret-long-enough-1\n    roles: [viewer]', 'tokens[0].workspaces: name the workspaces its roles read'],
      ['tokens:\n  - name: a\n    token: a-secret-long-enough-1\n    roles: [ingest]\n  - name: a\n    token: a-secret-long-enough-2\n    roles: [ingest]', 'tokens[1].name: "a" names two tokens'],
      ['tokens:\n  - name: a\n    token: a-secret-long-enough-1\n    roles: [ingest]\n  - name: b\n    token: a-secret-long-enough-1\n    roles: [ingest]', 'tokens[1]: the same token as a'],
      ['tokens:\n  - name: a\n    tokn: a-secret-long-enough-1\n    roles: [ingest]', 'tokens[0]: Unrecognized key: "tokn"'],
    ];
    for (const [text, message] of cases) {
      let thrown = '';
      try {
        parseServiceTokens('tokens.yaml', text);
      } catch (error) {
        thrown = (error as Error).message;
      }
      expect(thrown).toContain(`invalid --service-tokens tokens.yaml: ${message}`);
      expect(thrown).not.toContain('a-secret-long-enough');
    }
  });
});

describe('--auth-config', () => {
  it('names the field of each mistake', async () => {
    const issuer = 'issuers:\n  - issuer: https://idp.example\n    audience: hub\n';
    expect(await authError(`${issuer}    rules:\n      - when: { sub: x }\n        roles: [root]`)).toContain('issuers[0].rules[0].roles[0]: one of viewer, pipeline, ingest, admin');
    expect(await authError(`${issuer}    rules:\n      - when: { sub: x }\n        roles: [viewer]`)).toContain('issuers[0].rules[0].workspaces: name the workspaces its roles read');
    expect(await authError('issuers:\n  - issuer: http://idp.example\n    audience: hub\n    rules: []')).toContain('issuers[0].issuer: must be an https:// URL');
    expect(await authError(`${issuer}    rules:\n      - when: { sub: x }\n        roles: [ingest]\nclockTolerance: soon`)).toContain('clockTolerance: "soon" is no duration');
    expect(await authError(`${issuer}    rules:\n      - when: { sub: x }\n        roles: [ingest]\nsignIn:\n  issuer: https://other.example\n  clientId: hub\n  sessionKeyFile: /k`)).toContain(
      'signIn.issuer: https://other.example is not among issuers',
    );
  });
});
