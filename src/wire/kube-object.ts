// A Kubernetes object as it arrives on the wire. The watcher reads these, and the normalizers turn
// them into records, so the type sits below both.
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';

/**
 * A watched resource. Custom resources arrive as plain JSON: timestamps are strings whatever the
 * client's types say, and spec and status are unchecked until a normalizer reads them.
 */
export type KubeObject = KubernetesObject & {
  readonly metadata: V1ObjectMeta;
  readonly spec?: unknown;
  readonly status?: unknown;
};
