// --arg-config FILE: Resource Graph sources without Kubernetes — a YAML (or JSON) list whose
// entries have the AzureResourceGraph spec fields plus a name.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { parseResourceGraphSpec, type ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';
import { ConfigError } from '../../config/config.ts';

export async function loadArgConfig(file: string): Promise<ResourceGraphSourceSpec[]> {
  let document: unknown;
  try {
    document = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`invalid --arg-config ${file}: ${(error as Error).message}`);
  }
  const entries = Array.isArray(document) ? document : (document as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(entries)) throw new ConfigError(`invalid --arg-config ${file}: expected a list of sources`);
  const names = new Set<string>();
  return entries.map((entry: unknown, index) => {
    const name = (entry as { name?: unknown } | null)?.name;
    const where = `${file}: [${index}]`;
    if (typeof name !== 'string' || name.trim() === '') throw new ConfigError(`invalid --arg-config ${where}.name: is missing`);
    if (names.has(name)) throw new ConfigError(`invalid --arg-config ${where}.name: ${JSON.stringify(name)} is used twice`);
    names.add(name);
    const parsed = parseResourceGraphSpec(name.trim(), entry, `[${index}]`);
    if (!parsed.ok) throw new ConfigError(`invalid --arg-config ${file}: ${parsed.reason}`);
    return parsed.value;
  });
}
