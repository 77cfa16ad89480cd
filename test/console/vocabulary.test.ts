/** The words the console offers in its menus are the service's. */
import { expect, it } from 'vitest';
import * as consoleWords from '../../console/src/vocabulary.js';
import { FINAL_STATUSES, PHASES, STATUSES } from '../../src/domain/checkpoint.js';

it('offers the phases and statuses the API accepts', () => {
  expect(consoleWords.PHASES).toEqual(PHASES);
  expect(consoleWords.STATUSES).toEqual(STATUSES);
  expect(consoleWords.FINAL_STATUSES).toEqual(FINAL_STATUSES);
});
