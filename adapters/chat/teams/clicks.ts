import { setTimeout as pause } from 'node:timers/promises';
import {
  type ChatSink,
  type Click,
  type ClickOutcome,
  type LogFields,
  type Logger,
  type MessageView,
  NotifyError,
} from '../../../core/adapter-kit.js';
import { cardActionOf, type TeamsActivity } from './activity.js';
import { adaptiveCard, cardInvokeResponse, errorInvokeResponse } from './card.js';
import { readTeamsRef, type TeamsCopies, type TeamsMessageRef } from './copies.js';
import type { FollowUps } from './follow-ups.js';
import type { TeamsMembers } from './members.js';

/** What a click's answer learned while it ran: whether an update of its copy was left to it. */
interface Answer {
  updateLeft: boolean;
}

/**
 * The copies whose click is being answered in this process, by copy key, each with the answers in
 * progress (a double click answers twice at once). The invoke's answer replaces such a copy's card,
 * so an update of it meanwhile is left to the answer, which carries the view of the request read
 * once the click is stored; an answer that carries no card (a refused click) must then show it.
 *
 * The core updates the copies of a click after the click is stored, without holding its answer
 * back, so the update of the clicked copy may come once the answer is sent. An answer that carried a
 * card is remembered until its copy is checked (`catchUp`): an update showing that card's view, or
 * an older one, is left to it too, and Teams is not sent the same card twice.
 */
export class AnsweringCopies {
  readonly #answers = new Map<string, Set<Answer>>();
  /** The newest view answered on each copy, and how many answers are still to check it. */
  readonly #answered = new Map<string, { version: number; unchecked: number }>();

  static key(conversationId: string, activityId: string): string {
    return JSON.stringify([conversationId, activityId]);
  }

  /**
   * Whether the update of the copy `key` to the view of `version` is left to an answer: one in
   * progress (which then shows the current view), or, unless `version` is null, one that carried
   * that view or a newer one.
   */
  leaveUpdate(key: string, version: number | null): boolean {
    const answers = this.#answers.get(key);
    if (answers !== undefined) {
      for (const answer of answers) answer.updateLeft = true;
      return true;
    }
    const answered = this.#answered.get(key);
    return version !== null && answered !== undefined && version <= answered.version;
  }

  /** Records that an answer carries the view of `version` to the copy `key`, until {@link checked}. */
  carries(key: string, version: number): void {
    const answered = this.#answered.get(key);
    this.#answered.set(key, {
      version: Math.max(version, answered?.version ?? 0),
      unchecked: (answered?.unchecked ?? 0) + 1,
    });
  }

  /** An answer that carried a view to the copy `key` was checked: once all were, it is forgotten. */
  checked(key: string): void {
    const answered = this.#answered.get(key);
    if (answered === undefined) return;
    if (answered.unchecked > 1) answered.unchecked -= 1;
    else this.#answered.delete(key);
  }

  /**
   * Runs `work` as the answer of a click on the copy `key`. Never throws: answers how `work` ended,
   * and whether an update of the copy was left to this answer meanwhile.
   */
  async during<T>(
    key: string,
    work: () => Promise<T>,
  ): Promise<{ ended: PromiseSettledResult<T>; updateLeft: boolean }> {
    const answer: Answer = { updateLeft: false };
    const answers = this.#answers.get(key) ?? new Set<Answer>();
    answers.add(answer);
    this.#answers.set(key, answers);
    try {
      return { ended: { status: 'fulfilled', value: await work() }, updateLeft: answer.updateLeft };
    } catch (reason) {
      return { ended: { status: 'rejected', reason }, updateLeft: answer.updateLeft };
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
  /** What answers run once the answer is sent: bringing their copy up to date. */
  followUps: FollowUps;
  /**
   * Shows `view` on `message` as an update of its copy does; answers false when a newer view was
   * claimed while it was sent, which it may then have replaced. `checking`: sent by the check of an
   * answer, which no view another answer carried stands in for (Teams may have applied it first).
   */
  show(message: TeamsMessageRef, view: MessageView, checking?: boolean): Promise<boolean>;
  logger: Logger;
}

/** The body of the invoke's answer (HTTP 200): a card, or an error Teams shows to the clicker. */
export type InvokeAnswer = ReturnType<typeof cardInvokeResponse> | ReturnType<typeof errorInvokeResponse>;

/**
 * Teams repeats an invoke it got no good answer to, with the same activity id: one hour of memory of
 * the invokes taken is far longer than it keeps trying.
 */
const seenInvokeTtlMs = 60 * 60_000;

/**
 * How long an invoke being applied keeps a repeat of it out. Marked only for as long, until the
 * click is stored: a mark the failed attempt could not take back (the storage down for that too, or
 * the process gone) would otherwise answer every repeat "taken" and lose the click.
 */
const applyingInvokeTtlMs = 15_000;

/** How many times a copy left behind by a click's answer is shown the current view. */
const showAttempts = 3;

/** The pause before showing it again, times the attempts made. */
const showPauseMs = 250;

/**
 * Teams waits five seconds for an invoke's answer, then gives up on it (and may try the invoke again,
 * twice): an answer that took this long may never have been applied, and its check shows the card
 * whatever it carried.
 */
const lateAnswerMs = 4_000;

/**
 * How long after answering a click with a card the copy is checked: time for Teams to apply the
 * answer, which replaces whatever card the message showed.
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
  /** Where the recipient's link says their messages go, or null for a message of an earlier release. */
  serviceUrl: string | null;
  /** Whether the recipient's link is marked unreachable (Teams said they removed or blocked the app). */
  unreachable: boolean;
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
    return {
      message,
      recipient: copy.recipient,
      tenantId,
      userId,
      aadObjectId: member?.aadObjectId ?? null,
      serviceUrl: member?.serviceUrl ?? null,
      unreachable: member?.unreachable ?? false,
    };
  }
  const legacy = await copies.legacy(conversationId, activityId);
  if (legacy === null || legacy.sendId !== requestId) return null;
  // Its updates go where its own record says, which no click changes.
  return {
    ...legacy,
    message: { conversationId, activityId, delivered: null },
    serviceUrl: null,
    unreachable: false,
  };
}

/** Whether the clicker is the copy's recipient: the same Teams id, and the same Entra object id when both are known. */
function isRecipient(copy: ClickedCopy, activity: TeamsActivity): boolean {
  const { id, aadObjectId } = activity.from;
  if (id !== copy.userId) return false;
  // A GUID: the same in either letter case.
  return (
    aadObjectId === undefined ||
    copy.aadObjectId === null ||
    aadObjectId.toLowerCase() === copy.aadObjectId.toLowerCase()
  );
}

/**
 * Brings a copy left behind by the answer of a click up to date: shows it the view of its request
 * as it stands now, unless the card the answer carried (`answered`, its version) is still the
 * newest view claimed for it. Tries again, with the view read again, when that fails or may have
 * reached Teams after a newer view. Never throws: the last failure is logged.
 */
async function catchUp(
  { sink, copies, show, logger }: ClickContext,
  requestId: string,
  copy: ClickedCopy,
  answered: number | null,
): Promise<void> {
  const { conversationId, activityId } = copy.message;
  let failure = 'newer views kept being claimed while it was sent';
  try {
    if (answered !== null && !(await copies.superseded(copy.message, answered))) return;
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  }
  for (let attempt = 1; attempt <= showAttempts; attempt += 1) {
    try {
      const view = await sink.view(requestId, copy.recipient);
      if (view === null || (await show(copy.message, view, true))) return;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (attempt < showAttempts) await pause(showPauseMs * attempt);
  }
  logger.warn(
    'Teams message left behind by the answer of a click could not be updated: it shows an older card',
    {
      requestId,
      conversationId,
      activityId,
      error: failure,
    },
  );
}

/**
 * How long after its arrival a repeat waits for an attempt of its invoke under way, and how often it
 * looks: the rest of its answer (the claim, the click, the view) must fit in Teams' five seconds.
 */
const applyingWaitMs = 3_000;
const applyingLookMs = 250;

/**
 * The mark of an invoke a repeat finds, once an attempt under way ended or the wait did (at
 * `waitUntil`, a `performance.now()`): null when there is none, else `taken` (the click is stored;
 * marks of earlier releases say `1`), `free` (an attempt failed and took its mark back) or
 * `applying` (an attempt is still at it), with the version a claim of it must expect.
 */
async function awaitMark(
  sink: ChatSink,
  key: string,
  waitUntil: number,
): Promise<{ state: 'taken' | 'free' | 'applying'; version: number } | null> {
  for (;;) {
    const mark = await sink.state.get(key);
    if (mark === null) return null;
    const state = mark.value === 'free' || mark.value === 'applying' ? mark.value : 'taken';
    if (state !== 'applying' || performance.now() + applyingLookMs > waitUntil) {
      return { state, version: mark.version };
    }
    await pause(applyingLookMs);
  }
}

/**
 * Applies a click once per invoke: a repeat of an invoke already taken (Teams' retries, by the
 * invoke's id in its tenant) changes nothing and answers null. A repeat that comes while an attempt
 * is applying it waits for that attempt, within its own time (from `receivedAt`), and fails (Teams
 * tries again) while it still runs: answered as taken, the click would be lost should that attempt
 * fail.
 */
async function applyClick(
  { sink, logger }: ClickContext,
  invoke: { tenantId: string; id: string | undefined; receivedAt: number },
  click: Click,
  where: LogFields,
): Promise<ClickOutcome | null> {
  // The answer carries the clicker's card: it must not wait for the other copies' updates.
  if (invoke.id === undefined) return sink.click(click, { until: 'stored' });
  const seenKey = `invoke:${JSON.stringify([invoke.tenantId, invoke.id])}`;
  const claim = (expected: number | null, value = 'applying', ttlMs = applyingInvokeTtlMs) =>
    sink.state.compareAndSet(seenKey, value, expected, { ttlMs });
  let version = await claim(null);
  if (version === null) {
    const mark = await awaitMark(sink, seenKey, invoke.receivedAt + applyingWaitMs);
    if (mark?.state === 'taken') {
      logger.debug('Teams repeated an invoke already taken: answered with the current card', where);
      return null;
    }
    // Only the very mark it found free (or none): another repeat may have claimed it since.
    if (mark?.state !== 'applying') version = await claim(mark === null ? null : mark.version);
    if (version === null) {
      throw new NotifyError('unavailable', 'This click is being applied by an earlier attempt; try again', {
        retryAfterSeconds: 1,
      });
    }
  }
  const mine = version;
  let outcome: ClickOutcome;
  try {
    outcome = await sink.click(click, { until: 'stored' });
  } catch (error) {
    // Nothing was applied: let Teams' repeat of this very invoke try again (at the latest once the
    // mark has expired, when taking it back fails too). Only a mark still this attempt's is freed:
    // another attempt may have taken the invoke since this one's mark expired.
    await claim(mine, 'free').catch(() => null);
    throw error;
  }
  // Kept for as long as Teams may repeat it: over this attempt's mark, or none when it expired
  // meanwhile; never over the mark of another attempt that took the invoke since.
  const taken = await claim(mine, 'taken', seenInvokeTtlMs)
    .then((written) => written ?? claim(null, 'taken', seenInvokeTtlMs))
    .catch(() => null);
  if (taken === null) {
    logger.warn('Teams invoke taken, but not recorded as taken: a repeat may apply it again', where);
  }
  return outcome;
}

/**
 * Answers an `adaptiveCard/action` invoke that came at `receivedAt` (`performance.now()`, before its
 * token was checked: Teams' five seconds count from the post). The click counts only on a message this transport
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
  receivedAt: number,
): Promise<InvokeAnswer> {
  const { sink, answering, followUps, logger } = context;
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
  // Teams may move a tenant to another service URL: the one a click names, which its token vouches
  // for, is where the recipient's messages are updated and sent from now on. And a recipient marked
  // unreachable who clicks has the app again (Teams tells an unblock by no activity of its own): they
  // are reached from now on.
  const moved = copy.serviceUrl !== null && copy.serviceUrl !== activity.serviceUrl;
  if (moved || copy.unreachable) {
    const serviceUrl = activity.serviceUrl;
    await context.members.change(copy.tenantId, copy.userId, (member) => ({
      ...member,
      ...(moved ? { serviceUrl } : {}),
      unreachable: false,
    }));
  }

  const key = AnsweringCopies.key(conversationId, activityId);
  // The view is read within the answer, so that an update left to the answer is known to be in it.
  const { ended, updateLeft } = await answering.during(key, async () => {
    const outcome = await applyClick(
      context,
      { tenantId, id: activity.id, receivedAt },
      { requestId: action.requestId, recipient: copy.recipient, value: action.value },
      where,
    );
    // Read after the click was stored: the view of the request as it stands now.
    const view = outcome === 'unknown-option' ? null : await sink.view(action.requestId, copy.recipient);
    if (view !== null) answering.carries(key, view.version);
    return { outcome, view };
  });
  const shown = ended.status === 'fulfilled' ? ended.value.view : null;
  if (shown !== null) {
    // Teams applies the answer's card whenever it gets it: a newer view claimed meanwhile, by an
    // update left to this answer or sent since, here or on another instance, is shown once it did.
    // An answer that came late may not have been applied at all: its card is shown again.
    const late = performance.now() - receivedAt >= lateAnswerMs;
    followUps.after(afterAnswerMs, () =>
      catchUp(context, action.requestId, copy, late ? null : shown.version).finally(() =>
        answering.checked(key),
      ),
    );
  } else if (updateLeft) {
    // No card answers this click, yet an update of the copy was left to its answer: shown beside it
    // (Teams waits for the answer only a few seconds).
    followUps.after(0, () => catchUp(context, action.requestId, copy, null));
  }
  if (ended.status === 'rejected') throw ended.reason;
  const { outcome } = ended.value;
  if (outcome === 'unknown-option') return errorInvokeResponse(400, 'This answer is not one of the options.');
  logger.debug('Teams click answered', { requestId: action.requestId, outcome });
  if (shown === null) return errorInvokeResponse(404, 'This message is no longer known.');
  return cardInvokeResponse(adaptiveCard(shown));
}
