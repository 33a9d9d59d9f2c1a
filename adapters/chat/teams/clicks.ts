import type {
  ChatSink,
  Click,
  ClickOutcome,
  LogFields,
  Logger,
  MessageView,
} from '../../../core/adapter-kit.js';
import { cardActionOf, type TeamsActivity } from './activity.js';
import { adaptiveCard, cardInvokeResponse, errorInvokeResponse } from './card.js';
import { readTeamsRef, type TeamsCopies, type TeamsMessageRef } from './copies.js';
import type { TeamsMembers } from './members.js';

/** What a click's answer learned while it ran: the newest version of an update of its copy left to it. */
interface Answer {
  newestLeft: number | null;
}

/**
 * The copies whose click is being answered in this process, by copy key, each with the answers in
 * progress (a double click answers twice at once). The invoke's answer replaces such a copy's card,
 * so an update of it meanwhile is left to the answer, which carries the view of the request read
 * once the click is stored; an answer that carries no card (a refused click), or an older view than
 * an update left to it, must then show the current one.
 */
export class AnsweringCopies {
  readonly #answers = new Map<string, Set<Answer>>();

  static key(conversationId: string, activityId: string): string {
    return JSON.stringify([conversationId, activityId]);
  }

  /**
   * Whether a click on the copy `key` is being answered: if so, its update to the view of `version`
   * is left to every such answer.
   */
  leaveUpdate(key: string, version: number): boolean {
    const answers = this.#answers.get(key);
    if (answers === undefined) return false;
    for (const answer of answers) answer.newestLeft = Math.max(answer.newestLeft ?? version, version);
    return true;
  }

  /**
   * Runs `work` as the answer of a click on the copy `key`. Never throws: answers how `work` ended,
   * and the newest version of an update of the copy left to this answer meanwhile (null for none).
   */
  async during<T>(
    key: string,
    work: () => Promise<T>,
  ): Promise<{ ended: PromiseSettledResult<T>; newestLeft: number | null }> {
    const answer: Answer = { newestLeft: null };
    const answers = this.#answers.get(key) ?? new Set<Answer>();
    answers.add(answer);
    this.#answers.set(key, answers);
    try {
      return { ended: { status: 'fulfilled', value: await work() }, newestLeft: answer.newestLeft };
    } catch (reason) {
      return { ended: { status: 'rejected', reason }, newestLeft: answer.newestLeft };
    } finally {
      answers.delete(answer);
      if (answers.size === 0) this.#answers.delete(key);
    }
  }
}

/** What answering clicks needs. */
export interface ClickContext {
  sink: ChatSink;
  copies: TeamsCopies;
  members: TeamsMembers;
  answering: AnsweringCopies;
  /**
   * Shows `view` on `message` as an update of its copy does: what an answer does with an update left
   * to it that its card does not carry.
   */
  show(message: TeamsMessageRef, view: MessageView): Promise<void>;
  logger: Logger;
}

/** The body of the invoke's answer (HTTP 200): a card, or an error Teams shows to the clicker. */
export type InvokeAnswer = ReturnType<typeof cardInvokeResponse> | ReturnType<typeof errorInvokeResponse>;

/**
 * Teams repeats an invoke it got no good answer to, with the same activity id: one hour of memory of
 * the invokes taken is far longer than it keeps trying.
 */
const seenInvokeTtlMs = 60 * 60_000;

/** How many times an answer tries to show an update left to it that its card does not carry. */
const showAttempts = 3;

/**
 * How long after answering a click with a card older than an update left to the answer that update
 * is shown: time for Teams to apply the answer first, which would otherwise replace the newer card.
 */
const afterAnswerMs = 1_500;

/** The copy a click was made on: whose it is, as chat-notify and Teams know them. */
interface ClickedCopy {
  message: TeamsMessageRef;
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
  const message = copy === undefined ? null : readTeamsRef(copy.ref);
  if (copy !== undefined && message?.delivered) {
    const { installationId: tenantId, userRef: userId } = message.delivered;
    const member = await members.get(tenantId, userId);
    return { message, recipient: copy.recipient, tenantId, userId, aadObjectId: member?.aadObjectId ?? null };
  }
  const legacy = await copies.legacy(conversationId, activityId);
  if (legacy === null || legacy.sendId !== requestId) return null;
  return { ...legacy, message: { conversationId, activityId, delivered: null } };
}

/** Whether the clicker is the copy's recipient: the same Teams id, and the same Entra object id when both are known. */
function isRecipient(copy: ClickedCopy, activity: TeamsActivity): boolean {
  const { id, aadObjectId } = activity.from;
  if (id !== copy.userId) return false;
  return aadObjectId === undefined || copy.aadObjectId === null || aadObjectId === copy.aadObjectId;
}

/**
 * Shows on the copy the view of its request as it stands now, as an update would; tries again, with
 * the view read again, when that fails or may have reached Teams after a newer view. Never throws:
 * the last failure is logged.
 */
async function showCurrent(
  { sink, show, logger }: ClickContext,
  requestId: string,
  copy: ClickedCopy,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const view = await sink.view(requestId, copy.recipient);
      if (view !== null) await show(copy.message, view);
      return;
    } catch (error) {
      if (attempt === showAttempts) {
        logger.warn(
          'Teams message left behind by the answer of a click could not be updated: it shows an older card',
          {
            requestId,
            conversationId: copy.message.conversationId,
            activityId: copy.message.activityId,
            error: error instanceof Error ? error.message : String(error),
          },
        );
        return;
      }
    }
  }
}

/**
 * Applies a click once per invoke: a repeat of an invoke already taken (Teams' retries, by the
 * invoke's id in its tenant) changes nothing and answers null.
 */
async function applyClick(
  { sink, logger }: ClickContext,
  invoke: { tenantId: string; id: string | undefined },
  click: Click,
  where: LogFields,
): Promise<ClickOutcome | null> {
  const seenKey = `invoke:${JSON.stringify([invoke.tenantId, invoke.id ?? ''])}`;
  const first =
    invoke.id === undefined ||
    (await sink.state.compareAndSet(seenKey, '1', null, { ttlMs: seenInvokeTtlMs })) !== null;
  if (!first) {
    logger.debug('Teams repeated an invoke already taken: answered with the current card', where);
    return null;
  }
  try {
    return await sink.click(click);
  } catch (error) {
    // Nothing was applied: let Teams' repeat of this very invoke try again.
    await sink.state.delete(seenKey).catch(() => {});
    throw error;
  }
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
  // The view is read within the answer, so that an update left to the answer is known to be in it.
  const { ended, newestLeft } = await answering.during(key, async () => {
    const outcome = await applyClick(
      context,
      { tenantId, id: activity.id },
      { requestId: action.requestId, recipient: copy.recipient, value: action.value },
      where,
    );
    // Read after the click was stored: the view of the request as it stands now.
    const view = outcome === 'unknown-option' ? null : await sink.view(action.requestId, copy.recipient);
    return { outcome, view };
  });
  const shown = ended.status === 'fulfilled' ? ended.value.view : null;
  if (newestLeft !== null && (shown === null || newestLeft > shown.version)) {
    // An update left to this answer that its card does not carry: shown beside the answer (Teams
    // waits for it only a few seconds), once Teams applied the answer when that carries a card.
    setTimeout(
      () => void showCurrent(context, action.requestId, copy),
      shown === null ? 0 : afterAnswerMs,
    ).unref();
  }
  if (ended.status === 'rejected') throw ended.reason;
  const { outcome } = ended.value;
  if (outcome === 'unknown-option') return errorInvokeResponse(400, 'This answer is not one of the options.');
  logger.debug('Teams click answered', { requestId: action.requestId, outcome });
  if (shown === null) return errorInvokeResponse(404, 'This message is no longer known.');
  return cardInvokeResponse(adaptiveCard(shown));
}
