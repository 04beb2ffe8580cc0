import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes retrysafe writes, so that the Web UI and the ops CLI can find any action by
 * key, status, operation or tenant. They must be registered with the server before workers run
 * (the dev-server launcher does it at start; see docker-compose.yml for a self-hosted cluster).
 */
export const SA_KIND = defineSearchAttributeKey('RetrysafeKind', SearchAttributeType.KEYWORD);
/** An action's status, or a run's; `RetrysafeStatus="unknown"` finds what waits for reconciliation. */
export const SA_STATUS = defineSearchAttributeKey('RetrysafeStatus', SearchAttributeType.KEYWORD);
/** An action's operation (the tool's name). */
export const SA_OPERATION = defineSearchAttributeKey('RetrysafeOperation', SearchAttributeType.KEYWORD);
/** The tenant an action or run acts for. */
export const SA_TENANT = defineSearchAttributeKey('RetrysafeTenant', SearchAttributeType.KEYWORD);
/** The provider's ID of the effect once known (a charge ID). */
export const SA_PROVIDER_REF = defineSearchAttributeKey('RetrysafeProviderRef', SearchAttributeType.KEYWORD);
/** On a run: the newest action keys it holds that fit the server's 2 KiB value limit. */
export const SA_ACTION_KEYS = defineSearchAttributeKey('RetrysafeActionKeys', SearchAttributeType.KEYWORD_LIST);
/** On a run: the key of the action it waits for. */
export const SA_WAITING_ON = defineSearchAttributeKey('RetrysafeWaitingOn', SearchAttributeType.KEYWORD);
/** The business reference a provider knows the action by (shipment ref, ticket ref); webhooks are routed by it. */
export const SA_REFERENCE = defineSearchAttributeKey('RetrysafeReference', SearchAttributeType.KEYWORD);

/**
 * The server refuses a search attribute value longer than this (the `limit.searchAttributesSizeOfValue` default,
 * 2 KiB of its JSON), and fails the workflow task that wrote it.
 */
export const SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES = 2048;
/** Room left under the limit for the payload's encoding. */
const VALUE_MARGIN_BYTES = 64;

/**
 * The keys a run lists in RetrysafeActionKeys: the newest that fit under the value limit, in claim order. A run
 * of about 45 or more actions has more keys than fit; the older ones stay findable through their own workflows
 * (the action key is the workflow ID, and each action records the run that owns it). Found by
 * `npm run bench:scale`, whose 100-action run failed at its 48th claim before this.
 */
export function actionKeysWithinLimit(
  keys: readonly string[],
  limitBytes = SEARCH_ATTRIBUTE_VALUE_LIMIT_BYTES,
): string[] {
  const budget = limitBytes - VALUE_MARGIN_BYTES;
  const kept: string[] = [];
  // JSON array: brackets, and per key its bytes, two quotes and a comma.
  let size = 2;
  for (let i = keys.length - 1; i >= 0; i--) {
    const cost = utf8Bytes(JSON.stringify(keys[i])) + (kept.length ? 1 : 0);
    if (size + cost > budget) break;
    size += cost;
    kept.unshift(keys[i]);
  }
  return kept;
}

/** UTF-8 length without Buffer, which workflow code does not have. */
function utf8Bytes(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

/** Name → server type name, as the Temporal CLI's `--search-attribute Name=Type` flag takes them. */
export const SEARCH_ATTRIBUTE_REGISTRATIONS: ReadonlyArray<{ name: string; type: 'Keyword' | 'KeywordList' }> = [
  { name: SA_KIND.name, type: 'Keyword' },
  { name: SA_STATUS.name, type: 'Keyword' },
  { name: SA_OPERATION.name, type: 'Keyword' },
  { name: SA_TENANT.name, type: 'Keyword' },
  { name: SA_PROVIDER_REF.name, type: 'Keyword' },
  { name: SA_ACTION_KEYS.name, type: 'KeywordList' },
  { name: SA_WAITING_ON.name, type: 'Keyword' },
  { name: SA_REFERENCE.name, type: 'Keyword' },
];
