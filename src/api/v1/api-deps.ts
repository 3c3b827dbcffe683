import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.ts';
import type { HubDatabase } from '../../store/database-schema.ts';
import type { ReportContext } from '../../store/reports/report-context.ts';
import type { StateChanges } from '../../store/state-changes.ts';

/** What the /api/v1 routes need. */
export interface ApiV1Deps {
  readonly db: Kysely<HubDatabase>;
  readonly log: Logger;
  readonly staleAfterMs: number;
  readonly maxWaitMs: number;
  readonly stateChanges: StateChanges;
  /** Aborted when the hub shuts down: long-polls answer at once. */
  readonly shutdown: AbortSignal;
  readonly clock: () => Date;
  /** Where the hub reports to (--notifications), as the API may show it: names and kinds, no secrets. */
  readonly notifications: NotificationsSetup;
}

export interface NotificationsSetup {
  readonly publicUrl: string | undefined;
  readonly channels: readonly { readonly name: string; readonly kind: 'commit-status' | 'webhook'; readonly type: 'github' | 'gitlab' | 'azuredevops' | 'webhook' }[];
}

export function reportContext(deps: ApiV1Deps): ReportContext {
  return { asOf: deps.clock(), staleAfterMs: deps.staleAfterMs };
}
