/**
 * Live events (`/console/events`): the tenant's Server-Sent Events stream
 * (`GET /v1/events`, `Accept: text/event-stream`), read with fetch, since
 * EventSource cannot send the token. The typed client reconnects after a
 * dropped connection with `Last-Event-ID` set to the last event shown, so
 * the service resumes right after it: nothing repeated, nothing missed.
 * Types are filtered by the service (`types=`); the task filter is applied
 * to what arrives.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { BatonError } from '../../../src/client/errors.js';
import type { EventType, StoredEvent } from '../../../src/client/types.js';
import { PageTitle, Problem } from '../components.js';
import { formatDateTime, shortId } from '../format.js';
import { paths } from '../router.js';
import { client, onStreamState, type StreamState } from '../session.js';
import { EVENT_TYPES } from '../vocabulary.js';

/** The page keeps the newest events; older ones drop off the end. */
const KEEP = 500;

const STATE_TEXT: Record<StreamState | 'paused', string> = {
  connecting: 'Connecting…',
  live: 'Live: new events appear at the top.',
  lost: 'Connection lost; reconnecting, then resuming after the last event shown.',
  paused: 'Paused. Resuming continues after the last event shown.',
};

const CHECKPOINT_EVENTS = new Set(['CHECKPOINT_CREATED', 'CHECKPOINT_UPDATED', 'CHECKPOINT_FINALIZED', 'CHECKPOINTS_LINKED', 'CHECKPOINT_CORRUPTED']);

function EventRow({ event }: { event: StoredEvent }) {
  const taskId = typeof event.data.taskId === 'string' ? event.data.taskId : undefined;
  const agentId = typeof event.data.agentId === 'string' ? event.data.agentId : undefined;
  return html`<li class="event" data-type=${event.type}>
    <div class="event-head">
      <span class="muted">${formatDateTime(event.time)}</span>
      <code class="event-type">${event.type}</code>
      ${taskId ? html`<span>task <a href=${paths.task(taskId)}>${taskId}</a></span>` : null}
      ${CHECKPOINT_EVENTS.has(event.type) ? html`<span>checkpoint <a class="mono" href=${paths.checkpoint(event.subject)}>${shortId(event.subject)}</a></span>` : null}
      ${agentId ? html`<span>agent ${agentId}</span>` : null}
    </div>
    <details><summary>The CloudEvent</summary><pre tabindex="0">${JSON.stringify(event, null, 2)}</pre></details>
  </li>`;
}

export function EventsView() {
  const [types, setTypes] = useState<EventType[]>([]);
  const [taskFilter, setTaskFilter] = useState('');
  const [paused, setPaused] = useState(false);
  const [events, setEvents] = useState<StoredEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [failure, setFailure] = useState<unknown>(undefined);
  const [attempt, setAttempt] = useState(0);
  // The last event shown: where a new connection (other types, or after a pause) carries on.
  const last = useRef<string | undefined>(undefined);

  useEffect(() => onStreamState(setState), []);
  useEffect(() => {
    if (paused) return;
    const abort = new AbortController();
    setFailure(undefined);
    (async () => {
      try {
        for await (const event of client.events.stream({ types, signal: abort.signal, ...(last.current ? { after: last.current } : {}) })) {
          last.current = event.cursor;
          setEvents((shown) => [event, ...shown].slice(0, KEEP));
        }
      } catch (error) {
        if (abort.signal.aborted) return;
        // Older than the service keeps events: carrying on from it is impossible, so the next connection starts at the present.
        if (error instanceof BatonError && error.code === 'events_expired') last.current = undefined;
        setFailure(error);
      }
    })();
    return () => abort.abort();
  }, [types.join(','), paused, attempt]);

  const toggle = (type: EventType, on: boolean): void => setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));
  const shown = taskFilter.trim() === '' ? events : events.filter((e) => e.data.taskId === taskFilter.trim());

  return html`<section>
    <${PageTitle} title="Live events">Live events<//>
    <p class="stream-state" role="status" data-testid="stream-state" data-state=${paused ? 'paused' : state}>${STATE_TEXT[paused ? 'paused' : state]}</p>
    ${failure
      ? html`<${Problem} error=${failure} what="The event stream stopped" />
          <button type="button" onClick=${() => setAttempt((n) => n + 1)}>Connect again</button>`
      : null}
    <div class="actions">
      <button type="button" onClick=${() => setPaused(!paused)}>${paused ? 'Resume' : 'Pause'}</button>
      <button type="button" onClick=${() => setEvents([])}>Clear the list</button>
    </div>
    <details class="filters">
      <summary>Filter${types.length > 0 ? ` (${types.length} type${types.length === 1 ? '' : 's'})` : ''}</summary>
      <fieldset>
        <legend>Event types (none ticked: all)</legend>
        <div class="checks">
          ${EVENT_TYPES.map(
            (type) => html`<label><input type="checkbox" name="types" value=${type} checked=${types.includes(type)} onChange=${(e: Event) => toggle(type, (e.currentTarget as HTMLInputElement).checked)} /> ${type}</label>`,
          )}
        </div>
      </fieldset>
      <div class="field">
        <label for="event-task">Only task</label>
        <input id="event-task" value=${taskFilter} onInput=${(e: Event) => setTaskFilter((e.currentTarget as HTMLInputElement).value)} autocomplete="off" />
      </div>
    </details>
    <p class="muted">${shown.length} event${shown.length === 1 ? '' : 's'} shown, newest first; the stream starts at the moment the page connected.</p>
    <ol class="events" aria-label="Events">
      ${shown.map((event) => html`<${EventRow} key=${event.cursor} event=${event} />`)}
    </ol>
  </section>`;
}
