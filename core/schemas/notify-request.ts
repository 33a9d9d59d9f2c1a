import { z } from 'zod';
import { emailAddress, paddedEmailPattern } from './email-address.js';
import {
  boundedArray,
  boundedNumber,
  boundedText,
  isBlank,
  strictObject,
  typeMessage,
} from './text-rules.js';

/** Size limits (docs/http-api.md#request-body). */
export const limits = {
  recipients: 50,
  messageLength: 4000,
  externalReferenceIdLength: 200,
  minOptions: 2,
  maxOptions: 5,
  optionTextLength: 75,
  optionValueLength: 100,
  minTimeoutMinutes: 1,
  maxTimeoutMinutes: 1440,
} as const;

/** The longest an interactive request stays open (the longest timeout), in milliseconds. */
export const longestOpenMs = limits.maxTimeoutMinutes * 60_000;

const email = z
  .string({ error: typeMessage('a string') })
  .trim()
  .pipe(emailAddress('must be a valid email address'))
  .meta({ description: 'An email address; spaces at either end are trimmed', pattern: paddedEmailPattern });

/** What a text that must show something says when it is blank. */
const blankMessage = 'must not be blank (only whitespace or invisible characters)';

/** A response button (docs/http-api.md#request-body): its label must show something to choose by. */
export const optionSchema = strictObject({
  text: boundedText(1, limits.optionTextLength).refine((text) => !isBlank(text), blankMessage),
  value: boundedText(1, limits.optionValueLength),
});

/** The `response_request` object (docs/http-api.md#request-body). */
export const responseRequestSchema = strictObject({
  options: boundedArray(optionSchema, limits.minOptions, limits.maxOptions).refine(
    (options) => new Set(options.map((option) => option.value)).size === options.length,
    'option values must be unique',
  ),
  timeout_minutes: boundedNumber(limits.minTimeoutMinutes, limits.maxTimeoutMinutes),
  disable: z
    .enum(['onUserAction', 'onTimeout'], { error: 'must be "onUserAction" or "onTimeout"' })
    .default('onUserAction'),
  callback_url: boundedText(1, 2048).optional(),
});

/** The body of `POST /api/notify` (docs/http-api.md#request-body). */
export const notifyRequestSchema = strictObject({
  user_emails: boundedArray(email, 1, limits.recipients),
  message: boundedText(1, limits.messageLength).refine((message) => !isBlank(message), blankMessage),
  external_reference_id: boundedText(0, limits.externalReferenceIdLength).optional(),
  response_request: responseRequestSchema.optional(),
});

/** A validated send request. */
export type NotifyRequest = z.output<typeof notifyRequestSchema>;
/** A send request as a caller writes it. */
export type NotifyRequestInput = z.input<typeof notifyRequestSchema>;
