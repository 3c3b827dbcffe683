// `--help` or `-h` anywhere among a command's arguments asks for its help, as in most tools: a
// person who adds it to a command line that just failed should not have to delete the rest first.
// After `--` nothing is an option any more.
export function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** The help entry every command lists. */
export const HELP_ENTRY = { term: '-h, --help', description: 'Show this help and exit.' } as const;
