// A self-signed certificate for the HTTPS stand-ins (Azure: the SDK refuses bearer tokens over
// plain http). Trusted by every test process through NODE_EXTRA_CA_CERTS, which Node reads at
// start-up: set here, before vitest forks its workers, it reaches all of them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    tlsCertFile: string;
    tlsKeyFile: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-test-tls-'));
  const pem = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    notBeforeDate: new Date(Date.now() - 3_600_000),
    notAfterDate: new Date(Date.now() + 2 * 86_400_000),
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  });
  const certFile = path.join(directory, 'cert.pem');
  const keyFile = path.join(directory, 'key.pem');
  await writeFile(certFile, pem.cert);
  await writeFile(keyFile, pem.private);
  process.env.NODE_EXTRA_CA_CERTS = certFile;
  project.provide('tlsCertFile', certFile);
  project.provide('tlsKeyFile', keyFile);
  return async () => {
    await rm(directory, { recursive: true, force: true });
  };
}

/** The suite's TLS files, for HTTPS stand-ins (inside tests). */
export async function testTls(): Promise<{ certFile: string; keyFile: string }> {
  const { inject } = await import('vitest');
  return { certFile: inject('tlsCertFile'), keyFile: inject('tlsKeyFile') };
}
