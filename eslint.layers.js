// The layers of src/, held by lint: each folder may import only the layers named here (and itself).
// sources → normalize → store → api/ui reads downward; the model and the wire views sit at the
// bottom, the hub's wiring (src/*.ts) and the CLI at the top. test/unit/layers.test.ts shows the
// rule failing on a break.
import boundaries from 'eslint-plugin-boundaries';

/** Layer → the layers it may import. */
export const LAYERS = {
  model: [],
  wire: ['model'],
  config: ['model'],
  log: ['config', 'model'],
  metrics: ['log', 'config', 'model'],
  contract: ['config', 'model'],
  normalize: ['wire', 'config', 'model'],
  security: ['log', 'config', 'model'],
  http: ['security', 'log', 'config', 'model'],
  store: ['normalize', 'contract', 'metrics', 'log', 'config', 'model'],
  sources: ['store', 'normalize', 'wire', 'http', 'security', 'metrics', 'log', 'config', 'model'],
  ui: ['contract'],
  api: ['ui', 'store', 'contract', 'http', 'security', 'metrics', 'log', 'config', 'model'],
  demo: ['sources', 'http', 'wire', 'log', 'config', 'model'],
  notify: ['store', 'contract', 'metrics', 'log', 'config', 'model'],
  cli: ['hub', 'notify', 'demo', 'ui', 'api', 'sources', 'store', 'normalize', 'contract', 'http', 'security', 'metrics', 'log', 'config', 'model'],
  // The wiring: src/hub.ts, src/settings.ts, src/started-steps.ts.
  hub: ['api', 'ui', 'notify', 'demo', 'sources', 'store', 'normalize', 'contract', 'wire', 'http', 'security', 'metrics', 'log', 'config', 'model'],
};

export const layerRules = [
  {
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      // The first pattern that matches a file names its layer: the hub's own files, directly in
      // src/, are what is left.
      'boundaries/elements': [
        ...Object.keys(LAYERS)
          .filter((layer) => layer !== 'hub')
          .map((layer) => ({ type: layer, pattern: `src/${layer}`, partialMatch: false })),
        { type: 'hub', pattern: 'src', partialMatch: false },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: Object.entries(LAYERS).map(([layer, allowed]) => ({
            from: { element: { type: layer } },
            allow: { to: { element: { types: { anyOf: [layer, ...allowed] } } } },
          })),
        },
      ],
    },
  },
];
