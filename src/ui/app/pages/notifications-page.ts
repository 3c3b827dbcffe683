// Where the hub reports to — commit statuses and webhooks — and what it has not delivered there:
// waiting, retried, or refused for good, with the receiver's own answer.
import { apiGet, type NotificationChannel, type UndeliveredNotification } from '../api.ts';
import { h, replaceContent, updateContent } from '../dom.ts';
import { guarded, type Page } from '../page.ts';
import { timeAgo, timeExact } from '../times.ts';

const KINDS: Record<NotificationChannel['type'], string> = { github: 'GitHub statuses', gitlab: 'GitLab statuses', azuredevops: 'Azure DevOps statuses', webhook: 'CloudEvents webhook' };

export function mountNotifications(root: HTMLElement, signal: AbortSignal): Page {
  const content = h('div', { 'aria-busy': 'true' }, 'Loading…');
  replaceContent(root, h('h1', {}, 'Notifications'), content);
  return {
    refresh: () =>
      guarded(content, signal, async () => {
        const answer = await apiGet('/notifications', {}, {}, signal);
        updateContent(
          content,
          answer.channels.length === 0
            ? h('p', { class: 'muted' }, 'The hub tells no one yet: start it with --notifications FILE (commit statuses on GitHub, GitLab or Azure DevOps, CloudEvents webhooks) — see docs/notifications.md.')
            : channelsTable(answer.channels),
          answer.publicUrl === null ? null : h('p', { class: 'muted' }, 'Links in statuses and events point to ', h('code', {}, answer.publicUrl), '.'),
          h('h2', {}, 'Undelivered'),
          answer.items.length === 0 ? h('p', { class: 'all-good' }, 'Everything queued has been delivered.') : undeliveredTable(answer.items),
        );
      }),
  };
}

function channelsTable(channels: readonly NotificationChannel[]): HTMLElement {
  return h(
    'table',
    { class: 'channels stacking' },
    h('thead', {}, h('tr', {}, ['Channel', 'Kind', 'Waiting', 'Refused', 'Sent (24 h)', 'Oldest waiting', 'Paused'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      channels.map((channel) =>
        h(
          'tr',
          { 'data-channel': channel.name },
          h('th', { scope: 'row' }, channel.name),
          h('td', { 'data-label': 'Kind' }, KINDS[channel.type]),
          h('td', { 'data-label': 'Waiting' }, String(channel.queued)),
          h('td', { 'data-label': 'Refused', class: channel.failed > 0 ? 'failed' : '' }, String(channel.failed)),
          h('td', { 'data-label': 'Sent (24 h)' }, String(channel.sentLastDay)),
          h('td', { 'data-label': 'Oldest waiting' }, channel.oldestQueuedAt === null ? '—' : timeAgo(channel.oldestQueuedAt)),
          h('td', { 'data-label': 'Paused' }, channel.pausedUntil === null ? '—' : h('span', { title: channel.pauseReason ?? '' }, 'until ', timeExact(channel.pausedUntil))),
        ),
      ),
    ),
  );
}

function undeliveredTable(items: readonly UndeliveredNotification[]): HTMLElement {
  return h(
    'table',
    { class: 'undelivered stacking' },
    h('thead', {}, h('tr', {}, ['Channel', 'Message', 'State', 'Attempts', 'Last answer', 'Queued'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      items.map((item) =>
        h(
          'tr',
          { 'data-state': item.state },
          h('th', { scope: 'row' }, item.channel),
          h('td', { 'data-label': 'Message' }, item.summary),
          h('td', { 'data-label': 'State', class: item.state === 'failed' ? 'failed' : '' }, item.state === 'failed' ? 'refused for good' : item.state),
          h('td', { 'data-label': 'Attempts' }, String(item.attempts)),
          h('td', { 'data-label': 'Last answer' }, item.lastError ?? '—'),
          h('td', { 'data-label': 'Queued' }, timeAgo(item.createdAt)),
        ),
      ),
    ),
  );
}
