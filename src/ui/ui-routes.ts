// Serves the web UI: one HTML shell for every page path, the stylesheet, and the browser modules.
// The modules are TypeScript in src/ui/app, served as JavaScript with their types stripped by
// Node itself (node:module stripTypeScriptTypes) — no bundler, no build step, no CDN. Nothing in the
// page is inline, so that it runs under a Content-Security-Policy of `script-src 'self'`
// (src/security/security-headers.ts).
import { readFile } from 'node:fs/promises';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Context, Hono } from 'hono';

const APP_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app');
/**
 * Browser modules the UI imports by bare name, and the path each is served at: idiomorph updates a
 * page in place on refresh, so focus, scroll and a selection survive it. An import map would say
 * the same, but browsers take import maps inline only, and the page keeps to no inline script: the
 * names are rewritten to these paths as the modules are served (withVendorPaths).
 */
const VENDOR: Record<string, { readonly path: string; readonly file: string }> = {
  idiomorph: { path: '/ui/vendor/idiomorph.js', file: fileURLToPath(import.meta.resolve('idiomorph')) },
};
const VENDOR_FILES = new Map(Object.values(VENDOR).map((vendor) => [vendor.path.slice('/ui/vendor/'.length), vendor.file]));
export const UI_PAGES = ['/', '/hosts', '/hosts/:host', '/history', '/drift', '/rollout', '/delivery', '/notifications'] as const;

const SHELL = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Kalypso Observability Hub</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/ui/styles.css">
  <script type="module" src="/ui/app/main.ts"></script>
</head>
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

/**
 * A path no page has, asked for by a browser: the UI's own "not found" page (with status 404), not
 * the API's JSON. Programs (no text/html in Accept) get the JSON answer.
 */
export function uiNotFound(c: Context): Response | undefined {
  const wantsPage = c.req.method === 'GET' && !c.req.path.startsWith('/api/') && (c.req.header('accept') ?? '').includes('text/html');
  return wantsPage ? c.html(SHELL, 404) : undefined;
}

export function uiRoutes(): Hono {
  const app = new Hono();
  const modules = new Map<string, string>();
  for (const page of UI_PAGES) app.get(page, (c) => c.html(SHELL));
  app.get('/ui/vendor/:module', async (c) => {
    const file = VENDOR_FILES.get(c.req.param('module'));
    if (file === undefined) return c.notFound();
    c.header('content-type', 'text/javascript; charset=utf-8');
    c.header('cache-control', 'no-cache');
    return c.body(await readFile(file, 'utf8'));
  });
  app.get('/ui/styles.css', async (c) => {
    c.header('content-type', 'text/css; charset=utf-8');
    return c.body(await readFile(path.join(APP_DIR, 'styles.css'), 'utf8'));
  });
  app.get('/ui/app/*', async (c) => {
    const relative = c.req.path.slice('/ui/app/'.length);
    // Only modules of the UI's own folder, by plain relative names.
    if (!/^[\w-]+(\/[\w-]+)*\.ts$/.test(relative)) return c.notFound();
    let code = modules.get(relative);
    if (code === undefined) {
      const source = await readFile(path.join(APP_DIR, relative), 'utf8').catch(() => undefined);
      if (source === undefined) return c.notFound();
      code = withVendorPaths(stripTypeScriptTypes(source, { mode: 'strip' }));
      modules.set(relative, code);
    }
    c.header('content-type', 'text/javascript; charset=utf-8');
    c.header('cache-control', 'no-cache');
    return c.body(code);
  });
  return app;
}

/**
 * The module's static imports of a vendored package by its bare name (`from 'idiomorph'`), pointed
 * at the path the hub serves it at. Other specifiers are the UI's own relative paths and stay.
 */
export function withVendorPaths(code: string): string {
  return code.replace(/(\bfrom\s*|\bimport\s*)(['"])([^'"./][^'"]*)\2/g, (whole, lead: string, quote: string, name: string) => {
    const vendor = VENDOR[name];
    return vendor === undefined ? whole : `${lead}${quote}${vendor.path}${quote}`;
  });
}
