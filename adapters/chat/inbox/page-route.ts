import { htmlResponse, randomBase62 } from '../../../core/adapter-kit.js';
import { renderInboxPage } from './page.js';
import type { ConnectedHandler } from './route-context.js';

/**
 * Only the page's own inline script and style may run, by a nonce fresh on every response: even if
 * message HTML ever let markup through, it could not run script or load anything.
 */
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** `GET /inbox`: the self-contained web page. */
export const handlePage: ConnectedHandler = async () => {
  const nonce = randomBase62(24);
  return htmlResponse(200, renderInboxPage(nonce), {
    'content-security-policy': contentSecurityPolicy(nonce),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
};
