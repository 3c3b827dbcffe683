// Serves the web UI: one HTML shell for every page path, the stylesheet, and the browser modules.
// The modules are TypeScript in src/ui/app, served as JavaScript with their types stripped by
// Node itself (node:module stripTypeScriptTypes) — no bundler, no build step, no CDN (ui-assets.ts).
// Nothing in the page is inline, so that it runs under a Content-Security-Policy of
// `script-src 'self'` (src/security/security-headers.ts).
//
// The shell names its files under the UI's version (/ui/<version>/…), which browsers keep for good,
// and preloads every module: at fleet L the modules fetched level by level of imports, each asked
// again on every load, took 150–500 ms of each page's time to content before its first API request
// (docs/benchmarks/fleet-l-ui.md). The unversioned paths (/ui/app/…, /ui/styles.css, /ui/vendor/…)
// still answer, revalidated by ETag, for a page loaded before the hub was upgraded.
import { type Context, Hono } from 'hono';
import { etag } from 'hono/etag';
import { MODULE_NAME, type UiAssets, uiAssets } from './ui-assets.ts';

export const UI_PAGES = ['/', '/hosts', '/hosts/:host', '/history', '/drift', '/rollout', '/delivery', '/notifications'] as const;

/** Files named under their version never change: a year, and no revalidation on reload. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The shell and unversioned files: kept, but asked about (by ETag) before each use. */
const REVALIDATE = 'no-cache';

function shell(assets: UiAssets): string {
  const preloads = assets.paths.preload.map((href) => `  <link rel="modulepreload" href="${href}">\n`).join('');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Kalypso Observability Hub</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${assets.paths.styles}">
  <script type="module" src="${assets.paths.entry}"></script>
${preloads}</head>
<body>
  <a class="skip" href="#app">Skip to content</a>
  <header>
    <a class="brand" href="/">Kalypso</a>
    <nav aria-label="Views">
      <a href="/">Environments</a>
      <a href="/hosts">Hosts</a>
      <a href="/history">History</a>
      <a href="/drift">Drift</a>
      <a href="/rollout">Rollout</a>
      <a href="/delivery">Delivery</a>
      <a href="/notifications">Notifications</a>
      <a href="/api/docs" target="_blank" rel="noopener">API</a>
    </nav>
    <div class="refresh" id="refresh"></div>
    <div class="session" id="session"></div>
  </header>
  <main id="app" tabindex="-1"><p>Loading…</p></main>
</body>
</html>`;
}

let shellHtml: string | undefined;

function shellPage(c: Context, status: 200 | 404): Response {
  const assets = uiAssets();
  shellHtml ??= shell(assets);
  c.header('cache-control', REVALIDATE);
  c.header('etag', `"${assets.version}"`);
  return c.html(shellHtml, status);
}

/**
 * A path no page has, asked for by a browser: the UI's own "not found" page (with status 404), not
 * the API's JSON. Programs (no text/html in Accept) get the JSON answer.
 */
export function uiNotFound(c: Context): Response | undefined {
  const wantsPage = c.req.method === 'GET' && !c.req.path.startsWith('/api/') && (c.req.header('accept') ?? '').includes('text/html');
  return wantsPage ? shellPage(c, 404) : undefined;
}

/**
 * One of the UI's files; `version` is the one in its path (undefined: the unversioned path). A path
 * of another version (a page of the hub before an upgrade) gets today's file, revalidated.
 */
function asset(c: Context, version: string | undefined, type: string, body: string | undefined): Response | Promise<Response> {
  if (body === undefined) return c.notFound();
  const current = uiAssets().version;
  c.header('content-type', `${type}; charset=utf-8`);
  c.header('cache-control', version === current ? IMMUTABLE : REVALIDATE);
  c.header('etag', `"${current}"`);
  return c.body(body);
}

export function uiRoutes(): Hono {
  const app = new Hono();
  // Read now: a UI that cannot be served (a module importing what the hub does not serve) stops the start.
  uiAssets();
  // A 304 for a file the browser has (the shell, the unversioned paths): their ETag is the UI's version.
  // Only on the UI's own paths: mounted at '/', a '*' would reach the API's answers too.
  for (const page of [...UI_PAGES, '/ui/*']) app.use(page, etag());
  for (const page of UI_PAGES) app.get(page, (c) => shellPage(c, 200));
  const module = (c: Context, version: string | undefined): Response | Promise<Response> => {
    const name = c.req.path.slice(c.req.path.indexOf('/app/') + '/app/'.length);
    return asset(c, version, 'text/javascript', MODULE_NAME.test(name) ? uiAssets().modules.get(name) : undefined);
  };
  const vendor = (c: Context, version: string | undefined): Response | Promise<Response> => asset(c, version, 'text/javascript', uiAssets().vendor.get(c.req.param('module') ?? ''));
  const styles = (c: Context, version: string | undefined): Response | Promise<Response> => asset(c, version, 'text/css', uiAssets().styles);
  app.get('/ui/app/*', (c) => module(c, undefined));
  app.get('/ui/vendor/:module', (c) => vendor(c, undefined));
  app.get('/ui/styles.css', (c) => styles(c, undefined));
  app.get('/ui/:version{[0-9a-f]{12}}/app/*', (c) => module(c, c.req.param('version')));
  app.get('/ui/:version{[0-9a-f]{12}}/vendor/:module', (c) => vendor(c, c.req.param('version')));
  app.get('/ui/:version{[0-9a-f]{12}}/styles.css', (c) => styles(c, c.req.param('version')));
  return app;
}
