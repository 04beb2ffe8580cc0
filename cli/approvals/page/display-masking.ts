import { maskCardNumbers } from '../../../policies/card-numbers';

/**
 * A second mask over everything the page shows of an action. The dry run's payload is the tool registry's preview:
 * it drops the tool's declared `secretFields` and masks top-level strings that hold an "@" (`j***@example.com`),
 * but it leaves nested values, and free text in fields a tool did not declare secret, as they are. So the page
 * masks again, in every string at any depth: email addresses, card numbers (policies/card-numbers.ts), and whole
 * values under field names that say they hold a credential.
 */

/** Field names whose values are never shown, whatever they hold. */
const SECRET_FIELD = /(secret|token|passw(or)?d|api[-_]?key|authori[sz]ation|credential|private[-_]?key|cvc|cvv)/i;
export const HIDDEN_VALUE = '•••• (hidden)';
const EMAIL = /([A-Za-z0-9_%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/g;
const MAX_DEPTH = 6;

/** Free text with email addresses and card numbers masked. */
export function maskText(text: string): string {
  return maskCardNumbers(text).replace(EMAIL, '$1***@$2');
}

/** A copy of a JSON value for display: strings masked, credential-named fields hidden, deep nesting cut. */
export function maskForDisplay(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskText(value);
  if (depth >= MAX_DEPTH && typeof value === 'object' && value !== null) return '…';
  if (Array.isArray(value)) return value.map((item) => maskForDisplay(item, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        maskText(k),
        SECRET_FIELD.test(k) ? HIDDEN_VALUE : maskForDisplay(v, depth + 1),
      ]),
    );
  }
  return value;
}
