// `demo` and `rollout` against a hub they cannot reach: the message names the URL and the cause —
// a closed port, a name that does not resolve, a certificate nobody trusts — and rollout keeps its
// exit code 3 ("could not ask").
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testTls } from '../support/global-tls.ts';
import { freePort } from '../support/ports.ts';
import { runKalypsoHub } from '../support/run-command.ts';

// A name under .invalid never resolves (RFC 6761). Not port 1: fetch refuses it before looking the
// name up ("bad port").
const NO_SUCH_HOST = 'no-such-host.invalid:4318';
let closedPort: number;
let https: Server;
let httpsUrl: string;

beforeAll(async () => {
  closedPort = await freePort();
  // The suite's self-signed certificate: every test process trusts it through NODE_EXTRA_CA_CERTS;
  // a command started without that variable does not.
  const { certFile, keyFile } = await testTls();
  https = createServer({ cert: await readFile(certFile), key: await readFile(keyFile) }, (_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":{"code":"not_found","message":"not the hub"}}');
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  httpsUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
});

afterAll(async () => {
  https.closeAllConnections();
  await new Promise((resolve) => https.close(resolve));
});

const untrusting = { NODE_EXTRA_CA_CERTS: undefined };
const rollout = (url: string, env: NodeJS.ProcessEnv = {}) =>
  runKalypsoHub(['rollout', '--url', url, '--endpoint', 'https://github.com/contoso/gitops/main/app', '--commit', 'abcdef1'], env);
const demo = (url: string, env: NodeJS.ProcessEnv = {}) => runKalypsoHub(['demo', '--otlp', url], env);

describe('a hub the command cannot reach', () => {
  it('closed port: the URL and ECONNREFUSED', async () => {
    const url = `http://127.0.0.1:${closedPort}`;
    const asked = await rollout(url);
    expect(asked.code).toBe(3);
    expect(asked.stderr).toBe(`kalypso-hub rollout: cannot reach ${url}/api/v1/deployment-state: connect ECONNREFUSED 127.0.0.1:${closedPort}\n`);
    const fed = await demo(url);
    expect(fed.code).toBe(1);
    expect(fed.stderr).toBe(`kalypso-hub demo: cannot reach ${url}/v1/logs: connect ECONNREFUSED 127.0.0.1:${closedPort}\n`);
  });

  it('closed port while waiting: every retry says why, and the wait ends with exit 3', async () => {
    const url = `http://localhost:${closedPort}`;
    const asked = await runKalypsoHub(['rollout', '--url', url, '--environment', 'prod', '--commit', 'abcdef1', '--wait', '3s']);
    expect(asked.code).toBe(3);
    expect(asked.stderr).toMatch(new RegExp(`^\\[rollout\\] cannot reach ${url}/api/v1/deployment-state: connect ECONNREFUSED .*; retrying$`, 'm'));
    expect(asked.stderr).toMatch(new RegExp(`^kalypso-hub rollout: cannot reach ${url}/api/v1/deployment-state: connect ECONNREFUSED `, 'm'));
  });

  it('a name that does not resolve: the URL and ENOTFOUND', async () => {
    const asked = await rollout(`http://${NO_SUCH_HOST}`);
    expect(asked.code).toBe(3);
    expect(asked.stderr).toContain(`cannot reach http://${NO_SUCH_HOST}/api/v1/deployment-state: getaddrinfo ENOTFOUND no-such-host.invalid`);
    const fed = await demo(`http://${NO_SUCH_HOST}`);
    expect(fed.code).toBe(1);
    expect(fed.stderr).toContain(`cannot reach http://${NO_SUCH_HOST}/v1/logs: getaddrinfo ENOTFOUND no-such-host.invalid`);
  });

  it('a self-signed certificate the command does not trust: the URL and the TLS error', async () => {
    const asked = await rollout(httpsUrl, untrusting);
    expect(asked.code).toBe(3);
    expect(asked.stderr).toMatch(new RegExp(`^kalypso-hub rollout: cannot reach ${httpsUrl}/api/v1/deployment-state: self-signed certificate.*\\(DEPTH_ZERO_SELF_SIGNED_CERT\\)$`, 'm'));
    const fed = await demo(httpsUrl, untrusting);
    expect(fed.code).toBe(1);
    expect(fed.stderr).toMatch(new RegExp(`^kalypso-hub demo: cannot reach ${httpsUrl}/v1/logs: self-signed certificate.*\\(DEPTH_ZERO_SELF_SIGNED_CERT\\)$`, 'm'));
  });

  it('the same server, trusted, is reached: its answer is reported instead, with the URL', async () => {
    const asked = await rollout(httpsUrl);
    expect(asked.code).toBe(3);
    expect(asked.stderr).toBe(`kalypso-hub rollout: the hub answered 404: not the hub (${httpsUrl}/api/v1/deployment-state)\n`);
    const fed = await demo(httpsUrl);
    expect(fed.code).toBe(1);
    expect(fed.stderr).toBe(`kalypso-hub demo: ${httpsUrl}/v1/logs answered 404 Not Found\n`);
  });

  it('a URL that is no http(s) URL is refused before asking', async () => {
    const asked = await rollout('localhost:8080');
    expect(asked.code).toBe(3);
    expect(asked.stderr).toMatch(/^kalypso-hub rollout: --url must be an http:\/\/ or https:\/\/ URL \(got "localhost:8080"\)\n/);
    const fed = await demo('localhost:4318');
    expect(fed.code).toBe(2);
    expect(fed.stderr).toMatch(/^kalypso-hub demo: --otlp must be an http:\/\/ or https:\/\/ URL \(got "localhost:4318"\)\n/);
  });
});

describe('something that is not the hub, or an answer cut off', () => {
  it('exits 3 (could not ask) rather than crash, and says what came back from where', async () => {
    const server = createHttpServer((request, response) => {
      if (request.url?.includes('cut-off') === true) {
        // Headers promise a body that never comes: the connection closes halfway.
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        response.write('{"commit":');
        setTimeout(() => response.destroy(), 50);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>a proxy sign-in page</html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const html = await rollout(url);
      expect(html.code).toBe(3);
      expect(html.stderr).toBe(`kalypso-hub rollout: ${url}/api/v1/deployment-state answered without JSON: is ${url} the hub?\n`);
      const cut = await rollout(`${url}/cut-off`);
      expect(cut.code).toBe(3);
      expect(cut.stderr).toMatch(new RegExp(`^kalypso-hub rollout: cannot reach ${url}/cut-off/api/v1/deployment-state: .*other side closed`));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
