import type { ActionsBlock, Button, ContextBlock, KnownBlock, SectionBlock } from '@slack/web-api';
import {
  escapeMrkdwn,
  guardMentions,
  type MarkdownDocument,
  type MessageView,
  renderPlainText,
  splitMrkdwn,
} from '../../../core/adapter-kit.js';

/** Block Kit's limits (https://api.slack.com/reference/block-kit), in UTF-16 code units. */
export const blockKitLimits = {
  sectionText: 3000,
  buttonText: 75,
  buttonValue: 2000,
  contextText: 3000,
  blocks: 50,
} as const;

/** `block_id` of a message's buttons: names the request, and marks the buttons as ours. */
const actionsBlockPrefix = 'chat-notify:';

/** A message as `chat.postMessage` and `chat.update` take it. */
export interface SlackMessage {
  /** Plain fallback, shown in notifications and by clients that cannot show blocks. */
  text: string;
  blocks: KnownBlock[];
}

/**
 * The Block Kit message of a view (docs/slack.md): the text as mrkdwn sections, for an interactive
 * message with open buttons an `actions` block with one button per option (the current choice
 * highlighted), and a `context` footer. Once the buttons are closed they are left out, and the
 * footer tells the choice or the expiry.
 *
 * The buttons carry the request id (in `block_id`) and the option value, nothing else: a click is
 * routed and checked by the message it comes from, never by what the button says of itself.
 */
export function slackMessage(view: MessageView): SlackMessage {
  const { sections, fallback } = renderedText(view);
  const blocks: KnownBlock[] = sections.map(
    (text): SectionBlock => ({ type: 'section', text: { type: 'mrkdwn', text } }),
  );
  if (view.buttonsEnabled && view.buttons.length > 0) {
    const labels = buttonLabels(
      view.buttons.map((button) => button.text),
      blockKitLimits.buttonText,
    );
    const actions: ActionsBlock = {
      type: 'actions',
      block_id: `${actionsBlockPrefix}${view.sendId}`,
      elements: view.buttons.map(
        (button, index): Button => ({
          type: 'button',
          action_id: `option-${index}`,
          text: { type: 'plain_text', text: labels[index] ?? button.text, emoji: true },
          value: button.value,
          ...(button.value === view.selected ? { style: 'primary' } : {}),
        }),
      ),
    };
    blocks.push(actions);
  }
  if (view.footer !== null) {
    const footer: ContextBlock = {
      type: 'context',
      elements: [
        { type: 'plain_text', text: truncate(view.footer, blockKitLimits.contextText), emoji: true },
      ],
    };
    blocks.push(footer);
  }
  return { text: fallback, blocks };
}

/** The request id that a button's `block_id` names, or null for a block that is not ours. */
export function requestIdOfBlock(blockId: string): string | null {
  return blockId.startsWith(actionsBlockPrefix) ? blockId.slice(actionsBlockPrefix.length) : null;
}

/** The mrkdwn sections and the plain fallback of a message's text. */
interface RenderedText {
  /** The text the document was parsed from. */
  text: string;
  sections: readonly string[];
  fallback: string;
}

/**
 * Rendered texts by parsed document. Every view of one request version shares one document, so a
 * send to 50 people renders its text once, not once per recipient; a document no view refers to
 * any more is collected with its entry.
 */
const renderedTexts = new WeakMap<MarkdownDocument, RenderedText>();

function renderedText(view: MessageView): RenderedText {
  const cached = renderedTexts.get(view.document);
  if (cached !== undefined && cached.text === view.text) return cached;
  const rendered: RenderedText = {
    text: view.text,
    sections: sectionTexts(view),
    fallback: fallbackText(view),
  };
  renderedTexts.set(view.document, rendered);
  return rendered;
}

/**
 * A message of at most 4,000 code points renders to at most 20,000 units of mrkdwn (each `&`
 * becomes `&amp;`): seven sections, well within 50 blocks with the buttons and the footer.
 */
function sectionTexts(view: MessageView): string[] {
  const sections = splitMrkdwn(view.document, blockKitLimits.sectionText);
  // A message made only of refused links without text renders to nothing; show what was written.
  return sections.length > 0 ? sections : splitMrkdwn(literal(view.text), blockKitLimits.sectionText);
}

function fallbackText(view: MessageView): string {
  const plain = renderPlainText(view.document).trim();
  return escapeMrkdwn(guardMentions(plain === '' ? view.text : plain));
}

const literal = (text: string): MarkdownDocument => ({
  blocks: [{ type: 'paragraph', children: [{ type: 'text', value: text }] }],
});

/** The first code points of `text` that fit in `max` code units. */
function head(text: string, max: number): string {
  let out = '';
  for (const char of text) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}

/** The last code points of `text` that fit in `max` code units. */
const tail = (text: string, max: number): string =>
  [...head([...text].reverse().join(''), max)].reverse().join('');

/** `text` cut to `max` code units at a code point boundary, with an ellipsis when cut. */
function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${head(text, max - 1)}…`;
}

/** `text` cut in its middle to `max` code units, keeping its start and its end. */
function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = head(text, Math.floor((max - 1) / 2));
  return `${start}…${tail(text, max - 1 - start.length)}`;
}

/**
 * The labels of buttons within Slack's limit (counted in UTF-16 code units, the strictest reading),
 * never two alike when their texts differ: labels that a cut at the end makes alike (`🚀🚀… deploy
 * to staging` and `… to production`) are cut in their middle instead, and any still alike get their
 * place appended, so that nobody picks one believing it is the other.
 */
function buttonLabels(texts: readonly string[], max: number): string[] {
  const clashing = (labels: readonly string[], index: number): boolean =>
    labels.some(
      (label, other) => other !== index && label === labels[index] && texts[other] !== texts[index],
    );
  const ends = texts.map((text) => truncate(text, max));
  const middles = texts.map((text, index) =>
    clashing(ends, index) ? truncateMiddle(text, max) : ends[index]!,
  );
  const labels = [...middles];
  // A numbered label may meet an option whose text reads just like it: that one is numbered too,
  // and places differ, so a few rounds end it.
  for (let round = 0; round < texts.length; round += 1) {
    const numbering = labels.map((_, index) => clashing(labels, index));
    if (!numbering.includes(true)) break;
    numbering.forEach((numbered, index) => {
      if (!numbered) return;
      const place = ` (${index + 1})`;
      labels[index] = `${head(middles[index]!, max - place.length)}${place}`;
    });
  }
  return labels;
}
