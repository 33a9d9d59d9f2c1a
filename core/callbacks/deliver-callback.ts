import type { CoreContext } from '../context.js';
import type { ClaimedDueItem } from '../domain/due-work.js';
import type { CallbackTarget, InteractiveRequest } from '../domain/interactive-request.js';
import type { DueWorkResult } from '../due-work/due-work-runner.js';
import type { CallbackAttemptResult, CallbackTransport } from '../ports/callback-transport.js';
import { idempotencyTtlMs } from '../use-cases/send-idempotently.js';
import { callbackBody, webhookId } from './callback-body.js';
import type { OrganizationShares } from './organization-shares.js';
import { keptWithRequest, lastAttemptBefore } from './request-retention.js';
import { nextRetryDelay } from './retry-schedule.js';

/** What a callback attempt needs of the core. */
type CallbackContext = Pick<CoreContext, 'storage' | 'clock' | 'logger' | 'retentionMs'>;

/** A thrown value as text; some (an object without a prototype, a throwing `toString`) refuse `String()`. */
function describeThrown(thrown: unknown): string {
  try {
    return String(thrown);
  } catch {
    return 'a thrown value that cannot be shown as text';
  }
}

/**
 * Builds and sends one attempt. Whatever throws on the way (the body, the signature, the transport)
 * is a failed attempt like any other, so it is counted, scheduled and finally kept for operators
 * instead of being retried at attempt 0 every time a lease ends.
 */
async function attempt(
  context: CallbackContext,
  transport: CallbackTransport,
  request: InteractiveRequest,
  callback: CallbackTarget,
): Promise<CallbackAttemptResult> {
  try {
    return await transport.send({
      url: callback.url,
      webhookId: webhookId(request.id),
      timestamp: Math.floor(context.clock.now() / 1000),
      body: JSON.stringify(callbackBody(request)),
      secret: callback.secret,
    });
  } catch (thrown) {
    return { outcome: 'failed', status: null, error: describeThrown(thrown), retryAfterMs: null };
  }
}

/** Keeps `request`'s callback as failed for operators, as long as the request is kept. */
async function keepFailed(
  context: CallbackContext,
  request: InteractiveRequest & { callback: CallbackTarget },
  failure: { attempts: number; lastStatus: number | null; lastError: string },
): Promise<DueWorkResult> {
  await context.storage.failedCallbacks.add(
    {
      requestId: request.id,
      organizationId: request.organizationId,
      url: request.callback.url,
      ...failure,
      failedAt: context.clock.now(),
    },
    keptWithRequest(context, request),
  );
  return { done: true };
}

/**
 * Whether `request` reached a recipient: one answered (a click may come before its copy is on
 * record, a store's round trip after the copy went out), or a copy is on record.
 */
async function reachedSomeone(context: CallbackContext, request: InteractiveRequest): Promise<boolean> {
  if (request.recipients.some((recipient) => recipient.respondedAt !== null)) return true;
  return (await context.storage.deliveries.listDeliveries(request.id)).length > 0;
}

/** How often the callback of a request that reached nobody looks again for a copy. */
const unreachedPutOffMs = 5 * 60_000;

/**
 * The callback of a request that reached nobody: its send was never answered with the request's id
 * and secret (its storage answered too late, or every delivery failed). Put off while a repeat of
 * the send with its `Idempotency-Key` may still deliver the copies (and answer the id), then dropped:
 * the callback of a request nobody was asked, to a receiver that cannot check its signature, would
 * only be refused and tried again for a day.
 */
function awaitFirstCopy(
  context: CallbackContext,
  request: InteractiveRequest & { callback: CallbackTarget },
): DueWorkResult {
  const now = context.clock.now();
  const latest = Math.min(request.createdAt + idempotencyTtlMs, lastAttemptBefore(context, request));
  if (now >= latest) {
    context.logger.warn('callback dropped: its request reached nobody, its send was never answered', {
      requestId: request.id,
    });
    return { done: true };
  }
  return { done: false, retryAt: Math.min(now + unreachedPutOffMs, latest), postponed: true };
}

/**
 * Runs one attempt of a completion callback (the due-work handler of kind `callback`): sends it
 * signed, then finishes, schedules the next attempt, or keeps it as failed for operators. Logs
 * every attempt without the secret or the body. An attempt of an organization with every share in
 * use is put off, uncounted, but never past the last time its request's retention leaves for one:
 * then it is kept as failed, to be replayed, rather than lost with its request.
 */
export async function deliverCallback(
  context: CallbackContext,
  transport: CallbackTransport,
  shares: OrganizationShares,
  item: ClaimedDueItem,
): Promise<DueWorkResult> {
  const { logger, clock } = context;
  const request = await context.storage.requests.getRequest(item.requestId);
  if (!request?.callback || request.status !== 'finished') {
    logger.warn('callback dropped: no finished request with a callback_url', { requestId: item.requestId });
    return { done: true };
  }
  const withCallback = { ...request, callback: request.callback };
  // An attempt made before found it reached someone: its retries need not read the copies again.
  if (item.attempt === 0 && !(await reachedSomeone(context, request))) {
    return awaitFirstCopy(context, withCallback);
  }
  const { organizationId } = request;
  const putOffMs = shares.take(organizationId, clock.now());
  if (putOffMs > 0) {
    const latest = lastAttemptBefore(context, request);
    if (clock.now() >= latest) {
      const lastError =
        'not attempted: its organization had every callback share in use until its retention was nearly over';
      logger.error('callback put off until its request is nearly deleted; kept for replay', {
        requestId: request.id,
        attempt: item.attempt + 1,
      });
      return keepFailed(context, withCallback, { attempts: item.attempt, lastStatus: null, lastError });
    }
    logger.debug('callback attempt put off: its organization has every share in use', {
      requestId: request.id,
      putOffMs,
    });
    return { done: false, retryAt: Math.min(clock.now() + putOffMs, latest), postponed: true };
  }
  const started = performance.now();
  let result: CallbackAttemptResult;
  try {
    result = await attempt(context, transport, request, request.callback);
  } finally {
    shares.give(organizationId);
  }
  const fields = {
    requestId: request.id,
    attempt: item.attempt + 1,
    outcome: result.outcome,
    status: result.status,
    durationMs: Math.round(performance.now() - started),
  };
  if (result.outcome !== 'failed') {
    logger.info('callback attempt', fields);
    return { done: true };
  }
  const delay = nextRetryDelay(item.attempt, result.retryAfterMs, Math.random());
  const retryAt = delay === null ? null : clock.now() + delay;
  if (retryAt === null || retryAt > lastAttemptBefore(context, request)) {
    logger.error(
      retryAt === null
        ? 'callback failed after every attempt; kept for replay'
        : 'callback failed: its next attempt would come after the request is deleted; kept for replay',
      result.cause === undefined
        ? { ...fields, error: result.error }
        : { ...fields, error: result.error, cause: result.cause },
    );
    return keepFailed(context, withCallback, {
      attempts: item.attempt + 1,
      lastStatus: result.status,
      lastError: result.error,
    });
  }
  logger.warn('callback attempt', {
    ...fields,
    error: result.error,
    ...(result.cause === undefined ? {} : { cause: result.cause }),
    nextAttemptAt: new Date(retryAt).toISOString(),
  });
  return { done: false, retryAt };
}
