// When the hub requires a credential, the UI offers the organisation's sign-in (when the hub has
// one: --auth-config signIn; the session is then an HttpOnly cookie the page never sees) and asks
// for a token — the shared API token or a named service token — once per browser tab, sending it
// with every request. A token is kept in sessionStorage: gone when the tab closes, never in a
// cookie (so no other site can make the browser send it).
import { h } from './dom.ts';

const STORAGE_KEY = 'kalypso-api-token';

export function storedApiToken(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** The organisation's sign-in, coming back to this page afterwards. */
function signInLink(signInPath: string): HTMLElement {
  const back = `${location.pathname}${location.search}`;
  return h('p', {}, h('a', { class: 'sign-in-provider', href: `${signInPath}?return=${encodeURIComponent(back)}` }, 'Sign in with your organisation'));
}

/**
 * Shows the sign-in dialog (once, however many requests were refused); a token entered reloads the
 * page's data. `signInPath`: where the hub's sign-in through the identity provider starts, if it has one.
 */
export function askForApiToken(wrongToken: boolean, signInPath: string | null = null): void {
  if (document.getElementById('sign-in') !== null) return;
  const input = h('input', { type: 'password', name: 'token', required: true, autocomplete: 'off', 'aria-describedby': 'sign-in-help' });
  const form = h(
    'form',
    { method: 'dialog' },
    h('h2', {}, signInPath === null ? 'API token' : 'Sign in'),
    signInPath === null ? '' : signInLink(signInPath),
    h(
      'p',
      { id: 'sign-in-help' },
      wrongToken ? 'The hub refused that token. ' : '',
      signInPath === null
        ? 'This hub requires a bearer token for its API (its --api-token setting). It is kept for this tab only.'
        : 'Or give a bearer token for the API (an API or service token). It is kept for this tab only.',
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

/** Longest wait setTimeout keeps (about 24.8 days); a longer one would fire at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Who is signed in through the identity provider, in the header, with a way out. The session
 * cookie is HttpOnly: the page asks the hub (/auth/session) rather than read it. When the session
 * ends (with its ID token), the header is cleared and `ended` runs: the page's next request is
 * refused, which asks for a sign-in again. Signing out ends the hub's session, then the provider's
 * where it offers that (the hub answers with its end-session address).
 */
export async function showSession(slot: HTMLElement, ended: () => void): Promise<void> {
  const response = await fetch('/auth/session').catch(() => undefined);
  const session = response?.ok === true ? ((await response.json()) as { signedIn: boolean; name?: string; expiresAt?: string }) : undefined;
  if (session?.signedIn !== true) return;
  const signOut = h('button', { type: 'button' }, 'Sign out');
  signOut.addEventListener('click', () => {
    void fetch('/auth/logout', { method: 'POST' })
      .then(async (answer) => ((await answer.json()) as { endSession: string | null }).endSession)
      .catch(() => null)
      .then((endSession) => (endSession === null ? location.reload() : location.assign(endSession)));
  });
  slot.replaceChildren(h('span', { class: 'who' }, 'Signed in as ', h('strong', {}, session.name ?? '')), signOut);
  const left = session.expiresAt === undefined ? Number.NaN : Date.parse(session.expiresAt) - Date.now();
  if (Number.isFinite(left) && left < MAX_TIMEOUT_MS) {
    // A moment past the end: the hub reads expiry in whole seconds.
    setTimeout(() => {
      slot.replaceChildren();
      ended();
    }, Math.max(0, left) + 250);
  }
}
