// A list+watch informer that keeps going. The client library's informer relists after 410 Gone
// and re-watches after a graceful stream end (with its own backoff), but it stops for good after
// an error (an abrupt socket loss, a failed list): this wrapper restarts it with backoff. It also
// re-delivers every cached object on a resync period, so that work that failed (or was skipped
// while another replica led) is done eventually. A kind watched only when served (Argo CD's) takes a
// 404 as "not installed": said once, and asked again each resync period rather than with backoff.
import { type Informer, type KubeConfig, type KubernetesListObject, makeInformer, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import { Backoff } from './backoff.ts';
import { objectKey } from './kube-objects.ts';
import { isNotFound } from './status-writer.ts';
import type { KubeObject } from '../../wire/kube-object.ts';

export interface InformerOptions {
  readonly name: string;
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<KubeObject>>;
  readonly resyncMs: number;
  /** A 404 on list means the kind is not installed: no warning, and the next look after resyncMs. */
  readonly whenServed?: boolean;
  /** Called with the object's key and the object, or undefined when it was deleted. */
  readonly onChange: (key: string, object: KubeObject | undefined, previous: KubeObject | undefined) => void;
  /** Told of every failed list or broken watch, before the restart is scheduled (metrics). */
  readonly onError?: (error: unknown) => void;
}

export class ResilientInformer {
  readonly #options: InformerOptions;
  readonly #log: Logger;
  readonly #informer: Informer<KubeObject> & ObjectCache<KubeObject>;
  readonly #backoff = new Backoff(1_000, 30_000);
  #stopped = false;
  #restartTimer: NodeJS.Timeout | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #synced = false;
  /** Whether the last list found the kind not served (whenServed kinds only). */
  #notServed = false;
  #syncWaiters: (() => void)[] = [];
  readonly #known = new Map<string, KubeObject>();

  constructor(kubeConfig: KubeConfig, options: InformerOptions, log: Logger) {
    this.#options = options;
    this.#log = log.child({ informer: options.name });
    const list = async (): Promise<KubernetesListObject<KubeObject>> => {
      const result = await options.list();
      if (this.#notServed) this.#log.info('now served: watching it');
      this.#notServed = false;
      this.#markSynced();
      this.#backoff.reset();
      return result;
    };
    this.#informer = makeInformer<KubeObject>(kubeConfig, options.path, list);
    const changed = (object: KubeObject): void => {
      const key = objectKey(object);
      const previous = this.#known.get(key);
      this.#known.set(key, object);
      this.#backoff.reset();
      options.onChange(key, object, previous);
    };
    this.#informer.on('add', changed);
    this.#informer.on('update', changed);
    this.#informer.on('delete', (object) => {
      const key = objectKey(object);
      const previous = this.#known.get(key) ?? object;
      this.#known.delete(key);
      options.onChange(key, undefined, previous);
    });
    this.#informer.on('error', (error: unknown) => this.#scheduleRestart(error));
  }

  /** Starts listing and watching; resolves once the first list succeeded. */
  async start(): Promise<void> {
    this.#stopped = false;
    await this.#informer.start();
    this.#resyncTimer = setInterval(() => this.#resync(), this.#options.resyncMs);
    this.#resyncTimer.unref();
    await new Promise<void>((resolve) => (this.#synced ? resolve() : this.#syncWaiters.push(resolve)));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    clearInterval(this.#resyncTimer);
    await this.#informer.stop();
    for (const waiter of this.#syncWaiters.splice(0)) waiter();
  }

  get(key: string): KubeObject | undefined {
    const [namespace, name] = key.split('/', 2);
    return this.#informer.get(name ?? '', namespace === '' ? undefined : namespace);
  }

  list(): readonly KubeObject[] {
    return this.#informer.list();
  }

  #markSynced(): void {
    this.#synced = true;
    for (const waiter of this.#syncWaiters.splice(0)) waiter();
  }

  #resync(): void {
    for (const object of this.#informer.list()) this.#options.onChange(objectKey(object), object, object);
  }

  #scheduleRestart(error: unknown): void {
    if (this.#stopped) return;
    const notServed = this.#options.whenServed === true && isNotFound(error);
    // A kind the API server does not serve (not installed) is no watch error.
    if (!notServed) this.#options.onError?.(error);
    const delay = notServed ? this.#options.resyncMs : this.#backoff.next();
    if (!notServed) this.#log.warn({ err: error instanceof Error ? error.message : String(error), retryInMs: delay }, 'watch failed; restarting');
    else if (!this.#notServed) this.#log.info({ retryInMs: delay }, 'not served by the API server (not installed): not watched; looking again later');
    this.#notServed = notServed;
    clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      if (this.#stopped) return;
      this.#informer.start().catch((startError: unknown) => this.#scheduleRestart(startError));
    }, delay);
  }
}
