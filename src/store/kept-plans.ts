// Statements whose plans a connection keeps. The pg driver sends every statement unnamed, so
// PostgreSQL plans it at each run; for the reports at fleet S planning took as long as running
// (a host's state: 11 ms planned, 3–6 ms run; docs/benchmarks/fleet-l-part9.md). A statement that
// begins with PREPARED_MARK goes out as a named prepared statement instead: after five runs on a
// connection PostgreSQL keeps one generic plan for it, when that plan costs no more than the custom
// ones did, and stops planning it.
import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RawNode, RootOperationNode, UnknownRow } from 'kysely';
import type pg from 'pg';

export const PREPARED_MARK = '/* prepared */';

/**
 * How many texts one connection prepares at most; later ones go out unnamed. The marked texts are
 * the reports' (a few hundred with every combination of filters): the bound keeps a statement whose
 * text grew with its input from piling up prepared statements on the server.
 */
export const MAX_PREPARED_PER_CONNECTION = 500;

/** Makes the connection send statements that begin with PREPARED_MARK as named prepared statements (a name per text). */
export function keepPlansOfPrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = new Map<string, string>();
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    const [text, values] = args;
    // Anything else as it came, every argument kept: the pool's own query() passes a callback.
    if (typeof text !== 'string' || !text.startsWith(PREPARED_MARK) || args.length > 2 || typeof values === 'function') return query(...args);
    let name = named.get(text);
    if (name === undefined) {
      if (named.size >= MAX_PREPARED_PER_CONNECTION) return query(...args);
      name = `kalypso_${named.size}`;
      named.set(text, name);
    }
    return query({ name, text, values });
  };
}

/**
 * Marks every statement written as SQL text (sql`…`, the reports' way) as prepared: a Kysely with
 * this plugin is the reports' connection to the store. Statements built with Kysely's query builder
 * are left as they are (they have no text to mark).
 */
export class KeepPlans implements KyselyPlugin {
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (node.kind !== 'RawNode' || beginsMarked(node)) return node;
    const [first = '', ...rest] = node.sqlFragments;
    return { ...node, sqlFragments: [`${PREPARED_MARK}${first}`, ...rest] };
  }

  transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(result);
  }
}

/** Whether the text of `node` begins with PREPARED_MARK: in its first fragment, or in a raw fragment it begins with (sql`${sql.raw(PREPARED_MARK)} …`). */
function beginsMarked(node: RawNode): boolean {
  const [first = ''] = node.sqlFragments;
  if (first !== '') return first.startsWith(PREPARED_MARK);
  const [parameter] = node.parameters;
  return parameter !== undefined && isRaw(parameter) && beginsMarked(parameter);
}

function isRaw(node: OperationNode): node is RawNode {
  return node.kind === 'RawNode';
}
