import { beforeEach, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { type InboxMessages, inboxMessages } from '../../adapters/chat/inbox/messages.js';
import { pageScript } from '../../adapters/chat/inbox/page-script.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Organization, User } from '../../core/domain/directory.js';
import type { ButtonView, MessageView } from '../../core/domain/message-view.js';
import type { HttpResponse, Route } from '../../core/http/types.js';
import { parseMarkdown } from '../../core/markdown/parse.js';
import type {
  ChatDelivery,
  ChatSink,
  ChatTransport,
  Click,
  ClickOutcome,
} from '../../core/ports/chat-transport.js';
import type { DeliveryRecord, DeliveryRef } from '../../core/ports/delivery-store.js';

const organization: Organization = { id: 'acme', name: 'Acme Inc' };
const otherOrganization: Organization = { id: 'globex', name: 'Globex' };

const user = (email: string, name: string, organizationId = organization.id): User => ({
  id: `user_${name.replace(/\W/g, '')}`,
  organizationId,
  email,
  name,
  role: 'member',
  chatLinks: [],
});

const alice = user('alice@acme.test', 'Alice Doe');
const bob = user('Bob@Acme.test', 'Bob <b>Builder</b>');
const zoe = user('zoe@acme.test', 'Zoe Zed');

const options: ButtonView[] = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
];

const interactiveView = (overrides: Partial<MessageView> = {}): MessageView => {
  const text = overrides.text ?? 'Deploy *v2* to production?';
  return {
    kind: 'interactive',
    sendId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
    version: 1,
    text,
    document: parseMarkdown(text),
    buttons: options,
    buttonsEnabled: true,
    selected: null,
    selectedText: null,
    state: 'open',
    expiresAt: Date.UTC(2100, 0, 1),
    footer: 'Valid for 60 minutes · sent by Alice Doe',
    ...overrides,
  };
};

const plainView = (text: string): MessageView => ({
  kind: 'plain',
  sendId: 'notif_BBBBBBBBBBBBBBBBBBBBBBBB',
  version: 0,
  text,
  document: parseMarkdown(text),
  buttons: [],
  buttonsEnabled: false,
  selected: null,
  selectedText: null,
  state: 'plain',
  expiresAt: null,
  footer: null,
});

const deliveryTo = (recipient: string, message: MessageView, org = organization): ChatDelivery => ({
  organization: org,
  recipient,
  address: { installationId: 'local', userRef: recipient },
  message,
});

/** A sink that records every click and answers what the test asks for, over state of its own. */
class RecordingSink implements ChatSink {
  readonly clicks: Click[] = [];
  readonly state = memoryStorage().transportState;
  outcome: ClickOutcome = 'accepted';
  users: User[] = [alice, bob, zoe];

  async click(click: Click): Promise<ClickOutcome> {
    this.clicks.push(click);
    return this.outcome;
  }

  async listUsers(): Promise<User[]> {
    return this.users;
  }

  async copies(): Promise<DeliveryRecord[]> {
    return [];
  }

  async view(): Promise<MessageView | null> {
    return null;
  }
}

interface CallOptions {
  query?: Record<string, string>;
  body?: string | Uint8Array;
  /** `application/json` unless given. */
  contentType?: string;
}

/** Matches `path` against a route path with `:name` segments, as a host would. */
function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [index, segment] of want.entries()) {
    const actual = got[index] ?? '';
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(actual);
    else if (segment !== actual) return null;
  }
  return params;
}

async function call(
  transport: ChatTransport,
  method: Route['method'],
  path: string,
  { query = {}, body = '', contentType = 'application/json' }: CallOptions = {},
): Promise<HttpResponse> {
  for (const route of transport.routes) {
    const params = route.method === method ? matchPath(route.path, path) : null;
    if (params === null) continue;
    return route.handle(
      {
        method,
        path,
        query: new URLSearchParams(query),
        headers: { 'content-type': contentType },
        body: typeof body === 'string' ? new TextEncoder().encode(body) : body,
        clientAddress: '127.0.0.1',
      },
      params,
    );
  }
  throw new Error(`no route for ${method} ${path}`);
}

const json = (response: HttpResponse): unknown => JSON.parse(response.body);

const clickPath = (id: string): string => `/inbox/api/messages/${encodeURIComponent(id)}/click`;

const expectError = (response: HttpResponse, status: number, details?: RegExp): void => {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = json(response);
  expect(body).toEqual({ status: 'error', details: expect.any(String) });
  if (details) expect((body as { details: string }).details).toMatch(details);
};

describe('inbox transport', () => {
  let store: InboxMessages;
  let now: number;
  let sink: RecordingSink;
  let transport: ChatTransport;

  /** Delivers through the transport; answers the reference it gave and the id of the copy. */
  const deliver = async (delivery: ChatDelivery): Promise<{ ref: DeliveryRef; id: string }> => ({
    ref: await transport.deliver(delivery),
    id: await store.idOf({ sendId: delivery.message.sendId, recipient: delivery.recipient }),
  });

  beforeEach(() => {
    now = 1_700_000_000_000;
    sink = new RecordingSink();
    store = inboxMessages({ state: sink.state, clock: { now: () => now } });
    transport = inboxTransport({ clock: { now: () => now } });
    transport.connect(sink);
  });

  describe('address', () => {
    it('reaches every user, without any chat link, at their normalized address', () => {
      expect(transport.platform).toBe('inbox');
      expect(transport.address(user('  Carol@ACME.test ', 'Carol'), organization)).toEqual({
        installationId: 'local',
        userRef: 'carol@acme.test',
      });
      expect(transport.address(alice, otherOrganization)).toEqual({
        installationId: 'local',
        userRef: 'alice@acme.test',
      });
    });
  });

  describe('deliver', () => {
    it('stores an interactive message under an id made of its send and recipient, and keeps no reference', async () => {
      const { ref, id } = await deliver(deliveryTo('alice@acme.test', interactiveView()));

      expect(ref).toEqual({});
      expect(id).toMatch(/^msg_[0-9A-Za-z_-]+\.[0-9A-Za-z_-]{22}$/);
      expect(await store.get(id)).toEqual({
        id,
        recipient: 'alice@acme.test',
        organizationId: 'acme',
        kind: 'interactive',
        requestId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
        text: 'Deploy *v2* to production?',
        buttons: options,
        buttonsEnabled: true,
        footer: 'Valid for 60 minutes · sent by Alice Doe',
        selected: null,
        deliveredAt: 1_700_000_000_000,
      });
    });

    it('stores a plain message without a request id', async () => {
      const { id } = await deliver(deliveryTo('bob@acme.test', plainView('Hello')));
      expect(await store.get(id)).toMatchObject({
        kind: 'plain',
        requestId: null,
        text: 'Hello',
        buttons: [],
        footer: null,
        selected: null,
      });
    });

    it('gives every copy its own id and keeps no reference to the view', async () => {
      const view = interactiveView({ buttons: [...options] });
      const first = await deliver(deliveryTo('alice@acme.test', view));
      const second = await deliver(deliveryTo('zoe@acme.test', view));
      view.buttons.push({ text: 'Later', value: 'later' });

      expect(first.id).not.toBe(second.id);
      expect((await store.get(first.id))?.buttons).toEqual(options);
      expect((await store.get(second.id))?.recipient).toBe('zoe@acme.test');
    });

    it('keeps one message for a copy delivered again (a retried delivery)', async () => {
      const delivery = deliveryTo('alice@acme.test', interactiveView());
      const first = await deliver(delivery);
      const again = await deliver(delivery);
      expect(again.id).toBe(first.id);
      expect((await store.list('alice@acme.test')).map((message) => message.id)).toEqual([first.id]);
    });

    it('shows a copy delivered with a choice its own view, and copies without one the newest of theirs', async () => {
      const first = await deliver(deliveryTo('alice@acme.test', interactiveView()));
      const chosen = await deliver(
        deliveryTo(
          'zoe@acme.test',
          interactiveView({ version: 2, selected: 'approve', footer: 'You chose' }),
        ),
      );
      const late = await deliver(
        deliveryTo('bob@acme.test', interactiveView({ version: 0, footer: 'before' })),
      );
      expect((await store.get(first.id))?.footer).toBe('Valid for 60 minutes · sent by Alice Doe');
      expect(await store.get(chosen.id)).toMatchObject({ footer: 'You chose', selected: 'approve' });
      expect((await store.get(late.id))?.footer).toBe('Valid for 60 minutes · sent by Alice Doe');
    });

    it('finds no message under an id it did not make', async () => {
      const { id } = await deliver(deliveryTo('alice@acme.test', interactiveView()));
      const forged = Buffer.from('req_AAAAAAAAAAAAAAAAAAAAAAAA\nzoe@acme.test').toString('base64url');
      for (const madeUp of [`msg_${forged}.${id.split('.')[1]}`, 'msg_', 'msg_!!!!', `${id}=`, 'req_x']) {
        expect(await store.get(madeUp)).toBeNull();
      }
    });

    it('refuses to deliver before the notifier connects it, having nowhere to keep the message', async () => {
      await expect(
        inboxTransport().deliver(deliveryTo('alice@acme.test', interactiveView())),
      ).rejects.toThrow(/not connected/);
    });

    it('keeps messages in the state the sink hands it, so instances on one store share them', async () => {
      const { ref, id } = await deliver(deliveryTo('alice@acme.test', interactiveView()));
      const otherInstance = inboxTransport();
      otherInstance.connect(sink);
      await otherInstance.update(
        deliveryTo('alice@acme.test', interactiveView({ version: 2, footer: 'Seen' })),
        ref,
      );
      expect(await store.list('alice@acme.test')).toMatchObject([{ id, footer: 'Seen' }]);
    });
  });

  describe('update', () => {
    it('rewrites buttons, their state, footer and choice; keeps id, text and delivery time', async () => {
      const delivery = deliveryTo('alice@acme.test', interactiveView());
      const { ref, id } = await deliver(delivery);
      now += 60_000;

      await transport.update(
        deliveryTo(
          'alice@acme.test',
          interactiveView({
            text: 'something else',
            buttons: [{ text: 'Approve', value: 'approve' }],
            buttonsEnabled: false,
            selected: 'approve',
            selectedText: 'Approve',
            state: 'answered',
            footer: 'Answered: Approve',
          }),
        ),
        ref,
      );

      expect(await store.get(id)).toEqual({
        id,
        recipient: 'alice@acme.test',
        organizationId: 'acme',
        kind: 'interactive',
        requestId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
        text: 'Deploy *v2* to production?',
        buttons: [{ text: 'Approve', value: 'approve' }],
        buttonsEnabled: false,
        footer: 'Answered: Approve',
        selected: 'approve',
        deliveredAt: 1_700_000_000_000,
      });
    });

    it("keeps a copy in its place among the recipient's messages", async () => {
      const first = await deliver(deliveryTo('alice@acme.test', interactiveView()));
      now += 1;
      const second = await deliver(deliveryTo('alice@acme.test', plainView('Later news')));
      await transport.update(
        deliveryTo(
          'alice@acme.test',
          interactiveView({ version: 2, buttonsEnabled: false, selected: 'approve' }),
        ),
        first.ref,
      );
      const listed = await store.list('alice@acme.test');
      expect(listed.map((message) => [message.id, message.selected])).toEqual([
        [first.id, 'approve'],
        [second.id, null],
      ]);
    });

    it('leaves a copy showing a newer version as it is when an older view arrives late', async () => {
      const { ref, id } = await deliver(deliveryTo('alice@acme.test', interactiveView({ version: 1 })));
      const answered = interactiveView({
        version: 3,
        buttonsEnabled: false,
        selected: 'approve',
        footer: 'v3',
      });
      const older = interactiveView({ version: 2, selected: 'reject', footer: 'v2' });
      await transport.update(deliveryTo('alice@acme.test', answered), ref);
      await transport.update(deliveryTo('alice@acme.test', older), ref);
      expect(await store.get(id)).toMatchObject({
        buttonsEnabled: false,
        selected: 'approve',
        footer: 'v3',
      });
      await transport.update(deliveryTo('alice@acme.test', answered), ref);
      expect(await store.get(id)).toMatchObject({ selected: 'approve', footer: 'v3' });
    });

    it('shows the newest of several views applied at once, whatever order they land in', async () => {
      const { ref, id } = await deliver(deliveryTo('alice@acme.test', interactiveView({ version: 1 })));
      const views = [3, 6, 2, 5, 4].map((version) =>
        interactiveView({ version, footer: `v${version}`, selected: version === 6 ? 'reject' : null }),
      );
      await Promise.all(views.map((view) => transport.update(deliveryTo('alice@acme.test', view), ref)));
      expect(await store.get(id)).toMatchObject({ footer: 'v6', selected: 'reject' });
    });

    it('fails for a ref that names no message', async () => {
      const delivery = deliveryTo('alice@acme.test', interactiveView());
      await expect(transport.update(delivery, { messageId: 'msg_missing' })).rejects.toThrow(/not found/);
      await expect(transport.update(delivery, {})).rejects.toThrow(/not found/);
      await deliver(deliveryTo('bob@acme.test', interactiveView()));
      await expect(transport.update(delivery, {})).resolves.toBeUndefined();
      await expect(
        transport.update(deliveryTo('alice@acme.test', plainView('Another send')), {}),
      ).rejects.toThrow(/not found/);
    });
  });

  describe('routes', () => {
    it('serves the page and the API under /inbox', () => {
      expect(transport.routes.map((route) => `${route.method} ${route.path}`)).toEqual([
        'GET /inbox',
        'GET /inbox/',
        'GET /inbox/api/users',
        'GET /inbox/api/messages',
        'POST /inbox/api/messages/:id/click',
      ]);
    });

    it('answers 503 on every route before connect', async () => {
      const { id } = await deliver(deliveryTo('alice@acme.test', interactiveView()));
      const unconnected = inboxTransport();
      const responses = [
        await call(unconnected, 'GET', '/inbox'),
        await call(unconnected, 'GET', '/inbox/api/users'),
        await call(unconnected, 'GET', '/inbox/api/messages', { query: { email: 'alice@acme.test' } }),
        await call(unconnected, 'POST', clickPath(id), { body: '{"value":"approve"}' }),
      ];
      for (const response of responses) expectError(response, 503, /not connected/);
      expect(sink.clicks).toEqual([]);
    });
  });

  describe('once connected', () => {
    describe('GET /inbox/api/users', () => {
      it('lists every user once, as email and name, sorted by address', async () => {
        sink.users = [zoe, bob, alice, user('ALICE@acme.test', 'Alice Again', otherOrganization.id)];
        const response = await call(transport, 'GET', '/inbox/api/users');

        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(json(response)).toEqual([
          { email: 'alice@acme.test', name: 'Alice Doe' },
          { email: 'Bob@Acme.test', name: 'Bob <b>Builder</b>' },
          { email: 'zoe@acme.test', name: 'Zoe Zed' },
        ]);
      });
    });

    describe('GET /inbox/api/messages', () => {
      it('lists the messages of one user in delivery order', async () => {
        const first = await deliver(deliveryTo('alice@acme.test', plainView('Hello _there_')));
        now += 1;
        await deliver(deliveryTo('bob@acme.test', plainView('Not for Alice')));
        now += 1;
        const second = await deliver(deliveryTo('alice@acme.test', interactiveView()));

        const response = await call(transport, 'GET', '/inbox/api/messages', {
          query: { email: ' Alice@ACME.test ' },
        });

        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        const body = json(response) as { html: string }[];
        expect(body).toEqual([
          {
            id: first.id,
            kind: 'plain',
            text: 'Hello _there_',
            html: expect.any(String),
            buttons: [],
            footer: null,
            selected: null,
          },
          {
            id: second.id,
            kind: 'interactive',
            text: 'Deploy *v2* to production?',
            html: expect.any(String),
            buttons: [
              { text: 'Approve', value: 'approve', disabled: false },
              { text: 'Reject', value: 'reject', disabled: false },
            ],
            footer: 'Valid for 60 minutes · sent by Alice Doe',
            selected: null,
          },
        ]);
        expect(body[0]?.html).toMatch(/<(em|i)>there<\/\1>/);
        expect(body[1]?.html).toMatch(/<(strong|b)>v2<\/\1>/);
      });

      it('shows disabled buttons and the choice after an update', async () => {
        const { ref } = await deliver(deliveryTo('alice@acme.test', interactiveView()));
        await transport.update(
          deliveryTo(
            'alice@acme.test',
            interactiveView({ buttonsEnabled: false, selected: 'reject', selectedText: 'Reject' }),
          ),
          ref,
        );

        const response = await call(transport, 'GET', '/inbox/api/messages', {
          query: { email: 'alice@acme.test' },
        });
        expect(json(response)).toMatchObject([
          {
            buttons: [
              { text: 'Approve', value: 'approve', disabled: true },
              { text: 'Reject', value: 'reject', disabled: true },
            ],
            selected: 'reject',
          },
        ]);
      });

      it('answers an empty list for a user without messages', async () => {
        const response = await call(transport, 'GET', '/inbox/api/messages', {
          query: { email: 'nobody@acme.test' },
        });
        expect(response.status).toBe(200);
        expect(json(response)).toEqual([]);
      });

      it('escapes markup and drops dangerous links in html, and keeps text as sent', async () => {
        const text =
          'Hi <script>window.pwned = 1</script> <img src=x onerror="alert(1)"> [click](javascript:alert(1))';
        await transport.deliver(deliveryTo('alice@acme.test', plainView(text)));

        const response = await call(transport, 'GET', '/inbox/api/messages', {
          query: { email: 'alice@acme.test' },
        });
        const [message] = json(response) as { text: string; html: string }[];
        expect(message?.text).toBe(text);
        expect(message?.html).not.toMatch(/<script/i);
        expect(message?.html).not.toMatch(/<img/i);
        expect(message?.html).toContain('&lt;script&gt;');
        expect(message?.html).not.toMatch(/href\s*=\s*["']?\s*javascript:/i);
      });

      it('refuses a missing or invalid address', async () => {
        expectError(await call(transport, 'GET', '/inbox/api/messages'), 400, /email/);
        expectError(
          await call(transport, 'GET', '/inbox/api/messages', { query: { email: '  ' } }),
          400,
          /email/,
        );
        expectError(
          await call(transport, 'GET', '/inbox/api/messages', { query: { email: 'not-an-address' } }),
          400,
          /email: must be a valid email address/,
        );
      });
    });

    describe('POST /inbox/api/messages/:id/click', () => {
      let messageId: string;

      beforeEach(async () => {
        ({ id: messageId } = await deliver(deliveryTo('alice@acme.test', interactiveView())));
      });

      it('hands the click to the sink, as a Slack or Teams click, and answers 200', async () => {
        const response = await call(transport, 'POST', clickPath(messageId), { body: '{"value":"approve"}' });

        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(json(response)).toEqual({ status: 'ok' });
        expect(sink.clicks).toEqual([
          { requestId: 'req_AAAAAAAAAAAAAAAAAAAAAAAA', recipient: 'alice@acme.test', value: 'approve' },
        ]);
      });

      it.each([
        ['final', 409],
        ['finished', 409],
        ['unknown-option', 400],
        ['not-found', 404],
      ] satisfies [ClickOutcome, number][])('answers %s from the sink with %i', async (outcome, status) => {
        sink.outcome = outcome;
        const response = await call(transport, 'POST', clickPath(messageId), { body: '{"value":"maybe"}' });
        expectError(response, status);
        expect(sink.clicks).toHaveLength(1);
      });

      it('answers 404 for an unknown message and for a plain one, without asking the sink', async () => {
        const plain = await deliver(deliveryTo('alice@acme.test', plainView('Just news')));

        expectError(
          await call(transport, 'POST', clickPath('msg_unknown'), { body: '{"value":"approve"}' }),
          404,
          /not found/i,
        );
        expectError(
          await call(transport, 'POST', clickPath(plain.id), { body: '{"value":"approve"}' }),
          404,
          /no buttons/,
        );
        expect(sink.clicks).toEqual([]);
      });

      it('answers 409 when the buttons are disabled, without asking the sink', async () => {
        await transport.update(
          deliveryTo(
            'alice@acme.test',
            interactiveView({ version: 2, buttonsEnabled: false, state: 'expired' }),
          ),
          {},
        );
        expectError(
          await call(transport, 'POST', clickPath(messageId), { body: '{"value":"approve"}' }),
          409,
          /disabled/,
        );
        expect(sink.clicks).toEqual([]);
      });

      it.each([
        ['not JSON', '{"value":', /could not be parsed/],
        ['empty', '', /could not be parsed/],
        ['not an object', '["approve"]', /could not be parsed/],
        ['null', 'null', /could not be parsed/],
        ['without value', '{}', /^value: is required$/],
        ['with a number value', '{"value":1}', /^value: must be a string$/],
        ['with an empty value', '{"value":""}', /^value: must be 1 to 100 characters$/],
        ['with an unknown field', '{"value":"approve","valeu":"x"}', /^valeu: is not a known field$/],
      ])('answers 400 for a body %s, naming the problem', async (_, body, details) => {
        expectError(await call(transport, 'POST', clickPath(messageId), { body }), 400, details);
        expect(sink.clicks).toEqual([]);
      });

      it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', ''])(
        'answers 400 for a click sent as %j, which a page of another site could post unasked',
        async (contentType) => {
          expectError(
            await call(transport, 'POST', clickPath(messageId), { body: '{"value":"approve"}', contentType }),
            400,
            /^Content-Type must be application\/json$/,
          );
          expect(sink.clicks).toEqual([]);
        },
      );

      it('takes a click sent as JSON with parameters or in upper case', async () => {
        const answer = await call(transport, 'POST', clickPath(messageId), {
          body: '{"value":"approve"}',
          contentType: 'Application/JSON; charset=utf-8',
        });
        expect(answer.status).toBe(200);
        expect(sink.clicks).toHaveLength(1);
      });

      it('answers 400 for a body that is not UTF-8', async () => {
        const body = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]);
        expectError(
          await call(transport, 'POST', clickPath(messageId), { body }),
          400,
          /could not be parsed/,
        );
      });
    });

    describe('GET /inbox', () => {
      it('serves a self-contained page whose script and style carry a fresh nonce of a strict CSP', async () => {
        const first = await call(transport, 'GET', '/inbox');
        const second = await call(transport, 'GET', '/inbox');

        expect(first.status).toBe(200);
        expect(first.headers['content-type']).toMatch(/^text\/html/);
        expect(first.headers['x-content-type-options']).toBe('nosniff');
        const csp = first.headers['content-security-policy'] ?? '';
        const nonce = /script-src 'nonce-([0-9A-Za-z]+)'/.exec(csp)?.[1];
        expect(nonce).toBeDefined();
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain(`style-src 'nonce-${nonce}'`);
        expect(csp).not.toContain('unsafe-inline');
        expect(csp).not.toContain('unsafe-eval');
        expect(first.body).toContain(`<script nonce="${nonce}">`);
        expect(first.body).toContain(`<style nonce="${nonce}">`);
        expect(first.body.match(/<script/g)).toHaveLength(1);
        expect(second.headers['content-security-policy']).not.toBe(csp);

        // Nothing outside the page: no external scripts, styles, fonts or images.
        expect(first.body).not.toMatch(/\s(src|href)\s*=/i);
        expect(first.body).not.toMatch(/@import|url\(/i);
      });

      it('carries no user data: names, addresses and messages arrive only through the API', async () => {
        sink.users = [user('eve@acme.test', '<img src=x onerror=alert(1)>')];
        await transport.deliver(deliveryTo('eve@acme.test', plainView('<script>alert(1)</script>')));
        const page = await call(transport, 'GET', '/inbox');

        expect(page.body).not.toContain('eve@acme.test');
        expect(page.body).not.toContain('<img');
        expect(page.body).not.toContain('alert(1)');
      });

      it('derives the API address from its own path, so it works under any mount prefix', () => {
        expect(pageScript).toContain("location.pathname.replace(/\\/+$/, '') + '/api/'");
        expect(pageScript).not.toMatch(/fetch\(\s*['"]\//);
      });

      it('inserts only the server-rendered html as markup; everything else goes in as text', () => {
        const htmlSinks = pageScript.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|srcdoc/g);
        expect(htmlSinks).toEqual(['innerHTML']);
        expect(pageScript).toMatch(/\.innerHTML = message\.html;/);
        expect(pageScript).not.toMatch(/\beval\(|new Function|setTimeout\(\s*['"]/);

        // Every element, buttons included, is built by `el`, which sets text through textContent.
        expect(pageScript).toMatch(
          /function el\(tag, className, text\) \{\s*const node = document\.createElement\(tag\);[^}]*\n\s*if \(text !== undefined\) node\.textContent = text;/,
        );
        expect(pageScript).toContain("el('button', ");
        expect(pageScript).toMatch(/el\('button', [^\n]*, button\.text\)/);
        expect(pageScript).toMatch(/el\('option', '', user\.name \+ ' <' \+ user\.email \+ '>'\)/);
        expect(pageScript).toMatch(/el\('p', 'footer', message\.footer\)/);
        expect(pageScript).toMatch(/el\('strong', '', chosen \? chosen\.text : message\.selected\)/);
        // Labels and values never reach an attribute as a string of markup either.
        expect(pageScript).not.toMatch(/setAttribute\([^)]*(text|name|email|footer)/);
        expect(pageScript).toMatch(/statusLine\.textContent = text;/);
      });
    });
  });
});
