import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { parse } from 'yaml';
import { z } from 'zod';

import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import { PROVIDER_KINDS } from '../../examples/sandbox-providers/types';

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

/** Which Compose client can validate the file here, if any (this project's machines have no Docker engine). */
function composeClient(): string[] | undefined {
  for (const candidate of [['docker', 'compose'], ['docker-compose']]) {
    const probe = spawnSync(candidate[0], [...candidate.slice(1), 'version'], { stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

describe('docker-compose.yml', () => {
  it('declares Temporal, its database, setup, Web UI, one service per sandbox provider, the webhook router and the worker', () => {
    const expected = [
      'postgresql',
      'temporal-schema',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'app-install',
      'webhooks',
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

  it('persists Temporal in PostgreSQL 16 on a named volume', () => {
    const postgresql = service('postgresql');
    assert.equal(postgresql.image, 'postgres:16');
    assert.ok(postgresql.volumes.includes('postgresql-data:/var/lib/postgresql/data'));
    assert.ok('postgresql-data' in compose.volumes, 'the postgresql-data volume must be declared');
    assert.ok(postgresql.healthcheck, 'postgresql needs a healthcheck for depends_on conditions');

    const env = service('temporal').environment;
    assert.equal(env.DB, 'postgres12');
    assert.equal(env.POSTGRES_SEEDS, 'postgresql');
    assert.equal(env.POSTGRES_USER, postgresql.environment.POSTGRES_USER);
    assert.equal(env.POSTGRES_PWD, postgresql.environment.POSTGRES_PASSWORD);
    assert.equal(service('temporal-schema').environment.POSTGRES_SEEDS, 'postgresql');
  });

  it('orders startup: schema before server, server before setup and UI, everything before the worker', () => {
    const condition = (from: string, to: string) => service(from).depends_on[to]?.condition;
    assert.equal(condition('temporal-schema', 'postgresql'), 'service_healthy');
    assert.equal(condition('temporal', 'temporal-schema'), 'service_completed_successfully');
    assert.equal(condition('temporal-setup', 'temporal'), 'service_healthy');
    assert.equal(condition('temporal-ui', 'temporal'), 'service_healthy');
    assert.equal(condition('worker', 'temporal'), 'service_healthy');
    assert.equal(condition('worker', 'temporal-setup'), 'service_completed_successfully');
    assert.equal(condition('worker', 'app-install'), 'service_completed_successfully');
    for (const kind of PROVIDER_KINDS) {
      assert.equal(condition('worker', kind), 'service_healthy', `worker should wait for ${kind}`);
      assert.equal(condition(kind, 'app-install'), 'service_completed_successfully');
    }
    for (const [name, { depends_on }] of Object.entries(compose.services)) {
      for (const [target, { condition: wanted }] of Object.entries(depends_on)) {
        assert.ok(compose.services[target], `${name} depends on unknown service ${target}`);
        if (wanted === 'service_healthy')
          assert.ok(service(target).healthcheck, `${name} waits for ${target}'s health`);
      }
    }
  });

  it('mounts the dynamic config that keeps update and update-with-start enabled', () => {
    const temporal = service('temporal');
    const mount = temporal.volumes.find((volume) => volume.startsWith('./deploy/temporal-dynamic-config.yaml:'));
    assert.ok(mount, 'temporal must mount deploy/temporal-dynamic-config.yaml');
    const target = mount.split(':')[1];
    assert.equal(path.posix.join('/etc/temporal', temporal.environment.DYNAMIC_CONFIG_FILE_PATH), target);

    const dynamicConfig = z
      .record(z.string(), z.array(z.object({ value: z.unknown() })))
      .parse(parse(readFileSync(path.join(ROOT, 'deploy/temporal-dynamic-config.yaml'), 'utf8')));
    assert.equal(dynamicConfig['frontend.enableUpdateWorkflowExecution']?.[0]?.value, true);
    assert.equal(dynamicConfig['frontend.enableExecuteMultiOperation']?.[0]?.value, true);
  });

  it('registers exactly the search attributes of policies/search-attributes.ts, with 7 days of retention', () => {
    const setup = service('temporal-setup');
    assert.match(setup.image, /^temporalio\/admin-tools:/);
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
    assert.ok(hours >= 7 * 24, `retention of ${hours} h is under 7 days`);
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
      assert.deepEqual(provider.ports, [`${port}:${port}`]);
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
    assert.equal(worker.environment.TEMPORAL_ADDRESS, 'temporal:7233');
    assert.equal(worker.environment.TEMPORAL_NAMESPACE, 'default');
  });

  it('publishes gRPC on 7233 and the Web UI on 8080', () => {
    assert.deepEqual(service('temporal').ports, ['7233:7233']);
    assert.deepEqual(service('temporal-ui').ports, ['8080:8080']);
    assert.match(service('temporal-ui').image, /^temporalio\/ui:/);
    assert.equal(service('temporal-ui').environment.TEMPORAL_ADDRESS, 'temporal:7233');
  });

  it('pins every image to a tag', () => {
    for (const [name, { image }] of Object.entries(compose.services)) {
      assert.match(image, /^[\w./-]+:[\w.-]+$/, `${name} image ${image} has no tag`);
      assert.doesNotMatch(image, /:latest$/, `${name} image must not float on :latest`);
    }
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
    const install = spawnSync('sh', ['-n', path.join(ROOT, 'deploy/install-app.sh')], { encoding: 'utf8' });
    assert.equal(install.status, 0, install.stderr);
  });

  const client = composeClient();
  it('passes `docker compose config`', { skip: client ? false : 'no Compose client on this machine' }, () => {
    assert.ok(client);
    const run = spawnSync(client[0], [...client.slice(1), '-f', COMPOSE_FILE, 'config', '-q'], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });
});
