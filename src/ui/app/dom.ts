// A few lines instead of a framework: build elements declaratively, replace a container's content
// (a page being mounted) or update it in place (a page refreshing its data).
import { Idiomorph } from 'idiomorph';

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    // Through the CSSOM: the page's Content-Security-Policy refuses style attributes set as markup.
    else if (name === 'style') element.style.cssText = String(value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return element;
}

/** The same for SVG, whose elements must be created in their own namespace. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}, ...children: (Node | string | null)[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) if (child !== null) element.append(child);
  return element;
}

export function replaceContent(container: Element, ...children: (Child | Child[])[]): void {
  container.replaceChildren(...children.flat().filter((child): child is Node | string => child !== null && child !== undefined && child !== false).map((child) => (typeof child === 'number' ? String(child) : child)));
}

/**
 * A refresh: updates the container's content in place, so what did not change stays the same
 * element — the reader keeps keyboard focus, scroll position and a text selection (idiomorph
 * matches old and new nodes). Event listeners of the new nodes are not carried over: refreshed
 * content is plain markup, its controls live outside it.
 */
export function updateContent(container: Element, ...children: (Child | Child[])[]): void {
  const focused = document.activeElement;
  const hadFocus = focused instanceof HTMLElement && focused !== container && container.contains(focused);
  const key = hadFocus ? focusKey(focused) : undefined;
  const nodes = children.flat().filter((child): child is Node | string | number => child !== null && child !== undefined && child !== false);
  // Synchronous here (a promise only when it morphs a <head> and waits for its styles).
  void Idiomorph.morph(container, nodes.map((child) => (child instanceof Node ? child : document.createTextNode(String(child)))), {
    morphStyle: 'innerHTML',
    // Inline styles move through the CSSOM, as h() sets them: the page's Content-Security-Policy
    // refuses a style attribute written as markup.
    callbacks: { beforeAttributeUpdated: (attribute: string) => attribute !== 'style', beforeNodeMorphed: copyStyle },
  });
  if (!hadFocus || focused.isConnected) return;
  // What had focus is gone (its row left the page): the same link if it is elsewhere now, else the
  // page itself — never <body>, from where a keyboard user would start over.
  const again = key === undefined ? null : container.querySelector<HTMLElement>(key);
  (again ?? document.getElementById('app'))?.focus({ preventScroll: true });
}

function copyStyle(oldNode: Node, newNode: Node): boolean {
  const styled = (node: Node): node is HTMLElement | SVGElement => node instanceof HTMLElement || node instanceof SVGElement;
  if (styled(oldNode) && styled(newNode) && oldNode.style.cssText !== newNode.style.cssText) oldNode.style.cssText = newNode.style.cssText;
  return true;
}

function focusKey(element: HTMLElement): string | undefined {
  const href = element.getAttribute('href');
  return element.tagName === 'A' && href !== null ? `a[href="${CSS.escape(href)}"]` : undefined;
}
