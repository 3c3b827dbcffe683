// PostgreSQL connection URLs as pg (and libpq) take them. The form for a Unix socket names the
// socket's directory in the query and leaves the host empty — postgres://user:secret@/db?host=/run/postgresql
// — which WHATWG URL refuses once credentials are present; pg accepts it. It is read here with a
// placeholder host, so that the hub does not refuse what its driver takes.

const EMPTY_HOST_WITH_CREDENTIALS = /^(postgres(?:ql)?:\/\/[^/?#]*@)(?=[/?#]|$)/;

/** The URL's parts, or undefined when it is none. */
export function postgresUrlParts(value: string): URL | undefined {
  try {
    return new URL(value.replace(EMPTY_HOST_WITH_CREDENTIALS, '$1localhost'));
  } catch {
    return undefined;
  }
}

/** Where the URL connects, for messages: host:port, or the socket directory. */
export function postgresAddress(value: string): string | undefined {
  const parts = postgresUrlParts(value);
  return parts === undefined ? undefined : addressOf(parts);
}

/** The same, for a URL already read by postgresUrlParts. */
export function addressOf(parts: URL): string {
  const port = parts.searchParams.get('port') ?? (parts.port || '5432');
  const socketDirectory = unixSocketDirectory(parts);
  if (socketDirectory !== undefined) return `${socketDirectory} (Unix socket, port ${port})`;
  return `${parts.hostname || 'localhost'}:${port}`;
}

/** The socket's directory when the URL connects through a Unix socket (a `host` parameter that is a path). */
export function unixSocketDirectory(parts: URL): string | undefined {
  const host = parts.searchParams.get('host');
  return host?.startsWith('/') === true ? host : undefined;
}
