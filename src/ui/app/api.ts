// The web UI reads the public /api/v1 only. The answers' types come from the API's own zod schemas
// (src/api/v1/answer-types.ts), so the UI cannot read a field the API does not send.
import type { ApiErrorBody } from '../../contract/answer-types.ts';
import { askForApiToken, storedApiToken } from './sign-in.ts';

export type {
  CompareCell,
  CompareRow,
  DeliveryReport,
  DeliveryRollout,
  DeliveryRolloutStatus,
  Drift,
  DriftTotals,
  DurationSummary,
  EffectiveStatus,
  Environment,
  HistoryItem,
  Host,
  HostReconciler,
  HostsPage,
  LaggingHost,
  RolloutState,
  StatusCounts,
} from '../../contract/answer-types.ts';

export class ApiFailure extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export async function getJson<T>(path: string, params: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<T> {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const token = storedApiToken();
  const response = await fetch(`/api/v1${path}${query.size > 0 ? `?${query.toString()}` : ''}`, {
    signal: signal ?? null,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  if (response.status === 401) askForApiToken(token !== null);
  const body = (await response.json()) as unknown;
  if (!response.ok) throw new ApiFailure(response.status, (body as Partial<ApiErrorBody>).error?.message ?? response.statusText);
  return body as T;
}
