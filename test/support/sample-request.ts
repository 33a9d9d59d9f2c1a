import type { InteractiveRequest, RecipientState } from '../../core/adapter-kit.js';

/** When the sample request was created. */
export const sampleCreatedAt = Date.parse('2026-03-01T09:00:00.000Z');
/** Its only recipient. */
export const sampleRecipient = 'bob@acme.test';

/** Bob's state in the sample request: no answer, or `value` a minute after creation. */
export const sampleRecipientState = (value: string | null, expired = false): RecipientState => ({
  email: sampleRecipient,
  key: sampleRecipient,
  value,
  respondedAt: value === null ? null : sampleCreatedAt + 60_000,
  expired,
});

/**
 * An interactive request as the core stores it, with bob as its only recipient and a message that
 * uses every kind of markup: what the platform renderers' tests draw.
 */
export function sampleRequest(overrides: Partial<InteractiveRequest> = {}): InteractiveRequest {
  return {
    id: 'req_0123456789abcdefABCDEF01',
    organizationId: 'acme',
    version: 1,
    status: 'pending',
    message:
      'Deploy *v2.3* to _production_?\n- `api`\n- `web`\nSee [the runbook](https://wiki.example.com/deploy?env=prod&v=2.3).',
    options: [
      { text: 'Approve ✅', value: 'approve' },
      { text: 'Reject', value: 'reject' },
    ],
    mode: 'onUserAction',
    timeoutMinutes: 60,
    createdAt: sampleCreatedAt,
    expiresAt: sampleCreatedAt + 60 * 60_000,
    finishedAt: null,
    externalReferenceId: null,
    sender: { userId: 'usr_alice', name: 'Alice Doe' },
    callback: null,
    recipients: [sampleRecipientState(null)],
    ...overrides,
  };
}
