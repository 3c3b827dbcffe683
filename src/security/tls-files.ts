// The hub's TLS identity — certificate chain and private key — from PEM files, re-read when they
// change, so a renewed certificate (cert-manager rewrites the Secret behind the mounted files) is
// served without a restart. Polled rather than watched: Kubernetes swaps a Secret volume's files
// through a symlink, which file watchers on the file's path do not see.
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { ConfigOf } from '../config/setting.ts';
import type { Logger } from '../log/logger.ts';
import { type TLS_SETTINGS, TLS_TUNING } from './tls-settings.ts';

export interface TlsIdentity {
  readonly cert: Buffer;
  readonly key: Buffer;
}

export class TlsFilesError extends Error {
  override readonly name = 'TlsFilesError';
}

export class TlsFiles {
  readonly #certFile: string;
  readonly #keyFile: string;
  readonly #log: Logger;
  readonly #listeners = new Set<(identity: TlsIdentity) => void>();
  #identity: TlsIdentity;
  #timer: NodeJS.Timeout | undefined;

  private constructor(certFile: string, keyFile: string, identity: TlsIdentity, log: Logger) {
    this.#certFile = certFile;
    this.#keyFile = keyFile;
    this.#identity = identity;
    this.#log = log;
  }

  /**
   * The hub's certificate and key when --tls-cert-file and --tls-key-file are set, looked at for a
   * renewal every `refreshMs` (default a minute); undefined without them.
   */
  static async fromConfig(
    config: ConfigOf<typeof TLS_SETTINGS>,
    log: Logger,
    refreshMs: number = TLS_TUNING.refreshMs,
  ): Promise<TlsFiles | undefined> {
    if (config.tlsCertFile === undefined || config.tlsKeyFile === undefined) return undefined;
    return await TlsFiles.load({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile }, refreshMs, log);
  }

  /** Reads and checks both files; an unreadable or mismatched pair stops start-up, naming the file. */
  static async load(files: { certFile: string; keyFile: string }, refreshMs: number, log: Logger): Promise<TlsFiles> {
    const identity = await readIdentity(files.certFile, files.keyFile);
    const tls = new TlsFiles(files.certFile, files.keyFile, identity, log);
    tls.#timer = setInterval(() => void tls.#refresh(), refreshMs);
    tls.#timer.unref();
    return tls;
  }

  get identity(): TlsIdentity {
    return this.#identity;
  }

  /** Called with every new identity; the caller swaps it into its server. */
  onChange(listener: (identity: TlsIdentity) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#listeners.clear();
  }

  async #refresh(): Promise<void> {
    let next: TlsIdentity;
    try {
      next = await readIdentity(this.#certFile, this.#keyFile);
    } catch (error) {
      // Mid-renewal the certificate may already be new and the key still old: keep serving the
      // previous pair and look again next time.
      this.#log.warn({ err: (error as Error).message }, 'TLS files unreadable or mismatched; keeping the current certificate');
      return;
    }
    if (next.cert.equals(this.#identity.cert) && next.key.equals(this.#identity.key)) return;
    this.#identity = next;
    this.#log.info({ certFile: this.#certFile }, 'TLS certificate reloaded');
    for (const listener of this.#listeners) listener(next);
  }
}

async function readIdentity(certFile: string, keyFile: string): Promise<TlsIdentity> {
  const read = async (file: string, setting: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new TlsFilesError(`${setting} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const identity = { cert: await read(certFile, '--tls-cert-file'), key: await read(keyFile, '--tls-key-file') };
  try {
    // Parses both and checks that the key belongs to the certificate.
    createSecureContext(identity);
  } catch (error) {
    throw new TlsFilesError(`--tls-cert-file ${certFile} / --tls-key-file ${keyFile}: ${(error as Error).message}`);
  }
  return identity;
}
