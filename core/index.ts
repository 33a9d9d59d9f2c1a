/**
 * `chat-notify`: what an application needs to embed the service. Build a notifier over storage and
 * chat transports (`chat-notify/memory`, `/redis`, `/mongo`, `/inbox`, `/slack`, `/teams`), mount
 * its handler with a host (`chat-notify/express`, `/koa`) and manage API keys for signed-in users.
 * Writing a storage adapter or a chat transport: `chat-notify/adapter-kit`.
 *
 * @module
 */
export type { ApiKeyRecord, ChatLink, Organization, Principal, User, UserRole } from './domain/directory.js';
export type { NotifyErrorCode, NotifyErrorOptions } from './errors.js';
export { isNotifyError, NotifyError } from './errors.js';
export type { TrustProxy } from './http/client-address.js';
export type { HttpHandler, HttpHandlerOptions, IncomingHttpRequest } from './http/handler.js';
export { openApiDocument } from './http/openapi.js';
export type { IncomingHeaders } from './http/request-headers.js';
export { originForm } from './http/request-target.js';
export type { HttpResponse } from './http/types.js';
export type { Notifier, NotifierOptions } from './notifier.js';
export { createNotifier } from './notifier.js';
export type {
  CallbackAttempt,
  CallbackAttemptResult,
  CallbackTransport,
  HostResolver,
} from './ports/callback-transport.js';
export type { ChatTransport, Click, ClickOptions, ClickOutcome } from './ports/chat-transport.js';
export type { Clock } from './ports/clock.js';
export { systemClock } from './ports/clock.js';
export type { FailedCallback } from './ports/failed-callback-store.js';
export type { LogFields, Logger } from './ports/logger.js';
export { silentLogger } from './ports/logger.js';
export type { StoragePorts } from './ports/storage.js';
export type { RateLimit, RateLimitSettings } from './rate-limit/settings.js';
export { defaultRateLimits } from './rate-limit/settings.js';
export type { CallbackBody } from './schemas/callback.js';
export type { NotifyRequest, NotifyRequestInput } from './schemas/notify-request.js';
export { limits } from './schemas/notify-request.js';
export type {
  ErrorBody,
  NotificationSent,
  RecipientResponse,
  RequestCreated,
  RequestStatus,
} from './schemas/responses.js';
export type { IdGenerator } from './security/random-id.js';
export type { ApiKeyView, CreatedApiKey, KeyActor } from './use-cases/api-keys.js';
export type { Seed } from './use-cases/seed.js';
export { seedSchema } from './use-cases/seed.js';
