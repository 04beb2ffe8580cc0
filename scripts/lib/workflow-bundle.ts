import { createHash, randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { withEnginePreloads } from '../../workers/workflow-preload';

const ROOT = path.resolve(__dirname, '..', '..');

/** Where bundles are kept between processes, by a hash of everything that could have gone into them. */
export const BUNDLE_CACHE_DIR = path.join(ROOT, '.out', 'workflow-bundles');
/** Bundles kept; older ones are deleted when a new one is written. */
const KEPT_BUNDLES = 4;
/** A bundle being written for longer than this was abandoned. */
const PARTIAL_MAX_AGE_MS = 10 * 60 * 1000;
/** Folders no workflow code comes from (built output, tools, data, dependencies: the lock file stands for those). */
const NOT_SOURCES = new Set(['node_modules', '.git', '.out', '.tools', '.data', 'dist', 'docs']);
const SOURCE_FILE = /\.(ts|tsx|js|mjs|cjs|json)$/;

/**
 * Bundles a workflow module (the example worker's by default) and writes the bundle to a file that worker processes
 * load through RETRYSAFE_WORKFLOW_BUNDLE: a killed and restarted worker is then ready without re-bundling.
 *
 * Bundling takes 3–5 s on 2 cores, and every test file, chaos run and bench starts a stack, so the bundle is kept in
 * .out/workflow-bundles under a hash of every source file of the repository (contents, not times), the lock file
 * (the dependencies' versions) and the workflow module's path: a change anywhere that could reach the bundle makes
 * a new one. RETRYSAFE_BUNDLE_CACHE=off always bundles afresh.
 */
export async function writeWorkflowBundle(
  outDir = path.join(ROOT, '.out'),
  workflowsPath = require.resolve('../../examples/workflows'),
): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const file = path.join(outDir, `workflow-bundle-${process.pid}.js`);
  if (process.env.RETRYSAFE_BUNDLE_CACHE === 'off') {
    await writeFile(file, await bundle(workflowsPath));
    return file;
  }
  const cached = path.join(BUNDLE_CACHE_DIR, `${await bundleKey(workflowsPath)}.js`);
  await ensureCached(cached, () => bundle(workflowsPath));
  await copyFile(cached, file);
  return file;
}

/** The writes under way in this process, by cached file: stacks started together share one. */
const writing = new Map<string, Promise<void>>();

/**
 * Makes sure `cached` holds what `build` gives, building it at most once in this process however many callers ask
 * at the same time (two stacks started together in one test file did, and the second's rename found the first's
 * partial file gone). Other processes write aside under names of their own and rename: a reader sees a whole
 * file or none, and the last rename wins with the same contents. A failed build is not remembered.
 */
export async function ensureCached(cached: string, build: () => Promise<string>): Promise<void> {
  if (await exists(cached)) return;
  let pending = writing.get(cached);
  if (!pending) {
    pending = writeAside(cached, build).finally(() => writing.delete(cached));
    writing.set(cached, pending);
  }
  await pending;
}

async function writeAside(cached: string, build: () => Promise<string>): Promise<void> {
  const dir = path.dirname(cached);
  await mkdir(dir, { recursive: true });
  const partial = `${cached}.${process.pid}-${randomUUID().slice(0, 8)}.partial`;
  try {
    await writeFile(partial, await build());
    await rename(partial, cached);
  } finally {
    await rm(partial, { force: true });
  }
  await forgetOldBundles(dir);
}

/** The hash a bundle is kept under: the workflow module's path and the contents of every file it could include. */
export async function bundleKey(workflowsPath: string, root = ROOT): Promise<string> {
  const hash = createHash('sha256').update(`workflows ${path.relative(root, workflowsPath)}\n`);
  for (const file of await sourceFiles(root)) {
    hash.update(`${path.relative(root, file)}\n`).update(await readFile(file));
  }
  return hash.digest('hex').slice(0, 32);
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !NOT_SOURCES.has(entry.name)) out.push(...(await sourceFiles(full)));
    else if (entry.isFile() && SOURCE_FILE.test(entry.name)) out.push(full);
  }
  return out;
}

async function bundle(workflowsPath: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...withEnginePreloads(),
    logger: quietLogger,
  });
  return code;
}

async function forgetOldBundles(dir: string): Promise<void> {
  const kept = await readdir(dir).catch(() => [] as string[]);
  const files = await Promise.all(
    kept.map(async (name) => {
      const full = path.join(dir, name);
      return { name, full, mtimeMs: (await stat(full).catch(() => undefined))?.mtimeMs ?? 0 };
    }),
  );
  const bundles = files.filter((f) => f.name.endsWith('.js')).sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of bundles.slice(KEPT_BUNDLES)) await rm(old.full, { force: true });
  // What a process killed while bundling left behind.
  const abandoned = files.filter((f) => f.name.endsWith('.partial') && f.mtimeMs < Date.now() - PARTIAL_MAX_AGE_MS);
  for (const partial of abandoned) await rm(partial.full, { force: true });
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };
