import { h, replaceContent } from './dom.ts';

/** A mounted page: renders into its root and can be asked to refresh its data. */
export interface Page {
  /** Loads and shows the page's data again; false when that failed (the error is shown). */
  refresh(): Promise<boolean>;
}

/** Navigation from page code (a filter form, a pager), without importing the router. */
export function go(url: string): void {
  window.dispatchEvent(new CustomEvent('kalypso:navigate', { detail: url }));
}

/**
 * Runs a page's load; shows its error in place instead of leaving a blank page. Either way the
 * target is no longer busy (a screen reader would otherwise wait for it forever).
 */
export async function guarded(target: HTMLElement, signal: AbortSignal, load: () => Promise<void>): Promise<boolean> {
  try {
    await load();
    target.removeAttribute('aria-busy');
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    target.removeAttribute('aria-busy');
    replaceContent(target, h('p', { class: 'error', role: 'alert' }, `Could not load: ${(error as Error).message}`));
    return false;
  }
}

/** A filter form: its fields become the URL's query, and submitting navigates there. */
export function filterForm(path: string, fields: HTMLElement[]): HTMLFormElement {
  const form = h('form', { class: 'filters', role: 'search' }, ...fields, h('button', { type: 'submit' }, 'Apply'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value.trim() !== '') query.set(name, value.trim());
    go(query.size > 0 ? `${path}?${query.toString()}` : path);
  });
  return form;
}

export function field(label: string, control: HTMLElement): HTMLElement {
  return h('label', {}, h('span', {}, label), control);
}

/**
 * What a page says when the hub has nothing to show yet — not "all is well": `what` is missing,
 * and this is how to send some.
 */
export function noDataYet(what: string): HTMLElement {
  return h(
    'div',
    { class: 'empty-state' },
    h('p', {}, h('strong', {}, `No ${what} yet.`), ' The hub has not received any deployment state.'),
    h(
      'p',
      {},
      'To try it, feed it a demo fleet: ',
      h('code', {}, 'npm run hub -- demo'),
      ' (or start it with ',
      h('code', {}, 'npm start -- --demo'),
      '). To send your own, point an OpenTelemetry Collector, a CD pipeline, the Kubernetes watcher or Azure Resource Graph at it: see docs/sending-data.md.',
    ),
  );
}
