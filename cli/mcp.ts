/**
 * `retrysafe mcp <transport>`: a team's registered tools as an MCP server, so agents built as MCP clients get keyed,
 * retry-safe side effects. Connects to Temporal with the standard environment (client/connect.ts), or finds the
 * running `retrysafe dev`, and claims actions that the team's workers run; it sends nothing to a provider itself.
 *
 *   retrysafe mcp stdio --tools ./dist/tools.js --tenant acme [--agent claude-desktop]   one local client
 *   retrysafe mcp http --tools ./dist/tools.js --agents-file F [--host 127.0.0.1] [--port 4190]
 *   retrysafe mcp add-agent --agents-file F --name support-bot --tenant acme    prints the token once
 *
 * Over HTTP every request needs an agent's bearer token, and the token's tenant is the one acted for.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { RetrysafeClient } from '../client';
import { ledgerChoiceFromEnv, openLedger } from '../ledger';
import { AgentsFile, newAgentToken, readAgentsFile, tokenSha256, type Agent } from '../adapters/mcp/agent-tokens';
import { startMcpHttp } from '../adapters/mcp/mcp-http';
import { createRetrysafeMcpServer } from '../adapters/mcp/mcp-server';
import { connectClient } from '../client/connect';
import { withStackSettings } from './dev/stack-file';
import { expectPositionals, parseArgv, validateArgs, type FlagSpecs } from './ops/args';
import { OpsError, UsageError } from './ops/errors';
import { isMcpCommand, MCP_COMMANDS, mcpHelp } from './mcp-usage';
import { loadToolsModule, TOOLS_MODULE_ENV } from './tools-module';

const tenant = z.string({ error: 'is required (the tenant the calls act for)' }).regex(/^[a-z0-9][a-z0-9-]{0,39}$/, {
  message: 'must be a tenant ID as action keys spell it (lower-case letters, digits, dashes)',
});
const waitMs = z.coerce.number().int().min(0).max(120_000).default(20_000);
const toolsModule = z.string({
  error: `is required: the module that exports your tools, e.g. ./dist/tools.js (or set ${TOOLS_MODULE_ENV})`,
});
const StdioArgs = z.object({
  tools: toolsModule,
  tenant,
  agent: z.string().min(1).default('stdio'),
  'wait-ms': waitMs,
});
const HttpArgs = z.object({
  tools: toolsModule,
  'agents-file': z.string({ error: 'is required (the agents and their tenants; add one with add-agent)' }),
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65_535).default(4190),
  'wait-ms': waitMs,
  /** Comma-separated `host:port` names clients reach the server by; required beyond loopback. */
  'allowed-hosts': z.string().optional(),
  /** Comma-separated origins whose pages may call it; default the loopback ones. */
  'allowed-origins': z.string().optional(),
});
const list = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
const AddAgentArgs = z.object({
  'agents-file': z.string({ error: 'is required' }),
  name: z.string({ error: 'is required' }),
  tenant,
});

/** `retrysafe mcp …`; the servers keep running after it returns. */
export async function mcpMain(argv: readonly string[]): Promise<number> {
  try {
    await main(argv);
    return 0;
  } catch (err) {
    const code = err instanceof OpsError ? err.exitCode : (err as { name?: string }).name === 'AgentsFileError' ? 2 : 1;
    process.stderr.write(`${(err as Error).message}\n`);
    return code;
  }
}

/** The options every `retrysafe mcp` command reads; each command validates the ones it takes. */
const MCP_FLAGS: FlagSpecs = {
  tools: { type: 'string' },
  tenant: { type: 'string' },
  agent: { type: 'string' },
  'wait-ms': { type: 'string' },
  'agents-file': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'allowed-origins': { type: 'string' },
  name: { type: 'string' },
};

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  const helpText = mcpHelp(argv);
  if (helpText !== undefined) return void process.stdout.write(`${helpText}\n`);
  if (!isMcpCommand(command)) {
    throw new UsageError(
      `${command}: unknown command; commands are ${MCP_COMMANDS.join(', ')}\nsee: retrysafe mcp --help`,
    );
  }
  const { env } = await withStackSettings(process.env);
  const { flags: given, positionals } = parseArgv(rest, MCP_FLAGS);
  expectPositionals(positionals, []);
  const flags = { ...(env[TOOLS_MODULE_ENV] ? { tools: env[TOOLS_MODULE_ENV] } : {}), ...given };
  switch (command) {
    case 'add-agent':
      return addAgent(validateArgs(AddAgentArgs, flags));
    case 'stdio':
      return serveStdio(env, validateArgs(StdioArgs, flags));
    case 'http':
      return serveHttp(env, validateArgs(HttpArgs, flags));
  }
}

/** One local client on stdin and stdout, acting for the tenant given. */
async function serveStdio(env: NodeJS.ProcessEnv, args: z.infer<typeof StdioArgs>): Promise<void> {
  const deps = await connect(env, args.tools);
  const server = createRetrysafeMcpServer({
    ...deps,
    tenant: args.tenant,
    claimant: args.agent,
    waitMs: args['wait-ms'],
  });
  // stdout carries the protocol: everything else goes to stderr.
  await server.connect(new StdioServerTransport());
  process.stderr.write(`retrysafe MCP server on stdio, tenant ${args.tenant}\n`);
}

/** Streamable HTTP for the agents in the agents file, each acting for its own tenant; stops on SIGINT and SIGTERM. */
async function serveHttp(env: NodeJS.ProcessEnv, args: z.infer<typeof HttpArgs>): Promise<void> {
  const file = args['agents-file'];
  await readAgentsFile(file); // a missing or broken file stops the server here, naming the field
  const deps = await connect(env, args.tools);
  const allowedHosts = list(args['allowed-hosts']);
  const allowedOrigins = list(args['allowed-origins']);
  const http = await startMcpHttp({
    host: args.host,
    port: args.port,
    ...(allowedHosts ? { allowedHosts } : {}),
    ...(allowedOrigins ? { allowedOrigins } : {}),
    // Re-read on every request, so an agent added or removed counts at once; a broken file admits nobody.
    agents: () =>
      readAgentsFile(file).catch((err: unknown) => {
        process.stderr.write(`${(err as Error).message}; admitting nobody until it is fixed\n`);
        return [] as Agent[];
      }),
    serverFor: (agent) =>
      createRetrysafeMcpServer({
        ...deps,
        tenant: agent.tenant,
        claimant: agent.name,
        waitMs: args['wait-ms'],
      }),
    log: (line) => void process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify({ event: 'mcp-ready', url: http.url })}\n`);
  const stop = () => void http.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The team's tools (as their worker registers them), the Temporal client and the Web UI's address. */
async function connect(env: NodeJS.ProcessEnv, toolsModule: string) {
  // The tools first: a module that does not load stops the server before it connects to anything.
  const registry = await loadToolsModule(toolsModule, env);
  const { client, namespace } = await connectClient(env);
  // Every claim reads the action's ledger row: without RETRYSAFE_LEDGER (or with `none`) the server stops here.
  const ledger = await openLedger(ledgerChoiceFromEnv(env), { migrate: false });
  const uiUrl = env.RETRYSAFE_WEB_UI_URL;
  return {
    retrysafe: new RetrysafeClient(client, {
      tools: registry,
      ...(env.RETRYSAFE_TASK_QUEUE ? { taskQueue: env.RETRYSAFE_TASK_QUEUE } : {}),
      ledger,
    }),
    registry,
    ...(uiUrl
      ? {
          webUiUrl: (key: string) =>
            `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(key)}`,
        }
      : {}),
  };
}

async function addAgent(args: z.infer<typeof AddAgentArgs>): Promise<void> {
  const file = args['agents-file'];
  let agents: Agent[] = [];
  try {
    await readFile(file);
    agents = await readAgentsFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = newAgentToken();
  const agent = AgentsFile.shape.agents.element.parse({
    name: args.name,
    tenant: args.tenant,
    tokenSha256: tokenSha256(token),
    addedAt: new Date().toISOString(),
  });
  const next = [...agents.filter((a) => a.name !== agent.name), agent];
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  // Written beside and renamed into place: the HTTP server re-reads the file on every request.
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ agents: next }, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
  const replaced = agents.some((a) => a.name === agent.name);
  process.stderr.write(
    `agent ${agent.name} (tenant ${agent.tenant}) ${replaced ? 'given a new token (the old one stops working) in' : 'added to'} ${file}; its token, shown once:\n`,
  );
  process.stdout.write(`${token}\n`);
}
