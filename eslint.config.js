import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'test-output/', 'test/fixtures/corpus/'] },
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
      'no-console': 'off',
    },
  },
  // Layers point one way: http (routes parse and answer) → domain (accounts, billing, pipeline, fetch, mail, pages)
  // → store (queries). Below http nothing imports http/ or the composition root (context.ts).
  {
    files: [
      'src/{accounts,billing,pipeline,fetch,mail,pages,store,delivery}/**/*.ts',
      'src/{config,errors,metrics}.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/http/**', '**/context.ts', '**/main.ts', '**/cli/**'],
              message: 'Layers point down (http → domain → store): take narrow dependencies instead.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/store/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/http/**',
                '**/context.ts',
                '**/accounts/**',
                '**/billing/**',
                '**/pipeline/**',
                '**/fetch/**',
                '**/mail/**',
                '**/pages/**',
                '**/delivery/**',
                '**/cli/**',
              ],
              message: 'The store is the bottom layer: it imports no domain or http module.',
            },
          ],
        },
      ],
    },
  },
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
