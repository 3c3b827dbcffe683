// Which DeploymentDescriptors take their commit from which Flux Kustomization (their
// kustomize.toolkit.fluxcd.io labels), so that a Kustomization's new revision requeues its own
// descriptors rather than a scan of every descriptor.
import { descriptorCommitSource } from '../../normalize/kube-resources.ts';
import type { KubeObject } from '../../wire/kube-object.ts';

export class KustomizationIndex {
  /** Kustomization key → its descriptors' keys. */
  readonly #descriptors = new Map<string, Set<string>>();
  /** Descriptor key → the Kustomization it follows. */
  readonly #followed = new Map<string, string>();

  /** A descriptor as it is now; undefined: deleted. */
  update(descriptorKey: string, descriptor: KubeObject | undefined): void {
    const source = descriptor === undefined ? undefined : descriptorCommitSource(descriptor);
    const kustomization = source?.kind === 'kustomization' ? `${source.namespace}/${source.name}` : undefined;
    const before = this.#followed.get(descriptorKey);
    if (before === kustomization) return;
    if (before !== undefined) {
      const descriptors = this.#descriptors.get(before)!;
      descriptors.delete(descriptorKey);
      if (descriptors.size === 0) this.#descriptors.delete(before);
      this.#followed.delete(descriptorKey);
    }
    if (kustomization !== undefined) {
      let descriptors = this.#descriptors.get(kustomization);
      if (descriptors === undefined) this.#descriptors.set(kustomization, (descriptors = new Set()));
      descriptors.add(descriptorKey);
      this.#followed.set(descriptorKey, kustomization);
    }
  }

  descriptorsOf(kustomizationKey: string): readonly string[] {
    return [...(this.#descriptors.get(kustomizationKey) ?? [])];
  }
}
