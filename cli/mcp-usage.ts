/**
 * The help of `retrysafe mcp`, apart from the server so that `--help` answers without the MCP SDK installed (an
 * optional peer of the package).
 */
import { TOOLS_MODULE_ENV } from './tools-module';

export const MCP_COMMANDS = ['stdio', 'http', 'add-agent'] as const;
export type McpCommand = (typeof MCP_COMMANDS)[number];

export function isMcpCommand(name: string | undefined): name is McpCommand {
  return (MCP_COMMANDS as readonly (string | undefined)[]).includes(name);
}

const TOOLS_OPTION = `  --tools MODULE[#EXPORT]  the module your worker takes its tools from, built to JavaScript: CommonJS (.js, .cjs)
                           or ESM (.mjs); its \`tools\` export, else its default export, or the export named
                           after #; default $${TOOLS_MODULE_ENV}`;
const CONNECTS =
  'Connects to Temporal with the standard environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, …),\n' +
  'or to the `retrysafe dev` running in this folder. Your worker runs the actions; this server sends nothing itself.';
const WAIT_OPTION =
  '  --wait-ms MS             how long a call waits for the outcome before it answers with the status (default 20000)';

/** `retrysafe mcp --help`, and each command's own. */
const MCP_USAGE = {
  general: `Usage: retrysafe mcp <command> [options]

Your tools as an MCP server for agents: each call claims a keyed action that your worker runs once.

Commands:
  stdio      serve one local MCP client (a desktop app, an IDE) over stdin and stdout
  http       serve agents over Streamable HTTP, each with its bearer token and tenant
  add-agent  add an agent to the agents file of \`mcp http\` and print its token once

Run \`retrysafe mcp <command> --help\` for a command's options.`,
  stdio: `Usage: retrysafe mcp stdio --tools MODULE[#EXPORT] --tenant TENANT [--agent NAME] [--wait-ms MS]

Serves your tools to one MCP client over stdin and stdout, acting for one tenant.

${TOOLS_OPTION}
  --tenant TENANT          the tenant every call acts for
  --agent NAME             who calls, as the actions' audit names it (default stdio)
${WAIT_OPTION}
  -h, --help               this text

${CONNECTS}`,
  http: `Usage: retrysafe mcp http --tools MODULE[#EXPORT] --agents-file FILE [--host 127.0.0.1] [--port 4190]
                          [--wait-ms MS] [--allowed-hosts NAME:PORT,…] [--allowed-origins ORIGIN,…]

Serves your tools over Streamable HTTP. Every request needs an agent's bearer token (add one with
\`retrysafe mcp add-agent\`); the token's tenant is the one the call acts for.

${TOOLS_OPTION}
  --agents-file FILE       the agents, their tenants and their tokens' digests (re-read on every request)
  --host HOST              the address to listen on (default 127.0.0.1)
  --port PORT              the port to listen on (default 4190; 0: any free port)
${WAIT_OPTION}
  --allowed-hosts LIST     comma-separated host:port names clients reach the server by; required beyond loopback
  --allowed-origins LIST   comma-separated origins whose pages may call it (default the loopback ones)
  -h, --help               this text

${CONNECTS}`,
  'add-agent': `Usage: retrysafe mcp add-agent --agents-file FILE --name NAME --tenant TENANT

Adds agent NAME to the agents file (or gives it a new token; the old one stops working) and prints its token once.
The file keeps only the token's SHA-256.

  --agents-file FILE       the file \`retrysafe mcp http --agents-file\` reads (created when missing)
  --name NAME              the agent's name, as the actions' audit names it
  --tenant TENANT          the one tenant this agent acts for
  -h, --help               this text`,
} as const;

/**
 * The help `argv` asks for, or undefined when it asks for none: `mcp`, `mcp --help` and `mcp help` give the list of
 * commands, `mcp help stdio` and `mcp stdio --help` the command's own (flags after `--` are values, not help).
 */
export function mcpHelp(argv: readonly string[]): string | undefined {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') return MCP_USAGE.general;
  if (command === 'help') return isMcpCommand(rest[0]) ? MCP_USAGE[rest[0]] : MCP_USAGE.general;
  const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (isMcpCommand(command) && (flags.includes('--help') || flags.includes('-h'))) return MCP_USAGE[command];
  return undefined;
}
