import type { NotificationSent, RequestCreated, RequestStatus } from './types.js';

/** A check of a successful answer's body: what it lacks, or null when it has the shape promised. */
export type AnswerShape = (body: unknown) => string | null;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A fire-and-forget send's answer: its `notification_id`. */
export const notificationSentShape: AnswerShape = (body) => {
  if (!isObject(body)) return 'The answer is no JSON object';
  const { notification_id: notificationId } = body as Partial<NotificationSent>;
  return typeof notificationId === 'string' ? null : 'The answer carries no notification_id';
};

/** An interactive send's answer: its `request_id`. */
export const requestCreatedShape: AnswerShape = (body) => {
  if (!isObject(body)) return 'The answer is no JSON object';
  const { request_id: requestId } = body as Partial<RequestCreated>;
  return typeof requestId === 'string' ? null : 'The answer carries no request_id';
};

/** A status read's answer: `pending` or `finished`, and the responses. */
export const requestStatusShape: AnswerShape = (body) => {
  if (!isObject(body)) return 'The answer is no JSON object';
  const { status, responses } = body as Partial<RequestStatus>;
  if (status !== 'pending' && status !== 'finished') {
    return 'The answer is no request status: its status is neither pending nor finished';
  }
  return Array.isArray(responses) ? null : 'The answer carries no responses list';
};
