// `node bench/cpu-profile-summary.ts <file.cpuprofile> [top]`: where a hub's CPU went, from a V8 CPU
// profile (`KALYPSO_BENCH_CPU_PROF=<dir> npm run bench -- --only ingest`). Prints self time per
// function (top N) and per place (our code by folder, dependencies by package, V8's own: GC,
// program, idle).
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArgument] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** Where a frame belongs: src/<folder>, a package from node_modules, node: internals, or V8's own. */
function place(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (url === '') return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1]!;
  const ours = /\/src\/([^/]+(?:\/[^/]+)?)\//.exec(url);
  if (ours !== null) return `src/${ours[1]}`;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

const selfByFunction = new Map<string, number>();
const selfByPlace = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const node = byId.get(id)!;
  const micros = profile.timeDeltas[index] ?? 0;
  total += micros;
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
  selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + micros);
  selfByPlace.set(place(node), (selfByPlace.get(place(node)) ?? 0) + micros);
});

const busy = total - (selfByPlace.get('(idle)') ?? 0);
const share = (micros: number): string => `${((100 * micros) / busy).toFixed(1).padStart(5)} %`;
const top = Number(topArgument ?? 25);
console.log(`profile: ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (shares below are of busy time)\n`);
console.log('by place:');
for (const [name, micros] of [...selfByPlace].filter(([name]) => name !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${share(micros)}  ${name}`);
}
console.log('\nby function (self time):');
for (const [name, micros] of [...selfByFunction].filter(([name]) => !name.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${share(micros)}  ${name}`);
}
