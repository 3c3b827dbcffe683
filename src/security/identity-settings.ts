// Who may call the hub beyond the two shared tokens: named service tokens from a file (reloaded when
// it changes) and the OpenID Connect issuers whose tokens the hub trusts, with the rules that turn
// their claims into roles and workspaces (and, optionally, the web UI's sign-in).
import { optionalText } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';
import { proxyAddresses } from './client-address.ts';

export const IDENTITY_SETTINGS = {
  serviceTokens: {
    flag: 'service-tokens',
    group: 'security',
    env: ['KALYPSO_SERVICE_TOKENS'],
    default: undefined,
    description:
      'YAML/JSON file of named tokens with roles (`viewer`, `pipeline`, `ingest`, `admin`) and workspaces (docs/security.md). Re-read when it changes: tokens are added, rotated and revoked without a restart. When set, the API and OTLP require a credential.',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  authConfig: {
    flag: 'auth-config',
    group: 'security',
    env: ['KALYPSO_AUTH_CONFIG'],
    default: undefined,
    description:
      'YAML/JSON file naming the trusted OpenID Connect issuers (audience, claim → role and workspace rules) and the web UI sign-in (docs/security.md). When set, the API and OTLP require a credential.',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  trustedProxies: {
    flag: 'trusted-proxies',
    group: 'security',
    env: ['KALYPSO_TRUSTED_PROXIES'],
    default: [],
    description:
      'Reverse proxies in front of the hub (IP addresses or CIDR ranges, comma-separated) whose `X-Forwarded-For` is believed: failed authentications are then slowed and logged per the client address they saw. Without it the hub keys clients by the connection’s address and ignores the header, which any client can write.',
    parse: proxyAddresses,
    shownDefault: '(none)',
  } satisfies Setting<readonly string[]>,
} as const;
