import type { ToolRegistry } from 'retrysafe';

/** The tools guide's table of tools, derived from a registry (so it cannot drift from the tools themselves). */
export function toolsTable(registry: ToolRegistry): string {
  const rows = registry.names.map((name) => {
    const t = registry.get(name);
    const limits = Object.entries(t.limits ?? {}).map(([field, { max }]) => `${field} ≤ ${max}`);
    return [
      `\`${name}\``,
      `v${t.version}`,
      t.dedupe,
      t.lookup ? 'yes' : 'no',
      `${t.readAfterWriteLagMs} ms`,
      t.keyRetentionMs === undefined ? '—' : `${t.keyRetentionMs / 3_600_000} h`,
      t.riskClass + (t.riskClassFor ? ' (refined per intent)' : ''),
      limits.join(', ') || '—',
      t.compensation ? `\`${t.compensation.tool}\`` : '—',
    ];
  });
  const head = ['tool', 'key version', 'dedupe', 'lookup', 'read lag', 'key kept', 'risk class', 'limits', 'undone by'];
  return [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export const TOOLS_TABLE_START =
  '<!-- tools-table:start (derived from the example registry: scripts/tools-table.ts) -->';
export const TOOLS_TABLE_END = '<!-- tools-table:end -->';
