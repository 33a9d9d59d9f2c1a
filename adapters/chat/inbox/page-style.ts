/** The page's stylesheet: a light chat client look, with a dark variant that follows the system. */
export const pageStyle = `
:root {
  color-scheme: light dark;
  --bg: #f3f4f8; --panel: #ffffff; --text: #1d2330; --muted: #667085; --line: #e3e6ee;
  --accent: #4f46e5; --accent-soft: #eef0ff; --accent-text: #ffffff; --code: #f1f3f7;
  --ok: #067647; --ok-soft: #e7f6ee; --error: #b42318; --error-soft: #fdecea;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151c; --panel: #1b1f29; --text: #e6e8ee; --muted: #9aa3b5; --line: #2a3040;
    --accent: #8b85ff; --accent-soft: #262a45; --accent-text: #10121a; --code: #242a37;
    --ok: #5fd39a; --ok-soft: #17302a; --error: #ff8a80; --error-soft: #3a1f22;
  }
}
* { box-sizing: border-box; }
html, body { margin: 0; }
body {
  background: var(--bg); color: var(--text);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
.bar {
  position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 12px;
  align-items: center; justify-content: space-between; padding: 12px 20px;
  background: var(--panel); border-bottom: 1px solid var(--line);
}
.brand { display: flex; align-items: center; gap: 12px; }
.logo {
  display: grid; place-items: center; width: 36px; height: 36px; border-radius: 10px;
  background: var(--accent); color: var(--accent-text); font-size: 18px;
}
h1 { margin: 0; font-size: 17px; }
.tagline { margin: 0; color: var(--muted); font-size: 12px; }
.picker { display: flex; align-items: center; gap: 8px; color: var(--muted); font-size: 13px; }
select {
  min-width: 240px; max-width: 70vw; padding: 7px 10px; border-radius: 8px;
  border: 1px solid var(--line); background: var(--bg); color: var(--text); font: inherit;
}
main {
  max-width: 760px; margin: 0 auto; padding: 20px 16px 72px; display: grid; gap: 14px;
  /* A column no wider than the page: a long line of code scrolls in its box, not the page. */
  grid-template-columns: minmax(0, 1fr);
}
.empty { text-align: center; color: var(--muted); padding: 48px 0; }
.msg { display: flex; gap: 10px; align-items: flex-start; }
.avatar {
  flex: none; display: grid; place-items: center; width: 34px; height: 34px; border-radius: 50%;
  background: var(--accent-soft); color: var(--accent); font-weight: 700; font-size: 14px;
}
.bubble {
  flex: 1; min-width: 0; background: var(--panel); border: 1px solid var(--line);
  border-radius: 4px 14px 14px 14px; padding: 10px 14px; box-shadow: 0 1px 2px rgb(0 0 0 / 5%);
}
.meta { display: flex; align-items: center; gap: 8px; margin-bottom: 4px; font-size: 13px; }
.sender { font-weight: 600; }
.badge { padding: 1px 8px; border-radius: 999px; font-size: 11px; background: var(--code); color: var(--muted); }
.badge.interactive { background: var(--accent-soft); color: var(--accent); }
.content { overflow-wrap: anywhere; }
.content p { margin: 0 0 6px; }
.content > :last-child { margin-bottom: 0; }
.content ul { margin: 4px 0 6px; padding-left: 22px; }
.content code { background: var(--code); border-radius: 4px; padding: 1px 4px; font-size: 90%; }
.content pre { background: var(--code); border-radius: 8px; padding: 10px 12px; overflow-x: auto; margin: 6px 0; }
.content pre code { background: none; padding: 0; }
.content a { color: var(--accent); }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0 4px; }
.actions button {
  padding: 6px 14px; border-radius: 8px; border: 1px solid var(--accent); cursor: pointer;
  background: var(--panel); color: var(--accent); font: inherit; font-weight: 600;
  max-width: 100%; overflow-wrap: anywhere;
}
.actions button:hover:not(:disabled) { background: var(--accent-soft); }
.actions button.selected { background: var(--accent); color: var(--accent-text); }
.actions button:disabled { opacity: 0.55; cursor: default; }
.choice {
  display: inline-block; margin: 8px 0 2px; padding: 3px 10px; border-radius: 8px;
  max-width: 100%; overflow-wrap: anywhere;
  background: var(--ok-soft); color: var(--ok); font-size: 13px;
}
.choice strong { font-weight: 700; unicode-bidi: isolate; }
/* The footer and the status line may quote a chosen label: 75 characters without a space. */
.footer { margin: 6px 0 0; color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.status {
  position: fixed; left: 50%; bottom: 16px; transform: translateX(-50%); margin: 0;
  max-width: calc(100% - 32px); padding: 6px 14px; border-radius: 999px; font-size: 13px;
  text-align: center; background: var(--panel); overflow-wrap: anywhere;
  border: 1px solid var(--line); box-shadow: 0 2px 8px rgb(0 0 0 / 10%);
}
.status:empty { display: none; }
.status.error { background: var(--error-soft); color: var(--error); border-color: var(--error); }
`;
