// The web UI's files as the hub serves them, read once: the browser modules (TypeScript in app/,
// their types stripped by Node itself), the vendored packages they import, the stylesheet, and the
// shell that loads them. Everything is named under a version — a hash of all of it — so that a
// browser keeps each file for good (immutable) and asks again only when the hub serves another UI;
// and the shell names every module up front (modulepreload), so that the browser fetches them all at
// once rather than one level of imports after another.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const APP_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app');
const ENTRY = 'main.ts';

/**
 * Browser modules the UI imports by bare name, and the file each is served from (under vendor/):
 * idiomorph updates a page in place on refresh, so focus, scroll and a selection survive it. An
 * import map would say the same, but browsers take import maps inline only, and the page keeps to
 * no inline script: the names are rewritten to relative paths as the modules are served
 * (withVendorPaths).
 */
const VENDOR: Readonly<Record<string, { readonly name: string; readonly file: string }>> = {
  idiomorph: { name: 'idiomorph.js', file: fileURLToPath(import.meta.resolve('idiomorph')) },
};

export interface UiAssets {
  /** 12 hex digits of a hash over every file below: the path segment the files are served under. */
  readonly version: string;
  /** JavaScript of each module reachable from main.ts, by its path under app/ ('pages/hosts-page.ts'). */
  readonly modules: ReadonlyMap<string, string>;
  /** JavaScript of each vendored package, by its name under vendor/ ('idiomorph.js'). */
  readonly vendor: ReadonlyMap<string, string>;
  readonly styles: string;
  /** Where each file is served under the version: the shell's stylesheet, preloads and entry module. */
  readonly paths: { readonly styles: string; readonly entry: string; readonly preload: readonly string[] };
}

let loaded: UiAssets | undefined;

/** The UI's files, read on first use (a few dozen small files) and kept for the process's life. */
export function uiAssets(): UiAssets {
  loaded ??= loadUiAssets();
  return loaded;
}

function loadUiAssets(): UiAssets {
  const modules = moduleGraph();
  const vendor = new Map(Object.values(VENDOR).map((entry) => [entry.name, readFileSync(entry.file, 'utf8')]));
  const styles = readFileSync(path.join(APP_DIR, 'styles.css'), 'utf8');
  const hash = createHash('sha256');
  for (const [name, code] of [...modules, ...vendor, ['styles.css', styles] as const].sort(([a], [b]) => a.localeCompare(b))) hash.update(`${name}\0${code}\0`);
  const version = hash.digest('hex').slice(0, 12);
  const prefix = `/ui/${version}`;
  return {
    version,
    modules,
    vendor,
    styles,
    paths: {
      styles: `${prefix}/styles.css`,
      entry: `${prefix}/app/${ENTRY}`,
      preload: [...[...modules.keys()].filter((name) => name !== ENTRY).sort().map((name) => `${prefix}/app/${name}`), ...[...vendor.keys()].map((name) => `${prefix}/vendor/${name}`)],
    },
  };
}

/** Every module main.ts imports, directly or not, as served: types stripped, vendored names as paths. */
function moduleGraph(): Map<string, string> {
  const modules = new Map<string, string>();
  const pending = [ENTRY];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (modules.has(name)) continue;
    const code = stripTypeScriptTypes(readFileSync(path.join(APP_DIR, name), 'utf8'), { mode: 'strip' });
    modules.set(name, withVendorPaths(code, name));
    for (const specifier of relativeImports(code)) {
      const imported = path.posix.normalize(path.posix.join(path.posix.dirname(name), specifier));
      // The browser could not load a module outside app/ (the hub serves only that folder).
      if (imported.startsWith('../') || !MODULE_NAME.test(imported)) throw new Error(`the UI module ${name} imports ${specifier}, which is no module of src/ui/app`);
      pending.push(imported);
    }
  }
  return modules;
}

/** A module's path under app/ as the hub serves it: plain names, .ts, no way out of the folder. */
export const MODULE_NAME = /^[\w-]+(\/[\w-]+)*\.ts$/;

/** Static import and re-export specifiers of the UI's own modules ('./dom.ts', '../api.ts'). */
function relativeImports(code: string): string[] {
  return [...code.matchAll(/\b(?:from|import)\s*(['"])(\.{1,2}\/[^'"]*)\1/g)].map((match) => match[2]!);
}

/**
 * The module's static imports of a vendored package by its bare name (`from 'idiomorph'`), pointed
 * at its path relative to the module (`from '../vendor/idiomorph.js'` in app/dom.ts): the same code
 * then loads under /ui/app/ and under /ui/<version>/app/. Other specifiers are the UI's own relative
 * paths and stay.
 */
export function withVendorPaths(code: string, moduleName: string): string {
  const up = '../'.repeat(moduleName.split('/').length);
  return code.replace(/(\bfrom\s*|\bimport\s*)(['"])([^'"./][^'"]*)\2/g, (whole, lead: string, quote: string, name: string) => {
    const vendor = VENDOR[name];
    return vendor === undefined ? whole : `${lead}${quote}${up}vendor/${vendor.name}${quote}`;
  });
}
