import type { ChatSink, Logger } from '../../../core/adapter-kit.js';
import { cardActionOf, type TeamsActivity } from './activity.js';
import { adaptiveCard, cardInvokeResponse, errorInvokeResponse } from './card.js';
import { readTeamsRef, type TeamsCopies } from './copies.js';
import type { TeamsMembers } from './members.js';

/**
 * The copies whose click is being answered in this process, by copy key, with a count (a double
 * click answers twice at once). The invoke's answer replaces such a copy's card, so an update of it
 * meanwhile only records its view: the answer carries the newest.
 */
export class AnsweringCopies {
  readonly #counts = new Map<string, number>();

  static key(conversationId: string, activityId: string): string {
    return JSON.stringify([conversationId, activityId]);
  }

  has(key: string): boolean {
    return this.#counts.has(key);
  }

  async during<T>(key: string, work: () => Promise<T>): Promise<T> {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const left = (this.#counts.get(key) ?? 1) - 1;
      if (left > 0) this.#counts.set(key, left);
      else this.#counts.delete(key);
    }
  }
}

/** What answering clicks needs. */
export interface ClickContext {
  sink: ChatSink;
  copies: TeamsCopies;
  members: TeamsMembers;
  answering: AnsweringCopies;
  logger: Logger;
}

/** The body of the invoke's answer (HTTP 200): a card, or an error Teams shows to the clicker. */
export type InvokeAnswer = ReturnType<typeof cardInvokeResponse> | ReturnType<typeof errorInvokeResponse>;

/**
 * Teams repeats an invoke it got no good answer to, with the same activity id: one hour of memory of
 * the invokes taken is far longer than it keeps trying.
 */
const seenInvokeTtlMs = 60 * 60_000;

/** The copy a click was made on: whose it is, as chat-notify and Teams know them. */
interface ClickedCopy {
  /** Normalized address of the recipient. */
  recipient: string;
  /** Lower-case tenant id. */
  tenantId: string;
  /** The recipient's Teams id: the only user whose clicks on the message count. */
  userId: string;
  /** The recipient's Microsoft Entra object id, when known. */
  aadObjectId: string | null;
}

/**
 * The copy of request `requestId` that is the message `conversationId`/`activityId`, or null when
 * that request has no such copy: found among the copies the core recorded, by its ref, or, for a
 * message of an earlier release, by the record that release kept.
 */
async function clickedCopy(
  { sink, copies, members }: ClickContext,
  requestId: string,
  conversationId: string,
  activityId: string,
): Promise<ClickedCopy | null> {
  const copy = (await sink.copies(requestId)).find(
    ({ ref }) => ref.conversationId === conversationId && ref.activityId === activityId,
  );
  const delivered = copy === undefined ? null : readTeamsRef(copy.ref).delivered;
  if (copy !== undefined && delivered !== null) {
    const { installationId: tenantId, userRef: userId } = delivered;
    const member = await members.get(tenantId, userId);
    return { recipient: copy.recipient, tenantId, userId, aadObjectId: member?.aadObjectId ?? null };
  }
  const legacy = await copies.legacy(conversationId, activityId);
  return legacy === null || legacy.sendId !== requestId ? null : legacy;
}

/** Whether the clicker is the copy's recipient: the same Teams id, and the same Entra object id when both are known. */
function isRecipient(copy: ClickedCopy, activity: TeamsActivity): boolean {
  const { id, aadObjectId } = activity.from;
  if (id !== copy.userId) return false;
  return aadObjectId === undefined || copy.aadObjectId === null || aadObjectId === copy.aadObjectId;
}

/**
 * Answers an `adaptiveCard/action` invoke. The click counts only on a message this transport
 * delivered for the request its button names, in its tenant, by its recipient: the recipient comes
 * from the copy the core recorded, never from the activity. The answer is the card the message
 * should show now (the answered one after a click that counted), after the click is stored. A repeat
 * of an invoke already taken (Teams' retries) and a click that changes nothing (a double click) are
 * answered with the current card and change nothing; a refused click is answered with an error
 * Teams shows, and changes nothing either.
 */
export async function answerCardAction(
  context: ClickContext,
  activity: TeamsActivity,
  tenantId: string,
): Promise<InvokeAnswer> {
  const { sink, answering, logger } = context;
  const action = cardActionOf(activity);
  if (action === null || activity.replyToId === undefined) {
    return errorInvokeResponse(400, 'This action is not one this app knows.');
  }
  const conversationId = activity.conversation.id;
  const activityId = activity.replyToId;
  const where = { conversationId, activityId, teamsUserId: activity.from.id };
  const copy = await clickedCopy(context, action.requestId, conversationId, activityId);
  if (copy === null) {
    logger.warn('Teams click on a message that is no copy of the request its button names: refused', where);
    return errorInvokeResponse(404, 'This message is no longer known.');
  }
  if (copy.tenantId !== tenantId || !isRecipient(copy, activity)) {
    logger.warn('Teams click by someone other than the recipient of the message: refused', where);
    return errorInvokeResponse(403, 'Only the person this message was sent to can answer it.');
  }

  const key = AnsweringCopies.key(conversationId, activityId);
  const outcome = await answering.during(key, async () => {
    const seenKey = `invoke:${JSON.stringify([tenantId, activity.id ?? ''])}`;
    const first =
      activity.id === undefined ||
      (await sink.state.compareAndSet(seenKey, '1', null, { ttlMs: seenInvokeTtlMs })) !== null;
    if (!first) {
      logger.debug('Teams repeated an invoke already taken: answered with the current card', where);
      return null;
    }
    try {
      return await sink.click({
        requestId: action.requestId,
        recipient: copy.recipient,
        value: action.value,
      });
    } catch (error) {
      // Nothing was applied: let Teams' repeat of this very invoke try again.
      await sink.state.delete(seenKey).catch(() => {});
      throw error;
    }
  });
  if (outcome === 'unknown-option') return errorInvokeResponse(400, 'This answer is not one of the options.');
  logger.debug('Teams click answered', { requestId: action.requestId, outcome });
  // Read after the click was stored: the view of the request as it stands now.
  const view = await sink.view(action.requestId, copy.recipient);
  if (view === null) return errorInvokeResponse(404, 'This message is no longer known.');
  return cardInvokeResponse(adaptiveCard(view));
}
