/** Inline content of the message markdown (docs/http-api.md#message-formatting). */
export type Inline =
  | { type: 'text'; value: string }
  | { type: 'bold'; children: Inline[] }
  | { type: 'italic'; children: Inline[] }
  | { type: 'code'; value: string }
  | { type: 'link'; url: string; children: Inline[] }
  | { type: 'break' };

/** Block content: paragraphs (whose lines are joined by `break`), bullet lists and code blocks. */
export type Block =
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'list'; items: Inline[][] }
  | { type: 'codeBlock'; value: string };

/** A parsed message. */
export interface MarkdownDocument {
  blocks: Block[];
}
