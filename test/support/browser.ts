// Headless Chromium (Debian's `chromium` package, driven by playwright-core) for the UI tests.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';

export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((entry) => entry !== undefined && entry !== '');
  const found = candidates.find((candidate): candidate is string => candidate !== undefined && existsSync(candidate));
  if (found === undefined) throw new Error('no Chromium found: install the Debian package `chromium` (.ci/run does) or set CHROMIUM_PATH');
  return found;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Without the background-networking switches Chromium keeps dialling out on a closed network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/ui');

export async function artifactPath(name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, `${name}.png`);
}
