#!/usr/bin/env node
// The package's command. Sources are TypeScript run directly by Node's type stripping
// (Node >= 22.18), so there is no build step between a clone and a running hub.
await import('../src/cli/main.ts');
