// The environments' names in promotion order, as GET /environments last answered them in this tab.
// A page that needs both the names and an answer asked by them (the matrix asks /compare by names)
// asks for the second with the remembered names at the same time as the first, instead of after
// it; the names change seldom, and when they have, the page asks again with the new ones.
const STORAGE_KEY = 'kalypso-environment-names';

/** The names last seen, or undefined when this tab has seen none. */
export function rememberedEnvironments(): readonly string[] | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as unknown;
    return Array.isArray(stored) && stored.length > 0 && stored.every((name) => typeof name === 'string') ? (stored) : undefined;
  } catch {
    return undefined;
  }
}

export function rememberEnvironments(names: readonly string[]): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(names));
}

export function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}
