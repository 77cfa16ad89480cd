/**
 * The console's frame: the header with its navigation, the Token field
 * until a token is given (or after the service refused one), and the view
 * of the address.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { PageTitle } from './components.js';
import { paths, useRoute, type Route } from './router.js';
import { forgetToken, onUnauthorized, storedToken } from './session.js';
import { AuditView } from './views/audit.js';
import { CheckpointView } from './views/checkpoint.js';
import { EventsView } from './views/events.js';
import { SearchView } from './views/search.js';
import { TaskView } from './views/task.js';
import { TokenForm } from './views/token-form.js';

function View({ route }: { route: Route }) {
  switch (route.name) {
    case 'search':
      return html`<${SearchView} query=${route.query} />`;
    case 'task':
      return html`<${TaskView} key=${route.taskId} taskId=${route.taskId} />`;
    case 'audit':
      return html`<${AuditView} key=${route.taskId} taskId=${route.taskId} />`;
    case 'checkpoint':
      return html`<${CheckpointView} key=${`${route.id}?${route.query}`} id=${route.id} query=${route.query} />`;
    case 'events':
      return html`<${EventsView} />`;
    case 'not-found':
      return html`<section><${PageTitle} title="Not found">Nothing here<//><p>The console has no page at <code>${route.path}</code>. <a href=${paths.search()}>Search checkpoints</a>.</p></section>`;
  }
}

export function App() {
  const route = useRoute();
  const [token, setToken] = useState(storedToken() !== undefined);
  const [refused, setRefused] = useState(false);
  useEffect(
    () =>
      onUnauthorized(() => {
        forgetToken();
        setRefused(true);
        setToken(false);
      }),
    [],
  );
  const forget = (): void => {
    forgetToken();
    setRefused(false);
    setToken(false);
  };
  const current = (name: Route['name']) => (route.name === name ? 'page' : undefined);
  return html`<a class="skip" href="#main">Skip to the content</a>
    <header class="top">
      <a class="brand" href=${paths.search()}>Baton console</a>
      <nav aria-label="Console">
        <a href=${paths.search()} aria-current=${current('search')}>Search</a>
        <a href=${paths.events()} aria-current=${current('events')}>Live events</a>
      </nav>
      ${token ? html`<button type="button" class="quiet" onClick=${forget}>Forget token</button>` : null}
    </header>
    <main id="main" tabindex="-1">
      ${token ? html`<${View} route=${route} />` : html`<${TokenForm} refused=${refused} onToken=${() => (setRefused(false), setToken(true))} />`}
    </main>`;
}
