import { html, type SafeHtml } from './html.js';

/** What the sign-in page shows. */
export interface SignInView {
  basePath: string;
  csrf: string;
  /** Where to go once signed in (a path of this site), or null for the Account page. */
  next: string | null;
  /** The email as typed, after a refusal. */
  email?: string | undefined;
  /** Why the last attempt was refused; never which of email and password was wrong. */
  error?: string | undefined;
}

/** The content of `/signin`. */
export function signInContent(view: SignInView): SafeHtml {
  return html`<section class="panel card" aria-labelledby="signin-heading">
  <h1 id="signin-heading">Sign in</h1>
  <p class="lead">Manage your API keys for the notification service.</p>
  <p class="notice error" role="alert">${view.error}</p>
  <form method="post" action="${view.basePath}/signin">
    <input type="hidden" name="csrf" value="${view.csrf}">
    ${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ''}
    <div class="field"><div>
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${view.email ?? ''}"${view.email ? '' : html` autofocus`}>
    </div></div>
    <div class="field"><div>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required${view.email ? html` autofocus` : ''}>
    </div></div>
    <button type="submit">Sign in</button>
  </form>
</section>`;
}
