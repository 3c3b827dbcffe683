// How a setting's text is checked and read: the parsers the components' settings tables share.
// Each returns the value or a reason that completes "invalid --flag: …".
import { ok, refused, type Result } from '../model/result.ts';
import { postgresUrlParts } from './postgres-url.ts';
import { parseDuration, parseSize } from './units.ts';

export const port = (text: string): Result<number> => {
  const value = Number(text);
  return /^\d+$/.test(text.trim()) && value <= 65_535 ? ok(value) : refused('must be a port number from 0 to 65535');
};

export const positiveInteger = (text: string): Result<number> =>
  /^\d+$/.test(text.trim()) && Number(text) > 0 ? ok(Number(text)) : refused('must be a positive integer');

export const duration = (text: string): Result<number> => {
  const value = parseDuration(text);
  return value !== undefined && value > 0 ? ok(value) : refused('must be a duration such as 30s, 15m or 1h');
};

export const size = (text: string): Result<number> => {
  const value = parseSize(text);
  return value !== undefined && value > 0 ? ok(value) : refused('must be a size such as 64MiB or 1048576');
};

export const text = (value: string): Result<string> => (value.trim() === '' ? refused('must not be empty') : ok(value.trim()));

export const optionalText = (value: string): Result<string | undefined> => ok(value.trim() === '' ? undefined : value.trim());

/** Names separated by commas, blanks dropped. */
export const nameList = (value: string): Result<readonly string[]> => ok(value.split(',').map((name) => name.trim()).filter((name) => name !== ''));

// Several tokens, comma-separated, let a token be rotated without a moment when clients fail.
export const tokens = (value: string): Result<readonly string[] | undefined> => {
  const list = value.split(',').map((token) => token.trim()).filter((token) => token !== '');
  return ok(list.length === 0 ? undefined : list);
};

export const postgresUrl = (value: string): Result<string | undefined> => {
  if (value.trim() === '') return ok(undefined);
  const url = postgresUrlParts(value.trim());
  if (url === undefined) return refused('must be a postgres:// URL');
  return url.protocol === 'postgres:' || url.protocol === 'postgresql:' ? ok(value.trim()) : refused('must be a postgres:// or postgresql:// URL');
};

export const httpsUrl = (value: string): Result<string> => {
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' ? ok(value.trim().replace(/\/+$/, '')) : refused('must be an https:// URL');
  } catch {
    return refused('must be an https:// URL');
  }
};

export const switchValue = (value: string): Result<boolean> =>
  ['true', '1', 'yes', 'on'].includes(value.trim().toLowerCase())
    ? ok(true)
    : ['false', '0', 'no', 'off', ''].includes(value.trim().toLowerCase())
      ? ok(false)
      : refused('must be true or false');

export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string): Result<T> =>
    values.includes(value.trim().toLowerCase() as T) ? ok(value.trim().toLowerCase() as T) : refused(`must be one of ${values.join(', ')}`);
