/**
 * A task's audit trail (`/console/tasks/:taskId/audit`): the hash chain,
 * entry by entry (`GET /v1/tasks/:taskId/audit`); a Verify button that asks
 * the service to recompute the chain (`…/audit/verify`) and, when it is
 * broken, shows the first broken entry with what was expected there and
 * what was found; and the evidence bundle (`GET /v1/tasks/:taskId/evidence`),
 * downloaded with the token and saved from memory.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { BatonError } from '../../../src/client/errors.js';
import type { AuditEntry, ChainCheck } from '../../../src/client/types.js';
import { Loading, PageTitle, Problem, useLoad } from '../components.js';
import { formatDateTime, shortHash, shortId } from '../format.js';
import { paths } from '../router.js';
import { client, getRaw } from '../session.js';

const PAGE = 500;

type Link = NonNullable<ChainCheck['expected']>;

/** Where the chain broke, in words: what was compared, what it should have been, and what was there. */
function comparison(expected: Link | undefined, found: Link | undefined): { expected: string; found: string; want: string; got: string } | undefined {
  if (expected === undefined || found === undefined) return undefined;
  const value = (link: Link): string => ('seq' in link ? (link.seq === 0 ? 'no entry' : `#${link.seq}`) : 'prevHash' in link ? link.prevHash : link.hash);
  if ('seq' in expected) return { expected: 'Expected the entry', found: 'Found', want: value(expected), got: value(found) };
  if ('prevHash' in expected) return { expected: 'Expected a link to the entry before (its hash)', found: 'Found in prevHash', want: value(expected), got: value(found) };
  return { expected: 'Expected hash, recomputed from the entry and the hash before it', found: 'Found stored with the entry', want: value(expected), got: value(found) };
}

function Verdict({ check, entry }: { check: ChainCheck; entry: AuditEntry | undefined }) {
  if (check.ok) return html`<p class="ok" data-testid="verify-result"><strong>✓ The chain holds:</strong> all ${check.entries} entries verified, each hash recomputed from the one before.</p>`;
  const compared = comparison(check.expected, check.found);
  return html`<div class="broken" data-testid="verify-result">
    <h3>✗ The chain is broken at entry #${check.firstBrokenSeq}</h3>
    <p>${check.reason ?? 'broken'}: entries after this one cannot be trusted until the damage is explained.
      ${entry ? html` <a href=${`#entry-${entry.seq}`}>Go to entry #${entry.seq}</a>` : null}</p>
    ${compared
      ? html`<dl class="hashes">
          <div><dt>${compared.expected}</dt><dd><code class="hash" data-testid="verify-expected">${compared.want}</code></dd></div>
          <div><dt>${compared.found}</dt><dd><code class="hash" data-testid="verify-found">${compared.got}</code></dd></div>
        </dl>`
      : html`<p class="muted">This server's answer does not say what was expected and found.</p>`}
    ${entry ? html`<details open><summary>Entry #${entry.seq} as stored</summary><pre tabindex="0">${JSON.stringify(entry, null, 2)}</pre></details>` : null}
  </div>`;
}

function Evidence({ taskId }: { taskId: string }) {
  const [state, setState] = useState<{ kind: 'idle' | 'busy' | 'saved' | 'unserved' } | { kind: 'failed'; error: unknown }>({ kind: 'idle' });
  const download = async (): Promise<void> => {
    setState({ kind: 'busy' });
    try {
      const response = await getRaw(`/v1/tasks/${encodeURIComponent(taskId)}/evidence`, 'application/x-tar');
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = `evidence-${taskId.replace(/[^\w.-]+/g, '_')}.tar`;
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setState({ kind: 'saved' });
    } catch (error) {
      // A server without the route answers route_not_found; a task it does not know is not_found, said by the problem itself.
      setState(error instanceof BatonError && error.code === 'route_not_found' ? { kind: 'unserved' } : { kind: 'failed', error });
    }
  };
  return html`<section aria-labelledby="evidence">
    <h2 id="evidence">Evidence bundle</h2>
    <p>A tar of the task's audit trail and every version of every checkpoint, with a signed manifest and SHA-256 sums, verifiable offline.</p>
    <button type="button" onClick=${download} disabled=${state.kind === 'busy'}>Download evidence bundle (.tar)</button>
    <p role="status" data-testid="evidence-status">
      ${state.kind === 'busy' ? 'Preparing the bundle…' : null}
      ${state.kind === 'saved' ? 'The bundle was saved by your browser.' : null}
      ${state.kind === 'unserved' ? 'This server does not build evidence bundles (404): that needs a Baton version that serves GET /v1/tasks/:taskId/evidence.' : null}
    </p>
    ${state.kind === 'failed' ? html`<${Problem} error=${state.error} what="The evidence bundle could not be downloaded" />` : null}
  </section>`;
}

export function AuditView({ taskId }: { taskId: string }) {
  const [entries, setEntries] = useState<{ items: AuditEntry[]; next?: string }>({ items: [] });
  const [first] = useLoad((signal) => client.tasks.audit(taskId, { limit: PAGE }, { signal }), [taskId]);
  const [verify, setVerify] = useState<{ kind: 'idle' | 'busy' } | { kind: 'done'; check: ChainCheck } | { kind: 'failed'; error: unknown }>({ kind: 'idle' });
  useEffect(() => {
    if (first.state === 'done') setEntries({ items: first.value.items, ...(first.value.nextCursor ? { next: first.value.nextCursor } : {}) });
    setVerify({ kind: 'idle' });
  }, [first]);

  const more = async (): Promise<void> => {
    const page = await client.tasks.audit(taskId, { limit: PAGE, ...(entries.next ? { cursor: entries.next } : {}) });
    setEntries({ items: [...entries.items, ...page.items], ...(page.nextCursor ? { next: page.nextCursor } : {}) });
  };

  const run = async (): Promise<void> => {
    setVerify({ kind: 'busy' });
    try {
      const check = await client.tasks.verifyAudit(taskId);
      // The broken entry is shown in the table: read on until it is there.
      let { items, next } = entries;
      while (!check.ok && check.firstBrokenSeq !== undefined && next !== undefined && !items.some((e) => e.seq >= check.firstBrokenSeq!)) {
        const page = await client.tasks.audit(taskId, { limit: PAGE, cursor: next });
        items = [...items, ...page.items];
        next = page.nextCursor;
      }
      setEntries({ items, ...(next ? { next } : {}) });
      setVerify({ kind: 'done', check });
    } catch (error) {
      setVerify({ kind: 'failed', error });
    }
  };

  const broken = verify.kind === 'done' && !verify.check.ok ? verify.check.firstBrokenSeq : undefined;
  return html`<section>
    <${PageTitle} title=${`Audit of ${taskId}`}>Audit trail of task <span class="mono">${taskId}</span><//>
    <p class="actions"><a href=${paths.task(taskId)}>Timeline of this task</a></p>
    <section aria-labelledby="verify">
      <h2 id="verify">Verification</h2>
      <p>Each entry's hash is SHA-256 of the hash before it and the entry's canonical JSON; verifying recomputes the whole chain on the server.</p>
      <button type="button" onClick=${run} disabled=${verify.kind === 'busy'}>Verify the chain</button>
      <div role="status" aria-live="polite">
        ${verify.kind === 'busy' ? 'Verifying…' : null}
        ${verify.kind === 'done' ? html`<${Verdict} check=${verify.check} entry=${entries.items.find((e) => e.seq === broken)} />` : null}
      </div>
      ${verify.kind === 'failed' ? html`<${Problem} error=${verify.error} what="The chain could not be verified" />` : null}
    </section>
    <${Evidence} taskId=${taskId} />
    <h2>Entries</h2>
    ${first.state === 'loading' ? html`<${Loading} what="the audit trail" />` : null}
    ${first.state === 'failed' ? html`<${Problem} error=${first.error} what="The audit trail could not be read" />` : null}
    ${first.state === 'done'
      ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Audit entries"><table class="audit">
            <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Checkpoint</th><th scope="col">Details</th><th scope="col">Hash</th><th scope="col">Previous hash</th></tr></thead>
            <tbody>${entries.items.map(
              (e) => html`<tr id=${`entry-${e.seq}`} class=${e.seq === broken ? 'broken-row' : ''}>
                <td>${e.seq}${e.seq === broken ? html` <strong class="bad">broken</strong>` : null}</td>
                <td>${formatDateTime(e.at)}</td><td><code>${e.action}</code></td>
                <td>${e.actor.agentId ?? ''} <span class="muted">${e.actor.role} ${e.actor.subject}</span></td>
                <td>${e.checkpointId ? html`<a class="mono" href=${paths.checkpoint(e.checkpointId, e.version)}>${shortId(e.checkpointId)}</a>${e.version !== undefined ? ` v${e.version}` : ''}` : ''}</td>
                <td><code class="value">${e.details ? JSON.stringify(e.details) : ''}</code></td>
                <td class="mono" title=${e.hash}>${shortHash(e.hash)}</td><td class="mono" title=${e.prevHash}>${shortHash(e.prevHash)}</td>
              </tr>`,
            )}</tbody>
          </table></div>
          ${entries.next ? html`<button type="button" onClick=${more}>Load more entries</button>` : html`<p class="muted">${entries.items.length} entries, the whole trail.</p>`}`
      : null}
  </section>`;
}
