// The demo fleet: whether `serve` feeds it on start, and the pace it keeps when following.
import { switchValue } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';

export const DEMO_SETTINGS = {
  demo: {
    flag: 'demo',
    group: 'sources',
    env: ['KALYPSO_DEMO'],
    default: false,
    description: 'Feed a demo fleet through the hub’s own OTLP receiver on start, and keep it moving.',
    parse: switchValue,
    boolean: true,
  } satisfies Setting<boolean>,
} as const;

export const DEMO_TUNING = {
  /** State reports per OTLP request. */
  batch: 20,
  /** How often the staging rollout lands on one more host. */
  rolloutStepMs: 15_000,
  /** How often the live hosts report again, so that only the offline one turns stale. */
  heartbeatMs: 5 * 60_000,
} as const;
