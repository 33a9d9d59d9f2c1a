import { z } from 'zod';

/** Answer of a fire-and-forget send (docs/http-api.md#successful-response-200). */
export const notificationSentSchema = z.object({
  status: z.literal('ok'),
  notification_id: z.string().regex(/^notif_[A-Za-z0-9]{24}$/),
});

/** Answer of an interactive send (docs/http-api.md#successful-response-200). */
export const requestCreatedSchema = z.object({
  status: z.literal('ok'),
  request_id: z.string().regex(/^req_[A-Za-z0-9]{24}$/),
  callback_secret: z.string().optional(),
});

/** One recipient's entry in a status answer or callback (docs/http-api.md#response-200). */
export const recipientResponseSchema = z.object({
  user_email: z.string(),
  option_value: z.string().nullable(),
  timestamp: z.iso.datetime({ precision: 3 }).nullable(),
  expired: z.boolean(),
});

/** Answer of `GET /api/notify/status/{request_id}` (docs/http-api.md#response-200). */
export const requestStatusSchema = z.object({
  status: z.enum(['pending', 'finished']),
  external_reference_id: z.string().optional(),
  responses: z.array(recipientResponseSchema),
});

/** Body of every error answer (docs/http-api.md#error-reference). */
export const errorBodySchema = z.object({ status: z.literal('error'), details: z.string() });

export type NotificationSent = z.infer<typeof notificationSentSchema>;
export type RequestCreated = z.infer<typeof requestCreatedSchema>;
export type RecipientResponse = z.infer<typeof recipientResponseSchema>;
export type RequestStatus = z.infer<typeof requestStatusSchema>;
export type ErrorBody = z.infer<typeof errorBodySchema>;
