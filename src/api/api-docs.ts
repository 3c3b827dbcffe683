// A browsable API reference at /api/docs: Swagger UI served from the installed swagger-ui-dist
// package (no CDN: the hub must work on networks without internet access).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono } from 'hono';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Kalypso Observability Hub API</title>
  <link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/swagger-ui-bundle.js"></script>
  <script src="/api/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#swagger-ui' });`;

export function apiDocsRoutes(): Hono {
  const directory = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const app = new Hono();
  app.get('/', (c) => c.html(PAGE));
  app.get('/init.js', (c) => c.body(INIT, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/:asset', async (c) => {
    const asset = c.req.param('asset');
    const type = ASSETS[asset];
    if (type === undefined) return c.notFound();
    let body = cache.get(asset);
    if (body === undefined) {
      body = await readFile(path.join(directory, asset));
      cache.set(asset, body);
    }
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
  return app;
}
