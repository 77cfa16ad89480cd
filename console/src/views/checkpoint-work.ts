/**
 * A checkpoint's content laid out for reading: work done, pending and
 * blocked (with the files each item touched), the current focus, decisions
 * with their rationale, assumptions and constraints, every file the
 * checkpoint names, its metrics, how to recover, labels and extensions.
 *
 * @module
 */
import { html } from 'htm/preact';
import type { Checkpoint } from '../../../src/client/types.js';
import { formatDateTime, shortHash } from '../format.js';
import { paths } from '../router.js';

type Item = NonNullable<Checkpoint['executionState']['completedItems']>[number];
type FileRef = string | { path: string; sha256?: string };
type Decision = NonNullable<Checkpoint['contextSummary']['keyDecisions']>[number];

const filePath = (file: FileRef): string => (typeof file === 'string' ? file : file.path);
const fileHash = (file: FileRef): string | undefined => (typeof file === 'string' ? undefined : file.sha256);

function Files({ files }: { files: NonNullable<Exclude<Item, string>['files']> }) {
  const groups = (['created', 'modified', 'deleted'] as const).filter((how) => (files[how]?.length ?? 0) > 0);
  if (groups.length === 0) return null;
  return html`<ul class="files">
    ${groups.flatMap((how) => (files[how] as FileRef[]).map((file) => html`<li><span class="muted">${how}</span> <code>${filePath(file)}</code></li>`))}
  </ul>`;
}

function ItemEntry({ item }: { item: Item }) {
  if (typeof item === 'string') return html`<li>${item}</li>`;
  return html`<li>
    ${item.description}
    ${item.id || item.at ? html` <span class="muted">${item.id ? `(${item.id})` : ''}${item.at ? ` ${formatDateTime(item.at)}` : ''}</span>` : null}
    ${item.blocker ? html`<p class="blocker"><strong>Blocked by:</strong> ${item.blocker}</p>` : null}
    ${item.files ? html`<${Files} files=${item.files} />` : null}
  </li>`;
}

function Items({ title, items, empty }: { title: string; items: readonly Item[] | undefined; empty: string }) {
  return html`<div class="work-column">
    <h3>${title} <span class="count">(${items?.length ?? 0})</span></h3>
    ${items && items.length > 0 ? html`<ol>${items.map((item) => html`<${ItemEntry} item=${item} />`)}</ol>` : html`<p class="muted">${empty}</p>`}
  </div>`;
}

function Decisions({ decisions }: { decisions: readonly Decision[] }) {
  if (decisions.length === 0) return html`<p class="muted">No decision recorded.</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Decisions"><table>
    <thead><tr><th scope="col">Decision</th><th scope="col">Rationale</th><th scope="col">By</th><th scope="col">When</th></tr></thead>
    <tbody>${decisions.map((d) =>
      typeof d === 'string'
        ? html`<tr><td>${d}</td><td></td><td></td><td></td></tr>`
        : html`<tr><td>${d.decision}</td><td>${d.rationale ?? ''}</td><td>${d.by ?? ''}</td><td>${formatDateTime(d.at)}</td></tr>`,
    )}</tbody>
  </table></div>`;
}

/** Every file the checkpoint names, with how each item touched it and the content hash where one was recorded. */
function allFiles(c: Checkpoint): { path: string; how: string[]; sha256?: string }[] {
  const files = new Map<string, { path: string; how: string[]; sha256?: string }>();
  const note = (file: FileRef, how: string): void => {
    const path = filePath(file);
    const entry = files.get(path) ?? { path, how: [] };
    if (!entry.how.includes(how)) entry.how.push(how);
    const hash = fileHash(file);
    if (hash) entry.sha256 = hash;
    files.set(path, entry);
  };
  const lists = [
    ['done', c.executionState.completedItems],
    ['blocked', c.executionState.blockedItems],
    ['pending', c.executionState.pendingItems],
  ] as const;
  for (const [where, items] of lists) {
    for (const item of items ?? []) {
      if (typeof item === 'string' || !item.files) continue;
      for (const how of ['created', 'modified', 'deleted'] as const) for (const file of (item.files[how] ?? []) as FileRef[]) note(file, `${how} (${where})`);
    }
  }
  for (const file of (c.metrics.filesModified ?? []) as FileRef[]) note(file, 'modified (metrics)');
  return [...files.values()];
}

export function CheckpointWork({ checkpoint: c }: { checkpoint: Checkpoint }) {
  const files = allFiles(c);
  const tests = c.metrics.testsStatus;
  const summary = c.contextSummary;
  return html`
    <h2>Work</h2>
    ${c.executionState.currentFocus ? html`<p><strong>Current focus:</strong> ${c.executionState.currentFocus}</p>` : null}
    <div class="work">
      <${Items} title="Done" items=${c.executionState.completedItems} empty="Nothing recorded as done." />
      <${Items} title="Pending" items=${c.executionState.pendingItems} empty="Nothing pending." />
      <${Items} title="Blocked" items=${c.executionState.blockedItems} empty="Nothing blocked." />
    </div>
    <h2>Decisions</h2>
    <${Decisions} decisions=${summary.keyDecisions ?? []} />
    <div class="work">
      <${Items} title="Assumptions" items=${summary.assumptions} empty="None recorded." />
      <${Items} title="Constraints" items=${summary.constraints} empty="None recorded." />
      <${Items} title="External dependencies" items=${summary.externalDependencies} empty="None recorded." />
    </div>
    <h2>Files</h2>
    ${files.length === 0
      ? html`<p class="muted">No file named.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Files"><table>
          <thead><tr><th scope="col">Path</th><th scope="col">How</th><th scope="col">SHA-256</th></tr></thead>
          <tbody>${files.map((f) => html`<tr><td><code>${f.path}</code></td><td>${f.how.join(', ')}</td><td class="mono" title=${f.sha256 ?? ''}>${shortHash(f.sha256)}</td></tr>`)}</tbody>
        </table></div>`}
    <h2>Metrics</h2>
    <dl class="summary">
      <div><dt>Tokens consumed</dt><dd>${c.metrics.tokensConsumed ?? '—'}</dd></div>
      <div><dt>Tools invoked</dt><dd>${c.metrics.toolsInvoked ?? '—'}</dd></div>
      <div><dt>Context utilization</dt><dd>${c.metrics.contextUtilization ?? '—'}</dd></div>
      <div><dt>Tests</dt><dd>${tests ? `${tests.passed ?? 0} passed, ${tests.failed ?? 0} failed, ${tests.skipped ?? 0} skipped${tests.coveragePercent !== undefined ? `, ${tests.coveragePercent} % covered` : ''}` : '—'}</dd></div>
    </dl>
    <h2>Recovery</h2>
    <dl class="summary">
      <div><dt>Last successful state</dt><dd>${c.recovery.lastSuccessfulState ? html`<a class="mono" href=${paths.checkpoint(c.recovery.lastSuccessfulState)}>${c.recovery.lastSuccessfulState}</a>` : '—'}</dd></div>
    </dl>
    ${c.recovery.rollbackInstructions ? html`<h3>Rollback instructions</h3><pre class="prose" tabindex="0">${c.recovery.rollbackInstructions}</pre>` : null}
    ${c.recovery.continuationPrompt ? html`<h3>Continuation prompt</h3><pre class="prose" tabindex="0">${c.recovery.continuationPrompt}</pre>` : null}
    <h2>Labels</h2>
    ${Object.keys(c.labels).length === 0
      ? html`<p class="muted">No label.</p>`
      : html`<dl class="summary">${Object.entries(c.labels).map(([name, value]) => html`<div><dt>${name}</dt><dd>${String(value)}</dd></div>`)}</dl>`}
    ${Object.keys(c.extensions).length > 0 ? html`<details><summary>Extensions</summary><pre tabindex="0">${JSON.stringify(c.extensions, null, 2)}</pre></details>` : null}
    <details><summary>The whole checkpoint as JSON</summary><pre tabindex="0">${JSON.stringify(c, null, 2)}</pre></details>`;
}
