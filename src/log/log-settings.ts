// How the hub logs: the level, and JSON lines or readable ones.
import { oneOf } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';
import { LOG_FORMATS, LOG_LEVELS } from './logger.ts';

export const LOG_SETTINGS = {
  logLevel: {
    flag: 'log-level',
    group: 'logging',
    env: ['KALYPSO_LOG_LEVEL'],
    default: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    parse: oneOf(LOG_LEVELS),
  } satisfies Setting<(typeof LOG_LEVELS)[number]>,
  logFormat: {
    flag: 'log-format',
    group: 'logging',
    env: ['KALYPSO_LOG_FORMAT'],
    default: 'auto',
    description:
      'Log lines: `json` (one JSON object per line, for log pipelines), `pretty` (one readable line per record) or `auto`: pretty when stdout is a terminal, else json.',
    parse: oneOf(LOG_FORMATS),
  } satisfies Setting<(typeof LOG_FORMATS)[number]>,
} as const;
