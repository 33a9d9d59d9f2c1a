import type { InteractiveRequest } from '../domain/interactive-request.js';
import type { MessageView } from '../domain/message-view.js';
import { parseMarkdown } from '../markdown/parse.js';
import { formatDuration, formatUtc } from './format-time.js';

/** The view of a fire-and-forget message. */
export function plainView(notificationId: string, text: string): MessageView {
  return {
    kind: 'plain',
    sendId: notificationId,
    version: 0,
    text,
    document: parseMarkdown(text),
    buttons: [],
    buttonsEnabled: false,
    selected: null,
    selectedText: null,
    state: 'plain',
    footer: null,
  };
}

/**
 * The views of every recipient of one version of an interactive request (docs/behaviour.md#what-recipients-see). The message is
 * parsed once here, not once per recipient: a send to 50 people renders one document.
 */
export function requestViews(request: InteractiveRequest): (recipientKey: string) => MessageView {
  const document = parseMarkdown(request.message);
  const buttons = request.options.map(({ text, value }) => ({ text, value }));
  const sender = `Sent by ${request.sender.name}`;
  const until = formatUtc(request.expiresAt);
  const finished = request.status === 'finished';
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
    const footers: Record<MessageView['state'], string> = {
      plain: sender,
      open: `Please answer within ${formatDuration(request.expiresAt - request.createdAt)} (until ${until}) · ${sender}`,
      answered: `You answered “${selectedText}” · ${sender}`,
      changeable: `Your answer: “${selectedText}”. You can change it until ${until} · ${sender}`,
      expired: `This request expired at ${formatUtc(request.finishedAt ?? request.expiresAt)} without your answer · ${sender}`,
      closed: `Closed. Your answer: “${selectedText}” · ${sender}`,
    };
    return {
      kind: 'interactive',
      sendId: request.id,
      version: request.version,
      text: request.message,
      document,
      buttons,
      buttonsEnabled: state === 'open' || state === 'changeable',
      selected,
      selectedText,
      state,
      footer: footers[state],
    };
  };
}

/** What one recipient of an interactive request sees now (docs/behaviour.md#what-recipients-see). */
export function requestView(request: InteractiveRequest, recipientKey: string): MessageView {
  return requestViews(request)(recipientKey);
}
