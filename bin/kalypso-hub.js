#!/usr/bin/env -S node --disable-warning=ExperimentalWarning
// The package's command. Sources are TypeScript run directly by Node's type stripping
// (Node >= 22.18), so there is no build step between a clone and a running hub. The web UI's
// modules are served with their types stripped by node:module, still marked experimental: its
// one-time warning is silenced.
await import('../src/cli/main.ts');
