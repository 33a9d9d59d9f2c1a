import { z } from 'zod';

/**
 * The parts of a `block_actions` payload (https://api.slack.com/reference/interaction-payloads/block-actions)
 * that route a click; Slack sends many more fields, which are ignored.
 */
const blockActionsSchema = z.object({
  type: z.literal('block_actions'),
  // Null for an app installed across an Enterprise Grid organization; the user then names the workspace.
  team: z.object({ id: z.string() }).nullish(),
  user: z.object({ id: z.string(), team_id: z.string().optional() }),
  container: z.object({ message_ts: z.string(), channel_id: z.string() }),
  actions: z.array(
    z.object({
      action_id: z.string(),
      block_id: z.string(),
      value: z.string().optional(),
      action_ts: z.string().regex(/^\d{1,20}(\.\d{1,20})?$/, 'action_ts must be seconds with a fraction'),
    }),
  ),
});

/** Clicks on buttons of one message. */
export interface BlockActions {
  teamId: string | null;
  userId: string;
  channel: string;
  ts: string;
  actions: { blockId: string; value: string | undefined; actionTs: string }[];
}

/**
 * What a signed interactivity request holds: clicks on a message, something the transport does
 * not handle (a shortcut, a modal), or a body that is not Slack's.
 */
export type Interaction =
  | { kind: 'block-actions'; clicks: BlockActions }
  | { kind: 'other' }
  | { kind: 'invalid'; details: string };

/** Reads the form-encoded body (`payload=<JSON>`) of an interactivity request. */
export function parseInteraction(body: Uint8Array): Interaction {
  let payload: unknown;
  try {
    const form = new URLSearchParams(new TextDecoder('utf-8', { fatal: true }).decode(body));
    payload = JSON.parse(form.get('payload') ?? '');
  } catch {
    return {
      kind: 'invalid',
      details: 'Body could not be parsed: expected a form field "payload" holding JSON',
    };
  }
  const type = z.object({ type: z.string() }).safeParse(payload);
  if (type.success && type.data.type !== 'block_actions') return { kind: 'other' };
  const parsed = blockActionsSchema.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', details: 'payload: not a valid block_actions payload' };
  const { team, user, container, actions } = parsed.data;
  return {
    kind: 'block-actions',
    clicks: {
      teamId: team?.id ?? user.team_id ?? null,
      userId: user.id,
      channel: container.channel_id,
      ts: container.message_ts,
      actions: actions.map((action) => ({
        blockId: action.block_id,
        value: action.value,
        actionTs: action.action_ts,
      })),
    },
  };
}
