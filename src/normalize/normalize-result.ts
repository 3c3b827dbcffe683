import type { NormalizedRecord } from '../model/deployment-records.ts';
import type { Result } from '../model/result.ts';

/** The outcome of normalizing one input record: the record, or the reason (naming the field) it was refused. */
export type Normalized<T extends NormalizedRecord = NormalizedRecord> = Result<T>;

/** One input record that stands for several (an Argo CD application with several sources), or for none yet. */
export type NormalizedMany = Result<readonly NormalizedRecord[]>;
