import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadArgConfig } from '../../src/sources/resource-graph/arg-config.ts';
import { ConfigError } from '../../src/config/config.ts';

let directory: string;
const file = async (name: string, text: string): Promise<string> => {
  const target = path.join(directory, name);
  await writeFile(target, text);
  return target;
};

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-arg-config-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('--arg-config', () => {
  it('reads YAML and JSON lists of sources with the AzureResourceGraph fields', async () => {
    const yaml = await file('a.yaml', '- { name: dev, subscription: s1, tenant: t1, managedIdentity: mi, interval: 2m }\n- { name: prod, subscriptions: [s2, s3], tenant: t2 }\n');
    expect(await loadArgConfig(yaml)).toEqual([
      { name: 'dev', subscriptions: ['s1'], tenant: 't1', credential: { kind: 'managed-identity', clientId: 'mi' }, intervalMs: 120_000 },
      { name: 'prod', subscriptions: ['s2', 's3'], tenant: 't2', credential: { kind: 'managed-identity', clientId: undefined }, intervalMs: 300_000 },
    ]);
    const json = await file('b.json', JSON.stringify({ sources: [{ name: 'x', subscription: 's', tenant: 't', clientId: 'c', clientSecretFile: '/run/secret' }] }));
    expect((await loadArgConfig(json))[0]?.credential).toEqual({ kind: 'client-secret-file', clientId: 'c', secretFile: '/run/secret' });
  });

  it('takes a default workspace and application for Kustomizations named env.workload.target', async () => {
    const yaml = await file('d.yaml', '- { name: edge, subscription: s, tenant: t, defaultWorkspace: kaizen, defaultApplication: greeting-app }\n');
    expect(await loadArgConfig(yaml)).toMatchObject([{ name: 'edge', defaultWorkspace: 'kaizen', defaultApplication: 'greeting-app' }]);
  });

  it.each([
    ['a missing name', '- { subscription: s, tenant: t }', /\[0\]\.name: is missing/],
    ['a missing tenant', '- { name: a, subscription: s }', /\[0\]\.tenant is missing/],
    ['a bad interval', '- { name: a, subscription: s, tenant: t, interval: 1s }', /\[0\]\.interval must be at least 5s/],
    ['two credentials', '- { name: a, subscription: s, tenant: t, managedIdentity: m, clientSecretFile: /x, clientId: c }', /\[0\]\.managedIdentity cannot be combined/],
    ['a duplicate name', '- { name: a, subscription: s, tenant: t }\n- { name: a, subscription: s, tenant: t }', /\[1\]\.name: "a" is used twice/],
    ['no list', 'name: a', /expected a list of sources/],
    ['a secretRef that is neither a name nor {name}', '- { name: a, subscription: s, tenant: t, secretRef: 7 }', /\[0\]\.secretRef must be/],
  ])('stops on %s, naming the entry and field', async (_name, text, message) => {
    const target = await file('bad.yaml', text);
    await expect(loadArgConfig(target)).rejects.toThrow(ConfigError);
    await expect(loadArgConfig(target)).rejects.toThrow(message);
  });
});
