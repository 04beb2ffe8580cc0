/**
 * Card numbers (PANs) in free text. A customer pastes `4242 4242 4242 4242` into a charge description or
 * an email body; once parsed it would reach the request hash, the memo's intent preview, the workflow
 * history and the dev server's SQLite file. Field names cannot catch it, so every string of an intent is
 * scanned for digit runs that look like a card number:
 *
 *   - a run is digits in groups joined by ONE space or ONE dash (Unicode no-break/thin spaces and
 *     hyphen/en/em dashes count too, since pasted text carries them); anything else ends the run, so
 *     `2026-08-28T10:00`, `+1 (415) 555-0100` and `4242.4242` are several short runs;
 *   - a run is a card number when it has 13–19 digits in all and passes the Luhn check;
 *   - inside a longer run, its first groups are a card number when they are card-formatted (a group of
 *     4, then groups of 4–6, the last 1–6: `4242 4242 4242 4242 123`) and pass on their own, and so
 *     again right after a match; an unbroken group of 13–19 digits that passes is one anywhere
 *     (`2026-08-28 4242424242424242`). Grouped spans starting inside a run are not tried, so an IBAN
 *     (`DE89 3704 0044 0532 0130 00`) is not taken for a card, and neither is an unbroken 20-digit
 *     reference. Not caught: a grouped card number right after another group (`no 12 4242 4242 …`);
 *   - it must start with an issuer prefix (ISSUER_PREFIX: 2, 3, 4, 5 or 6 in the card networks' ranges),
 *     so timestamps, phone numbers and most order numbers are not taken for one; all zeros never is.
 *
 * Luhn passes one number in ten, so a 13–19-digit reference that starts like a card can be a false positive;
 * by default it is refused with the field named (the tool registry's parseIntent), so nothing is changed
 * behind anyone's back, and only a tenant that chose `mask` gets it masked. Pure: workflows, activities
 * and clients call it alike.
 */

/** What a tenant does with card numbers in free text: refuse the intent (default) or keep only the last four. */
export const CARD_NUMBER_MODES = ['refuse', 'mask'] as const;
export type CardNumberMode = (typeof CARD_NUMBER_MODES)[number];

export const MIN_CARD_DIGITS = 13;
export const MAX_CARD_DIGITS = 19;

/** What a masked card number becomes; the `•` are no digits and no separators, so the result is never re-detected. */
export const MASK_PREFIX = '••••';

const SEPARATORS = ' \\u00a0\\u2007\\u2009\\u202f\\u2010-\\u2014\\u2212-';
const RUN = new RegExp(`\\d+(?:[${SEPARATORS}]\\d+)*`, 'g');
const SEPARATOR = new RegExp(`[${SEPARATORS}]`);

/** One card number found in a text: where it is (UTF-16 offsets) and its last four digits. */
export interface CardNumberMatch {
  index: number;
  length: number;
  digits: number;
  last4: string;
}

/** Every card number in `text`, left to right. */
export function findCardNumbers(text: string): CardNumberMatch[] {
  const out: CardNumberMatch[] = [];
  for (const run of text.matchAll(RUN)) {
    for (const span of cardSpans(run[0])) out.push({ ...span, index: run.index + span.index });
  }
  return out;
}

export function containsCardNumber(text: string): boolean {
  return findCardNumbers(text).length > 0;
}

/**
 * `text` with every card number replaced by `•••• 1234` (its last four). Repeated until nothing is found,
 * so the result is a fixed point: parsing it again finds nothing and hashes the same.
 */
export function maskCardNumbers(text: string): string {
  let current = text;
  for (;;) {
    const found = findCardNumbers(current);
    if (!found.length) return current;
    let out = '';
    let at = 0;
    for (const m of found) {
      out += `${current.slice(at, m.index)}${MASK_PREFIX} ${m.last4}`;
      at = m.index + m.length;
    }
    current = out + current.slice(at);
  }
}

/** The Luhn (mod 10) check over a string of ASCII digits. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Where a card number was found in a JSON value: a dotted path (`description`, `address.line1`, `items.0`). */
export interface CardNumberLocation {
  field: string;
  /** True when the card number is in a field's name rather than its value (it cannot be masked). */
  inKey: boolean;
}

/**
 * The first string (or field name) in `value`, depth first in key order, that contains a card number. Iterative:
 * a deeply nested value costs heap, not stack.
 */
export function findCardNumberField(value: unknown): CardNumberLocation | undefined {
  // Each entry knows its parent, so a path is built only for the field found.
  type Node = { value: unknown; key?: string | number; parent?: Node };
  const field = (node: Node) => {
    const path: Array<string | number> = [];
    for (let n: Node | undefined = node; n?.parent; n = n.parent) path.push(n.key!);
    return path.length ? path.reverse().join('.') : '(root)';
  };
  const stack: Node[] = [{ value }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === 'string') {
      if (containsCardNumber(v)) return { field: field(node), inKey: false };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    const entries: Array<[string | number, unknown]> = Array.isArray(v) ? [...v.entries()] : Object.entries(v);
    if (!Array.isArray(v) && entries.some(([key]) => containsCardNumber(String(key)))) {
      // Keys are looked at before anything inside their values, as a reader of the object would see them.
      return { field: field(node), inKey: true };
    }
    for (let i = entries.length - 1; i >= 0; i--)
      stack.push({ value: entries[i][1], key: entries[i][0], parent: node });
  }
  return undefined;
}

/** A copy of a JSON value with every string masked (`maskCardNumbers`); field names are left as they are. Iterative. */
export function maskCardNumbersIn<T>(value: T): T {
  const copy = (v: unknown): unknown => {
    if (typeof v === 'string') return maskCardNumbers(v);
    if (Array.isArray(v)) return new Array(v.length);
    if (typeof v === 'object' && v !== null && isPlain(v)) return {};
    return v;
  };
  const root = copy(value);
  const work: Array<{ from: unknown; to: unknown }> = [{ from: value, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop()!;
    if (Array.isArray(from)) {
      from.forEach((item, i) => {
        const child = copy(item);
        (to as unknown[])[i] = child;
        if (child !== item && typeof item === 'object') work.push({ from: item, to: child });
      });
    } else if (typeof from === 'object' && from !== null && isPlain(from) && to !== from) {
      for (const [k, item] of Object.entries(from)) {
        const child = copy(item);
        (to as Record<string, unknown>)[k] = child;
        if (child !== item && typeof item === 'object') work.push({ from: item, to: child });
      }
    }
  }
  return root as T;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The card numbers inside one run of digit groups, with offsets within the run. */
function cardSpans(run: string): CardNumberMatch[] {
  const groups: Array<{ digits: string; start: number }> = [];
  for (let i = 0, start = 0; i <= run.length; i++) {
    if (i === run.length || SEPARATOR.test(run[i])) {
      groups.push({ digits: run.slice(start, i), start });
      start = i + 1;
    }
  }
  const span = (from: number, to: number): CardNumberMatch => {
    const digits = groups
      .slice(from, to + 1)
      .map((g) => g.digits)
      .join('');
    const start = groups[from].start;
    return {
      index: start,
      length: groups[to].start + groups[to].digits.length - start,
      digits: digits.length,
      last4: digits.slice(-4),
    };
  };
  if (isCard(groups.map((g) => g.digits).join(''))) return [span(0, groups.length - 1)];

  const out: CardNumberMatch[] = [];
  // Card-formatted spans are tried at the run's start and right after a match; an unbroken group anywhere.
  let anchored = true;
  for (let from = 0; from < groups.length;) {
    let best: number | undefined;
    if (anchored) {
      let digits = '';
      for (let to = from; to < groups.length; to++) {
        digits += groups[to].digits;
        if (digits.length > MAX_CARD_DIGITS) break;
        if (cardFormatted(groups.slice(from, to + 1).map((g) => g.digits.length)) && isCard(digits)) best = to;
      }
    } else if (isCard(groups[from].digits)) {
      best = from;
    }
    if (best === undefined) {
      anchored = false;
      from += 1;
      continue;
    }
    out.push(span(from, best));
    anchored = true;
    from = best + 1;
  }
  return out;
}

function isCard(digits: string): boolean {
  return (
    digits.length >= MIN_CARD_DIGITS &&
    digits.length <= MAX_CARD_DIGITS &&
    ISSUER_PREFIX.test(digits) &&
    luhnValid(digits)
  );
}

/**
 * The issuer prefixes (IINs) card numbers start with: Visa 4; Mastercard 51–55 and 2221–2720; American
 * Express 34, 37; Diners 300–305, 36, 38, 39; JCB 3528–3589; Discover 6011, 644–649, 65; UnionPay 62;
 * Maestro 50, 56–69. Luhn alone passes one number in ten; a run must also start like a card, so a
 * millisecond timestamp (`1764…`), a phone number or an order number starting with 0, 1, 7, 8 or 9 is
 * not taken for one.
 */
export const ISSUER_PREFIX =
  /^(4|5[0-9]|2(2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|3(0[0-5]|[689])|35(2[89]|[3-8]\d)|6)/;

/** Group lengths as cards are printed: one unbroken group, or 4, then 4–6 each, the last 1–6 (4-4-4-4, 4-6-5, 4-4-4-4-3). */
function cardFormatted(lengths: number[]): boolean {
  if (lengths.length === 1) return true;
  if (lengths[0] !== 4) return false;
  const last = lengths[lengths.length - 1];
  return lengths.slice(1, -1).every((n) => n >= 4 && n <= 6) && last >= 1 && last <= 6;
}
