import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { exampleRegistry } from '../../examples/tools';
import { TOOLS_TABLE_END, TOOLS_TABLE_START, toolsTable } from '../../scripts/lib/tools-table';

describe("the tools guide's table of tools", () => {
  it('is the one the example registry derives (npm run tools-table -- --write refreshes it)', () => {
    const readme = readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'tools.md'), 'utf8');
    const start = readme.indexOf(TOOLS_TABLE_START);
    const end = readme.indexOf(TOOLS_TABLE_END);
    assert.ok(start >= 0 && end > start, 'docs/tools.md carries the table markers');
    assert.equal(readme.slice(start + TOOLS_TABLE_START.length, end).trim(), toolsTable(exampleRegistry()));
  });

  it('has one row per registered tool, with its dedupe capability', () => {
    const table = toolsTable(exampleRegistry());
    for (const name of exampleRegistry().names) assert.match(table, new RegExp(`\\| \`${name}\` \\|`));
    assert.match(table, /\| `send-email` \| v1 \| none \| no \|/);
  });
});
