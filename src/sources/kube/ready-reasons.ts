// The reasons of the Ready condition the hub writes on its resources: what a `kubectl get` shows
// and what users and scripts match on, so each is written once, here.

export const READY_REASON = {
  /** The resource's records are stored. */
  recorded: 'Recorded',
  /** A field is wrong; the message names it. Nothing is stored until the resource changes. */
  invalid: 'Invalid',
  /** A descriptor whose commit comes from a Flux Kustomization that has not reported it yet. */
  waitingForKustomization: 'WaitingForKustomization',
  /** A Reconciler registered without a deployment (or with an empty commit), as the original hub allowed. */
  waitingForDeployment: 'WaitingForDeployment',
  /** A Reconciler the original hub's AzureResourceGraph controller created: this hub polls Resource Graph itself. */
  resourceGraphCopy: 'ResourceGraphCopy',
} as const;

export type ReadyReason = (typeof READY_REASON)[keyof typeof READY_REASON];
