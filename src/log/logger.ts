// Structured JSON logs on stdout (one object per line), ready for any log pipeline.
import { pino } from 'pino';

export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'kalypso-hub' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Connection strings and tokens must never reach the logs.
      redact: { paths: ['databaseUrl', '*.databaseUrl', 'token', '*.token', 'password', '*.password'], censor: '[redacted]' },
    },
    destination,
  );
}
