import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  TEMPORAL_SERVER_VERSION,
  resolveTemporalServer,
  temporalServerFolder,
} from '../../scripts/toolchain/resolve-temporal-server';
import { fakeExecutable } from '../support/fake-executable';

/** The order the cluster's server is found in, with the PATH lookup and the Go build replaced by fakes. */
describe('resolving the real Temporal server: env, PATH, the cached build, a build', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-resolve-server-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const executable = fakeExecutable;
  const nowhere = async () => undefined;
  const fakeBuild = (calls: string[]) => async (into: string) => {
    calls.push(into);
    await executable(path.join(into, 'server'));
    await executable(path.join(into, 'sql'));
  };

  it('takes both override variables when set, and refuses one without the other or one that points nowhere', async () => {
    const server = await executable(path.join(dir, 'env', 'server'));
    const sqlTool = await executable(path.join(dir, 'env', 'sql'));
    const env = { RETRYSAFE_TEMPORAL_SERVER: server, RETRYSAFE_TEMPORAL_SQL_TOOL: sqlTool };
    assert.deepEqual(await resolveTemporalServer({ env, projectRoot: dir, lookupOnPath: nowhere }), {
      server,
      sqlTool,
      source: 'env',
    });
    await assert.rejects(
      resolveTemporalServer({ env: { RETRYSAFE_TEMPORAL_SERVER: server }, projectRoot: dir }),
      /set both RETRYSAFE_TEMPORAL_SERVER and RETRYSAFE_TEMPORAL_SQL_TOOL/,
    );
    await assert.rejects(
      resolveTemporalServer({
        env: { ...env, RETRYSAFE_TEMPORAL_SQL_TOOL: path.join(dir, 'missing') },
        projectRoot: dir,
      }),
      /RETRYSAFE_TEMPORAL_SQL_TOOL=.*missing does not exist/,
    );
  });

  it('takes temporal-server and temporal-sql-tool from PATH only as a pair', async () => {
    const onPath = async (binary: string) => path.join('/opt/bin', binary);
    const found = await resolveTemporalServer({ env: {}, projectRoot: dir, lookupOnPath: onPath, build: false });
    assert.deepEqual(found, {
      server: '/opt/bin/temporal-server',
      sqlTool: '/opt/bin/temporal-sql-tool',
      source: 'path',
    });
    const onlyServer = async (binary: string) =>
      binary === 'temporal-server' ? '/opt/bin/temporal-server' : undefined;
    await assert.rejects(
      resolveTemporalServer({ env: {}, projectRoot: dir, lookupOnPath: onlyServer, build: false }),
      /PATH: temporal-sql-tool not found/,
    );
  });

  it('builds once into .tools/temporal-server-<version>/, then finds the cached build without building', async () => {
    const root = path.join(dir, 'project');
    const calls: string[] = [];
    const built = await resolveTemporalServer({
      env: {},
      projectRoot: root,
      lookupOnPath: nowhere,
      builder: fakeBuild(calls),
    });
    const folder = temporalServerFolder(root);
    assert.equal(built.source, 'built');
    assert.equal(built.version, TEMPORAL_SERVER_VERSION);
    assert.equal(built.server, path.join(folder, 'server'));
    assert.equal(calls.length, 1);
    assert.notEqual(calls[0], folder, 'built beside the cache and renamed into place');
    const again = await resolveTemporalServer({
      env: {},
      projectRoot: root,
      lookupOnPath: nowhere,
      builder: fakeBuild(calls),
    });
    assert.equal(again.source, 'project-local');
    assert.equal(calls.length, 1, 'the cache is not rebuilt');
  });

  it('leaves no half-filled cache when a build fails, and says so', async () => {
    const root = path.join(dir, 'failing');
    await assert.rejects(
      resolveTemporalServer({
        env: {},
        projectRoot: root,
        lookupOnPath: nowhere,
        builder: async (into) => {
          await executable(path.join(into, 'server'));
          throw new Error('go install exited 1: no network');
        },
      }),
      /building the Temporal server failed: go install exited 1: no network/,
    );
    assert.deepEqual(await readdir(path.join(root, '.tools')).catch(() => []), []);
    await assert.rejects(
      resolveTemporalServer({ env: {}, projectRoot: root, lookupOnPath: nowhere, build: false }),
      /no Temporal server found .*npm run setup:toolchain -- --cluster/,
    );
  });
});
