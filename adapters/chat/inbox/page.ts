import { pageScript } from './page-script.js';
import { pageStyle } from './page-style.js';

/**
 * The inbox page. It holds no data of its own (the script fetches everything), so the only value
 * interpolated here is the nonce, which is base62 and needs no escaping.
 */
export function renderInboxPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Local inbox · chat-notify</title>
<style nonce="${nonce}">${pageStyle}</style>
</head>
<body>
<header class="bar">
  <div class="brand">
    <span class="logo" aria-hidden="true">✉</span>
    <div>
      <h1>Local inbox</h1>
      <p class="tagline">chat-notify · a chat platform for development</p>
    </div>
  </div>
  <label class="picker">
    <span>Viewing as</span>
    <select id="user"><option value="">Loading users…</option></select>
  </label>
</header>
<main id="feed"></main>
<p id="status" class="status" role="status"></p>
<script nonce="${nonce}">${pageScript}</script>
</body>
</html>
`;
}
