/**
 * What a workflow pays for before it runs a line of its own: the workflow sandbox evaluates the bundle's modules afresh
 * for every workflow. zod is loaded by the first schema built (policies/built-on-first-use.ts), so importing the
 * engine's workflow modules must not load it: a run's happy path parses nothing with zod, and evaluating zod's own
 * modules took about 4 ms of CPU per workflow on these 2-core machines (docs/testing.md, "CPU per operation").
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.join(__dirname, '..', '..');

/** In a fresh process (its own module cache): which zod files are loaded after `steps`, each a line of code. */
function zodFilesLoadedAfter(steps: string[]): number[] {
  const script = [
    `const loaded = () => Object.keys(require.cache).filter((f) => f.includes('/node_modules/zod/')).length;`,
    `const counts = [];`,
    ...steps.map((step) => `${step}; counts.push(loaded());`),
    `process.stdout.write(JSON.stringify(counts));`,
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as number[];
}

describe('the engine workflow modules', () => {
  it('load no zod until a schema is built, and load it then', () => {
    const [afterImport, afterBuild] = zodFilesLoadedAfter([
      `require('./workflows/index.ts'); require('./api/workflow.ts')`,
      `require('./policies/signed-decision.ts').decisionSchemas()`,
    ]);
    assert.equal(afterImport, 0, 'zod files loaded by importing the workflow modules');
    assert.ok(afterBuild > 0, 'building the decision schemas loads zod');
  });

  it('build the ceiling and tenant-policy schemas with zod loaded on demand', () => {
    const [afterCeilings, afterTenantPolicy] = zodFilesLoadedAfter([
      `require('./policies/ceilings.ts').parseRunCeilings(require('./policies/ceilings.ts').DEFAULT_RUN_CEILINGS)`,
      `require('./policies/tenant-policy.ts').tenantPolicySchemas().TenantPolicy.parse({})`,
    ]);
    assert.ok(afterCeilings > 0);
    assert.ok(afterTenantPolicy >= afterCeilings);
  });
});
