import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { MessageView } from '../domain/message-view.js';
import type { MarkdownDocument } from '../markdown/ast.js';
import { parseMarkdown } from '../markdown/parse.js';
import { formatDuration, formatUtc } from './format-time.js';

/**
 * The document of `text`, parsed on first use and then kept: a transport that shows the text as it
 * is (the inbox) never pays for parsing it.
 */
function lazyDocument(text: string): () => MarkdownDocument {
  let document: MarkdownDocument | undefined;
  return () => {
    document ??= parseMarkdown(text);
    return document;
  };
}

/** The fields of a view that are data; `document` is parsed when first read. */
type ViewFields = Omit<MessageView, 'document'>;

/** Set once, by {@link View}'s static block: the one accessor every view shares. */
let documentProperty: PropertyDescriptor;

/**
 * A view whose `document` is parsed on first read, yet is an own enumerable property as in a plain
 * object (a transport may spread a view). An object literal with a getter gets a fresh getter per
 * view, which drops each view into dictionary mode (about 1 KB and four times the time to build);
 * one accessor shared by every view keeps them small objects of one shape.
 */
class View implements MessageView {
  kind: MessageView['kind'];
  sendId: string;
  version: number;
  text: string;
  buttons: MessageView['buttons'];
  buttonsEnabled: boolean;
  selected: string | null;
  selectedText: string | null;
  state: MessageView['state'];
  expiresAt: number | null;
  footer: string | null;
  readonly #parsed: () => MarkdownDocument;
  declare readonly document: MarkdownDocument;

  constructor(fields: ViewFields, parsed: () => MarkdownDocument) {
    this.kind = fields.kind;
    this.sendId = fields.sendId;
    this.version = fields.version;
    this.text = fields.text;
    this.buttons = fields.buttons;
    this.buttonsEnabled = fields.buttonsEnabled;
    this.selected = fields.selected;
    this.selectedText = fields.selectedText;
    this.state = fields.state;
    this.expiresAt = fields.expiresAt;
    this.footer = fields.footer;
    this.#parsed = parsed;
    Object.defineProperty(this, 'document', documentProperty);
  }

  static {
    documentProperty = {
      get(this: View) {
        return this.#parsed();
      },
      enumerable: true,
      configurable: true,
    };
  }
}

/** The view of a fire-and-forget message. */
export function plainView(notificationId: string, text: string): MessageView {
  return new View(
    {
      kind: 'plain',
      sendId: notificationId,
      version: 0,
      text,
      buttons: [],
      buttonsEnabled: false,
      selected: null,
      selectedText: null,
      state: 'plain',
      expiresAt: null,
      footer: null,
    },
    lazyDocument(text),
  );
}

/**
 * The views of every recipient of one version of an interactive request (docs/behaviour.md#what-recipients-see).
 * What all recipients share is worked out once here, not once per recipient: the message is parsed
 * only if a transport reads `document` (the inbox never does), at most once for a send to 50
 * people, and each view formats only the footer of its own state.
 */
export function requestViews(request: InteractiveRequest): (recipientKey: string) => MessageView {
  const parsed = lazyDocument(request.message);
  const buttons = request.options.map(({ text, value }) => ({ text, value }));
  const sender = `Sent by ${isolated(request.sender.name)}`;
  const finished = request.status === 'finished';
  let until: string | undefined;
  const untilText = (): string => {
    until ??= formatUtc(request.expiresAt);
    return until;
  };
  let openFooter: string | undefined;
  let expiredFooter: string | undefined;
  const footer = (state: MessageView['state'], selectedText: string | null): string => {
    switch (state) {
      case 'plain':
        return sender;
      case 'open':
        openFooter ??= `Please answer within ${formatDuration(request.expiresAt - request.createdAt)} (until ${untilText()}) · ${sender}`;
        return openFooter;
      case 'answered':
        return `You answered “${isolated(selectedText ?? '')}” · ${sender}`;
      case 'changeable':
        return `Your answer: “${isolated(selectedText ?? '')}”. You can change it until ${untilText()} · ${sender}`;
      case 'expired':
        // At its deadline, however late the timeout ran (a click after it, an instance back from an outage).
        expiredFooter ??= `This request expired at ${untilText()} without your answer · ${sender}`;
        return expiredFooter;
      case 'closed':
        return `Closed. Your answer: “${isolated(selectedText ?? '')}” · ${sender}`;
    }
  };
  return (recipientKey) => {
    const recipient = request.recipients.find((r) => r.key === recipientKey);
    const selected = recipient?.value ?? null;
    const selectedText = request.options.find((o) => o.value === selected)?.text ?? null;
    const state: MessageView['state'] =
      selected === null
        ? finished
          ? 'expired'
          : 'open'
        : finished
          ? 'closed'
          : request.mode === 'onUserAction'
            ? 'answered'
            : 'changeable';
    return new View(
      {
        kind: 'interactive',
        sendId: request.id,
        version: request.version,
        text: request.message,
        buttons,
        buttonsEnabled: state === 'open' || state === 'changeable',
        selected,
        selectedText,
        state,
        expiresAt: request.expiresAt,
        footer: footer(state, selectedText),
      },
      parsed,
    );
  };
}

/** Characters that set the direction of the text after them: an override, an embedding, a mark. */
const directionControls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * A caller's text (an option, a name) set in a footer, isolated (U+2068 … U+2069) when it holds a
 * direction control: an unclosed right-to-left override in an option would otherwise turn the rest
 * of the footer around, and could make it show another sender than the real one.
 */
const isolated = (text: string): string => (directionControls.test(text) ? `\u2068${text}\u2069` : text);

/** What one recipient of an interactive request sees now (docs/behaviour.md#what-recipients-see). */
export function requestView(request: InteractiveRequest, recipientKey: string): MessageView {
  return requestViews(request)(recipientKey);
}
