export type { ApiKeyRecord, ChatLink, Organization, Principal, User, UserRole } from './domain/directory.js';
export { normalizeEmail } from './domain/directory.js';
export type { ClaimedDueItem, DueItem, DueWorkKind } from './domain/due-work.js';
export { callbackItemId, timeoutItemId } from './domain/due-work.js';
export type {
  CallbackTarget,
  DisableMode,
  InteractiveRequest,
  RecipientState,
  ResponseOption,
  Sender,
} from './domain/interactive-request.js';
export type { ButtonView, MessageView } from './domain/message-view.js';
export type { DueWorkHandler, DueWorkResult } from './due-work/due-work-runner.js';
export type { NotifyErrorCode, NotifyErrorOptions } from './errors.js';
export { isNotifyError, NotifyError } from './errors.js';
export type { TrustProxy } from './http/client-address.js';
export type { HttpHandler, HttpHandlerOptions, IncomingHttpRequest } from './http/handler.js';
export { openApiDocument } from './http/openapi.js';
export { errorResponse, htmlResponse, jsonResponse } from './http/responses.js';
export type { HttpRequest, HttpResponse, Route } from './http/types.js';
export type { Block, Inline, MarkdownDocument } from './markdown/ast.js';
export { parseMarkdown } from './markdown/parse.js';
export { renderHtml } from './markdown/render-html.js';
export { renderPlainText } from './markdown/render-plain.js';
export { safeLinkUrl } from './markdown/safe-url.js';
export type { Notifier, NotifierOptions } from './notifier.js';
export { createNotifier } from './notifier.js';
export type { Admission, AdmissionRequest, AdmissionStore, BucketRate } from './ports/admission-store.js';
export { apiKeyBucketKey, organizationBucketKey } from './ports/admission-store.js';
export type {
  ChatAddress,
  ChatDelivery,
  ChatSink,
  ChatTransport,
  Click,
  ClickOutcome,
} from './ports/chat-transport.js';
export type { Clock } from './ports/clock.js';
export { systemClock } from './ports/clock.js';
export type { DeliveryRecord, DeliveryRef, DeliveryStore } from './ports/delivery-store.js';
export type { ApiKeyFilter, DirectoryStore } from './ports/directory-store.js';
export type { DueWorkStore } from './ports/due-work-store.js';
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
export type { DueWorkChanges, RequestStore } from './ports/request-store.js';
export type { StoragePorts } from './ports/storage.js';
export type {
  TransportStateRecord,
  TransportStateStore,
  TransportStateWriteOptions,
} from './ports/transport-state-store.js';
export type { RateLimit, RateLimitSettings } from './rate-limit/settings.js';
export { defaultRateLimits } from './rate-limit/settings.js';
export type { NotifyRequest, NotifyRequestInput } from './schemas/notify-request.js';
export { limits, notifyRequestSchema } from './schemas/notify-request.js';
export type {
  ErrorBody,
  NotificationSent,
  RecipientResponse,
  RequestCreated,
  RequestStatus,
} from './schemas/responses.js';
export type { IdGenerator } from './security/random-id.js';
export { randomIds } from './security/random-id.js';
export { scopedTransportState } from './transport-state/scoped-state.js';
export type { ApiKeyView, CreatedApiKey, KeyActor } from './use-cases/api-keys.js';
export type { Seed } from './use-cases/seed.js';
export { seedSchema } from './use-cases/seed.js';
