// The hub's CRDs as the stand-in API server applies them: the structural schema of each kind, by
// `group/plural`, so that fields a schema does not declare are pruned as a real API server would.
import { readdir, readFile } from 'node:fs/promises';
import { parse } from 'yaml';

const CRD_DIR = new URL('../../crds/', import.meta.url);

export async function hubCrdSchemas(): Promise<Map<string, Record<string, any>>> {
  const schemas = new Map<string, Record<string, any>>();
  for (const file of (await readdir(CRD_DIR)).filter((name) => name.startsWith('hub.kalypso.io_'))) {
    const crd = parse(await readFile(new URL(file, CRD_DIR), 'utf8'));
    schemas.set(`${crd.spec.group}/${crd.spec.names.plural}`, crd.spec.versions[0].schema.openAPIV3Schema);
  }
  return schemas;
}
