import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import ts from 'typescript';
import { builtEntryPoints, ROOT } from '../../scripts/lib/built-package';

/**
 * What a team's `tsc` sees of the built declarations (dist/, as the tarball ships them), checked here rather than in
 * the consumer project: the repository's own type-check reads the sources, where the engine's members are present.
 */

const TEAM_CODE = `
import { openLedger, type ActionLedger, type PostgresLedger, type SqliteLedger } from 'retrysafe/worker';

export async function reads(ledger: ActionLedger): Promise<unknown[]> {
  return [
    ledger.kind,
    await ledger.migrate(),
    await ledger.get('post-message:v1:acme:launch-1'),
    await ledger.history({ tenant: 'acme', status: ['confirmed'], limit: 10 }),
    await ledger.audit('post-message:v1:acme:launch-1'),
    await ledger.alarms({ limit: 5 }),
    await ledger.openActionStats(),
    await ledger.close(),
  ];
}

export async function writes(ledger: ActionLedger, sqlite: SqliteLedger, postgres: PostgresLedger): Promise<void> {
  const at = new Date().toISOString();
  const claim = { key: 'k', tenant: 'acme', operation: 'post-message', toolVersion: 1, requestHash: 'h', owner: 'me', claimedAt: at };
  // @ts-expect-error the row writes are the engine's
  await ledger.recordClaim(claim);
  // @ts-expect-error the row writes are the engine's
  await ledger.claimRow({ ...claim, holder: 'me' });
  // @ts-expect-error the row writes are the engine's
  await ledger.takeOver('k', 1, 'me');
  // @ts-expect-error the row writes are the engine's
  await ledger.recordStatus({ key: 'k', seq: 1, status: 'confirmed', at, reason: 'by hand' });
  // @ts-expect-error the row writes are the engine's
  await ledger.raiseAlarm('k', 'abandoned', 'by hand');
  // @ts-expect-error nor on the SQLite back end's class
  await sqlite.recordStatus({ key: 'k', seq: 1, status: 'confirmed', at, reason: 'by hand' });
  // @ts-expect-error nor on the PostgreSQL back end's class
  await postgres.takeOver('k', 1, 'me');
}

export async function opened(): Promise<ActionLedger> {
  return openLedger({ kind: 'sqlite', path: ':memory:' });
}
`;

/** The diagnostics of `code` type-checked as a team's strict project would, `retrysafe/*` resolving to dist/. */
function diagnosticsOf(code: string, dir: string): string[] {
  const file = path.join(dir, 'team.ts');
  writeFileSync(file, code);
  const paths: Record<string, string[]> = {};
  for (const { name, types } of builtEntryPoints()) paths[name] = [types];
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    esModuleInterop: true,
    noEmit: true,
    // The declarations' own soundness is the consumer test's (tsc without skipLibCheck); this reads what they say.
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
    baseUrl: dir,
    paths,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === file || !d.file)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the built declarations, as a team type-checks against them', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'retrysafe-built-types-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('give a ledger its reads, and none of the row writes (each @ts-expect-error is needed)', () => {
    assert.deepEqual(diagnosticsOf(TEAM_CODE, dir), []);
  });

  it('would report a write a team calls (the check above can fail)', () => {
    const unchecked = TEAM_CODE.replace(/^\s*\/\/ @ts-expect-error .*$/gm, '');
    const errors = diagnosticsOf(unchecked, dir);
    assert.equal(errors.length, 7, errors.join('\n'));
    for (const error of errors)
      assert.match(
        error,
        /^Property '(recordClaim|claimRow|takeOver|recordStatus|raiseAlarm)' does not exist on type '(ActionLedger|SqliteLedger|PostgresLedger)'/,
      );
  });
});
