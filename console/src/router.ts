/**
 * The console's addresses, all under /console, routed in the page (the
 * server answers the same page for each): links are ordinary `<a href>`s, so
 * they open in new tabs and can be bookmarked; a plain click is handled here
 * without reloading.
 *
 * @module
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export type Route =
  | { name: 'search'; query: URLSearchParams }
  | { name: 'task'; taskId: string }
  | { name: 'audit'; taskId: string }
  | { name: 'checkpoint'; id: string; query: URLSearchParams }
  | { name: 'events' }
  | { name: 'not-found'; path: string };

const segment = encodeURIComponent;

export const paths = {
  search: (query?: URLSearchParams): string => `${BASE}${query && query.size > 0 ? `?${query}` : ''}`,
  task: (taskId: string): string => `${BASE}/tasks/${segment(taskId)}`,
  audit: (taskId: string): string => `${BASE}/tasks/${segment(taskId)}/audit`,
  checkpoint: (id: string, version?: number): string => `${BASE}/checkpoints/${segment(id)}${version !== undefined ? `?version=${version}` : ''}`,
  events: (): string => `${BASE}/events`,
};

function decode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

export function parseRoute(pathname: string, search: string): Route {
  const query = new URLSearchParams(search);
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/\/+$/, '') : undefined;
  if (rest === '') return { name: 'search', query };
  const parts = (rest ?? '').split('/').slice(1).map(decode);
  if (rest !== undefined && !parts.includes(undefined)) {
    const [first, id, more, ...extra] = parts as string[];
    if (first === 'tasks' && id && more === undefined) return { name: 'task', taskId: id };
    if (first === 'tasks' && id && more === 'audit' && extra.length === 0) return { name: 'audit', taskId: id };
    if (first === 'checkpoints' && id && more === undefined) return { name: 'checkpoint', id, query };
    if (first === 'events' && id === undefined) return { name: 'events' };
  }
  return { name: 'not-found', path: pathname };
}

const NAVIGATED = 'baton:navigated';

export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** The current route, following links, the back and forward buttons, and {@link navigate}. */
export function useRoute(): Route {
  const read = (): Route => parseRoute(location.pathname, location.search);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = (): void => setRoute(read());
    const click = (event: MouseEvent): void => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const anchor = (event.target as Element | null)?.closest?.('a');
      if (!anchor || anchor.hasAttribute('download') || (anchor.target && anchor.target !== '_self')) return;
      const href = anchor.getAttribute('href') ?? (anchor as unknown as SVGAElement).href?.baseVal;
      if (!href || !(href === BASE || href.startsWith(`${BASE}/`) || href.startsWith(`${BASE}?`))) return;
      event.preventDefault();
      navigate(href);
    };
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    document.addEventListener('click', click);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
      document.removeEventListener('click', click);
    };
  }, []);
  return route;
}
