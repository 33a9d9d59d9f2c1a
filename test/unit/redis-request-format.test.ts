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
    expect(decodeRequest(encodeRequest(request), request.id)).toEqual(request);
    const fresh = {
      ...request,
      status: 'pending',
      finishedAt: null,
      externalReferenceId: null,
      callback: null,
    } as const;
    expect(decodeRequest(encodeRequest(fresh), fresh.id)).toEqual(fresh);
  });

  it('is the admission script’s splice of the organization and sender before the rest, byte for byte', () => {
    const { organizationId, sender, ...rest } = request;
    const spliced = `[${JSON.stringify(organizationId)},[${JSON.stringify(sender.userId)},${JSON.stringify(sender.name)}],${encodeRequestAfterSender(rest)}`;
    expect(spliced).toBe(encodeRequest(request));
  });

  it('is shorter than the object: no id, and a waiting recipient is its address alone', () => {
    const stored = encodeRequest(request);
    expect(stored.length).toBeLessThan(JSON.stringify(request).length * 0.75);
    expect(stored).not.toContain(request.id);
    expect(stored.split('carol@example.test')).toHaveLength(2);
    expect(stored).toMatch(/,"dave@example\.test"\],1893457000000,"deploy-7",\[/);
  });

  it('writes the status and the mode as numbers, no end of the timeout the core would compute, and no trailing nulls', () => {
    const fresh: InteractiveRequest = {
      ...request,
      status: 'pending',
      mode: 'onUserAction',
      expiresAt: request.createdAt + 30 * 60_000,
      finishedAt: null,
    };
    const stored = encodeRequest(fresh);
    expect(stored).toContain(
      ',0,"Déployer *v2* ? 🚀\\nline \\"two\\"",["Oui","yes","Non, merci","no"],0,30,1893456000000,null,',
    );
    expect(decodeRequest(stored, fresh.id)).toEqual(fresh);
    // Neither an answer time nor a reference nor a callback: the recipients end the record.
    const bare = { ...fresh, externalReferenceId: null, callback: null };
    expect(encodeRequest(bare)).toMatch(/,null,\[\["Bob@Example\.test",.*,"dave@example\.test"\]\]$/);
    expect(decodeRequest(encodeRequest(bare), bare.id)).toEqual(bare);
    // An end the core did not compute (a request written before a change of the rule) is kept.
    const moved = { ...fresh, expiresAt: fresh.expiresAt + 1 };
    expect(decodeRequest(encodeRequest(moved), moved.id)).toEqual(moved);
  });

  it('reads the object form and the array forms of earlier releases', () => {
    expect(decodeRequest(JSON.stringify(request), request.id)).toEqual(request);
    // The release before: names for the status and the mode, the end of the timeout always.
    const named =
      '["acme \\"labs\\"",["usr_1","Alice \\\\ Doe"],3,"finished",' +
      '"Déployer *v2* ? 🚀\\nline \\"two\\"",["Oui","yes","Non, merci","no"],"onTimeout",30,1893456000000,' +
      '1893457800000,1893457000000,"deploy-7",["https://example.test/hook","whsec_abc"],' +
      '[["Bob@Example.test","bob@example.test","yes",1893456100000,0],["carol@example.test",0,null,null,1],' +
      '"dave@example.test"]]';
    expect(decodeRequest(named, request.id)).toEqual(request);
    // The array form of the release before: the id after the sender, five entries per recipient.
    const earlier =
      '["acme \\"labs\\"",["usr_1","Alice \\\\ Doe"],"req_AAAAAAAAAAAAAAAAAAAAAAAA",3,"finished",' +
      '"Déployer *v2* ? 🚀\\nline \\"two\\"",["Oui","yes","Non, merci","no"],"onTimeout",30,1893456000000,' +
      '1893457800000,1893457000000,"deploy-7",["https://example.test/hook","whsec_abc"],' +
      '["Bob@Example.test","bob@example.test","yes",1893456100000,0,"carol@example.test",0,null,null,1,' +
      '"dave@example.test",0,null,null,0]]';
    expect(decodeRequest(earlier, request.id)).toEqual(request);
  });
});
