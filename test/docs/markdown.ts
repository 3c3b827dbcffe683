// The README and the guides as the docs tests read them: fenced code blocks with the marker line
// before each, links outside code, and the anchors GitHub gives headings. A small reader of the
// parts of CommonMark these files use, not a general Markdown parser.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');

export interface MarkdownFile {
  /** Path from the repository root, with forward slashes. */
  readonly path: string;
  readonly text: string;
}

/** README.md and every Markdown file under docs/, in a stable order. */
export async function documentationFiles(): Promise<MarkdownFile[]> {
  const files = ['README.md', ...(await markdownUnder('docs'))];
  return Promise.all(files.map(async (file) => ({ path: file, text: await readFile(path.join(REPO, file), 'utf8') })));
}

async function markdownUnder(directory: string): Promise<string[]> {
  const entries = await readdir(path.join(REPO, directory), { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const relative = `${directory}/${entry.name}`;
    if (entry.isDirectory()) found.push(...(await markdownUnder(relative)));
    else if (entry.name.endsWith('.md')) found.push(relative);
  }
  return found;
}

export type Marker =
  | { readonly kind: 'snippet'; readonly id: string }
  | { readonly kind: 'not-run'; readonly reason: string }
  | { readonly kind: 'none' };

export interface CodeBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The info string's first word (`sh`, `yaml`, `sql`, …), '' when none. */
  readonly language: string;
  /** The lines between the fences, indentation of the fence removed, ending with a newline. */
  readonly content: string;
  /** The comment on the line right before the opening fence. */
  readonly marker: Marker;
}

const FENCE = /^( *)(`{3,}|~{3,})(.*)$/;
const SNIPPET_MARKER = /^<!-- snippet: ([a-z0-9][a-z0-9-]*) -->$/;
const NOT_RUN_MARKER = /^<!-- not run: (.*\S.*) -->$/;

/** Every fenced code block of `file`, with its marker. */
export function codeBlocks(file: MarkdownFile): CodeBlock[] {
  const lines = file.text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (open === null) continue;
    const [, indent = '', fence = '', info = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]!);
      if (close !== null && close[2]!.startsWith(fence[0]!) && close[2]!.length >= fence.length && close[3]!.trim() === '') break;
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart());
    }
    blocks.push({
      file: file.path,
      line: i + 1,
      language: info.trim().split(/\s+/)[0] ?? '',
      content: body.length === 0 ? '' : `${body.join('\n')}\n`,
      marker: markerOf(i > 0 ? lines[i - 1]!.trim() : ''),
    });
    i = j;
  }
  return blocks;
}

function markerOf(line: string): Marker {
  const snippet = SNIPPET_MARKER.exec(line);
  if (snippet !== null) return { kind: 'snippet', id: snippet[1]! };
  const notRun = NOT_RUN_MARKER.exec(line);
  if (notRun !== null) return { kind: 'not-run', reason: notRun[1]!.trim() };
  return { kind: 'none' };
}

/** The lines of `file` outside fenced code blocks, with their 1-based numbers. */
export function proseLines(file: MarkdownFile): { readonly line: number; readonly text: string }[] {
  const inCode = new Set<number>();
  for (const block of codeBlocks(file)) {
    const length = block.content === '' ? 0 : block.content.split('\n').length - 1;
    for (let n = block.line; n <= block.line + length + 1; n++) inCode.add(n);
  }
  return file.text
    .split('\n')
    .map((text, index) => ({ line: index + 1, text }))
    .filter(({ line }) => !inCode.has(line));
}

/** A line with its inline code spans blanked out (links inside code are not links). */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => ' '.repeat(span.length));
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

const MARKDOWN_LINK = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/;
const HTML_LINK = /<(?:a|img)\b[^>]*?\s(?:href|src)="([^"]+)"/g;

/** Every link and image target outside code, inline links, reference definitions and HTML alike. */
export function links(file: MarkdownFile): Link[] {
  const found: Link[] = [];
  for (const { line, text } of proseLines(file)) {
    const prose = withoutCodeSpans(text);
    for (const match of prose.matchAll(MARKDOWN_LINK)) found.push({ line, target: match[1]! });
    for (const match of prose.matchAll(HTML_LINK)) found.push({ line, target: match[1]! });
    const definition = REFERENCE_DEFINITION.exec(prose);
    if (definition !== null) found.push({ line, target: definition[1]! });
  }
  return found;
}

/**
 * The anchor GitHub gives a heading: its text as rendered (markup gone, code kept), lower-cased,
 * without punctuation other than `-` and `_`, spaces turned into `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/<[^>]+>/g, '')
    .replace(/!?\[((?:[^[\]]|\[[^\]]*\])*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*|\*/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a link may name in `file`: headings (duplicates numbered as GitHub does) and explicit ids. */
export function anchors(file: MarkdownFile): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(file)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading !== null) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      found.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of withoutCodeSpans(text).matchAll(/<a\b[^>]*\s(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
  }
  return found;
}
