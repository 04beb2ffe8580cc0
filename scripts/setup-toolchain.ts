// Resolves, and installs when missing, the Temporal CLI (dev server) and the time-skipping test server, so that
// `npm start` and the tests find them without the SDK's own download. Usage: tsx scripts/setup-toolchain.ts [--quiet]
import { parseArgs } from 'node:util';

import type { ResolvedTool } from './toolchain/resolve';
import { resolveTemporalCli, resolveTestServer } from './toolchain/resolve';

function describe(tool: ResolvedTool): string {
  const origin = [tool.source, tool.version].filter((part) => part !== undefined).join(', ');
  return `${tool.name}: ${tool.path ?? '(fetched by the SDK on first use)'} (${origin})`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quiet: { type: 'boolean', default: false } }, strict: true });
  const quiet = values.quiet === true;
  const log = quiet ? undefined : (msg: string) => console.error(msg);
  // One after the other: the installs would otherwise share pip's cache and the machine's two cores.
  const cli = await resolveTemporalCli({ log });
  const testServer = await resolveTestServer({ log });
  if (!quiet) for (const tool of [cli, testServer]) console.log(describe(tool));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
