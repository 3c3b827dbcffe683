// describeFetchFailure on the errors Node really throws: a refused connection, one refused on every
// address of a name (AggregateError), an answer that never comes, a URL with credentials.
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { describeFetchFailure } from '../../src/http/fetch-failure.ts';
import { freePort } from '../support/ports.ts';

async function fetchError(url: string, timeoutMs = 5_000): Promise<unknown> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

describe('describeFetchFailure', () => {
  it('names the URL (without credentials or query) and the system error under "fetch failed"', async () => {
    const port = await freePort();
    const error = await fetchError(`http://127.0.0.1:${port}/api/v1/deployment-state?commit=abc`);
    expect((error as Error).message).toBe('fetch failed');
    expect(describeFetchFailure(`http://user:secret@127.0.0.1:${port}/api/v1/deployment-state?commit=abc`, error)).toBe(
      `cannot reach http://127.0.0.1:${port}/api/v1/deployment-state: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('lists every address tried when the connection failed on each (AggregateError, empty message)', async () => {
    const port = await freePort();
    // Two addresses for one name, tried in turn as Node does for localhost on a dual-stack machine.
    const aggregate = await new Promise<unknown>((resolve) => {
      const socket = connect({
        host: 'dual-stack.test',
        port,
        autoSelectFamily: true,
        lookup: (_host, options, callback) =>
          (options as { all?: boolean }).all === true
            ? (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
                { address: '127.0.0.2', family: 4 },
                { address: '127.0.0.1', family: 4 },
              ])
            : (callback as (error: null, address: string, family: number) => void)(null, '127.0.0.1', 4),
      });
      socket.once('error', resolve);
    });
    expect(aggregate).toBeInstanceOf(AggregateError);
    expect((aggregate as Error).message).toBe('');
    // fetch wraps it as it wraps every connection error.
    const error = new TypeError('fetch failed', { cause: aggregate });
    expect(describeFetchFailure(`http://dual-stack.test:${port}/`, error)).toBe(
      `cannot reach http://dual-stack.test:${port}/: connect ECONNREFUSED 127.0.0.2:${port}; connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('says when an answer did not come within the timeout', async () => {
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/logs`;
    try {
      const error = await fetchError(url, 200);
      expect(describeFetchFailure(url, error, 200)).toBe(`no answer from ${url} within 200ms`);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
