// When the hub requires an API token (--api-token), the UI asks for it once per browser tab and
// sends it with every request. Kept in sessionStorage: gone when the tab closes, never in a
// cookie (so no other site can make the browser send it).
import { h } from './dom.ts';

const STORAGE_KEY = 'kalypso-api-token';

export function storedApiToken(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Shows the token dialog (once, however many requests were refused); a token entered reloads the page's data. */
export function askForApiToken(wrongToken: boolean): void {
  if (document.getElementById('sign-in') !== null) return;
  const input = h('input', { type: 'password', name: 'token', required: true, autocomplete: 'off', 'aria-describedby': 'sign-in-help' });
  const form = h(
    'form',
    { method: 'dialog' },
    h('h2', {}, 'API token'),
    h(
      'p',
      { id: 'sign-in-help' },
      wrongToken ? 'The hub refused that token. ' : '',
      'This hub requires a bearer token for its API (its --api-token setting). It is kept for this tab only.',
    ),
    h('label', {}, h('span', {}, 'Token'), input),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  const dialog = h('dialog', { id: 'sign-in', 'aria-labelledby': 'sign-in-title' }, form);
  form.querySelector('h2')!.id = 'sign-in-title';
  form.addEventListener('submit', () => {
    sessionStorage.setItem(STORAGE_KEY, input.value.trim());
    dialog.remove();
    window.dispatchEvent(new CustomEvent('kalypso:signed-in'));
  });
  // Escape closes the dialog without a token: the page keeps showing why it could not load.
  dialog.addEventListener('cancel', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  input.focus();
}
