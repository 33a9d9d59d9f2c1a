import { z } from 'zod';
import { normalizeTenantId } from './tenants.js';

const accountSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  aadObjectId: z.string().optional(),
});

/** A Teams user or the bot, as an activity names them. */
export type TeamsAccount = z.output<typeof accountSchema>;

/**
 * The parts of a Bot Framework activity (https://learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference#activity-object)
 * that the transport reads; Teams sends many more, which are ignored.
 */
const activitySchema = z.object({
  type: z.string().min(1),
  id: z.string().optional(),
  name: z.string().optional(),
  channelId: z.string(),
  serviceUrl: z.url(),
  from: accountSchema,
  recipient: accountSchema,
  conversation: z.object({
    id: z.string().min(1),
    conversationType: z.string().optional(),
    tenantId: z.string().optional(),
  }),
  replyToId: z.string().optional(),
  action: z.string().optional(),
  membersAdded: z.array(accountSchema).optional(),
  membersRemoved: z.array(accountSchema).optional(),
  channelData: z.object({ tenant: z.object({ id: z.string() }).optional() }).optional(),
  value: z.unknown().optional(),
});

/** An inbound activity, as far as the transport reads it. */
export type TeamsActivity = z.output<typeof activitySchema>;

/** The outcome of reading a request body: the activity, or the `details` of a 400 answer. */
export type ActivityResult = { ok: true; activity: TeamsActivity } | { ok: false; details: string };

/** Decodes and checks the body of `POST /teams/messages`. */
export function parseActivity(raw: Uint8Array): ActivityResult {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    return { ok: false, details: 'Body could not be parsed: it must be a JSON activity' };
  }
  const result = activitySchema.safeParse(json);
  if (result.success) return { ok: true, activity: result.data };
  const issue = result.error.issues[0];
  return { ok: false, details: `Invalid activity: ${issue?.path.join('.') || 'body'}: ${issue?.message}` };
}

/**
 * The tenant an activity comes from (lower-case): Teams names it in `channelData.tenant` and in
 * `conversation.tenantId`. Null when it names none, or two that differ.
 */
export function tenantOfActivity(activity: TeamsActivity): string | null {
  const named = [activity.channelData?.tenant?.id, activity.conversation.tenantId].flatMap((tenant) =>
    tenant === undefined ? [] : [normalizeTenantId(tenant)],
  );
  const [first] = named;
  return first !== undefined && named.every((tenant) => tenant === first) ? first : null;
}

/** The verb of the buttons this transport puts on its cards. */
export const answerVerb = 'chat-notify.answer';

const cardActionSchema = z.object({
  action: z.object({
    type: z.literal('Action.Execute'),
    verb: z.literal(answerVerb),
    data: z.object({ requestId: z.string().min(1), value: z.string().min(1) }),
  }),
});

/** What a click on one of this transport's buttons says of itself. */
export type CardAction = z.output<typeof cardActionSchema>['action']['data'];

/** The request and value of an `adaptiveCard/action` invoke, or null when it is not a click on one of our buttons. */
export function cardActionOf(activity: TeamsActivity): CardAction | null {
  const parsed = cardActionSchema.safeParse(activity.value);
  return parsed.success ? parsed.data.action.data : null;
}
