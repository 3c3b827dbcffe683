import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await listenedPort(0);
}

/**
 * A free TCP port below the kernel's ephemeral range, for a server a test stops and starts again
 * on the same port (its own PostgreSQL). freePort() hands out ephemeral ports, and the kernel may
 * give one that was just freed to any other test file running beside it: a stopped server's port
 * then answered for another server (a test expecting "connection refused" met a live PostgreSQL).
 * No listen(0) ever gets a port below the range, so a port taken from there stays this test's.
 */
export async function portOutsideEphemeralRange(): Promise<number> {
  const lowest = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    // From 20,000: well above the ports local services are usually set to listen on.
    const port = 20_000 + Math.floor(Math.random() * (lowest - 20_000));
    try {
      return await listenedPort(port);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  throw new Error(`no free port found between 20000 and ${lowest}`);
}

/** The first port of the kernel's ephemeral range (Linux); 32768, the usual one, where it cannot be read. */
export function ephemeralRangeStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isSafeInteger(first) && first > 20_000 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` (0: any) on 127.0.0.1, closes, and gives the port that was listened on. */
function listenedPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
