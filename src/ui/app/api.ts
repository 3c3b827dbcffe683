// The web UI reads the public /api/v1 only, through one typed call: `apiGet(path, params, query)`
// takes a route's path as the contract writes it (`/hosts/{host}/state`), and its parameters and
// answer are the route's own (src/contract/route-types.ts) — no page states a shape or casts one.
import type { ApiErrorBody } from '../../contract/answer-types.ts';
import type { Answer, ApiPath, PathParams, QueryParams } from '../../contract/route-types.ts';
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
  NotificationChannel,
  RolloutState,
  StatusCounts,
  UndeliveredNotification,
} from '../../contract/answer-types.ts';

export class ApiFailure extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The route's path with its parameters filled in, e.g. `/hosts/{host}/state` → `/hosts/aks-dev-2/state`. */
function filledPath(path: string, params: Readonly<Record<string, unknown>>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
}

function queryString(query: Readonly<Record<string, unknown>>): string {
  const present = Object.entries(query).filter(([, value]) => value !== undefined && value !== '');
  const search = new URLSearchParams(present.map(([name, value]) => [name, String(value)]));
  return search.size > 0 ? `?${search.toString()}` : '';
}

/** GET one route of /api/v1; a refused token asks for another, any other error is an ApiFailure. */
export async function apiGet<P extends ApiPath>(path: P, params: PathParams<P>, query: QueryParams<P>, signal?: AbortSignal): Promise<Answer<P>> {
  const token = storedApiToken();
  const response = await fetch(`/api/v1${filledPath(path, params)}${queryString(query)}`, {
    signal: signal ?? null,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  if (response.status === 401) askForApiToken(token !== null, response.headers.get('kalypso-sign-in'));
  const body = (await response.json()) as unknown;
  if (!response.ok) throw new ApiFailure(response.status, (body as Partial<ApiErrorBody>).error?.message ?? response.statusText);
  // The answer's type is the route's: the server's handler is type-checked against the same schema.
  return body as Answer<P>;
}
