// Workflow and policy code must stay deterministic and free of I/O: Node builtins, pino and the
// activity SDK are banned there, and no promise may be left floating anywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const deterministicOnly = {
  paths: [
    ...nodeBuiltins.map((name) => ({
      name,
      message: 'Workflow and policy code does no I/O; move this to activities/.',
    })),
    { name: 'pino', message: 'Use log from @temporalio/workflow; pino lives in workers/.' },
    { name: '@temporalio/activity', message: 'Activities are imported as types only.' },
    { name: '@temporalio/client', message: 'Workflow and policy code does not call the client.' },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.data/', '.out/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's describe/it return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['workflows/**/*.ts', 'policies/**/*.ts', 'messages/**/*.ts', 'examples/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', deterministicOnly],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
  {
    // The engine names no tool: nothing in it may import the examples built on it.
    files: [
      'workflows/**/*.ts',
      'activities/**/*.ts',
      'policies/**/*.ts',
      'workers/**/*.ts',
      'client/**/*.ts',
      'messages/**/*.ts',
      'adapters/**/*.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/examples', '**/examples/**'],
              message: 'The engine must not import examples/; examples are built on the engine.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../activities/*', '../activities'],
              allowTypeImports: true,
              message: 'Import activities as types only.',
            },
            {
              group: ['**/examples', '**/examples/**'],
              message: 'The engine must not import examples/; examples are built on the engine.',
            },
          ],
        },
      ],
    },
  },
);
