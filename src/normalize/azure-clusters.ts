// Whether Azure hears from a cluster, from its own resource in Resource Graph — the liveness of the
// reconcilers Azure reports on it. A flux configuration's statusUpdatedAt moves only when its state
// changes: a cluster Compliant on one commit for days is not silent, and must not turn stale. Pure.
// Facts (docs/research/azure-cluster-liveness.md):
// - Arc `microsoft.kubernetes/connectedclusters`: properties.connectivityStatus is Connecting,
//   Connected, Offline, Expired or AgentNotInstalled; properties.lastConnectivityTime is the last
//   heartbeat Azure received from the cluster's agents.
// - AKS `microsoft.containerservice/managedclusters`: reachable by Azure while it exists;
//   properties.powerState.code is Running or Stopped.

/** One query for both kinds, paged like the configurations; only the fields the rule reads. */
export const CLUSTER_LIVENESS_QUERY =
  "resources | where type in~ ('microsoft.kubernetes/connectedclusters', 'microsoft.containerservice/managedclusters') " +
  '| project id, type, connectivityStatus = properties.connectivityStatus, lastConnectivityTime = properties.lastConnectivityTime, ' +
  'powerState = properties.powerState.code | order by id asc';

export interface ClusterLiveness {
  /** The cluster's resource id, lower-cased (ids are case-insensitive in Azure). */
  readonly clusterId: string;
  /** Azure's word for it: Connected, Offline, Expired, Running, Stopped, … */
  readonly state: string;
  /** The newest moment the cluster is known alive: the poll for a connected or running one. */
  readonly aliveAt: Date | undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A row of CLUSTER_LIVENESS_QUERY → the cluster's liveness at `polledAt`; undefined when not a cluster row. */
export function clusterLiveness(row: unknown, polledAt: Date): ClusterLiveness | undefined {
  const fields = typeof row === 'object' && row !== null ? (row as Record<string, unknown>) : {};
  const clusterId = text(fields['id'])?.toLowerCase();
  const type = text(fields['type'])?.toLowerCase();
  if (clusterId === undefined) return undefined;
  if (type === 'microsoft.kubernetes/connectedclusters') {
    const state = text(fields['connectivityStatus']) ?? 'Unknown';
    const last = text(fields['lastConnectivityTime']);
    const lastHeard = last === undefined || Number.isNaN(new Date(last).getTime()) ? undefined : new Date(last);
    // Connected: alive now. Offline or Expired: last heard at its last heartbeat (so it turns stale).
    const aliveAt = state.toLowerCase() === 'connected' ? polledAt : lastHeard !== undefined && lastHeard < polledAt ? lastHeard : undefined;
    return { clusterId, state, aliveAt };
  }
  if (type === 'microsoft.containerservice/managedclusters') {
    const state = text(fields['powerState']) ?? 'Running';
    return { clusterId, state, aliveAt: state.toLowerCase() === 'stopped' ? undefined : polledAt };
  }
  return undefined;
}

/** The cluster resource id of a resource under it (a flux configuration): its first 9 path segments. */
export function clusterIdOf(resourceId: string): string | undefined {
  const segments = resourceId.split('/');
  return segments.length >= 9 && segments[8] !== '' ? segments.slice(0, 9).join('/').toLowerCase() : undefined;
}
