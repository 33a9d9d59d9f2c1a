import { firstValueFrom, timer } from 'rxjs';
import type { CoreContext } from '../context.js';
import type { Organization, User } from '../domain/directory.js';
import type { MessageView } from '../domain/message-view.js';
import { isNotifyError, NotifyError } from '../errors.js';
import { type ChatAddress, type ChatTransport, isRecipientGone } from '../ports/chat-transport.js';
import type { DeliveryRecord } from '../ports/delivery-store.js';

/** A recipient of a send, resolved against the directory. */
export interface ResolvedRecipient {
  /** Normalized address. */
  key: string;
  /** As the caller spelled it, trimmed. */
  email: string;
  user: User;
}

const copyKey = (recipient: string, platform: string) => `${recipient}\n${platform}`;

/** Which send {@link deliverCopies} delivers, and how its records are kept. */
export interface CopiesOfSend {
  organization: Organization;
  sendId: string;
  /** True when an earlier attempt of the same send may have delivered some copies already. */
  resumed: boolean;
  /**
   * Whether each copy delivered is recorded (`DeliveryStore.addDelivery`), as every copy that an
   * update or a later attempt of the send must find is: a plain send no attempt can resume is never
   * read again, and recording its copies would cost a storage write (a round trip) for nothing.
   */
  recorded: boolean;
  /** Set when the send is over as soon as it is delivered: its copies expire after this many ms. */
  ttlMs?: number;
}

/** What {@link deliverCopies} did. */
export interface DeliveredCopies {
  /** The recipients that could not be reached on every platform that should reach them. */
  unreached: ResolvedRecipient[];
  /**
   * The versions of the send's interactive request that the recording of each copy delivered now
   * answered (`DeliveryStore.addDelivery`), null where there was none; empty when no copy was
   * recorded.
   */
  requestVersions: (number | null)[];
  /**
   * Nothing was delivered: `unreached` are recipients that no platform reaches at all, known before
   * any copy went out.
   */
  withheld: boolean;
}

/** What became of one copy: delivered, not reachable on its platform, or failed with an error. */
type CopyOutcome = 'delivered' | 'unreachable' | { failed: unknown };

/** Where a platform reaches a recipient: an address, none (`null`), or a failed look-up. */
type Found = ChatAddress | null | { failed: unknown };

/** One copy of a send to deliver: what {@link deliverCopy} needs beyond the recipient and platform. */
interface CopyToDeliver extends Pick<CopiesOfSend, 'organization' | 'sendId' | 'recorded'> {
  viewFor: (recipientKey: string) => MessageView;
  writeOptions: { ttlMs: number } | undefined;
  /** Where the version each recording answered goes. */
  requestVersions: (number | null)[];
}

const failedLookUp = (error: unknown): Found => ({ failed: error });

/** Where `transport` reaches `recipient`, without waiting when it answers at once. Never rejects. */
function findAddress(
  transport: ChatTransport,
  recipient: ResolvedRecipient,
  organization: Organization,
): Found | Promise<Found> {
  try {
    const found = transport.address(recipient.user, organization);
    return found instanceof Promise ? found.catch(failedLookUp) : found;
  } catch (error) {
    return failedLookUp(error);
  }
}

/**
 * Delivers one copy, and records it when wanted: to the address `found` the platform answered
 * before, or, without it, as soon as the platform knows the recipient's address. Never rejects: a
 * failure is an outcome, so that a send waits on one promise per copy, where settling them all would
 * cost one more per copy and an object for each result.
 */
async function deliverCopy(
  context: CoreContext,
  { organization, sendId, recorded, viewFor, writeOptions, requestVersions }: CopyToDeliver,
  recipient: ResolvedRecipient,
  transport: ChatTransport,
  found?: Found,
): Promise<CopyOutcome> {
  try {
    let address: ChatAddress | null;
    if (found === undefined) {
      const answered = transport.address(recipient.user, organization);
      address = answered instanceof Promise ? await answered : answered;
    } else if (found !== null && 'failed' in found) {
      return isRecipientGone(found.failed) ? 'unreachable' : found;
    } else {
      address = found;
    }
    if (address === null) return 'unreachable';
    const message = viewFor(recipient.key);
    const ref = await transport.deliver({ organization, recipient: recipient.key, address, message });
    if (!recorded) return 'delivered';
    const copy: DeliveryRecord = {
      sendId,
      recipient: recipient.key,
      platform: transport.platform,
      ref,
      deliveredAt: context.clock.now(),
    };
    const version = await recordCopy(context, copy, writeOptions);
    requestVersions.push(version);
    return 'delivered';
  } catch (error) {
    return isRecipientGone(error) ? 'unreachable' : { failed: error };
  }
}

/**
 * The pauses before each new try of a copy's record (ms), about a second in all, none once a second
 * has passed since the first try: a storage failing for a moment (a Redis failover, a dropped connection) takes the
 * record, and a repeat of the send finds the copy rather than posting it again. A try that itself
 * took long (a stalled connection, a driver looking for a server) is not followed by another: the
 * send must answer, and give its key up, well within the key's lease.
 */
const recordRetryDelaysMs = [100, 300, 600];
const recordRetryWindowMs = 1_000;

/**
 * Records a copy the platform took, trying again, while the store says it is unavailable, after
 * each of {@link recordRetryDelaysMs} (the write replaces what it wrote, so a try whose answer was
 * lost does no harm). Any failure of that write is the store's, whatever it says (a Redis refusing
 * writes for a failed snapshot): the recipient was reached, and the send must answer 503, never
 * name them as not reached. The pauses run on the notifier's scheduler, virtual time in tests.
 */
async function recordCopy(
  context: CoreContext,
  copy: DeliveryRecord,
  writeOptions: CopyToDeliver['writeOptions'],
): Promise<number | null> {
  const started = context.scheduler.now();
  for (let tried = 0; ; tried += 1) {
    try {
      return await context.storage.deliveries.addDelivery(copy, writeOptions);
    } catch (error) {
      if (!isNotifyError(error, 'unavailable')) {
        throw new NotifyError('unavailable', 'Storage is temporarily unavailable', {
          retryAfterSeconds: 1,
          cause: error,
        });
      }
      const delayMs = recordRetryDelaysMs[tried];
      if (delayMs === undefined || context.scheduler.now() - started > recordRetryWindowMs) throw error;
      context.logger.warn('could not record a delivered copy; trying again', {
        sendId: copy.sendId,
        platform: copy.platform,
        error: String(error),
      });
      await firstValueFrom(timer(delayMs, context.scheduler));
    }
  }
}

/**
 * Delivers one copy per platform that reaches each recipient, skipping copies an earlier attempt
 * of the same send already delivered (so that a retry never notifies anyone twice).
 */
export function deliverCopies(
  context: CoreContext,
  send: CopiesOfSend,
  recipients: readonly ResolvedRecipient[],
  viewFor: (recipientKey: string) => MessageView,
): Promise<DeliveredCopies> {
  // Only a resumed send can have copies out already; a fresh one saves the round trip, and the
  // step of waiting for it.
  try {
    return send.resumed
      ? context.storage.deliveries
          .listDeliveries(send.sendId)
          .then((earlier) => deliverAll(context, send, recipients, viewFor, earlier))
      : deliverAll(context, send, recipients, viewFor, []);
  } catch (error) {
    // What failed at once fails the promise, as it would later.
    return Promise.reject(error);
  }
}

/** {@link deliverCopies} once the copies an earlier attempt delivered are known. */
function deliverAll(
  context: CoreContext,
  { organization, sendId, recorded, ttlMs }: CopiesOfSend,
  recipients: readonly ResolvedRecipient[],
  viewFor: (recipientKey: string) => MessageView,
  earlier: readonly DeliveryRecord[],
): Promise<DeliveredCopies> {
  const { transports } = context;
  const delivered = new Set(earlier.map((d) => copyKey(d.recipient, d.platform)));
  const requestVersions: (number | null)[] = [];
  const copy: CopyToDeliver = {
    organization,
    sendId,
    recorded,
    viewFor,
    writeOptions: ttlMs === undefined ? undefined : { ttlMs },
    requestVersions,
  };
  // The copies still to deliver, recipient after recipient: a platform that already has this
  // recipient's copy (an earlier attempt) reaches them.
  const copyRecipients: ResolvedRecipient[] = [];
  const copyTransports: ChatTransport[] = [];
  const pendingOf: number[] = [];
  for (const recipient of recipients) {
    let pending = 0;
    for (const transport of transports) {
      if (delivered.size > 0 && delivered.has(copyKey(recipient.key, transport.platform))) continue;
      copyRecipients.push(recipient);
      copyTransports.push(transport);
      pending += 1;
    }
    pendingOf.push(pending);
  }
  const outcomesOf = (outcomes: readonly CopyOutcome[], nothingSent = false): DeliveredCopies => ({
    unreached: unreachedOf(context, sendId, recipients, pendingOf, outcomes),
    requestVersions,
    withheld: nothingSent,
  });
  // A single copy (the usual plain send) is looked up and delivered alone, without a combined
  // promise: when its platform does not reach the recipient, nothing was sent to anyone.
  const [onlyRecipient] = copyRecipients;
  if (copyRecipients.length === 1 && onlyRecipient !== undefined) {
    return deliverCopy(context, copy, onlyRecipient, copyTransports[0]!).then((outcome) =>
      outcomesOf([outcome], earlier.length === 0 && outcome === 'unreachable'),
    );
  }
  // The copies of a send an earlier attempt delivered some of go out as they are found: those
  // recipients have their message whatever the others' platforms say.
  if (earlier.length > 0) {
    return Promise.all(
      copyRecipients.map((recipient, index) => deliverCopy(context, copy, recipient, copyTransports[index]!)),
    ).then((outcomes) => outcomesOf(outcomes));
  }
  // Otherwise every platform is asked first where it reaches each recipient: a recipient none
  // reaches makes the send post nothing (`reachedNowhere`).
  const found = copyRecipients.map((recipient, index) =>
    findAddress(copyTransports[index]!, recipient, organization),
  );
  const post = (addresses: readonly Found[]): Promise<DeliveredCopies> => {
    const nowhere = reachedNowhere(transports.length, recipients, pendingOf, addresses);
    if (nowhere.length > 0) return Promise.resolve(withheld(context, sendId, nowhere));
    return Promise.all(
      copyRecipients.map((recipient, index) =>
        deliverCopy(context, copy, recipient, copyTransports[index]!, addresses[index]),
      ),
    ).then(outcomesOf);
  };
  return found.some((one) => one instanceof Promise) ? Promise.all(found).then(post) : post(found as Found[]);
}

/**
 * The recipients that no platform reaches at all: each platform that should reach them answered
 * that it does not, or that the account is gone (no earlier attempt of the send reached anyone).
 * Such a recipient cannot be reached by repeating the send, so the send posts nothing, to anyone: a
 * caller who answers the `500` by sending again without them notifies nobody twice.
 */
function reachedNowhere(
  platforms: number,
  recipients: readonly ResolvedRecipient[],
  pendingOf: readonly number[],
  addresses: readonly Found[],
): ResolvedRecipient[] {
  const nowhere: ResolvedRecipient[] = [];
  eachRecipient(recipients, pendingOf, addresses, (recipient, mine) => {
    if (mine.length === platforms && mine.every(isNowhere)) nowhere.push(recipient);
  });
  return nowhere;
}

/** Calls `visit` with each recipient and what its copies came to, in turn (`pendingOf` of each). */
function eachRecipient<T>(
  recipients: readonly ResolvedRecipient[],
  pendingOf: readonly number[],
  ofCopies: readonly T[],
  visit: (recipient: ResolvedRecipient, mine: readonly T[]) => void,
): void {
  let next = 0;
  recipients.forEach((recipient, index) => {
    const count = pendingOf[index]!;
    visit(recipient, ofCopies.slice(next, next + count));
    next += count;
  });
}

/** Whether a platform's answer says it does not reach the recipient. */
const isNowhere = (found: Found): boolean =>
  found === null || ('failed' in found && isRecipientGone(found.failed));

/** What a send that posts nothing answers: the recipients no platform reaches, each logged. */
function withheld(
  context: CoreContext,
  sendId: string,
  nowhere: readonly ResolvedRecipient[],
): DeliveredCopies {
  for (const recipient of nowhere) {
    context.logger.warn('no chat platform reaches this recipient: nothing was sent to anyone', {
      sendId,
      userId: recipient.user.id,
    });
  }
  return { unreached: [...nowhere], requestVersions: [], withheld: true };
}

/**
 * The recipients no copy reached, from the outcomes of their copies in turn (`pendingOf` of each),
 * each failure logged.
 * @throws NotifyError `unavailable` when the store failed rather than the platform.
 */
function unreachedOf(
  context: CoreContext,
  sendId: string,
  recipients: readonly ResolvedRecipient[],
  pendingOf: readonly number[],
  outcomes: readonly CopyOutcome[],
): ResolvedRecipient[] {
  const { transports } = context;
  const unreached: ResolvedRecipient[] = [];
  eachRecipient(recipients, pendingOf, outcomes, (recipient, mine) => {
    // A platform that could not tell whether it reaches the recipient failed like a delivery.
    if (mine.length === transports.length && mine.every((outcome) => outcome === 'unreachable')) {
      context.logger.warn('no chat platform reaches this recipient', { sendId, userId: recipient.user.id });
      unreached.push(recipient);
      return;
    }
    let failed = false;
    for (const outcome of mine) {
      if (typeof outcome === 'string') continue;
      // The store, not the platform, failed: the caller should retry later (503), not see a 500.
      if (isNotifyError(outcome.failed, 'unavailable')) throw outcome.failed;
      context.logger.error('delivery failed', {
        sendId,
        userId: recipient.user.id,
        error: String(outcome.failed),
      });
      failed = true;
    }
    if (failed) unreached.push(recipient);
  });
  return unreached;
}

/** Brings one delivered copy to `view`; answers false when the platform failed (it is logged). */
async function updateCopy(
  context: CoreContext,
  transport: ChatTransport,
  organization: Organization,
  copy: DeliveryRecord,
  view: MessageView,
): Promise<boolean> {
  try {
    await transport.update({ organization, recipient: copy.recipient, message: view }, copy.ref);
    return true;
  } catch (error) {
    context.logger.warn('could not update a delivered message; it is refreshed later', {
      sendId: copy.sendId,
      platform: copy.platform,
      error: String(error),
    });
    return false;
  }
}

/**
 * Replaces every delivered copy of a send for the given recipients with a fresh view, and answers
 * how many copies could not be updated. Failures are logged, not thrown: the state is already
 * stored, and a platform that is down must not undo a click; the caller schedules a refresh.
 * A timeout updates every copy of every request that falls due, so this allocates little: one
 * promise per copy and no closure.
 */
export async function updateCopies(
  context: CoreContext,
  organizationId: string,
  sendId: string,
  recipientKeys: readonly string[],
  viewFor: (recipientKey: string) => MessageView,
): Promise<number> {
  const { directory, deliveries } = context.storage;
  const [organization, copies] = await Promise.all([
    directory.getOrganization(organizationId),
    deliveries.listDeliveries(sendId),
  ]);
  if (!organization) return 0;
  const wanted = new Set(recipientKeys);
  const updates: Promise<boolean>[] = [];
  for (const copy of copies) {
    const transport = wanted.has(copy.recipient)
      ? context.transports.find((t) => t.platform === copy.platform)
      : undefined;
    if (transport) updates.push(updateCopy(context, transport, organization, copy, viewFor(copy.recipient)));
  }
  let failed = 0;
  for (const updated of await Promise.all(updates)) if (!updated) failed += 1;
  return failed;
}
