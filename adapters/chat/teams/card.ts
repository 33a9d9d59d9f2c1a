import { type MessageView, renderPlainText } from '../../../core/adapter-kit.js';
import { answerVerb } from './activity.js';
import {
  type AdaptiveElement,
  type AdaptiveTextBlock,
  escapeCardText,
  renderAdaptiveCardBody,
  renderAdaptiveCardPlainBody,
  withoutControls,
} from './card-markdown.js';

/** A button of a card: an `Action.Execute` that comes back as an `adaptiveCard/action` invoke. */
export interface AdaptiveExecuteAction {
  type: 'Action.Execute';
  title: string;
  verb: typeof answerVerb;
  data: { requestId: string; value: string };
  /** The current choice, while it may still change. */
  style?: 'positive';
}

/** An Adaptive Card (schema 1.5, which Teams supports), as this transport builds them. */
export interface AdaptiveCard {
  type: 'AdaptiveCard';
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
  version: '1.5';
  body: AdaptiveElement[];
  actions?: AdaptiveExecuteAction[];
}

/** The content type of an Adaptive Card attachment and of an invoke answer that carries one. */
export const adaptiveCardContentType = 'application/vnd.microsoft.card.adaptive';

/**
 * Teams refuses messages above about 28 KB. A card whose text renders larger than this (thousands
 * of short lines) is sent in its compact form.
 */
export const maxCardBytes = 20_000;

/**
 * The card of a view (docs/teams.md): the message as TextBlocks, one `Action.Execute` per option
 * while the buttons are open (the current choice styled `positive`), and a small, subtle footer with
 * the validity and the sender, or the outcome. The buttons name their request and value; a click
 * is still checked against the copy of that request the message is, as the core recorded it.
 */
export function adaptiveCard(view: MessageView): AdaptiveCard {
  const footer: AdaptiveTextBlock[] =
    view.footer === null
      ? []
      : [
          {
            type: 'TextBlock',
            text: escapeCardText(view.footer, true),
            wrap: true,
            spacing: 'Medium',
            size: 'Small',
            isSubtle: true,
            separator: true,
          },
        ];
  const actions: AdaptiveExecuteAction[] =
    view.buttonsEnabled && view.buttons.length > 0
      ? view.buttons.map((button) => ({
          type: 'Action.Execute',
          title: withoutControls(button.text),
          verb: answerVerb,
          data: { requestId: view.sendId, value: button.value },
          ...(button.value === view.selected ? { style: 'positive' as const } : {}),
        }))
      : [];
  const card = (body: AdaptiveElement[]): AdaptiveCard => ({
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: '1.5',
    body: [...body, ...footer],
    ...(actions.length > 0 ? { actions } : {}),
  });
  const full = card(messageBody(view));
  if (Buffer.byteLength(JSON.stringify(full)) <= maxCardBytes) return full;
  return card(renderAdaptiveCardPlainBody(view.document));
}

/** A message made only of refused links without text renders to nothing; then what was written is shown. */
function messageBody(view: MessageView): AdaptiveElement[] {
  const body = renderAdaptiveCardBody(view.document);
  if (body.length > 0) return body;
  return [{ type: 'TextBlock', text: escapeCardText(view.text, true), wrap: true }];
}

/** Longest notification preview, in code points. */
const summaryLength = 200;

/** The message activity that carries a card, with a plain preview for notifications. */
export function cardMessage(view: MessageView, card: AdaptiveCard) {
  const plain = [...withoutControls(renderPlainText(view.document)).replace(/\s+/g, ' ').trim()];
  const summary =
    plain.length > summaryLength ? `${plain.slice(0, summaryLength - 1).join('')}…` : plain.join('');
  return {
    type: 'message',
    summary: summary === '' ? [...withoutControls(view.text)].slice(0, summaryLength).join('') : summary,
    attachments: [{ contentType: adaptiveCardContentType, content: card }],
  };
}

/** The answer to an `adaptiveCard/action` invoke that replaces the clicked card with `card`. */
export function cardInvokeResponse(card: AdaptiveCard) {
  return { statusCode: 200, type: adaptiveCardContentType, value: card };
}

/**
 * The answer to an `adaptiveCard/action` invoke that refuses it: Teams shows `message` to the user
 * and leaves the card as it is.
 */
export function errorInvokeResponse(statusCode: 400 | 403 | 404, message: string) {
  const codes = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound' } as const;
  return { statusCode, type: 'application/vnd.microsoft.error', value: { code: codes[statusCode], message } };
}
