import { describe, expect, it } from 'vitest';
import {
  decodeRequest,
  encodeRequest,
  encodeRequestAfterSender,
} from '../../adapters/storage/redis/request-format.js';
import type { InteractiveRequest } from '../../core/domain/interactive-request.js';

const request: InteractiveRequest = {
  id: 'req_AAAAAAAAAAAAAAAAAAAAAAAA',
  organizationId: 'acme "labs"',
  version: 3,
  status: 'finished',
  message: 'Déployer *v2* ? 🚀\nline "two"',
  options: [
    { text: 'Oui', value: 'yes' },
    { text: 'Non, merci', value: 'no' },
  ],
  mode: 'onTimeout',
  timeoutMinutes: 30,
  createdAt: 1_893_456_000_000,
  expiresAt: 1_893_457_800_000,
  finishedAt: 1_893_457_000_000,
  externalReferenceId: 'deploy-7',
  sender: { userId: 'usr_1', name: 'Alice \\ Doe' },
  callback: { url: 'https://example.test/hook', secret: 'whsec_abc' },
  recipients: [
    {
      email: 'Bob@Example.test',
      key: 'bob@example.test',
      value: 'yes',
      respondedAt: 1_893_456_100_000,
      expired: false,
    },
    { email: 'carol@example.test', key: 'carol@example.test', value: null, respondedAt: null, expired: true },
    { email: 'dave@example.test', key: 'dave@example.test', value: null, respondedAt: null, expired: false },
  ],
};

describe('stored form of a request on Redis', () => {
  it('reads back every field of a request, answered, expired and waiting recipients alike', () => {
    expect(decodeRequest(encodeRequest(request))).toEqual(request);
    const fresh = {
      ...request,
      status: 'pending',
      finishedAt: null,
      externalReferenceId: null,
      callback: null,
    } as const;
    expect(decodeRequest(encodeRequest(fresh))).toEqual(fresh);
  });

  it('is the admission script’s splice of the organization and sender before the rest, byte for byte', () => {
    const { organizationId, sender, ...rest } = request;
    const spliced = `[${JSON.stringify(organizationId)},[${JSON.stringify(sender.userId)},${JSON.stringify(sender.name)}],${encodeRequestAfterSender(rest)}`;
    expect(spliced).toBe(encodeRequest(request));
  });

  it('is shorter than the object, and writes a normalized address that reads as spelled once', () => {
    const stored = encodeRequest(request);
    expect(stored.length).toBeLessThan(JSON.stringify(request).length * 0.75);
    expect(stored.split('carol@example.test')).toHaveLength(2);
  });

  it('reads the object form of earlier releases', () => {
    expect(decodeRequest(JSON.stringify(request))).toEqual(request);
  });
});
