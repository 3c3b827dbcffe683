// Logs on stdout: JSON lines (one object per line) for log pipelines, or one readable line per
// record for a person at a terminal (`--log-format`; by default JSON unless stdout is a terminal).
import { pino } from 'pino';
import pinoPretty from 'pino-pretty';

export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = Exclude<(typeof LOG_FORMATS)[number], 'auto'>;

/**
 * `auto` is pretty when stdout is a terminal — someone is reading — and JSON otherwise: a pod, a
 * pipe or a file keep the lines a log pipeline can parse without anyone having to ask for them.
 */
export function resolveLogFormat(setting: (typeof LOG_FORMATS)[number], stdout: { readonly isTTY?: boolean } = process.stdout): LogFormat {
  return setting === 'auto' ? (stdout.isTTY === true ? 'pretty' : 'json') : setting;
}

export function createLogger(level: LogLevel, format: LogFormat = 'json'): Logger {
  return pino(
    {
      level,
      base: { service: 'kalypso-hub' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Connection strings and tokens must never reach the logs.
      redact: { paths: ['databaseUrl', '*.databaseUrl', 'token', '*.token', 'password', '*.password'], censor: '[redacted]' },
    },
    format === 'pretty' ? prettyStdout() : undefined,
  );
}

/**
 * Formatted in this process and written synchronously (not in pino's transport worker), so that
 * the last lines before `process.exit` are never lost. Colours only on a terminal that wants them.
 */
function prettyStdout(): pino.DestinationStream {
  return pinoPretty({
    destination: 1,
    sync: true,
    colorize: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service',
    singleLine: true,
  });
}
