// All running Resource Graph pollers, by source name: the lifecycle the CRD watcher (and the
// --arg-config file) drive.
import type { ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';
import { type PollerDeps, ResourceGraphPoller } from './resource-graph-poller.ts';
import type { PollStatus, ResourceGraphPollers } from './resource-graph-pollers.ts';

export class ResourceGraphPollerPool implements ResourceGraphPollers {
  readonly #deps: PollerDeps;
  readonly #pollers = new Map<string, ResourceGraphPoller>();

  constructor(deps: PollerDeps) {
    this.#deps = deps;
  }

  get(name: string): ResourceGraphPoller | undefined {
    return this.#pollers.get(name);
  }

  upsert(source: ResourceGraphSourceSpec, onStatus: (status: PollStatus) => void): void {
    const running = this.#pollers.get(source.name);
    if (running !== undefined) {
      running.reconfigure(source);
      return;
    }
    const poller = new ResourceGraphPoller(source, this.#deps, onStatus);
    this.#pollers.set(source.name, poller);
    poller.start();
  }

  async remove(name: string): Promise<void> {
    const poller = this.#pollers.get(name);
    this.#pollers.delete(name);
    await poller?.stop();
  }

  async stopAll(): Promise<void> {
    const pollers = [...this.#pollers.values()];
    this.#pollers.clear();
    await Promise.all(pollers.map((poller) => poller.stop()));
  }
}
