// Keeps the page live without getting in the reader's way: every 10 s the page reloads its data
// and updates itself in place (dom.ts updateContent), never while text is selected in it, never
// while paused. The header says when the data was last updated and has the pause switch.
import { h, replaceContent } from './dom.ts';
import { ago } from './format.ts';

const REFRESH_MS = 10_000;
const PAUSED_KEY = 'kalypso-refresh-paused';

let paused = localStorage.getItem(PAUSED_KEY) === 'true';
let updatedAt: Date | undefined;
let failedAt: Date | undefined;
let heldBySelection = false;

const status = h('span', { class: 'refresh-status', 'data-testid': 'refresh-status' });
const toggle = h('button', { type: 'button', class: 'refresh-toggle', 'aria-pressed': String(paused) }, paused ? 'Resume updates' : 'Pause updates');

/** Whether the reader paused updates (a live view such as the Rollout page honours it too). */
export function updatesPaused(): boolean {
  return paused;
}

/** A page (re)loaded its data: `ok` false when that failed. */
export function recordRefresh(ok: boolean): void {
  if (ok) {
    updatedAt = new Date();
    failedAt = undefined;
  } else failedAt = new Date();
  showStatus();
}

/** A new page is mounted: its data has not been loaded yet. */
export function resetRefresh(): void {
  updatedAt = undefined;
  failedAt = undefined;
  showStatus();
}

/** Puts the control into the header and calls `refresh` every 10 s while the reader lets it. */
export function startRefreshing(container: HTMLElement, refresh: () => Promise<void>): void {
  toggle.addEventListener('click', () => {
    paused = !paused;
    localStorage.setItem(PAUSED_KEY, String(paused));
    toggle.setAttribute('aria-pressed', String(paused));
    toggle.textContent = paused ? 'Resume updates' : 'Pause updates';
    showStatus();
    if (!paused) void refresh();
  });
  replaceContent(container, status, toggle);
  setInterval(() => {
    heldBySelection = selectionInPage();
    if (!paused && !heldBySelection && document.visibilityState === 'visible') void refresh();
  }, REFRESH_MS);
  setInterval(showStatus, 1_000);
  showStatus();
}

function showStatus(): void {
  const updated = updatedAt === undefined ? 'not updated yet' : `updated ${ago(updatedAt.toISOString())}`;
  const text = paused
    ? `Updates paused · ${updated}`
    : failedAt !== undefined
      ? `Update failed ${ago(failedAt.toISOString())} · retrying`
      : heldBySelection
        ? `Held while text is selected · ${updated}`
        : updated.charAt(0).toUpperCase() + updated.slice(1);
  if (status.textContent !== text) status.textContent = text;
  if (updatedAt !== undefined) status.title = updatedAt.toISOString();
}

/** Text selected inside the page (not in a form field): updating would take it away. */
function selectionInPage(): boolean {
  const selection = document.getSelection();
  if (selection === null || selection.isCollapsed || selection.rangeCount === 0) return false;
  const app = document.getElementById('app');
  return app !== null && app.contains(selection.getRangeAt(0).commonAncestorContainer);
}
