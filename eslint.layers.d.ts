// Types of eslint.layers.js for the test that runs it (test/unit/layers.test.ts).
import type { Linter } from 'eslint';

export declare const LAYERS: Readonly<Record<string, readonly string[]>>;
export declare const layerRules: Linter.Config[];
