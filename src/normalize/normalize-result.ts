import type { NormalizedRecord } from '../model/deployment-records.ts';
import type { Result } from '../model/result.ts';

/** The outcome of normalizing one input record: the record, or the reason (naming the field) it was refused. */
export type Normalized<T extends NormalizedRecord = NormalizedRecord> = Result<T>;
