import type { ChatSink, Logger } from '../../../core/adapter-kit.js';
import { requestIdOfBlock } from './blocks.js';
import { readSlackRef, type SlackClicker, type SlackCopies } from './copies.js';
import type { BlockActions } from './interaction.js';

/** What applying clicks needs: the core (with its copies), the records earlier releases kept, a logger. */
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
 * Who may click on the message `channel`/`ts` of `requestId`: found among the copies the core
 * recorded of the request, by their refs, or for a message of an earlier release in the record it
 * kept. Null when the message is no copy of that request this transport knows of.
 */
async function clickerOf(
  { sink, copies }: SlackClickContext,
  requestId: string,
  channel: string,
  ts: string,
): Promise<SlackClicker | null> {
  const copy = (await sink.copies(requestId)).find(({ ref }) => ref.channel === channel && ref.ts === ts);
  const delivered = copy === undefined ? null : readSlackRef(copy.ref).delivered;
  if (copy !== undefined && delivered !== null) {
    return { teamId: delivered.installationId, slackUserId: delivered.userRef, recipient: copy.recipient };
  }
  const legacy = await copies.legacy(channel, ts);
  return legacy !== null && legacy.sendId === requestId ? legacy : null;
}

/**
 * Hands the clicks on one message to the core. A click counts only when it is on a copy of the
 * request its buttons name that this transport delivered, in the workspace it was delivered in, by
 * the Slack user it was delivered to: the recipient comes from what was recorded of the copy, never
 * from the payload. A repeat of an action already taken changes nothing.
 */
export async function applyBlockActions(context: SlackClickContext, clicks: BlockActions): Promise<void> {
  const { sink, logger } = context;
  for (const action of clicks.actions) {
    const requestId = requestIdOfBlock(action.blockId);
    if (requestId === null || action.value === undefined) continue;
    const clicker = await clickerOf(context, requestId, clicks.channel, clicks.ts);
    const where = { channel: clicks.channel, ts: clicks.ts, slackUserId: clicks.userId };
    if (clicker === null) {
      logger.warn('Slack click on a message this transport has no record of: ignored', where);
      continue;
    }
    if (clicker.teamId !== clicks.teamId || clicker.slackUserId !== clicks.userId) {
      logger.warn('Slack click by someone other than the recipient of the message: refused', where);
      continue;
    }
    const seenKey = seenActionKey(clicks, action.actionTs);
    if ((await sink.state.compareAndSet(seenKey, '1', null, { ttlMs: seenActionTtlMs })) === null) {
      logger.debug('Slack repeated an action already taken: ignored', where);
      continue;
    }
    try {
      const outcome = await sink.click({ requestId, recipient: clicker.recipient, value: action.value });
      logger.debug('Slack click applied', { requestId, outcome });
    } catch (error) {
      // Nothing was applied: let a repeat of this very action try again.
      await sink.state.delete(seenKey).catch(() => {});
      throw error;
    }
  }
}
