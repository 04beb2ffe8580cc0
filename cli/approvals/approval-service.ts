/**
 * The approval service: the only holder of the signing key. Operators authenticate with a bearer token
 * (the service stores only its SHA-256) and get back a decision signed for one action key and request
 * hash (or one run), within their tenants and roles; the client then submits it to the workflow, which
 * checks all of it again.
 *
 *   retrysafe approvals keygen                        new signing key pair and key id
 *   retrysafe approvals new-operator --name alice     new operator token and its operators-file entry
 *   retrysafe approvals sign --key K --hash H --decision approve|reject --operator-token T [--ttl-seconds N]
 *   retrysafe approvals serve [--port 4180] [--host 127.0.0.1] [--web-ui-url URL] [--secure-cookies] [--api-only]
 *
 * serve also serves the approval page for people (GET /sign-in, then /queue) unless --api-only is given: it
 * connects to Temporal with the standard environment configuration (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, …) and
 * links each action to the Web UI at --web-ui-url.
 *
 * sign and serve read RETRYSAFE_OPERATORS_FILE (default: the stack folder's, see cli/dev/stack-file.ts),
 * RETRYSAFE_APPROVAL_SIGNING_KEY (default: the local key `retrysafe dev` keeps beside the operators file) and
 * (optionally) RETRYSAFE_APPROVAL_KEY_ID; sign also takes the token from RETRYSAFE_OPERATOR_TOKEN, which keeps it
 * out of the process list. serve decodes payloads at /codec for signed-in operators when payload keys are
 * configured (RETRYSAFE_PAYLOAD_KEYS_FILE, or the stack folder's).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { connectClient } from '../../client/connect';
import { startApprovalServer } from './approval-http';
import { generateApprovalKeyPair } from './approval-keys';
import { createApprovalSigner, hashOperatorToken, loadOperatorsFile, type ApprovalSigner } from './approval-signer';
import { SIGNING_KEY_FILE_NAME, readSigningKeyFile } from '../dev/local-operator';
import { withStackSettings } from '../dev/stack-file';
import { parseArgv } from '../ops/args';
import { operatorsFilePath } from '../ops/operator-auth';
import { UsageError } from '../ops/errors';
import { APPROVALS_COMMANDS, APPROVALS_USAGE, DEFAULT_APPROVAL_PORT, isApprovalsCommand } from './approvals-usage';
import { payloadCodecFromEnv } from '../../codec/codec-config';

const ServiceEnv = z.object({
  RETRYSAFE_APPROVAL_SIGNING_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, {
      error: 'must be the 32-byte hex Ed25519 private key printed by `keygen`',
    })
    .optional(),
  RETRYSAFE_APPROVAL_KEY_ID: z.string().min(1).max(100).optional(),
});

/** `retrysafe approvals …`; `serve` keeps running after it returns. */
export async function approvalsMain(argv: readonly string[]): Promise<number> {
  try {
    await main(argv);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

type Flags = Record<string, string | undefined> & { 'secure-cookies'?: boolean; 'api-only'?: boolean };

async function main(argv: readonly string[]): Promise<void> {
  const { positionals, flags, help } = parseArgv(argv, {
    key: { type: 'string' },
    hash: { type: 'string' },
    decision: { type: 'string' },
    'operator-token': { type: 'string' },
    'ttl-seconds': { type: 'string' },
    name: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'web-ui-url': { type: 'string' },
    'secure-cookies': { type: 'boolean' },
    'api-only': { type: 'boolean' },
  });
  const values = flags as Flags;
  const { env } = await withStackSettings(process.env);
  const [command] = positionals;
  if (command === undefined || command === 'help' || (help && !isApprovalsCommand(command))) {
    const topic = command === 'help' ? positionals[1] : undefined;
    process.stdout.write(`${APPROVALS_USAGE[isApprovalsCommand(topic) ? topic : 'general']}\n`);
    return;
  }
  if (help && isApprovalsCommand(command)) {
    process.stdout.write(`${APPROVALS_USAGE[command]}\n`);
    return;
  }
  switch (command) {
    case 'keygen':
      return keygen();
    case 'new-operator':
      return newOperator(values);
    case 'sign':
      return sign(values, env);
    case 'serve':
      return serve(values, env);
    default:
      throw new UsageError(
        `${command}: unknown command; commands are ${APPROVALS_COMMANDS.join(', ')}\nsee: retrysafe approvals --help`,
      );
  }
}

function keygen(): void {
  const pair = generateApprovalKeyPair();
  print({ keyId: pair.keyId, publicKey: pair.publicKeyHex, privateKey: pair.privateKeyHex });
  process.stderr.write(
    'Give the private key to the approval service only\n' +
      '(RETRYSAFE_APPROVAL_SIGNING_KEY, with RETRYSAFE_APPROVAL_KEY_ID);\n' +
      'workers get { keyId: publicKey } as their trusted approval keys.\n',
  );
}

function newOperator(values: Flags): void {
  if (!values.name) throw new UsageError('new-operator needs --name');
  const token = randomBytes(32).toString('base64url');
  print({
    token,
    entry: {
      name: values.name,
      tokenSha256: hashOperatorToken(token),
      tenants: ['*'],
      roles: ['approver', 'resolver'],
    },
  });
  process.stderr.write(
    'Hand the token to the operator; add only the entry to the operators file (narrow its tenants and roles there).\n',
  );
}

async function sign(values: Flags, env: NodeJS.ProcessEnv): Promise<void> {
  const signer = await signerFromEnv(env);
  const token = values['operator-token'] ?? env.RETRYSAFE_OPERATOR_TOKEN;
  const operator = signer.authenticate(token);
  if (!operator)
    throw new Error('the operator token is not recognized (give --operator-token or RETRYSAFE_OPERATOR_TOKEN)');
  const ttl = values['ttl-seconds'];
  const request = {
    key: values.key,
    requestHash: values.hash,
    decision: values.decision,
    ...(ttl !== undefined ? { ttlSeconds: /^\d+$/.test(ttl) ? Number(ttl) : ttl } : {}),
  };
  try {
    print(signer.sign(operator, request));
  } catch (err) {
    // A refusal of the operator's scope is not a typo: say so, and exit 1 like any refusal.
    if ((err as { code?: string }).code === 'DecisionRejected') {
      throw new Error((err as Error).message);
    }
    // Name the flag, not the JSON field, since that is what the person typed.
    const field = (err as { details?: { field?: string } }).details?.field;
    const flag = { key: '--key', requestHash: '--hash', decision: '--decision', ttlSeconds: '--ttl-seconds' }[
      field ?? ''
    ];
    throw new UsageError(flag ? `${flag}: ${(err as Error).message.replace(/^[^:]+: /, '')}` : (err as Error).message);
  }
}

async function serve(values: Flags, env: NodeJS.ProcessEnv): Promise<void> {
  const host = values.host ?? '127.0.0.1';
  const port = values.port === undefined ? DEFAULT_APPROVAL_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number, got ${values.port}`);
  const webUiUrl = values['web-ui-url'];
  if (webUiUrl !== undefined && !/^https?:\/\/[^/]/.test(webUiUrl))
    throw new UsageError(`--web-ui-url must be an http(s) URL, got ${webUiUrl}`);
  if (values['api-only'] && webUiUrl !== undefined)
    throw new UsageError('--web-ui-url is for the page; drop --api-only');
  const signer = await signerFromEnv(env);
  // The stack's payload keys count when none are configured: the page reads actions through the client, and
  // the codec endpoint decodes for the Web UI.
  const codec = payloadCodecFromEnv(env);
  // The page lists and decides actions, so it needs Temporal; the JSON API alone does not.
  const temporal = values['api-only']
    ? undefined
    : await connectClient(env).catch((err: unknown) => {
        throw new Error(
          `the approval page cannot reach Temporal at ${env.TEMPORAL_ADDRESS ?? 'the configured address'} ` +
            `(${err instanceof Error ? err.message : String(err)}); set TEMPORAL_ADDRESS, or serve only the JSON API ` +
            'with --api-only',
        );
      });
  const server = await startApprovalServer(signer, {
    port,
    host,
    onSigned: (e) => process.stdout.write(`${JSON.stringify({ msg: 'approval signed', ...e })}\n`),
    ...(temporal
      ? {
          temporal: {
            client: temporal.client,
            namespace: temporal.namespace,
            ...(webUiUrl !== undefined ? { webUiUrl } : {}),
          },
        }
      : {}),
    secureCookies: values['secure-cookies'] === true,
    ...(codec ? { codec: { codec, allowedOrigins: webUiUrl !== undefined ? [new URL(webUiUrl).origin] : [] } } : {}),
    onDecoded: (e) => process.stdout.write(`${JSON.stringify({ msg: 'payloads served', ...e })}\n`),
  });
  process.stdout.write(`approval service on ${server.url} (key ${signer.keyId})\n`);
  if (temporal) {
    process.stdout.write(`approval page: ${server.url}/sign-in (Temporal namespace ${temporal.namespace})\n`);
  }
  if (codec) {
    process.stdout.write(
      `codec endpoint: ${server.url}/codec (for signed-in operators${webUiUrl ? `; Web UI ${webUiUrl} allowed` : ''})\n`,
    );
  }
  const stop = () =>
    void server
      .close()
      .then(() => temporal?.connection.close())
      .then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * The signer: the key from RETRYSAFE_APPROVAL_SIGNING_KEY (+ RETRYSAFE_APPROVAL_KEY_ID), else the local one a
 * stack made beside the operators file; the operators file from RETRYSAFE_OPERATORS_FILE, else the ops CLI's
 * default. The file is read again whenever it changes.
 */
async function signerFromEnv(env: NodeJS.ProcessEnv): Promise<ApprovalSigner> {
  const parsed = ServiceEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid approval service configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const operatorsFile = operatorsFilePath(env);
  let privateKeyHex = e.RETRYSAFE_APPROVAL_SIGNING_KEY;
  let keyId = e.RETRYSAFE_APPROVAL_KEY_ID;
  if (privateKeyHex === undefined) {
    const localFile = path.join(path.dirname(operatorsFile), SIGNING_KEY_FILE_NAME);
    const local = await readSigningKeyFile(localFile);
    if (!local) {
      throw new Error(
        'invalid approval service configuration:\n' +
          '  RETRYSAFE_APPROVAL_SIGNING_KEY: must be set (make a key pair with `retrysafe approvals keygen`), ' +
          `or run \`retrysafe dev\` once to create the local key in ${localFile}`,
      );
    }
    process.stderr.write(`signing with the local key in ${localFile} (RETRYSAFE_APPROVAL_SIGNING_KEY is not set)\n`);
    privateKeyHex = local.privateKey;
    keyId ??= local.keyId;
  }
  return createApprovalSigner({
    privateKeyHex,
    ...(keyId !== undefined ? { keyId } : {}),
    operators: await loadOperatorsFile(operatorsFile),
    operatorsFile,
    onReloadError: (message) => process.stderr.write(`approval service: ${message}\n`),
  });
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
