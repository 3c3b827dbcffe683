// Checks API requests against the RBAC rules the hub ships: the chart's, rendered in the docs'
// release (namespace kalypso-system, Lease kalypso-hub) with its defaults or the values given.
import { chartRoles } from './helm-chart.ts';
import type { RecordedRequest } from './kube-apiserver.ts';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RoleDocument {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
}

/** The chart's Roles and ClusterRoles with `values` (e.g. Argo CD on, for a hub that reads Applications). */
export async function loadHubRoles(values: object = {}): Promise<RoleDocument[]> {
  return chartRoles(values);
}

/** The RBAC attributes of a request: verb, API group, resource (with subresource), namespace, name. */
export function requestAttributes(request: RecordedRequest) {
  const match = /^\/(?:apis\/([^/]+)|api)\/[^/]+(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(request.path);
  if (match === null) throw new Error(`unexpected path ${request.path}`);
  const [, group = '', namespace, resource, name, subresource] = match;
  const verb =
    request.method === 'GET'
      ? name === undefined
        ? request.watch
          ? 'watch'
          : 'list'
        : 'get'
      : ({ POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[request.method];
  return { verb: verb!, group, resource: subresource === undefined ? resource! : `${resource}/${subresource}`, namespace, name };
}

export function isAllowed(roles: readonly RoleDocument[], request: RecordedRequest): boolean {
  const { verb, group, resource, namespace, name } = requestAttributes(request);
  return roles.some(
    (role) =>
      (role.kind === 'ClusterRole' || role.metadata.namespace === namespace) &&
      (role.rules ?? []).some(
        (rule) =>
          rule.apiGroups.includes(group) &&
          rule.resources.includes(resource) &&
          rule.verbs.includes(verb) &&
          (rule.resourceNames === undefined || (name !== undefined && rule.resourceNames.includes(name))),
      ),
  );
}
