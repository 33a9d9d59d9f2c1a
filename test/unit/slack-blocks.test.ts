import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requestIdOfBlock, slackMessage } from '../../adapters/chat/slack/blocks.js';
import { plainView, requestView, requestViews } from '../../core/request/message-view.js';
import {
  sampleCreatedAt,
  sampleRecipient,
  sampleRecipientState,
  sampleRequest,
} from '../support/sample-request.js';

const createdAt = sampleCreatedAt;
const bob = sampleRecipient;
const recipient = sampleRecipientState;
const request = sampleRequest;

const openView = requestView(request(), bob);

describe('slackMessage', () => {
  it('renders an open interactive message: mrkdwn section, one button per option, footer', () => {
    expect(slackMessage(openView)).toEqual({
      text: 'Deploy v2.3 to production?\n\n- api\n- web\n\nSee the runbook (https://wiki.example.com/deploy?env=prod&amp;v=2.3).',
      blocks: [
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: 'Deploy *v2.3* to _production_?\n\n• `api`\n• `web`\n\nSee <https://wiki.example.com/deploy?env=prod&amp;v=2.3|the runbook>.',
          },
        },
        {
          type: 'actions',
          block_id: 'chat-notify:req_0123456789abcdefABCDEF01',
          elements: [
            {
              type: 'button',
              action_id: 'option-0',
              text: { type: 'plain_text', text: 'Approve ✅', emoji: true },
              value: 'approve',
            },
            {
              type: 'button',
              action_id: 'option-1',
              text: { type: 'plain_text', text: 'Reject', emoji: true },
              value: 'reject',
            },
          ],
        },
        {
          type: 'context',
          elements: [{ type: 'plain_text', text: openView.footer, emoji: true }],
        },
      ],
    });
    expect(openView.footer).toContain('Alice Doe');
  });

  it('leaves the buttons out once the choice is final, and shows it in the footer', () => {
    const answered = requestView(request({ version: 2, recipients: [recipient('approve')] }), bob);
    const { blocks } = slackMessage(answered);
    expect(blocks.map((block) => block.type)).toEqual(['section', 'context']);
    expect(JSON.stringify(blocks.at(-1))).toContain('Approve ✅');
  });

  it('leaves the buttons out at expiry, and says so in the footer', () => {
    const expired = requestView(
      request({ version: 2, status: 'finished', finishedAt: createdAt + 60 * 60_000 }),
      bob,
    );
    const { blocks } = slackMessage(expired);
    expect(blocks.map((block) => block.type)).toEqual(['section', 'context']);
    expect(JSON.stringify(blocks.at(-1))).toMatch(/expired/);
  });

  it('keeps the buttons of a changeable answer and highlights the current choice', () => {
    const changeable = requestView(request({ mode: 'onTimeout', recipients: [recipient('reject')] }), bob);
    const actions = slackMessage(changeable).blocks.find((block) => block.type === 'actions');
    expect(actions).toMatchObject({
      elements: [{ value: 'approve' }, { value: 'reject', style: 'primary' }],
    });
    expect(actions && 'elements' in actions && actions.elements[0]).not.toHaveProperty('style');
  });

  it('renders every view of one request version, sharing its parsed text, as if each were alone', () => {
    const carol = 'carol@acme.test';
    const both = request({
      recipients: [recipient('approve'), { ...recipient(null), email: carol, key: carol }],
    });
    const views = requestViews(both);
    const shared = [slackMessage(views(bob)), slackMessage(views(carol))];
    // Each message is drawn as it would be from a view parsed on its own.
    expect(shared).toEqual([slackMessage(requestView(both, bob)), slackMessage(requestView(both, carol))]);
    expect(shared[0]?.blocks.map((block) => block.type)).toEqual(['section', 'context']);
    expect(shared[1]?.blocks.map((block) => block.type)).toEqual(['section', 'actions', 'context']);
    // A caller changing one message changes no other.
    const [first] = shared[0]?.blocks ?? [];
    if (first?.type === 'section' && first.text) first.text.text = 'changed';
    expect(slackMessage(views(carol)).blocks[0]).toEqual(slackMessage(requestView(both, carol)).blocks[0]);
  });

  it('renders a plain message as sections only', () => {
    expect(slackMessage(plainView('notif_0123456789abcdefABCDEF01', 'Deploy *done*'))).toEqual({
      text: 'Deploy done',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Deploy *done*' } }],
    });
  });

  it('keeps @here typed in a message a word in the notification text too, as in its sections', () => {
    const message = slackMessage(plainView('notif_0123456789abcdefABCDEF01', 'Heads up @here'));
    expect(message.text).toBe('Heads up @\u200bhere');
    expect(message.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: 'Heads up @\u200bhere' } },
    ]);
  });

  it('respects Block Kit limits for the largest message: sections of 3,000 at most, 50 blocks at most', () => {
    const { blocks } = slackMessage(requestView(request({ message: '&'.repeat(4000) }), bob));
    expect(blocks.length).toBeLessThanOrEqual(50);
    const sections = blocks.flatMap((block) =>
      block.type === 'section' && block.text ? [block.text.text] : [],
    );
    expect(sections.length).toBe(7);
    for (const text of sections) expect(text.length).toBeLessThanOrEqual(3000);
    expect(sections.join('')).toBe('&amp;'.repeat(4000));
  });

  it('shortens a button text longer than 75 code units at a character boundary', () => {
    const label = '😀'.repeat(75);
    const view = requestView(
      request({
        options: [
          { text: label, value: 'a' },
          { text: 'B', value: 'b' },
        ],
      }),
      bob,
    );
    const actions = slackMessage(view).blocks.find((block) => block.type === 'actions');
    const text = actions && 'elements' in actions ? JSON.stringify(actions.elements[0]) : '';
    const shown = (JSON.parse(text) as { text: { text: string } }).text.text;
    expect(shown.length).toBeLessThanOrEqual(75);
    expect(shown).toBe(`${'😀'.repeat(37)}…`);
  });

  /** The button labels Slack gets for options of these texts. */
  const labelsOf = (texts: readonly string[]): string[] => {
    const view = requestView(
      request({ options: texts.map((text, index) => ({ text, value: `v${index}` })) }),
      bob,
    );
    const actions = slackMessage(view).blocks.find((block) => block.type === 'actions');
    const elements = actions && 'elements' in actions ? actions.elements : [];
    return elements.map(
      (element) => (JSON.parse(JSON.stringify(element)) as { text: { text: string } }).text.text,
    );
  };

  it('never shows two buttons alike when their texts differ past the limit: it cuts them in the middle', () => {
    const [staging, production] = labelsOf([
      `${'🚀'.repeat(40)} deploy to staging`,
      `${'🚀'.repeat(40)} deploy to production`,
    ]);
    expect(staging).not.toBe(production);
    for (const label of [staging, production]) expect(label?.length).toBeLessThanOrEqual(75);
    expect(staging).toMatch(/^🚀+…🚀* deploy to staging$/u);
    expect(production).toMatch(/^🚀+…🚀* deploy to production$/u);
  });

  it('tells apart by their place buttons that differ only where both cuts fall', () => {
    const labels = labelsOf([
      `${'😀'.repeat(37)}x${'😀'.repeat(37)}`,
      `${'😀'.repeat(37)}y${'😀'.repeat(37)}`,
      'No',
    ]);
    expect(new Set(labels).size).toBe(3);
    expect(labels[0]).toMatch(/ \(1\)$/);
    expect(labels[1]).toMatch(/ \(2\)$/);
    expect(labels[2]).toBe('No');
    for (const label of labels) expect(label.length).toBeLessThanOrEqual(75);
  });

  it('numbers again an option whose own text reads like another one numbered', () => {
    const staging = `${'🚀'.repeat(37)} staging ${'🚀'.repeat(20)}`;
    const production = `${'🚀'.repeat(37)} production ${'🚀'.repeat(20)}`;
    const [first] = labelsOf([staging, production]);
    const labels = labelsOf([staging, production, first ?? '']);
    expect(new Set(labels).size).toBe(3);
    for (const label of labels) expect(label.length).toBeLessThanOrEqual(75);
  });

  it('shows the source of a message that renders to nothing, so no section is empty', () => {
    const { blocks } = slackMessage(plainView('notif_0123456789abcdefABCDEF01', '[ ](javascript:alert(1))'));
    expect(blocks).toEqual([{ type: 'section', text: { type: 'mrkdwn', text: '[ ](javascript:alert(1))' } }]);
  });

  it('names the request in the block id of the buttons, and nothing else', () => {
    expect(requestIdOfBlock('chat-notify:req_0123456789abcdefABCDEF01')).toBe('req_0123456789abcdefABCDEF01');
    expect(requestIdOfBlock('someone-elses-block')).toBeNull();
  });

  it('matches the Block Kit JSON shown in docs/slack.md', () => {
    const docs = readFileSync(new URL('../../docs/slack.md', import.meta.url), 'utf8');
    const json = /<!-- block-kit-example -->\s*```json\n([\s\S]*?)\n```/.exec(docs)?.[1];
    expect(json).toBeDefined();
    expect(JSON.parse(json ?? 'null')).toEqual(slackMessage(openView));
  });
});
