// The host an Argo CD destination names (CONTRACT 3.5): `spec.destination.name`; the cluster that
// sent or watched the application for an in-cluster destination; a remote server's host name when
// there is no name. Argo CD refuses a destination with both; the name is then taken, as Argo CD
// v2 did.
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { ok, refused, type Result } from '../model/result.ts';

/** What Argo CD calls the cluster it runs in, by name and by server. */
const IN_CLUSTER_NAME = 'in-cluster';
const IN_CLUSTER_SERVER = 'https://kubernetes.default.svc';

export function destinationHost(
  destination: { readonly name: string | undefined; readonly server: string | undefined },
  localCluster: string,
  prefix: string,
): Result<string> {
  if (destination.name !== undefined) return ok(destination.name === IN_CLUSTER_NAME ? localCluster : destination.name);
  const server = (destination.server ?? '').replace(/\/+$/, '');
  if (server.toLowerCase() === IN_CLUSTER_SERVER) return ok(localCluster);
  // The port is dropped: the host is the cluster's, not its API server's listener.
  const hostname = URL.canParse(server) ? new URL(server).hostname : '';
  const read = new FieldReader();
  const host = read.requiredString(`${prefix}spec.destination.server`, hostname, FIELD_LIMITS.name);
  if (read.problem !== undefined) return refused(hostname === '' ? `${prefix}spec.destination.server must be a URL such as https://10.0.0.5:6443 (got ${JSON.stringify(server)})` : read.problem);
  return ok(host);
}
