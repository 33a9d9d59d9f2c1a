import type { Block, Inline, MarkdownDocument } from './ast.js';

/**
 * The document as plain text: formatting marks removed, line breaks kept, list items as `- item`,
 * blocks separated by a blank line, and links as `text (url)` (just `url` when the text is the URL
 * or empty). Meant for previews and fallbacks, not for HTML: nothing is escaped.
 */
export function renderPlainText(document: MarkdownDocument): string {
  return document.blocks.map(renderBlock).join('\n\n');
}

/** Plain text of inline content, with the rules of {@link renderPlainText}. */
export function renderPlainInlines(inlines: readonly Inline[]): string {
  return inlines.map(renderInline).join('');
}

function renderBlock(block: Block): string {
  switch (block.type) {
    case 'paragraph':
      return renderPlainInlines(block.children);
    case 'list':
      return block.items.map((item) => `- ${renderPlainInlines(item)}`).join('\n');
    case 'codeBlock':
      return block.value;
  }
}

function renderInline(inline: Inline): string {
  switch (inline.type) {
    case 'text':
    case 'code':
      return inline.value;
    case 'bold':
    case 'italic':
      return renderPlainInlines(inline.children);
    case 'break':
      return '\n';
    case 'link': {
      const text = renderPlainInlines(inline.children);
      return text === '' || text === inline.url ? inline.url : `${text} (${inline.url})`;
    }
  }
}
