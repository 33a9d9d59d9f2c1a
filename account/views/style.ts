/**
 * The pages' stylesheet: readable at any width (tables become one card per key on a phone), large
 * targets, a visible keyboard focus, and a dark variant that follows the system.
 */
export const pageStyle = `
:root {
  color-scheme: light dark;
  --bg: #f3f4f8; --panel: #ffffff; --text: #1d2330; --muted: #5d6679; --line: #dde1ea;
  --accent: #4338ca; --accent-text: #ffffff; --danger: #b42318; --danger-soft: #fdecea;
  --ok: #067647; --ok-soft: #e7f6ee; --code: #eef0f5;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151c; --panel: #1b1f29; --text: #e6e8ee; --muted: #a3abbc; --line: #2d3446;
    --accent: #a5a1ff; --accent-text: #10121a; --danger: #ff8a80; --danger-soft: #3a1f22;
    --ok: #5fd39a; --ok-soft: #17302a; --code: #262c3a;
  }
}
* { box-sizing: border-box; }
html, body { margin: 0; }
body {
  background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; z-index: 2; background: var(--panel); padding: 8px 12px; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
header.bar {
  display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; justify-content: space-between;
  padding: 10px 20px; background: var(--panel); border-bottom: 1px solid var(--line);
}
.brand { font-weight: 700; }
nav ul { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 0; padding: 0; list-style: none; align-items: center; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--text); }
.who { color: var(--muted); font-size: 14px; }
nav li { min-width: 0; overflow-wrap: anywhere; }
main { max-width: 980px; margin: 0 auto; padding: 20px 16px 48px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 28px 0 8px; }
.lead { color: var(--muted); margin: 0 0 16px; }
section.panel {
  background: var(--panel); border: 1px solid var(--line); border-radius: 12px; padding: 16px 20px; margin: 16px 0;
}
section.panel > h2:first-child { margin-top: 0; }
form.inline { display: inline; }
.field { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
.field > div { display: grid; gap: 4px; flex: 1 1 240px; }
form[role="search"] { margin-bottom: 8px; }
label { font-weight: 600; font-size: 14px; }
input[type="text"], input[type="email"], input[type="password"], input[type="search"] {
  width: 100%; min-height: 44px; padding: 8px 12px; border-radius: 8px; border: 1px solid var(--muted);
  background: var(--bg); color: var(--text); font: inherit;
}
button {
  min-height: 44px; padding: 8px 16px; border-radius: 8px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-text); font: inherit; font-weight: 600; cursor: pointer;
}
button.secondary { background: var(--panel); color: var(--accent); }
button.danger { background: var(--panel); color: var(--danger); border-color: var(--danger); }
button.link { min-height: 0; padding: 0; border: 0; background: none; color: var(--accent); text-decoration: underline; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 10px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
td { overflow-wrap: anywhere; }
/* Breaking anywhere is for labels, which may have no space: a button, a time ("Never" too) or a
   badge broken so reads letter by letter. */
td button { white-space: nowrap; }
td time, td > .muted, td .badge { overflow-wrap: normal; }
th { font-size: 13px; color: var(--muted); text-transform: uppercase; letter-spacing: 0.03em; }
code { background: var(--code); border-radius: 4px; padding: 1px 5px; font-size: 90%; overflow-wrap: anywhere; }
td:not([data-label="Address"]) > code:first-child, td > div > code:first-child { white-space: nowrap; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 13px; background: var(--code); }
.badge.revoked { background: var(--danger-soft); color: var(--danger); }
p, dialog { overflow-wrap: anywhere; }
.notice { padding: 10px 14px; border-radius: 8px; margin: 12px 0; }
.notice.ok { background: var(--ok-soft); color: var(--ok); }
.notice.error { background: var(--danger-soft); color: var(--danger); }
.notice:empty { display: none; }
.empty { color: var(--muted); padding: 12px 0; }
dialog {
  max-width: min(560px, calc(100vw - 24px)); border: 1px solid var(--line); border-radius: 12px;
  background: var(--panel); color: var(--text); padding: 20px;
}
dialog::backdrop { background: rgb(0 0 0 / 45%); }
dialog h2 { margin-top: 0; }
.secret { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
.secret input { flex: 1 1 260px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; justify-content: flex-end; margin-top: 16px; }
section.panel.card { max-width: 420px; margin: 48px auto; }
.card form { display: grid; gap: 12px; }
@media (max-width: 700px) {
  main { padding: 12px 10px 40px; }
  section.panel { padding: 12px; }
  table.keys thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.keys, table.keys tbody, table.keys tr, table.keys td { display: block; width: 100%; }
  table.keys tr { border: 1px solid var(--line); border-radius: 10px; margin: 0 0 12px; padding: 6px 10px; }
  table.keys td { border: 0; padding: 4px 0; display: flex; gap: 12px; justify-content: space-between; text-align: right; }
  table.keys td::before { content: attr(data-label); flex: none; font-weight: 600; color: var(--muted); text-align: left; }
}
`;
