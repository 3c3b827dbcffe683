// Filters live in the URL, so a view can be shared and the back button works.

export function params(): URLSearchParams {
  return new URLSearchParams(location.search);
}

export function param(name: string): string | undefined {
  const value = params().get(name);
  return value === null || value === '' ? undefined : value;
}

/** A link within the UI: path plus the given query parameters (empty ones left out). */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  return search.size > 0 ? `${path}?${search.toString()}` : path;
}

/** The Rollout view of a commit: on one manifests endpoint, or across an environment (Check Promote). */
export function rolloutHref(scope: { endpoint: string } | { environment: string }, commit: string): string {
  return href('/rollout', { ...scope, commit });
}
