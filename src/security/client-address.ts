// Which address a request came from, as the failed-authentication throttle keys it and logs show it.
// The connection's own address, unless it is one of the reverse proxies named in --trusted-proxies:
// then the X-Forwarded-For header those proxies append to is read from its right end, past every
// trusted proxy, to the first address none of them is — the client the outermost trusted proxy saw.
// Anything further left was written by the client itself and is never believed.
import { BlockList, isIP } from 'node:net';
import { ok, refused, type Result } from '../model/result.ts';

/** `--trusted-proxies`: addresses and CIDR ranges, comma-separated; each checked. */
export function proxyAddresses(value: string): Result<readonly string[]> {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) return refused(`${JSON.stringify(entry)} is no IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8, 192.0.2.7)`);
  }
  return ok(entries);
}

/** IPv4 written as IPv6 (`::ffff:192.0.2.7`, as a dual-stack socket reports it) is the IPv4 address. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

export class ClientAddresses {
  readonly #trusted: BlockList | undefined;

  constructor(trustedProxies: readonly string[] = []) {
    if (trustedProxies.length === 0) return;
    this.#trusted = new BlockList();
    for (const entry of trustedProxies) {
      const [address = '', prefix] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.#trusted.addAddress(address, type);
      else this.#trusted.addSubnet(address, Number(prefix), type);
    }
  }

  /** The client of a request that came over a connection from `socketAddress` with this X-Forwarded-For header. */
  clientOf(socketAddress: string, forwardedFor: string | undefined): string {
    let client = plain(socketAddress);
    if (this.#trusted === undefined || forwardedFor === undefined || !this.#isTrusted(client)) return client;
    const hops = forwardedFor.split(',').map((hop) => plain(hop.trim())).filter((hop) => hop !== '');
    for (let index = hops.length - 1; index >= 0; index -= 1) {
      client = hops[index]!;
      // Not an address (garbage the client wrote, or a proxy's "unknown"): no hop further left is believable either.
      if (isIP(client) === 0 || !this.#isTrusted(client)) return client;
    }
    return client;
  }

  #isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.#trusted!.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}
