import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Only the repository knows the key layout, and only store/open.ts picks a store (docs/architecture.md). */
const adapters = { group: ['**/store/lmdb*', '**/store/fdb*'], message: 'Nothing above src/store/ imports a store adapter; src/store/open.ts chooses one.' };
const keyLayout = [
  { group: ['**/store/keyspace', '**/store/keyspace.js'], message: 'Only src/service/repository/ knows the key layout; speak checkpoints, heads and links to the repository.' },
  { group: ['**/store/once', '**/store/once.js'], message: 'Operation records are reached through the repository (repository.operations).' },
];

const serverSide = { group: ['**/service/*', '**/store/*', '**/http/*', '**/queue/*', '**/app', '**/app.js'], message: 'src/langgraph/ talks to Baton through src/client/, never to the server modules.' };

export default tseslint.config(
  // .scratch/ holds throwaway measurement scripts, ignored by git as well.
  { ignores: ['node_modules/', 'data/', 'dist/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', 'src/service/repository/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...keyLayout, adapters] }] },
  },
  {
    files: ['src/service/repository/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [adapters] }] },
  },
  {
    // The LangGraph adapter is a client of the HTTP API like any agent; it reaches the data only through routes.
    files: ['src/langgraph/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...keyLayout, adapters, serverSide] }] },
  },
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
