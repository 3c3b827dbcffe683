// A manifests endpoint is `repo + "/" + branch + "/" + path`, the key that ties a deployment
// target (desired state) to the reconcilers that pull it (real state). Each source spells repos
// and paths its own way (`./clusters/a`, `repo.git`, trailing slashes), so every endpoint is put
// in one normal form before it is compared or stored.

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Endpoints already put in normal form. A fleet reports a few thousand endpoints over and over:
 * under ingest, normalizing each report's endpoint anew was 2 % of the hub's CPU. Emptied when full.
 */
const normalized = new Map<string, string>();
const MAX_REMEMBERED = 10_000;

/** Normal form of an endpoint: no `.`/empty segments, no trailing `/`, repo without `.git`. */
export function normalizeManifestsEndpoint(endpoint: string): string {
  let result = normalized.get(endpoint);
  if (result === undefined) {
    result = normalForm(endpoint);
    if (normalized.size >= MAX_REMEMBERED) normalized.clear();
    normalized.set(endpoint, result);
  }
  return result;
}

function normalForm(endpoint: string): string {
  const trimmed = endpoint.trim();
  const scheme = SCHEME.exec(trimmed)?.[0] ?? '';
  const segments = trimmed
    .slice(scheme.length)
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.');
  // The repository is the first segment ending in `.git`, if any: `host/org/repo.git/branch/path`.
  const repoEnd = segments.findIndex((segment) => segment.endsWith('.git'));
  if (repoEnd >= 0) segments[repoEnd] = segments[repoEnd]!.slice(0, -'.git'.length);
  return scheme + segments.filter((segment) => segment !== '').join('/');
}

/** Endpoint of a repo, branch and path, as the seeds define it. */
export function composeManifestsEndpoint(repo: string, branch: string, path: string): string {
  const parts = [repo.trim().replace(/\/+$/, '').replace(/\.git$/, ''), branch.trim(), path.trim()];
  return normalizeManifestsEndpoint(parts.filter((part) => part !== '').join('/'));
}

/** Endpoint, branch (`repo/branch`) and repository, in normal form, of a repo, branch and path named apart. */
export function manifestsOf(repo: string, branch: string, path: string): { endpoint: string; branch: string; repo: string } {
  return { endpoint: composeManifestsEndpoint(repo, branch, path), branch: composeManifestsEndpoint(repo, branch, ''), repo: composeManifestsEndpoint(repo, '', '') };
}
