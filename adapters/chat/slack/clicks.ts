import type { ChatSink, Logger } from '../../../core/adapter-kit.js';
import { requestIdOfBlock } from './blocks.js';
import type { SlackCopies } from './copies.js';
import type { BlockActions } from './interaction.js';

/** What applying clicks needs: the core, the records of delivered messages, a logger. */
export interface SlackClickContext {
  sink: ChatSink;
  copies: SlackCopies;
  logger: Logger;
}

/**
 * Slack repeats a request it thinks unanswered, with the same `action_ts`: one hour of memory of
 * the actions seen is far longer than Slack keeps trying.
 */
const seenActionTtlMs = 60 * 60_000;

const seenActionKey = (clicks: BlockActions, actionTs: string): string =>
  `action:${clicks.teamId ?? ''}:${clicks.userId}:${actionTs}`;

/**
 * Hands the clicks on one message to the core. A click counts only when it is on a message this
 * transport delivered, in the workspace it was delivered in, by the Slack user it was delivered to,
 * on a button of the request that message belongs to: the recipient comes from the record of the
 * message, never from the payload. A repeat of an action already taken changes nothing.
 */
export async function applyBlockActions(context: SlackClickContext, clicks: BlockActions): Promise<void> {
  const { sink, copies, logger } = context;
  for (const action of clicks.actions) {
    const requestId = requestIdOfBlock(action.blockId);
    if (requestId === null || action.value === undefined) continue;
    const copy = await copies.get(clicks.channel, clicks.ts);
    const where = { channel: clicks.channel, ts: clicks.ts, slackUserId: clicks.userId };
    if (copy === null) {
      logger.warn('Slack click on a message this transport has no record of: ignored', where);
      continue;
    }
    if (copy.teamId !== clicks.teamId || copy.slackUserId !== clicks.userId || copy.sendId !== requestId) {
      logger.warn('Slack click by someone other than the recipient of the message: refused', where);
      continue;
    }
    const seenKey = seenActionKey(clicks, action.actionTs);
    if ((await sink.state.compareAndSet(seenKey, '1', null, { ttlMs: seenActionTtlMs })) === null) {
      logger.debug('Slack repeated an action already taken: ignored', where);
      continue;
    }
    try {
      const outcome = await sink.click({ requestId, recipient: copy.recipient, value: action.value });
      logger.debug('Slack click applied', { requestId, outcome });
    } catch (error) {
      // Nothing was applied: let a repeat of this very action try again.
      await sink.state.delete(seenKey).catch(() => {});
      throw error;
    }
  }
}
