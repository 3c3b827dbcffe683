import { describe, expect, it } from 'vitest';
import { composeManifestsEndpoint, normalizeManifestsEndpoint } from '../../src/model/manifests-endpoint.ts';

describe('manifests endpoints', () => {
  it('composes repo + branch + path as the seeds do', () => {
    expect(composeManifestsEndpoint('https://github.com/kaizentm/hello-world-gitops', 'dev', 'functional-test')).toBe(
      'https://github.com/kaizentm/hello-world-gitops/dev/functional-test',
    );
  });

  it('compares equal however repo and path are spelled', () => {
    const expected = 'https://github.com/contoso/gitops/dev/clusters/aks-dev-eus';
    expect(composeManifestsEndpoint('https://github.com/contoso/gitops.git', 'dev', './clusters/aks-dev-eus')).toBe(expected);
    expect(composeManifestsEndpoint('https://github.com/contoso/gitops/', 'dev', '/clusters/aks-dev-eus/')).toBe(expected);
    expect(normalizeManifestsEndpoint('https://github.com/contoso/gitops.git/dev/./clusters//aks-dev-eus/')).toBe(expected);
    expect(normalizeManifestsEndpoint(expected)).toBe(expected);
  });

  it('omits an empty or root path', () => {
    expect(composeManifestsEndpoint('https://github.com/contoso/gitops', 'main', '.')).toBe('https://github.com/contoso/gitops/main');
    expect(composeManifestsEndpoint('https://github.com/contoso/gitops', 'main', '')).toBe('https://github.com/contoso/gitops/main');
  });

  it('handles scp-style ssh repos', () => {
    expect(composeManifestsEndpoint('git@github.com:contoso/gitops.git', 'prod', './stores/berlin')).toBe(
      'git@github.com:contoso/gitops/prod/stores/berlin',
    );
  });
});
