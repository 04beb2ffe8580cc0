import type { IntentOf, Operation } from '../../policies/intents';

/**
 * How one operation reaches its provider: where to POST, what body, whether the key travels as an
 * Idempotency-Key header, and where to look the effect up (when the provider allows it).
 */
export interface OperationRoute<O extends Operation = Operation> {
  sendPath: string;
  body(intent: IntentOf<O>, key: string): Record<string, unknown>;
  sendsKey: boolean;
  /** Path and query of a lagging list lookup returning `{ data: [...] }`; absent when the provider has none. */
  lookupPath?(intent: IntentOf<O>, key: string): string;
}

export function withoutOperation<T extends { operation: string }>(intent: T): Omit<T, 'operation'> {
  const { operation: _op, ...rest } = intent;
  return rest;
}

export const query = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;
