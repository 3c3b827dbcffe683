// Serves a Hono app over HTTP (or HTTPS) and closes it gracefully: stop accepting, let in-flight
// requests finish, then drop idle keep-alive connections (and, past the deadline, everything).
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { TlsFiles } from '../security/tls-files.ts';
import { HTTP_TUNING } from './http-settings.ts';

export interface HttpListener {
  readonly port: number;
  close(deadlineMs: number): Promise<void>;
}

// Hono apps with any bindings/variables type are served the same way.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function listenHttp(app: Hono<any, any, any>, host: string, port: number, tls?: TlsFiles): Promise<HttpListener> {
  const server = (
    tls === undefined
      ? createAdaptorServer({ fetch: app.fetch })
      : createAdaptorServer({ fetch: app.fetch, createServer: createHttpsServer, serverOptions: { ...tls.identity } })
  ) as Server;
  // A renewed certificate applies to new connections from the moment it is read.
  const unsubscribe = tls?.onChange((identity) => (server as HttpsServer).setSecureContext({ ...identity }));
  server.keepAliveTimeout = HTTP_TUNING.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: (deadlineMs) =>
      new Promise<void>((resolve) => {
        unsubscribe?.();
        const force = setTimeout(() => server.closeAllConnections(), deadlineMs);
        force.unref();
        // A keep-alive connection whose request finishes during the drain turns idle afterwards;
        // closing idle connections only once would leave it open (the client keeps it) and hold
        // the shutdown until the deadline.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        sweep.unref();
        server.close(() => {
          clearTimeout(force);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
