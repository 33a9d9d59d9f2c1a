/**
 * `chat-notify/adapter-kit`: everything a storage adapter or a chat transport is built from: the
 * ports it implements, the domain types they speak, and the helpers every adapter would otherwise
 * write again (error mapping, composed admission, namespaced transport state, markdown renderers,
 * HTTP answers for transport routes). The adapters of this repository use nothing else of the core.
 *
 * @module
 */
export { checkCallbackTarget } from './callbacks/check-callback-target.js';
export type { ApiKeyRecord, ChatLink, Organization, Principal, User, UserRole } from './domain/directory.js';
export { normalizeEmail } from './domain/directory.js';
export type { ClaimedDueItem, DueItem, DueWorkKind } from './domain/due-work.js';
export { callbackItemId, pledgedRefreshItemId, refreshItemId, timeoutItemId } from './domain/due-work.js';
export type {
  CallbackTarget,
  DisableMode,
  InteractiveRequest,
  RecipientState,
  ResponseOption,
  Sender,
} from './domain/interactive-request.js';
export { timeoutEnd } from './domain/interactive-request.js';
export type { ButtonView, MessageView } from './domain/message-view.js';
export { isNotifyError, NotifyError, type NotifyErrorCode } from './errors.js';
export { attemptNetwork } from './http/client-address.js';
export type { HttpHandler, HttpHandlerOptions, IncomingHttpRequest } from './http/handler.js';
export { createHttpHandler } from './http/handler.js';
export { checkServed } from './http/host-checks.js';
export { isJsonMediaType } from './http/json-media-type.js';
export type { IncomingHeaders } from './http/request-headers.js';
export { errorResponse, htmlResponse, jsonResponse } from './http/responses.js';
export { type ServingGate, shuttingDownResponse } from './http/serving-gate.js';
export type { HttpRequest, HttpResponse, Route } from './http/types.js';
export type { Block, Inline, MarkdownDocument } from './markdown/ast.js';
export { parseMarkdown } from './markdown/parse.js';
export { renderHtml } from './markdown/render-html.js';
export { escapeMrkdwn, guardMentions, renderMrkdwn } from './markdown/render-mrkdwn.js';
export { renderPlainText } from './markdown/render-plain.js';
export { safeLinkUrl } from './markdown/safe-url.js';
export { splitMrkdwn } from './markdown/split-mrkdwn.js';
export { checkMethodsOption, clockMethods, loggerMethods } from './methods-option.js';
export { checkNumberOption, type NumberRule } from './number-option.js';
export type {
  Admission,
  AdmissionRequest,
  AdmissionStore,
  BucketRate,
  IdempotencyClaim,
  RequestToCreate,
} from './ports/admission-store.js';
export { admittedRequest, apiKeyBucketKey, organizationBucketKey } from './ports/admission-store.js';
export type {
  CallbackAttempt,
  CallbackAttemptResult,
  CallbackTransport,
  HostResolver,
} from './ports/callback-transport.js';
export type {
  ChatAddress,
  ChatDelivery,
  ChatSink,
  ChatTransport,
  ChatUpdate,
  Click,
  ClickOptions,
  ClickOutcome,
} from './ports/chat-transport.js';
export { isRecipientGone, RecipientGoneError } from './ports/chat-transport.js';
export type { Clock } from './ports/clock.js';
export { systemClock } from './ports/clock.js';
export type {
  DeliveryRecord,
  DeliveryRef,
  DeliveryStore,
  DeliveryWriteOptions,
} from './ports/delivery-store.js';
export type { ApiKeyFilter, DirectoryStore } from './ports/directory-store.js';
export type { DueWorkStore, RescheduleOptions } from './ports/due-work-store.js';
export type {
  FailedCallback,
  FailedCallbackStore,
  FailedCallbackWriteOptions,
} from './ports/failed-callback-store.js';
export type {
  IdempotencyAcquisition,
  IdempotencyScope,
  IdempotencyStore,
  IdempotencyTiming,
  StoredResponse,
} from './ports/idempotency-store.js';
export type { LogFields, Logger } from './ports/logger.js';
export { silentLogger } from './ports/logger.js';
export type { BucketSpec, RateLimitStore } from './ports/rate-limit-store.js';
export type { DueWorkChanges, RequestStore, RequestWriteOptions } from './ports/request-store.js';
export type { StoragePorts } from './ports/storage.js';
export type {
  TransportStateRecord,
  TransportStateStore,
  TransportStateWriteOptions,
} from './ports/transport-state-store.js';
export type { BucketState } from './rate-limit/token-bucket.js';
export { fullAt, refill, takeTokens } from './rate-limit/token-bucket.js';
export { signCallback } from './schemas/callback-signature.js';
export { emailAddress } from './schemas/email-address.js';
export { limits, longestOpenMs } from './schemas/notify-request.js';
export { boundedText, strictObject } from './schemas/text-rules.js';
export { randomBase62 } from './security/random-id.js';
export type { AdmissionFollowUps } from './storage-kit/admission-with-follow-ups.js';
export { admissionWithFollowUps } from './storage-kit/admission-with-follow-ups.js';
export type { AdmissionParts } from './storage-kit/composed-admission.js';
export { composedAdmission } from './storage-kit/composed-admission.js';
export { reportUnavailable, toStorageError } from './storage-kit/unavailable.js';
export { scopedTransportState } from './transport-state/scoped-state.js';
export { ttlMillis } from './transport-state/ttl.js';
export { checkDelayRange, checkHttpUrlOption } from './url-option.js';
