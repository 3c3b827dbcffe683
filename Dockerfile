# syntax=docker/dockerfile:1
# Kalypso Observability Hub image. It runs against an external PostgreSQL (DATABASE_URL): the
# embedded PostgreSQL binaries (60 MB of optional packages) are left out. Node strips the
# TypeScript types at run time, so there is no build step; the first stage only installs.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: npm ci refuses lockfiles written where the registry lacks other platforms'
# optional packages (see .ci/run). Production dependencies only, no install
# scripts (none of them needs one).
RUN npm install --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
# V8 sizes its heap by the machine's memory, not by what the hub needs (a live set of 30-50 MB
# under sustained ingest): without caps a hub on a large node grows to ~400 MB RSS. Measured in
# docs/benchmarks.md; raise them here or in the pod's environment for very large reports.
ENV NODE_OPTIONS="--max-semi-space-size=32 --max-old-space-size=256"
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY schema ./schema
COPY src ./src
# The image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
EXPOSE 8080 4317 4318
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["node", "-e", "const tls = Boolean(process.env.KALYPSO_TLS_CERT_FILE); require(tls ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.KALYPSO_HTTP_PORT || 8080, path: '/healthz', rejectUnauthorized: false }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
ENTRYPOINT ["node", "--disable-warning=ExperimentalWarning", "src/cli/main.ts"]
CMD ["serve"]
