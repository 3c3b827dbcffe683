// A YAML (or JSON) settings file read and checked whole against its schema: a mistake is a
// ConfigError naming the setting, the file and the field (`tokens[2].roles[0]: …`).
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from '../config/config.ts';

/** A field's place as people read it: `issuers[0].rules[1].when`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('').replace(/^\./, '');
}

export function documentError(setting: string, file: string, where: string, reason: string): ConfigError {
  return new ConfigError(`invalid ${setting} ${file}: ${where}${where === '' ? '' : ': '}${reason}`);
}

/** The file's content, parsed and checked; a ConfigError otherwise. */
export async function readDocument<S extends z.ZodType>(setting: string, file: string, schema: S): Promise<z.output<S>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw documentError(setting, file, '', (error as NodeJS.ErrnoException).code ?? (error as Error).message);
  }
  return parseDocument(setting, file, text, schema);
}

export function parseDocument<S extends z.ZodType>(setting: string, file: string, text: string, schema: S): z.output<S> {
  let document: unknown;
  try {
    document = parse(text) ?? {};
  } catch (error) {
    throw documentError(setting, file, '', (error as Error).message);
  }
  const parsed = schema.safeParse(document);
  if (parsed.success) return parsed.data;
  // A misspelt field is also a missing one: naming the misspelling helps more.
  const issue = parsed.error.issues.find((found) => found.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
  throw documentError(setting, file, fieldPath(issue.path), issue.message);
}
