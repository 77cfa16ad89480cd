/**
 * Small pieces every view uses: loading data with a state a view can show,
 * a refusal or failure said in words, and the heading each page starts with
 * (focused after navigation, so keyboard and screen-reader users start
 * there).
 *
 * @module
 */
import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { BatonError } from '../../src/client/errors.js';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; error: unknown };

/** One object for every "still loading", so a view may depend on what it was given. */
const LOADING = Object.freeze({ state: 'loading' as const });

/**
 * Runs `load` when `deps` change; `reload` runs it again. What a load of
 * other deps found is never shown for these (not even for the one render
 * before the new load starts); a reload keeps showing what it has until the
 * new answer arrives; a result that arrives after a newer load started is
 * dropped.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): [Loaded<T>, () => void] {
  const [round, setRound] = useState(0);
  const [result, setResult] = useState<{ deps: readonly unknown[]; loaded: Loaded<T> }>({ deps, loaded: LOADING });
  useEffect(() => {
    const abort = new AbortController();
    setResult((previous) => (same(previous.deps, deps) ? previous : { deps, loaded: LOADING }));
    load(abort.signal).then(
      (value) => !abort.signal.aborted && setResult({ deps, loaded: { state: 'done', value } }),
      (error: unknown) => !abort.signal.aborted && setResult({ deps, loaded: { state: 'failed', error } }),
    );
    return () => abort.abort();
  }, [...deps, round]);
  return [same(result.deps, deps) ? result.loaded : LOADING, useCallback(() => setRound((n) => n + 1), [])];
}

function same(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

/** A sentence for a refusal or failure: the service's own problem when it sent one. */
export function Problem({ error, what }: { error: unknown; what?: string }) {
  if (error instanceof BatonError) {
    return html`<div class="problem" role="alert">
      <p><strong>${what ? `${what}: ` : ''}${error.problem.title ?? 'Refused'} (${error.status}, <code>${error.code}</code>).</strong> ${error.detail}</p>
      ${error.errors.length > 0 ? html`<ul>${error.errors.map((e) => html`<li><code>${e.field}</code>: ${e.message}</li>`)}</ul>` : null}
      ${error.requestId ? html`<p class="muted">Request id <code>${error.requestId}</code>.</p>` : null}
    </div>`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return html`<div class="problem" role="alert"><p><strong>${what ? `${what}: ` : ''}the service could not be reached.</strong> ${message}</p></div>`;
}

export function Loading({ what }: { what: string }) {
  return html`<p class="muted" role="status">Loading ${what}…</p>`;
}

/** The page's heading, focused when the page is opened, and the document title kept in step with it. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Baton console`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return html`<span class=${`badge badge-${kind}`}>${children}</span>`;
}

/** Every page of a list, up to `max` items, following `nextCursor`. */
export async function allPages<P extends { items: unknown[]; nextCursor?: string }>(
  page: (cursor: string | undefined) => Promise<P>,
  max: number,
): Promise<{ items: P['items']; pages: P[]; complete: boolean }> {
  const items: P['items'] = [];
  const pages: P[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    pages.push(next);
    items.push(...next.items);
    cursor = next.nextCursor;
  } while (cursor !== undefined && items.length < max);
  return { items, pages, complete: cursor === undefined };
}
