import type { HtmlEscapedString } from 'hono/utils/html';

/**
 * The page's markup comes from Hono's `html` tagged template, which escapes every interpolated value (& < > " ')
 * and passes fragments built the same way through unescaped: `html\`<p>${text}</p>\`` can only put text where
 * `text` stands, never markup. Templates quote every attribute value with ", so that escaping is enough.
 */
export { html } from 'hono/html';

/** A fragment built by `html`: only these are inserted into a page without escaping. */
export type SafeHtml = HtmlEscapedString | Promise<HtmlEscapedString>;
