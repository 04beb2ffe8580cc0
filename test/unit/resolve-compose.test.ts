import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  DOCKER_COMPOSE_VERSION,
  composeFolder,
  parseComposeVersion,
  resolveCompose,
} from '../../scripts/toolchain/resolve-compose';
import { fakeExecutable } from '../support/fake-executable';

/**
 * The order a Compose client is found in. PATH and the override point at small shell scripts that answer `version`
 * like the real clients do (the real probe runs them); the Go build is replaced by a fake that leaves one.
 */
describe('resolving a Compose v2+ client: env, the docker plugin or docker-compose on PATH, the cached build, a build', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-resolve-compose-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const executable = fakeExecutable;
  /** A standalone client that reports `version` as Compose `version` does: v2+ with --short, v1 with its own line. */
  const standalone = (file: string, version: string) =>
    executable(
      file,
      Number(version.split('.')[0]) >= 2
        ? `[ "$1 $2" = "version --short" ] && { echo ${version}; exit 0; }\necho "Docker Compose version v${version}"`
        : `echo "docker-compose version ${version}, build unknown"`,
    );
  /** The docker CLI, with a compose plugin of `version`, or without one (as on this project's machines). */
  const docker = (file: string, version?: string) =>
    executable(
      file,
      version
        ? `[ "$1 $2 $3" = "compose version --short" ] && { echo ${version}; exit 0; }\nexit 1`
        : `echo "docker: unknown command: docker $1" >&2\nexit 1`,
    );
  const fakeBuild =
    (calls: string[], version = DOCKER_COMPOSE_VERSION) =>
    async (into: string) => {
      calls.push(into);
      await standalone(path.join(into, 'docker-compose'), version);
    };

  it('reads the version out of what v1, v2 and later clients print', () => {
    assert.equal(parseComposeVersion('2.40.3\n'), '2.40.3');
    assert.equal(parseComposeVersion('Docker Compose version v5.6.0'), '5.6.0');
    assert.equal(parseComposeVersion('docker-compose version 1.29.2, build unknown'), '1.29.2');
    assert.equal(parseComposeVersion('dev'), undefined);
  });

  it('takes RETRYSAFE_DOCKER_COMPOSE first, and refuses one that is missing, v1 or no Compose client', async () => {
    const file = await standalone(path.join(dir, 'env', 'docker-compose'), '2.40.3');
    const bin = path.join(dir, 'env-bin');
    await standalone(path.join(bin, 'docker-compose'), '5.6.0');
    const found = await resolveCompose({ env: { RETRYSAFE_DOCKER_COMPOSE: file, PATH: bin }, projectRoot: dir });
    assert.deepEqual(found, { name: 'docker-compose', command: [file], version: '2.40.3', source: 'env' });

    await assert.rejects(
      resolveCompose({ env: { RETRYSAFE_DOCKER_COMPOSE: path.join(dir, 'missing') }, projectRoot: dir }),
      /RETRYSAFE_DOCKER_COMPOSE=.*missing does not exist/,
    );
    const v1 = await standalone(path.join(dir, 'env', 'compose-v1'), '1.29.2');
    await assert.rejects(
      resolveCompose({ env: { RETRYSAFE_DOCKER_COMPOSE: v1, PATH: bin }, projectRoot: dir }),
      /is Compose 1\.29\.2; Compose v1 predates the Compose Specification: it refuses .*top-level `name:`/,
    );
    const notCompose = await executable(path.join(dir, 'env', 'not-compose'), 'exit 2');
    await assert.rejects(
      resolveCompose({ env: { RETRYSAFE_DOCKER_COMPOSE: notCompose }, projectRoot: dir }),
      /does not answer `version` like a Compose client/,
    );
  });

  it('takes the docker compose plugin, then docker-compose on PATH, when either is v2 or later', async () => {
    const withPlugin = path.join(dir, 'plugin-bin');
    const dockerFile = await docker(path.join(withPlugin, 'docker'), '2.40.3');
    await standalone(path.join(withPlugin, 'docker-compose'), '5.6.0');
    assert.deepEqual(await resolveCompose({ env: { PATH: withPlugin }, projectRoot: dir, build: false }), {
      name: 'docker-compose',
      command: [dockerFile, 'compose'],
      version: '2.40.3',
      source: 'docker-plugin',
    });

    const noPlugin = path.join(dir, 'no-plugin-bin');
    await docker(path.join(noPlugin, 'docker'));
    const standaloneFile = await standalone(path.join(noPlugin, 'docker-compose'), '5.6.0');
    const found = await resolveCompose({ env: { PATH: noPlugin }, projectRoot: dir, build: false });
    assert.deepEqual(found, { name: 'docker-compose', command: [standaloneFile], version: '5.6.0', source: 'path' });
  });

  it("passes over a v1 docker-compose, saying why, and takes the project's cached build instead", async () => {
    const bin = path.join(dir, 'v1-bin');
    await docker(path.join(bin, 'docker'));
    await standalone(path.join(bin, 'docker-compose'), '1.29.2');
    const root = path.join(dir, 'v1-project');
    const refused = resolveCompose({ env: { PATH: bin }, projectRoot: root, build: false });
    await assert.rejects(refused, (err: Error & { attempts?: string[] }) => {
      assert.match(err.message, /no Compose v2\+ client found .*npm run setup:toolchain -- --compose/);
      assert.ok(
        err.attempts?.some((a) => /docker-compose on PATH .* is 1\.29\.2, skipped: Compose v1 .*`name:`/.test(a)),
        `the attempts say why the v1 client was skipped: ${err.attempts?.join('; ')}`,
      );
      assert.ok(err.attempts?.some((a) => /`docker compose` .* reports no Compose version/.test(a)));
      return true;
    });
    const cached = await standalone(path.join(composeFolder(root), 'docker-compose'), DOCKER_COMPOSE_VERSION);
    assert.deepEqual(await resolveCompose({ env: { PATH: bin }, projectRoot: root, build: false }), {
      name: 'docker-compose',
      command: [cached],
      version: DOCKER_COMPOSE_VERSION,
      source: 'project-local',
    });
  });

  it('builds once into .tools/docker-compose-<version>/, then finds the cached build without building', async () => {
    const root = path.join(dir, 'project');
    const calls: string[] = [];
    const lines: string[] = [];
    const built = await resolveCompose({
      env: { PATH: path.join(dir, 'empty-bin') },
      projectRoot: root,
      builder: fakeBuild(calls),
      log: (line) => lines.push(line),
    });
    const folder = composeFolder(root);
    assert.deepEqual(built, {
      name: 'docker-compose',
      command: [path.join(folder, 'docker-compose')],
      version: DOCKER_COMPOSE_VERSION,
      source: 'built',
    });
    assert.equal(calls.length, 1);
    assert.notEqual(calls[0], folder, 'built beside the cache and renamed into place');
    assert.match(lines[0], new RegExp(`building Docker Compose ${DOCKER_COMPOSE_VERSION}`));
    assert.match(lines.at(-1) ?? '', /built Docker Compose .* in \d+ s/);
    assert.deepEqual(await readdir(path.join(root, '.tools')), [path.basename(folder)], 'no staging folder left');
    const again = await resolveCompose({
      env: { PATH: path.join(dir, 'empty-bin') },
      projectRoot: root,
      builder: fakeBuild(calls),
    });
    assert.equal(again.source, 'project-local');
    assert.equal(calls.length, 1, 'the cache is not rebuilt');
  });

  it('leaves no half-filled cache when a build fails or builds the wrong version, and says so', async () => {
    const root = path.join(dir, 'failing');
    const env = { PATH: path.join(dir, 'empty-bin') };
    await assert.rejects(
      resolveCompose({
        env,
        projectRoot: root,
        builder: async (into) => {
          await standalone(path.join(into, 'docker-compose'), DOCKER_COMPOSE_VERSION);
          throw new Error('go build exited 1: no network');
        },
      }),
      /building Docker Compose failed: go build exited 1: no network/,
    );
    await assert.rejects(
      resolveCompose({ env, projectRoot: root, builder: fakeBuild([], '2.0.0') }),
      /the built docker-compose reports version 2\.0\.0, not/,
    );
    assert.deepEqual(await readdir(path.join(root, '.tools')).catch(() => []), []);
  });
});
