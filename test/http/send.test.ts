import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createRequest,
  expectError,
  expectOk,
  generousLimits,
  inbox,
  interactiveBody,
  notificationIdPattern,
  onlyMessage,
  plainBody,
  requestIdPattern,
  send,
  statusOf,
} from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

describe.each(hostKinds)('POST /api/notify (%s)', (kind) => {
  let host: TestHost;
  beforeEach(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterEach(async () => {
    await host.close();
  });

  describe('fire-and-forget', () => {
    it('answers 200 with exactly status ok and a notif_ id, and delivers the message', async () => {
      const answer = await send(host, plainBody({ message: 'Deploy *finished*' }));
      const body = expectOk(answer);
      expect(Object.keys(body).sort()).toEqual(['notification_id', 'status']);
      expect(body.status).toBe('ok');
      expect(body.notification_id).toMatch(notificationIdPattern);

      const message = await onlyMessage(host, 'bob@acme.test');
      expect(message).toMatchObject({
        kind: 'plain',
        text: 'Deploy *finished*',
        buttons: [],
        selected: null,
      });
      expect(await inbox(host, 'alice@acme.test')).toEqual([]);
    });

    it('records its copies only when a repeat may resume it: with an Idempotency-Key', async () => {
      const recipients = { user_emails: ['bob@acme.test', 'carol@acme.test'] };
      const once = expectOk(await send(host, plainBody(recipients)));
      const resumable = expectOk(await send(host, plainBody(recipients), { idempotencyKey: 'k-1' }));
      // Nothing updates a fire-and-forget copy, and without a key nothing resumes its send.
      expect(await host.storage.deliveries.listDeliveries(once.notification_id as string)).toEqual([]);
      const recorded = await host.storage.deliveries.listDeliveries(resumable.notification_id as string);
      expect(recorded.map((copy) => copy.recipient).sort()).toEqual(['bob@acme.test', 'carol@acme.test']);
      expect(await inbox(host, 'carol@acme.test')).toHaveLength(2);
    });

    it('issues a different notification_id for every send', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i += 1) {
        const body = expectOk(await send(host, plainBody()));
        expect(body.notification_id).toMatch(notificationIdPattern);
        ids.add(body.notification_id as string);
      }
      expect(ids.size).toBe(5);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(5);
    });

    it('accepts external_reference_id and ignores it (docs/behaviour.md#validation)', async () => {
      const body = expectOk(await send(host, plainBody({ external_reference_id: 'ticket-42' })));
      expect(Object.keys(body).sort()).toEqual(['notification_id', 'status']);
      expect(body.notification_id).toMatch(notificationIdPattern);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('accepts a Content-Type with parameters', async () => {
      const answer = await send(host, plainBody(), { contentType: 'application/json; charset=utf-8' });
      expect(expectOk(answer).notification_id).toMatch(notificationIdPattern);
    });

    it('delivers to every recipient, each once', async () => {
      expectOk(
        await send(host, plainBody({ user_emails: ['alice@acme.test', 'bob@acme.test', 'dave@acme.test'] })),
      );
      for (const email of ['alice@acme.test', 'bob@acme.test', 'dave@acme.test']) {
        expect(await inbox(host, email)).toHaveLength(1);
      }
      expect(await inbox(host, 'carol@acme.test')).toEqual([]);
    });
  });

  describe('interactive', () => {
    it('answers 200 with exactly status ok and a req_ id, no callback_secret without callback_url', async () => {
      const body = expectOk(await send(host, interactiveBody()));
      expect(Object.keys(body).sort()).toEqual(['request_id', 'status']);
      expect(body.status).toBe('ok');
      expect(body.request_id).toMatch(requestIdPattern);
      expect(body).not.toHaveProperty('callback_secret');
    });

    it('starts pending with one open entry per recipient', async () => {
      const id = await createRequest(
        host,
        interactiveBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] }),
      );
      const status = await statusOf(host, id);
      expect(status).toEqual({
        status: 'pending',
        responses: [
          { user_email: 'alice@acme.test', option_value: null, timestamp: null, expired: false },
          { user_email: 'bob@acme.test', option_value: null, timestamp: null, expired: false },
        ],
      });
    });

    it('issues a different request_id for every send', async () => {
      const first = await createRequest(host, interactiveBody());
      const second = await createRequest(host, interactiveBody());
      expect(first).not.toBe(second);
    });

    it('shows the message, one button per option and a footer with validity and sender (docs/behaviour.md#what-recipients-see)', async () => {
      const options = [
        { text: 'Yes', value: 'yes' },
        { text: 'No', value: 'no' },
        { text: 'Later', value: 'later' },
      ];
      await createRequest(host, interactiveBody({ message: 'Ship *it*?' }, { options, timeout_minutes: 60 }));
      const message = await onlyMessage(host, 'bob@acme.test');
      expect(message.kind).toBe('interactive');
      expect(message.text).toBe('Ship *it*?');
      expect(message.selected).toBeNull();
      expect(message.buttons).toEqual(options.map((option) => ({ ...option, disabled: false })));
      expect(message.footer).toContain('Alice Doe');
      // The validity period: 60 minutes from 2026-01-01T00:00Z, as a duration or as the end time.
      expect(message.footer).toMatch(/1 hour|60 min|01:00/);
    });

    it('names the owner of the key as the sender', async () => {
      await createRequest(host, interactiveBody({ user_emails: ['alice@acme.test'] }), host.keys.bob);
      const message = await onlyMessage(host, 'alice@acme.test');
      expect(message.footer).toContain('Bob Roe');
      expect(message.footer).not.toContain('Alice Doe');
    });

    it('echoes external_reference_id in the status, and omits it when not given', async () => {
      const withRef = await createRequest(host, interactiveBody({ external_reference_id: 'deploy-7' }));
      expect(await statusOf(host, withRef)).toMatchObject({
        status: 'pending',
        external_reference_id: 'deploy-7',
      });

      const withoutRef = await createRequest(host, interactiveBody());
      const status = await statusOf(host, withoutRef);
      expect(Object.keys(status).sort()).toEqual(['responses', 'status']);
    });

    it('lists responses in the order of user_emails', async () => {
      const emails = ['dave@acme.test', 'alice@acme.test', 'user07@acme.test', 'bob@acme.test'];
      const id = await createRequest(host, interactiveBody({ user_emails: emails }));
      const status = await statusOf(host, id);
      expect(status.responses.map((r) => r.user_email)).toEqual(emails);
    });
  });

  describe('recipients (docs/behaviour.md#validation, docs/behaviour.md#status-semantics)', () => {
    it('matches case-insensitively after trimming, keeping the caller spelling (trimmed)', async () => {
      const id = await createRequest(
        host,
        interactiveBody({ user_emails: ['  carol@acme.test ', 'ALICE@ACME.TEST', 'Bob@Acme.Test'] }),
      );
      const status = await statusOf(host, id);
      expect(status.responses.map((r) => r.user_email)).toEqual([
        'carol@acme.test',
        'ALICE@ACME.TEST',
        'Bob@Acme.Test',
      ]);
      expect(await inbox(host, 'carol@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('delivers duplicates once, keeping the first spelling, in first-occurrence order', async () => {
      const id = await createRequest(
        host,
        interactiveBody({
          user_emails: [
            'BOB@acme.test',
            'alice@acme.test',
            'bob@acme.test',
            ' Bob@ACME.test',
            'ALICE@acme.test',
          ],
        }),
      );
      const status = await statusOf(host, id);
      expect(status.responses).toEqual([
        { user_email: 'BOB@acme.test', option_value: null, timestamp: null, expired: false },
        { user_email: 'alice@acme.test', option_value: null, timestamp: null, expired: false },
      ]);
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
    });

    it('delivers a fire-and-forget duplicate once', async () => {
      expectOk(
        await send(
          host,
          plainBody({ user_emails: ['dave@acme.test', 'DAVE@acme.test', ' dave@acme.test '] }),
        ),
      );
      expect(await inbox(host, 'dave@acme.test')).toHaveLength(1);
    });

    it('refuses unknown recipients with 422 naming every unknown once, in request order, as spelled', async () => {
      const answer = await send(
        host,
        plainBody({
          user_emails: [
            'zed@acme.test',
            'bob@acme.test',
            'Amy@X.test',
            'ZED@acme.test',
            'amy@x.test',
            'q@y.test',
          ],
        }),
      );
      expectError(answer, 422, 'Unknown user emails: zed@acme.test, Amy@X.test, q@y.test');
      // The whole send is refused: nobody is notified.
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('names a single unknown recipient', async () => {
      expectError(
        await send(host, interactiveBody({ user_emails: ['alice@acme.test', 'nobody@acme.test'] })),
        422,
        'Unknown user emails: nobody@acme.test',
      );
      expect(await inbox(host, 'alice@acme.test')).toEqual([]);
    });

    it("treats users of another organization as unknown (gina sending to acme's bob)", async () => {
      expectError(
        await send(host, plainBody({ user_emails: ['gina@globex.test', 'bob@acme.test'] }), {
          key: host.keys.gina,
        }),
        422,
        'Unknown user emails: bob@acme.test',
      );
      expect(await inbox(host, 'gina@globex.test')).toEqual([]);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('lets another organization notify its own users', async () => {
      const body = expectOk(
        await send(host, plainBody({ user_emails: ['gina@globex.test'] }), { key: host.keys.gina }),
      );
      expect(body.notification_id).toMatch(notificationIdPattern);
      expect(await inbox(host, 'gina@globex.test')).toHaveLength(1);
    });
  });

  describe('delivery failure (docs/http-api.md#error-reference: 500 names the unreachable recipients)', () => {
    it('answers 500 naming only the recipients that could not be reached', async () => {
      host.inbox.failNext('bob@acme.test', 1);
      host.inbox.failNext('dave@acme.test', 1);
      const answer = await send(
        host,
        plainBody({ user_emails: ['alice@acme.test', 'Bob@Acme.test', 'dave@acme.test'] }),
      );
      const details = expectError(answer, 500);
      expect(details).toMatch(/bob@acme\.test/i);
      expect(details).toContain('dave@acme.test');
      expect(details).not.toContain('alice');
      expect(await inbox(host, 'alice@acme.test')).toHaveLength(1);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('answers 500 for an interactive send that could not reach a recipient', async () => {
      host.inbox.failNext('bob@acme.test', 1);
      const details = expectError(
        await send(host, interactiveBody({ user_emails: ['alice@acme.test', 'bob@acme.test'] })),
        500,
      );
      expect(details).toContain('bob@acme.test');
      expect(details).not.toContain('alice');
    });

    // 503 (storage backend unreachable, docs/http-api.md#error-reference) cannot be produced with memory storage: not tested here.
  });
});
