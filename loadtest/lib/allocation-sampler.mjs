/**
 * Loaded into a server with `node --import` (`ALLOCATIONS=1` in
 * `profile-create.ts`): the first SIGUSR2 starts V8's sampling heap
 * profiler counting what garbage collections took as well (every
 * allocation, not only what survives, which is all `--heap-prof` keeps);
 * the second writes the profile to BATON_ALLOCATIONS_FILE and prints
 * "allocations written". With BATON_ALLOCATIONS_SURVIVORS=1 it leaves out
 * what a scavenge took: what is left is what lived through one (copied, then
 * promoted), which is what makes a scavenge long. Plain JavaScript: the server runs without a
 * TypeScript loader.
 */
import console from 'node:console';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import process from 'node:process';

const session = new Session();
session.connect();
let sampling = false;

process.on('SIGUSR2', () => {
  const turn = sampling
    ? session.post('HeapProfiler.stopSampling').then(({ profile }) => {
        writeFileSync(process.env.BATON_ALLOCATIONS_FILE, JSON.stringify(profile));
        console.error('allocations written');
      })
    : session
        .post('HeapProfiler.enable')
        .then(() => session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: process.env.BATON_ALLOCATIONS_SURVIVORS !== '1' }));
  sampling = !sampling;
  turn.catch((error) => console.error(`allocation sampler: ${error}`));
});
