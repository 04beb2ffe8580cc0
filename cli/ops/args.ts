/**
 * Argument parsing for the `retrysafe` command's subcommands: commander reads the argv against each command's
 * flags, and one zod schema per command checks the raw strings, so that every message names the argument the
 * operator typed (`--status: …`, `KEY: …`). Nothing here talks to Temporal.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { z } from 'zod';
import { parseActionKey, runWorkflowId } from '../../policies/action-key';
import { ACTION_STATUSES, type ActionStatus } from '../../policies/action-status';
import { UsageError } from './errors';

export interface FlagSpec {
  type: 'string' | 'boolean';
  /** A string flag that may be given several times; its values are collected in order. */
  multiple?: boolean;
}
export type FlagSpecs = Record<string, FlagSpec>;
export type RawFlags = Record<string, string | boolean | string[]>;

export interface ParsedArgv {
  flags: RawFlags;
  positionals: string[];
  help: boolean;
}

/**
 * Reads argv with commander against `specs`: `--name value` and `--name=value`, repeated values collected for
 * `multiple` flags, `--` ends the flags, `-h`/`--help` anywhere. Refused with a UsageError naming the flag: an
 * unknown one (listing the known ones), a value missing (at the end, or where the next word is another flag: write
 * `--reason=--text` for a value that starts with dashes), a single-valued flag given twice, a value given to a switch.
 */
export function parseArgv(argv: readonly string[], specs: FlagSpecs): ParsedArgv {
  const known = Object.keys(specs).map((n) => `--${n}`);
  const endOfFlags = argv.indexOf('--');
  const flagPart = endOfFlags === -1 ? argv : argv.slice(0, endOfFlags);
  flagPart.forEach((token, i) => {
    const name = token.startsWith('--') && !token.includes('=') ? token.slice(2) : undefined;
    if (name === undefined || specs[name]?.type !== 'string') return;
    const next = flagPart[i + 1];
    if (next !== undefined && next.startsWith('--') && next.length > 2)
      throw new UsageError(`--${name}: needs a value`);
  });
  const command = new Command()
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .helpOption(false)
    .allowExcessArguments(true)
    .argument('[positionals...]')
    .addOption(new Option('-h, --help'));
  const attribute = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    const option =
      spec.type === 'boolean'
        ? new Option(`--${name}`)
        : new Option(`--${name} <value>`).argParser((value: string, previous: unknown) => {
            if (spec.multiple) return [...((previous as string[] | undefined) ?? []), value];
            if (previous !== undefined) throw new InvalidArgumentError('given more than once');
            return value;
          });
    command.addOption(option);
    attribute.set(name, option.attributeName());
  }
  try {
    command.parse([...argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    throw new UsageError(usageMessage(err, argv, specs, known));
  }
  const opts = command.opts<Record<string, string | boolean | string[]>>();
  const flags: RawFlags = {};
  for (const [name, attr] of attribute) if (opts[attr] !== undefined) flags[name] = opts[attr];
  return { flags, positionals: command.processedArgs[0] as string[], help: opts.help === true };
}

/** Commander's refusal as one line that starts with the flag's name. */
function usageMessage(err: CommanderError, argv: readonly string[], specs: FlagSpecs, known: string[]): string {
  const flag = /'(-[^' <]+)/.exec(err.message)?.[1] ?? 'arguments';
  switch (err.code) {
    case 'commander.unknownOption': {
      const [name] = flag.split('=');
      if (flag.includes('=') && specs[name.slice(2)]?.type === 'boolean')
        return `${name}: is a switch and takes no value`;
      if (!flag.startsWith('--')) return `${flag}: unknown option (options are spelled --name)`;
      return `${name}: unknown option${known.length ? `; this command takes ${known.join(', ')}` : ''}`;
    }
    case 'commander.optionMissingArgument':
      return `${flag}: needs a value`;
    case 'commander.invalidArgument':
      return `${flag}: ${err.message.replace(/^.*is invalid\.\s*/s, '')}`;
    default:
      return `${flag === 'arguments' ? argv.join(' ') : flag}: ${err.message.replace(/^error: /, '')}`;
  }
}

/**
 * Validates raw input with a schema whose keys are flag names (`older-than`) or upper-case positional
 * names (`KEY`), and turns the first issue into a UsageError naming that argument.
 */
export function validateArgs<S extends z.ZodType>(schema: S, raw: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const head = issue.path[0];
  const name = typeof head === 'string' ? (/^[A-Z_]+$/.test(head) ? head : `--${head}`) : 'arguments';
  throw new UsageError(`${name}: ${issue.message}`);
}

/** Positionals beyond the ones a command takes are a mistake (often an unquoted --reason), not ignored. */
export function expectPositionals(positionals: string[], names: readonly string[]): Record<string, string | undefined> {
  if (positionals.length > names.length) {
    const extra = positionals.slice(names.length).map((p) => JSON.stringify(p));
    throw new UsageError(`unexpected argument ${extra.join(' ')} (quote values that contain spaces)`);
  }
  return Object.fromEntries(names.map((n, i) => [n, positionals[i]]));
}

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `10m`, `2h`, `1d` → milliseconds. Returns undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]*)([smhd])$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

// ── field schemas shared by the commands ──

const required = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `is required (${what})` : `must be ${what}`),
});

export const durationArg = z.string(required('a duration like 10m, 2h or 1d')).transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a duration like 90s, 10m, 2h or 1d, got ${JSON.stringify(text)}`,
    });
    return z.NEVER;
  }
  return ms;
});

/** Repeated and/or comma-separated statuses, checked against the effect status machine's list. */
export const statusesArg = z.array(z.string()).transform((values, ctx) => {
  const out: ActionStatus[] = [];
  for (const value of values.flatMap((v) => v.split(',')).map((v) => v.trim())) {
    if (!(ACTION_STATUSES as readonly string[]).includes(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(value)} is not a status; use one of ${ACTION_STATUSES.join(', ')}`,
      });
      return z.NEVER;
    }
    if (!out.includes(value as ActionStatus)) out.push(value as ActionStatus);
  }
  return out;
});

export const limitArg = (max: number) =>
  z.string(required(`a whole number from 1 to ${max}`)).transform((text, ctx) => {
    const n = /^[0-9]+$/.test(text) ? Number(text) : NaN;
    if (!(n >= 1 && n <= max)) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return n;
  });

/** Tenants follow the action-key part rules; reuse them rather than restate them. */
export const tenantArg = z.string(required('a tenant id')).superRefine((tenant, ctx) => {
  try {
    runWorkflowId(tenant, 'probe');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^tenant /, '') });
  }
});

export const actionKeyArg = z
  .string(required('an action key like charge:v1:acme:renewal-2026-08-28-01'))
  .superRefine((key, ctx) => {
    try {
      parseActionKey(key);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

export const jsonSwitch = z.boolean().default(false);

/** A tool name, as `--operation` takes it. */
export const operationArg = z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, {
  error: (i) => `must be a tool name (lower-case letters, digits, "-"), got ${JSON.stringify(i.input)}`,
});
