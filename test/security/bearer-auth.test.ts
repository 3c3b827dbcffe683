// The bearer-token middleware on its own: who gets through, and who gets the refusal of its options.
import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { bearerAuth } from '../../src/security/bearer-auth.ts';

const token = () => randomBytes(18).toString('base64url');

function app(tokens: string[]) {
  const hono = new Hono();
  hono.use(
    '*',
    bearerAuth({
      tokens,
      exempt: (c) => c.req.path === '/open',
      refuse: (c) => c.text(`refused ${c.req.path}`, 401),
    }),
  );
  hono.get('*', (c) => c.text(`reached ${c.req.path}`));
  return hono;
}

const ask = async (hono: Hono, path: string, authorization?: string) => {
  const response = await hono.request(path, { headers: authorization === undefined ? {} : { authorization } });
  return `${response.status} ${await response.text()}`;
};

describe('bearerAuth', () => {
  it('lets a request with any accepted token through, in any case of the scheme', async () => {
    const [first, second] = [token(), token()];
    const hono = app([first, second]);
    expect(await ask(hono, '/a', `Bearer ${first}`)).toBe('200 reached /a');
    expect(await ask(hono, '/b', `bearer ${second}`)).toBe('200 reached /b');
  });

  it('answers with its refusal when the token is missing, wrong, a prefix of an accepted one, or of another scheme', async () => {
    const accepted = token();
    const hono = app([accepted]);
    for (const authorization of [undefined, `Bearer ${token()}`, `Bearer ${accepted.slice(0, -1)}`, `Basic ${accepted}`, 'Bearer ', accepted]) {
      expect(await ask(hono, '/a', authorization)).toBe('401 refused /a');
    }
  });

  it('asks nothing of an exempt request', async () => {
    expect(await ask(app([token()]), '/open')).toBe('200 reached /open');
  });
});
