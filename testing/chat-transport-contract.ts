import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../adapters/storage/memory/index.js';
import {
  type ChatTransport,
  type ChatUpdate,
  type Clock,
  type DeliveryRef,
  isRecipientGone,
  type MessageView,
  normalizeEmail,
  type Organization,
} from '../core/adapter-kit.js';
import { createNotifier, type Notifier } from '../core/index.js';

/** A user of the organization the suite sends to. */
export interface ContractUser {
  email: string;
  name: string;
}

/** What a recipient sees of one message on the platform. */
export interface SeenMessage {
  /** The message as the platform shows it; its own markup is fine, the words must be there. */
  text: string;
  /** The buttons the recipient can click now, in order; empty when there are none (any more). */
  buttons: { text: string; value: string }[];
  /** The footer line, or null when there is none. */
  footer: string | null;
}

/** A transport set up by a harness, and the ways to act on its platform as its users would. */
export interface ChatTransportUnderTest {
  transport: ChatTransport;
  /** The messages `email` sees on the platform, oldest first. */
  seen(email: string): Promise<SeenMessage[]>;
  /**
   * Clicks, on the platform, the button with `value` of message `index` (in {@link seen} order) of
   * `owner`, as `clicker` (the owner by default). Resolves once the platform's click has been
   * handled, including any processing after the platform's acknowledgement.
   */
  click(input: { owner: string; index: number; value: string; clicker?: string }): Promise<void>;
  /**
   * Makes the platform stop reaching `email` (a Slack user leaves the workspace, say). Leave it out
   * for a platform that reaches every user.
   */
  makeUnreachable?(email: string): Promise<void>;
  close(): Promise<void>;
}

/** What a chat transport provides to be held to the contract. */
export interface ChatTransportHarness {
  /**
   * Whether the platform says who clicked. The local inbox does not (anyone at the page may click
   * for anyone); Slack and Teams do, and must refuse a click by anyone but the recipient.
   */
  identifiesClicker: boolean;
  /** A fresh transport for an organization whose users are `users`, all reachable, in time `clock`. */
  create(setup: {
    organizationId: string;
    users: readonly ContractUser[];
    clock: Clock;
  }): Promise<ChatTransportUnderTest>;
}

const organization: Organization = { id: 'contract-org', name: 'Contract Org' };
const sender = { email: 'alice@contract.test', name: 'Alice Contract' };
const bob = { email: 'bob@contract.test', name: 'Bob Contract' };
const carol = { email: 'carol@contract.test', name: 'Carol Contract' };
const users: readonly ContractUser[] = [sender, bob, carol];
const apiKey = 'cnk_contract_alice_0000000000000000000001';
const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

/**
 * The behaviour every chat transport owes the core (ports/chat-transport.ts), checked through the
 * platform as its users see it: delivery of plain and interactive messages, updates after a click
 * and at expiry, clicks routed to the right request and recipient (and refused from anyone else),
 * unreachable recipients named in the send's `500` and refused with `RecipientGoneError`, updates
 * that are idempotent and never let an older view replace a newer one, and a `drain` and `close`
 * that settle.
 */
export function chatTransportContract(name: string, harness: ChatTransportHarness): void {
  describe(`chat transport contract: ${name}`, () => {
    let now = Date.parse('2026-03-01T09:00:00.000Z');
    const clock: Clock = { now: () => now };
    let platform: ChatTransportUnderTest;
    let notifier: Notifier;
    /** What the core handed the transport for each recipient, in order: deliveries, then updates. */
    let handed: Map<string, { delivery: ChatUpdate; ref: DeliveryRef }[]>;

    beforeEach(async () => {
      now = Date.parse('2026-03-01T09:00:00.000Z');
      platform = await harness.create({ organizationId: organization.id, users, clock });
      handed = new Map();
      notifier = createNotifier({
        storage: memoryStorage({ clock }),
        transports: [recording(platform.transport, handed)],
        clock,
        rateLimits: {
          perKey: { burst: 1000, perSecond: 1000 },
          perOrganization: { burst: 1000, perSecond: 1000 },
        },
      });
      await notifier.seed({
        organizations: [
          {
            ...organization,
            users: users.map((user) => ({
              ...user,
              role: user === sender ? ('admin' as const) : ('member' as const),
              apiKeys: user === sender ? [{ label: 'contract', key: apiKey }] : [],
            })),
          },
        ],
      });
    });

    afterEach(async () => {
      await notifier.stop();
      await platform.close();
    });

    const send = async (body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
      const response = await notifier.handle({
        method: 'POST',
        url: '/api/notify',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: [Buffer.from(JSON.stringify(body))],
        clientAddress: '127.0.0.1',
      });
      if (response === null) throw new Error('the notifier does not serve POST /api/notify');
      return { status: response.status, json: JSON.parse(response.body) as Record<string, unknown> };
    };

    const ask = async (recipients: string[]): Promise<string> => {
      const answer = await send({
        user_emails: recipients,
        message: 'Deploy *v2* to production?',
        response_request: { options, timeout_minutes: 60 },
      });
      expect(answer.status).toBe(200);
      return answer.json.request_id as string;
    };

    const only = async (email: string): Promise<SeenMessage> => {
      const messages = await platform.seen(email);
      expect(messages).toHaveLength(1);
      return messages[0]!;
    };

    const principal = async () => notifier.authenticate(apiKey);
    const answerOf = async (requestId: string, email: string) => {
      const status = await notifier.status(await principal(), requestId);
      return status.responses.find((response) => response.user_email === email)?.option_value;
    };

    /** The views the core handed the transport for `email`'s copy of one request, oldest first. */
    const viewsOf = (email: string, requestId: string) =>
      (handed.get(normalizeEmail(email)) ?? []).filter(
        ({ delivery }) => delivery.message.sendId === requestId,
      );

    /** Hands the transport `message` for `email`'s copy of a request again, as the core would. */
    const apply = async (email: string, requestId: string, message: MessageView) => {
      const [first] = viewsOf(email, requestId);
      if (!first) throw new Error(`no copy of ${requestId} was delivered to ${email}`);
      await platform.transport.update({ ...first.delivery, message }, first.ref);
    };

    it('delivers a plain message: the recipient sees its text and no buttons, others see nothing', async () => {
      const answer = await send({ user_emails: [bob.email], message: 'Deploy *v2* finished' });
      expect(answer.status).toBe(200);
      const message = await only(bob.email);
      expect(message.text).toContain('Deploy');
      expect(message.text).toContain('v2');
      expect(message.text).toContain('finished');
      expect(message.buttons).toEqual([]);
      expect(await platform.seen(carol.email)).toEqual([]);
    });

    it('delivers an interactive message: its text, one button per option, the validity and the sender', async () => {
      const requestId = await ask([bob.email]);
      const message = await only(bob.email);
      expect(message.text).toContain('Deploy');
      expect(message.buttons).toEqual(options);
      const footer = viewsOf(bob.email, requestId)[0]?.delivery.message.footer;
      expect(footer).toContain(sender.name);
      expect(message.footer).toBe(footer);
    });

    it('routes a click by the recipient to the core with its request, recipient and value', async () => {
      const first = await ask([bob.email, carol.email]);
      const second = await ask([bob.email, carol.email]);
      // The older message first, while both are open: a transport that routed every click to the
      // newest open request would send it to the second.
      await platform.click({ owner: bob.email, index: 0, value: 'approve' });
      expect(await answerOf(first, bob.email)).toBe('approve');
      expect(await answerOf(second, bob.email)).toBeNull();
      await platform.click({ owner: bob.email, index: 1, value: 'reject' });
      expect(await answerOf(second, bob.email)).toBe('reject');
      expect(await answerOf(first, bob.email)).toBe('approve');
      expect(await answerOf(first, carol.email)).toBeNull();
      expect(await answerOf(second, carol.email)).toBeNull();
    });

    it('updates the copy after a click: the buttons are gone and the choice is shown', async () => {
      await ask([bob.email, carol.email]);
      await platform.click({ owner: bob.email, index: 0, value: 'approve' });
      const message = await only(bob.email);
      expect(message.buttons).toEqual([]);
      expect(message.footer).toContain('Approve');
      expect((await only(carol.email)).buttons).toEqual(options);
    });

    it('updates every copy at expiry: the buttons are gone and the expiry is shown', async () => {
      await ask([bob.email, carol.email]);
      await platform.click({ owner: bob.email, index: 0, value: 'approve' });
      now += 60 * 60_000;
      await notifier.runDueWork();
      const expired = await only(carol.email);
      expect(expired.buttons).toEqual([]);
      expect(expired.footer).toMatch(/expired/i);
      const answered = await only(bob.email);
      expect(answered.buttons).toEqual([]);
      expect(answered.footer).toContain('Approve');
    });

    it.skipIf(!harness.identifiesClicker)(
      "refuses a click by someone else on a recipient's copy, and changes nothing",
      async () => {
        const requestId = await ask([bob.email, carol.email]);
        await platform.click({ owner: bob.email, index: 0, value: 'approve', clicker: carol.email });
        expect(await answerOf(requestId, bob.email)).toBeNull();
        expect(await answerOf(requestId, carol.email)).toBeNull();
        expect((await only(bob.email)).buttons).toEqual(options);
      },
    );

    it('answers a view applied twice with the same result', async () => {
      const requestId = await ask([bob.email]);
      await platform.click({ owner: bob.email, index: 0, value: 'approve' });
      const view = viewsOf(bob.email, requestId).at(-1)?.delivery.message;
      expect(view?.selected).toBe('approve');
      const before = await platform.seen(bob.email);
      await apply(bob.email, requestId, view!);
      await apply(bob.email, requestId, view!);
      expect(await platform.seen(bob.email)).toEqual(before);
    });

    it('never lets an older view replace a newer one', async () => {
      const requestId = await ask([bob.email]);
      await platform.click({ owner: bob.email, index: 0, value: 'approve' });
      const views = viewsOf(bob.email, requestId).map(({ delivery }) => delivery.message);
      const [openView, answeredView] = [views[0]!, views.at(-1)!];
      expect(answeredView.version).toBeGreaterThan(openView.version);
      const answered = await platform.seen(bob.email);
      await apply(bob.email, requestId, openView);
      expect(await platform.seen(bob.email)).toEqual(answered);
      expect((await only(bob.email)).buttons).toEqual([]);
    });

    it('names a recipient the platform does not reach in the 500: nothing goes to the others when the address says so before delivering', async (context) => {
      if (!platform.makeUnreachable) {
        context.skip();
        return;
      }
      await platform.makeUnreachable(carol.email);
      const user = await notifier.findUser(organization.id, carol.email);
      if (user === null) throw new Error('carol is not a user of the organization');
      // A platform may tell at once (its address answers null) or only when it delivers.
      const toldAtOnce = (await platform.transport.address(user, organization)) === null;
      const answer = await send({ user_emails: [bob.email, carol.email], message: 'Hello' });
      expect(answer.status).toBe(500);
      expect(answer.json.details).toContain(carol.email);
      expect(answer.json.details).not.toContain(bob.email);
      expect(await platform.seen(bob.email)).toHaveLength(toldAtOnce ? 0 : 1);
      expect(await platform.seen(carol.email)).toEqual([]);
    });

    it('rejects a delivery to an address the platform no longer reaches with RecipientGoneError, which another platform may make up for', async (context) => {
      if (!platform.makeUnreachable) {
        context.skip();
        return;
      }
      const requestId = await ask([bob.email]);
      const message = viewsOf(bob.email, requestId)[0]?.delivery.message;
      const user = await notifier.findUser(organization.id, carol.email);
      const address = user === null ? null : await platform.transport.address(user, organization);
      if (message === undefined || address === null)
        throw new Error('carol is reachable before she is made unreachable');
      await platform.makeUnreachable(carol.email);
      const failure: unknown = await platform.transport
        .deliver({ organization, recipient: normalizeEmail(carol.email), address, message })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isRecipientGone(failure)).toBe(true);
    });

    it('stops: the drain and the close that notifier.stop() awaits settle', async () => {
      await expect(notifier.stop()).resolves.toBeUndefined();
    });
  });
}

/** The transport, recording every delivery and update the core hands it, by recipient. */
function recording(
  transport: ChatTransport,
  handed: Map<string, { delivery: ChatUpdate; ref: DeliveryRef }[]>,
): ChatTransport {
  const record = (delivery: ChatUpdate, ref: DeliveryRef) => {
    handed.set(delivery.recipient, [...(handed.get(delivery.recipient) ?? []), { delivery, ref }]);
  };
  const { drain, close } = transport;
  return {
    platform: transport.platform,
    routes: transport.routes,
    address: (user, organization) => transport.address(user, organization),
    connect: (sink) => transport.connect(sink),
    ...(drain === undefined ? {} : { drain: () => drain.call(transport) }),
    ...(close === undefined ? {} : { close: () => close.call(transport) }),
    async deliver(delivery) {
      const ref = await transport.deliver(delivery);
      record(delivery, ref);
      return ref;
    },
    async update(delivery, ref) {
      await transport.update(delivery, ref);
      record(delivery, ref);
    },
  };
}
