// The named service tokens of --service-tokens, read again whenever the file changes, so that a
// token is added, rotated or revoked without a restart. Watched twice over: fs.watch on the file's
// folder (an editor's or kubectl's atomic rename replaces the file, and a Kubernetes Secret volume
// swaps a symlink beside it — a watch on the file itself would lose track), and a periodic stat as a
// fallback where watches do not fire (network filesystems, some containers). A file that does not
// parse is logged and the tokens in force stay: a half-written file never locks everyone out.
import { createHash, timingSafeEqual } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log/logger.ts';
import { parseServiceTokens, type ServiceToken, SERVICE_TOKENS_SETTING, tokenDigest } from './service-tokens-file.ts';
import { documentError } from './yaml-document.ts';

export const SERVICE_TOKENS_TUNING = {
  /** How often the file is looked at when no watch event came. */
  pollMs: 2_000,
  /** Events come in bursts (write, rename, chmod): read once they settle. */
  settleMs: 50,
} as const;
export type ServiceTokensTuning = { readonly [K in keyof typeof SERVICE_TOKENS_TUNING]: number };

export class ServiceTokens {
  readonly #file: string;
  readonly #log: Logger;
  #tokens: readonly ServiceToken[];
  #seen: string;
  /** The content last refused, so that a bad file is reported once, not at every look. */
  #refused = '';
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #reading: Promise<void> = Promise.resolve();

  private constructor(file: string, tokens: readonly ServiceToken[], seen: string, log: Logger) {
    this.#file = file;
    this.#tokens = tokens;
    this.#seen = seen;
    this.#log = log;
  }

  /** Reads and checks the file (a mistake stops start-up, naming the field), then watches it. */
  static async load(file: string, log: Logger, tuning: Partial<ServiceTokensTuning> = {}): Promise<ServiceTokens> {
    const { pollMs, settleMs } = { ...SERVICE_TOKENS_TUNING, ...tuning };
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw documentError(SERVICE_TOKENS_SETTING, file, '', error.code ?? error.message);
    });
    const tokens = new ServiceTokens(file, parseServiceTokens(file, text), contentHash(text), log);
    tokens.#watch(settleMs);
    tokens.#poll = setInterval(() => tokens.#changed(0), pollMs);
    tokens.#poll.unref();
    log.info({ file, tokens: tokens.#tokens.map((token) => token.name) }, 'service tokens loaded');
    return tokens;
  }

  get names(): readonly string[] {
    return this.#tokens.map((token) => token.name);
  }

  /**
   * The token presented, if it is one of the file's. Compared in constant time over digests, against
   * every token without stopping early: neither a token's content nor which one matched leaks.
   */
  match(presented: string): ServiceToken | undefined {
    const digest = tokenDigest(presented);
    let found: ServiceToken | undefined;
    for (const token of this.#tokens) if (timingSafeEqual(digest, token.digest) && found === undefined) found = token;
    return found;
  }

  /** Resolves once a read that is under way (or due) is done: for tests that rewrote the file. */
  async settled(): Promise<void> {
    await this.#reading;
  }

  close(): void {
    this.#watcher?.close();
    clearInterval(this.#poll);
    clearTimeout(this.#settle);
  }

  #watch(settleMs: number): void {
    try {
      this.#watcher = watch(path.dirname(this.#file), { persistent: false }, () => this.#changed(settleMs));
      this.#watcher.on('error', () => this.#watcher?.close());
    } catch {
      // No watch here: the periodic look finds the change.
    }
  }

  #changed(settleMs: number): void {
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => {
      this.#reading = this.#reading.then(() => this.#reread());
    }, settleMs);
    this.#settle.unref();
  }

  async #reread(): Promise<void> {
    let text: string;
    try {
      // stat first: a file gone for a moment (mid-rename on some systems) is no change.
      await stat(this.#file);
      text = await readFile(this.#file, 'utf8');
    } catch (error) {
      this.#log.warn({ file: this.#file, err: (error as NodeJS.ErrnoException).code ?? (error as Error).message }, 'service tokens file unreadable; keeping the tokens in force');
      return;
    }
    const seen = contentHash(text);
    if (seen === this.#seen || seen === this.#refused) return;
    try {
      this.#tokens = parseServiceTokens(this.#file, text);
      this.#seen = seen;
      this.#log.info({ file: this.#file, tokens: this.names }, 'service tokens reloaded');
    } catch (error) {
      // The message names the field, never a token.
      this.#refused = seen;
      this.#log.error({ err: (error as Error).message }, 'service tokens file refused; keeping the tokens in force');
    }
  }
}

const contentHash = (text: string): string => createHash('sha256').update(text).digest('hex');
