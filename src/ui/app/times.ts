// Moments and commits on the page. A moment is said relative to now; its exact time (ISO 8601, in
// the reader's time zone) is on hover, and in <time datetime> for assistive technology. A commit
// is shown short, its full id on hover.
import { h } from './dom.ts';
import { ago, exactTime, localTime, shortCommit } from './format.ts';

/** "5 min ago", its exact time on hover. */
export function timeAgo(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: exactTime(iso) }, ago(iso));
}

/** The exact time shown (a timeline), how long ago on hover. */
export function timeExact(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: `${ago(iso)} · ${exactTime(iso)}` }, localTime(iso));
}

/** A commit in its short form, the full id on hover. */
export function commitText(commit: string): HTMLElement {
  return h('span', { class: 'commit-id', title: commit }, shortCommit(commit));
}
