// Stands in for the Resource Graph poller where none is configured: every source is reported
// not ready, with the reason, instead of silently doing nothing.
import type { PollStatus, ResourceGraphPollers } from './resource-graph-pollers.ts';

export class UnavailablePollers implements ResourceGraphPollers {
  readonly #reason: string;

  constructor(reason: string) {
    this.#reason = reason;
  }

  upsert(_source: unknown, onStatus: (status: PollStatus) => void): void {
    onStatus({ ready: false, reason: 'PollerUnavailable', message: this.#reason });
  }

  async remove(): Promise<void> {}

  async stopAll(): Promise<void> {}
}
