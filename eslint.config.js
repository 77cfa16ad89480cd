import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layering of docs/architecture.md, each "never" of it as a rule. Imports
 * point inward: http and cli use service and domain; the service uses the
 * repository and the store port; only the repository knows the key layout;
 * only store/open.ts picks a store; only the transaction runner runs a
 * transaction. test/lint/layering.test.ts checks that each rule fires.
 */
const adapters = { group: ['**/store/lmdb*', '**/store/fdb*'], message: 'Nothing above src/store/ imports a store adapter; src/store/open.ts chooses one.' };
const keyLayout = [
  { group: ['**/store/keyspace', '**/store/keyspace.js'], message: 'Only src/service/repository/ knows the key layout; speak checkpoints, heads and links to the repository.' },
  { group: ['**/store/once', '**/store/once.js'], message: 'Operation records are reached through the repository (repository.operations).' },
];
const upward = (from, layers) => ({ group: layers.map((layer) => `**/${layer}/*`), message: `${from} never imports ${layers.join(', ')}: imports point inward (docs/architecture.md).` });
const storeValues = { group: ['**/store/*', '!**/store/keyspace*', '!**/store/once*'], allowTypeImports: true, message: 'Routes see services only: store errors become Baton errors in the service, and only types of the store port may be named here.' };
const repository = { group: ['**/service/repository/*'], message: 'Routes and the queue reach stored records through service functions, never the repository: not even its types.' };
const serverSide = (folder) => ({ group: ['**/service/*', '**/store/*', '**/http/*', '**/queue/*', '**/app', '**/app.js'], message: `${folder} talks to Baton through src/client/, never to the server modules.` });
/** The adapters to agents' own frameworks (DESIGN §11): clients of the HTTP API like any agent. */
const frameworkAdapters = ['langgraph', 'langgraph-api', 'openai-agents', 'a2a'];
const httpFromBelow = { group: ['**/http/*', '**/app', '**/app.js', '**/main', '**/main.js'], message: 'The service never imports HTTP: the CLI and MCP run the same service without Fastify.' };

/** Only the transaction runner (src/service/transactions.ts) calls store.transact: one retry policy, one place for metrics and spans. */
const oneRunner = {
  selector: "CallExpression[callee.property.name='transact']",
  message: 'Run transactions through runTransaction (src/service/transactions.ts), the one caller of store.transact.',
};

const restrict = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  // .scratch/ holds throwaway measurement scripts, ignored by git as well. test/**/ported/ holds frameworks'
  // own tests, kept as their authors wrote them under their own lint and compiler settings (test/PORTED.md).
  // dist is a link to a build directory, dist.<hash>/ (scripts/build.mjs).
  { ignores: ['node_modules/', 'data/', 'dist/', 'dist', 'dist.*/', '.tmp/', '.scratch/', 'test/**/ported/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // domain/ imports nothing of ours.
  { files: ['src/domain/**/*.ts'], rules: restrict({ group: ['../*', '!./*'], message: 'src/domain/ imports nothing of ours: it is the vocabulary every layer shares.' }) },
  // The store knows nothing above it.
  { files: ['src/store/**/*.ts'], rules: restrict(upward('src/store/', ['service', 'http', 'queue', 'formats', 'client', 'domain', ...frameworkAdapters])) },
  { files: ['src/formats/**/*.ts'], rules: restrict(upward('src/formats/', ['service', 'store', 'http', 'queue', 'client', ...frameworkAdapters])) },
  { files: ['src/client/**/*.ts'], rules: restrict(upward('src/client/', ['service', 'store', 'queue', ...frameworkAdapters]), { group: ['**/domain/*', '**/http/*'], allowTypeImports: true, message: 'src/client/ imports only types of the server.' }) },
  ...frameworkAdapters.map((folder) => ({ files: [`src/${folder}/**/*.ts`], rules: restrict(...keyLayout, adapters, serverSide(`src/${folder}/`)) })),
  { files: ['src/service/repository/**/*.ts'], rules: restrict(adapters, upward('src/service/repository/', ['http', 'queue', 'formats'])) },
  {
    files: ['src/service/**/*.ts'],
    ignores: ['src/service/repository/**', 'src/service/runtime.ts'],
    rules: restrict(...keyLayout, adapters, httpFromBelow, upward('src/service/', ['queue'])),
  },
  // The runtime owns the queue (and only it, of the service).
  { files: ['src/service/runtime.ts'], rules: restrict(...keyLayout, adapters, httpFromBelow) },
  { files: ['src/queue/**/*.ts'], rules: restrict(...keyLayout, adapters, httpFromBelow, storeValues, repository) },
  { files: ['src/http/**/*.ts'], rules: restrict(...keyLayout, adapters, storeValues, repository) },
  { files: ['src/cli/**/*.ts'], rules: restrict(...keyLayout, adapters, { group: ['**/http/*', '**/app', '**/app.js'], message: 'src/cli/ uses the service and the client, never src/http/.' }) },
  { files: ['src/**/*.ts'], ignores: ['src/store/**', 'src/service/transactions.ts'], rules: { 'no-restricted-syntax': ['error', oneRunner] } },
  {
    // The console runs in browsers over the public HTTP API: of the server's code it bundles only the client and the event names.
    files: ['console/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '/src/(?!client/|domain/events\\.js$)', allowTypeImports: true, message: 'console/ reaches Baton through src/client/ (the public HTTP API); only types of the server may be named here.' }] },
      ],
    },
  },
);
