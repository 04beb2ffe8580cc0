import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes retrysafe writes, so that the Web UI and the ops CLI can find any action by
 * key, status, operation or tenant. They must be registered with the server before workers run
 * (the dev-server launcher does it at start; see docker-compose.yml for a self-hosted cluster).
 */
export const SA_KIND = defineSearchAttributeKey('RetrysafeKind', SearchAttributeType.KEYWORD);
export const SA_STATUS = defineSearchAttributeKey('RetrysafeStatus', SearchAttributeType.KEYWORD);
export const SA_OPERATION = defineSearchAttributeKey('RetrysafeOperation', SearchAttributeType.KEYWORD);
export const SA_TENANT = defineSearchAttributeKey('RetrysafeTenant', SearchAttributeType.KEYWORD);
export const SA_PROVIDER_REF = defineSearchAttributeKey('RetrysafeProviderRef', SearchAttributeType.KEYWORD);
export const SA_ACTION_KEYS = defineSearchAttributeKey('RetrysafeActionKeys', SearchAttributeType.KEYWORD_LIST);
export const SA_WAITING_ON = defineSearchAttributeKey('RetrysafeWaitingOn', SearchAttributeType.KEYWORD);
/** The business reference a provider knows the action by (shipment ref, ticket ref); webhooks are routed by it. */
export const SA_REFERENCE = defineSearchAttributeKey('RetrysafeReference', SearchAttributeType.KEYWORD);

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
