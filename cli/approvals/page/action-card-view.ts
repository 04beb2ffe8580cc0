import type { ActionSnapshot } from '../../../messages/action';
import type { DryRun } from '../../../messages/approval';
import type { Operator } from '../approval-signer';
import { webUiWorkflowUrl } from '../../dev/dev-server';
import { maskForDisplay, maskText } from './display-masking';
import { html, type SafeHtml } from './html';

/**
 * One action as the queue shows it: what it would do (the dry run: target, amount, payload preview, the policy rows
 * and reasons that sent it to a person), the request hash a decision is bound to, a link to it in the Temporal Web
 * UI, and the form an operator with the right role decides it with. Every string from the action is masked again
 * (display-masking.ts) and escaped (html.ts).
 */

export interface CardContext {
  operator: Operator;
  csrfToken: string;
  namespace: string;
  webUiUrl?: string;
}

export function awaitingCard(action: ActionSnapshot, ctx: CardContext): SafeHtml {
  const dryRun = action.dryRun;
  const form = !dryRun
    ? html`<p class="role-note">No dry run was published for this action, so it cannot be approved here.</p>`
    : ctx.operator.roles.includes('approver')
      ? approvalForm(action, dryRun, ctx.csrfToken)
      : html`<p class="role-note">You lack the approver role: you can read this dry run but not decide it.</p>`;
  return html`<article class="action" data-key="${action.key}" data-status="${action.status}">
    <h3>${maskText(dryRun?.summary ?? action.summary)}</h3>
    <dl class="facts">
      ${identity(action)} ${dryRun ? dryRunFacts(dryRun) : ''} ${requestHash(action.requestHash)}
      ${webUiLink(action.key, ctx)}
    </dl>
    ${form}
  </article>`;
}

export function reviewCard(action: ActionSnapshot, ctx: CardContext): SafeHtml {
  const why = [...action.audit].reverse().find((a) => a.to === 'needs_review');
  const form = ctx.operator.roles.includes('resolver')
    ? resolutionForm(action, ctx.csrfToken)
    : html`<p class="role-note">You lack the resolver role: you can read this action but not resolve it.</p>`;
  return html`<article class="action" data-key="${action.key}" data-status="${action.status}">
    <h3>${maskText(action.dryRun?.summary ?? action.summary)}</h3>
    <dl class="facts">
      ${identity(action)}
      ${
        why
          ? html`<dt>Why it waits</dt>
              <dd data-field="why">${maskText(why.reason)}</dd>`
          : ''
      }
      ${
        action.decisionMode
          ? html`<dt>Decision mode</dt>
              <dd>${action.decisionMode}</dd>`
          : ''
      }
      ${
        action.error
          ? html`<dt>Error</dt>
              <dd>${action.error.code}: ${maskText(action.error.message)}</dd>`
          : ''
      }
      ${
        action.providerRef
          ? html`<dt>Provider reference</dt>
              <dd><code>${action.providerRef}</code></dd>`
          : ''
      }
      <dt>Sent to the provider</dt>
      <dd>${action.sends} request(s); ${action.checks.length} reconciliation check(s)</dd>
      ${
        action.conflicts?.length
          ? html`<dt>Conflicting events</dt>
              <dd>${action.conflicts.length}</dd>`
          : ''
      }
      ${action.dryRun ? dryRunFacts(action.dryRun) : ''} ${requestHash(action.requestHash)}
      ${webUiLink(action.key, ctx)}
    </dl>
    ${form}
  </article>`;
}

function identity(action: ActionSnapshot): SafeHtml {
  return html`<dt>Action key</dt>
    <dd><code data-field="key">${action.key}</code></dd>
    <dt>Tenant</dt>
    <dd data-field="tenant">${action.tenant}</dd>
    <dt>Operation</dt>
    <dd>${action.operation}</dd>`;
}

function dryRunFacts(dryRun: DryRun): SafeHtml {
  const payload = maskForDisplay(dryRun.payload) as Record<string, unknown>;
  return html`<dt>Target</dt>
    <dd data-field="target">${maskText(dryRun.target)}</dd>
    ${
      dryRun.amountCents !== undefined
        ? html`<dt>Amount</dt>
            <dd data-field="amount">${money(dryRun.amountCents, dryRun.currency)}</dd>`
        : ''
    }
    <dt>Scope</dt>
    <dd>${maskText(dryRun.scope)}</dd>
    <dt>Payload (preview)</dt>
    <dd>
      <table class="payload" data-field="payload">
        ${Object.entries(payload).map(
          ([field, value]) =>
            html`<tr>
              <th>${field}</th>
              <td><code>${typeof value === 'string' ? value : JSON.stringify(value)}</code></td>
            </tr>`,
        )}
      </table>
    </dd>
    <dt>Policy</dt>
    <dd data-field="policy">
      ${dryRun.policy.mode} (${dryRun.policy.riskClass}):
      ${dryRun.policy.rows.map((row, i) => (i === 0 ? html`<code>${row}</code>` : html`, <code>${row}</code>`))}
      <ul class="reasons">
        ${dryRun.policy.reasons.map((reason) => html`<li>${maskText(reason)}</li>`)}
      </ul>
    </dd>
    <dt>Dry run made</dt>
    <dd>${dryRun.createdAt}</dd>`;
}

function requestHash(hash: string): SafeHtml {
  return html`<dt>Request hash</dt>
    <dd><code data-field="request-hash">${hash}</code></dd>`;
}

function webUiLink(key: string, ctx: CardContext): SafeHtml {
  const url =
    ctx.webUiUrl === undefined ? undefined : webUiWorkflowUrl({ uiUrl: ctx.webUiUrl, namespace: ctx.namespace }, key);
  if (url === undefined) return html``;
  return html`<dt>Temporal Web UI</dt>
    <dd><a data-field="web-ui" href="${url}" target="_blank" rel="noopener noreferrer">this action's workflow</a></dd>`;
}

function approvalForm(action: ActionSnapshot, dryRun: DryRun, csrfToken: string): SafeHtml {
  return html`<form class="decision" method="post" action="/queue/decide" data-once>
    <input type="hidden" name="csrf" value="${csrfToken}" />
    <input type="hidden" name="key" value="${action.key}" />
    <input type="hidden" name="requestHash" value="${dryRun.requestHash}" />
    <label
      >Reason (signed with your decision)
      <input type="text" name="reason" required minlength="3" maxlength="500" />
    </label>
    <button class="approve" type="submit" name="decision" value="approve">Approve</button>
    <button class="reject" type="submit" name="decision" value="reject">Reject</button>
  </form>`;
}

function resolutionForm(action: ActionSnapshot, csrfToken: string): SafeHtml {
  // A human-only action is never sent by the agent: a person records what they did, or fails it.
  const outcomes =
    action.decisionMode === 'human-only'
      ? [
          ['confirmed', 'confirmed: it was done (give the provider reference)'],
          ['failed', 'failed: it will not be done'],
        ]
      : [
          ['confirmed', 'confirmed: it happened (give the provider reference)'],
          ['not-happened', 'not-happened: it did not happen; let the action send it'],
          ['failed', 'failed: give up'],
          ['compensate', 'compensate: it happened and must be undone'],
        ];
  return html`<form class="resolution" method="post" action="/queue/resolve" data-once>
    <input type="hidden" name="csrf" value="${csrfToken}" />
    <input type="hidden" name="key" value="${action.key}" />
    <input type="hidden" name="requestHash" value="${action.requestHash}" />
    <label
      >Outcome
      <select name="outcome" required>
        <option value="">choose…</option>
        ${outcomes.map(([value, label]) => html`<option value="${value}">${label}</option>`)}
      </select>
    </label>
    <label>Provider reference <input type="text" name="providerRef" maxlength="200" /></label>
    <label
      >Reason (signed with your decision)
      <input type="text" name="reason" required minlength="3" maxlength="500" />
    </label>
    <button class="resolve" type="submit">Resolve</button>
  </form>`;
}

/** 7500 usd → "75.00 USD (7500 minor units)"; the minor units are what the request carries. */
function money(amountCents: number, currency: string | undefined): string {
  if (!currency) return `${amountCents} minor units`;
  return `${(amountCents / 100).toFixed(2)} ${currency.toUpperCase()} (${amountCents} minor units)`;
}
