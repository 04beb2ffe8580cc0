import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { resolveTemporalCli } from '../../cli/toolchain/resolve-temporal';
import { resolveNodeLts } from '../../scripts/toolchain/resolve-node';
import { webhookHeaders } from '../../workers/webhook-signature';
import { walkHelp } from '../support/command-tree';
import { lineFrom } from '../support/process-output';
import { startServerProcess } from '../support/server-process';

/**
 * retrysafe as a team installs it: the package is packed, installed from its tarball into a new project in a
 * temporary folder outside the repository (its dependencies from npm's cache), and used only through what that
 * project can reach: `retrysafe` on its PATH and the package's entry points. The project is test/consumer/project
 * (a worker, a claim script and an approval signer) with the tool and workflow `retrysafe init` writes; it
 * type-checks with `tsc --strict`. A second project is made by `retrysafe init` itself in an `npm init -y` folder.
 * Then `retrysafe dev`, a worker SIGKILLed after the provider committed, and the same action claimed twice: one
 * message at the provider. On the current LTS (24, .tools/) in `npm test`; on the machine's Node.js (20, the oldest
 * the package supports) in `npm run test:long`, where the install compiles better-sqlite3 from source (its prebuilt
 * binaries are on GitHub): about two minutes of the suite's time, so it runs with the long checks.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const PROJECT_FILES = path.join(__dirname, 'project');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));
const lock = readJson('package-lock.json') as { packages: Record<string, { version: string }> };
const pinned = (name: string) => `${name}@${lock.packages[`node_modules/${name}`].version}`;

/** `RETRYSAFE_TEST_CONSUMER_RUNTIMES`: which Node.js the project is installed on, `lts` and/or `machine`. */
const RUNTIMES_ENV = 'RETRYSAFE_TEST_CONSUMER_RUNTIMES';
const RUNTIMES = (process.env[RUNTIMES_ENV] || 'lts').split(',').map((r) => r.trim());
for (const r of RUNTIMES) {
  if (r !== 'lts' && r !== 'machine') throw new Error(`${RUNTIMES_ENV}: ${JSON.stringify(r)} is not lts or machine`);
}

let tarball: string;
let packDir: string;

before(async () => {
  packDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-pack-'));
  // prepack builds dist/ first, as a publish would.
  const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(packed.status, 0, packed.stderr);
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string }>;
  tarball = path.join(packDir, filename);
});
after(async () => {
  if (packDir) await rm(packDir, { recursive: true, force: true });
});

it('packs the built package and its manual: no tests, sources, data, tools or secrets', async () => {
  const listed = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  const files = listed.stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));
  const outsideBuild = files.filter((f) => !/^(dist|docs|deploy)\//.test(f));
  assert.deepEqual(outsideBuild.sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
  // The manual and the files the CHANGELOG names ship: the README's links resolve inside node_modules/retrysafe.
  for (const file of [
    'docs/guarantees.md',
    'deploy/prometheus/retrysafe-rules.yml',
    'deploy/grafana/retrysafe-dashboard.json',
  ])
    assert.ok(files.includes(file), `the tarball ships ${file}`);
  for (const forbidden of [
    /^dist\/(test|examples|scripts)\//,
    /\.tools\//,
    /\.data\//,
    /\.retrysafe\//,
    /(^|\/)\.env/,
  ]) {
    assert.deepEqual(
      files.filter((f) => forbidden.test(f)),
      [],
      `nothing matching ${forbidden}`,
    );
  }
  // TypeScript only as `retrysafe init`'s template: files a team gets to compile, not sources of the package.
  const template = 'dist/cli/init/template/src/';
  assert.ok(files.includes(`${template}worker.ts`), 'the template of retrysafe init ships');
  assert.deepEqual(
    files.filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith(template)),
    [],
    'no TypeScript sources',
  );
  assert.deepEqual(
    files.filter((f) => /\.(sqlite|pem|key|token)$|signing-key|payload-keys\.json|operators\.json/.test(f)),
    [],
  );
  // Every entry point of the exports map is in the tarball, with its declarations.
  const pkg = readJson('package.json') as { exports: Record<string, { types: string; default: string } | string> };
  for (const [entry, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    for (const file of [target.types, target.default])
      assert.ok(files.includes(file.replace(/^\.\//, '')), `${entry}: ${file}`);
  }
  const extract = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-tarball-'));
  try {
    assert.equal(spawnSync('tar', ['-xzf', tarball, '-C', extract]).status, 0);
    const secret = spawnSync('grep', ['-rlE', 'PRIVATE KEY|"privateKey": *"[0-9a-f]{64}"', extract], {
      encoding: 'utf8',
    });
    assert.equal(secret.stdout, '', 'no private key material');
  } finally {
    await rm(extract, { recursive: true, force: true });
  }
  process.stderr.write(`tarball: ${files.length} files\n`);
});

for (const runtime of RUNTIMES as Array<'lts' | 'machine'>) {
  describe(`a team's own project with retrysafe installed from its tarball (Node.js ${runtime === 'machine' ? process.versions.node : 'LTS'})`, () => {
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let nodeMajor: number;
    const procs: ChildProcess[] = [];
    const inProject = (cmd: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
      spawnSync(cmd, args, { cwd: dir, env: { ...env, ...extra }, encoding: 'utf8', timeout: 300_000 });

    before(async () => {
      // Outside the repository: nothing resolves back into its node_modules or its sources.
      dir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-consumer-'));
      assert.ok(!path.relative(ROOT, dir).match(/^[^.]/), 'the project is outside the repository');
      const node = runtime === 'machine' ? process.execPath : (await resolveNodeLts()).path;
      env = {
        ...process.env,
        PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH}`,
        TEMPORAL_CLI: (await resolveTemporalCli()).path!,
        npm_config_update_notifier: 'false',
      };
      for (const name of Object.keys(env)) if (/^(RETRYSAFE_|TEMPORAL_(?!CLI$))/.test(name)) delete env[name];
      nodeMajor = Number(
        spawnSync('node', ['-p', 'process.versions.node'], { env, encoding: 'utf8' }).stdout.split('.')[0],
      );
      assert.equal(nodeMajor, runtime === 'machine' ? Number(process.versions.node.split('.')[0]) : 24);
      for (const file of await readdir(PROJECT_FILES))
        await copyFile(path.join(PROJECT_FILES, file), path.join(dir, file));
      // Its tool and workflow are the ones `retrysafe init` writes (the README's), beside its own worker and scripts.
      for (const file of ['tools.ts', 'workflows.ts'])
        await copyFile(path.join(ROOT, 'cli/init/template/src', file), path.join(dir, file));
      await writeFile(
        path.join(dir, 'package.json'),
        JSON.stringify({
          name: 'team-service',
          version: '1.0.0',
          private: true,
          allowScripts: { 'better-sqlite3': true },
        }),
      );
    });
    after(async () => {
      // Process groups: the dev command's Temporal server goes with it.
      for (const proc of procs) {
        if (proc.exitCode !== null || proc.signalCode !== null) continue;
        try {
          process.kill(proc.spawnargs[0].endsWith('retrysafe') ? -proc.pid! : proc.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it(
      'installs from the tarball, type-checks a tool, a workflow and a worker with tsc --strict, and signs a decision',
      { timeout: 600_000 },
      async () => {
        const deps = [
          tarball,
          ...['@temporalio/client', '@temporalio/worker', '@temporalio/workflow', '@temporalio/common', 'zod'].map(
            pinned,
          ),
          pinned('typescript'),
          pinned('@types/node'),
          // Before Node.js 22.13 the SQLite ledger needs the better-sqlite3 package; from then on node:sqlite.
          ...(nodeMajor < 22 ? [pinned('better-sqlite3')] : []),
        ];
        const started = Date.now();
        const install = inProject('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...deps]);
        assert.equal(install.status, 0, install.stderr);
        const installed = JSON.parse(await readFile(path.join(dir, 'node_modules/retrysafe/package.json'), 'utf8'));
        assert.equal(installed.version, readJson('package.json').version);
        // The package ships no TypeScript sources: Temporal's bundler reads its JavaScript.
        assert.equal(existsSync(path.join(dir, 'node_modules/retrysafe/workflows/action.ts')), false);
        assert.equal(existsSync(path.join(dir, 'node_modules/stripe')), false, 'the examples stay out of the install');
        const tsc = inProject('npx', ['tsc', '-p', '.']);
        assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
        assert.ok(existsSync(path.join(dir, 'dist/worker.js')));
        // Its own approval service signs with Node.js's Ed25519 through signDecisionWith: the bytes signDecision gives.
        const signed = inProject('node', ['dist/sign.js']);
        assert.equal(signed.status, 0, signed.stderr);
        assert.deepEqual(JSON.parse(signed.stdout).same, true, signed.stdout);
        process.stderr.write(
          `consumer (node ${nodeMajor}): install and tsc in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        );
      },
    );

    it('lists its commands with --help and refuses a bad argument in one line, exit 2, before anything starts', () => {
      const help = inProject('npx', ['retrysafe', '--help']);
      assert.equal(help.status, 0, help.stderr);
      for (const command of ['dev', 'ops', 'mcp', 'approvals'])
        assert.match(help.stdout, new RegExp(`^  ${command}\\b`, 'm'));
      const bad = inProject('npx', ['retrysafe', 'dev', '--dir', 'not-made', '--port', 'seven']);
      assert.equal(bad.status, 2);
      assert.equal(bad.stderr.split('\n')[0], 'retrysafe: --port: must be a port number from 0 to 65535, got "seven"');
      assert.equal(existsSync(path.join(dir, 'not-made')), false, 'nothing was started or written');
      // An optional peer the team has not installed is named, not thrown.
      const mcp = inProject('npx', ['retrysafe', 'mcp', 'stdio']);
      assert.equal(mcp.status, 2);
      assert.match(mcp.stderr, /^retrysafe: retrysafe mcp needs the @modelcontextprotocol\/sdk package: npm install/);
    });

    it('answers --help with exit 0 for every command and subcommand, without the optional peers installed', async () => {
      const bin = path.join(dir, 'node_modules/.bin/retrysafe');
      const answers = await walkHelp(async (argv) => ({ argv, ...inProject(bin, argv) }));
      const walked = answers.map((a) => a.argv.slice(0, -1).join(' '));
      for (const command of ['init', 'dev', 'ops show', 'mcp stdio', 'mcp http', 'approvals serve'])
        assert.ok(walked.includes(command), `${command}: ${walked.join(', ')}`);
      for (const a of answers) {
        assert.equal(a.status, 0, `retrysafe ${a.argv.join(' ')}: ${a.stderr}`);
        assert.match(a.stdout, /^Usage: retrysafe /);
      }
    });

    it(
      'posts one message when its worker is SIGKILLed after the provider committed and the action is claimed twice',
      { timeout: 600_000 },
      async () => {
        const chat = await startServerProcess(path.join(ROOT, 'test/byo-tool/chat-server.ts'), ['--lag-ms', '1500']);
        procs.push(chat.proc);
        const stats = async () =>
          (await (await fetch(`${chat.url}/admin/stats`)).json()) as { posts: number; byRef: Record<string, number> };

        // The command itself, not npx: one process, whose SIGINT stops the dev server it started.
        const dev = spawn(
          path.join(dir, 'node_modules/.bin/retrysafe'),
          ['dev', '--port', '0', '--ui-port', 'none', '--approvals-port', '0', '--metrics-port', '0'],
          { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
        );
        procs.push(dev);
        await lineFrom(dev, /Ctrl-C to stop/, 120_000);
        const settings = path.join(dir, '.retrysafe', 'dev.env');
        const devEnv = await readFile(settings, 'utf8');
        for (const name of [
          'TEMPORAL_ADDRESS',
          'RETRYSAFE_PAYLOAD_KEYS_FILE',
          'RETRYSAFE_APPROVAL_PUBLIC_KEYS_FILE',
          'RETRYSAFE_LEDGER',
        ]) {
          assert.match(devEnv, new RegExp(`^${name}=`, 'm'));
        }
        const node = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
          spawn('node', [`--env-file=${settings}`, ...args], {
            cwd: dir,
            env: { ...env, CHAT_URL: chat.url, ...extra },
            stdio: ['ignore', 'pipe', 'pipe'],
          });

        // A worker that cannot read the stack's encrypted payloads says so at start, naming the setting.
        const keyless = spawnSync('node', ['dist/worker.js'], {
          cwd: dir,
          env: { ...env, ...parseEnvFile(devEnv), RETRYSAFE_PAYLOAD_KEYS_FILE: '' },
          encoding: 'utf8',
          timeout: 60_000,
        });
        assert.equal(keyless.status, 2, keyless.stderr);
        assert.match(keyless.stderr.trim().split('\n').at(-1)!, /RETRYSAFE_PAYLOAD_KEYS/);

        const crashing = node(['dist/worker.js'], { RETRYSAFE_CRASH_AT: 'after-commit:post-message' });
        procs.push(crashing);
        await lineFrom(crashing, /worker ready/, 120_000);
        const claimOutput = (proc: ChildProcess) => lineFrom(proc, /^\{/, 180_000).then((line) => JSON.parse(line));
        const first = node(['dist/claim.js', 'action', 'launch-1', 'We are live']);
        procs.push(first);
        const firstAnswer = claimOutput(first);
        const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
          crashing.once('exit', (code, sig) => resolve([code, sig])),
        );
        assert.equal(signal, 'SIGKILL', 'the worker was killed at its crash point');
        assert.equal((await stats()).posts, 1, 'the provider committed before the worker died');

        const recovering = node(['dist/worker.js']);
        procs.push(recovering);
        const claimed = await firstAnswer;
        assert.equal(claimed.status, 'confirmed');
        assert.equal(claimed.key, 'post-message:v1:acme:launch-1');
        const again = await claimOutput(node(['dist/claim.js', 'action', 'launch-1', 'We are live']));
        assert.deepEqual(again, claimed, 'the second claim answers the same action');

        // The workflow step: started twice under its run's ID, one action.
        const run = await claimOutput(node(['dist/claim.js', 'run', 'launch-2', 'Second wave']));
        const rerun = await claimOutput(node(['dist/claim.js', 'run', 'launch-2', 'Second wave']));
        assert.deepEqual([run, rerun], [{ status: 'confirmed' }, { status: 'confirmed' }]);

        const provider = await stats();
        assert.deepEqual(provider.byRef, { 'post-message:v1:acme:launch-1': 1, 'post-message:v1:acme:launch-2': 1 });
        assert.equal(provider.posts, 2, 'one message per action, none resent');

        // The worker serves the metrics at the address retrysafe dev gave it: Temporal's and retrysafe's.
        const metricsAddress = parseEnvFile(devEnv).RETRYSAFE_METRICS_ADDRESS;
        assert.match(metricsAddress ?? '', /^127\.0\.0\.1:\d+$/, 'retrysafe dev gives the worker a metrics address');
        const metrics = await (await fetch(`http://${metricsAddress}/metrics`)).text();
        assert.match(
          metrics,
          /^retrysafe_provider_requests_total\{kind="send",outcome="committed",tool="post-message"\} 1$/m,
        );
        assert.match(metrics, /^retrysafe_executor_attempts_total\{tool="post-message"\} [1-9]/m);
        assert.match(metrics, /^temporal_worker_task_slots_available\{/m);

        // The ops CLI finds this stack from the project folder, on the ports it chose.
        const show = inProject('npx', ['retrysafe', 'ops', 'show', 'post-message:v1:acme:launch-1']);
        assert.equal(show.status, 0, show.stderr);
        assert.match(show.stdout, /^status: +confirmed$/m);
        assert.match(show.stdout, /lookup +found /);

        // The webhook router from the package, beside the same stack: a signed event is taken, a forged one refused.
        const secret = `whsec_${Buffer.from('consumer-webhook-secret-0123456789').toString('base64')}`;
        const router = spawn(path.join(dir, 'node_modules/.bin/retrysafe'), ['webhooks', '--port', '0'], {
          cwd: dir,
          env: { ...env, RETRYSAFE_WEBHOOK_SECRETS: JSON.stringify({ chat: [secret] }) },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
        procs.push(router);
        const listening = JSON.parse(await lineFrom(router, /webhook router listening/, 60_000)) as {
          url: string;
          ledger: boolean;
        };
        assert.equal(listening.ledger, true, "it found the stack's ledger from the project folder");
        const event = {
          id: 'evt_chat_1',
          type: 'message.posted',
          reference: 'post-message:v1:acme:launch-1',
          data: { id: 'msg_1', object: 'message' },
        };
        const raw = JSON.stringify(event);
        const deliver = async (signingSecret: string) => {
          const headers = webhookHeaders(signingSecret, event.id, Math.floor(Date.now() / 1000), raw);
          const res = await fetch(`${listening.url}/chat`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: raw,
          });
          return { status: res.status, body: (await res.json()) as { routed: boolean; reason: string } };
        };
        const forged = await deliver(`whsec_${Buffer.from('not-the-secret-0123456789abcdef').toString('base64')}`);
        assert.equal(forged.status, 401, JSON.stringify(forged.body));
        const signed = await deliver(secret);
        // Verified and answered from the ledger it found: the action is settled, so its outcome stands.
        assert.equal(signed.status, 200, JSON.stringify(signed.body));
        assert.match(signed.body.reason, /^action post-message:v1:acme:launch-1 is settled \(confirmed\)/);

        // Its own tools module, CommonJS and ESM, served by `retrysafe mcp stdio` to the official MCP client.
        const sdk = inProject('npm', [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          pinned('@modelcontextprotocol/sdk'),
        ]);
        assert.equal(sdk.status, 0, sdk.stderr);
        await writeFile(path.join(dir, 'tools.cjs'), "exports.tools = require('./dist/tools.js').tools;\n");
        await writeFile(
          path.join(dir, 'tools.mjs'),
          "import built from './dist/tools.js';\n\nexport default built.tools;\n",
        );
        for (const [module, eventId] of [
          ['./tools.cjs#tools', 'launch-3'],
          ['./tools.mjs', 'launch-4'],
        ]) {
          const transport = new StdioClientTransport({
            command: path.join(dir, 'node_modules/.bin/retrysafe'),
            args: ['mcp', 'stdio', '--tools', module, '--tenant', 'acme'],
            cwd: dir,
            env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
            stderr: 'pipe',
          });
          let serverErr = '';
          transport.stderr?.on('data', (chunk: Buffer) => void (serverErr += chunk.toString()));
          const mcp = new Client({ name: 'consumer-test', version: '1.0.0' });
          await mcp.connect(transport).catch((err: unknown) => assert.fail(`${module}: ${String(err)}\n${serverErr}`));
          assert.equal(mcp.getServerVersion()?.version, readJson('package.json').version, 'the package version');
          const listed = await mcp.listTools();
          assert.deepEqual(
            listed.tools.map((t) => t.name),
            ['post-message'],
            module,
          );
          const called = await mcp.callTool({
            name: 'post-message',
            arguments: { eventId, channel: 'launch', text: `Through ${module}` },
          });
          assert.equal((called.structuredContent as { status?: string }).status, 'confirmed', JSON.stringify(called));
          await mcp.close();
        }
        const afterMcp = (await stats()).byRef;
        assert.deepEqual(
          [afterMcp['post-message:v1:acme:launch-3'], afterMcp['post-message:v1:acme:launch-4']],
          [1, 1],
        );

        recovering.kill('SIGTERM');
        dev.kill('SIGINT');
        await new Promise((resolve) => dev.once('exit', resolve));
        assert.equal(existsSync(path.join(dir, '.retrysafe/stack.json')), false, 'the stack said it stopped');
      },
    );

    it(
      'makes a project with retrysafe init in an npm init -y folder that builds and confirms its action',
      { timeout: 600_000 },
      async () => {
        const initDir = await mkdtemp(path.join(os.tmpdir(), 'retrysafe-init-'));
        const inInit = (cmd: string, args: string[]) =>
          spawnSync(cmd, args, { cwd: initDir, env, encoding: 'utf8', timeout: 300_000 });
        const groups: ChildProcess[] = [];
        try {
          assert.equal(inInit('npm', ['init', '-y']).status, 0);
          // The packages the first project installed from the tarball, as `npm install` would put them here.
          await symlink(path.join(dir, 'node_modules'), path.join(initDir, 'node_modules'), 'dir');
          const bin = path.join(initDir, 'node_modules/.bin/retrysafe');
          const init = inInit(bin, ['init']);
          assert.equal(init.status, 0, init.stderr);
          // It prints commands that say what they run, and this walk runs exactly those.
          const envFile = '--env-file=.retrysafe/dev.env';
          for (const printed of [
            'npx tsc -p .',
            'npx retrysafe dev',
            `node ${envFile} dist/worker.js`,
            `node ${envFile} dist/client.js launch-1 "We are live"`,
          ])
            assert.ok(
              init.stdout.split('\n').some((l) => l.trim().startsWith(printed)),
              `init prints ${printed}`,
            );
          assert.doesNotMatch(init.stdout, /npm run /);
          const build = inInit('npx', ['tsc', '-p', '.']);
          assert.equal(build.status, 0, build.stdout + build.stderr);

          const started = (cmd: string, args: string[]) => {
            const proc = spawn(cmd, args, { cwd: initDir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
            groups.push(proc);
            return proc;
          };
          const dev = started(bin, [
            'dev',
            ...'--port 0 --ui-port none --approvals-port 0 --metrics-port 0'.split(' '),
          ]);
          await lineFrom(dev, /Ctrl-C to stop/, 120_000);
          await lineFrom(started('node', [envFile, 'dist/worker.js']), /worker ready/, 120_000);
          const claimed = inInit('node', [envFile, 'dist/client.js', 'launch-1', 'We are live']);
          assert.equal(claimed.status, 0, claimed.stderr);
          assert.deepEqual(JSON.parse(claimed.stdout.trim().split('\n').at(-1)!), {
            key: 'post-message:v1:acme:launch-1',
            status: 'confirmed',
            providerRef: 'msg_1',
          });
          const run = inInit('node', [envFile, 'dist/client.js', 'launch-2', 'Second wave', '--run']);
          assert.equal(run.status, 0, run.stderr);
          assert.deepEqual(JSON.parse(run.stdout.trim().split('\n').at(-1)!), {
            workflow: 'announce',
            status: 'confirmed',
          });
        } finally {
          for (const proc of groups.reverse()) {
            try {
              process.kill(-proc.pid!, 'SIGINT');
            } catch {
              // gone already
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          for (const proc of groups) {
            try {
              process.kill(-proc.pid!, 'SIGKILL');
            } catch {
              // stopped
            }
          }
          await rm(initDir, { recursive: true, force: true });
        }
      },
    );
  });
}

function parseEnvFile(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
