/**
 * A checkpoint's revisions (`GET /v1/checkpoints/:id/revisions`): every
 * version with its hash, time, status and whether it verifies, each a link
 * to that version; and the changes between any two versions, field by
 * field, read with `GET /v1/checkpoints/:id?version=N`.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { RevisionInfo } from '../../../src/client/types.js';
import { Loading, Problem, useLoad } from '../components.js';
import { diffValues, type FieldChange } from '../diff.js';
import { formatDateTime, oneLine, shortHash } from '../format.js';
import { paths } from '../router.js';
import { client } from '../session.js';

function Value({ value }: { value: unknown }) {
  if (value === undefined) return html`<span class="muted">—</span>`;
  return html`<code class="value">${oneLine(value)}</code>`;
}

function Changes({ id, from, to }: { id: string; from: number; to: number }) {
  const [diff] = useLoad(
    async (signal) => {
      const [a, b] = await Promise.all([client.checkpoints.getVersion(id, from, { signal }), client.checkpoints.getVersion(id, to, { signal })]);
      return diffValues(a, b);
    },
    [id, from, to],
  );
  if (diff.state === 'loading') return html`<${Loading} what="both versions" />`;
  if (diff.state === 'failed') return html`<${Problem} error=${diff.error} what="A version could not be read" />`;
  const { changes, truncated } = diff.value;
  if (changes.length === 0) return html`<p role="status">Versions ${from} and ${to} are the same.</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${`Changes from version ${from} to version ${to}`}>
    <table class="diff">
      <caption>${changes.length}${truncated ? '+' : ''} field${changes.length === 1 ? '' : 's'} changed from version ${from} to version ${to}</caption>
      <thead><tr><th scope="col">Field</th><th scope="col">Change</th><th scope="col">Version ${from}</th><th scope="col">Version ${to}</th></tr></thead>
      <tbody>${changes.map(
        (c: FieldChange) => html`<tr class=${`change-${c.kind}`}><th scope="row"><code>${c.path}</code></th><td>${c.kind}</td><td><${Value} value=${c.before} /></td><td><${Value} value=${c.after} /></td></tr>`,
      )}</tbody>
    </table>
  </div>`;
}

function Compare({ id, revisions }: { id: string; revisions: RevisionInfo[] }) {
  const versions = revisions.map((r) => r.version).filter((v) => v > 0);
  const last = versions[versions.length - 1] ?? 1;
  const [pair, setPair] = useState({ from: versions[versions.length - 2] ?? last, to: last });
  if (versions.length < 2) return html`<p>This checkpoint has one version; there is nothing to compare.</p>`;
  const submit = (event: Event): void => {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setPair({ from: Number(data.get('from')), to: Number(data.get('to')) });
  };
  return html`<form class="inline-form" onSubmit=${submit} aria-label="Compare two versions">
      <label for="diff-from">Compare version</label>
      <select id="diff-from" name="from" value=${String(pair.from)}>${versions.map((v) => html`<option value=${v}>${v}</option>`)}</select>
      <label for="diff-to">with version</label>
      <select id="diff-to" name="to" value=${String(pair.to)}>${versions.map((v) => html`<option value=${v}>${v}</option>`)}</select>
      <button type="submit">Show changes</button>
    </form>
    <${Changes} id=${id} from=${pair.from} to=${pair.to} />`;
}

export function Revisions({ id, shown }: { id: string; shown?: number }) {
  const [revisions] = useLoad(async (signal) => {
    const items: RevisionInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.checkpoints.revisions(id, { limit: 1000, ...(cursor ? { cursor } : {}) }, { signal });
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined && items.length < 10_000);
    return items;
  }, [id]);
  return html`<h2 id="revisions">Revisions</h2>
    ${revisions.state === 'loading' ? html`<${Loading} what="revisions" />` : null}
    ${revisions.state === 'failed' ? html`<${Problem} error=${revisions.error} what="The revisions could not be read" />` : null}
    ${revisions.state === 'done'
      ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Revisions"><table>
            <thead><tr><th scope="col">Version</th><th scope="col">Updated</th><th scope="col">Status</th><th scope="col">Hash</th><th scope="col">Verifies</th></tr></thead>
            <tbody>${revisions.value.map(
              (r) => html`<tr class=${r.verified ? '' : 'broken-row'}>
                <td>${r.version > 0 ? html`<a href=${paths.checkpoint(id, r.version)} aria-current=${r.version === shown ? 'page' : undefined}>version ${r.version}</a>` : 'unreadable'}</td>
                <td>${formatDateTime(r.updatedAt)}</td><td>${r.status}</td>
                <td class="mono" title=${r.hash}>${shortHash(r.hash)}</td>
                <td>${r.verified ? 'yes' : html`<strong class="bad">no: broken</strong>`}</td>
              </tr>`,
            )}</tbody>
          </table></div>
          <h3>Changes between two versions</h3>
          <${Compare} id=${id} revisions=${revisions.value} />`
      : null}`;
}
