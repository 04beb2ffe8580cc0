import { html, type SafeHtml } from './html';
import { pageDocument } from './page-layout';

/** The sign-in form. The token field is never filled in again: no page ever contains a token. */
export function signInPage(options: { csrfToken: string; error?: string; signedOut?: boolean }): SafeHtml {
  return pageDocument(
    'Sign in · retrysafe approvals',
    html`<main class="sign-in">
      <h1>retrysafe approvals</h1>
      <p class="hint">
        Sign in with your operator token to review the actions that wait for a person. The token stays on this server's
        side: the page keeps only a session.
      </p>
      ${options.signedOut ? html`<p class="hint" role="status" id="signed-out">You are signed out.</p>` : ''}
      ${options.error ? html`<p class="error" role="alert" id="sign-in-error">${options.error}</p>` : ''}
      <form method="post" action="/sign-in" data-once>
        <input type="hidden" name="csrf" value="${options.csrfToken}" />
        <label
          >Operator token
          <input type="password" name="token" autocomplete="off" spellcheck="false" required autofocus />
        </label>
        <button class="primary" type="submit">Sign in</button>
      </form>
    </main>`,
  );
}
