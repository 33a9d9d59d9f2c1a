import type { z } from 'zod';
import { boundedText, limits, strictObject } from '../../../core/adapter-kit.js';

/** The body of `POST /inbox/api/messages/:id/click`: the value of the option clicked. */
export const clickBodySchema = strictObject({
  value: boundedText(1, limits.optionValueLength),
});

/** A validated click body. */
export type ClickBody = z.output<typeof clickBodySchema>;

/** The outcome of reading a click body: the value, or the `details` of a 400 answer. */
export type ClickBodyResult = { ok: true; body: ClickBody } | { ok: false; details: string };

/** Decodes, parses and validates a raw click body. */
export function parseClickBody(raw: Uint8Array): ClickBodyResult {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    return { ok: false, details: 'Body could not be parsed: it must be a JSON object' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, details: 'Body could not be parsed: it must be a JSON object' };
  }
  const result = clickBodySchema.safeParse(json);
  if (result.success) return { ok: true, body: result.data };
  return { ok: false, details: result.error.issues.flatMap(describeIssue).join('; ') };
}

/** `path: rule` for each problem, so the caller sees which field is wrong and why. */
function describeIssue(issue: z.core.$ZodIssue): string[] {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${[...path, key].join('.')}: is not a known field`);
  }
  return [`${path.length === 0 ? 'body' : path.join('.')}: ${issue.message}`];
}
