import type { ApiKeyView, CreatedApiKey } from '../../core/index.js';
import type { AuditEntry } from '../audit-log.js';
import { html, type SafeHtml } from './html.js';
import { timeTag } from './layout.js';

/** The form fields every state-changing form carries. */
const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

const confirmText = (key: ApiKeyView, whose: string) =>
  `Revoke ${whose} key “${key.label}” (${key.prefix}…)? Programs that use it are refused at once. This cannot be undone.`;

function revokeForm(action: string, csrf: string, key: ApiKeyView, whose: string): SafeHtml {
  return html`<form class="inline" method="post" action="${action}" data-confirm="${confirmText(key, whose)}">
      ${csrfField(csrf)}
      <button type="submit" class="danger" aria-label="Revoke ${key.label} (${key.prefix}…)">Revoke</button>
    </form>`;
}

/** The dialog asking before a revocation (opened by the script; without it, a page asks instead). */
export const confirmDialog = html`<dialog id="confirm-dialog" aria-labelledby="confirm-heading" aria-describedby="confirm-text">
  <h2 id="confirm-heading">Revoke this key?</h2>
  <p id="confirm-text"></p>
  <div class="actions">
    <form method="dialog"><button type="submit" class="secondary" autofocus>Cancel</button></form>
    <button type="button" id="confirm-yes" class="danger">Revoke key</button>
  </div>
</dialog>`;

/** What the Account page shows. */
export interface AccountView {
  basePath: string;
  csrf: string;
  /** The user's valid keys, newest first. */
  keys: readonly ApiKeyView[];
  /** A key just created without the script: shown once, in an open dialog. */
  created?: CreatedApiKey | undefined;
  /** Why the last creation failed, with the label as typed. */
  createError?: { details: string; label: string } | undefined;
  /** A line for the status region, e.g. after a revocation. */
  notice?: string | undefined;
}

/** The content of `/account`: generating a key, the dialog that shows it once, and the table of keys. */
export function accountContent(view: AccountView): SafeHtml {
  const { basePath, csrf, created } = view;
  const rows = view.keys.map(
    (key) => html`<tr>
    <td data-label="Prefix"><code>${key.prefix}…</code></td>
    <td data-label="Label">${key.label}</td>
    <td data-label="Created">${timeTag(key.createdAt)}</td>
    <td data-label="Last used">${timeTag(key.lastUsedAt)}</td>
    <td>${revokeForm(`${basePath}/account/keys/${encodeURIComponent(key.id)}/revoke`, csrf, key, 'your')}</td>
  </tr>`,
  );
  // First in the content: opened without the script, the dialog is not modal and stands where it
  // is written, so it covers the top of the page rather than waiting below the table.
  return html`<dialog id="new-key-dialog" aria-labelledby="new-key-heading"${created ? html` open` : ''}>
  <h2 id="new-key-heading">Your new API key</h2>
  <p>Key “<span id="new-key-label">${created?.key.label}</span>”. Copy it now: it is shown only this once and
  cannot be recovered.</p>
  <div class="secret">
    <label class="visually-hidden" for="new-key-value">New API key</label>
    <input id="new-key-value" type="text" readonly value="${created?.apiKey ?? ''}"${created ? html` autofocus` : ''}>
    <button type="button" id="copy-key" hidden>Copy</button>
  </div>
  <p id="copy-status" role="status"></p>
  <form method="dialog" class="actions"><button type="submit">Done</button></form>
</dialog>
<h1>API keys</h1>
<p class="lead">Personal keys for the notification API: programs send one in the <code>X-API-Key</code> header,
and messages they send name you as the sender. A key is shown only once, when it is generated.</p>
<p class="notice ok" role="status"${view.notice ? '' : html` hidden`}>${view.notice}</p>
<section class="panel" aria-labelledby="generate-heading">
  <h2 id="generate-heading">Generate a new key</h2>
  <form id="create-key" method="post" action="${basePath}/account/keys" data-api="${basePath}/account/api/keys">
    ${csrfField(csrf)}
    <div class="field">
      <div>
        <label for="key-label">Label</label>
        <input id="key-label" name="label" type="text" required autocomplete="off"
          placeholder="What uses it, e.g. deploy pipeline" value="${view.createError?.label ?? ''}">
      </div>
      <button type="submit">Generate key</button>
    </div>
    <p id="create-error" class="notice error" role="alert">${view.createError?.details}</p>
  </form>
</section>
<section class="panel" aria-labelledby="keys-heading">
  <h2 id="keys-heading">Your keys</h2>
  ${
    rows.length === 0
      ? html`<p class="empty">You have no API keys yet.</p>`
      : html`<table class="keys" aria-labelledby="keys-heading">
    <thead><tr><th scope="col">Prefix</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
</section>
${confirmDialog}`;
}

/** What the admin page shows. */
export interface AdminView {
  basePath: string;
  csrf: string;
  search: string;
  /** Every key of the organization that matches the search, revoked ones included. */
  keys: readonly ApiKeyView[];
  /** The recent record of creations and revocations, newest first. */
  audit: readonly AuditEntry[];
  notice?: string | undefined;
}

/**
 * An email that may break before its `@` and its dots: in a narrow column, on lines of whole words
 * rather than letters cut off anywhere (which stays for a word too long for the column).
 */
const emailText = (email: string): SafeHtml[] =>
  email.split(/(?=[@.])/).map((part, index) => (index === 0 ? html`${part}` : html`<wbr>${part}`));

function auditRows(entries: readonly AuditEntry[]): SafeHtml[] {
  return entries.map(
    (entry) => html`<tr>
    <td data-label="When">${timeTag(entry.at)}</td>
    <td data-label="Who">${entry.actor.name ?? entry.actor.email ?? entry.actor.userId}</td>
    <td data-label="Action">${entry.action === 'create' ? 'Created' : 'Revoked'}</td>
    <td data-label="Key"><div><code>${entry.key.prefix}…</code> ${entry.key.label} <span class="muted">(${emailText(entry.key.owner.email)})</span></div></td>
    <td data-label="Address"><code>${entry.clientAddress}</code></td>
  </tr>`,
  );
}

/** The content of `/admin/keys`: the search, every key of the organization, and the recent record. */
export function adminContent(view: AdminView): SafeHtml {
  const { basePath, csrf } = view;
  const rows = view.keys.map(
    (key) => html`<tr>
    <td data-label="Owner"><div>${key.owner.name}<br><span class="muted">${emailText(key.owner.email)}</span></div></td>
    <td data-label="Prefix"><code>${key.prefix}…</code></td>
    <td data-label="Label">${key.label}</td>
    <td data-label="Created">${timeTag(key.createdAt)}</td>
    <td data-label="Last used">${timeTag(key.lastUsedAt)}</td>
    <td>${
      key.revokedAt === null
        ? revokeForm(
            `${basePath}/admin/keys/${encodeURIComponent(key.id)}/revoke`,
            csrf,
            key,
            `${key.owner.name}’s`,
          )
        : html`<span class="badge revoked">Revoked ${timeTag(key.revokedAt)}</span>`
    }</td>
  </tr>`,
  );
  const audit = auditRows(view.audit);
  return html`<h1>All keys of the organization</h1>
<p class="lead">Every API key of your organization, with its owner. Revoking one refuses it at once, on every instance.</p>
<p class="notice ok" role="status"${view.notice ? '' : html` hidden`}>${view.notice}</p>
<section class="panel" aria-labelledby="org-keys-heading">
  <h2 id="org-keys-heading">Keys</h2>
  <form role="search" method="get" action="${basePath}/admin/keys">
    <div class="field">
      <div>
        <label for="search">Search</label>
        <input id="search" name="search" type="search" value="${view.search}" placeholder="Label, prefix, owner name or email">
      </div>
      <button type="submit" class="secondary">Search</button>
    </div>
  </form>
  ${
    rows.length === 0
      ? html`<p class="empty">${view.search ? 'No key matches the search.' : 'The organization has no API keys yet.'}</p>`
      : html`<table class="keys" aria-labelledby="org-keys-heading">
    <thead><tr><th scope="col">Owner</th><th scope="col">Prefix</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`
  }
</section>
<section class="panel" aria-labelledby="audit-heading">
  <h2 id="audit-heading">Recent activity</h2>
  ${
    audit.length === 0
      ? html`<p class="empty">No key was created or revoked recently.</p>`
      : html`<table class="keys" aria-labelledby="audit-heading">
    <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Key</th><th scope="col">Address</th></tr></thead>
    <tbody>${audit}</tbody>
  </table>`
  }
</section>
${confirmDialog}`;
}

/** The page that asks before a revocation when the script does not run. */
export function confirmContent(options: {
  action: string;
  back: string;
  csrf: string;
  key: ApiKeyView;
}): SafeHtml {
  const { key } = options;
  return html`<h1>Revoke this key?</h1>
<p>The key “${key.label}” (<code>${key.prefix}…</code>) of ${key.owner.name} stops working at once. This cannot be undone.</p>
<form method="post" action="${options.action}" class="actions">
  ${csrfField(options.csrf)}
  <input type="hidden" name="confirm" value="yes">
  <a href="${options.back}">Cancel</a>
  <button type="submit" class="danger">Revoke key</button>
</form>`;
}

/** The content of an error page. */
export function messageContent(
  title: string,
  message: string,
  link?: { href: string; text: string },
): SafeHtml {
  return html`<section class="panel card">
  <h1>${title}</h1>
  <p>${message}</p>
  ${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}
</section>`;
}
