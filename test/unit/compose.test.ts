import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { parse } from 'yaml';
import { z } from 'zod';

import { ledgerChoiceFromEnv } from '../../ledger';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import { parseOperators } from '../../policies/operators';
import { approvalKeyId, approvalPublicKey, parseTrustedApprovalKeys } from '../../policies/signed-decision';
import { PROVIDER_KINDS } from '../../examples/sandbox-providers/types';
import {
  CLUSTER_DATABASES,
  DYNAMIC_CONFIG_FILE,
  HISTORY_SHARDS,
  NAMESPACE_RETENTION_HOURS,
  SQL_PLUGIN,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_VERSION,
  TESTED_POSTGRES_MAJOR,
  schemaSteps,
} from '../../scripts/lib/cluster-config';
import { resolveCompose, type ResolvedCompose } from '../../scripts/toolchain/resolve-compose';
import { ToolchainError } from '../../cli/toolchain/toolchain-error';
import { tokenSha256 } from '../../workers/bearer-tokens';

const ROOT = path.resolve(__dirname, '..', '..');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');

// Only the parts of the Compose spec this file uses, in the forms it uses them (maps, not lists, for environment
// and depends_on), so a drift in form fails here with the field named.
const Service = z.object({
  image: z.string(),
  command: z.union([z.string(), z.array(z.string())]).optional(),
  entrypoint: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).default({}),
  depends_on: z
    .record(
      z.string(),
      z.object({ condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']) }),
    )
    .default({}),
  volumes: z.array(z.string()).default([]),
  ports: z.array(z.string()).default([]),
  healthcheck: z.looseObject({ test: z.array(z.string()).min(2) }).optional(),
});
type Service = z.infer<typeof Service>;
const ComposeFile = z.object({
  name: z.string(),
  services: z.record(z.string(), Service),
  volumes: z.record(z.string(), z.null()).default({}),
});

function loadCompose(): z.infer<typeof ComposeFile> {
  const raw: unknown = parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true });
  const parsed = ComposeFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    assert.fail(`docker-compose.yml does not have the expected shape:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

const compose = loadCompose();

function service(name: string): Service {
  const found = compose.services[name];
  assert.ok(found, `docker-compose.yml has no service "${name}"`);
  return found;
}

function words(command: Service['command']): string[] {
  if (command === undefined) return [];
  return typeof command === 'string' ? command.split(/\s+/).filter((word) => word !== '') : command;
}

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
}

/** The tag of `image` when it is `<repository>:<tag>`, else undefined. */
function tagOf(image: string, repository: string): string | undefined {
  return image.startsWith(`${repository}:`) ? image.slice(repository.length + 1) : undefined;
}

/** `${NAME:-}` substituted from `values` (empty when absent), as Compose does before a container sees it. */
function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{(\w+):-\}/g, (_m, name: string) => values[name] ?? '');
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'retrysafe-compose-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** An executable shell script in the scratch folder. */
function script(relative: string, body: string): string {
  const file = path.join(scratch, relative);
  spawnSync('mkdir', ['-p', path.dirname(file)]);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A PATH with `dir` first, then the system's tools and this node. */
function pathWith(dir: string): string {
  return [dir, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter);
}

describe('docker-compose.yml', () => {
  it('declares Temporal, its database, setup, Web UI, one service per sandbox provider, the webhook router, the approval service and the worker', () => {
    const expected = [
      'postgresql',
      'temporal-schema',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'app-install',
      'webhooks',
      'approvals',
    ];
    assert.deepEqual(Object.keys(compose.services).sort(), [...expected, ...PROVIDER_KINDS, 'worker'].sort());
  });

  it("sends every provider's webhooks to the webhook router, which listens on all interfaces", () => {
    for (const kind of PROVIDER_KINDS) {
      assert.match(
        String(words(service(kind).command).join(' ')),
        /--webhook-url http:\/\/webhooks:4200\/webhooks/,
        kind,
      );
    }
    assert.deepEqual(words(service('webhooks').command), ['npm', 'run', 'webhooks']);
    assert.equal(service('webhooks').environment.RETRYSAFE_WEBHOOK_HOST, '0.0.0.0');
  });

  it('has each provider sign on its own path with its own secret, which the router holds under its name', () => {
    const routerSecrets = service('webhooks').environment.RETRYSAFE_WEBHOOK_SECRETS;
    assert.ok(routerSecrets, 'the router needs RETRYSAFE_WEBHOOK_SECRETS');
    // Compose substitutes ${VAR:-} before the router reads it; the JSON must hold for any hex secret.
    const substituted = routerSecrets.replace(/\$\{(\w+):-\}/g, (_m, name: string) => `whsec_${name.toLowerCase()}`);
    const table = z.record(z.string(), z.array(z.string())).parse(JSON.parse(substituted));
    assert.deepEqual(Object.keys(table).sort(), [...PROVIDER_KINDS].sort());
    for (const kind of PROVIDER_KINDS) {
      const provider = service(kind);
      assert.equal(flag(words(provider.command), '--webhook-url'), `http://webhooks:4200/webhooks/${kind}`);
      const secretVar = `RETRYSAFE_${kind.toUpperCase()}_WEBHOOK_SECRET`;
      assert.equal(provider.environment.RETRYSAFE_SANDBOX_WEBHOOK_SECRET, `\${${secretVar}:-}`, kind);
      assert.deepEqual(
        table[kind],
        [`whsec_${secretVar.toLowerCase()}`, `whsec_${secretVar.toLowerCase()}_previous`],
        `the router holds ${kind}'s secret and an optional previous one (rotation)`,
      );
      assert.ok(!words(provider.command).some((w) => w.includes('secret')), 'no secret on a command line');
    }
    const generator = spawnSync('sh', [path.join(ROOT, 'deploy/webhook-secrets.sh')], { encoding: 'utf8' });
    assert.equal(generator.status, 0, generator.stderr);
    const lines = generator.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((l) => l.split('=')[0]).sort(),
      PROVIDER_KINDS.map((k) => `RETRYSAFE_${k.toUpperCase()}_WEBHOOK_SECRET`).sort(),
    );
    for (const line of lines) assert.match(line, /=whsec_[0-9a-f]{64}$/);
  });

  it(`persists Temporal in PostgreSQL ${TESTED_POSTGRES_MAJOR} on a named volume`, () => {
    const postgresql = service('postgresql');
    assert.ok(postgresql.volumes.includes('postgresql-data:/var/lib/postgresql/data'));
    assert.ok('postgresql-data' in compose.volumes, 'the postgresql-data volume must be declared');
    assert.ok(postgresql.healthcheck, 'postgresql needs a healthcheck for depends_on conditions');

    const env = service('temporal').environment;
    assert.equal(env.POSTGRES_SEEDS, 'postgresql');
    assert.equal(env.POSTGRES_USER, postgresql.environment.POSTGRES_USER);
    assert.equal(env.POSTGRES_PWD, postgresql.environment.POSTGRES_PASSWORD);
    const schema = service('temporal-schema').environment;
    assert.equal(schema.POSTGRES_SEEDS, 'postgresql');
    assert.equal(schema.POSTGRES_USER, postgresql.environment.POSTGRES_USER);
    assert.equal(schema.SQL_PASSWORD, postgresql.environment.POSTGRES_PASSWORD);
  });

  it('orders startup: schema before server, setup once the server answers, setup before everything that uses Temporal', () => {
    const condition = (from: string, to: string) => service(from).depends_on[to]?.condition;
    assert.equal(condition('temporal-schema', 'postgresql'), 'service_healthy');
    assert.equal(condition('temporal', 'temporal-schema'), 'service_completed_successfully');
    // The server has no healthcheck: temporal-setup starts with it and waits until the frontend answers.
    assert.equal(condition('temporal-setup', 'temporal'), 'service_started');
    for (const dependent of ['temporal-ui', 'webhooks', 'approvals', 'worker']) {
      assert.equal(condition(dependent, 'temporal-setup'), 'service_completed_successfully', dependent);
    }
    assert.equal(condition('worker', 'approvals'), 'service_healthy', 'the worker reads the operators file it makes');
    for (const name of ['webhooks', 'approvals', 'worker', ...PROVIDER_KINDS]) {
      assert.equal(condition(name, 'app-install'), 'service_completed_successfully', name);
    }
    for (const kind of PROVIDER_KINDS) {
      assert.equal(condition('worker', kind), 'service_healthy', `worker should wait for ${kind}`);
    }
    for (const [name, { depends_on }] of Object.entries(compose.services)) {
      for (const [target, { condition: wanted }] of Object.entries(depends_on)) {
        assert.ok(compose.services[target], `${name} depends on unknown service ${target}`);
        if (wanted === 'service_healthy')
          assert.ok(service(target).healthcheck, `${name} waits for ${target}'s health`);
      }
    }
  });

  it('probes health without nc: the server has no healthcheck, and temporal-setup waits with the Temporal CLI', () => {
    for (const [name, { healthcheck }] of Object.entries(compose.services)) {
      if (!healthcheck) continue;
      const probe = healthcheck.test.slice(1).join(' ');
      assert.doesNotMatch(probe, /(^|[\s/])nc\s/, `${name}'s healthcheck relies on nc`);
    }
    assert.equal(service('temporal').healthcheck, undefined);
    const setup = service('temporal-setup');
    assert.deepEqual(setup.entrypoint, ['/bin/sh', '/retrysafe/temporal-setup.sh']);
    assert.ok(setup.volumes.includes('./deploy/temporal-setup.sh:/retrysafe/temporal-setup.sh:ro'));
    const text = readFileSync(path.join(ROOT, 'deploy/temporal-setup.sh'), 'utf8');
    assert.match(text, /^retry temporal operator cluster health --address "\$TEMPORAL_ADDRESS"/m);
  });

  it('mounts the dynamic config of `npm run cluster`, which keeps updates enabled', () => {
    const temporal = service('temporal');
    const mounts = temporal.volumes.filter((volume) => volume.includes('dynamicconfig'));
    assert.equal(mounts.length, 1, 'temporal mounts one dynamic config file');
    const [source, target] = mounts[0].split(':');
    assert.equal(path.resolve(ROOT, source), DYNAMIC_CONFIG_FILE, 'the compose file and the cluster use one file');
    assert.equal(
      path.posix.resolve('/etc/temporal', temporal.environment.DYNAMIC_CONFIG_FILE_PATH),
      target,
      'DYNAMIC_CONFIG_FILE_PATH names the mounted file (the image works in /etc/temporal)',
    );

    const dynamicConfig = z
      .record(z.string(), z.array(z.object({ value: z.unknown() })))
      .parse(parse(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8')));
    assert.equal(dynamicConfig['frontend.enableUpdateWorkflowExecution']?.[0]?.value, true);
  });

  it(`runs Temporal ${TEMPORAL_SERVER_VERSION} and UI ${TEMPORAL_UI_VERSION}, as \`npm run cluster\` does`, () => {
    assert.equal(tagOf(service('temporal').image, 'temporalio/server'), TEMPORAL_SERVER_VERSION);
    for (const name of ['temporal-schema', 'temporal-setup']) {
      assert.equal(tagOf(service(name).image, 'temporalio/admin-tools'), TEMPORAL_SERVER_VERSION, name);
    }
    assert.equal(tagOf(service('temporal-ui').image, 'temporalio/ui'), TEMPORAL_UI_VERSION);
    const postgresTag = tagOf(service('postgresql').image, 'postgres');
    assert.ok(postgresTag, `postgresql runs ${service('postgresql').image}, not the postgres image`);
    assert.equal(Number(postgresTag.split('.')[0]), TESTED_POSTGRES_MAJOR, `postgres:${postgresTag}'s major`);
  });

  it(`gives the server ${HISTORY_SHARDS} history shards and the SQL plugin of \`npm run cluster\``, () => {
    const env = service('temporal').environment;
    assert.equal(env.NUM_HISTORY_SHARDS, String(HISTORY_SHARDS));
    assert.equal(env.DB, SQL_PLUGIN);
  });

  it('creates the schemas with exactly the SQL tool steps of `npm run cluster`', () => {
    const schema = service('temporal-schema');
    assert.deepEqual(schema.entrypoint, ['/bin/sh', '/retrysafe/temporal-schema.sh']);
    assert.ok(schema.volumes.includes('./deploy/temporal-schema.sh:/retrysafe/temporal-schema.sh:ro'));
    // The script runs against a stand-in temporal-sql-tool that logs its arguments (tab-separated, one call a line),
    // with the service's own environment: what it would run in the container, without a database.
    const bin = path.join(scratch, 'sql-tool-bin');
    const log = path.join(scratch, 'sql-tool.log');
    script(
      'sql-tool-bin/temporal-sql-tool',
      `{ for arg in "$@"; do printf '%s\\t' "$arg"; done; echo; } >> "$SQL_TOOL_LOG"`,
    );
    const run = spawnSync('sh', [path.join(ROOT, 'deploy/temporal-schema.sh')], {
      encoding: 'utf8',
      env: { PATH: pathWith(bin), SQL_TOOL_LOG: log, ...schema.environment },
    });
    assert.equal(run.status, 0, run.stderr);
    const calls = readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\t').slice(0, -1));
    const expected = CLUSTER_DATABASES.flatMap(({ database, schemaName }) => schemaSteps(database, schemaName));
    assert.equal(calls.length, expected.length, `the script ran the tool ${calls.length} times:\n${calls.join('\n')}`);
    const connection = calls[0].slice(0, calls[0].length - expected[0].length);
    calls.forEach((call, i) => {
      assert.deepEqual(call, [...connection, ...expected[i]], `call ${i + 1}: connection flags, then the step`);
    });
    assert.equal(flag(connection, '--plugin'), SQL_PLUGIN);
    assert.equal(flag(connection, '--ep'), 'postgresql');
    assert.equal(flag(connection, '-p'), schema.environment.DB_PORT);
    assert.equal(flag(connection, '-u'), service('postgresql').environment.POSTGRES_USER);
  });

  it(`registers exactly the search attributes of policies/search-attributes.ts, with ${NAMESPACE_RETENTION_HOURS} h of retention`, () => {
    const setup = service('temporal-setup');
    const registered = setup.environment.RETRYSAFE_SEARCH_ATTRIBUTES.split(/\s+/).filter((word) => word !== '');
    const expected = SEARCH_ATTRIBUTE_REGISTRATIONS.map(({ name, type }) => `${name}=${type}`);
    assert.deepEqual([...registered].sort(), [...expected].sort());
    // SQL visibility (PostgreSQL here) has a fixed number of columns per type.
    const count = (type: string) => SEARCH_ATTRIBUTE_REGISTRATIONS.filter((sa) => sa.type === type).length;
    assert.ok(count('Keyword') <= 10, 'PostgreSQL visibility holds at most 10 custom Keyword attributes');
    assert.ok(count('KeywordList') <= 3, 'PostgreSQL visibility holds at most 3 custom KeywordList attributes');

    const retention = /^(\d+)(d|h)$/.exec(setup.environment.RETENTION);
    assert.ok(retention, `RETENTION ${setup.environment.RETENTION} should look like 7d or 168h`);
    const hours = Number(retention[1]) * (retention[2] === 'd' ? 24 : 1);
    assert.equal(hours, NAMESPACE_RETENTION_HOURS, 'the same retention as `npm run cluster`');
    assert.equal(setup.environment.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(setup.environment.TEMPORAL_NAMESPACE, service('worker').environment.TEMPORAL_NAMESPACE);
  });

  it('runs each sandbox provider on its own port and points the worker at it by service name', () => {
    const worker = service('worker');
    const seenPorts = new Set<string>();
    for (const kind of PROVIDER_KINDS) {
      const provider = service(kind);
      const args = words(provider.command);
      assert.deepEqual(args.slice(0, 3), ['npx', 'tsx', 'examples/sandbox-providers/server.ts'], `${kind} command`);
      assert.equal(flag(args, '--kind'), kind);
      assert.equal(flag(args, '--host'), '0.0.0.0', `${kind} must listen beyond its own loopback`);
      const port = flag(args, '--port');
      assert.ok(port !== undefined && /^\d+$/.test(port), `${kind} needs --port`);
      assert.ok(!seenPorts.has(port), `port ${port} is used twice`);
      seenPorts.add(port);
      assert.deepEqual(provider.ports, [`127.0.0.1:${port}:${port}`]);
      assert.ok(provider.healthcheck?.test.join(' ').includes(`:${port}`), `${kind} healthcheck should probe ${port}`);
      assert.equal(worker.environment[`RETRYSAFE_${kind.toUpperCase()}_URL`], `http://${kind}:${port}`);
    }
  });

  it('runs the worker with npm run worker against temporal:7233', () => {
    const worker = service('worker');
    assert.deepEqual(words(worker.command), ['npm', 'run', 'worker']);
    const scripts = z
      .object({ scripts: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))).scripts;
    assert.ok(scripts.worker, 'package.json needs a "worker" script');
    assert.ok(scripts.approvals, 'package.json needs an "approvals" script');
    assert.equal(worker.environment.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(worker.environment.TEMPORAL_NAMESPACE, 'default');
  });

  it('publishes gRPC on 7233, the Web UI on 8080 and the approval page on 4180', () => {
    assert.deepEqual(service('temporal').ports, ['127.0.0.1:7233:7233']);
    assert.deepEqual(service('temporal-ui').ports, ['127.0.0.1:8080:8080']);
    assert.deepEqual(service('approvals').ports, ['127.0.0.1:4180:4180']);
    assert.equal(service('temporal-ui').environment.TEMPORAL_ADDRESS, 'temporal:7233');
  });

  it("publishes every port on the host's loopback only", () => {
    for (const [name, { ports }] of Object.entries(compose.services)) {
      for (const port of ports) assert.match(port, /^127\.0\.0\.1:\d+:\d+$/, `${name} publishes ${port}`);
    }
  });

  it('pins every image to a full version', () => {
    for (const [name, { image }] of Object.entries(compose.services)) {
      // 1.32.1, 24.19.0-bookworm; PostgreSQL's full versions have two parts (15.18).
      assert.match(image, /^[\w./-]+:v?\d+\.\d+(\.\d+)?(-[\w.-]+)?$/, `${name} image ${image} is not a full version`);
    }
  });

  it('makes an approval key pair and operator that the approval service and the worker agree on', (t) => {
    if (spawnSync('openssl', ['version']).status !== 0)
      return t.skip('no openssl here (deploy/approval-keys.sh needs it)');
    const generator = spawnSync('sh', [path.join(ROOT, 'deploy/approval-keys.sh')], { encoding: 'utf8' });
    assert.equal(generator.status, 0, generator.stderr);
    const dotEnv = Object.fromEntries(
      generator.stdout
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    const privateKey = z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .parse(dotEnv.RETRYSAFE_APPROVAL_SIGNING_KEY);
    const publicKey = approvalPublicKey(privateKey);
    assert.equal(dotEnv.RETRYSAFE_APPROVAL_PUBLIC_KEY, publicKey, 'the public half of the signing key');
    assert.equal(dotEnv.RETRYSAFE_APPROVAL_KEY_ID, approvalKeyId(publicKey), 'the key id `approvals keygen` gives');
    const token = /token[^:]*: ([0-9a-f]{64})$/m.exec(generator.stderr)?.[1];
    assert.ok(token, `the operator's token goes to stderr: ${generator.stderr}`);
    assert.equal(dotEnv.RETRYSAFE_OPERATOR_TOKEN_SHA256, tokenSha256(token));
    assert.ok(!generator.stdout.includes(token), '.env keeps only the digest of the token');

    // What each service gets once Compose has substituted .env.
    const approvals = service('approvals').environment;
    assert.equal(interpolate(approvals.RETRYSAFE_APPROVAL_SIGNING_KEY, dotEnv), privateKey);
    assert.equal(interpolate(approvals.RETRYSAFE_APPROVAL_KEY_ID, dotEnv), dotEnv.RETRYSAFE_APPROVAL_KEY_ID);
    assert.equal(interpolate(approvals.RETRYSAFE_OPERATOR_NAME, dotEnv), dotEnv.RETRYSAFE_OPERATOR_NAME);
    assert.equal(interpolate(approvals.RETRYSAFE_OPERATOR_TOKEN_SHA256, dotEnv), tokenSha256(token));
    const worker = service('worker').environment;
    const trusted = parseTrustedApprovalKeys(JSON.parse(interpolate(worker.RETRYSAFE_APPROVAL_PUBLIC_KEYS, dotEnv)));
    assert.deepEqual(trusted, { [approvalKeyId(publicKey)]: publicKey }, 'the worker trusts exactly that key');
    for (const [name, { environment }] of Object.entries(compose.services)) {
      if (name === 'approvals') continue;
      assert.ok(
        !Object.values(environment).some((value) => value.includes('RETRYSAFE_APPROVAL_SIGNING_KEY')),
        `only the approval service holds the signing key, not ${name}`,
      );
    }
  });

  it('gives the worker its ledger (it does not start without one): a SQLite file on a volume of its own', async () => {
    const worker = service('worker');
    const spec = worker.environment.RETRYSAFE_LEDGER;
    const config = ledgerChoiceFromEnv({ RETRYSAFE_LEDGER: spec }, '/app');
    assert.ok(config.kind === 'sqlite', `a SQLite ledger, got ${spec}`);
    const folder = path.posix.dirname(config.path);
    assert.ok(worker.volumes.includes(`ledger:${folder}`), `the ledger's folder ${folder} is the worker's volume`);
    assert.ok('ledger' in compose.volumes, 'the ledger volume must be declared');
    // The webhook router reads the same file, on the same volume, beside its own install.
    const router = service('webhooks');
    assert.equal(router.environment.RETRYSAFE_LEDGER, spec, "the router reads the worker's ledger");
    assert.ok(router.volumes.includes(`ledger:${folder}`), "the router mounts the ledger's volume");
    assert.ok(router.volumes.includes('app:/app'), 'and keeps the install it runs from');
  });

  it('has the approval service list the .env operator in the operators file the worker reads, and serve on 4180', () => {
    const approvals = service('approvals');
    const worker = service('worker');
    assert.deepEqual(words(approvals.command), ['sh', 'deploy/approval-service.sh']);
    const operatorsFile = approvals.environment.RETRYSAFE_OPERATORS_FILE;
    assert.equal(worker.environment.RETRYSAFE_OPERATORS_FILE, operatorsFile);
    const folder = path.posix.dirname(operatorsFile);
    assert.ok(approvals.volumes.includes(`operators:${folder}`), 'the approval service writes the operators volume');
    assert.ok(worker.volumes.includes(`operators:${folder}:ro`), 'the worker reads it, read-only');
    assert.ok('operators' in compose.volumes, 'the operators volume must be declared');
    for (const node of [approvals, worker]) assert.ok(node.volumes.includes('app:/app'), 'runs from the install');

    // The script, with a stand-in npm that logs what it was asked to run, against a file that already lists
    // another operator (added with `ops operators add`): that one stays, the .env operator is (re)written.
    const bin = path.join(scratch, 'npm-bin');
    const log = path.join(scratch, 'npm.log');
    script('npm-bin/npm', `printf '%s\\n' "$@" > "$NPM_LOG"`);
    const file = path.join(scratch, 'operators', 'operators.json');
    const other = { name: 'alice', tokenSha256: 'a'.repeat(64), tenants: ['acme'], roles: ['approver'] };
    spawnSync('mkdir', ['-p', path.dirname(file)]);
    writeFileSync(file, JSON.stringify({ operators: [other] }));
    const dotEnv = {
      RETRYSAFE_APPROVAL_SIGNING_KEY: '1'.repeat(64),
      RETRYSAFE_APPROVAL_KEY_ID: 'ed25519-0000000000000000',
      RETRYSAFE_OPERATOR_NAME: 'admin',
      RETRYSAFE_OPERATOR_TOKEN_SHA256: 'b'.repeat(64),
    };
    const env = Object.fromEntries(
      Object.entries(approvals.environment).map(([name, value]) => [name, interpolate(value, dotEnv)]),
    );
    const run = (overrides: Record<string, string>) =>
      spawnSync('sh', [path.join(ROOT, 'deploy/approval-service.sh')], {
        encoding: 'utf8',
        env: { ...env, PATH: pathWith(bin), NPM_LOG: log, RETRYSAFE_OPERATORS_FILE: file, ...overrides },
      });
    const served = run({});
    assert.equal(served.status, 0, served.stderr);
    const operators = parseOperators(JSON.parse(readFileSync(file, 'utf8')));
    assert.deepEqual(
      operators.map(({ name, tokenSha256: digest, tenants, roles }) => ({ name, tokenSha256: digest, tenants, roles })),
      [{ name: 'admin', tokenSha256: 'b'.repeat(64), tenants: ['*'], roles: ['approver', 'resolver', 'admin'] }, other],
    );
    const port = approvals.environment.RETRYSAFE_APPROVAL_PORT;
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
      'run',
      'approvals',
      '--',
      'serve',
      '--host',
      '0.0.0.0',
      '--port',
      port,
      '--web-ui-url',
      `http://127.0.0.1:${service('temporal-ui').ports[0].split(':')[1]}`,
    ]);
    assert.deepEqual(approvals.ports, [`127.0.0.1:${port}:${port}`]);
    assert.ok(approvals.healthcheck?.test.join(' ').includes(`:${port}/`), 'the healthcheck probes the page');

    const unset = run({ RETRYSAFE_APPROVAL_SIGNING_KEY: '' });
    assert.notEqual(unset.status, 0, 'no signing key, no approval service');
    assert.match(unset.stderr, /deploy\/approval-keys\.sh/);
  });

  it('mounts only files that exist and shell scripts that parse', () => {
    for (const [name, { volumes }] of Object.entries(compose.services)) {
      for (const volume of volumes.filter((v) => v.startsWith('./'))) {
        const source = path.join(ROOT, volume.split(':')[0]);
        assert.ok(existsSync(source), `${name} mounts ${source}, which does not exist`);
        if (source.endsWith('.sh')) {
          const check = spawnSync('sh', ['-n', source], { encoding: 'utf8' });
          assert.equal(check.status, 0, `${source}: ${check.stderr}`);
        }
      }
    }
    for (const file of ['install-app.sh', 'approval-service.sh', 'approval-keys.sh', 'webhook-secrets.sh']) {
      const check = spawnSync('sh', ['-n', path.join(ROOT, 'deploy', file)], { encoding: 'utf8' });
      assert.equal(check.status, 0, `${file}: ${check.stderr}`);
    }
  });

  it('keeps .env (the approval signing key, the webhook secrets) out of the app volume every Node service mounts', () => {
    const src = mkdtempSync(path.join(scratch, 'src-'));
    const app = mkdtempSync(path.join(scratch, 'app-'));
    for (const [file, text] of [
      ['package.json', '{}'],
      ['.env', 'RETRYSAFE_APPROVAL_SIGNING_KEY=secret'],
      ['.env.local', 'X=1'],
    ]) {
      writeFileSync(path.join(src, file), text);
    }
    // The script as compose runs it, with the container's /src and /app moved here and npm ci left out.
    const script = readFileSync(path.join(ROOT, 'deploy/install-app.sh'), 'utf8')
      .replaceAll('/src', src)
      .replaceAll('/app', app)
      .replace(/^npm ci .*$/m, 'true');
    const ran = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
    assert.ok(existsSync(path.join(app, 'package.json')), 'the checkout is copied');
    assert.equal(existsSync(path.join(app, '.env')), false, '.env must not reach the shared volume');
    assert.equal(existsSync(path.join(app, '.env.local')), false);
    assert.match(readFileSync(path.join(ROOT, '.gitignore'), 'utf8'), /^\.env$/m, '.env is never committed');
  });

  // A Compose v2+ client, if this machine has one or the project's build is cached (never built here:
  // `npm run setup:toolchain -- --compose` builds it). A v1 client does not count, and the skip says why.
  const client: Promise<{ found: ResolvedCompose } | { why: string }> = resolveCompose({ build: false }).then(
    (found) => ({ found }),
    (err: unknown) => {
      const attempts = err instanceof ToolchainError ? err.attempts : [];
      const v1 = attempts.find((attempt) => attempt.includes('Compose v1'));
      const build = '`npm run setup:toolchain -- --compose` builds a v2+ one';
      return { why: v1 ? `only a v1 Compose client here: ${v1}; ${build}` : `no Compose v2+ client here; ${build}` };
    },
  );
  /** Runs the client on the file, with no .env and none of retrysafe's variables, so the result is this file's. */
  function runClient(found: ResolvedCompose, args: string[]) {
    const emptyEnvFile = path.join(scratch, 'empty.env');
    writeFileSync(emptyEnvFile, '');
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(RETRYSAFE_|COMPOSE_|DOCKER_)/.test(name)),
    );
    const [command, ...prefix] = found.command;
    return spawnSync(command, [...prefix, '-f', COMPOSE_FILE, '--env-file', emptyEnvFile, ...args], {
      encoding: 'utf8',
      env,
    });
  }

  it('passes `docker compose config` with a Compose v2+ client', async (t) => {
    const result = await client;
    if (!('found' in result)) return t.skip(result.why);
    t.diagnostic(`${result.found.command.join(' ')} (${result.found.source}, ${result.found.version})`);
    const run = runClient(result.found, ['config', '--quiet']);
    assert.equal(run.status, 0, `${result.found.command.join(' ')} config: ${run.stderr}`);
  });

  it("reads the file as Compose does: the normalized model's images, startup order and loopback ports", async (t) => {
    const result = await client;
    if (!('found' in result)) return t.skip(result.why);
    const run = runClient(result.found, ['config', '--format', 'json']);
    assert.equal(run.status, 0, run.stderr);
    const normalized = z
      .object({
        name: z.string(),
        services: z.record(
          z.string(),
          z.looseObject({
            image: z.string(),
            depends_on: z.record(z.string(), z.looseObject({ condition: z.string() })).optional(),
            ports: z.array(z.looseObject({ host_ip: z.string().optional(), published: z.string() })).optional(),
          }),
        ),
      })
      .parse(JSON.parse(run.stdout));
    assert.equal(normalized.name, compose.name);
    assert.deepEqual(Object.keys(normalized.services).sort(), Object.keys(compose.services).sort());
    for (const [name, found] of Object.entries(normalized.services)) {
      const parsed = service(name);
      assert.equal(found.image, parsed.image, `${name}: Compose and this test read the image alike`);
      assert.deepEqual(
        Object.fromEntries(Object.entries(found.depends_on ?? {}).map(([to, { condition }]) => [to, condition])),
        Object.fromEntries(Object.entries(parsed.depends_on).map(([to, { condition }]) => [to, condition])),
        `${name}: Compose and this test read depends_on alike (merge keys included)`,
      );
      for (const port of found.ports ?? []) {
        assert.equal(port.host_ip, '127.0.0.1', `${name} publishes ${port.published} beyond loopback`);
      }
    }
  });
});
