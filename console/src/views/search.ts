/**
 * Search (`/console`): every filter of `GET /v1/checkpoints`, kept in the
 * page's address (never the token) so a search can be bookmarked and shared;
 * results a page at a time with the service's `nextCursor`. With no filter
 * it lists the tenant's newest checkpoints.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { CheckpointPage, SearchQuery } from '../../../src/client/types.js';
import { Badge, Loading, PageTitle, Problem, useLoad } from '../components.js';
import { formatDateTime, shortId } from '../format.js';
import { navigate, paths } from '../router.js';
import { client } from '../session.js';
import { FINAL_STATUSES, PHASES, STATUSES } from '../vocabulary.js';

const TEXT_FILTERS = [
  ['taskId', 'Task id'],
  ['agentId', 'Agent id'],
  ['agentType', 'Agent type'],
  ['file', 'File path (tasks that touched it)'],
  ['q', 'Words (full text over items and decisions)'],
] as const;

const CHOICES = [
  ['phase', 'Phase', PHASES],
  ['status', 'Status', STATUSES],
  ['finalStatus', 'Final status', FINAL_STATUSES],
] as const;

/** An ISO date-time as the value of a datetime-local field, in the reader's time zone. */
function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

function labelsText(query: URLSearchParams): string {
  return [...query.entries()].filter(([name]) => name.startsWith('label.')).map(([name, value]) => `${name.slice(6)}=${value}`).join('\n');
}

/** The search the address describes. */
function searchOf(query: URLSearchParams, cursor: string | undefined): SearchQuery {
  const search: Record<string, unknown> = {};
  for (const name of ['taskId', 'agentId', 'agentType', 'phase', 'status', 'finalStatus', 'file', 'q', 'from', 'to']) {
    const value = query.get(name);
    if (value) search[name] = value;
  }
  const labels: Record<string, string> = {};
  for (const [name, value] of query.entries()) if (name.startsWith('label.')) labels[name.slice(6)] = value;
  if (Object.keys(labels).length > 0) search.labels = labels;
  search.limit = Number(query.get('limit') ?? 50) || 50;
  if (cursor) search.cursor = cursor;
  return search as SearchQuery;
}

/** The address of the search in the form. */
function queryOf(form: HTMLFormElement): URLSearchParams {
  const data = new FormData(form);
  const query = new URLSearchParams();
  for (const [name, value] of data.entries()) {
    const text = String(value).trim();
    if (text === '' || name === 'labels') continue;
    if (name === 'from' || name === 'to') query.set(name, new Date(text).toISOString());
    else if (name === 'limit' && text === '50') continue;
    else query.set(name, text);
  }
  for (const line of String(data.get('labels') ?? '').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) query.append(`label.${line.slice(0, at).trim()}`, line.slice(at + 1).trim());
  }
  return query;
}

function Results({ page }: { page: CheckpointPage }) {
  if (page.items.length === 0) return html`<p role="status">No checkpoint matches on this page.</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Search results">
    <table>
      <thead><tr><th scope="col">Created</th><th scope="col">Task</th><th scope="col">Checkpoint</th><th scope="col">Agent</th><th scope="col">Phase</th><th scope="col">Status</th><th scope="col">Version</th></tr></thead>
      <tbody>
        ${page.items.map(
          (c) => html`<tr>
            <td>${formatDateTime(c.createdAt)}</td>
            <td><a href=${paths.task(c.taskId)}>${c.taskId}</a></td>
            <td><a href=${paths.checkpoint(c.id)} class="mono" title=${c.id}>${shortId(c.id)}</a></td>
            <td>${c.agentId}${c.agentType ? html` <span class="muted">(${c.agentType})</span>` : null}</td>
            <td>${c.executionState.phase ?? ''}</td>
            <td><${Badge} kind=${c.status}>${c.status}${c.finalStatus ? `: ${c.finalStatus}` : ''}<//></td>
            <td>${c.version}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function SearchView({ query }: { query: URLSearchParams }) {
  const key = query.toString();
  const [cursors, setCursors] = useState<{ key: string; stack: string[] }>({ key, stack: [] });
  const stack = cursors.key === key ? cursors.stack : [];
  const cursor = stack[stack.length - 1];
  const [page] = useLoad((signal) => client.checkpoints.search(searchOf(query, cursor), { signal }), [key, cursor]);
  const filtered = [...query.keys()].some((name) => name !== 'limit');

  const submit = (event: Event): void => {
    event.preventDefault();
    navigate(paths.search(queryOf(event.currentTarget as HTMLFormElement)));
  };
  const openTask = (event: Event): void => {
    event.preventDefault();
    const taskId = String(new FormData(event.currentTarget as HTMLFormElement).get('task') ?? '').trim();
    if (taskId) navigate(paths.task(taskId));
  };

  return html`<section>
    <${PageTitle} title="Search">Search checkpoints<//>
    <form class="inline-form" onSubmit=${openTask} aria-label="Open a task">
      <label for="open-task">Task id</label>
      <input id="open-task" name="task" autocomplete="off" />
      <button type="submit">Open timeline</button>
    </form>
    <form class="filters" onSubmit=${submit} aria-label="Search filters" key=${key}>
      <div class="grid">
        ${TEXT_FILTERS.map(
          ([name, label]) => html`<div class="field"><label for=${`f-${name}`}>${label}</label><input id=${`f-${name}`} name=${name} defaultValue=${query.get(name) ?? ''} autocomplete="off" /></div>`,
        )}
        ${CHOICES.map(
          ([name, label, options]) => html`<div class="field"><label for=${`f-${name}`}>${label}</label>
            <select id=${`f-${name}`} name=${name}>
              <option value="">any</option>
              ${options.map((option) => html`<option value=${option} selected=${query.get(name) === option}>${option}</option>`)}
            </select></div>`,
        )}
        <div class="field"><label for="f-from">Created from (your time)</label><input id="f-from" name="from" type="datetime-local" step="1" defaultValue=${toLocalInput(query.get('from'))} /></div>
        <div class="field"><label for="f-to">Created to (your time)</label><input id="f-to" name="to" type="datetime-local" step="1" defaultValue=${toLocalInput(query.get('to'))} /></div>
        <div class="field"><label for="f-labels">Labels, one <code>name=value</code> a line</label><textarea id="f-labels" name="labels" rows="2">${labelsText(query)}</textarea></div>
        <div class="field"><label for="f-limit">Results a page</label><input id="f-limit" name="limit" type="number" min="1" max="1000" defaultValue=${query.get('limit') ?? '50'} /></div>
      </div>
      <div class="actions">
        <button type="submit">Search</button>
        ${filtered ? html`<a href=${paths.search()}>Clear filters</a>` : null}
      </div>
    </form>
    <h2>${filtered ? 'Results' : 'Newest checkpoints'}${stack.length > 0 ? `, page ${stack.length + 1}` : ''}</h2>
    ${page.state === 'loading' ? html`<${Loading} what="results" />` : null}
    ${page.state === 'failed' ? html`<${Problem} error=${page.error} what="The search was refused" />` : null}
    ${page.state === 'done'
      ? html`<${Results} page=${page.value} />
          ${page.value.corrupted?.length ? html`<p class="warning">Withheld because they no longer match their hash: ${page.value.corrupted.map((id) => html`<a href=${paths.checkpoint(id)} class="mono">${shortId(id)}</a> `)}</p>` : null}
          <div class="actions">
            ${stack.length > 0 ? html`<button type="button" onClick=${() => setCursors({ key, stack: stack.slice(0, -1) })}>Previous page</button>` : null}
            ${page.value.nextCursor ? html`<button type="button" onClick=${() => setCursors({ key, stack: [...stack, page.value.nextCursor!] })}>Next page</button>` : null}
          </div>`
      : null}
  </section>`;
}
