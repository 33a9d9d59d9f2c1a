import type { AccountUser } from '../account-user.js';
import { html, SafeHtml } from './html.js';
import { pageScript } from './script.js';
import { pageStyle } from './style.js';

/** What every page's frame needs. */
export interface Frame {
  /** Fresh per response; allows the inline style and script under the Content-Security-Policy. */
  nonce: string;
  /** Where the pages are mounted (`''` at the root). */
  basePath: string;
  /** The signed-in person, or null on the sign-in and error pages. */
  user: AccountUser | null;
  /** The page of the navigation that is shown, marked `aria-current`. */
  current?: 'account' | 'admin';
  /** The sign-out form, when the library's own sign-in is used. */
  signOut?: { csrf: string } | undefined;
}

/** An ISO time, converted to the viewer's time zone by the script; UTC until then (and without script). */
export function timeTag(iso: string | null, never = 'Never'): SafeHtml {
  if (iso === null) return html`<span class="muted">${never}</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function navigation(frame: Frame): SafeHtml | string {
  const { user, basePath, current } = frame;
  if (user === null) return '';
  const link = (page: 'account' | 'admin', href: string, text: string) =>
    html`<li><a href="${basePath}${href}"${current === page ? html` aria-current="page"` : ''}>${text}</a></li>`;
  const who = user.name ?? user.email;
  return html`<nav aria-label="Account">
  <ul>
    ${link('account', '/account', 'API keys')}
    ${user.admin ? link('admin', '/admin/keys', 'All keys of the organization') : ''}
    ${who ? html`<li class="who">Signed in as ${who}${user.name && user.email ? html` (${user.email})` : ''}</li>` : ''}
    ${
      frame.signOut
        ? html`<li><form class="inline" method="post" action="${basePath}/signout">
        <input type="hidden" name="csrf" value="${frame.signOut.csrf}">
        <button type="submit" class="secondary">Sign out</button>
      </form></li>`
        : ''
    }
  </ul>
</nav>`;
}

/** A whole page: the header with the navigation, the content, the style and the script. */
export function layout(frame: Frame, title: string, content: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · chat-notify</title>
<style nonce="${frame.nonce}">${new SafeHtml(pageStyle)}</style>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="bar">
  <span class="brand">chat-notify</span>
  ${navigation(frame)}
</header>
<main id="content">
${content}
</main>
<script nonce="${frame.nonce}">${new SafeHtml(pageScript)}</script>
</body>
</html>
`.value;
}
