/**
 * The console's entry point, loaded by `console/index.html`.
 *
 * @module
 */
import { html, render } from 'htm/preact';
import { App } from './app.js';

render(html`<${App} />`, document.getElementById('app')!);
