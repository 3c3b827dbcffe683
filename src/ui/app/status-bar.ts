// The coloured bar of reconcilers by status: succeeded / failed / in progress / stale, out of total.
import type { EffectiveStatus, StatusCounts } from './api.ts';
import { h } from './dom.ts';

export const STATUS_LABEL: Record<EffectiveStatus, string> = {
  success: 'succeeded',
  failure: 'failed',
  in_progress: 'in progress',
  stale: 'stale',
};

/** With `numbers`, each segment shows its count (the label still says it all for screen readers). */
export function statusBar(counts: StatusCounts, options: { numbers?: boolean } = {}): HTMLElement {
  const parts: [EffectiveStatus, number][] = [
    ['success', counts.succeeded],
    ['failure', counts.failed],
    ['in_progress', counts.inProgress],
    ['stale', counts.stale],
  ];
  const label =
    counts.total === 0
      ? 'no reconcilers'
      : parts
          .filter(([, n]) => n > 0)
          .map(([status, n]) => `${n} ${STATUS_LABEL[status]}`)
          .join(', ') + ` of ${counts.total}`;
  return h(
    'div',
    { class: options.numbers === true ? 'status-bar numbered' : 'status-bar', role: 'img', 'aria-label': label, title: label },
    ...parts
      .filter(([, n]) => n > 0)
      .map(([status, n]) =>
        h('span', { class: `segment ${status}`, style: `flex-grow: ${n}`, 'data-status': status, 'data-count': n }, options.numbers === true ? String(n) : null),
      ),
  );
}

export function statusBadge(status: EffectiveStatus): HTMLElement {
  return h('span', { class: `badge ${status}`, 'data-status': status }, STATUS_LABEL[status]);
}
