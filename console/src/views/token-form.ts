/**
 * The Token field: the only way a token enters the console. It is checked
 * with one call (`GET /v1/keys`, which any role may read), then kept in
 * this tab's session storage. The form is handled in the page and never
 * submitted, so the token cannot end up in an address or a server log.
 *
 * @module
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { BatonError } from '../../../src/client/errors.js';
import { PageTitle, Problem } from '../components.js';
import { forgetToken, getRaw, storeToken } from '../session.js';

export function TokenForm({ refused, onToken }: { refused: boolean; onToken: () => void }) {
  const [state, setState] = useState<{ kind: 'idle' | 'checking' | 'refused' } | { kind: 'failed'; error: unknown }>({ kind: refused ? 'refused' : 'idle' });
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
    const token = input.value.trim();
    if (token === '') return;
    setState({ kind: 'checking' });
    storeToken(token);
    try {
      await getRaw('/v1/keys', 'application/json');
      input.value = '';
      onToken();
    } catch (error) {
      forgetToken();
      setState(error instanceof BatonError && error.status === 401 ? { kind: 'refused' } : { kind: 'failed', error });
    }
  };
  return html`<section class="token">
    <${PageTitle} title="Sign in">Baton console<//>
    <p>Auditors and operators read tasks, checkpoints, the audit trail and live events here, through Baton's HTTP API with your token.</p>
    <form onSubmit=${submit} method="post" action="">
      <div class="field">
        <label for="token">Token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required aria-describedby="token-help" />
      </div>
      <p id="token-help" class="muted">Any role's token works (auditor, writer or admin). It is kept in this tab's session storage only, sent as a Bearer header, and never put in an address.</p>
      <button type="submit" disabled=${state.kind === 'checking'}>Use this token</button>
    </form>
    <div role="status">${state.kind === 'checking' ? 'Checking the token…' : null}</div>
    ${state.kind === 'refused' ? html`<p class="problem" role="alert"><strong>The service refused the token (401).</strong> Check it and enter it again.</p>` : null}
    ${state.kind === 'failed' ? html`<${Problem} error=${state.error} what="The token could not be checked" />` : null}
  </section>`;
}
