// The kinds the CRD watcher reconciles, each set up in its own file (see kind-setup.ts).
import { argoApplicationKind } from './argocd-application-kind.ts';
import { azureResourceGraphKind } from './azure-resource-graph-kind.ts';
import { descriptorKind } from './descriptor-kind.ts';
import type { KindSetup } from './kind-setup.ts';
import { reconcilerKind } from './reconciler-kind.ts';

export const KUBE_KINDS: readonly KindSetup[] = [descriptorKind, reconcilerKind, azureResourceGraphKind, argoApplicationKind];
