// Copies an LMDB data directory compacted, offline: `npm run store:compact -- SRC DEST`.
// LMDB reuses the pages a purge or compaction frees for new writes, but never
// gives them back to the file system; a compacted copy holds only the pages in
// use. Stop the service first (or copy from a backup): the copy is made from
// one read snapshot, and the service must then be pointed at DEST.
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import console from 'node:console';
import process from 'node:process';
import { open } from 'lmdb';

const [source, target] = process.argv.slice(2).map((path) => resolve(path));
if (!source || !target) {
  console.error('Usage: npm run store:compact -- SOURCE_DATA_DIR DEST_DATA_DIR');
  process.exit(2);
}
if (!existsSync(join(source, 'data.mdb'))) {
  console.error(`${source} holds no LMDB store (no data.mdb); name the service's data directory (BATON_DATA_DIR).`);
  process.exit(2);
}
if (existsSync(join(target, 'data.mdb'))) {
  console.error(`${target} already holds a store; name an empty or new directory.`);
  process.exit(2);
}
// The store, and its companion environments in subdirectories: `runs/` holds the word runs the indexer's merges open (docs/storage.md).
const COMPANIONS = ['runs'];
const environments = ['', ...COMPANIONS.filter((name) => existsSync(join(source, name, 'data.mdb')))];
for (const name of environments) {
  mkdirSync(join(target, name), { recursive: true });
  const env = open({ path: join(source, name), noSubdir: false, maxDbs: 4, readOnly: true });
  // The environment is a directory: LMDB writes data.mdb inside the directory it is given.
  await env.backup(join(target, name), true);
  await env.close();
}
// The queue and the signing key are files beside the store: they are the operator's to move (docs/retention.md).
const size = (dir) => environments.reduce((sum, name) => sum + statSync(join(dir, name, 'data.mdb')).size, 0);
const left = readdirSync(source).filter((f) => !f.startsWith('data.mdb') && f !== 'lock.mdb' && !environments.includes(f));
console.log(`compacted ${source} (${size(source)} bytes) into ${target} (${size(target)} bytes); other files left in place: ${left.join(', ') || 'none'}`);
