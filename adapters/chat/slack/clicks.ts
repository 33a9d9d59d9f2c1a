import type { ChatSink, Logger, TransportStateStore } from '../../../core/adapter-kit.js';
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
 * How long the newest action of a user on a message is remembered: Slack repeats a request it
 * thinks unanswered within minutes, with the same `action_ts`, so an hour is far longer than any
 * repeat of an action, the newest or an earlier one, can come.
 */
const newestActionTtlMs = 60 * 60_000;

const newestActionKey = (clicks: BlockActions): string =>
  `newest-action:${JSON.stringify([clicks.teamId ?? '', clicks.userId, clicks.channel, clicks.ts])}`;

/** Whether Slack's `action_ts` `a` ("1548426417.840180": seconds, a fraction) comes after `b`. */
export function isLaterAction(a: string, b: string): boolean {
  const [aSeconds = '', aFraction = ''] = a.split('.');
  const [bSeconds = '', bFraction = ''] = b.split('.');
  if (aSeconds.length !== bSeconds.length) return aSeconds.length > bSeconds.length;
  if (aSeconds !== bSeconds) return aSeconds > bSeconds;
  const width = Math.max(aFraction.length, bFraction.length);
  return aFraction.padEnd(width, '0') > bFraction.padEnd(width, '0');
}

/**
 * The newest action of a user on a message as remembered: Slack's `action_ts`, then `~` and the
 * value of the button, so that an instance that applied an earlier action can apply the newest one
 * after it. `~` sorts after every digit: the release before, which kept and compares the
 * `action_ts` alone, reads such a record as that `action_ts` (its repeat included) and orders it
 * right. Records of that release hold no value.
 */
interface NewestAction {
  actionTs: string;
  value: string | null;
}

const newestRecord = (actionTs: string, value: string): string => `${actionTs}~${value}`;

function readNewest(stored: string): NewestAction {
  const tilde = stored.indexOf('~');
  return tilde < 0
    ? { actionTs: stored, value: null }
    : { actionTs: stored.slice(0, tilde), value: stored.slice(tilde + 1) };
}

/** What a claim of an action as its user's newest on a message took over, to give back on failure. */
interface NewestClaim {
  previous: string | null;
  version: number;
}

/**
 * Claims `action` as the newest action taken by the clicker of `clicks` on its message: null when
 * this action, or a later one, was taken already (a repeat by Slack, or an earlier click that
 * arrives late), so that a late click never replaces the answer of a later one.
 */
async function claimNewest(
  state: TransportStateStore,
  key: string,
  action: { actionTs: string; value: string },
): Promise<NewestClaim | null> {
  for (;;) {
    const current = await state.get(key);
    if (current !== null && !isLaterAction(action.actionTs, readNewest(current.value).actionTs)) return null;
    const version = await state.compareAndSet(
      key,
      newestRecord(action.actionTs, action.value),
      current?.version ?? null,
      { ttlMs: newestActionTtlMs },
    );
    if (version !== null) return { previous: current?.value ?? null, version };
  }
}

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
 * from the payload. A repeat of an action already taken, or an action older than one taken by the
 * same user on the same message, changes nothing.
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
    const key = newestActionKey(clicks);
    const claim = await claimNewest(sink.state, key, { actionTs: action.actionTs, value: action.value });
    if (claim === null) {
      logger.debug('Slack action repeated, or older than one already taken: ignored', where);
      continue;
    }
    try {
      const outcome = await sink.click({ requestId, recipient: clicker.recipient, value: action.value });
      logger.debug('Slack click applied', { requestId, outcome });
    } catch (error) {
      // Nothing was applied: let a repeat of this very action try again, unless a later one came.
      await sink.state
        .compareAndSet(key, claim.previous ?? '0', claim.version, { ttlMs: newestActionTtlMs })
        .catch(() => null);
      throw error;
    }
    await applyLaterAction(context, key, requestId, clicker.recipient, action.actionTs);
  }
}

/**
 * Applies again the newest action of the user on the message when it is later than the one just
 * applied: claimed on another instance while this one was applied, it may have been written first,
 * and applied again after this one it is the answer that stands. Its failure is logged, not
 * thrown: the click of this payload was applied, and its instance applies the later one too.
 */
async function applyLaterAction(
  { sink, logger }: SlackClickContext,
  key: string,
  requestId: string,
  recipient: string,
  applied: string,
): Promise<void> {
  try {
    const newest = await sink.state.get(key);
    const later = newest === null ? null : readNewest(newest.value);
    if (later?.value == null || !isLaterAction(later.actionTs, applied)) return;
    await sink.click({ requestId, recipient, value: later.value });
    logger.debug('Slack click of a later action applied again after an earlier one', { requestId });
  } catch (error) {
    logger.warn('could not apply again a later Slack click after an earlier one', {
      requestId,
      error: String(error),
    });
  }
}
