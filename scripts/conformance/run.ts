import { UsageError } from '../../cli/ops/errors';
import { formatDuration, probeTool } from './probes';
import { SUBJECTS, subjectByTool } from './subjects';
import { SubjectUnavailable, type ConformanceSubject, type ToolReport } from './types';
import { DEDUPE_CAPABILITIES, type DedupeCapability } from 'retrysafe';

export interface ConformanceOptions {
  /** Tool names, or `all`. */
  tools: readonly string[];
  /** Hold every provider to this contract instead of the tool's declared one. */
  contract?: DedupeCapability;
  horizonBudgetMs: number;
  log: (line: string) => void;
}

/** The subjects `--tool` names, in the order given; `all` is every subject once. */
export function selectSubjects(names: readonly string[]): ConformanceSubject[] {
  if (names.includes('all')) return [...SUBJECTS];
  return [...new Set(names)].map((name) => {
    const subject = subjectByTool(name);
    if (!subject) {
      const known = SUBJECTS.map((s) => s.tool).join(', ');
      throw new UsageError(`--tool: no example tool ${JSON.stringify(name)}; available: ${known}, or all`);
    }
    return subject;
  });
}

/**
 * Starts each subject's provider in turn, probes its tool and stops it. A provider that cannot run here is reported
 * in one line and the others go on; a probe's failure is a row, never a crash of the run.
 */
export async function runConformance(options: ConformanceOptions): Promise<ToolReport[]> {
  const subjects = selectSubjects(options.tools);
  const runTag = `c${Date.now().toString(36)}`;
  const reports: ToolReport[] = [];
  for (const subject of subjects) {
    const started = Date.now();
    options.log(`${subject.tool}: starting ${subject.provider}`);
    let session;
    try {
      session = await subject.start((line) => options.log(`  ${line}`), options.contract);
    } catch (err) {
      if (!(err instanceof SubjectUnavailable)) throw err;
      options.log(`${subject.tool}: skipped, ${err.message}`);
      reports.push({
        tool: subject.tool,
        provider: subject.provider,
        dedupe: options.contract ?? '?',
        unavailable: err.message,
        rows: [],
        durationMs: Date.now() - started,
      });
      continue;
    }
    try {
      // Held to `--contract` when given; a lookup contract on a tool without one is the probe's failed row.
      const dedupe = options.contract ?? session.tool.dedupe;
      const tool = { ...session.tool, dedupe };
      const rows = await probeTool({ ...session, tool }, dedupe, {
        horizonBudgetMs: options.horizonBudgetMs,
        runTag,
        log: options.log,
      });
      reports.push({
        tool: subject.tool,
        provider: `${subject.provider}${session.providerVersion ? ` ${session.providerVersion}` : ''}`,
        dedupe,
        declaredDedupe: session.tool.dedupe,
        rows,
        durationMs: Date.now() - started,
      });
    } finally {
      await session.stop();
    }
  }
  return reports;
}

export function isContract(value: string): value is DedupeCapability {
  return (DEDUPE_CAPABILITIES as readonly string[]).includes(value);
}

/** A tool's table, as `npm run conformance` prints it. */
export function formatReport(report: ToolReport): string {
  const declared = report.declaredDedupe;
  const head = `${report.tool} on ${report.provider} · contract ${report.dedupe}${
    declared && declared !== report.dedupe ? ` (declared ${declared}; --contract)` : ''
  } · ${formatDuration(report.durationMs)}`;
  if (report.unavailable) return `${head}\n  skipped: ${report.unavailable}`;
  const header = { check: 'check', declared: 'declared', observed: 'observed', verdict: 'verdict' };
  const lines = [header, ...report.rows];
  const width = (k: keyof typeof header) => Math.max(...lines.map((l) => l[k].length));
  const [c, d, o] = [width('check'), width('declared'), width('observed')];
  const body = lines.map((l) =>
    `  ${l.check.padEnd(c)}  ${l.declared.padEnd(d)}  ${l.observed.padEnd(o)}  ${l.verdict}`.trimEnd(),
  );
  return [head, ...body].join('\n');
}

export function failedRows(reports: readonly ToolReport[]): number {
  return reports.reduce((n, r) => n + r.rows.filter((row) => row.verdict === 'fail').length, 0);
}
