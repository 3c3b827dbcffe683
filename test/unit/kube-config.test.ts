import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKubeConfig } from '../../src/sources/kube/kube-config.ts';

let directory: string;
let kubeconfig: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-kubeconfig-'));
  kubeconfig = path.join(directory, 'config');
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{ name: fleet, cluster: { server: 'https://hub-cluster.example:6443' } }]
users: [{ name: hub, user: { token: abc } }]
contexts: [{ name: fleet, context: { cluster: fleet, user: hub } }]
current-context: fleet
`,
  );
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('loadKubeConfig', () => {
  it('never loads one with --kube off', async () => {
    expect(await loadKubeConfig('off', { KUBECONFIG: kubeconfig })).toBeUndefined();
  });

  it.each(['auto', 'on'] as const)('loads the kubeconfig named by KUBECONFIG with --kube %s', async (mode) => {
    expect((await loadKubeConfig(mode, { KUBECONFIG: kubeconfig }))?.getCurrentCluster()?.server).toBe('https://hub-cluster.example:6443');
  });
});
