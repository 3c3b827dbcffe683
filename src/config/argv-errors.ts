// node:util parseArgs' errors as a person at a terminal reads them: which option, what is wrong
// with it, and for a misspelt option the known one it is closest to.

/** `error` from parseArgs (any other error: its message); `known` are the option names, without dashes. */
export function describeArgvError(error: unknown, known: readonly string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  const named = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && named !== undefined) {
    const near = nearest(named.replace(/^-+/, ''), known);
    return `unknown option ${named}${near === undefined ? '' : ` (did you mean --${near}?)`}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && named !== undefined) {
    if (message.includes('does not take an argument')) return `${named} takes no value`;
    // "ambiguous": the next argument starts with a dash, so parseArgs would not take it as the value.
    if (message.includes('ambiguous')) return `${named} needs a value (a value starting with "-" is written ${named}=-…)`;
    return `${named} needs a value`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']*)'/.exec(message)?.[1] ?? '';
    return `unexpected argument ${JSON.stringify(argument)} (options start with --)`;
  }
  return message;
}

/** The known name within two edits of `name` (typos, `_` for `-`), if there is one closest. */
function nearest(name: string, known: readonly string[]): string | undefined {
  // Two edits turn almost any short name into another: no guess for those.
  if (name.length < 4) return undefined;
  const scored = known.map((candidate) => ({ candidate, distance: editDistance(name, candidate) })).filter(({ distance }) => distance <= 2);
  scored.sort((a, b) => a.distance - b.distance);
  return scored[0]?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = current;
  }
  return previous[b.length]!;
}
