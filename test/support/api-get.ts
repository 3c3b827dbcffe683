// GET from a test hub's /api/v1, as a script would: the status and the parsed JSON body.
import type { RunningHub } from '../../src/hub.ts';

export interface ApiAnswer {
  readonly status: number;
  // Tests read answers by path, as their JSON is documented; typing each would only repeat the schemas.
  readonly body: any;
}

export async function apiGet(hub: RunningHub, path: string): Promise<ApiAnswer> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${path}`);
  return { status: response.status, body: await response.json() };
}
