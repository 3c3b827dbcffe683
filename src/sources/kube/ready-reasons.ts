// The reasons of the Ready condition the hub writes on its resources: what a `kubectl get` shows
// and what users and scripts match on, so each is written once, here.

export const READY_REASON = {
  /** The resource's records are stored. */
  recorded: 'Recorded',
  /** A field is wrong; the message names it. Nothing is stored until the resource changes. */
  invalid: 'Invalid',
  /** A descriptor whose commit comes from a Flux Kustomization that has not reported it yet. */
  waitingForKustomization: 'WaitingForKustomization',
} as const;

export type ReadyReason = (typeof READY_REASON)[keyof typeof READY_REASON];
