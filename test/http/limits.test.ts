import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { numberedUsers } from '../support/test-seed.js';
import {
  click,
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

/** An astral character: one code point, two UTF-16 code units, four UTF-8 bytes. */
const emoji = '😀';
/** A letter followed by a combining accent: two code points rendered as one glyph. */
const combining = 'e\u0301';

/** `count` code points built from `unit` (which holds one or two code points). */
const codePoints = (unit: string, count: number) => {
  const perUnit = [...unit].length;
  return unit.repeat(Math.floor(count / perUnit)) + 'x'.repeat(count % perUnit);
};

const options = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ text: `Option ${i}`, value: `v${i}` }));

describe.each(hostKinds)(
  'size limits of docs/http-api.md#request-body, counted in code points (%s)',
  (kind) => {
    let host: TestHost;
    beforeEach(async () => {
      host = await startTestHost(kind, { rateLimits: generousLimits });
    });
    afterEach(async () => {
      await host.close();
    });

    const accepted = async (body: unknown) => {
      const ok = expectOk(await send(host, body));
      expect(ok.notification_id ?? ok.request_id).toMatch(
        'response_request' in (body as object) ? requestIdPattern : notificationIdPattern,
      );
    };
    const refused = async (body: unknown, path: RegExp) => {
      expectError(await send(host, body), 400, path);
    };

    describe('user_emails: 1 to 50 entries', () => {
      it('accepts 50 recipients and delivers to each', async () => {
        const emails = numberedUsers.slice(0, 50);
        const id = await createRequest(host, interactiveBody({ user_emails: emails }));
        const status = await statusOf(host, id);
        expect(status.responses.map((r) => r.user_email)).toEqual(emails);
        expect(await inbox(host, 'user50@acme.test')).toHaveLength(1);
        expect(await inbox(host, 'user51@acme.test')).toEqual([]);
      });

      it('refuses 51 recipients with 400 naming user_emails, delivering to nobody', async () => {
        await refused(plainBody({ user_emails: numberedUsers.slice(0, 51) }), /(^|; )user_emails: /);
        expect(await inbox(host, 'user01@acme.test')).toEqual([]);
      });

      it('counts entries, not distinct recipients: 51 entries with a duplicate are refused', async () => {
        await refused(
          plainBody({ user_emails: [...numberedUsers.slice(0, 50), 'USER01@acme.test'] }),
          /(^|; )user_emails: /,
        );
      });
    });

    describe('message: 1 to 4000 code points', () => {
      it.each([
        ['ASCII', 'a'],
        ['emoji', emoji],
        ['combining sequences', combining],
        ['CJK', '漢'],
      ])('accepts exactly 4000 code points of %s', async (_name, unit) => {
        const message = codePoints(unit, 4000);
        expect([...message]).toHaveLength(4000);
        await accepted(plainBody({ message }));
        const [delivered] = await inbox(host, 'bob@acme.test');
        expect(delivered?.text).toBe(message);
      });

      it.each([
        ['ASCII', 'a'],
        ['emoji', emoji],
        ['combining sequences', combining],
      ])('refuses 4001 code points of %s', async (_name, unit) => {
        const message = codePoints(unit, 4001);
        expect([...message]).toHaveLength(4001);
        await refused(plainBody({ message }), /(^|; )message: /);
      });

      it('accepts a one-character message', async () => {
        await accepted(plainBody({ message: '.' }));
      });

      it('accepts 4000 emoji in an interactive message too', async () => {
        await accepted(interactiveBody({ message: emoji.repeat(4000) }));
      });
    });

    describe('external_reference_id: at most 200 code points', () => {
      it.each([
        ['ASCII', 'r'],
        ['emoji', emoji],
      ])('accepts 200 code points of %s and echoes them', async (_name, unit) => {
        const ref = codePoints(unit, 200);
        const id = await createRequest(host, interactiveBody({ external_reference_id: ref }));
        expect((await statusOf(host, id)).external_reference_id).toBe(ref);
      });

      it.each([
        ['ASCII', 'r'],
        ['emoji', emoji],
        ['combining sequences', combining],
      ])('refuses 201 code points of %s', async (_name, unit) => {
        await refused(
          interactiveBody({ external_reference_id: codePoints(unit, 201) }),
          /(^|; )external_reference_id: /,
        );
      });
    });

    describe('options: 2 to 5 entries', () => {
      it.each([2, 5])('accepts %d options, one button each', async (count) => {
        await createRequest(host, interactiveBody({}, { options: options(count) }));
        expect((await onlyMessage(host, 'bob@acme.test')).buttons).toHaveLength(count);
      });

      it.each([0, 1, 6])('refuses %d options with the exact rule', async (count) => {
        await refused(
          interactiveBody({}, { options: options(count) }),
          /(^|; )response_request\.options: must have 2 to 5 entries($|;)/,
        );
      });
    });

    describe('option text: 1 to 75 code points', () => {
      const withText = (text: string) =>
        interactiveBody(
          {},
          {
            options: [
              { text, value: 'a' },
              { text: 'Other', value: 'b' },
            ],
          },
        );
      const textPath = /(^|; )response_request\.options(\[0\]|\.0)\.text: /;

      it.each([
        ['1 ASCII', 'a'],
        ['75 ASCII', 'a'.repeat(75)],
        ['75 emoji', emoji.repeat(75)],
        ['75 code points of combining sequences', codePoints(combining, 75)],
      ])('accepts %s and shows it as the button label', async (_name, text) => {
        await createRequest(host, withText(text));
        expect((await onlyMessage(host, 'bob@acme.test')).buttons[0]?.text).toBe(text);
      });

      it.each([
        ['empty', ''],
        ['76 ASCII', 'a'.repeat(76)],
        ['76 emoji', emoji.repeat(76)],
        ['76 code points of combining sequences', codePoints(combining, 76)],
      ])('refuses %s', async (_name, text) => {
        await refused(withText(text), textPath);
      });
    });

    describe('option value: 1 to 100 code points', () => {
      const withValue = (value: string) =>
        interactiveBody(
          {},
          {
            options: [
              { text: 'Other', value: 'b' },
              { text: 'This', value },
            ],
          },
        );
      const valuePath = /(^|; )response_request\.options(\[1\]|\.1)\.value: /;

      it.each([
        ['1 ASCII', 'a'],
        ['100 ASCII', 'v'.repeat(100)],
        ['100 emoji', emoji.repeat(100)],
      ])('accepts %s and returns it as option_value', async (_name, value) => {
        const id = await createRequest(host, withValue(value));
        const message = await onlyMessage(host, 'bob@acme.test');
        expect(message.buttons[1]?.value).toBe(value);
        expect((await click(host, message.id, value)).status).toBe(200);
        const status = await statusOf(host, id);
        expect(status.responses[0]?.option_value).toBe(value);
      });

      it.each([
        ['empty', ''],
        ['101 ASCII', 'v'.repeat(101)],
        ['101 emoji', emoji.repeat(101)],
      ])('refuses %s', async (_name, value) => {
        await refused(withValue(value), valuePath);
      });
    });

    describe('timeout_minutes: 1 to 1440, fractions allowed', () => {
      it.each([1, 1.5, 1440, 1439.5])('accepts %d', async (timeout_minutes) => {
        await accepted(interactiveBody({}, { timeout_minutes }));
      });

      it.each([0.99, 1440.01, 0, 1441])('refuses %d', async (timeout_minutes) => {
        await refused(interactiveBody({}, { timeout_minutes }), /(^|; )response_request\.timeout_minutes: /);
      });
    });

    it('accepts a request at every maximum at once', async () => {
      const body = {
        user_emails: numberedUsers.slice(0, 50),
        message: emoji.repeat(4000),
        external_reference_id: emoji.repeat(200),
        response_request: {
          options: Array.from({ length: 5 }, (_, i) => ({
            text: `${i}${emoji.repeat(74)}`,
            value: `${i}${emoji.repeat(99)}`,
          })),
          timeout_minutes: 1440,
          disable: 'onTimeout',
        },
      };
      const id = await createRequest(host, body);
      expect((await statusOf(host, id)).responses).toHaveLength(50);
    });
  },
);
