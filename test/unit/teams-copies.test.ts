import { describe, expect, it, vi } from 'vitest';
import type { DeliveryStore } from '../../core/ports/delivery-store.js';
import { requestView } from '../../core/request/message-view.js';
import {
  acmeTenant,
  asEarlierRelease,
  bob,
  bobsCopy,
  carol,
  type InvokeAnswer,
  keyOf,
  only,
  teamsWorlds,
} from '../support/teams-world.js';

const start = teamsWorlds();

/** `deliveries`, whose listing of a send's copies first waits `delayMs()`, when that is not 0. */
const slowListing = (deliveries: DeliveryStore, delayMs: () => number): DeliveryStore =>
  new Proxy(deliveries, {
    get(target, name) {
      if (name === 'listDeliveries') {
        return async (sendId: string) => {
          const ms = delayMs();
          if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
          return target.listDeliveries(sendId);
        };
      }
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

describe('Teams transport: what it keeps of delivered messages', () => {
  it('throws when its view reached Teams after a newer one, and the newer view tried again is shown', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const [copy] = await w.storage.deliveries.listDeliveries(requestId);
    const request = await w.storage.requests.getRequest(requestId);
    if (!copy || !request) throw new Error('no copy delivered');
    const organization = { id: 'acme', name: 'Acme Inc' };
    const update = (version: number, status: 'pending' | 'finished') =>
      w.transport.update(
        {
          organization,
          recipient: 'bob@acme.test',
          message: requestView({ ...request, version, status, finishedAt: 0 }, 'bob@acme.test'),
        },
        copy.ref,
      );
    const release = w.connector.hold('update');
    const late = update(request.version + 1, 'pending');
    await vi.waitFor(() => expect(w.connector.callsTo('update')).toHaveLength(1));
    await update(request.version + 2, 'finished');
    expect(only(w, bob).buttons).toEqual([]);
    release();
    await expect(late).rejects.toThrow(/a newer view was claimed/);
    // The older view landed last: Teams shows it until the core's refresh sends the current view.
    expect(only(w, bob).buttons).toHaveLength(2);
    await update(request.version + 2, 'finished');
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/), updates: 3 });
  });

  /**
   * Bob's click on a value that is no option, refused, while the request expires: the update of his
   * copy is left to the click's answer, which then carries no card.
   */
  const refusedWhileExpiring = async (failedUpdates = 0) => {
    let meanwhile = async () => {};
    const w = await start({ afterClick: () => meanwhile() });
    await w.install(bob);
    await w.ask(['bob@acme.test']);
    meanwhile = async () => {
      w.clock.advance(60 * 60_000);
      await w.notifier.runDueWork();
    };
    if (failedUpdates > 0) w.connector.inject('update', { status: 500 }, failedUpdates);
    const invoke = w.connector.clickActivity(only(w, bob), 'approve');
    const value = invoke.value as { action: { data: Record<string, string> } };
    const noOption = {
      ...invoke,
      value: { ...value, action: { ...value.action, data: { ...value.action.data, value: 'maybe' } } },
    };
    expect((JSON.parse((await w.post(noOption)).body) as InvokeAnswer).statusCode).toBe(400);
    return w;
  };
  const expired = { buttons: [], footer: expect.stringMatching(/expired/), updates: 1 };

  it('shows an update left to the answer of a click that is then refused', async () => {
    const w = await refusedWhileExpiring();
    await vi.waitFor(() => expect(only(w, bob)).toMatchObject(expired));
  });

  it('tries that update again when it fails', async () => {
    const w = await refusedWhileExpiring(2);
    await vi.waitFor(() => expect(only(w, bob)).toMatchObject(expired), { timeout: 3_000 });
  });

  it('says so in the log when that update cannot be made', async () => {
    const never = await refusedWhileExpiring(3);
    await vi.waitFor(
      () =>
        expect(never.logs.join('\n')).toContain('left behind by the answer of a click could not be updated'),
      { timeout: 3_000 },
    );
    expect(only(never, bob).buttons).toHaveLength(2);
    expect(never.connector.callsTo('update')).toHaveLength(3);
  });

  it('shows an update left to the answer of a click whose answer failed', async () => {
    let meanwhile = async () => {};
    const w = await start({ afterClick: () => meanwhile() });
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    meanwhile = async () => {
      throw new Error('the store went away');
    };
    // Outside the tests, the handler answers such a failure 500 in the error shape.
    await expect(w.post(w.connector.clickActivity(only(w, bob), 'approve'))).rejects.toThrow(
      'the store went away',
    );
    // The click was stored before the failure: Bob's copy shows his answer all the same.
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    await vi.waitFor(() =>
      expect(only(w, bob)).toMatchObject({
        buttons: [],
        footer: expect.stringContaining('Closed. Your answer: “Approve”'),
        updates: 1,
      }),
    );
  });

  it.each([
    ['on this instance, while the answer was under way', false],
    ['on another instance', true],
  ])(
    'shows a card newer than the one a click was answered with, sent %s, once Teams applied the answer',
    async (_, elsewhere) => {
      let meanwhile = async () => {};
      const w = await start({ afterView: () => meanwhile() });
      await w.install(bob, carol);
      await w.ask(['bob@acme.test', 'carol@acme.test']);
      const expiring = elsewhere ? w.another().notifier : w.notifier;
      // The request expires right after the view that answers Bob's click was read.
      meanwhile = async () => {
        meanwhile = async () => {};
        w.clock.advance(60 * 60_000);
        await expiring.runDueWork();
      };
      await w.click(only(w, bob), 'approve');
      expect(only(w, bob).footer).toContain('You answered “Approve”');
      expect(only(w, carol)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
      // What the transport still has to do runs once it closes, instead of 1.5 s after the answer.
      await w.transport.close?.();
      expect(only(w, bob).footer).toContain('Closed. Your answer: “Approve”');
    },
  );

  it('sends no card again after a click whose answer carried the newest one', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, bob), 'approve');
    await w.transport.close?.();
    expect(w.connector.callsTo('update')).toEqual([]);
    expect(only(w, bob).footer).toContain('You answered “Approve”');
  });

  it.each([
    ['in looking the click up', 0, 4_100],
    ['in checking its tenant and looking it up, neither four seconds alone', 2_100, 2_100],
  ])(
    'sends the card again after a click answered so late that Teams may have stopped waiting (five seconds): %s',
    async (_where, checkDelayMs, listingDelayMs) => {
      let checkMs = 0;
      let listingMs = 0;
      const w = await start({
        beforeTenantCheck: () => new Promise((resolve) => setTimeout(resolve, checkMs)),
        wrapStorage: (storage) => ({
          ...storage,
          deliveries: slowListing(storage.deliveries, () => listingMs),
        }),
      });
      await w.install(bob);
      await w.ask(['bob@acme.test']);
      const message = only(w, bob);
      // Teams gave up on the answer: its card never replaced the clicked one.
      checkMs = checkDelayMs;
      listingMs = listingDelayMs;
      const answer = JSON.parse(
        (await w.post(w.connector.clickActivity(message, 'approve'))).body,
      ) as InvokeAnswer;
      checkMs = 0;
      listingMs = 0;
      expect(answer.statusCode).toBe(200);
      expect(only(w, bob).buttons).not.toEqual([]);
      await w.transport.close?.();
      expect(w.connector.callsTo('update')).toHaveLength(1);
      expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringContaining('“Approve”') });
    },
    15_000,
  );

  it("answers the click that finishes a request while the other recipients' cards are still being updated", async () => {
    let listingMs = 0;
    // Copies are listed slowly: the core's update of Bob's copy comes once his click was answered.
    const w = await start({
      wrapStorage: (storage) => ({
        ...storage,
        deliveries: slowListing(storage.deliveries, () => listingMs),
      }),
    });
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, carol), 'approve');
    // Her answer's check, 1.5 s on, runs now: it has nothing to send.
    await w.transport.close?.();
    const carolsCard = only(w, carol).footer;
    listingMs = 200;
    const release = w.connector.hold('update');
    const answer = await Promise.race([
      w.click(only(w, bob), 'reject'),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000)),
    ]);
    expect(answer?.statusCode).toBe(200);
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringContaining('“Reject”') });
    // The update of Carol's card is received and held; the answer did not wait for it.
    await vi.waitFor(() => expect(w.connector.callsTo('update')).toHaveLength(1));
    expect(only(w, carol).footer).toBe(carolsCard);
    release();
    await vi.waitFor(() => expect(only(w, carol).footer).not.toBe(carolsCard));
    await w.transport.close?.();
    // Bob's card came with the answer alone: the core's update of it, made after, sent nothing.
    expect(w.connector.callsTo('update').map((call) => call.conversationId)).toEqual([
      w.connector.personalConversationOf(carol.id),
    ]);
  });

  it('shows the current card when Teams applied the answers of two clicks on a copy in the wrong order', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test'], { disable: 'onTimeout' });
    const message = only(w, bob);
    const answerTo = async (value: string, invokeId: string) =>
      JSON.parse(
        (await w.post(w.connector.clickActivity(message, value, bob.id, invokeId))).body,
      ) as InvokeAnswer;
    // Bob changes his answer before Teams applied the first one's card, and Teams applies the two
    // answers in the opposite order: the card says Approve.
    const approve = await answerTo('approve', 'invoke-1');
    const reject = await answerTo('reject', 'invoke-2');
    w.connector.receiveInvokeAnswer(message, reject);
    w.connector.receiveInvokeAnswer(message, approve);
    expect(only(w, bob).footer).toContain('“Approve”');
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('reject');
    // The checks of both answers run: the first finds a newer card recorded, and sends it.
    await w.transport.close?.();
    expect(w.connector.callsTo('update')).toHaveLength(1);
    expect(only(w, bob).footer).toContain('“Reject”');
  });

  it('answers a second click on the card whose first click finished the request without waiting for the other cards', async () => {
    const w = await start();
    await w.install(bob, carol);
    await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, carol), 'approve');
    await w.transport.close?.();
    const release = w.connector.hold('update');
    const message = only(w, bob);
    // Two invokes before the first answer replaced the card: the second finds the request finished.
    const answers = Promise.all([w.click(message, 'reject'), w.click(message, 'reject')]);
    const answered = await Promise.race([
      answers,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000)),
    ]);
    expect(answered?.map((answer) => answer.statusCode)).toEqual([200, 200]);
    // Carol's update is received, and not yet answered.
    await vi.waitFor(() => expect(w.connector.callsTo('update').map((call) => call.status)).toEqual([0]));
    release();
    await w.transport.close?.();
  });

  it('keeps no record of an interactive message it delivers: its ref names the view and who may click', async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    const { copy, conversationId, activityId } = await bobsCopy(w, requestId);
    const request = await w.storage.requests.getRequest(requestId);
    expect(copy.ref).toEqual({
      conversationId: w.connector.personalConversationOf(bob.id),
      activityId: expect.any(String),
      v: String(request?.version),
      t: acmeTenant,
      u: bob.id,
    });
    expect(await w.storage.transportState.get(keyOf('copy', conversationId, activityId))).toBeNull();
    expect(await w.storage.transportState.get(keyOf('shown', conversationId, activityId))).toBeNull();
  });

  it('keeps the version of the newest card once the message changed, until the retention has passed after its last write, plus a day', async () => {
    const day = 24 * 60 * 60_000;
    const w = await start({ retention: day });
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    await w.click(only(w, bob), 'approve');
    const { conversationId, activityId } = await bobsCopy(w, requestId);
    const shown = () => w.storage.transportState.get(keyOf('shown', conversationId, activityId));
    expect((await shown())?.value).toBe(String((await w.storage.requests.getRequest(requestId))?.version));
    // The timeout finishes the request: its card is the last change of the message.
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect((await shown())?.value).toBe(String((await w.storage.requests.getRequest(requestId))?.version));
    w.clock.advance(2 * day - 60_000);
    expect(await shown()).not.toBeNull();
    w.clock.advance(2 * 60_000);
    expect(await shown()).toBeNull();
  });

  it('answers and applies a click on a message of an earlier release by the record that release kept, and updates it by that record', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const { activityId } = await bobsCopy(w, requestId);
    // The record names another region than Bob's link: it, not the link, says where to update.
    const key = await asEarlierRelease(w, requestId, w.connector.serviceUrl.replace('/amer/', '/emea/'));

    expect((await w.click(only(w, bob), 'approve', carol)).statusCode).toBe(403);
    const answer = await w.click(only(w, bob), 'approve');
    expect(answer.statusCode).toBe(200);
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    const kept = JSON.parse((await w.storage.transportState.get(key))?.value ?? '{}') as {
      lastVersion: number;
      card: unknown;
    };
    expect(kept.lastVersion).toBe((await w.storage.requests.getRequest(requestId))?.version);
    // Instances of the earlier release answer clicks with the card in the record: it is kept current.
    expect(kept.card).toEqual(answer.value);

    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringContaining('Closed') });
    expect(
      w.connector
        .callsTo('update')
        .filter((call) => call.activityId === activityId)
        .map((call) => call.region),
    ).toEqual(['emea']);
  });

  it("updates a message through its recipient's current service URL", async () => {
    const w = await start();
    await w.install(bob);
    const requestId = await w.ask(['bob@acme.test']);
    // Teams moved the tenant: the next activity of Bob (his install, again) names another region.
    const moved = w.connector.serviceUrl.replace('/amer/', '/emea/');
    for (const activity of w.connector.installActivities(bob.id)) {
      expect((await w.post({ ...activity, serviceUrl: moved }, moved)).status).toBe(200);
    }
    w.clock.advance(60 * 60_000);
    await w.notifier.runDueWork();
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBeNull();
    expect(w.connector.callsTo('update').map((call) => call.region)).toEqual(['emea']);
    expect(only(w, bob)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
  });

  it('answers and applies a click on another instance than the one that delivered, whose expiry updates every copy', async () => {
    const w = await start();
    await w.install(bob, carol);
    const requestId = await w.ask(['bob@acme.test', 'carol@acme.test']);
    const other = w.another();
    const response = await other.post(w.connector.clickActivity(only(w, bob), 'approve'));
    const answer = JSON.parse(response.body) as InvokeAnswer;
    expect(answer.statusCode).toBe(200);
    w.connector.receiveInvokeAnswer(only(w, bob), answer);
    expect(only(w, bob)).toMatchObject({
      buttons: [],
      footer: expect.stringContaining('You answered “Approve”'),
    });
    expect(await w.answerOf(requestId, 'bob@acme.test')).toBe('approve');
    // Refused there as here: the ref says whose the message is.
    const refused = await other.post(w.connector.clickActivity(only(w, carol), 'approve', bob.id));
    expect((JSON.parse(refused.body) as InvokeAnswer).statusCode).toBe(403);
    w.clock.advance(60 * 60_000);
    await other.notifier.runDueWork();
    expect(only(w, carol)).toMatchObject({ buttons: [], footer: expect.stringMatching(/expired/) });
    expect(only(w, bob)).toMatchObject({ footer: expect.stringContaining('Closed. Your answer: “Approve”') });
  });
});
