// Checks API requests against the RBAC rules the hub ships (deploy/base/rbac.yaml).
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
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

export async function loadHubRoles(): Promise<RoleDocument[]> {
  const text = await readFile(new URL('../../deploy/base/rbac.yaml', import.meta.url), 'utf8');
  return parseAllDocuments(text)
    .map((document) => document.toJS() as RoleDocument)
    .filter((document) => document.kind === 'ClusterRole' || document.kind === 'Role');
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
