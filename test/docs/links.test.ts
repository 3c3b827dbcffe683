// Every relative link and image in the README and docs/ points at a file that exists, and every
// #anchor at a heading (as GitHub names it) or an explicit id in that file. External links are
// not fetched. Links into schema/current/ — the current definition of each SQL object, generated
// from a migrated database — are skipped only while that folder does not exist at all.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, documentationFiles, githubSlug, links, type MarkdownFile, REPO } from './markdown.ts';

const files = await documentationFiles();
const SCHEMA_CURRENT = 'schema/current';
const schemaCurrentExists = existsSync(path.join(REPO, SCHEMA_CURRENT));

async function targetProblem(file: MarkdownFile, target: string): Promise<string | undefined> {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:, …
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = pathPart === '' ? file.path : path.posix.normalize(pathPart.startsWith('/') ? pathPart.slice(1) : path.posix.join(path.posix.dirname(file.path), pathPart));
  if (resolved.startsWith('..')) return `points outside the repository (${resolved})`;
  if (!schemaCurrentExists && (resolved === SCHEMA_CURRENT || resolved.startsWith(`${SCHEMA_CURRENT}/`))) return undefined;
  const found = await stat(path.join(REPO, resolved)).catch(() => undefined);
  if (found === undefined) return `${resolved} does not exist`;
  if (anchor === undefined) return undefined;
  if (!found.isFile() || !resolved.endsWith('.md')) return `#${anchor}: ${resolved} is not a Markdown file`;
  const targetFile = files.find((candidate) => candidate.path === resolved) ?? { path: resolved, text: await readFile(path.join(REPO, resolved), 'utf8') };
  return anchors(targetFile).has(anchor.toLowerCase()) ? undefined : `#${anchor} is no heading or id in ${resolved}`;
}

describe('links in the README and docs/', () => {
  it('covers the README and every guide', () => {
    expect(files.map((file) => file.path)).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/configuration.md']));
  });

  it.each(files.map((file) => [file.path, file] as const))('%s: every relative link and #anchor resolves', async (_path, file) => {
    const problems: string[] = [];
    for (const link of links(file)) {
      const problem = await targetProblem(file, link.target);
      if (problem !== undefined) problems.push(`${file.path}:${link.line}: ${link.target} — ${problem}`);
    }
    expect(problems).toEqual([]);
  });

  it('names headings as GitHub does', () => {
    expect(githubSlug('Real state — `kalypso.deployment.state`')).toBe('real-state--kalypsodeploymentstate');
    expect(githubSlug('From Azure Resource Graph: Arc and AKS GitOps clusters')).toBe('from-azure-resource-graph-arc-and-aks-gitops-clusters');
    expect(githubSlug("The environment gate's scope")).toBe('the-environment-gates-scope');
    expect(githubSlug('Ingest against COPY (issue 21)')).toBe('ingest-against-copy-issue-21');
    expect(githubSlug('`kalypso_gate` and [the gate](check-promote.md)')).toBe('kalypso_gate-and-the-gate');
    const file = { path: 'x.md', text: '# Same\n\n## Same\n\n```sh\n# not a heading\n```\n\n<a id="kept"></a>' };
    expect([...anchors(file)]).toEqual(['same', 'same-1', 'kept']);
  });

  it('finds links outside code only', () => {
    const file = {
      path: 'x.md',
      text: ['[a](a.md) `[b](b.md)` ![c](c.png)', '```md', '[d](d.md)', '```', '<img src="e.png" alt="e"> [f][r]', '[r]: f.md#top'].join('\n'),
    };
    expect(links(file).map((link) => `${link.line}:${link.target}`)).toEqual(['1:a.md', '1:c.png', '5:e.png', '6:f.md#top']);
  });
});
