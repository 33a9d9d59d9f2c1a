import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, expectOk, generousLimits, inbox, interactiveBody, plainBody, send } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';
import { rawRequest } from './raw-request.js';

/** Characters that render as nothing, or as blank space. */
const invisible = {
  'zero-width space': '\u200B',
  'zero-width non-joiner': '\u200C',
  'zero-width joiner': '\u200D',
  'word joiner': '\u2060',
  'byte order mark': '\uFEFF',
  'soft hyphen': '\u00AD',
  'left-to-right mark': '\u200E',
  'right-to-left override': '\u202E',
  'invisible separator': '\u2063',
  'Mongolian vowel separator': '\u180E',
  'combining grapheme joiner': '\u034F',
  'Hangul filler': '\u3164',
  'variation selector 16': '\uFE0F',
  'tag space': '\u{E0020}',
  'no-break space': '\u00A0',
  'em space': '\u2003',
  'ideographic space': '\u3000',
  'line separator': '\u2028',
  'braille blank': '\u2800',
  'a control character': '\u0007',
} as const;

describe.each(hostKinds)('lenient inputs are refused (%s)', (kind) => {
  let host: TestHost;
  beforeEach(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterEach(async () => {
    await host.close();
  });

  /** A send that would be accepted, with extra (possibly repeated) headers. */
  const sendWith = (headers: Record<string, string | string[]>) =>
    rawRequest(host.origin, {
      method: 'POST',
      path: '/chat/api/notify',
      headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(plainBody()),
    });

  describe('repeated headers', () => {
    it.each([
      ['different values', ['deploy-1', 'deploy-2']],
      ['the same value', ['deploy-1', 'deploy-1']],
    ])('refuses two Idempotency-Key headers with %s: 400, nothing sent or stored', async (_name, values) => {
      expectError(await sendWith({ 'idempotency-key': values }), 400, /Idempotency-Key/);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
      // Neither value, nor their join, was taken as a key: each still starts a send of its own.
      expectOk(await send(host, plainBody(), { idempotencyKey: 'deploy-1, deploy-2' }));
      expectOk(await send(host, plainBody(), { idempotencyKey: 'deploy-1' }));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
    });

    it('refuses two X-API-Key headers with 400, even when both hold the same valid key', async () => {
      const keys = host.keys.alice;
      expectError(await sendWith({ 'x-api-key': [keys, keys] }), 400, /X-API-Key/);
      expectError(await sendWith({ 'x-api-key': [keys, 'cnk_other'] }), 400, /X-API-Key/);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it("serves a send whose headers are named like an object's members, as any unknown header", async () => {
      const named = { constructor: '1', toString: '2', hasOwnProperty: '3', ['__proto__']: '4' };
      expectOk(await sendWith(named));
      expectOk(await sendWith({ ...named, 'idempotency-key': 'deploy-1' }));
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(2);
    });

    it('still accepts a single Idempotency-Key that contains a comma', async () => {
      expectOk(await sendWith({ 'idempotency-key': 'deploy-1, deploy-2' }));
    });
  });

  describe('API keys are compared exactly', () => {
    it.each([
      ['leading', (key: string) => `\u00A0${key}`],
      ['trailing', (key: string) => `${key}\u00A0`],
      ['surrounding', (key: string) => `\u00A0${key}\u00A0`],
    ])('refuses a key with %s no-break space as Invalid API key', async (_name, wrap) => {
      const answer = await sendWith({ 'x-api-key': wrap(host.keys.alice) });
      expectError(answer, 401, 'Invalid API key');
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('refuses surrounding whitespace through the library too', async () => {
      for (const key of [` ${host.keys.alice}`, `${host.keys.alice}\t`, `\u2003${host.keys.alice}`]) {
        await expect(host.notifier.authenticate(key)).rejects.toMatchObject({ details: 'Invalid API key' });
      }
      expect((await host.notifier.authenticate(host.keys.alice)).user.email).toBe('alice@acme.test');
    });
  });

  describe('a message with nothing visible is blank', () => {
    it.each(Object.entries(invisible))(
      'refuses a message of only %s, naming message',
      async (_name, char) => {
        expectError(await send(host, plainBody({ message: char.repeat(3) })), 400, /(^|; )message: /);
      },
    );

    it('refuses a mixture of invisible characters and whitespace', async () => {
      const message = ` \u200B\n\u00AD\t\uFEFF\u2060\u200D `;
      expectError(await send(host, plainBody({ message })), 400, /(^|; )message: /);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it.each([
      ['a space', ' '],
      ['a line break', '\n'],
      ['a tab', '\t'],
      ['a zero-width space', '\u200B'],
    ])('refuses an option whose text is only %s, naming it', async (_name, text) => {
      const options = [
        { text, value: 'approve' },
        { text: 'Reject', value: 'reject' },
      ];
      expectError(
        await send(host, interactiveBody({}, { options })),
        400,
        'response_request.options[0].text: must not be blank (only whitespace or invisible characters)',
      );
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('accepts visible text that contains invisible characters', async () => {
      for (const message of ['👩\u200D💻', 'co\u00ADoperate', '\u200Bhi', '❤\uFE0F', '\u3000x']) {
        expectOk(await send(host, plainBody({ message })));
      }
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(5);
    });
  });
});
