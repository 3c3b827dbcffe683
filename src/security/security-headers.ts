// The headers browsers rely on, on every answer of the hub's HTTP port (Hono's secureHeaders, one
// configuration per kind of answer). The web UI runs under a strict Content-Security-Policy: its
// scripts, styles and data come from the hub itself and nothing is inline (the UI's modules name
// their dependencies by path, so the page needs no inline import map — src/ui/ui-routes.ts). The
// API reference (Swagger UI) gets its own policy, never a looser one for the UI; data answers (JSON,
// metrics) may load nothing at all.
import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';

export interface SecurityHeadersOptions {
  /** HSTS only when the hub itself serves TLS: over plain HTTP the header means nothing to a browser. */
  readonly tls: boolean;
  /** Where the API reference is served: its own policy. */
  readonly docsPath: string;
  /** Paths that answer data only (JSON, metrics): nothing may load from them. */
  readonly dataPaths: readonly string[];
}

const SELF = "'self'";
const NONE = "'none'";

/** The web UI: same-origin scripts, styles and requests; the favicon is a data: URL; no frames either way. */
export const UI_CSP = {
  defaultSrc: [SELF],
  scriptSrc: [SELF],
  styleSrc: [SELF],
  imgSrc: [SELF, 'data:'],
  connectSrc: [SELF],
  fontSrc: [SELF],
  objectSrc: [NONE],
  baseUri: [NONE],
  formAction: [SELF],
  frameAncestors: [NONE],
} as const;

/** Swagger UI (swagger-ui-dist): its bundle and init script are files of the hub. */
export const DOCS_CSP = { ...UI_CSP } as const;

/** JSON, Prometheus text: nothing to run, render or frame. */
export const DATA_CSP = { defaultSrc: [NONE], frameAncestors: [NONE] } as const;

/** A year, without includeSubDomains: the hub's name may share a domain with services that are not on TLS. */
const HSTS = 'max-age=31536000';

function headersWith(csp: Record<string, readonly string[]>, tls: boolean): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: Object.fromEntries(Object.entries(csp).map(([name, value]) => [name, [...value]])),
    xFrameOptions: 'DENY',
    referrerPolicy: 'no-referrer',
    strictTransportSecurity: tls ? HSTS : false,
    // The UI opens the API reference in a new tab with rel=noopener; nothing needs a cross-origin opener.
    crossOriginOpenerPolicy: true,
    crossOriginResourcePolicy: true,
  });
}

/** The data policy alone, for a port that serves no page (OTLP/HTTP). */
export function dataHeaders(tls: boolean): MiddlewareHandler {
  return headersWith(DATA_CSP, tls);
}

export function securityHeaders(options: SecurityHeadersOptions): MiddlewareHandler {
  const ui = headersWith(UI_CSP, options.tls);
  const docs = headersWith(DOCS_CSP, options.tls);
  const data = headersWith(DATA_CSP, options.tls);
  const under = (path: string, prefix: string): boolean => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
  return async (c, next) => {
    const path = c.req.path;
    const chosen = under(path, options.docsPath) ? docs : options.dataPaths.some((prefix) => under(path, prefix)) ? data : ui;
    await chosen(c, next);
  };
}
