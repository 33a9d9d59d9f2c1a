import type { Block, Inline, MarkdownDocument } from './ast.js';
import { renderPlainInlines } from './render-plain.js';
import { safeLinkUrl } from './safe-url.js';

const LINK_ATTRIBUTES = 'rel="noopener noreferrer nofollow" target="_blank"';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * The document as HTML that is safe to insert into a page (the local inbox).
 *
 * Only `p`, `br`, `ul`, `li`, `pre`, `code`, `strong`, `em` and `a` are ever produced, and every piece
 * of text, attribute values included, is escaped. A link becomes an `<a>` only when
 * {@link safeLinkUrl} accepts its URL; otherwise just its text is shown, as plain text.
 */
export function renderHtml(document: MarkdownDocument): string {
  return document.blocks.map(renderBlock).join('');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function renderBlock(block: Block): string {
  switch (block.type) {
    case 'paragraph':
      return `<p>${renderInlines(block.children, false)}</p>`;
    case 'list':
      return `<ul>${block.items.map((item) => `<li>${renderInlines(item, false)}</li>`).join('')}</ul>`;
    case 'codeBlock':
      return `<pre><code>${escapeHtml(block.value)}</code></pre>`;
  }
}

/** `inLink` guards documents built by hand: an `<a>` inside an `<a>` is invalid HTML, so inner links lose theirs. */
function renderInlines(inlines: readonly Inline[], inLink: boolean): string {
  return inlines.map((inline) => renderInline(inline, inLink)).join('');
}

function renderInline(inline: Inline, inLink: boolean): string {
  switch (inline.type) {
    case 'text':
      return escapeHtml(inline.value);
    case 'bold':
      return `<strong>${renderInlines(inline.children, inLink)}</strong>`;
    case 'italic':
      return `<em>${renderInlines(inline.children, inLink)}</em>`;
    case 'code':
      return `<code>${escapeHtml(inline.value)}</code>`;
    case 'break':
      return '<br>';
    case 'link':
      return renderLink(inline.url, inline.children, inLink);
  }
}

function renderLink(url: string, children: readonly Inline[], inLink: boolean): string {
  const href = inLink ? null : safeLinkUrl(url);
  // Refused, it is its text; without text, its URL as text, so that nothing written is lost.
  if (href === null) return escapeHtml(renderPlainInlines(children) || url);
  const content = children.length === 0 ? escapeHtml(url) : renderInlines(children, true);
  return `<a href="${escapeHtml(href)}" ${LINK_ATTRIBUTES}>${content}</a>`;
}
