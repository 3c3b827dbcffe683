// The hub's CRDs as the stand-in API server applies them: the structural schema of each kind, by
// `group/plural`, so that fields a schema does not declare are pruned as a real API server would;
// and, for tests that apply what users apply, a validator per kind that refuses what the schema
// refuses (as the API server's 422), naming the field.
import { readdir, readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { parse } from 'yaml';

const CRD_DIR = new URL('../../crds/', import.meta.url);

async function hubCrds(): Promise<Record<string, any>[]> {
  const files = (await readdir(CRD_DIR)).filter((name) => name.startsWith('hub.kalypso.io_'));
  return Promise.all(files.map(async (file) => parse(await readFile(new URL(file, CRD_DIR), 'utf8')) as Record<string, any>));
}

export async function hubCrdSchemas(): Promise<Map<string, Record<string, any>>> {
  return new Map((await hubCrds()).map((crd) => [`${crd.spec.group}/${crd.spec.names.plural}`, crd.spec.versions[0].schema.openAPIV3Schema]));
}

/** JSON Schema from a CRD's openAPIV3Schema (Kubernetes extensions removed). */
export function jsonSchema(node: any): any {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => !key.startsWith('x-kubernetes-'))
      .map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, jsonSchema(v)])) : jsonSchema(value)]),
  );
}

/** Per `group/plural`: why the kind's schema refuses an object (`spec.x: must be …`), or undefined. */
export async function hubCrdValidators(): Promise<Map<string, (object: Record<string, any>) => string | undefined>> {
  const validators = new Map<string, (object: Record<string, any>) => string | undefined>();
  for (const crd of await hubCrds()) {
    const validate = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(jsonSchema(crd.spec.versions[0].schema.openAPIV3Schema));
    validators.set(`${crd.spec.group}/${crd.spec.names.plural}`, (object) =>
      validate(object) ? undefined : (validate.errors ?? []).map((error) => `${error.instancePath.slice(1).replaceAll('/', '.') || '(object)'}: ${error.message ?? 'invalid'}`).join(', '),
    );
  }
  return validators;
}
