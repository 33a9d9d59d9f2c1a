import { afterEach, describe, expect, it } from 'vitest';
import {
  click,
  createRequest,
  expectError,
  expectOk,
  generousLimits,
  inbox,
  interactiveBody,
  onlyMessage,
  plainBody,
  readStatus,
  send,
} from './client.js';
import { hostKinds, startTestHost, type TestHost } from './harness.js';

const minute = 60_000;
const day = 24 * 60 * minute;

describe.each(hostKinds)('retention of finished sends (%s)', (kind) => {
  let host: TestHost;
  const start = async (retention: number | { days: number }): Promise<TestHost> => {
    host = await startTestHost(kind, { rateLimits: generousLimits, retention });
    return host;
  };
  afterEach(async () => {
    await host.close();
  });

  it('answers 404 Request not found once the retention has passed since the request finished', async () => {
    await start({ days: 2 });
    const id = await createRequest(host, interactiveBody());
    const message = await onlyMessage(host, 'bob@acme.test');
    expect((await click(host, message.id, 'approve')).status).toBe(200);
    expect(expectOk(await readStatus(host, id))).toMatchObject({ status: 'finished' });

    host.clock.advance(2 * day - 1);
    expect(expectOk(await readStatus(host, id))).toMatchObject({ status: 'finished' });
    expect(await inbox(host, 'bob@acme.test')).toHaveLength(1);

    host.clock.advance(1);
    expectError(await readStatus(host, id), 404, 'Request not found');
    expect(await inbox(host, 'bob@acme.test')).toEqual([]);
  });

  it('keeps a pending request past the retention; the retention counts from its timeout', async () => {
    await start(10 * minute);
    const id = await createRequest(host, interactiveBody({}, { timeout_minutes: 30 }));
    host.clock.advance(20 * minute);
    expect(expectOk(await readStatus(host, id))).toMatchObject({ status: 'pending' });
    host.clock.advance(10 * minute);
    expect(await host.runDueWork()).toBe(1);
    host.clock.advance(10 * minute - 1);
    expect(expectOk(await readStatus(host, id))).toMatchObject({ status: 'finished' });
    host.clock.advance(1);
    expectError(await readStatus(host, id), 404, 'Request not found');
  });

  it("keeps a pending request's inbox copy past a shorter retention, then a retention after its timeout", async () => {
    await start(10 * minute);
    await createRequest(
      host,
      interactiveBody({ user_emails: ['bob@acme.test', 'carol@acme.test'] }, { timeout_minutes: 30 }),
    );
    host.clock.advance(20 * minute);
    // Twice the retention after delivery, the request is still open: its copy is there, buttons and all.
    expect(await onlyMessage(host, 'bob@acme.test')).toMatchObject({
      buttons: [{ disabled: false }, { disabled: false }],
    });
    expect((await click(host, (await onlyMessage(host, 'carol@acme.test')).id, 'approve')).status).toBe(200);
    host.clock.advance(10 * minute);
    expect(await host.runDueWork()).toBe(1);
    host.clock.advance(10 * minute - 1);
    expect((await onlyMessage(host, 'bob@acme.test')).footer).toMatch(/^This request expired/);
    expect(await onlyMessage(host, 'carol@acme.test')).toMatchObject({ selected: 'approve' });
    host.clock.advance(1);
    expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    expect(await inbox(host, 'carol@acme.test')).toEqual([]);
  });

  it('lists an inbox copy of a day-long request until a retention after its timeout, wherever its delivery falls', async () => {
    await start({ days: 2 });
    // Deliveries three quarters into a period of the retention's length were listed for 2.5 days
    // only, though they live 3: those the listing of the previous period no longer reached. Open
    // copies are now listed by periods of the retention, the day and a minute: the last
    // millisecond of one of those is the latest a delivery can fall in its list.
    const listed = 3 * day + minute;
    const fractions = [0, 0.25, 0.75, 0.999];
    const deliveries: [period: number, fraction: number][] = [
      ...fractions.map((f): [number, number] => [2 * day, f]),
      ...[...fractions, 1 - 1 / listed].map((f): [number, number] => [listed, f]),
    ];
    for (const [period, fraction] of deliveries) {
      host.clock.set((Math.ceil(host.clock.now() / period) + fraction) * period);
      await createRequest(host, interactiveBody({}, { timeout_minutes: 1440 }));
      host.clock.advance(day);
      expect(await host.runDueWork()).toBe(1);
      host.clock.advance(2 * day - 1);
      expect((await onlyMessage(host, 'bob@acme.test')).footer).toMatch(/^This request expired/);
      host.clock.advance(1);
      expect(await inbox(host, 'bob@acme.test')).toEqual([]);
    }
  });

  it('forgets the inbox copy of a fire-and-forget send once the retention has passed since it was sent', async () => {
    await start({ days: 2 });
    expectOk(await send(host, plainBody({ user_emails: ['carol@acme.test'] })));
    host.clock.advance(2 * day - 1);
    expect(await inbox(host, 'carol@acme.test')).toHaveLength(1);
    host.clock.advance(1);
    expect(await inbox(host, 'carol@acme.test')).toEqual([]);
  });
});
