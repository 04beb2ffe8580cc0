/**
 * `ops operators add NAME`: sets up an operator for a demo or a small team. The token is printed
 * once and only its digest is stored, so losing the token means issuing a new one, not recovering it.
 */
import { z } from 'zod';
import { expectPositionals, jsonSwitch, parseArgv, validateArgs } from './args';
import type { OpsCommand } from './context';
import { UsageError } from './errors';
import {
  DEFAULT_OPERATORS_FILE,
  OPERATOR_TOKEN_ENV,
  OPERATORS_FILE_ENV,
  OperatorName,
  DEFAULT_NEW_OPERATOR_SCOPE,
  addOperator,
  operatorsFilePath,
} from './operator-auth';
import { decisionSchemas } from '../../policies/signed-decision';

const FLAGS = {
  json: { type: 'boolean' },
  tenant: { type: 'string', multiple: true },
  role: { type: 'string', multiple: true },
} as const;

export const OperatorsAddArgs = z.object({
  NAME: z
    .string({
      error: (issue) => (issue.input === undefined ? 'is required (the operator’s name, e.g. alice)' : 'must be text'),
    })
    .pipe(OperatorName),
  tenant: z.array(decisionSchemas().OperatorScope.shape.tenants.element).optional(),
  role: decisionSchemas().OperatorScope.shape.roles.optional(),
  json: jsonSwitch,
});

export function parseOperatorsArgs(
  argv: readonly string[],
): { help: true } | ({ help: false; action: 'add' } & z.output<typeof OperatorsAddArgs>) {
  const { flags, positionals, help } = parseArgv(argv, FLAGS);
  if (help) return { help };
  const [action, ...rest] = positionals;
  if (action !== 'add') {
    throw new UsageError(
      action === undefined ? 'SUBCOMMAND: is required (add)' : `SUBCOMMAND: unknown ${JSON.stringify(action)}; use add`,
    );
  }
  return { help, action, ...validateArgs(OperatorsAddArgs, { ...flags, ...expectPositionals(rest, ['NAME']) }) };
}

const USAGE = `Usage: retrysafe ops operators add NAME [--tenant T]... [--role R]... [--json]

Creates operator NAME with a new random token, or gives NAME a new token (the old one stops working).
The token is printed once; the operators file keeps only its SHA-256, with the operator's scope.

  NAME         the name recorded on every decision this operator makes
  --tenant T   a tenant this operator decides for (repeatable; default ${DEFAULT_NEW_OPERATOR_SCOPE.tenants.join(',')}, all)
  --role R     approver, resolver or admin (repeatable; default ${DEFAULT_NEW_OPERATOR_SCOPE.roles.join(', ')})
  --json       print { name, token, file, replaced } as JSON
  -h, --help   this text

The file is ${OPERATORS_FILE_ENV} (default ${DEFAULT_OPERATORS_FILE}).`;

export const operatorsCommand: OpsCommand = {
  name: 'operators',
  summary: 'operators add NAME: issue an operator token (printed once)',
  usage: USAGE,
  async run(argv, ctx) {
    const args = parseOperatorsArgs(argv);
    if (args.help) return ctx.out(USAGE);
    const file = operatorsFilePath(ctx.env);
    // Only what the flags say changes; a new token for an existing operator keeps its scope.
    const scope = { ...(args.tenant ? { tenants: args.tenant } : {}), ...(args.role ? { roles: args.role } : {}) };
    const { token, replaced } = await addOperator(file, args.NAME, ctx.now(), scope);
    if (args.json) return ctx.out(JSON.stringify({ name: args.NAME, token, file, replaced }, null, 2));
    ctx.out(
      [
        `${replaced ? 'gave operator' : 'added operator'} ${args.NAME} a new token in ${file}`,
        '',
        `token (shown once, store it now): ${token}`,
        '',
        `use it with: ${OPERATOR_TOKEN_ENV}=<token> retrysafe ops resolve KEY --decision … --reason "…"`,
      ].join('\n'),
    );
  },
};
