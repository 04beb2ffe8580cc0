/**
 * `ops queue`: the actions a human may need to act on, oldest first, found through the search
 * attributes every action workflow keeps current (the same query works in the Web UI).
 */
import { z } from 'zod';
import type { ActionListing } from '../../client';
import type { ActionStatus } from '../../policies/action-status';
import {
  durationArg,
  expectPositionals,
  jsonSwitch,
  limitArg,
  operationArg,
  parseArgv,
  statusesArg,
  tenantArg,
  validateArgs,
} from './args';
import type { OpsCommand } from './context';
import { formatAge, renderTable, type Column } from './table';

/** Statuses where the system is waiting on, or may need, a person. */
export const REVIEW_STATUSES: readonly ActionStatus[] = [
  'unknown',
  'needs_review',
  'awaiting_confirmation',
  'compensating',
];
export const DEFAULT_QUEUE_LIMIT = 50;
export const MAX_QUEUE_LIMIT = 1000;
/**
 * Visibility lists newest first and SQL visibility cannot sort, so the oldest actions are only known
 * after reading them all; this caps that read. A queue this long needs filters, not a longer list.
 */
export const QUEUE_SCAN_CAP = 10_000;

const FLAGS = {
  tenant: { type: 'string' },
  status: { type: 'string', multiple: true },
  operation: { type: 'string' },
  'older-than': { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const QueueArgs = z.object({
  tenant: tenantArg.optional(),
  status: statusesArg.optional(),
  operation: operationArg.optional(),
  'older-than': durationArg.optional(),
  limit: limitArg(MAX_QUEUE_LIMIT).optional(),
  json: jsonSwitch,
});

export interface QueueOptions {
  tenant?: string;
  statuses: ActionStatus[];
  operation?: string;
  olderThanMs?: number;
  limit: number;
  json: boolean;
}

export function parseQueueArgs(argv: readonly string[]): QueueOptions & { help: boolean } {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help, statuses: [...REVIEW_STATUSES], limit: DEFAULT_QUEUE_LIMIT, json: false };
  expectPositionals(positionals, []);
  const args = validateArgs(QueueArgs, flags);
  return {
    help,
    tenant: args.tenant,
    statuses: args.status?.length ? args.status : [...REVIEW_STATUSES],
    operation: args.operation,
    olderThanMs: args['older-than'],
    limit: args.limit ?? DEFAULT_QUEUE_LIMIT,
    json: args.json,
  };
}

/** Oldest first; the key breaks ties so the order is stable between runs. */
export function sortOldestFirst(rows: readonly ActionListing[]): ActionListing[] {
  return [...rows].sort((a, b) => a.startTime.getTime() - b.startTime.getTime() || a.key.localeCompare(b.key));
}

export function queueColumns(now: Date): Column<ActionListing>[] {
  return [
    { header: 'key', value: (a) => a.key },
    { header: 'status', value: (a) => a.status },
    { header: 'operation', value: (a) => a.operation },
    { header: 'tenant', value: (a) => a.tenant },
    { header: 'age', value: (a) => formatAge(now.getTime() - a.startTime.getTime()), align: 'right' },
    { header: 'provider ref', value: (a) => a.providerRef ?? '-', maxWidth: 40 },
  ];
}

const USAGE = `Usage: retrysafe ops queue [options]

The review queue, oldest first: actions in ${REVIEW_STATUSES.join(', ')}
unless --status says otherwise.

Options:
  --tenant T          only this tenant
  --status S          only this status; repeat or separate with commas (default: the four above)
  --operation O       only actions of this tool (charge, send-email, …)
  --older-than D      only actions started more than D ago: 90s, 10m, 2h, 1d
  --limit N           show at most N actions (default ${DEFAULT_QUEUE_LIMIT}, at most ${MAX_QUEUE_LIMIT})
  --json              print one JSON array instead of a table
  -h, --help          this text`;

export const queueCommand: OpsCommand = {
  name: 'queue',
  summary: 'list actions that may need a person (unknown, needs_review, …), oldest first',
  usage: USAGE,

  async run(argv, ctx) {
    const opts = parseQueueArgs(argv);
    if (opts.help) return ctx.out(USAGE);
    const client = await ctx.client();
    const listed = await client.listActions({
      status: opts.statuses,
      tenant: opts.tenant,
      operation: opts.operation,
      olderThanMs: opts.olderThanMs,
      limit: QUEUE_SCAN_CAP,
    });
    if (listed.length >= QUEUE_SCAN_CAP) {
      ctx.warn(
        `warning: stopped reading after ${QUEUE_SCAN_CAP} actions; narrow the queue with --tenant, --operation or --older-than`,
      );
    }
    const rows = sortOldestFirst(listed).slice(0, opts.limit);
    const now = ctx.now();
    if (opts.json)
      return ctx.out(
        JSON.stringify(
          rows.map((a) => toJson(a, now)),
          null,
          2,
        ),
      );
    if (rows.length === 0) return ctx.out(`no actions in ${opts.statuses.join(', ')}${describeFilters(opts)}`);
    ctx.out(renderTable(queueColumns(now), rows));
    const more = listed.length > rows.length ? `, showing the oldest ${rows.length} (--limit)` : '';
    ctx.out(`\n${listed.length} action(s) in ${opts.statuses.join(', ')}${describeFilters(opts)}${more}`);
  },
};

function toJson(a: ActionListing, now: Date) {
  return {
    key: a.key,
    status: a.status,
    operation: a.operation,
    tenant: a.tenant,
    providerRef: a.providerRef ?? null,
    running: a.running,
    startTime: a.startTime.toISOString(),
    ageSeconds: Math.max(0, Math.floor((now.getTime() - a.startTime.getTime()) / 1000)),
  };
}

function describeFilters(opts: QueueOptions): string {
  const parts = [
    opts.tenant && `tenant ${opts.tenant}`,
    opts.operation && `operation ${opts.operation}`,
    opts.olderThanMs !== undefined && `older than ${formatAge(opts.olderThanMs)}`,
  ].filter(Boolean);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
