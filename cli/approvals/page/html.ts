/**
 * HTML built from tagged templates that escape every interpolated value: `html\`<p>${text}</p>\`` can only put
 * text where `text` stands, never markup. Fragments built the same way nest without being escaped twice; nothing
 * else is trusted. Templates quote every attribute value with ", so escaping & < > " ' is enough.
 */

const SAFE = Symbol('safe-html');

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly text: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && (value as { [SAFE]?: unknown })[SAFE] === true;
}

/** Renders one interpolated value: fragments as they are, lists item by item, absent values as nothing. */
function fragment(value: unknown): string {
  if (value === undefined || value === null || value === false) return '';
  if (isSafe(value)) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let text = strings[0];
  values.forEach((value, i) => {
    text += fragment(value) + strings[i + 1];
  });
  return { [SAFE]: true, text };
}
