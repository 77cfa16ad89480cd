/**
 * One checkpoint (`/console/checkpoints/:id`, `?version=N` for an earlier
 * version): who wrote it and where it sits, its integrity (the stored hash
 * beside the one this browser recomputes, the signature checked against the
 * published key), its content (checkpoint-work.ts), its lineage, its
 * revisions with the changes between any two, and the resume prompt a next
 * agent would be given. A checkpoint whose stored content no longer matches
 * its hash is withheld by the service; the page says so and shows what can
 * still be read about it.
 *
 * @module
 */
import { html } from 'htm/preact';
import { BatonError } from '../../../src/client/errors.js';
import type { Checkpoint } from '../../../src/client/types.js';
import { Badge, Loading, PageTitle, Problem, useLoad } from '../components.js';
import { formatDateTime, shortId } from '../format.js';
import { checkSignature, recomputeHash, type PublicKey } from '../integrity.js';
import { paths } from '../router.js';
import { client, getRaw } from '../session.js';
import { CheckpointWork } from './checkpoint-work.js';
import { Revisions } from './revisions.js';

function Integrity({ checkpoint }: { checkpoint: Checkpoint }) {
  const stored = checkpoint.compliance.hash ?? '';
  const [check] = useLoad(async () => {
    const digest = await recomputeHash(checkpoint);
    const signature = checkpoint.compliance.signature;
    if (signature === undefined) return { digest, signature: undefined };
    const keys = (await (await getRaw('/v1/keys', 'application/json')).json()) as { items: PublicKey[] };
    return { digest, signature: await checkSignature(signature, stored, keys.items) };
  }, [checkpoint]);
  const signature = checkpoint.compliance.signature;
  return html`<section aria-labelledby="integrity">
    <h2 id="integrity">Integrity</h2>
    <dl class="hashes">
      <div><dt>Stored hash (<code>compliance.hash</code>)</dt><dd><code class="hash" data-testid="stored-hash">${stored}</code></dd></div>
      <div><dt>Recomputed in this browser</dt><dd>${check.state === 'done'
        ? html`<code class="hash" data-testid="recomputed-hash">${check.value.digest.hex}</code>
            <span class="muted"> (SHA-256 by ${check.value.digest.method} over the RFC 8785 form without the hash and signature)</span>`
        : check.state === 'failed' ? html`<${Problem} error=${check.error} />` : 'computing…'}</dd></div>
    </dl>
    ${check.state === 'done'
      ? check.value.digest.hex === stored
        ? html`<p class="ok" role="status" data-testid="hash-verdict"><strong>✓ The hashes match:</strong> this is the content that was hashed when version ${checkpoint.version} was written.</p>`
        : html`<p class="bad" role="alert" data-testid="hash-verdict"><strong>✗ The hashes differ:</strong> the content shown is not the content that was hashed.</p>`
      : null}
    <h3>Signature</h3>
    ${signature === undefined
      ? html`<p>Not signed.</p>`
      : html`<dl class="summary">
          <div><dt>Signer</dt><dd>${signature.signer}</dd></div>
          <div><dt>Meaning</dt><dd>${signature.meaning}</dd></div>
          <div><dt>Signed</dt><dd>${formatDateTime(signature.signedAt)}</dd></div>
          <div><dt>Algorithm, key</dt><dd>${signature.algorithm}, <code>${signature.keyId}</code></dd></div>
          <div><dt>Checked here</dt><dd data-testid="signature-verdict">${check.state !== 'done' || check.value.signature === undefined
            ? 'checking…'
            : check.value.signature.result === 'valid' ? html`<strong class="ok">✓ valid</strong> with the published key`
            : check.value.signature.result === 'invalid' ? html`<strong class="bad">✗ invalid</strong> for the published key`
            : check.value.signature.result === 'no-key' ? 'no published key has this id (GET /v1/keys)'
            : `not checked: ${check.value.signature.result === 'unsupported' ? check.value.signature.reason : ''}`}</dd></div>
        </dl>`}
  </section>`;
}

function Header({ checkpoint: c, latest }: { checkpoint: Checkpoint; latest: boolean }) {
  return html`<dl class="summary">
    <div><dt>Task</dt><dd><a href=${paths.task(c.taskId)}>${c.taskId}</a> · <a href=${paths.audit(c.taskId)}>audit</a></dd></div>
    <div><dt>Agent</dt><dd>${c.agentId}${c.agentType ? ` (${c.agentType})` : ''}, iteration ${c.iteration}</dd></div>
    <div><dt>Version</dt><dd>${c.version}${latest ? '' : html` <a href=${paths.checkpoint(c.id)}>(see the current version)</a>`}</dd></div>
    <div><dt>Status</dt><dd><${Badge} kind=${c.status}>${c.status}${c.finalStatus ? `: ${c.finalStatus}` : ''}<//></dd></div>
    <div><dt>Phase</dt><dd>${c.executionState.phase ?? '—'}</dd></div>
    <div><dt>Created</dt><dd>${formatDateTime(c.createdAt)}</dd></div>
    <div><dt>Updated</dt><dd>${formatDateTime(c.updatedAt)}</dd></div>
    ${c.finalizedAt ? html`<div><dt>Finalized</dt><dd>${formatDateTime(c.finalizedAt)}</dd></div>` : null}
    ${c.parentId ? html`<div><dt>Parent</dt><dd><a class="mono" href=${paths.checkpoint(c.parentId)}>${shortId(c.parentId)}</a></dd></div>` : null}
    ${c.codeVersion ? html`<div><dt>Code version</dt><dd><code>${c.codeVersion}</code></dd></div>` : null}
  </dl>`;
}

function Lineage({ id }: { id: string }) {
  const [lineage] = useLoad((signal) => client.checkpoints.lineage(id, { limit: 1000 }, { signal }), [id]);
  if (lineage.state === 'loading') return html`<${Loading} what="lineage" />`;
  if (lineage.state === 'failed') return html`<${Problem} error=${lineage.error} what="The lineage could not be read" />`;
  const node = (n: { id: string; agentId: string; phase?: string; status: string; createdAt: string }) =>
    html`<li><a class="mono" href=${paths.checkpoint(n.id)}>${shortId(n.id)}</a> ${n.agentId}, ${n.phase ?? 'no phase'}, ${n.status}, ${formatDateTime(n.createdAt)}</li>`;
  const { ancestors, children } = lineage.value;
  return html`<div class="work">
    <div class="work-column"><h3>Ancestors, nearest first</h3>${ancestors.length ? html`<ol>${ancestors.map(node)}</ol>` : html`<p class="muted">None: this is a root.</p>`}</div>
    <div class="work-column"><h3>Children</h3>${children.length ? html`<ul>${children.map(node)}</ul>` : html`<p class="muted">None yet.</p>`}</div>
  </div>`;
}

function ResumePrompt({ id, version }: { id: string; version?: number }) {
  const [prompt] = useLoad((signal) => client.checkpoints.resumePrompt(id, version !== undefined ? { version } : {}, { signal }), [id, version]);
  return html`<h2>Resume prompt</h2>
    ${prompt.state === 'loading' ? html`<${Loading} what="the resume prompt" />` : null}
    ${prompt.state === 'failed' ? html`<${Problem} error=${prompt.error} what="The resume prompt could not be made" />` : null}
    ${prompt.state === 'done'
      ? html`<p class="muted">What a fresh agent is given to carry on from this checkpoint (${prompt.value.tokens} tokens, o200k_base).</p>
          <pre class="prose" tabindex="0" data-testid="resume-prompt">${prompt.value.text}</pre>`
      : null}`;
}

function Broken({ id, error }: { id: string; error: BatonError }) {
  return html`<div class="broken" role="alert" data-testid="broken">
    <h2>Broken: this checkpoint no longer matches its hash</h2>
    <p>The service recomputed the hash of the stored content and it differs from the hash recorded when it was written, so the content is withheld
      (<code>${error.code}</code>). The damage is recorded in the task's audit trail and announced as a <code>CHECKPOINT_CORRUPTED</code> event.
      Read an earlier version below, or the task's recovery point.</p>
    ${error.requestId ? html`<p class="muted">Request id <code>${error.requestId}</code>.</p>` : null}
    <p class="muted">Checkpoint id <code>${id}</code>.</p>
  </div>`;
}

export function CheckpointView({ id, query }: { id: string; query: URLSearchParams }) {
  const asked = query.get('version');
  const version = asked !== null && /^\d+$/.test(asked) ? Number(asked) : undefined;
  const [loaded] = useLoad((signal) => (version !== undefined ? client.checkpoints.getVersion(id, version, { signal }) : client.checkpoints.get(id, { signal })), [id, version]);
  const title = `Checkpoint ${shortId(id)}${version !== undefined ? `, version ${version}` : ''}`;
  const broken = loaded.state === 'failed' && loaded.error instanceof BatonError && loaded.error.code === 'checkpoint_corrupted' ? loaded.error : undefined;
  return html`<article>
    <${PageTitle} title=${title}>Checkpoint <span class="mono">${id}</span>${version !== undefined ? `, version ${version}` : ''}<//>
    ${loaded.state === 'loading' ? html`<${Loading} what="the checkpoint" />` : null}
    ${broken ? html`<${Broken} id=${id} error=${broken} />` : null}
    ${loaded.state === 'failed' && !broken ? html`<${Problem} error=${loaded.error} what="The checkpoint could not be read" />` : null}
    ${loaded.state === 'done'
      ? html`<${Header} checkpoint=${loaded.value} latest=${version === undefined} />
          <${Integrity} checkpoint=${loaded.value} />
          <${CheckpointWork} checkpoint=${loaded.value} />
          <h2>Lineage</h2>
          <${Lineage} id=${id} />`
      : null}
    <${Revisions} id=${id} shown=${loaded.state === 'done' ? loaded.value.version : version} />
    ${broken ? null : html`<${ResumePrompt} id=${id} version=${version} />`}
  </article>`;
}
