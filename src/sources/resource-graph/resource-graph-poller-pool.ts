// All running Resource Graph pollers, by source name, as one Source of the hub: started with the
// --arg-config file's sources (which poll on every replica), then driven by the CRD watcher's
// AzureResourceGraph resources (on the leader). Stopping it stops every poller.
import { loadArgConfig } from './arg-config.ts';
import type { ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';
import type { Source } from '../source.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import { type PollerDeps, ResourceGraphPoller } from './resource-graph-poller.ts';
import type { PollStatus, ResourceGraphPollers } from './resource-graph-pollers.ts';

export class ResourceGraphPollerPool implements ResourceGraphPollers, Source {
  readonly name = 'resource-graph';
  readonly #deps: Omit<PollerDeps, 'sink'>;
  /** The --arg-config file, if any. */
  readonly #argConfig: string | undefined;
  readonly #pollers = new Map<string, ResourceGraphPoller>();
  #sink: RecordSink | undefined;

  constructor(deps: Omit<PollerDeps, 'sink'>, argConfig: string | undefined) {
    this.#deps = deps;
    this.#argConfig = argConfig;
  }

  async start(sink: RecordSink): Promise<void> {
    this.#sink = sink;
    const { log } = this.#deps;
    for (const source of this.#argConfig === undefined ? [] : await loadArgConfig(this.#argConfig)) {
      this.upsert(source, (status) => (status.ready ? log.info.bind(log) : log.warn.bind(log))({ source: source.name, ...status }, 'Resource Graph poll'));
    }
  }

  stop(): Promise<void> {
    return this.stopAll();
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
    if (this.#sink === undefined) throw new Error('Resource Graph pollers are not started');
    const poller = new ResourceGraphPoller(source, { ...this.#deps, sink: this.#sink }, onStatus);
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
