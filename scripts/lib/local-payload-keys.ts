/**
 * The payload key file that `npm start` keeps in its data folder, found by the commands people run
 * beside it (the ops CLI, `npm run demo`) when no key setting is given. Only the tools for people do
 * this; workers and library code take RETRYSAFE_PAYLOAD_KEYS_FILE / RETRYSAFE_PAYLOAD_KEYS as given.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PAYLOAD_KEYS_ENV, PAYLOAD_KEYS_FILE_ENV } from '../../codec/codec-config';

export const LOCAL_PAYLOAD_KEYS_FILE_NAME = 'payload-keys.json';

/** `env`, with the data folder's payload key file named when the environment names no keys and the file exists. */
export function withLocalPayloadKeys(env: NodeJS.ProcessEnv, dataDir: string): NodeJS.ProcessEnv {
  if (env[PAYLOAD_KEYS_FILE_ENV] || env[PAYLOAD_KEYS_ENV]) return env;
  const file = path.join(dataDir, LOCAL_PAYLOAD_KEYS_FILE_NAME);
  return existsSync(file) ? { ...env, [PAYLOAD_KEYS_FILE_ENV]: file } : env;
}

export const LOCAL_LEDGER_FILE_NAME = 'ledger.sqlite';

/** `env`, with the data folder's ledger named (RETRYSAFE_LEDGER) when none is and `npm start` made one there. */
export function withLocalLedger(env: NodeJS.ProcessEnv, dataDir: string): NodeJS.ProcessEnv {
  if (env.RETRYSAFE_LEDGER) return env;
  const file = path.join(dataDir, LOCAL_LEDGER_FILE_NAME);
  return existsSync(file) ? { ...env, RETRYSAFE_LEDGER: `sqlite:${file}` } : env;
}
