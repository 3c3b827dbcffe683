import { h, replaceContent } from './dom.ts';

/** A mounted page: renders into its root and can be asked to refresh its data. */
export interface Page {
  refresh(): Promise<void>;
}

/** Navigation from page code (a filter form, a pager), without importing the router. */
export function go(url: string): void {
  window.dispatchEvent(new CustomEvent('kalypso:navigate', { detail: url }));
}

/** Runs a page's load; shows its error in place instead of leaving a blank page. */
export async function guarded(target: HTMLElement, signal: AbortSignal, load: () => Promise<void>): Promise<void> {
  try {
    await load();
    target.removeAttribute('aria-busy');
  } catch (error) {
    if (signal.aborted) return;
    replaceContent(target, h('p', { class: 'error', role: 'alert' }, `Could not load: ${(error as Error).message}`));
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
