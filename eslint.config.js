import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const UP = {
  group: ['**/http/**', '**/context.ts', '**/main.ts', '**/cli/**'],
  message: 'Layers point down (http → domain → store): take narrow dependencies instead.',
};
const DOMAIN = [
  'accounts',
  'billing',
  'pipeline',
  'fetch',
  'mail',
  'outbox',
  'pages',
  'delivery',
  'job',
  'sources',
];

/** One no-restricted-imports block per folder (a later block replaces an earlier one's rule, so each lists all). */
function layerRules() {
  const block = (files, ...patterns) => ({
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: [UP, ...patterns] }] },
  });
  return [
    block([`src/{${DOMAIN.join(',')}}/**/*.ts`]),
    block(['src/billing/**/*.ts'], {
      group: ['**/pages/**'],
      message: 'Billing decides; the HTML people read is rendered in src/pages/.',
    }),
    block(['src/fetch/**/*.ts'], {
      group: ['**/pipeline/**'],
      message:
        'The fetch knows nothing of the pipeline: a primitive both use lives below both (src/scheduler.ts).',
    }),
    block(['src/mail/**/*.ts'], {
      group: ['**/store/**', '**/outbox/**'],
      message: 'Mail words and carries one mail; the outbox worker (src/outbox/) is what reads the store.',
    }),
    block(['src/store/**/*.ts'], {
      group: DOMAIN.map((folder) => `**/${folder}/**`),
      message: 'The store is the bottom layer: it imports no domain or http module.',
    }),
    block(['src/{config,errors,metrics,scheduler,paths}.ts'], {
      group: ['**/store/**', ...DOMAIN.map((folder) => `**/${folder}/**`)],
      message: 'A leaf every layer may use imports no layer above it.',
    }),
  ];
}

export default tseslint.config(
  // src/pipeline/assembly is AssemblyScript (compiled to wasm by bin/build-wasm.js, which writes src/pipeline/generated).
  {
    ignores: [
      'node_modules/',
      'data/',
      'dist/',
      'test-output/',
      'test/fixtures/corpus/',
      'src/pipeline/assembly/',
      'src/pipeline/generated/',
      'test/frameworks/contracts/.astro/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        document: 'readonly',
        window: 'readonly',
        fetch: 'readonly',
        navigator: 'readonly',
        FormData: 'readonly',
        Blob: 'readonly',
        AbortController: 'readonly',
        sessionStorage: 'readonly',
        getSelection: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // `Operations` is declared empty and each operation family adds its fields (declaration merging).
      '@typescript-eslint/no-empty-object-type': ['error', { allowWithName: '^Operations$' }],
      'no-console': 'off',
    },
  },
  // Layers point one way: http (routes parse and answer) → domain (accounts, billing, pipeline, fetch, mail, outbox,
  // pages, delivery, job, sources) → store (queries) → leaves (config, errors, metrics, scheduler, paths). Below http
  // nothing imports http/ or the composition root (context.ts); inside the domain, each folder also keeps its own
  // never-rules.
  ...layerRules(),
  // Promises are awaited or handled on purpose (type-aware).
  {
    files: ['src/**/*.ts', 'bin/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
);
