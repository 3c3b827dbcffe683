// The layer rule of eslint.layers.js, run by ESLint itself: a deliberate break in each direction the
// architecture forbids is reported, naming both layers; the imports a layer may make are not.
import { readdir } from 'node:fs/promises';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS, layerRules } from '../../eslint.layers.js';

const ROOT = new URL('../..', import.meta.url).pathname;

function layerLint(): ESLint {
  return new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layerRules],
  });
}

/** The layer-rule messages for `code` as if it were the file at `filePath`. */
async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await layerLint().lintText(code, { filePath: `${ROOT}${filePath}` });
  return result!.messages.map((message) => `${message.line}: ${message.message}`);
}

describe('layers', () => {
  it.each([
    ['src/normalize/probe.ts', "import { OtlpSource } from '../sources/otlp/otlp-source.ts';", 'normalize', 'sources'],
    ['src/normalize/probe.ts', "import { RecordWriter } from '../store/record-writer.ts';", 'normalize', 'store'],
    ['src/store/probe.ts', "import { createApiApp } from '../api/app.ts';", 'store', 'api'],
    ['src/store/probe.ts', "import type { Source } from '../sources/source.ts';", 'store', 'sources'],
    ['src/api/v1/probe.ts', "import { OtlpSource } from '../../sources/otlp/otlp-source.ts';", 'api', 'sources'],
    ['src/model/probe.ts', "import type { HubDatabase } from '../store/database-schema.ts';", 'model', 'store'],
    ['src/ui/app/probe.ts', "import { ApiError } from '../../api/api-error.ts';", 'ui', 'api'],
    ['src/sources/otlp/probe.ts', "import { startHub } from '../../hub.ts';", 'sources', 'hub'],
  ])('%s: %s is refused', async (file, code, from, to) => {
    expect(await problems(file, `${code}\nexport const probe = 1;\n`)).toEqual([
      `1: There is no policy allowing dependencies from elements of type "${from}" to elements of type "${to}"`,
    ]);
  });

  it.each([
    ['src/normalize/probe.ts', "import type { KubeObject } from '../wire/kube-object.ts';"],
    ['src/store/probe.ts', "import type { RecordSink } from '../model/record-sink.ts';"],
    ['src/sources/otlp/probe.ts', "import { RecordWriter } from '../../store/record-writer.ts';"],
    ['src/ui/app/probe.ts', "import type { Host } from '../../contract/answer-types.ts';"],
    ['src/hub.ts', "import { OtlpSource } from './sources/otlp/otlp-source.ts';"],
  ])('%s: %s is allowed', async (file, code) => {
    expect(await problems(file, `${code}\nexport const probe = 1;\n`)).toEqual([]);
  });

  // (That src/ holds to them is `npm run lint`'s part, before the tests.)
  it('names every folder of src/ as a layer: a new folder is placed before it is used', async () => {
    const folders = (await readdir(`${ROOT}src`, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.filter((folder) => !(folder in LAYERS))).toEqual([]);
  });
});
