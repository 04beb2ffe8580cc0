import { html, type SafeHtml } from './html';
import type { Notice } from './session-store';

/** The document around every page: the one stylesheet and the one script, both from /static/ (the CSP allows no other). */
export function pageDocument(title: string, body: SafeHtml): SafeHtml {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <link rel="stylesheet" href="/static/approval-page.css" />
        <script src="/static/approval-page.js" defer></script>
      </head>
      <body>
        ${body}
      </body>
    </html> `;
}

/** The outcome of the last form, shown once. */
export function noticeView(notice: Notice | undefined): SafeHtml {
  if (!notice) return html``;
  return html`<section
    class="notice ${notice.outcome}"
    id="notice"
    role="status"
    data-outcome="${notice.outcome}"
    data-reason="${notice.reason ?? ''}"
    data-key="${notice.key ?? ''}"
  >
    <strong>${notice.title}</strong>
    ${notice.detail ? html`<p>${notice.detail}</p>` : ''}
  </section>`;
}
