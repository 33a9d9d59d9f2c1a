import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Headers as UndiciHeaders } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type CallbackEvent,
  CallbackVerificationError,
  signCallback,
  verifyCallback,
} from '../../client/index.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;

const event: CallbackEvent = {
  type: 'request.finished',
  request_id: 'req_AbCdEfGhIjKlMnOpQrStUvWx',
  status: 'finished',
  external_reference_id: 'deploy-42',
  responses: [
    {
      user_email: 'bob@acme.test',
      option_value: 'approve',
      timestamp: '2025-01-01T10:00:00.000Z',
      expired: false,
    },
    { user_email: 'carol@acme.test', option_value: null, timestamp: null, expired: true },
  ],
  finished_at: '2025-01-01T10:30:00.000Z',
};
const payload = JSON.stringify(event);
const msgId = 'msg_AbCdEfGhIjKlMnOpQrStUvWx';

/** Headers exactly as the official library signs them, at `date`. */
function signed(date = new Date(), body = payload, key = secret): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(date.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(msgId, date, body),
  };
}

function reasonOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CallbackVerificationError);
    return (error as CallbackVerificationError).reason;
  }
  throw new Error('expected verifyCallback to throw');
}

describe('verifyCallback', () => {
  it('accepts a callback signed by the official standardwebhooks library and returns the typed body', () => {
    const body: CallbackEvent = verifyCallback(secret, signed(), payload);
    expect(body).toEqual(event);
  });

  it('accepts the body as bytes, Headers objects and header names in any case', () => {
    const headers = signed();
    expect(verifyCallback(secret, headers, Buffer.from(payload))).toEqual(event);
    expect(verifyCallback(secret, new Headers(headers), new TextEncoder().encode(payload))).toEqual(event);
    // Headers of another implementation (undici's own, another realm's) are not the global class.
    const foreign = new UndiciHeaders(headers);
    expect(foreign instanceof Headers).toBe(false);
    expect(verifyCallback(secret, foreign as unknown as Headers, payload)).toEqual(event);
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyCallback(secret, shouting, payload)).toEqual(event);
    const mixed = {
      'Webhook-Id': headers['webhook-id'],
      'Webhook-Timestamp': [headers['webhook-timestamp'] ?? ''],
      'WEBHOOK-signature': headers['webhook-signature'],
    };
    expect(verifyCallback(secret, mixed, payload)).toEqual(event);
  });

  it('refuses a tampered body', () => {
    const tampered = payload.replace('approve', 'reject');
    expect(reasonOf(() => verifyCallback(secret, signed(), tampered))).toBe('signature_mismatch');
    expect(reasonOf(() => verifyCallback(secret, signed(), `${payload} `))).toBe('signature_mismatch');
  });

  it('refuses a stale or future timestamp beyond the tolerance, and accepts one within it', () => {
    const now = Date.now();
    const stale = signed(new Date(now - 301_000));
    expect(reasonOf(() => verifyCallback(secret, stale, payload, { now: () => now }))).toBe(
      'timestamp_too_old',
    );
    const future = signed(new Date(now + 301_000));
    expect(reasonOf(() => verifyCallback(secret, future, payload, { now: () => now }))).toBe(
      'timestamp_too_new',
    );
    expect(verifyCallback(secret, signed(new Date(now - 290_000)), payload, { now: () => now })).toEqual(
      event,
    );
    expect(
      reasonOf(() =>
        verifyCallback(secret, signed(new Date(now - 60_000)), payload, {
          now: () => now,
          toleranceSeconds: 30,
        }),
      ),
    ).toBe('timestamp_too_old');
    const notANumber = { ...signed(), 'webhook-timestamp': '12abc' };
    expect(reasonOf(() => verifyCallback(secret, notANumber, payload))).toBe('invalid_timestamp');
  });

  it('refuses a tolerance that is no number of at least 0 with a RangeError, rather than accepting any timestamp', () => {
    const old = signed(new Date(Date.now() - 5 * 86_400_000));
    for (const toleranceSeconds of [Number.NaN, -1]) {
      expect(() => verifyCallback(secret, old, payload, { toleranceSeconds })).toThrow(
        /^verifyCallback: toleranceSeconds must be a number \(or Infinity\) of at least 0/,
      );
    }
    // Infinity turns the check off on purpose (a stored callback verified again later).
    expect(verifyCallback(secret, old, payload, { toleranceSeconds: Number.POSITIVE_INFINITY })).toEqual(
      event,
    );
  });

  it('refuses a signature made with another secret', () => {
    expect(reasonOf(() => verifyCallback(secret, signed(new Date(), payload, otherSecret), payload))).toBe(
      'signature_mismatch',
    );
  });

  it('refuses missing headers, naming them', () => {
    const headers = signed();
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const without = Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
      expect(() => verifyCallback(secret, without, payload)).toThrow(name);
      expect(reasonOf(() => verifyCallback(secret, without, payload))).toBe('missing_headers');
    }
    expect(reasonOf(() => verifyCallback(secret, { ...headers, 'webhook-id': '' }, payload))).toBe(
      'missing_headers',
    );
    expect(reasonOf(() => verifyCallback(secret, {}, payload))).toBe('missing_headers');
  });

  it('refuses malformed signatures', () => {
    const headers = signed();
    const good = headers['webhook-signature'] ?? '';
    const base64 = good.slice('v1,'.length);
    for (const malformed of [base64, `v2,${base64}`, 'v1,', 'v1,not-base64!', 'garbage']) {
      expect(
        reasonOf(() => verifyCallback(secret, { ...headers, 'webhook-signature': malformed }, payload)),
      ).toBe('malformed_signature');
    }
    const truncated = `v1,${base64.slice(0, 20)}`;
    expect(
      reasonOf(() => verifyCallback(secret, { ...headers, 'webhook-signature': truncated }, payload)),
    ).toBe('signature_mismatch');
  });

  it('accepts a header with several signatures when any v1 signature matches', () => {
    const headers = signed();
    const good = headers['webhook-signature'] ?? '';
    const wrong = new Webhook(otherSecret).sign(msgId, new Date(), payload);
    const twoSignatures = { ...headers, 'webhook-signature': `${wrong} ${good}` };
    expect(verifyCallback(secret, twoSignatures, payload)).toEqual(event);
    const withOtherVersion = { ...headers, 'webhook-signature': `v1a,c29tZXRoaW5n ${good}` };
    expect(verifyCallback(secret, withOtherVersion, payload)).toEqual(event);
    // Node joins a repeated header with ", ".
    const repeated = { ...headers, 'webhook-signature': [wrong, good] };
    expect(verifyCallback(secret, repeated, payload)).toEqual(event);
    const bothWrong = { ...headers, 'webhook-signature': `${wrong} ${wrong}` };
    expect(reasonOf(() => verifyCallback(secret, bothWrong, payload))).toBe('signature_mismatch');
  });

  it('refuses a correctly signed body that is not a callback', () => {
    const notJson = 'hello';
    expect(reasonOf(() => verifyCallback(secret, signed(new Date(), notJson), notJson))).toBe('invalid_body');
    const other = JSON.stringify({ type: 'something.else' });
    expect(reasonOf(() => verifyCallback(secret, signed(new Date(), other), other))).toBe('invalid_body');
  });

  it('rejects a secret that is not whsec_ + base64 as a programming error', () => {
    expect(() => verifyCallback('whsec_%%%', signed(), payload)).toThrow(TypeError);
  });

  it.each([
    ['no byte at all', 'whsec_A'],
    ['an empty secret', 'whsec_'],
    ['a lone character after full groups', `whsec_${'A'.repeat(33)}`],
    ['23 bytes', `whsec_${Buffer.alloc(23, 7).toString('base64')}`],
  ])(
    'rejects a secret garbled or cut short (%s), whose empty or short key anybody could sign with',
    (_what, short) => {
      expect(() => verifyCallback(short, signed(), payload)).toThrow(TypeError);
    },
  );

  it('takes the secret without its whsec_ too, as the standardwebhooks library does', () => {
    expect(verifyCallback(secret.slice('whsec_'.length), signed(), payload)).toEqual(event);
  });

  it('takes a secret of 24 bytes, and the base64 of 32 without its padding', () => {
    for (const bytes of [Buffer.alloc(24, 7), Buffer.alloc(32, 9)]) {
      const key = bytes.toString('base64').replace(/=+$/, '');
      expect(() => verifyCallback(`whsec_${key}`, signed(), payload)).toThrow(CallbackVerificationError);
    }
  });

  it("makes signatures that the official library's verify accepts", () => {
    const date = new Date();
    const headers = {
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(date.getTime() / 1000)),
      'webhook-signature': signCallback(secret, { id: msgId, timestamp: date, body: payload }),
    };
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign(msgId, date, payload));
    expect(new Webhook(secret).verify(payload, headers)).toEqual(event);
    expect(() => new Webhook(otherSecret).verify(payload, headers)).toThrow();
    // and with a numeric timestamp and bytes
    const fromBytes = signCallback(secret, {
      id: msgId,
      timestamp: Number(headers['webhook-timestamp']),
      body: Buffer.from(payload),
    });
    expect(fromBytes).toBe(headers['webhook-signature']);
    expect(verifyCallback(secret, headers, payload)).toEqual(event);
  });
});
