import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  call,
  createKey,
  expectError,
  expectOk,
  generousLimits,
  inbox,
  interactiveBody,
  notificationIdPattern,
  plainBody,
  readStatus,
  requestIdPattern,
  responseRequest,
  send,
} from './client.js';
import { type CustomApp, startCustomApp } from './custom-app.js';
import { endlessUpload } from './endless-upload.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';
import { rawRequest } from './raw-request.js';

/** `details` names the field path and the rule (docs/http-api.md#error-reference): `path: rule`, possibly among other issues. */
const names = (path: string) => new RegExp(`(^|; )${path.replace(/[.[\]]/g, (c) => `\\${c}`)}: \\S`);

describe.each(hostKinds)('errors (%s)', (kind) => {
  let host: TestHost;
  beforeEach(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterEach(async () => {
    await host.close();
  });

  describe('unparseable bodies → 400', () => {
    it.each([
      ['truncated JSON', '{"user_emails": ["bob@acme.test"], "message": "x"'],
      ['trailing comma', '{"user_emails": ["bob@acme.test"], "message": "x",}'],
      ['single quotes', "{'user_emails': ['bob@acme.test'], 'message': 'x'}"],
      ['not JSON at all', 'user_emails=bob@acme.test&message=x'],
      ['empty body', ''],
      ['two values', '{} {}'],
    ])('refuses %s, saying the body could not be parsed', async (_name, raw) => {
      expectError(await send(host, null, { raw }), 400, /pars/i);
    });

    it('refuses a body that is not UTF-8', async () => {
      const raw = new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);
      expectError(await send(host, null, { raw }), 400);
    });

    it.each([
      ['an array', '[{"user_emails":["bob@acme.test"],"message":"x"}]'],
      ['a string', '"hello"'],
      ['a number', '42'],
      ['null', 'null'],
      ['a boolean', 'true'],
    ])('refuses %s (not an object), saying the body could not be parsed', async (_name, raw) => {
      expectError(await send(host, null, { raw }), 400, /could not be parsed: it must be a JSON object/);
    });

    it('refuses a number too large to be finite (1e400) as timeout_minutes', async () => {
      const raw = `{"user_emails":["bob@acme.test"],"message":"x","response_request":{"options":[{"text":"a","value":"a"},{"text":"b","value":"b"}],"timeout_minutes":1e400}}`;
      expectError(await send(host, null, { raw }), 400, names('response_request.timeout_minutes'));
    });
  });

  describe('Content-Type', () => {
    it.each([
      ['missing', null],
      ['text/plain', 'text/plain'],
      ['form', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=x'],
      ['json-like', 'application/jsonp'],
      ['text/json', 'text/json'],
    ])('refuses a %s Content-Type with 400 even for a valid JSON body', async (_name, contentType) => {
      expectError(await send(host, plainBody(), { contentType }), 400);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });
  });

  describe('missing fields → 400 naming the field', () => {
    it.each([
      ['user_emails', { message: 'x' }],
      ['message', { user_emails: ['bob@acme.test'] }],
      ['response_request.options', { ...plainBody(), response_request: { timeout_minutes: 5 } }],
      [
        'response_request.timeout_minutes',
        { ...plainBody(), response_request: { options: responseRequest().options } },
      ],
      [
        'response_request.options[1].text',
        {
          ...plainBody(),
          response_request: responseRequest({ options: [{ text: 'a', value: 'a' }, { value: 'b' }] }),
        },
      ],
      [
        'response_request.options[0].value',
        {
          ...plainBody(),
          response_request: responseRequest({ options: [{ text: 'a' }, { text: 'b', value: 'b' }] }),
        },
      ],
    ])('names %s', async (path, body) => {
      expectError(await send(host, body), 400, names(path));
    });

    it('refuses an empty object, naming both required fields', async () => {
      const details = expectError(await send(host, {}), 400);
      expect(details).toMatch(names('user_emails'));
      expect(details).toMatch(names('message'));
    });
  });

  describe('wrong types → 400 naming the field', () => {
    it.each([
      ['user_emails', { ...plainBody(), user_emails: 'bob@acme.test' }],
      ['user_emails[0]', { ...plainBody(), user_emails: [42] }],
      ['user_emails[1]', { ...plainBody(), user_emails: ['bob@acme.test', null] }],
      ['message', { ...plainBody(), message: 42 }],
      ['message', { ...plainBody(), message: ['x'] }],
      ['message', { ...plainBody(), message: null }],
      ['external_reference_id', interactiveBody({ external_reference_id: 7 })],
      ['response_request', { ...plainBody(), response_request: 'yes' }],
      ['response_request', { ...plainBody(), response_request: [] }],
      ['response_request', { ...plainBody(), response_request: null }],
      ['response_request.options', interactiveBody({}, { options: { text: 'a', value: 'a' } })],
      ['response_request.options[0]', interactiveBody({}, { options: ['a', 'b'] })],
      [
        'response_request.options[0].text',
        interactiveBody(
          {},
          {
            options: [
              { text: 1, value: 'a' },
              { text: 'b', value: 'b' },
            ],
          },
        ),
      ],
      [
        'response_request.options[1].value',
        interactiveBody(
          {},
          {
            options: [
              { text: 'a', value: 'a' },
              { text: 'b', value: 2 },
            ],
          },
        ),
      ],
      ['response_request.timeout_minutes', interactiveBody({}, { timeout_minutes: '60' })],
      ['response_request.timeout_minutes', interactiveBody({}, { timeout_minutes: null })],
      ['response_request.disable', interactiveBody({}, { disable: 'never' })],
      ['response_request.disable', interactiveBody({}, { disable: 'onuseraction' })],
      ['response_request.disable', interactiveBody({}, { disable: true })],
    ])('names %s', async (path, body) => {
      expectError(await send(host, body), 400, names(path));
    });
  });

  describe('unknown fields are refused (docs/behaviour.md#validation)', () => {
    it.each([
      ['calback_url', { ...interactiveBody(), calback_url: 'https://example.com/cb' }],
      ['userEmails', { ...plainBody(), userEmails: ['bob@acme.test'] }],
      ['response_request.calback_url', interactiveBody({}, { calback_url: 'https://example.com/cb' })],
      ['response_request.timeout', interactiveBody({}, { timeout: 5 })],
      [
        'response_request.options[1].label',
        interactiveBody(
          {},
          {
            options: [
              { text: 'a', value: 'a' },
              { text: 'b', value: 'b', label: 'B' },
            ],
          },
        ),
      ],
    ])('refuses %s with 400 naming it', async (path, body) => {
      expectError(await send(host, body), 400, names(path));
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });
  });

  describe('validation rules → 400', () => {
    it('refuses duplicate option values', async () => {
      const body = interactiveBody(
        {},
        {
          options: [
            { text: 'Yes', value: 'same' },
            { text: 'Also yes', value: 'same' },
          ],
        },
      );
      expectError(await send(host, body), 400, /response_request\.options/);
    });

    it('accepts duplicate option texts with distinct values', async () => {
      const body = interactiveBody(
        {},
        {
          options: [
            { text: 'Same', value: 'a' },
            { text: 'Same', value: 'b' },
          ],
        },
      );
      expect(expectOk(await send(host, body)).request_id).toMatch(requestIdPattern);
    });

    it.each([
      ['spaces', '   '],
      ['mixed whitespace', ' \n\t \r\n '],
      ['empty', ''],
    ])('refuses a %s message', async (_name, message) => {
      expectError(await send(host, plainBody({ message })), 400, names('message'));
    });

    it.each([
      'not-an-email',
      'bob@',
      '@acme.test',
      'bob@@acme.test',
      'bob acme.test',
      'bob@acme test',
      '',
      '   ',
      `${'b'.repeat(65)}@acme.test`,
      `bob@${'a'.repeat(64)}.test`,
      `bob@${['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(56)].join('.')}.te`,
    ])('refuses the malformed address %j with 400 (not 422)', async (address) => {
      expectError(
        await send(host, plainBody({ user_emails: ['bob@acme.test', address] })),
        400,
        /(^|; )user_emails(\[1\]|\.1)?: /,
      );
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('takes addresses at the lengths RFC 5321 allows as well-formed: unknown ones get 422', async () => {
      const longest = [
        `${'b'.repeat(64)}@acme.test`,
        `bob@${'a'.repeat(63)}.test`,
        `bob@${['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(55)].join('.')}.te`,
      ];
      expect(longest[2]).toHaveLength(254);
      expectError(
        await send(host, plainBody({ user_emails: ['bob@acme.test', ...longest] })),
        422,
        `Unknown user emails: ${longest.join(', ')}`,
      );
    });

    it.each([
      ['message', interactiveBody({ message: 'Deploy \udc00 now?' })],
      ['external_reference_id', interactiveBody({ external_reference_id: 'deploy-\ud800' })],
      [
        'response_request.options[0].text',
        interactiveBody(
          {},
          {
            options: [
              { text: '\ud83d', value: 'a' },
              { text: 'B', value: 'b' },
            ],
          },
        ),
      ],
      [
        'response_request.options[1].value',
        interactiveBody(
          {},
          {
            options: [
              { text: 'A', value: 'a' },
              { text: 'B', value: 'b\ude80' },
            ],
          },
        ),
      ],
    ])('refuses half a surrogate pair in %s, naming the field', async (path, body) => {
      expect(JSON.stringify(body)).toMatch(/\\ud[89a-f][0-9a-f]{2}/);
      const details = expectError(await send(host, body), 400, names(path));
      expect(details).toContain(`${path}: must be Unicode text`);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('takes a surrogate pair, escaped or not, as the character it encodes', async () => {
      const raw = JSON.stringify(plainBody()).replace('Deploy finished', 'Deploy \\ud83d\\ude80 finished 🚀');
      expectOk(await send(host, null, { raw }));
      expect((await inbox(host, 'bob@acme.test')).map((message) => message.text)).toEqual([
        'Deploy 🚀 finished 🚀',
      ]);
    });

    it('refuses an empty recipient list', async () => {
      expectError(await send(host, plainBody({ user_emails: [] })), 400, names('user_emails'));
    });

    it('names response_request.options with the rule for 1 and 6 options', async () => {
      const option = (i: number) => ({ text: `T${i}`, value: `v${i}` });
      for (const count of [0, 1, 6]) {
        const body = interactiveBody({}, { options: Array.from({ length: count }, (_, i) => option(i)) });
        expectError(
          await send(host, body),
          400,
          /(^|; )response_request\.options: must have 2 to 5 entries($|;)/,
        );
      }
    });

    it.each([1.5, 1, 1440, 2.25, 1439.99])('accepts timeout_minutes %d', async (timeout_minutes) => {
      expect(expectOk(await send(host, interactiveBody({}, { timeout_minutes }))).request_id).toMatch(
        requestIdPattern,
      );
    });

    it.each([0.99, 1440.01, 0, -1, 100000])('refuses timeout_minutes %d', async (timeout_minutes) => {
      expectError(
        await send(host, interactiveBody({}, { timeout_minutes })),
        400,
        names('response_request.timeout_minutes'),
      );
    });

    it('accepts both disable modes explicitly', async () => {
      for (const disable of ['onUserAction', 'onTimeout']) {
        expect(expectOk(await send(host, interactiveBody({}, { disable }))).request_id).toMatch(
          requestIdPattern,
        );
      }
    });

    it('validates the body before looking up recipients: an invalid body with unknown users is 400', async () => {
      expectError(await send(host, { user_emails: ['nobody@acme.test'], message: '' }), 400);
    });

    it('accepts markdown and keeps the text as sent', async () => {
      const message = '*bold* _it_ `code`\n- item\n[Link](https://example.com)\n```\nblock\n```';
      expect(expectOk(await send(host, plainBody({ message }))).notification_id).toMatch(
        notificationIdPattern,
      );
      const [delivered] = await inbox(host, 'bob@acme.test');
      expect(delivered?.text).toBe(message);
    });
  });

  describe('body size (docs/http-api.md#error-reference: 413 above 64 KiB)', () => {
    /** A valid body of exactly `bytes` bytes, padded with JSON whitespace. */
    const bodyOfSize = (bytes: number) => {
      const json = JSON.stringify(plainBody());
      return `${json}${' '.repeat(bytes - Buffer.byteLength(json))}`;
    };

    it('accepts a body of exactly 64 KiB', async () => {
      const raw = bodyOfSize(64 * 1024);
      expect(Buffer.byteLength(raw)).toBe(65536);
      expect(expectOk(await send(host, null, { raw })).notification_id).toMatch(notificationIdPattern);
    });

    it('refuses a body one byte over 64 KiB with 413, saying the limit', async () => {
      const raw = bodyOfSize(64 * 1024 + 1);
      expectError(await send(host, null, { raw }), 413, /64 ?KiB|65536|65,536/);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('refuses a large body without Content-Length (chunked) with 413', async () => {
      const chunk = new TextEncoder().encode(' '.repeat(16 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode(JSON.stringify(plainBody())));
          if (sent >= 6) controller.close();
          else controller.enqueue(chunk);
          sent += 1;
        },
      });
      const answer = await call(`${host.baseUrl}/api/notify`, {
        method: 'POST',
        headers: { 'x-api-key': host.keys.alice, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expectError(answer, 413);
    });

    it('refuses a 1 MiB body with 413', async () => {
      expectError(await send(host, null, { raw: `"${'x'.repeat(1024 * 1024)}"` }), 413);
    });

    it('answers 413 while the client is still sending, without waiting for the rest of the body', async () => {
      const upload = await endlessUpload(
        host.origin,
        `POST ${new URL(host.baseUrl).pathname}/api/notify HTTP/1.1\r\nHost: x\r\nX-API-Key: ${host.keys.alice}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      expect(upload).toMatch(/^HTTP\/1\.1 413 /);
    });

    it('refuses a status read whose body is over 64 KiB with 413, and ignores a small one', async () => {
      const id = expectOk(await send(host, interactiveBody())).request_id;
      const path = `${new URL(host.baseUrl).pathname}/api/notify/status/${id}`;
      // Node's client sends a GET's body with neither length nor chunks unless told its length.
      const withBody = (bytes: number) =>
        rawRequest(host.origin, {
          path,
          headers: { 'x-api-key': host.keys.alice, 'content-length': String(bytes) },
          body: 'x'.repeat(bytes),
        });
      expectError(await withBody(64 * 1024 + 1), 413);
      expect((await withBody(100)).status).toBe(200);
      const chunked = await endlessUpload(
        host.origin,
        `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${host.keys.alice}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      expect(chunked).toMatch(/^HTTP\/1\.1 413 /);
    });
  });

  describe('authentication (docs/behaviour.md#api-keys, docs/http-api.md#error-reference)', () => {
    it('answers 401 Missing API key without the header', async () => {
      expectError(await send(host, plainBody(), { key: null }), 401, 'Missing API key');
    });

    it('answers 401 Missing API key for an empty header', async () => {
      expectError(await send(host, plainBody(), { key: '' }), 401, 'Missing API key');
    });

    it.each([
      ['an unknown key', 'cnk_unknown_000000000000000000000000000'],
      ['a truncated key', 'cnk_test_alice_00000000000000000000000'],
      ['a key with a different case', 'CNK_TEST_ALICE_000000000000000000000001'],
      ['garbage', 'x'],
    ])('answers 401 Invalid API key for %s', async (_name, key) => {
      expectError(await send(host, plainBody(), { key }), 401, 'Invalid API key');
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    });

    it('authenticates before validating the body', async () => {
      expectError(await send(host, null, { key: null, raw: '{bad' }), 401, 'Missing API key');
      expectError(await send(host, { nonsense: true }, { key: 'wrong' }), 401, 'Invalid API key');
      expectError(await send(host, plainBody(), { key: 'wrong', contentType: 'text/plain' }), 401);
    });

    it('accepts a key created through key management, and refuses it on the very next request after revocation', async () => {
      const created = await createKey(host, 'dave@acme.test');
      expect(expectOk(await send(host, plainBody(), { key: created.apiKey })).notification_id).toMatch(
        notificationIdPattern,
      );
      await host.notifier.apiKeys.revoke({ userId: created.userId, admin: false }, created.id);
      expectError(await send(host, plainBody(), { key: created.apiKey }), 401, 'Invalid API key');
      expectError(await readStatus(host, `req_${'A'.repeat(24)}`, created.apiKey), 401, 'Invalid API key');
      expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);
    });

    it('applies revocation by an admin immediately', async () => {
      const created = await createKey(host, 'user01@acme.test');
      const [alice] = await host.storage.directory.findUsersByEmail('acme', ['alice@acme.test']);
      expectOk(await send(host, plainBody(), { key: created.apiKey }));
      await host.notifier.apiKeys.revoke({ userId: alice!.id, admin: true }, created.id);
      expectError(await send(host, plainBody(), { key: created.apiKey }), 401, 'Invalid API key');
      // Other keys keep working.
      expectOk(await send(host, plainBody()));
    });
  });

  describe('other paths and methods', () => {
    it('answers a HEAD wherever a GET is answered: the same status and headers, no body', async () => {
      const id = expectOk(await send(host, interactiveBody())).request_id;
      const path = `${new URL(host.baseUrl).pathname}/api/notify/status/${id}`;
      const headers = { 'x-api-key': host.keys.alice };
      const got = await rawRequest(host.origin, { path, headers });
      const head = await rawRequest(host.origin, { method: 'HEAD', path, headers });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers.get('content-type')).toBe(got.headers.get('content-type'));
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(got.text)));
      const refused = await rawRequest(host.origin, { method: 'POST', path, headers });
      expectError(refused, 405);
      expect(refused.headers.get('allow')).toBe('GET, HEAD');
    });

    it('answers a wrong method on the send path with a 4xx in the error shape', async () => {
      const answer = await call(`${host.baseUrl}/api/notify`, { headers: { 'x-api-key': host.keys.alice } });
      expect([404, 405]).toContain(answer.status);
      expectError(answer, answer.status);
    });
  });
});

describe.each(hostKinds)('unexpected failures (%s)', (kind) => {
  let app: CustomApp;
  afterEach(async () => {
    await app.close();
  });

  it('answers an unexpected exception with a generic 500 in the error shape, hiding its cause', async () => {
    app = await startCustomApp(kind, {
      wrapTransport: (inner) => ({
        platform: inner.platform,
        routes: inner.routes,
        connect: (sink) => inner.connect(sink),
        deliver: (delivery) => inner.deliver(delivery),
        update: (delivery, ref) => inner.update(delivery, ref),
        address: () => {
          throw new Error('SECRET-INTERNAL-STATE at /srv/app/secret.js:12');
        },
      }),
    });
    const answer = await send(app, plainBody());
    const details = expectError(answer, 500);
    expect(details).not.toContain('SECRET');
    expect(details).not.toContain('/srv/app');
    expect(answer.text).not.toContain('SECRET');
  });
});
