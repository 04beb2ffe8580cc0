/**
 * `npm run tools-table`: prints the table of the example tools from their registry; with --write, puts it
 * into docs/tools.md between its markers. A unit test fails when the README's copy is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exampleRegistry } from '../examples/tools';
import { TOOLS_TABLE_END, TOOLS_TABLE_START, toolsTable } from './lib/tools-table';

async function main(): Promise<void> {
  const table = toolsTable(exampleRegistry());
  if (!process.argv.includes('--write')) {
    process.stdout.write(`${table}\n`);
    return;
  }
  const file = path.resolve(__dirname, '..', 'docs', 'tools.md');
  const readme = await readFile(file, 'utf8');
  const start = readme.indexOf(TOOLS_TABLE_START);
  const end = readme.indexOf(TOOLS_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`docs/tools.md has no ${TOOLS_TABLE_START} … ${TOOLS_TABLE_END} markers`);
  await writeFile(file, `${readme.slice(0, start + TOOLS_TABLE_START.length)}\n${table}\n${readme.slice(end)}`);
  process.stdout.write('docs/tools.md: tools table written\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
