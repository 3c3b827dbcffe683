// The state of one source of an Argo CD Application: which commit, which status, which message
// (CONTRACT 3.5, with the team's decisions on the research's open questions: docs/argocd.md,
// "Mapping"). Pure; every rule is one row of the guide's table, in the same order.
import { canonicalCommitId } from '../model/commit-id.ts';
import type { DeploymentStatus } from '../model/deployment-records.ts';
import type { ApplicationFacts, OperationFacts, SourceKind } from './argocd-facts.ts';

export interface SourceState {
  readonly commit: string;
  readonly status: DeploymentStatus;
  readonly message: string;
}

/** Why a source has no state to record: not an error, only nothing to say yet. */
export interface NoState {
  readonly ignored: string;
}

const RUNNING = new Set(['Running', 'Terminating']);
const FAILED = new Set(['Failed', 'Error']);
const HEX = /^[0-9a-f]{7,64}$/i;
/** Resources named in a Degraded message before the rest are counted. */
const NAMED_RESOURCES = 3;

/** The state of source `index`, or why there is none. */
export function sourceState(app: ApplicationFacts, index: number): SourceState | NoState {
  if (app.sync === undefined) return { ignored: 'Argo CD has not compared the application yet (no status.sync.status)' };
  const kind = app.sources[index]!.kind;
  const op = app.operation;
  const opRevision = revisionOf(op?.revisions[index], kind);
  const commit = revisionOf(app.sync.revisions[index], kind) ?? opRevision;
  if (commit === undefined) {
    return { ignored: `status.sync.revision${app.multiSource ? `s[${index}]` : ''} names no ${kind === 'git' ? 'commit' : 'revision'} (${JSON.stringify(app.sync.revisions[index] ?? '')}) and no operation resolved one` };
  }
  // An operation without a revision is taken to be about the current one.
  const opAbout = op !== undefined && (opRevision === undefined || opRevision === commit);
  return { commit, ...judge(app, app.sync.status, opAbout ? op : undefined) };
}

/**
 * A revision the hub can store for the source: for Git a commit (hex; a branch name such as `main`
 * is what Argo CD leaves there while it cannot resolve it), for Helm and OCI the chart version or
 * digest as it is (canonical, as every commit the hub stores).
 */
function revisionOf(revision: string | undefined, kind: SourceKind): string | undefined {
  if (revision === undefined || (kind === 'git' && !HEX.test(revision))) return undefined;
  return canonicalCommitId(revision);
}

/** Status and message, first matching row wins. `op`: the last operation, when it is about the commit judged. */
function judge(app: ApplicationFacts, sync: string, op: OperationFacts | undefined): Omit<SourceState, 'commit'> {
  const health = app.health.status;
  const synthesised = `${sync}, ${health}`;
  if (op !== undefined && RUNNING.has(op.phase)) return { status: 'in_progress', message: first(op.message, synthesised) };
  if (op !== undefined && FAILED.has(op.phase)) return { status: 'failure', message: first(op.message, `sync ${op.phase}`) };
  const errors = app.errors.filter((message) => message !== '').join('; ');
  // The contract's "otherwise": Argo CD cannot compare, so nothing is known to have failed yet.
  if (sync === 'Unknown' && errors !== '') return { status: 'in_progress', message: errors };
  const healthMessage = health === 'Degraded' ? first(app.health.message, degradedText(app.degraded)) : app.health.message;
  if (sync === 'Synced' && health === 'Healthy') return { status: 'success', message: first(healthMessage, op?.message ?? '', synthesised) };
  // Health describes the live state: a failure of this commit only once the application is synced to it.
  if (sync === 'Synced' && health === 'Degraded') return { status: 'failure', message: healthMessage };
  return { status: 'in_progress', message: first(healthMessage, op?.message ?? '', errors, synthesised) };
}

/** "Degraded", and the resources Argo CD names Degraded (when it keeps their health in the status). */
function degradedText(resources: readonly string[]): string {
  if (resources.length === 0) return 'Degraded';
  const named = resources.slice(0, NAMED_RESOURCES).join(', ');
  return `Degraded: ${named}${resources.length > NAMED_RESOURCES ? ` and ${resources.length - NAMED_RESOURCES} more` : ''}`;
}

function first(...messages: readonly string[]): string {
  return messages.find((message) => message !== '') ?? '';
}
