import { describe, expect, it } from 'vitest';
import { verifySlackSignature } from '../../adapters/chat/slack/signature.js';
import { slackSignatureHeaders, testSigningSecret } from '../support/slack-signing.js';

const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
const now = Date.parse('2026-03-01T09:00:00.000Z');
const bytes = (text: string) => new TextEncoder().encode(text);

/** Checks `sentBody` with the headers of a request signed over `signedBody` at `signedAt` (ms). */
const verify = (
  signedBody: string,
  signedAt: number,
  { sentBody = signedBody, secret = testSigningSecret }: { sentBody?: string; secret?: string } = {},
) => {
  const headers = slackSignatureHeaders(signedBody, signedAt / 1000, secret);
  return verifySlackSignature(
    testSigningSecret,
    {
      timestamp: headers['x-slack-request-timestamp'],
      signature: headers['x-slack-signature'],
      body: bytes(sentBody),
    },
    now,
  );
};

describe('verifySlackSignature', () => {
  it('accepts a request signed with the signing secret over the exact body', () => {
    expect(verify(body, now)).toEqual({ ok: true });
  });

  it('accepts timestamps up to five minutes off, either way', () => {
    expect(verify(body, now - 5 * 60_000)).toEqual({ ok: true });
    expect(verify(body, now + 5 * 60_000)).toEqual({ ok: true });
  });

  it('refuses a request signed with another secret', () => {
    expect(verify(body, now, { secret: 'another-secret' })).toEqual({
      ok: false,
      details: 'Invalid Slack signature',
    });
  });

  it('refuses a body changed after signing, even by one byte', () => {
    expect(verify(body, now, { sentBody: `${body}0` })).toEqual({
      ok: false,
      details: 'Invalid Slack signature',
    });
  });

  it('refuses a stale request and one from the future', () => {
    const details = 'Slack request timestamp is too far from the current time';
    expect(verify(body, now - 5 * 60_000 - 1000)).toEqual({ ok: false, details });
    expect(verify(body, now + 5 * 60_000 + 1000)).toEqual({ ok: false, details });
  });

  it('refuses missing headers, a malformed timestamp and a malformed signature', () => {
    const signed = slackSignatureHeaders(body, now / 1000);
    const check = (timestamp: string | undefined, signature: string | undefined) =>
      verifySlackSignature(testSigningSecret, { timestamp, signature, body: bytes(body) }, now);
    expect(check(undefined, signed['x-slack-signature'])).toEqual({
      ok: false,
      details: 'Missing Slack signature headers',
    });
    expect(check(signed['x-slack-request-timestamp'], undefined)).toEqual({
      ok: false,
      details: 'Missing Slack signature headers',
    });
    expect(check(`${now / 1000}.5`, signed['x-slack-signature'])).toEqual({
      ok: false,
      details: 'Invalid Slack request timestamp',
    });
    for (const signature of [
      '',
      'v0=',
      `v1=${'0'.repeat(64)}`,
      `${signed['x-slack-signature']}, v0=00`,
      'v0=zz',
    ]) {
      expect(check(signed['x-slack-request-timestamp'], signature)).toEqual({
        ok: false,
        details: 'Invalid Slack signature',
      });
    }
  });
});
