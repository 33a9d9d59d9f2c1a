import { describe, expect, it, vi } from 'vitest';
import type { StoragePorts } from '../../core/ports/storage.js';
import {
  acmeTenant,
  asEarlierRelease,
  bob,
  carol,
  dave,
  type InvokeAnswer,
  mallory,
  only,
  options,
  otherTenant,
  teamsWorlds,
  user,
  user01,
} from '../support/teams-world.js';
import { numberedUsers, testKeys } from '../support/test-seed.js';

const start = teamsWorlds();

/** 45 users of acme's tenant, known to the fake Teams. */
function fortyFiveUsersOf(w: Awaited<ReturnType<typeof start>>) {
  const many = numberedUsers.slice(0, 45).map((email) => user(email.split('@')[0] ?? email, { email }));
  for (const each of many) w.connector.addUser(each);
  return many;
}

describe('Teams transport: linking users', () => {
  it('links a user when they install the app, and delivers proactively in their 1:1 conversation', async () => {
    const w = await start();
    await w.install(bob);
    const [member] = w.connector.callsTo('member');
    expect(member).toMatchObject({
      conversationId: w.connector.personalConversationOf(bob.id),
      userId: bob.id,
    });
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Deploy *v2* finished' });
    expect(answer.status).toBe(200);
    expect(w.connector.callsTo('create')).toEqual([]);
    const message = only(w, bob);
    expect(message.text).toBe('Deploy **v2** finished');
    expect(message.conversationId).toBe(w.connector.personalConversationOf(bob.id));
    expect(w.connector.callsTo('send').every((call) => call.authorized)).toBe(true);
  });

  it('finds users by their email case-insensitively, or by user principal name without one', async () => {
    const w = await start();
    await w.install(carol, dave);
    const answer = await w.send({ user_emails: ['carol@acme.test', 'Dave@Acme.test'], message: 'Hello' });
    expect(answer.status).toBe(200);
    expect(w.connector.messagesOf(carol.id)).toHaveLength(1);
    expect(w.connector.messagesOf(dave.id)).toHaveLength(1);
  });

  it('cannot link a user whose roster entry has no address, and names them in the 500', async () => {
    const w = await start();
    await w.install(user01);
    expect(w.logs.some((line) => line.startsWith('Teams user without an email'))).toBe(true);
    const answer = await w.send({ user_emails: ['user01@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('user01@acme.test');
  });

  it('links who adds the app to a team and who joins it later, and creates their 1:1 conversation on the first message', async () => {
    const w = await start();
    const installation = w.connector.teamInstallActivity(bob.id, [carol.id]);
    expect((await w.post(installation)).status).toBe(200);
    // Carol joins the team later: Teams names her among the members added.
    const joined = {
      ...installation,
      id: 'f:joined',
      membersAdded: [{ id: carol.id, aadObjectId: carol.aadObjectId }],
    };
    expect((await w.post(joined)).status).toBe(200);
    expect(w.connector.personalConversationOf(bob.id)).toBeNull();
    const first = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'First' });
    expect(first.status).toBe(200);
    expect(w.connector.callsTo('create').map((call) => call.body)).toEqual([
      expect.objectContaining({ isGroup: false, members: [{ id: bob.id }], tenantId: acmeTenant }),
      expect.objectContaining({ isGroup: false, members: [{ id: carol.id }], tenantId: acmeTenant }),
    ]);
    await w.send({ user_emails: ['bob@acme.test'], message: 'Second' });
    expect(w.connector.callsTo('create')).toHaveLength(2);
    expect(w.connector.messagesOf(bob.id).map((message) => message.text)).toEqual(['First', 'Second']);
  });

  it.each(['remove', 'remove-upgrade'])(
    'stops reaching a user who removes the app (%s), and reaches them again once they reinstall it',
    async (action) => {
      const w = await start();
      await w.install(bob);
      const removal = { ...(w.connector.uninstallActivity(bob.id) as object), action };
      expect((await w.post(removal)).status).toBe(200);
      const refused = await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' });
      expect(refused.status).toBe(500);
      expect(refused.json.details).toContain('bob@acme.test');
      expect(w.connector.callsTo('send')).toEqual([]);
      await w.install(bob);
      expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Again' })).status).toBe(200);
    },
  );
});

describe('Teams transport: channels', () => {
  it('refuses an activity of another channel of the bot (Web Chat, Direct Line) with 403, and changes nothing', async () => {
    const w = await start();
    await w.install(bob);
    // What a Web Chat client could send under a valid token: an uninstall in bob's name.
    const uninstall = { ...w.connector.uninstallActivity(bob.id), channelId: 'webchat' };
    // Bob keeps the app on Teams: only the activity is wanted, not what it did to the fake.
    w.connector.installActivities(bob.id);
    const response = await w.post(uninstall);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toEqual({
      status: 'error',
      details: 'Only Microsoft Teams activities are served here',
    });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Still here' })).status).toBe(200);
  });
});

describe('Teams transport: tenants', () => {
  it('refuses an activity from a tenant no organization names with 403, and stores nothing', async () => {
    const w = await start();
    const [installation] = w.connector.installActivities(mallory.id);
    const response = await w.post(installation);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toEqual({ status: 'error', details: 'This tenant is not served here' });
    expect(w.connector.callsTo('member')).toEqual([]);
    // Mallory's address is alice's: alice must not have become reachable through another tenant.
    expect((await w.send({ user_emails: ['alice@acme.test'], message: 'Hi' })).status).toBe(500);
  });

  it("does not link a member of another tenant found in this tenant's team, whose address is someone's here", async () => {
    const w = await start();
    // Mallory, of another tenant, is in a team of acme's tenant (an external member of a shared
    // channel) and her roster entry says alice@acme.test.
    const installation = w.connector.teamInstallActivity(bob.id, [mallory.id, carol.id]);
    expect((await w.post(installation)).status).toBe(200);
    const joined = {
      ...installation,
      id: 'f:joined-external',
      membersAdded: [
        { id: mallory.id, aadObjectId: mallory.aadObjectId },
        { id: carol.id, aadObjectId: carol.aadObjectId },
      ],
    };
    expect((await w.post(joined)).status).toBe(200);
    expect((await w.send({ user_emails: ['alice@acme.test'], message: 'Approve payroll?' })).status).toBe(
      500,
    );
    expect(w.connector.callsTo('create').map((call) => call.body)).toEqual([]);
    expect(w.logs.some((line) => line.startsWith('Teams user of another tenant: not linked'))).toBe(true);
    expect((await w.send({ user_emails: ['carol@acme.test'], message: 'Hi' })).status).toBe(200);
  });

  it("links the other members when one's roster entry cannot be read, and answers 200", async () => {
    const w = await start();
    const installation = w.connector.teamInstallActivity(bob.id, [carol.id]);
    expect((await w.post(installation)).status).toBe(200);
    const joined = {
      ...installation,
      id: 'f:joined-ghost',
      membersAdded: [{ id: '29:gone-again' }, { id: carol.id, aadObjectId: carol.aadObjectId }],
    };
    expect((await w.post(joined)).status).toBe(200);
    expect(w.logs.some((line) => line.startsWith('Teams member not in the roster: not linked'))).toBe(true);
    expect((await w.send({ user_emails: ['carol@acme.test'], message: 'Hi' })).status).toBe(200);
  });

  it('answers 200 to the app added to a team by someone not in its roster (an admin), linking nobody', async () => {
    const w = await start();
    const teamInstall = w.connector.teamInstallActivity(carol.id, []);
    const added = {
      ...teamInstall,
      id: 'f:installed-by-outsider',
      type: 'installationUpdate',
      action: 'add',
      membersAdded: undefined,
      from: { id: '29:admin-outside-the-team' },
    };
    expect((await w.post(added)).status).toBe(200);
    expect(w.logs.some((line) => line.startsWith('Teams member not in the roster: not linked'))).toBe(true);
  });

  it('refuses a click from another tenant on a message of this one', async () => {
    const w = await start();
    await w.install(bob);
    await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const forged = {
      ...invoke,
      channelData: { tenant: { id: otherTenant } },
      conversation: { ...(invoke.conversation as object), tenantId: otherTenant },
    };
    expect((await w.post(forged)).status).toBe(403);
    const disagreeing = { ...invoke, channelData: { tenant: { id: otherTenant } } };
    expect((await w.post(disagreeing)).status).toBe(403);
  });

  it('does not reach the users of an organization without a tenant', async () => {
    const w = await start();
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Hi' });
    expect(answer.status).toBe(500);
    const response = await w.notifier.handle({
      method: 'POST',
      url: '/api/notify',
      headers: { 'x-api-key': testKeys.gina, 'content-type': 'application/json' },
      body: [Buffer.from(JSON.stringify({ user_emails: ['gina@globex.test'], message: 'Hi' }))],
      clientAddress: '127.0.0.1',
    });
    expect(response?.status).toBe(500);
    expect(w.connector.calls).toEqual([]);
  });
});

describe('Teams transport: failures', () => {
  it('marks a user unreachable on 403 BotNotInConversationRoster, names them in the 500, and tries no more', async () => {
    const w = await start();
    await w.install(bob, carol);
    w.connector.block(bob.id);
    const answer = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(answer.json.details).not.toContain('carol@acme.test');
    expect(
      w.connector
        .callsTo('send')
        .map((call) => call.status)
        .sort(),
    ).toEqual([201, 403]);
    await w.send({ user_emails: ['bob@acme.test'], message: 'Again' });
    expect(w.connector.callsTo('send')).toHaveLength(2);
  });

  it('counts a user who removed the app as no Teams recipient: a send the inbox reached answers 200', async () => {
    const w = await start({ inbox: true });
    await w.install(bob);
    w.connector.block(bob.id);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(200);
    expect(w.logs.some((line) => line.startsWith('Teams user unreachable') && line.includes(bob.id))).toBe(
      true,
    );
    expect(w.logs.some((line) => line.startsWith('delivery failed'))).toBe(false);
    expect(w.connector.callsTo('send').map((call) => call.status)).toEqual([403]);
  });

  it('counts a user marked unreachable while their copy was on its way as no Teams recipient', async () => {
    const w = await start({ inbox: true });
    await w.install(bob);
    const state = w.storage.transportState;
    const read = state.get.bind(state);
    let memberReads = 0;
    state.get = async (key) => {
      if (key.includes('member:') && key.includes(bob.id)) {
        memberReads += 1;
        // Teams tells the app was removed after the address was found, before the copy is sent.
        if (memberReads === 2) expect((await w.post(w.connector.uninstallActivity(bob.id))).status).toBe(200);
      }
      return read(key);
    };
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(200);
    expect(memberReads).toBeGreaterThanOrEqual(2);
    expect(w.connector.callsTo('send')).toEqual([]);
    expect(w.logs.some((line) => line.startsWith('delivery failed'))).toBe(false);
  });

  it('fails only this delivery on a 403 that says nothing of removal (an app an admin disabled), and tries again next time', async () => {
    const w = await start();
    await w.install(bob);
    w.connector.inject('send', { status: 403, code: 'BotDisabledByAdmin' });
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(w.logs.some((line) => line.startsWith('Teams user unreachable'))).toBe(false);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Again' })).status).toBe(200);
    expect(w.connector.messagesOf(bob.id)).toHaveLength(1);
  });

  it('opens a new personal conversation when the kept one is gone (404), and posts there', async () => {
    const w = await start();
    await w.install(bob);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'First' })).status).toBe(200);
    const created = w.connector.callsTo('create').length;
    w.connector.inject('send', { status: 404, code: 'ConversationNotFound' });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Second' })).status).toBe(200);
    expect(w.connector.callsTo('create')).toHaveLength(created + 1);
    expect(w.connector.callsTo('send').map((call) => call.status)).toEqual([201, 404, 201]);
    expect(w.connector.messagesOf(bob.id).map((message) => message.text)).toEqual(['First', 'Second']);
    // The new conversation is kept: the next send opens none.
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Third' })).status).toBe(200);
    expect(w.connector.callsTo('create')).toHaveLength(created + 1);
  });

  it('marks a user who blocked the bot unreachable, as one who removed it', async () => {
    const w = await start();
    await w.install(bob);
    w.connector.inject('send', { status: 403, code: 'ConversationBlockedByUser' });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(500);
    expect(w.logs.some((line) => line.startsWith('Teams user unreachable') && line.includes(bob.id))).toBe(
      true,
    );
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Again' })).status).toBe(500);
    expect(w.connector.callsTo('send')).toHaveLength(1);
  });

  it('reaches a user marked unreachable again once they answer one of its cards (they unblocked it)', async () => {
    const w = await start();
    await w.install(bob);
    await w.ask(['bob@acme.test']);
    w.connector.inject('send', { status: 403, code: 'ConversationBlockedByUser' });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'While blocked' })).status).toBe(500);
    // Teams sends no activity when a user unblocks an app: their click on the earlier card is the sign.
    const [card] = w.connector.messagesOf(bob.id);
    if (!card) throw new Error('bob got no card');
    expect((await w.click(card, 'approve')).statusCode).toBe(200);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'After the unblock' })).status).toBe(200);
    expect(w.connector.messagesOf(bob.id).map((message) => message.text)).toContain('After the unblock');
  });

  it.each([
    [429, 0],
    [412, undefined],
    [502, undefined],
    [504, undefined],
  ])('retries a send answered %s, then delivers', async (status, retryAfterSeconds) => {
    const w = await start();
    await w.install(bob);
    w.connector.inject(
      'send',
      { status, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) },
      2,
    );
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(200);
    expect(w.connector.callsTo('send').map((call) => call.status)).toEqual([status, status, 201]);
    expect(w.connector.messagesOf(bob.id)).toHaveLength(1);
  });

  it('gives up after its retries, and does not retry a 500', async () => {
    const w = await start({ retries: 1 });
    await w.install(bob, carol);
    w.connector.inject(
      'send',
      { status: 429, retryAfterSeconds: 0 },
      2,
      w.connector.personalConversationOf(bob.id)!,
    );
    w.connector.inject('send', { status: 500 }, 1, w.connector.personalConversationOf(carol.id)!);
    const answer = await w.send({ user_emails: ['bob@acme.test', 'carol@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(answer.json.details).toContain('carol@acme.test');
    expect(w.connector.callsTo('send')).toHaveLength(3);
  });

  it('does not wait out a Retry-After longer than its longest pause', async () => {
    const w = await start();
    await w.install(bob);
    w.connector.inject('send', { status: 429, retryAfterSeconds: 3600 });
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(500);
    expect(w.connector.callsTo('send')).toHaveLength(1);
  });

  it('gives up on a Bot Connector that does not answer in time, without retrying', async () => {
    const w = await start({ requestTimeoutMs: 200 });
    await w.install(bob);
    w.connector.setLatency(1000);
    const answer = await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' });
    expect(answer.status).toBe(500);
    expect(answer.json.details).toContain('bob@acme.test');
    expect(w.connector.callsTo('send')).toHaveLength(1);
    expect(w.logs.some((line) => line.includes('took longer than 200 ms'))).toBe(true);
  });

  it("keeps a send to many people of one tenant within Teams' 30 calls a second per app and tenant", async () => {
    const w = await start();
    const many = fortyFiveUsersOf(w);
    await w.install(...many);
    const sent = await w.send({ user_emails: many.map((each) => each.email ?? ''), message: 'Release day' });
    expect(sent.status).toBe(200);
    const times = w.connector.callsTo('send').map((call) => call.at);
    expect(times).toHaveLength(45);
    // Every second holds at most 30 of them (a sliding window): the 31st starts a second after the
    // first, and arrives about then (the way from the pacer to the fake varies by a few milliseconds).
    for (let i = 30; i < times.length; i += 1) {
      expect((times[i] ?? 0) - (times[i - 30] ?? 0)).toBeGreaterThanOrEqual(900);
    }
  });

  it("reads the roster of a large team within Teams' 30 calls a second per app and tenant", async () => {
    const w = await start();
    const many = fortyFiveUsersOf(w);
    const installation = w.connector.teamInstallActivity(
      bob.id,
      many.map((each) => each.id),
    );
    expect((await w.post(installation)).status).toBe(200);
    // 45 people join the team at once: Teams names them all among the members added.
    const joined = {
      ...installation,
      id: 'f:joined',
      membersAdded: many.map((each) => ({ id: each.id, aadObjectId: each.aadObjectId })),
    };
    expect((await w.post(joined)).status).toBe(200);
    const times = w.connector.callsTo('member').map((call) => call.at);
    expect(times).toHaveLength(46);
    for (let i = 30; i < times.length; i += 1) {
      expect((times[i] ?? 0) - (times[i - 30] ?? 0)).toBeGreaterThanOrEqual(900);
    }
    const sent = await w.send({ user_emails: [many[44]?.email ?? ''], message: 'Linked' });
    expect(sent.status).toBe(200);
  });

  it('leaves a deleted message (404 on its update) alone: no refresh sends every card again for hours', async () => {
    const w = await start();
    await w.install(bob, carol, dave);
    await w.ask(['bob@acme.test', 'carol@acme.test', 'dave@acme.test']);
    const bobsChat = w.connector.personalConversationOf(bob.id);
    if (!bobsChat) throw new Error('bob has no personal conversation');
    w.connector.inject('update', { status: 404, code: 'ActivityNotFound' }, 100, bobsChat);
    await w.click(only(w, carol), 'approve', carol);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    // Two hours on, as long as the refreshes of a failed update would run.
    for (let step = 0; step < 12; step += 1) {
      w.clock.advance(10 * 60_000);
      await w.notifier.runDueWork();
    }
    const updatesOf = (user: typeof bob) =>
      w.connector
        .callsTo('update')
        .filter((call) => call.conversationId === w.connector.personalConversationOf(user.id)).length;
    // Carol's answer changes no other card; the timeout updates Bob's (tried twice: a 404 may pass)
    // and Dave's, none again.
    expect(updatesOf(bob)).toBe(2);
    expect(updatesOf(dave)).toBe(1);
    expect(only(w, dave)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(w.logs.some((line) => line.startsWith('Teams message gone: not updated'))).toBe(true);
    expect(w.logs.some((line) => line.includes('gave up updating'))).toBe(false);
  });

  it('tries an update answered 404 once more, as Teams has answered 404 for cards that exist', async () => {
    const w = await start();
    await w.install(bob);
    await w.ask(['bob@acme.test']);
    const bobsChat = w.connector.personalConversationOf(bob.id);
    if (!bobsChat) throw new Error('bob has no personal conversation');
    w.connector.inject('update', { status: 404, code: 'ActivityNotFound' }, 1, bobsChat);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(w.connector.callsTo('update').map((call) => call.status)).toEqual([404, 200]);
    expect(w.logs.some((line) => line.startsWith('Teams message gone'))).toBe(false);
  });

  it('marks a user unreachable when an update is refused with 403, and ends that message: no refresh', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    w.connector.block(bob.id);
    await w.click(only(w, carol), 'approve', carol);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(w.logs.some((line) => line.startsWith('Teams user unreachable') && line.includes(bob.id))).toBe(
      true,
    );
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    const toBob = w.connector
      .callsTo('update')
      .filter((call) => call.conversationId === w.connector.personalConversationOf(bob.id));
    expect(toBob.map((call) => call.status)).toEqual([403]);
    expect(w.logs.some((line) => line.startsWith('could not update a delivered message'))).toBe(false);
    expect((await w.send({ user_emails: ['bob@acme.test'], message: 'Hello' })).status).toBe(500);
  });
});

describe('Teams transport: updates', () => {
  it.each([
    ['delivered by this release', false],
    ['delivered by an earlier release', true],
  ])(
    'updates no message of a user who removed the app (%s), and the others as their requests change',
    async (_, legacy) => {
      const w = await start();
      await w.install(bob, carol);
      const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
      if (legacy) await asEarlierRelease(w, requestId);
      expect((await w.post(w.connector.uninstallActivity(bob.id))).status).toBe(200);
      await w.click(only(w, carol), 'approve', carol);
      w.clock.advance(60 * 60_000);
      await w.notifier.runDueWork();
      const updated = w.connector.callsTo('update').map((call) => call.conversationId);
      expect(updated.length).toBeGreaterThan(0);
      expect(
        updated.every((conversationId) => conversationId === w.connector.personalConversationOf(carol.id)),
      ).toBe(true);
      expect(w.logs.some((line) => line.startsWith('could not update a delivered message'))).toBe(false);
    },
  );
});

/**
 * Storage whose next write of a request, once `hold()` is called, waits until `release` lets it
 * run (`failure` absent) or fail with `failure`: a store slow to take a click.
 */
function heldRequestWrite() {
  let armed = false;
  let waiting = false;
  let release: (failure?: Error) => void = () => undefined;
  const wrapStorage = (storage: StoragePorts): StoragePorts => ({
    ...storage,
    requests: {
      ...storage.requests,
      updateRequest: (...args) => {
        if (!armed) return storage.requests.updateRequest(...args);
        armed = false;
        waiting = true;
        return new Promise((resolve, reject) => {
          release = (failure) => {
            if (failure) reject(failure);
            else storage.requests.updateRequest(...args).then(resolve, reject);
          };
        });
      },
    },
  });
  return {
    wrapStorage,
    hold: () => {
      armed = true;
    },
    /** Resolves once the held write has begun. */
    started: () => vi.waitFor(() => expect(waiting).toBe(true)),
    release: (failure?: Error) => release(failure),
  };
}

/** Bob asked (his answer may change), on storage whose next request write can be held; his click. */
async function bobAskedWithHeldWrite() {
  const write = heldRequestWrite();
  const w = await start({ wrapStorage: write.wrapStorage });
  await w.install(bob);
  const requestId = await w.ask(['bob@acme.test'], { disable: 'onTimeout' });
  const message = only(w, bob);
  const invoke = w.connector.clickActivity(message, 'approve', bob.id, 'invoke-42');
  return { write, w, requestId, message, invoke };
}

describe('Teams transport: clicks', () => {
  it('takes a repeat of an invoke whose click the storage failed, once the storage is back, even when it could not take its mark back', async () => {
    let failing = false;
    const down = () => Promise.reject(new Error('storage unreachable'));
    const w = await start({
      wrapStorage: (storage: StoragePorts): StoragePorts => ({
        ...storage,
        requests: {
          ...storage.requests,
          updateRequest: (...args) => (failing ? down() : storage.requests.updateRequest(...args)),
        },
        transportState: {
          ...storage.transportState,
          // The mark is set; taking it back fails with the rest.
          compareAndSet: (key, value, ...rest) =>
            failing && value === 'free' ? down() : storage.transportState.compareAndSet(key, value, ...rest),
        },
      }),
    });
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve', bob.id, 'invoke-42');
    failing = true;
    await expect(w.post(invoke)).rejects.toThrow('storage unreachable');
    failing = false;
    // A repeat while the failed attempt's mark lives waits for it, then fails for Teams to try again:
    // answered as taken, the click would be lost.
    await expect(w.post(invoke)).rejects.toThrow(
      'This click is being applied by an earlier attempt; try again',
    );
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
    w.clock.advance(15_000);
    const repeat = await w.post(invoke);
    expect(repeat.status).toBe(200);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    // Taken now: a later repeat changes nothing, however late within the hour.
    w.clock.advance(30 * 60_000);
    const updates = w.connector.callsTo('update').length;
    await w.post(invoke);
    expect(w.logs.filter((line) => line.startsWith('Teams repeated an invoke already taken'))).toHaveLength(
      1,
    );
    expect(w.connector.callsTo('update')).toHaveLength(updates);
  }, 15_000);

  it('keeps the invoke taken by a repeat when the first attempt, outlived by its mark, fails after it', async () => {
    const { write, w, requestId, message, invoke } = await bobAskedWithHeldWrite();
    write.hold();
    const first = w.post(invoke).catch((error: Error) => error.message);
    await write.started();
    w.clock.advance(15_001);
    // Teams' repeat, to another instance, once the first attempt's mark expired: applied there.
    expect((await w.another().post(invoke)).status).toBe(200);
    write.release(new Error('storage timed out'));
    expect(await first).toBe('storage timed out');
    // The user changes the answer; a late repeat of the first click must not bring it back.
    expect((await w.post(w.connector.clickActivity(message, 'reject', bob.id, 'invoke-43'))).status).toBe(
      200,
    );
    await w.another().post(invoke);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
  });

  it('marks an invoke taken when its attempt outlived its mark, so that a late repeat changes nothing', async () => {
    const { write, w, requestId, message, invoke } = await bobAskedWithHeldWrite();
    write.hold();
    const first = w.post(invoke);
    await write.started();
    // The click's write is slow: the mark of its attempt expires, and nobody takes the invoke.
    w.clock.advance(15_001);
    write.release();
    expect((await first).status).toBe(200);
    expect((await w.post(w.connector.clickActivity(message, 'reject', bob.id, 'invoke-43'))).status).toBe(
      200,
    );
    await w.another().post(invoke);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
  });

  it('claims only the very mark a repeat found free: not one another repeat took since', async () => {
    let failOnce = false;
    let afterFreeRead: (() => Promise<void>) | null = null;
    const w = await start({
      wrapStorage: (storage: StoragePorts): StoragePorts => ({
        ...storage,
        requests: {
          ...storage.requests,
          updateRequest: (...args) => {
            if (!failOnce) return storage.requests.updateRequest(...args);
            failOnce = false;
            return Promise.reject(new Error('storage timed out'));
          },
        },
        transportState: {
          ...storage.transportState,
          get: async (key) => {
            const record = await storage.transportState.get(key);
            // A repeat has found the mark free: another repeat gets to claim it first.
            if (afterFreeRead !== null && record?.value === 'free') {
              const run = afterFreeRead;
              afterFreeRead = null;
              await run();
            }
            return record;
          },
        },
      }),
    });
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test'], { disable: 'onTimeout' });
    const message = only(w, bob);
    const invoke = w.connector.clickActivity(message, 'approve', bob.id, 'invoke-42');
    failOnce = true;
    // The first attempt fails and frees its mark.
    await expect(w.post(invoke)).rejects.toThrow('storage timed out');
    afterFreeRead = async () => {
      // Another instance's repeat takes the invoke; then the user changes the answer.
      expect((await w.another().post(invoke)).status).toBe(200);
      expect((await w.post(w.connector.clickActivity(message, 'reject', bob.id, 'invoke-43'))).status).toBe(
        200,
      );
    };
    await expect(w.post(invoke)).rejects.toThrow(
      'This click is being applied by an earlier attempt; try again',
    );
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
  });

  it('updates a message at the service URL its last click named, not the one of the install', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test'], { disable: 'onTimeout' });
    // Teams moved the tenant: bob's click names another region, with a token for it.
    const moved = w.connector.serviceUrl.replace('/amer/', '/emea/');
    const invoke = { ...w.connector.clickActivity(only(w, bob), 'approve'), serviceUrl: moved };
    expect((await w.post(invoke, moved)).status).toBe(200);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    const regionsOf = (user: { id: string }) =>
      w.connector
        .callsTo('update')
        .filter((call) => call.conversationId === w.connector.personalConversationOf(user.id))
        .map((call) => call.region);
    expect(regionsOf(bob)).toEqual(['emea']);
    expect(regionsOf(carol)).toEqual(['amer']);
  });

  it('answers a click with the answered card, which replaces the clicked card, and stores the answer', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const answer = await w.click(only(w, bob), 'approve');
    expect(answer.statusCode).toBe(200);
    expect(answer.type).toBe('application/vnd.microsoft.card.adaptive');
    expect(answer.value.actions).toBeUndefined();
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('You answered “Approve”'),
    });
    // The invoke's answer replaced the card: no update was sent for it.
    expect(w.connector.callsTo('update')).toEqual([]);
  });

  it('changes nothing on a double click: the first answer stays, and the card is answered again', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const message = only(w, bob);
    await w.click(message, 'approve');
    const second = await w.click(message, 'reject');
    expect(second.statusCode).toBe(200);
    expect(JSON.stringify(second.value)).toContain('You answered “Approve”');
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
  });

  it("ignores Teams' repeat of an invoke it already took", async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test'], { disable: 'onTimeout' });
    const message = only(w, bob);
    await w.click(message, 'approve', bob, 'invoke-1');
    await w.click(message, 'reject', bob, 'invoke-2');
    const repeat = await w.click(message, 'approve', bob, 'invoke-1');
    expect(repeat.statusCode).toBe(200);
    expect(JSON.stringify(repeat.value)).toContain('Your answer: “Reject”');
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
  });

  it('refuses a click by someone other than the recipient, and changes nothing', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const answer = await w.click(only(w, bob), 'approve', carol);
    expect(answer).toMatchObject({ statusCode: 403, type: 'application/vnd.microsoft.error' });
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
    expect(await w.answerOf(requestId, 'carol@acme.test')).toBeNull();
    expect(only(w, bob).buttons).toEqual(options);
  });

  it('refuses a click by the recipient id with another Entra object id', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const forged = { ...invoke, from: { ...(invoke.from as object), aadObjectId: 'aad-someone-else' } };
    const answer = JSON.parse((await w.post(forged)).body) as InvokeAnswer;
    expect(answer.statusCode).toBe(403);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
  });

  it("takes a click whose Entra object id is the recipient's in other letter case (a GUID)", async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const from = invoke.from as { aadObjectId: string };
    const upper = { ...invoke, from: { ...from, aadObjectId: from.aadObjectId.toUpperCase() } };
    expect(from.aadObjectId).not.toBe(from.aadObjectId.toUpperCase());
    const answer = JSON.parse((await w.post(upper)).body) as InvokeAnswer;
    expect(answer.statusCode).toBe(200);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
  });

  it('refuses a button that names another request, an unknown message, a value that is no option, and other verbs', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const value = invoke.value as { action: { data: Record<string, string>; verb: string } };
    const withData = (data: Record<string, string>, verb = value.action.verb) => ({
      ...invoke,
      value: { ...value, action: { ...value.action, verb, data } },
    });
    const statusOf = async (activity: unknown) =>
      (JSON.parse((await w.post(activity)).body) as InvokeAnswer).statusCode;
    // A message is found among the copies of the request its button names: none of another.
    expect(await statusOf(withData({ requestId: 'req_000000000000000000000000', value: 'approve' }))).toBe(
      404,
    );
    expect(await statusOf({ ...invoke, replyToId: '1:unknown' })).toBe(404);
    expect(await statusOf(withData({ requestId, value: 'maybe' }))).toBe(400);
    expect(await statusOf(withData({ requestId, value: 'approve' }, 'something.else'))).toBe(400);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
  });

  it.each([
    ['delivered now', false],
    ['of an earlier release', true],
  ])(
    'refuses a click on a message %s whose button names another request of its recipient, and changes neither',
    async (_, legacy) => {
      const w = await start();
      await w.install(bob, carol);
      const other = await w.ask(['bob@acme.test', 'carol@acme.test']);
      const own = await w.ask(['bob@acme.test']);
      if (legacy) await asEarlierRelease(w, own);
      const [, message] = w.connector.messagesOf(bob.id);
      if (!message) throw new Error('no second message');
      const invoke = w.connector.clickActivity(message, 'approve');
      const value = invoke.value as { action: { data: Record<string, string> } };
      const forged = {
        ...invoke,
        value: { ...value, action: { ...value.action, data: { ...value.action.data, requestId: other } } },
      };
      const answer = JSON.parse((await w.post(forged)).body) as InvokeAnswer;
      expect(answer.statusCode).toBe(404);
      expect(await w.answerOf(own, 'bob@acme.test')).toBeNull();
      expect(await w.answerOf(other, 'bob@acme.test')).toBeNull();
    },
  );

  it("forgets a message once the notifier's retention has passed after its request finished", async () => {
    const day = 24 * 60 * 60_000;
    const w = await start({ retention: day });
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    const open = only(w, bob);
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    w.clock.advance(day - 60_000);
    expect((await w.click(open, 'approve')).statusCode).toBe(200);
    w.clock.advance(2 * 60_000);
    expect((await w.click(open, 'approve')).statusCode).toBe(404);
  });

  it('answers 501 to other invokes, and 200 to activities it has nothing to do with', async () => {
    const w = await start();
    await w.install(bob);
    const [installation] = w.connector.installActivities(bob.id);
    expect((await w.post({ ...installation, type: 'invoke', name: 'composeExtension/query' })).status).toBe(
      501,
    );
    expect((await w.post({ ...installation, type: 'message', text: 'hi' })).status).toBe(200);
  });

  it('updates every other copy with updateActivity at expiry', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, bob), 'approve');
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(only(w, carol)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('Closed. Your answer: “Approve”'),
    });
    expect(
      w.connector
        .callsTo('update')
        .map((call) => call.conversationId)
        .sort(),
    ).toEqual(
      [w.connector.personalConversationOf(bob.id), w.connector.personalConversationOf(carol.id)].sort(),
    );
  });
});
