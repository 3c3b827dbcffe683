// A controller work queue: keys of objects that changed, deduplicated (a key queued ten times is
// processed once, with the object's latest state), processed in batches, and retried with
// backoff when processing reports that the store could not take them. Keys are values of any
// type; `idOf` says when two are the same key.
import type { Logger } from '../../log/logger.ts';
import { Backoff } from './backoff.ts';

export interface WorkQueueOptions<K> {
  readonly batchSize: number;
  /** How long to gather keys before processing a batch. */
  readonly batchDelayMs: number;
  /** The same text for the same key: what deduplicates. */
  readonly idOf: (key: K) => string;
}

/** Processes a batch; returns the keys to retry later. */
export type ProcessBatch<K> = (keys: readonly K[]) => Promise<readonly K[]>;

export class WorkQueue<K> {
  readonly #process: ProcessBatch<K>;
  readonly #options: WorkQueueOptions<K>;
  readonly #log: Logger;
  readonly #backoff = new Backoff(500, 30_000);
  readonly #pending = new Map<string, K>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(process: ProcessBatch<K>, options: WorkQueueOptions<K>, log: Logger) {
    this.#process = process;
    this.#options = options;
    this.#log = log;
  }

  add(key: K): void {
    if (this.#stopped) return;
    this.#pending.set(this.#options.idOf(key), key);
    this.#schedule(this.#options.batchDelayMs);
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Stops taking keys and waits for the batch in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Resolves when nothing is pending or in progress (tests and shutdown use it). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0 || this.#running !== undefined) {
      await (this.#running ?? new Promise((resolve) => setTimeout(resolve, 10)));
    }
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#running !== undefined || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#runBatch().finally(() => {
        this.#running = undefined;
        if (this.#pending.size > 0) this.#schedule(0);
      });
    }, delayMs);
  }

  async #runBatch(): Promise<void> {
    const ids = [...this.#pending.keys()].slice(0, this.#options.batchSize);
    const keys = ids.map((id) => this.#pending.get(id)!);
    for (const id of ids) this.#pending.delete(id);
    let retry: readonly K[];
    try {
      retry = await this.#process(keys);
    } catch (error) {
      this.#log.error({ err: error }, 'processing a batch failed');
      retry = keys;
    }
    if (retry.length === 0) {
      this.#backoff.reset();
      return;
    }
    for (const key of retry) this.#pending.set(this.#options.idOf(key), key);
    const delay = this.#backoff.next();
    this.#log.warn({ keys: retry.length, retryInMs: delay }, 'will retry');
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
