import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  call,
  click,
  clockStart,
  createRequest,
  expectError,
  generousLimits,
  type InboxMessage,
  inbox,
  interactiveBody,
  onlyMessage,
  statusOf,
} from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

/** The manual clock's time `ms` after its start, as the API must print it (ISO 8601, ms, `Z`). */
const at = (ms: number) => new Date(clockStart + ms).toISOString();
const minute = 60_000;

const options = [
  { text: 'Approve', value: 'approve' },
  { text: 'Reject', value: 'reject' },
  { text: 'Later', value: 'later' },
];

const open = (email: string) => ({ user_email: email, option_value: null, timestamp: null, expired: false });
const answered = (email: string, value: string, ms: number) => ({
  user_email: email,
  option_value: value,
  timestamp: at(ms),
  expired: false,
});
const expired = (email: string) => ({
  user_email: email,
  option_value: null,
  timestamp: null,
  expired: true,
});

function expectButtons(message: InboxMessage, disabled: boolean): void {
  expect(message.buttons).toEqual(options.map((option) => ({ ...option, disabled })));
}

describe.each(hostKinds)('interactive requests end to end through the inbox (%s)', (kind) => {
  let host: TestHost;
  beforeEach(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterEach(async () => {
    await host.close();
  });

  /** Advances the manual clock and runs whatever fell due. */
  const advance = async (ms: number) => {
    host.clock.advance(ms);
    await host.runDueWork();
  };

  describe('onUserAction (default)', () => {
    it('takes the first click as final, refuses a second with 409, and finishes when all have answered', async () => {
      const id = await createRequest(
        host,
        interactiveBody(
          { user_emails: ['alice@acme.test', 'bob@acme.test', 'CAROL@acme.test'] },
          { options, timeout_minutes: 60 },
        ),
      );
      const bobOpen = await onlyMessage(host, 'bob@acme.test');
      expectButtons(bobOpen, false);
      const openFooter = bobOpen.footer;

      await advance(1234);
      expect((await click(host, bobOpen.id, 'approve')).status).toBe(200);

      // Bob's message now shows his choice without usable buttons; alice's is untouched.
      const bobAnswered = await onlyMessage(host, 'bob@acme.test');
      expect(bobAnswered.selected).toBe('approve');
      expectButtons(bobAnswered, true);
      expect(bobAnswered.footer).not.toBe(openFooter);
      expect(bobAnswered.footer).toContain('Alice Doe');
      const aliceMessage = await onlyMessage(host, 'alice@acme.test');
      expect(aliceMessage.selected).toBeNull();
      expectButtons(aliceMessage, false);
      expect(aliceMessage.footer).toBe(openFooter);

      expect(await statusOf(host, id)).toEqual({
        status: 'pending',
        responses: [
          open('alice@acme.test'),
          answered('bob@acme.test', 'approve', 1234),
          open('CAROL@acme.test'),
        ],
      });

      // The choice is final.
      await advance(1000);
      const second = await click(host, bobOpen.id, 'reject');
      expectError(second, 409);
      expect((await onlyMessage(host, 'bob@acme.test')).selected).toBe('approve');

      expect((await click(host, aliceMessage.id, 'reject')).status).toBe(200);
      expect((await statusOf(host, id)).status).toBe('pending');

      await advance(5);
      const carolMessage = await onlyMessage(host, 'carol@acme.test');
      expect((await click(host, carolMessage.id, 'later')).status).toBe(200);

      const finished = {
        status: 'finished',
        responses: [
          answered('alice@acme.test', 'reject', 2234),
          answered('bob@acme.test', 'approve', 1234),
          answered('CAROL@acme.test', 'later', 2239),
        ],
      };
      // Finished at the last answer, without waiting for the timeout.
      expect(await statusOf(host, id)).toEqual(finished);
      for (const email of ['alice@acme.test', 'bob@acme.test', 'carol@acme.test']) {
        expectButtons(await onlyMessage(host, email), true);
      }

      // Clicks after the end change nothing; neither does the timeout passing.
      expectError(await click(host, carolMessage.id, 'approve'), 409);
      await advance(2 * 60 * minute);
      expect(await statusOf(host, id)).toEqual(finished);
      expect((await onlyMessage(host, 'carol@acme.test')).selected).toBe('later');
    });

    it('expires the recipients without an answer at the timeout, and updates their messages', async () => {
      const id = await createRequest(
        host,
        interactiveBody(
          { user_emails: ['alice@acme.test', 'bob@acme.test', 'dave@acme.test'] },
          { options, timeout_minutes: 60 },
        ),
      );
      const openFooter = (await onlyMessage(host, 'alice@acme.test')).footer;
      await advance(1000);
      const bobMessage = await onlyMessage(host, 'bob@acme.test');
      expect((await click(host, bobMessage.id, 'reject')).status).toBe(200);

      await advance(60 * minute - 1001);
      expect(await statusOf(host, id)).toEqual({
        status: 'pending',
        responses: [
          open('alice@acme.test'),
          answered('bob@acme.test', 'reject', 1000),
          open('dave@acme.test'),
        ],
      });
      expectButtons(await onlyMessage(host, 'alice@acme.test'), false);

      await advance(1);
      const final = {
        status: 'finished',
        responses: [
          expired('alice@acme.test'),
          answered('bob@acme.test', 'reject', 1000),
          expired('dave@acme.test'),
        ],
      };
      expect(await statusOf(host, id)).toEqual(final);

      const aliceExpired = await onlyMessage(host, 'alice@acme.test');
      expectButtons(aliceExpired, true);
      expect(aliceExpired.selected).toBeNull();
      expect(aliceExpired.footer).not.toBe(openFooter);
      expect(aliceExpired.footer).toContain('Alice Doe');
      const bobClosed = await onlyMessage(host, 'bob@acme.test');
      expectButtons(bobClosed, true);
      expect(bobClosed.selected).toBe('reject');

      // A click after the timeout changes nothing.
      expectError(await click(host, aliceExpired.id, 'approve'), 409);
      await advance(minute);
      expect(await statusOf(host, id)).toEqual(final);
    });

    it('does not count a click that arrives at the deadline, even before the timeout work has run', async () => {
      const id = await createRequest(
        host,
        interactiveBody(
          { user_emails: ['alice@acme.test', 'bob@acme.test'] },
          { options, timeout_minutes: 1 },
        ),
      );
      const aliceMessage = await onlyMessage(host, 'alice@acme.test');
      host.clock.advance(minute);
      const late = await click(host, aliceMessage.id, 'approve');
      expect(late.status).toBe(409);
      expectError(late, 409);
      await host.runDueWork();
      expect(await statusOf(host, id)).toEqual({
        status: 'finished',
        responses: [expired('alice@acme.test'), expired('bob@acme.test')],
      });
    });

    it('shows a request as finished once its deadline has passed', async () => {
      const id = await createRequest(
        host,
        interactiveBody({ user_emails: ['dave@acme.test'] }, { options, timeout_minutes: 2 }),
      );
      await advance(2 * minute);
      expect(await statusOf(host, id)).toEqual({
        status: 'finished',
        responses: [expired('dave@acme.test')],
      });
      expectButtons(await onlyMessage(host, 'dave@acme.test'), true);
    });
  });

  describe('onTimeout', () => {
    it('lets users change their answer until the timeout; the last click counts', async () => {
      const id = await createRequest(
        host,
        interactiveBody(
          { user_emails: ['alice@acme.test', 'bob@acme.test', 'dave@acme.test'] },
          { options, timeout_minutes: 1.5, disable: 'onTimeout' },
        ),
      );
      const bobMessage = await onlyMessage(host, 'bob@acme.test');
      const aliceMessage = await onlyMessage(host, 'alice@acme.test');
      const openFooter = bobMessage.footer;

      await advance(1000);
      expect((await click(host, bobMessage.id, 'approve')).status).toBe(200);
      let bobNow = await onlyMessage(host, 'bob@acme.test');
      expect(bobNow.selected).toBe('approve');
      expectButtons(bobNow, false);
      expect(bobNow.footer).toContain('Alice Doe');
      expect(bobNow.footer).not.toBe(openFooter);

      await advance(1000);
      expect((await click(host, bobMessage.id, 'reject')).status).toBe(200);
      expect(await statusOf(host, id)).toMatchObject({
        status: 'pending',
        responses: [
          open('alice@acme.test'),
          answered('bob@acme.test', 'reject', 2000),
          open('dave@acme.test'),
        ],
      });
      bobNow = await onlyMessage(host, 'bob@acme.test');
      expect(bobNow.selected).toBe('reject');
      expectButtons(bobNow, false);

      await advance(1500);
      expect((await click(host, bobMessage.id, 'later')).status).toBe(200);
      await advance(500);
      expect((await click(host, aliceMessage.id, 'approve')).status).toBe(200);

      // Still pending just before the 90 s deadline (1.5 minutes).
      await advance(90_000 - 4000 - 1);
      expect(await statusOf(host, id)).toEqual({
        status: 'pending',
        responses: [
          answered('alice@acme.test', 'approve', 4000),
          answered('bob@acme.test', 'later', 3500),
          open('dave@acme.test'),
        ],
      });

      await advance(1);
      const final = {
        status: 'finished',
        responses: [
          answered('alice@acme.test', 'approve', 4000),
          answered('bob@acme.test', 'later', 3500),
          expired('dave@acme.test'),
        ],
      };
      expect(await statusOf(host, id)).toEqual(final);
      for (const email of ['alice@acme.test', 'bob@acme.test', 'dave@acme.test']) {
        const message = await onlyMessage(host, email);
        expectButtons(message, true);
        expect(message.footer).toContain('Alice Doe');
      }
      expect((await onlyMessage(host, 'bob@acme.test')).selected).toBe('later');
      expect((await onlyMessage(host, 'dave@acme.test')).selected).toBeNull();

      // Clicks after the end change nothing.
      expectError(await click(host, bobMessage.id, 'approve'), 409);
      await advance(minute);
      expect(await statusOf(host, id)).toEqual(final);
      expect((await onlyMessage(host, 'bob@acme.test')).selected).toBe('later');
    });

    it('does not finish when everyone has answered, only at the timeout', async () => {
      const id = await createRequest(
        host,
        interactiveBody(
          { user_emails: ['alice@acme.test', 'bob@acme.test'] },
          { options, timeout_minutes: 10, disable: 'onTimeout' },
        ),
      );
      await advance(10);
      expect((await click(host, (await onlyMessage(host, 'alice@acme.test')).id, 'approve')).status).toBe(
        200,
      );
      await advance(20);
      expect((await click(host, (await onlyMessage(host, 'bob@acme.test')).id, 'reject')).status).toBe(200);
      await advance(minute);
      expect(await statusOf(host, id)).toEqual({
        status: 'pending',
        responses: [answered('alice@acme.test', 'approve', 10), answered('bob@acme.test', 'reject', 30)],
      });
      expectButtons(await onlyMessage(host, 'alice@acme.test'), false);

      await advance(10 * minute - minute - 30);
      expect(await statusOf(host, id)).toEqual({
        status: 'finished',
        responses: [answered('alice@acme.test', 'approve', 10), answered('bob@acme.test', 'reject', 30)],
      });
      expectButtons(await onlyMessage(host, 'alice@acme.test'), true);
    });
  });

  describe('inbox click API (docs/http-api.md#local-inbox)', () => {
    it('answers 404 in the error shape for an unknown message', async () => {
      expectError(await click(host, 'msg_doesnotexist000000000000', 'approve'), 404);
    });

    it('lists messages in delivery order', async () => {
      await createRequest(host, interactiveBody({ message: 'first' }));
      await advance(10);
      await createRequest(host, interactiveBody({ message: 'second' }));
      expect((await inbox(host, 'bob@acme.test')).map((m) => m.text)).toEqual(['first', 'second']);
    });

    it('refuses a click body without a value in the error shape', async () => {
      await createRequest(host, interactiveBody());
      const message = await onlyMessage(host, 'bob@acme.test');
      const answer = await call(`${host.baseUrl}/inbox/api/messages/${message.id}/click`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expectError(answer, 400);
      expect((await onlyMessage(host, 'bob@acme.test')).selected).toBeNull();
    });
  });
});
