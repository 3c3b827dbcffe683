// Where each object comes from in schema/NNNN_*.sql: the migration that last created (or replaced)
// it, and for tables and types the later ones that altered them. A pointer into history for
// `git log` and for readers, found by scanning the migrations' text: statements that build names
// at run time (EXECUTE format(…)) are not seen, and a file then says so.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export type HistoryKind = 'function' | 'view' | 'table' | 'type' | 'role';

const NAME = String.raw`(?:"?\w+"?\.)?"?(\w+)"?`;

/** Statements that create an object: the last one defines it as it is today. */
const CREATES: readonly (readonly [HistoryKind, RegExp])[] = [
  ['function', new RegExp(String.raw`\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+${NAME}`, 'gi')],
  ['view', new RegExp(String.raw`\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:MATERIALIZED\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}`, 'gi')],
  ['table', new RegExp(String.raw`\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}`, 'gi')],
  ['type', new RegExp(String.raw`\bCREATE\s+TYPE\s+${NAME}`, 'gi')],
  ['role', new RegExp(String.raw`\bCREATE\s+ROLE\s+${NAME}`, 'gi')],
];

/** Statements that change a table or type after its creation. */
const CHANGES: readonly (readonly [HistoryKind, RegExp])[] = [
  ['table', new RegExp(String.raw`\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${NAME}`, 'gi')],
  ['table', new RegExp(String.raw`\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(?:\w+\s+)?ON\s+(?:ONLY\s+)?${NAME}`, 'gi')],
  ['table', new RegExp(String.raw`\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+\w+\s+[^;]*?\bON\s+${NAME}`, 'gi')],
  ['table', new RegExp(String.raw`\bCOMMENT\s+ON\s+(?:TABLE|COLUMN)\s+${NAME}`, 'gi')],
  ['type', new RegExp(String.raw`\bALTER\s+TYPE\s+${NAME}`, 'gi')],
];

export interface MigrationHistory {
  /** schema/NNNN_name.sql of the last statement that created the object, if one names it. */
  createdIn(kind: HistoryKind, name: string): string | undefined;
  /** The later migrations that changed it (tables and types), oldest first. */
  changedIn(kind: HistoryKind, name: string): readonly string[];
}

export async function readMigrationHistory(directory: string): Promise<MigrationHistory> {
  const files = (await readdir(directory)).filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file)).sort();
  const created = new Map<string, string>();
  const changed = new Map<string, string[]>();
  for (const file of files) {
    // Comments mention names too ("as kalypso_gate does"); only statements count.
    const text = (await readFile(path.join(directory, file), 'utf8')).replace(/--[^\n]*/g, '');
    const where = `schema/${file}`;
    for (const [kind, pattern] of CREATES) for (const match of text.matchAll(pattern)) created.set(key(kind, match[1]!), where);
    for (const [kind, pattern] of CHANGES) {
      for (const match of text.matchAll(pattern)) {
        const list = changed.get(key(kind, match[1]!)) ?? [];
        if (!list.includes(where)) list.push(where);
        changed.set(key(kind, match[1]!), list);
      }
    }
  }
  return {
    createdIn: (kind, name) => created.get(key(kind, name)),
    changedIn: (kind, name) => {
      const origin = created.get(key(kind, name));
      return (changed.get(key(kind, name)) ?? []).filter((where) => origin === undefined || where > origin);
    },
  };
}

// Unquoted names fold to lower case in PostgreSQL, and the migrations use unquoted names.
function key(kind: HistoryKind, name: string): string {
  return `${kind}:${name.toLowerCase()}`;
}

/** The header line(s) that point into history. */
export function historyLines(history: MigrationHistory, kind: HistoryKind, name: string): string[] {
  const origin = history.createdIn(kind, name);
  if (origin === undefined) return ['-- Not created by name in schema/NNNN_*.sql (built by dynamic SQL there).'];
  if (kind === 'function' || kind === 'view') return [`-- Last defined in ${origin}`];
  const changes = history.changedIn(kind, name);
  return [`-- Created in ${origin}`, ...(changes.length > 0 ? [`-- Changed in ${changes.join(', ')}`] : [])];
}
