// `kalypso-hub migrate`: apply pending migrations to the configured (or embedded) database.
import type { HubConfig } from '../settings.ts';
import { createLogger, resolveLogFormat } from '../log/logger.ts';
import { connectDatabase } from '../store/connect.ts';
import { DataDirInUseError, DataDirLock } from '../store/embedded/data-dir-lock.ts';
import { embeddedPostgresFor } from '../store/embedded/embedded-postgres.ts';
import { migrateToLatest } from '../store/migrate.ts';
import type { Help } from './help-format.ts';
import { HELP_ENTRY } from './help-request.ts';
import { PRECEDENCE, settingsHelp } from './settings-help.ts';

export const MIGRATE_HELP: Help = {
  usage: ['kalypso-hub migrate [options]', 'npm run migrate -- [options]'],
  about:
    'Applies the pending database migrations and exits (serve applies them on start as well). ' +
    'Without --database-url it runs the embedded PostgreSQL of --data-dir for as long as that takes. ' +
    'It accepts every setting of serve; the groups below are the ones it reads.',
  sections: [{ title: 'Options', entries: [HELP_ENTRY] }, { title: 'Settings', text: PRECEDENCE }, ...settingsHelp(['database', 'logging'])],
};

export async function runMigrate(config: HubConfig): Promise<number> {
  const log = createLogger(config.logLevel, resolveLogFormat(config.logFormat));
  // The embedded server is the running hub's, if there is one: a hub migrates it itself on start.
  let lock: DataDirLock | undefined;
  if (config.databaseUrl === undefined) {
    try {
      lock = await DataDirLock.acquire(config.dataDir);
    } catch (error) {
      if (!(error instanceof DataDirInUseError)) throw error;
      log.error({ err: error.message }, 'cannot migrate the embedded database');
      return 1;
    }
  }
  const embedded = config.databaseUrl === undefined ? embeddedPostgresFor(config, log) : undefined;
  try {
    await embedded?.start();
    const database = connectDatabase(
      { url: config.databaseUrl ?? embedded!.url, poolSize: 1, connectTimeoutMs: 10_000, applicationName: 'kalypso-hub-migrate' },
      log,
    );
    try {
      const { applied, error } = await migrateToLatest(database.db);
      for (const name of applied) log.info({ migration: name }, 'applied');
      if (error !== undefined) {
        log.error({ err: error }, 'migration failed');
        return 1;
      }
      log.info({ applied: applied.length }, applied.length > 0 ? 'database migrated' : 'database schema already up to date');
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await embedded?.stop();
    await lock?.release();
  }
}
