// Repositories as the notifications file names them: globs over repository URLs, matched against
// the repositories the hub knows (descriptors' manifests and source repos). A repository is
// compared by host and path only — `https://github.com/org/repo`, `https://github.com/org/repo.git/`
// and `git@github.com:org/repo.git` are one repository — so a glob written for one spelling finds
// the others.
import { ok, refused, type Result } from '../model/result.ts';

/** A repository by host (lower case) and path segments (without `.git`). */
export interface RepoLocation {
  readonly host: string;
  readonly path: readonly string[];
}

export interface RepoPattern {
  readonly glob: string;
  matches(repo: string): boolean;
}

/** Where a repository URL points: https/http/ssh URLs and scp-like `user@host:path` alike; undefined for anything else. */
export function repoLocation(url: string): RepoLocation | undefined {
  const text = url.trim();
  const scpLike = /^[\w.-]+@([^/:]+):(?!\/\/)(.+)$/.exec(text);
  let host: string;
  let path: string;
  if (scpLike !== null) {
    [host, path] = [scpLike[1]!, scpLike[2]!];
  } else {
    try {
      const parsed = new URL(text);
      if (!['https:', 'http:', 'ssh:', 'git:'].includes(parsed.protocol) || parsed.hostname === '') return undefined;
      [host, path] = [parsed.hostname, decodeURIComponent(parsed.pathname)];
    } catch {
      return undefined;
    }
  }
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  const last = segments.length - 1;
  if (last >= 0 && segments[last]!.endsWith('.git')) segments[last] = segments[last]!.slice(0, -'.git'.length);
  return segments.length === 0 ? undefined : { host: host.toLowerCase(), path: segments };
}

/** `host/path` of a location: what globs are matched against. */
export function locationText(location: RepoLocation): string {
  return [location.host, ...location.path].join('/');
}

/** A glob over repository URLs: `*` within one path segment, `**` across segments. */
export function repoPattern(glob: string): Result<RepoPattern> {
  const location = repoLocation(glob.replace(/\*\*?/g, (stars) => (stars === '**' ? '\uE000' : '\uE001')));
  if (location === undefined) return refused('must be a repository URL such as https://github.com/org/* (globs: * within a segment, ** across)');
  const source = locationText(location)
    .split(/([\uE000\uE001])/)
    .map((part) => (part === '\uE000' ? '.*' : part === '\uE001' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const expression = new RegExp(`^${source}$`, 'i');
  return ok({
    glob,
    matches: (repo) => {
      const candidate = repoLocation(repo);
      return candidate !== undefined && expression.test(locationText(candidate));
    },
  });
}
