/**
 * `chat-notify/client`: call the notification service over HTTP and verify its completion
 * callbacks. Depends only on the global `fetch` and `node:crypto`.
 */
export { type CallbackToSign, signCallback } from '../core/schemas/callback-signature.js';
export { verifyCallback } from './callbacks.js';
export { createClient } from './client.js';
export {
  CallbackVerificationError,
  type CallbackVerificationReason,
  NotifyClientError,
  type NotifyClientErrorInit,
  NotifyTimeoutError,
} from './errors.js';
export type {
  CallbackEvent,
  CallbackHeaders,
  ClientOptions,
  InteractiveNotifyRequest,
  NotificationSent,
  NotifyClient,
  NotifyRequestInput,
  PlainNotifyRequest,
  RecipientResponse,
  RequestCreated,
  RequestStatus,
  ResponseRequestInput,
  RetryOptions,
  SendOptions,
  SendResult,
  Sleep,
  StatusOptions,
  VerifyCallbackOptions,
  WaitOptions,
} from './types.js';
