// The test files share one PostgreSQL server, and roles belong to the server, not to a database.
// A test that changes a role the migrations made (a docs snippet logs in as kalypso_reader) holds
// this lock; a test that reads roles' attributes (schema/current's role files) holds it shared, so
// it never sees another file's change half-way. Taken in the admin database: advisory locks are
// per database, and one taken in a file's own database would never meet another file's.
import pg from 'pg';
import { inject } from 'vitest';

/** An advisory lock key of this suite's own ('kaly' in ASCII). */
const ROLES_LOCK = 0x6b616c79;

export async function withServerRoles<T>(use: 'read' | 'change', work: () => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(use === 'read' ? 'SELECT pg_advisory_lock_shared($1)' : 'SELECT pg_advisory_lock($1)', [ROLES_LOCK]);
    return await work();
  } finally {
    await admin.end(); // a session's advisory locks end with it
  }
}
