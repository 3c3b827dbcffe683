// TLS for every listener: the certificate and key files (a pair, or neither), and how often they
// are looked at for a renewal.
import { optionalText } from '../config/setting-parsers.ts';
import type { Setting, SettingsCheck } from '../config/setting.ts';

export const TLS_SETTINGS = {
  tlsCertFile: {
    flag: 'tls-cert-file',
    group: 'security',
    env: ['KALYPSO_TLS_CERT_FILE'],
    default: undefined,
    description:
      'PEM certificate (chain) for TLS on the API and both OTLP receivers; needs `--tls-key-file`. Re-read when the file changes (e.g. renewed by cert-manager).',
    parse: optionalText,
    shownDefault: '(plain text)',
  } satisfies Setting<string | undefined>,
  tlsKeyFile: {
    flag: 'tls-key-file',
    group: 'security',
    env: ['KALYPSO_TLS_KEY_FILE'],
    default: undefined,
    description: 'PEM private key of `--tls-cert-file`.',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
} as const;

/** A certificate without its key (or the other way round) would serve nothing: refuse it at start. */
export const tlsFilesPaired: SettingsCheck<typeof TLS_SETTINGS> = (config) =>
  (config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)
    ? '--tls-cert-file and --tls-key-file go together: set both, or neither for plain text'
    : undefined;

export const TLS_TUNING = {
  /** How often the files are looked at for a renewed certificate (cert-manager renews them in place). */
  refreshMs: 60_000,
} as const;
