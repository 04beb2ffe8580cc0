import path from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';

/**
 * Modules the workflow sandbox loads once per worker instead of once per workflow: the SDK's `preloadModules`
 * bundler option, for its reusable V8 context (the default). The SDK freezes what they export, and a preloaded
 * module's inner state is shared by every workflow on the worker, so only modules whose state is a pure,
 * deterministic cache belong here.
 *   policies/ed25519: @noble/curves' Ed25519, whose precomputed base-point table is built on the first
 *   verification of a signed decision; evaluated per workflow, every approval's workflow task would build it again
 *   (`npm run bench:timeline -- --legs bare-signal,retrysafe-confirmation` shows the cost). It brings in the
 *   modules it imports (@noble/curves' abstract curve and field code, @noble/hashes' sha2 and utils), which other
 *   workflow code then shares too: sha2 keeps scratch buffers at module level, which is safe because hashing is
 *   synchronous and a context runs one activation at a time.
 * Every bundle of retrysafe's workflows should preload them: createWorker does, and so do the launchers' bundles.
 */
export const WORKFLOW_PRELOAD_MODULES: readonly string[] = [require.resolve('../policies/ed25519')];

type BundlerOptions = NonNullable<WorkerOptions['bundlerOptions']>;

/**
 * Where the package's workflow-side entry points are when this code runs from its TypeScript sources (retrysafe's
 * own repository, whose examples and tests import `retrysafe/workflow` by name): its api/ files. An installed
 * package resolves them through its `exports` map instead, and needs nothing here.
 */
const SOURCE_ENTRY_POINTS: Readonly<Record<string, string>> | undefined = __filename.endsWith('.ts')
  ? {
      retrysafe$: path.resolve(__dirname, '..', 'api', 'index.ts'),
      'retrysafe/workflow$': path.resolve(__dirname, '..', 'api', 'workflow.ts'),
    }
  : undefined;

/** An application's bundler options with the engine's preloads added ahead of its own. */
export function withEnginePreloads(options: BundlerOptions = {}): BundlerOptions {
  return {
    ...options,
    preloadModules: [...new Set([...WORKFLOW_PRELOAD_MODULES, ...(options.preloadModules ?? [])])],
    ...(SOURCE_ENTRY_POINTS ? { webpackConfigHook: withSourceEntryPoints(options.webpackConfigHook) } : {}),
  };
}

function withSourceEntryPoints(
  next: BundlerOptions['webpackConfigHook'],
): NonNullable<BundlerOptions['webpackConfigHook']> {
  return (config) => {
    const resolve = config.resolve ?? {};
    const alias = Array.isArray(resolve.alias) ? resolve.alias : { ...resolve.alias, ...SOURCE_ENTRY_POINTS };
    const configured = { ...config, resolve: { ...resolve, alias } };
    return next ? next(configured) : configured;
  };
}
