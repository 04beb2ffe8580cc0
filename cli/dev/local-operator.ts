/**
 * The local operator that `retrysafe dev` sets up on first start, so that approving works in a fresh
 * project: an approval signing key (the approval service's), an operator `demo` for every tenant with
 * every role in the operators file, and that operator's token in a file beside it. All of it lives in
 * the stack folder (.retrysafe/) with mode 0600; a later start reuses it. It is a demo: a real deployment gives
 * each person their own operator (`ops operators add`) and keeps the signing key in the service only.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { approvalKeyId, approvalPublicKey } from '../../policies/signed-decision';
import { readOperatorsFile } from '../../workers/operators-file';
import { DEMO_TOKEN_FILE_NAME, addOperator, findOperator } from '../ops/operator-auth';
import { generateApprovalKeyPair } from '../approvals/approval-keys';

export const DEMO_OPERATOR = 'demo';
export const SIGNING_KEY_FILE_NAME = 'approval-signing-key.json';

/** The signing key file: the private key, its id and public key (the id and public key are what workers trust). */
const SigningKeyFile = z.strictObject({
  keyId: z.string().min(1),
  publicKey: z.string().regex(/^[0-9a-f]{64}$/),
  privateKey: z.string().regex(/^[0-9a-f]{64}$/),
});
export type SigningKeyFile = z.infer<typeof SigningKeyFile>;

/** The stack's local operator (every tenant; approver, resolver, admin): its signing key, its token and their files. */
export interface DemoOperator {
  signingKey: SigningKeyFile;
  signingKeyFile: string;
  operatorsFile: string;
  tokenFile: string;
  token: string;
  /** What was created by this call (nothing on a later start). */
  created: Array<'signing key' | 'operator'>;
  /** What a worker needs to trust this setup. */
  workerEnv: Record<string, string>;
}

/** Reads the signing key file; undefined when it does not exist. Errors name the file. */
export async function readSigningKeyFile(file: string): Promise<SigningKeyFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read the approval signing key: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the file's first characters, which here are key material.
    throw new Error(`${file}: not valid JSON (delete it to have a new key made)`);
  }
  const parsed = SigningKeyFile.safeParse(raw);
  if (!parsed.success || approvalPublicKey(parsed.data.privateKey) !== parsed.data.publicKey) {
    throw new Error(`${file}: not an approval signing key file (delete it to have a new key made)`);
  }
  return parsed.data;
}

/** Creates what is missing of the demo setup in `dataDir`, and returns all of it. */
export async function ensureDemoOperator(dataDir: string, now = new Date()): Promise<DemoOperator> {
  await mkdir(dataDir, { recursive: true });
  const created: DemoOperator['created'] = [];
  const signingKeyFile = path.join(dataDir, SIGNING_KEY_FILE_NAME);
  let signingKey = await readSigningKeyFile(signingKeyFile);
  if (!signingKey) {
    const pair = generateApprovalKeyPair();
    signingKey = {
      keyId: approvalKeyId(pair.publicKeyHex),
      publicKey: pair.publicKeyHex,
      privateKey: pair.privateKeyHex,
    };
    await writeFile(signingKeyFile, `${JSON.stringify(signingKey, null, 2)}\n`, { mode: 0o600 });
    created.push('signing key');
  }

  const operatorsFile = path.join(dataDir, 'operators.json');
  const tokenFile = path.join(dataDir, DEMO_TOKEN_FILE_NAME);
  const saved = await readFile(tokenFile, 'utf8').then(
    (t) => t.trim(),
    () => undefined,
  );
  const operators = (await readOperatorsFile(operatorsFile)) ?? [];
  const listed = saved ? findOperator(operators, saved) : undefined;
  let token = saved;
  if (!token || listed?.name !== DEMO_OPERATOR) {
    // No token, or one the file no longer lists (the file was edited or replaced): issue a new one.
    ({ token } = await addOperator(operatorsFile, DEMO_OPERATOR, now, {
      tenants: ['*'],
      roles: ['approver', 'resolver', 'admin'],
    }));
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    await chmod(tokenFile, 0o600);
    created.push('operator');
  }
  return {
    signingKey,
    signingKeyFile,
    operatorsFile,
    tokenFile,
    token,
    created,
    workerEnv: {
      RETRYSAFE_APPROVAL_PUBLIC_KEYS: JSON.stringify({ [signingKey.keyId]: signingKey.publicKey }),
      RETRYSAFE_OPERATORS_FILE: operatorsFile,
    },
  };
}
