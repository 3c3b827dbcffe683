// Headless Chromium (Debian's `chromium` package, driven by playwright-core) for the UI tests.
// Every page it opens reports the Content-Security-Policy violations the browser sees, and closing
// the browser fails when there were any: each UI test runs under the hub's CSP and proves it holds.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((entry) => entry !== undefined && entry !== '');
  const found = candidates.find((candidate): candidate is string => candidate !== undefined && existsSync(candidate));
  if (found === undefined) throw new Error('no Chromium found: install the Debian package `chromium` (.ci/run does) or set CHROMIUM_PATH');
  return found;
}

/**
 * The page's document as functions evaluated in the page read it (test code is compiled without the
 * DOM's types). Pass functions, not strings, to evaluate and waitForFunction: a string is evaluated
 * with eval, which the hub's Content-Security-Policy refuses.
 */
export interface PageGlobals {
  readonly document: {
    querySelector(selector: string): { readonly textContent: string | null; getAttribute(name: string): string | null } | null;
    querySelectorAll(selector: string): { readonly length: number };
  };
}

const violationsOf = new WeakMap<Browser, string[]>();

/** The CSP violations the browser's pages reported so far (directive, what was blocked, where). */
export function cspViolations(browser: Browser): readonly string[] {
  return violationsOf.get(browser) ?? [];
}

export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Without the background-networking switches Chromium keeps dialling out on a closed network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const violations: string[] = [];
  violationsOf.set(browser, violations);
  const newContext = browser.newContext.bind(browser);
  const close = browser.close.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    await reportViolations(context, violations);
    return context;
  };
  // As playwright's own newPage: a context of its own, closed with the page.
  browser.newPage = async (options) => {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    page.once('close', () => void context.close().catch(() => undefined));
    return page;
  };
  browser.close = async (options) => {
    await close(options);
    if (violations.length > 0) throw new Error(`the browser reported Content-Security-Policy violations:\n${[...new Set(violations)].join('\n')}`);
  };
  return browser;
}

/**
 * Both ways a violation shows: the document's securitypolicyviolation event (listened to before any
 * script of the page runs) and the console error Chromium writes for it.
 */
async function reportViolations(context: BrowserContext, violations: string[]): Promise<void> {
  await context.exposeBinding('__kalypsoCspViolation', (_source, text: string) => violations.push(text));
  // Runs in the page (a string: this file is type-checked without the DOM's types).
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      window.__kalypsoCspViolation(event.effectiveDirective + ' blocked ' + (event.blockedURI || '(inline)') + ' on ' + event.documentURI + (event.sample ? ': ' + event.sample : ''));
    });`,
  });
  context.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) violations.push(`console: ${message.text()} (${message.page()?.url() ?? ''})`);
  });
}

export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/ui');

export async function artifactPath(name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, `${name}.png`);
}
