import type { Operator } from '../approval-signer';
import type { ActionQueue } from './action-queues';
import { awaitingCard, reviewCard, type CardContext } from './action-card-view';
import { html, type SafeHtml } from './html';
import { noticeView, pageDocument } from './page-layout';
import type { Notice } from './session-store';

/** The signed-in page: who is signed in, the last form's outcome, and the two queues of the operator's tenants. */
export function queuePage(options: {
  operator: Operator;
  csrfToken: string;
  notice?: Notice;
  awaiting?: ActionQueue;
  review?: ActionQueue;
  namespace: string;
  webUiUrl?: string;
}): SafeHtml {
  const { operator } = options;
  const ctx: CardContext = {
    operator,
    csrfToken: options.csrfToken,
    namespace: options.namespace,
    ...(options.webUiUrl !== undefined ? { webUiUrl: options.webUiUrl } : {}),
  };
  const tenants = operator.tenants.includes('*') ? 'every tenant' : operator.tenants.join(', ') || 'no tenant';
  return pageDocument(
    'Queue · retrysafe approvals',
    html`<header class="top">
        <h1>retrysafe approvals</h1>
        <div class="who" id="who">
          Signed in as <strong>${operator.name}</strong> · ${tenants} · roles ${operator.roles.join(', ') || 'none'}
          <form method="post" action="/sign-out">
            <input type="hidden" name="csrf" value="${options.csrfToken}" />
            <button class="quiet" type="submit">Sign out</button>
          </form>
        </div>
      </header>
      <main>
        ${noticeView(options.notice)}
        ${queueSection('awaiting', 'Waiting for approval', options.awaiting, (a) => awaitingCard(a, ctx))}
        ${queueSection('review', 'Needs review', options.review, (a) => reviewCard(a, ctx))}
      </main>`,
  );
}

function queueSection(
  id: string,
  title: string,
  queue: ActionQueue | undefined,
  card: (action: ActionQueue['actions'][number]) => SafeHtml,
): SafeHtml {
  if (!queue)
    return html`<section id="${id}">
      <h2>${title}</h2>
      <p class="empty">Could not be listed.</p>
    </section>`;
  return html`<section id="${id}" data-count="${queue.actions.length}">
    <h2>${title} <span class="count">(${queue.actions.length}${queue.truncated ? '+' : ''})</span></h2>
    ${queue.actions.length === 0 ? html`<p class="empty">Nothing waits here.</p>` : queue.actions.map(card)}
  </section>`;
}
