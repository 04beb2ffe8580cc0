import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { withEnginePreloads } from 'retrysafe/worker';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Bundles a workflow module (the example worker's by default) once and writes the bundle to a file that worker processes load through
 * RETRYSAFE_WORKFLOW_BUNDLE: a killed and restarted worker is then ready without re-bundling.
 */
export async function writeWorkflowBundle(
  outDir = path.join(ROOT, '.out'),
  workflowsPath = require.resolve('../../examples/workflows'),
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...withEnginePreloads(),
    logger: quietLogger,
  });
  await mkdir(outDir, { recursive: true });
  const file = path.join(outDir, `workflow-bundle-${process.pid}.js`);
  await writeFile(file, code);
  return file;
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };
