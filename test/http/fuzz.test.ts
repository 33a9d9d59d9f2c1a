import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, asBody, call, generousLimits, interactiveBody, plainBody } from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

/** One request of the fuzzer: a raw body and a Content-Type (or none). */
interface Attempt {
  body: string | Uint8Array;
  contentType: string | null;
}

const jsonType = fc.constantFrom<string | null>('application/json', 'application/json; charset=utf-8');
const otherType = fc.constantFrom<string | null>(
  null,
  '',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zz',
  'application/jsonx',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  '*/*',
);

/** Known and unknown field names, so that mutations hit both. */
const fieldName = fc.constantFrom(
  'user_emails',
  'message',
  'external_reference_id',
  'response_request',
  'options',
  'timeout_minutes',
  'disable',
  'text',
  'value',
  'calback_url',
  '__proto__',
  'constructor',
  '',
);

/** A value that is sometimes valid for some field and often not. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    'bob@acme.test',
    'BOB@ACME.TEST ',
    'nobody@acme.test',
    'not-an-email',
    '',
    '   ',
    'onTimeout',
    'onUserAction',
    0,
    1,
    1.5,
    1440,
    1440.01,
    -1,
    1e308,
    null,
    [],
    {},
  ),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.array(fc.emailAddress(), { maxLength: 4 }),
  fc.array(fc.record({ text: fc.string({ maxLength: 80 }), value: fc.string({ maxLength: 110 }) }), {
    maxLength: 7,
  }),
);

type Mutable = Record<string, unknown>;

/** A valid body with one field at some depth replaced, removed or added. */
const nearValid: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.constantFrom<() => Mutable>(
      () => plainBody(),
      () => interactiveBody(),
      () => interactiveBody({ external_reference_id: 'ref' }, { disable: 'onTimeout' }),
    ),
    fc.constantFrom('top', 'response_request', 'option'),
    fc.constantFrom('replace', 'delete', 'add'),
    fieldName,
    anyValue,
  )
  .map(([make, depth, action, name, value]) => {
    const body = make();
    const rr = body.response_request as Mutable | undefined;
    const option = (rr?.options as Mutable[] | undefined)?.[0];
    const target = depth === 'option' ? option : depth === 'response_request' ? rr : body;
    const object = target ?? body;
    const key =
      action === 'add' ? name : (Object.keys(object)[name.length % Object.keys(object).length] ?? name);
    if (action === 'delete') delete object[key];
    else Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
    return body;
  });

const attempt: fc.Arbitrary<Attempt> = fc.oneof(
  // Arbitrary JSON values, correctly labelled.
  fc.record({ body: fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'), contentType: jsonType }),
  // Near-valid bodies, correctly labelled.
  fc.record({ body: nearValid.map((v) => JSON.stringify(v)), contentType: jsonType }),
  // Random bytes, labelled as JSON or not.
  fc.record({ body: fc.uint8Array({ maxLength: 300 }), contentType: fc.oneof(jsonType, otherType) }),
  // Random text, which is sometimes almost JSON.
  fc.record({ body: fc.string({ unit: 'binary', maxLength: 200 }), contentType: jsonType }),
  // Valid or near-valid bodies with a wrong Content-Type.
  fc.record({
    body: fc.oneof(nearValid, fc.constant(plainBody())).map((v) => JSON.stringify(v)),
    contentType: otherType,
  }),
);

/** No 5xx, and every error in exactly the specification's shape with a JSON content type. */
function expectWellFormed(answer: Answer, input: unknown): void {
  const context = JSON.stringify(input).slice(0, 500);
  expect(answer.status, context).toBeLessThan(500);
  expect(answer.headers.get('content-type'), context).toMatch(/^application\/json\b/);
  if (answer.status >= 400) {
    expect(Object.keys(answer.json as object).sort(), context).toEqual(['details', 'status']);
    const body = answer.json as { status: unknown; details: unknown };
    expect(body.status, context).toBe('error');
    expect(typeof body.details, context).toBe('string');
    expect((body.details as string).length, context).toBeGreaterThan(0);
  } else {
    expect(answer.status, context).toBe(200);
    expect((answer.json as { status: unknown }).status, context).toBe('ok');
  }
}

describe.each(hostKinds)('fuzzing (%s)', (kind) => {
  let host: TestHost;
  beforeAll(async () => {
    host = await startTestHost(kind, { rateLimits: generousLimits });
  });
  afterAll(async () => {
    await host.close();
  });

  it('answers any body of any shape without a 5xx, errors always in the error shape', async () => {
    await fc.assert(
      fc.asyncProperty(attempt, async ({ body, contentType }) => {
        const answer = await call(`${host.baseUrl}/api/notify`, {
          method: 'POST',
          headers: {
            'x-api-key': host.keys.alice,
            ...(contentType === null ? {} : { 'content-type': contentType }),
          },
          body: asBody(body),
        });
        expectWellFormed(answer, { body: typeof body === 'string' ? body : Array.from(body), contentType });
      }),
      { numRuns: 150 },
    );
  });

  it('answers any request_id without a 5xx, errors always in the error shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        // `.` and `..` are path syntax, resolved by the client before any request is made.
        fc
          .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
          .filter((id) => id !== '.' && id !== '..'),
        async (id) => {
          const answer = await call(`${host.baseUrl}/api/notify/status/${encodeURIComponent(id)}`, {
            headers: { 'x-api-key': host.keys.alice },
          });
          expectWellFormed(answer, id);
          expect([400, 404], id).toContain(answer.status);
        },
      ),
      { numRuns: 60 },
    );
  });
});
