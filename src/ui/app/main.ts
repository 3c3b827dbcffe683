// The web UI's router: one module per page, chosen by the path; links within the UI navigate
// without reloading; the page on screen refreshes its data (refresh-control.ts), so the fleet view
// stays live.
import { h, replaceContent } from './dom.ts';
import { mountDelivery } from './pages/delivery-page.ts';
import { mountDrift } from './pages/drift-page.ts';
import { mountHistory } from './pages/history-page.ts';
import { mountHostDetail } from './pages/host-detail-page.ts';
import { mountHosts } from './pages/hosts-page.ts';
import { mountMatrix } from './pages/matrix-page.ts';
import { mountNotifications } from './pages/notifications-page.ts';
import { mountRollout } from './pages/rollout-page.ts';
import type { Page } from './page.ts';
import { showSession } from './sign-in.ts';
import { recordRefresh, resetRefresh, startRefreshing } from './refresh-control.ts';

const routes: [RegExp, (root: HTMLElement, signal: AbortSignal, match: RegExpExecArray) => Page][] = [
  [/^\/$/, (root, signal) => mountMatrix(root, signal)],
  [/^\/hosts$/, (root, signal) => mountHosts(root, signal)],
  [/^\/hosts\/([^/]+)$/, (root, signal, match) => mountHostDetail(root, signal, decodeURIComponent(match[1]!))],
  [/^\/history$/, (root, signal) => mountHistory(root, signal)],
  [/^\/drift$/, (root, signal) => mountDrift(root, signal)],
  [/^\/rollout$/, (root, signal) => mountRollout(root, signal)],
  [/^\/delivery$/, (root, signal) => mountDelivery(root, signal)],
  [/^\/notifications$/, (root, signal) => mountNotifications(root, signal)],
];

let current: { controller: AbortController; page: Page } | undefined;

function route(): void {
  current?.controller.abort();
  const root = document.getElementById('app')!;
  const controller = new AbortController();
  for (const [pattern, mount] of routes) {
    const match = pattern.exec(location.pathname);
    if (match === null) continue;
    const page = mount(root, controller.signal, match);
    current = { controller, page };
    markCurrentNav();
    resetRefresh();
    void refreshCurrent();
    return;
  }
  current = undefined;
  markCurrentNav();
  resetRefresh();
  replaceContent(
    root,
    h('h1', {}, 'Page not found'),
    h('p', {}, 'There is no page at ', h('code', {}, location.pathname), '. The views are:'),
    h(
      'ul',
      { class: 'views' },
      [...document.querySelectorAll<HTMLAnchorElement>('nav a:not([target])')].map((link) => h('li', {}, h('a', { href: link.getAttribute('href') ?? '/' }, link.textContent ?? ''))),
    ),
  );
}

async function refreshCurrent(): Promise<void> {
  const page = current;
  if (page === undefined) return;
  const ok = await page.page.refresh();
  if (!page.controller.signal.aborted) recordRefresh(ok);
}

function markCurrentNav(): void {
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    const path = new URL(link.href).pathname;
    const active = path === '/' ? location.pathname === '/' : location.pathname.startsWith(path);
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** Navigates within the UI (used by links and filter forms). */
export function navigate(url: string): void {
  history.pushState(null, '', url);
  route();
  document.getElementById('app')?.focus();
}

document.addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest('a');
  if (link === null || link === undefined || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || link.target === '_blank') return;
  const url = new URL(link.href);
  // The API and the sign-in (/auth: a redirect to the identity provider) are no pages of the UI.
  if (url.origin !== location.origin || url.pathname.startsWith('/api/') || url.pathname.startsWith('/auth/')) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
});

window.addEventListener('popstate', route);
window.addEventListener('kalypso:signed-in', route);
window.addEventListener('kalypso:navigate', (event) => navigate((event as CustomEvent<string>).detail));

startRefreshing(document.getElementById('refresh')!, refreshCurrent);
void showSession(document.getElementById('session')!, () => void refreshCurrent());
route();
