// Workflow and policy code must stay deterministic and free of I/O: Node builtins, pino and the
// activity SDK are banned there, and no promise may be left floating anywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import path from 'node:path';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** The engine's folders: what the package's entry points (api/) publish, and nothing outside the package reaches. */
const ENGINE = [
  'policies',
  'messages',
  'workflows',
  'activities',
  'transport',
  'workers',
  'client',
  'codec',
  'ledger',
  'adapters',
];

/**
 * `local/no-reach-into`: a relative import (or require, or require.resolve) that lands in one of the repository's
 * top-level folders named in the options. Paths are resolved from the importing file, so `./workflows` inside a
 * script's own folder is not the engine's workflows/.
 */
const noReachInto = {
  meta: { type: 'problem', schema: [{ type: 'object', properties: { folders: { type: 'array' }, message: {} } }] },
  create(context) {
    const { folders, message } = context.options[0];
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.relative(import.meta.dirname, path.resolve(path.dirname(context.filename), source));
      const top = target.split(path.sep)[0];
      if (folders.includes(top)) context.report({ node, message: `${source}: ${message}` });
    };
    const isRequire = (callee) =>
      (callee.type === 'Identifier' && callee.name === 'require') ||
      (callee.type === 'MemberExpression' && callee.object.name === 'require' && callee.property.name === 'resolve');
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      CallExpression: (node) =>
        isRequire(node.callee) && node.arguments[0]?.type === 'Literal' && check(node, node.arguments[0].value),
    };
  },
};
const local = { rules: { 'no-reach-into': noReachInto } };
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
const PUBLIC_API_ONLY =
  'import the engine through its public entry points (retrysafe, retrysafe/workflow, retrysafe/worker, ' +
  'retrysafe/testing, retrysafe/mcp, …), as a team that installed the package does';

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', '.data/', '.out/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
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
    // Workflow modules built on the package reach it through its sandbox-safe entry point only: the others load
    // clients, codecs and Node builtins that the workflow bundle cannot hold.
    files: ['examples/workflows/**/*.ts', '**/workflows.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['retrysafe', 'retrysafe/worker', 'retrysafe/testing', 'retrysafe/mcp'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'Workflow code imports retrysafe/workflow (types from the others are fine).',
          })),
        },
      ],
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
      'transport/**/*.ts',
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
    // Built on the package as a team's code is: the engine only by its entry points' names. Scripts (the
    // repository's own tooling) may also use the tools for people in cli/, which ship beside the engine.
    files: [
      'examples/**/*.ts',
      'test/byo-tool/**/*.ts',
      'test/mcp-provider/**/*.ts',
      'test/consumer/project/**/*.ts',
      'test/unit/mcp-adapter.test.ts',
      'test/integration/mcp-server.test.ts',
      'test/integration/agent-framework-tools.test.ts',
    ],
    plugins: { local },
    rules: { 'local/no-reach-into': ['error', { folders: [...ENGINE, 'api', 'cli'], message: PUBLIC_API_ONLY }] },
  },
  {
    // The repository's own tooling reaches the public surface by the package's names, as a team does, and what the
    // package keeps internal (search attribute names, timeouts, key-file variables) from the engine's sources.
    files: ['scripts/**/*.ts'],
    plugins: { local },
    rules: { 'local/no-reach-into': ['error', { folders: ['api'], message: PUBLIC_API_ONLY }] },
  },
  {
    // The engine does not depend on the product layer built on it.
    files: ENGINE.map((folder) => `${folder}/**/*.ts`),
    plugins: { local },
    rules: {
      'local/no-reach-into': [
        'error',
        { folders: ['api', 'cli', 'examples', 'scripts'], message: 'the engine must not import what is built on it' },
      ],
    },
  },
  {
    // Each function of the workflows and activities fits on a screen: a lifecycle reads as a sequence of phases, an
    // activity as its steps, an HTTP surface as its routes, a command's output as its blocks. 60 lines of code; comments and blank lines are not
    // counted, so explaining costs nothing.
    files: [
      'workflows/**/*.ts',
      'activities/**/*.ts',
      'cli/**/*.ts',
      'workers/webhook-*.ts',
      'workers/http-listener.ts',
      'adapters/mcp/mcp-http.ts',
    ],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
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
