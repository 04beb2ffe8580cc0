import type { DataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec';
import { PAYLOAD_KEYS_FILE_ENV } from '../codec/codec-config';
import { RetrysafeError } from '../policies/errors';

/**
 * What a stack keeps, declared where every worker and client of it can read it: its namespace's data
 * (`retrysafe.*` keys). `retrysafe dev` declares them; a deployment may too (`temporal operator namespace update
 * --data retrysafe.ledger=postgres`). A worker or client that connects compares its own settings with them at
 * start, and one that disagrees says so in one line naming its setting, instead of failing later with a codec error
 * or a decision it cannot verify. A namespace that declares nothing is not checked.
 */
export interface StackSettings {
  /** Payloads are encrypted with these keys (their IDs): a worker or client without them cannot read them. */
  payloadKeyIds?: string[];
  /** The approval service signs with these keys (their IDs): a worker that trusts none of them approves nothing. */
  approvalKeyIds?: string[];
  /** The stack keeps the durable ledger (`sqlite` or `postgres`): a worker without it does not enforce it. */
  ledger?: string;
}

const KEYS = {
  payloadKeyIds: 'retrysafe.payloadKeyIds',
  approvalKeyIds: 'retrysafe.approvalKeyIds',
  ledger: 'retrysafe.ledger',
} as const;

/**
 * The two calls of a Temporal connection's workflow service that stack settings need (a Connection's or a
 * NativeConnection's `workflowService`).
 */
export type WorkflowService = {
  /** Reads the namespace, with the settings a stack declared in its data. */
  describeNamespace(
    req: temporal.api.workflowservice.v1.IDescribeNamespaceRequest,
  ): Promise<temporal.api.workflowservice.v1.IDescribeNamespaceResponse>;
  /** Writes the namespace's data (what `retrysafe dev` declares). */
  updateNamespace(
    req: temporal.api.workflowservice.v1.IUpdateNamespaceRequest,
  ): Promise<temporal.api.workflowservice.v1.IUpdateNamespaceResponse>;
};

const list = (value: string | undefined) =>
  value === undefined || value === '' ? undefined : value.split(',').filter((v) => v !== '');

/** The stack's declared settings; empty when its namespace declares none. */
export async function readStackSettings(service: WorkflowService, namespace: string): Promise<StackSettings> {
  const { namespaceInfo } = await service.describeNamespace({ namespace });
  const data = namespaceInfo?.data ?? {};
  const payloadKeyIds = list(data[KEYS.payloadKeyIds]);
  const approvalKeyIds = list(data[KEYS.approvalKeyIds]);
  return {
    ...(payloadKeyIds ? { payloadKeyIds } : {}),
    ...(approvalKeyIds ? { approvalKeyIds } : {}),
    ...(data[KEYS.ledger] ? { ledger: data[KEYS.ledger] } : {}),
  };
}

/** Declares a stack's settings in its namespace's data (an empty value withdraws one). */
export async function declareStackSettings(
  service: WorkflowService,
  namespace: string,
  settings: StackSettings,
): Promise<void> {
  await service.updateNamespace({
    namespace,
    updateInfo: {
      data: {
        [KEYS.payloadKeyIds]: (settings.payloadKeyIds ?? []).join(','),
        [KEYS.approvalKeyIds]: (settings.approvalKeyIds ?? []).join(','),
        [KEYS.ledger]: settings.ledger ?? '',
      },
    },
  });
}

/** What one process brings to the stack: the payload keys it holds, the approval keys it trusts, its ledger. */
export interface OwnSettings {
  role: 'worker' | 'client';
  /** IDs of the payload keys it can decrypt with; undefined when it has no payload codec at all. */
  payloadKeyIds?: readonly string[];
  /** IDs of the approval keys it trusts (workers only). */
  approvalKeyIds?: readonly string[];
  /** Its ledger's kind, or undefined when it keeps none (workers only). */
  ledger?: string;
}

/** Thrown when a worker or client disagrees with the stack it connects to: one line, naming its setting. */
export class StackSettingsMismatch extends RetrysafeError {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super('InvalidConfig', message, { setting });
    this.name = 'StackSettingsMismatch';
  }
}

const HINT = 'load the settings the stack wrote (`node --env-file=.retrysafe/dev.env …`, or your deployment’s)';

/** The first way `own` disagrees with `stack`, as an error naming the setting to fix; undefined when they agree. */
export function stackSettingsMismatch(stack: StackSettings, own: OwnSettings): StackSettingsMismatch | undefined {
  const stackKeys = stack.payloadKeyIds ?? [];
  if (stackKeys.length > 0) {
    const missing = stackKeys.filter((id) => !(own.payloadKeyIds ?? []).includes(id));
    if (own.payloadKeyIds === undefined || missing.length === stackKeys.length) {
      return new StackSettingsMismatch(
        PAYLOAD_KEYS_FILE_ENV,
        `${PAYLOAD_KEYS_FILE_ENV}: this stack encrypts payloads (key ${stackKeys.join(', ')}) and this ${own.role} ` +
          `${own.payloadKeyIds === undefined ? 'has no payload keys' : `holds only ${own.payloadKeyIds.join(', ')}`}: ${HINT}`,
      );
    }
  }
  if (own.role !== 'worker') return undefined;
  const approvals = stack.approvalKeyIds ?? [];
  if (approvals.length > 0 && !approvals.some((id) => (own.approvalKeyIds ?? []).includes(id))) {
    return new StackSettingsMismatch(
      'RETRYSAFE_APPROVAL_PUBLIC_KEYS',
      `RETRYSAFE_APPROVAL_PUBLIC_KEYS: this stack's approval service signs with ${approvals.join(', ')} and this ` +
        `worker trusts ${own.approvalKeyIds?.length ? `only ${own.approvalKeyIds.join(', ')}` : 'no approval key'}, ` +
        `so it would refuse every approval: ${HINT}`,
    );
  }
  if (stack.ledger && !own.ledger) {
    return new StackSettingsMismatch(
      'RETRYSAFE_LEDGER',
      `RETRYSAFE_LEDGER: this stack keeps a ${stack.ledger} ledger and this worker has none, so it would not ` +
        `enforce it: ${HINT}`,
    );
  }
  return undefined;
}

/**
 * The payload key IDs a data converter can decrypt with: none (undefined) without a payload codec; all of its
 * AesGcmPayloadCodec's keys; `'other'` for a codec of the application's own, which this check cannot see into.
 */
export function payloadKeyIdsOf(dataConverter: DataConverter | undefined): readonly string[] | 'other' | undefined {
  const codecs = dataConverter?.payloadCodecs ?? [];
  if (codecs.length === 0) return undefined;
  const ours = codecs.find((c): c is AesGcmPayloadCodec => c instanceof AesGcmPayloadCodec);
  return ours ? ours.keyIds.known : 'other';
}

/**
 * Compares a process's settings with what its stack declares, and throws the mismatch. A namespace that cannot be
 * described (a permission the process lacks, a server that does not answer yet) is not checked: that failure
 * shows itself at the first real call.
 */
export async function checkStackSettings(
  service: WorkflowService,
  namespace: string,
  own: Omit<OwnSettings, 'payloadKeyIds'> & { payloadKeyIds?: readonly string[] | 'other' },
): Promise<void> {
  let stack: StackSettings;
  try {
    stack = await readStackSettings(service, namespace);
  } catch {
    return;
  }
  const { payloadKeyIds, ...rest } = own;
  const mismatch = stackSettingsMismatch(
    // A codec of the application's own: its keys cannot be compared, so the payload check is left out.
    payloadKeyIds === 'other' ? { ...stack, payloadKeyIds: [] } : stack,
    { ...rest, ...(payloadKeyIds !== undefined && payloadKeyIds !== 'other' ? { payloadKeyIds } : {}) },
  );
  if (mismatch) throw mismatch;
}
