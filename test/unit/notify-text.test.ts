// The pure parts of telling people: descriptions within GitHub's 140 characters, repository globs,
// Azure Repos URL forms, GitHub's rate-limit answers, and the backoff.
import { describe, expect, it } from 'vitest';
import { describeRollout, MAX_DESCRIPTION } from '../../src/notify/describe.ts';
import { githubOutcome } from '../../src/notify/providers/github.ts';
import { azureRepoOf } from '../../src/notify/providers/azure-devops.ts';
import { repoLocation, repoPattern } from '../../src/notify/repo-patterns.ts';
import { backoffMs } from '../../src/notify/sender.ts';
import { randomName } from '../support/random-ids.ts';

const counts = (total: number, succeeded: number, failed: number, inProgress: number, stale: number) => ({ total, succeeded, failed, inProgress, stale });

describe('describeRollout', () => {
  it('says how many reconcilers applied it, names failing hosts, and counts the rest', () => {
    expect(describeRollout({ counts: counts(12, 12, 0, 0, 0), state: 'success', version: '1.4.2', failedHosts: [] })).toBe('12/12 reconcilers on 1.4.2');
    expect(describeRollout({ counts: counts(12, 12, 0, 0, 0), state: 'success', version: undefined, failedHosts: [] })).toBe('12/12 reconcilers applied it');
    expect(describeRollout({ counts: counts(12, 9, 1, 2, 0), state: 'failure', version: '1.4.2', failedHosts: ['aks-prod-03'] })).toBe('9/12 applied · 1 failed (aks-prod-03) · 2 in progress');
    expect(describeRollout({ counts: counts(5, 1, 4, 0, 0), state: 'failure', version: undefined, failedHosts: ['a', 'b', 'c', 'd'] })).toBe('1/5 applied · 4 failed (a, b +2)');
    // A large environment's judgement lists only the first failing hosts, and counts them all.
    expect(describeRollout({ counts: counts(900, 880, 20, 0, 0), state: 'failure', version: undefined, failedHosts: ['a', 'b', 'c'], failedHostCount: 9 })).toBe(
      '880/900 applied · 20 failed (a, b +7)',
    );
    expect(describeRollout({ counts: counts(3, 2, 0, 0, 1), state: 'pending', version: undefined, failedHosts: [] })).toBe('2/3 applied · 1 stale');
    expect(describeRollout({ counts: counts(0, 0, 0, 0, 0), state: 'pending', version: undefined, failedHosts: [] })).toBe('waiting for reconcilers to report');
  });

  it('keeps within 140 characters whatever the names', () => {
    const host = 'h'.padEnd(253, 'x');
    const text = describeRollout({ counts: counts(99_999, 1, 99_990, 8, 0), state: 'failure', version: 'v'.padEnd(256, '1'), failedHosts: [host, host] });
    expect([...text].length).toBe(MAX_DESCRIPTION);
    expect(text.endsWith('…')).toBe(true);
    expect([...describeRollout({ counts: counts(1, 1, 0, 0, 0), state: 'success', version: 'v'.padEnd(256, '2'), failedHosts: [] })].length).toBeLessThanOrEqual(MAX_DESCRIPTION);
  });
});

describe('repository globs', () => {
  const org = randomName('org');
  it('matches one path segment with *, any with **, whatever the spelling of the repository', () => {
    const oneLevel = repoPattern(`https://github.com/${org}/*`);
    expect(oneLevel.ok).toBe(true);
    if (!oneLevel.ok) return;
    for (const spelling of [`https://github.com/${org}/gitops`, `https://github.com/${org}/gitops.git/`, `git@github.com:${org}/gitops.git`, `ssh://git@GitHub.com/${org}/gitops`]) {
      expect(oneLevel.value.matches(spelling), spelling).toBe(true);
    }
    expect(oneLevel.value.matches(`https://github.com/${org}/group/gitops`)).toBe(false);
    expect(oneLevel.value.matches(`https://github.com/${org}x/gitops`)).toBe(false);
    expect(oneLevel.value.matches(`https://gitlab.com/${org}/gitops`)).toBe(false);
    const anyDepth = repoPattern(`https://gitlab.example.com/${org}/**`);
    expect(anyDepth.ok && anyDepth.value.matches(`https://gitlab.example.com/${org}/platform/team/gitops.git`)).toBe(true);
  });

  it('refuses what is no repository URL', () => {
    expect(repoPattern('not a url')).toEqual({ ok: false, reason: expect.stringContaining('must be a repository URL') });
    expect(repoLocation('https://github.com/')).toBeUndefined();
  });

  it('finds organization, project and repository in every Azure Repos URL form', () => {
    const expected = { organization: 'contoso', project: 'platform', repository: 'gitops' };
    for (const url of [
      'https://dev.azure.com/contoso/platform/_git/gitops',
      'https://contoso@dev.azure.com/contoso/platform/_git/gitops',
      'https://contoso.visualstudio.com/platform/_git/gitops',
      'https://contoso.visualstudio.com/DefaultCollection/platform/_git/gitops',
      'git@ssh.dev.azure.com:v3/contoso/platform/gitops',
      'contoso@vs-ssh.visualstudio.com:v3/contoso/platform/gitops',
    ]) {
      expect(azureRepoOf(repoLocation(url)!), url).toEqual(expected);
    }
    expect(azureRepoOf(repoLocation('https://dev.azure.com/contoso/platform')!)).toBeUndefined();
  });
});

describe("GitHub's answers", () => {
  const timing = { requestTimeoutMs: 1_000, rateLimitedBackoffMs: 60_000 };
  const answer = (status: number, headers: Record<string, string>, body: unknown) => ({ status, headers: new Headers(headers), text: JSON.stringify(body) });
  const now = Date.UTC(2026, 10, 27, 12);

  it('waits for x-ratelimit-reset when the primary limit is spent, whether 403 or 429', () => {
    for (const status of [403, 429]) {
      const outcome = githubOutcome(answer(status, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1_000 + 30) }, { message: 'API rate limit exceeded' }), now, timing);
      expect(outcome).toMatchObject({ kind: 'retry', rateLimited: true, afterMs: 31_000 });
    }
  });

  it('waits for Retry-After on a secondary limit, or a minute when it names no wait', () => {
    const message = { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' };
    expect(githubOutcome(answer(403, { 'retry-after': '7' }, message), now, timing)).toMatchObject({ kind: 'retry', afterMs: 7_000, rateLimited: true });
    expect(githubOutcome(answer(403, {}, message), now, timing)).toMatchObject({ kind: 'retry', afterMs: 60_000, rateLimited: true });
  });

  it('gives up on any other 4xx with GitHub’s words, and retries a 5xx', () => {
    expect(githubOutcome(answer(403, { 'x-ratelimit-remaining': '4999' }, { message: 'Resource not accessible by integration' }), now, timing)).toEqual({
      kind: 'refused',
      reason: 'HTTP 403: Resource not accessible by integration',
    });
    expect(githubOutcome(answer(422, {}, { message: 'No commit found for SHA: abc' }), now, timing)).toEqual({ kind: 'refused', reason: 'HTTP 422: No commit found for SHA: abc' });
    expect(githubOutcome(answer(502, {}, { message: 'Server Error' }), now, timing)).toMatchObject({ kind: 'retry' });
    expect(githubOutcome({ error: 'ECONNREFUSED' }, now, timing)).toEqual({ kind: 'retry', reason: 'no answer: ECONNREFUSED' });
  });
});

describe('backoff', () => {
  it('doubles from the first wait, capped, within ±20 %', () => {
    const tuning = { firstBackoffMs: 1_000, maxBackoffMs: 10_000 };
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, tuning, () => 0.5))).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(backoffMs(1, tuning, () => 0)).toBe(800);
    expect(backoffMs(1, tuning, () => 1)).toBe(1_200);
  });
});
