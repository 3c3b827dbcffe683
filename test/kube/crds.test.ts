// The CRDs are structural schemas that accept their samples and reject what the hub would
// reject; the samples normalize to the records the hub stores.
import { readdir, readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  normalizeDescriptorResource,
  parseResourceGraphSpec,
} from '../../src/normalize/kube-resources.ts';
import { readReconcilerResource } from '../../src/normalize/reconciler-resource.ts';
import { jsonSchema } from '../support/crd-schemas.ts';

const CRD_DIR = new URL('../../crds/', import.meta.url);

async function load(file: string): Promise<any> {
  return parse(await readFile(new URL(file, CRD_DIR), 'utf8'));
}

/**
 * Structural-schema rules: every node has a type (unless it keeps unknown fields, as Kubernetes
 * allows); required names exist; objects declare properties.
 */
function structuralProblems(node: any, path: string): string[] {
  const problems: string[] = [];
  if (typeof node.type !== 'string' && node['x-kubernetes-preserve-unknown-fields'] !== true) problems.push(`${path}: no type`);
  for (const name of node.required ?? []) if (node.properties?.[name] === undefined) problems.push(`${path}: required ${name} undefined`);
  for (const [name, child] of Object.entries(node.properties ?? {})) problems.push(...structuralProblems(child, `${path}.${name}`));
  if (node.items !== undefined) problems.push(...structuralProblems(node.items, `${path}[]`));
  return problems;
}

const CRDS = [
  ['hub.kalypso.io_deploymentdescriptors.yaml', 'samples/deploymentdescriptor.yaml'],
  ['hub.kalypso.io_reconcilers.yaml', 'samples/reconciler.yaml'],
  ['hub.kalypso.io_azureresourcegraphs.yaml', 'samples/azureresourcegraph.yaml'],
] as const;

describe('CRDs', () => {
  it('are all listed in the kustomization', async () => {
    const files = (await readdir(CRD_DIR)).filter((file) => file.startsWith('hub.kalypso.io_')).sort();
    expect((await load('kustomization.yaml')).resources.sort()).toEqual(files);
  });

  it.each(CRDS)('%s is a structural schema with status subresource, printer columns and short names', async (file) => {
    const crd = await load(file);
    expect(crd.spec.group).toBe('hub.kalypso.io');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
    const [version] = crd.spec.versions;
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns.map((column: any) => column.name)).toContain('Ready');
    expect(structuralProblems(version.schema.openAPIV3Schema, crd.spec.names.kind)).toEqual([]);
  });

  it.each(CRDS)('%s accepts its sample', async (file, sample) => {
    const crd = await load(file);
    const validate = new Ajv({ strict: false, validateFormats: false }).compile(jsonSchema(crd.spec.versions[0].schema.openAPIV3Schema));
    const valid = validate(await load(sample));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('accepts what the original hub accepted (any reconcilerType and status, no deployment, empty strings), and still needs a host', async () => {
    const crd = await load('hub.kalypso.io_reconcilers.yaml');
    const validate = new Ajv({ strict: false, validateFormats: false }).compile(jsonSchema(crd.spec.versions[0].schema.openAPIV3Schema));
    const sample = await load('samples/reconciler.yaml');
    expect(validate({ ...sample, spec: { ...sample.spec, deployment: { ...sample.spec.deployment, status: 'done' } } })).toBe(true);
    expect(validate({ ...sample, spec: { ...sample.spec, reconcilerType: 'helm' } })).toBe(true);
    expect(validate({ ...sample, spec: { ...sample.spec, hostName: '', deployment: { gitOpsCommitId: '', status: '', statusMessage: '' } } })).toBe(true);
    const { deployment: _deployment, ...withoutDeployment } = sample.spec;
    expect(validate({ ...sample, spec: withoutDeployment })).toBe(true);
    expect(validate({ ...sample, spec: undefined })).toBe(true);
    const { hostName: _, ...withoutHost } = sample.spec;
    expect(validate({ ...sample, spec: withoutHost })).toBe(false);
  });
});

describe('samples', () => {
  const now = new Date('2026-11-20T09:00:00Z');

  it('the descriptor sample becomes desired state once its Kustomization has a revision', async () => {
    const sample = await load('samples/deploymentdescriptor.yaml');
    expect(normalizeDescriptorResource(sample, undefined, now).ok).toBe(false);
    const outcome = normalizeDescriptorResource(sample, { revision: 'dev@sha1:4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f', at: now }, now);
    expect(outcome).toMatchObject({
      ok: true,
      value: {
        kind: 'desired-state',
        environment: 'dev',
        deploymentTarget: { name: 'functional-test', manifests: { endpoint: 'https://github.com/kaizentm/hello-world-gitops/dev/functional-test' } },
        workloadVersion: { version: '0.0.1' },
        commitId: '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f',
      },
    });
  });

  it('the reconciler sample becomes real state', async () => {
    expect(readReconcilerResource(await load('samples/reconciler.yaml'), now)).toMatchObject({
      kind: 'recorded',
      warnings: [],
      record: {
        kind: 'real-state',
        host: { name: 'drone', type: 'edge-device' },
        reconciler: { name: 'flux-system/hello-world', type: 'flux' },
        commitId: '5ce065315cc1702b6cb4eb9d3f804413706570d8',
        status: 'success',
        statusMessage: 'Resource is Ready',
      },
    });
  });

  it('the older Reconciler shape of the seeds (type, no reconcilerName) still reads', () => {
    const outcome = readReconcilerResource(
      {
        metadata: { name: 'kalypso-rg-flux-hello-world' },
        spec: { hostName: 'kalypso-rg-flux', type: 'flux', manifestsEndpoint: 'https://github.com/kaizentm/kalypso-gitops/dev/drone', deployment: { gitOpsCommitId: 'dev/5ce065315cc1702b6cb4eb9d3f804413706570d8', status: 'success' } },
      },
      now,
    );
    expect(outcome).toMatchObject({ kind: 'recorded', record: { reconciler: { name: 'kalypso-rg-flux-hello-world', type: 'flux' } } });
  });

  it('the AzureResourceGraph sample is a valid poll source', async () => {
    const sample = await load('samples/azureresourcegraph.yaml');
    expect(parseResourceGraphSpec('kalypso-system/contoso-dev', sample.spec)).toEqual({
      ok: true,
      value: {
        name: 'kalypso-system/contoso-dev',
        subscriptions: ['7be1b9e7-57ca-47ff-b5ab-82e7ccb8c611'],
        tenant: '16b3c013-d300-468d-ac64-7eda0820b6d3',
        credential: { kind: 'managed-identity', clientId: '02552706-98f9-4301-a473-017752fc430b' },
        intervalMs: 300_000,
      },
    });
  });
});
