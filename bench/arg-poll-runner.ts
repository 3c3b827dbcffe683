// Starts bench/arg-poll.ts in a process of its own that trusts a fresh self-signed certificate.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

export interface ArgPollResult {
  readonly run: string;
  readonly configurations: number;
  readonly reconcilers: number;
  readonly seconds: number;
  readonly pages: number;
  readonly tokenRequests: number;
}

export async function benchArgPoll(databaseUrl: string): Promise<ArgPollResult[]> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-bench-arg-'));
  try {
    const pem = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true },
        { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
      ],
    });
    const [cert, key, secret, result] = ['cert.pem', 'key.pem', 'secret', 'result.json'].map((name) => path.join(directory, name)) as [
      string,
      string,
      string,
      string,
    ];
    await writeFile(cert, pem.cert);
    await writeFile(key, pem.private);
    await writeFile(secret, 'bench-secret');
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'arg-poll.ts'), databaseUrl, cert, key, secret, result], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the Resource Graph benchmark exited with ${code}`);
    return JSON.parse(await readFile(result, 'utf8')) as ArgPollResult[];
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
