import { describe, expect, it } from 'vitest';
import { passwordSignIn } from '../../account/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState } from '../../core/adapter-kit.js';
import { createNotifier, type Seed, silentLogger } from '../../core/index.js';
import { loadPasswords } from '../../examples/standalone/account-sign-in.js';

type SeedUser = Seed['organizations'][number]['users'][number];

const seedOf = (users: SeedUser[]): Seed => ({ organizations: [{ id: 'acme', name: 'Acme', users }] });
const alice: SeedUser = { email: 'alice@acme.test', name: 'Alice', role: 'admin', password: 'alice-pw' };
const bob: SeedUser = { email: 'bob@acme.test', name: 'Bob', role: 'member', password: 'bob-pw' };

/**
 * Starts of the standalone service on one store (memory standing in for Redis or MongoDB, which
 * outlive a restart): each loads its seed and the passwords in it, as `examples/standalone/app.ts`.
 */
function sharedStore() {
  const storage = memoryStorage();
  const state = scopedTransportState(storage.transportState, 'account');
  return async (seed: Seed) => {
    const notifier = createNotifier({ storage, transports: [inboxTransport()] });
    await notifier.seed(seed);
    const signIn = passwordSignIn({ state });
    const signIns = await loadPasswords(signIn, storage.directory, seed, silentLogger);
    const session = async (email: string, password: string) => {
      const result = await signIn.signIn(email, password, '192.0.2.1');
      return result.outcome === 'signed-in' ? result.sessionId : null;
    };
    const userOf = async (sessionId: string) =>
      signIn.resolveUser({
        method: 'GET',
        path: '/account',
        headers: {},
        cookies: { [signIn.cookieName]: sessionId },
        clientAddress: '192.0.2.1',
      });
    return { signIns, session, userOf, stop: () => notifier.stop() };
  };
}

describe('the standalone service’s sign-ins across starts on one store', () => {
  it('keeps sessions over a restart with the same seed', async () => {
    const start = sharedStore();
    const first = await start(seedOf([alice, bob]));
    const session = await first.session('bob@acme.test', 'bob-pw');
    await first.stop();
    const second = await start(seedOf([alice, bob]));
    expect(second.signIns).toBe(2);
    expect(await second.userOf(session ?? '')).toMatchObject({ email: 'bob@acme.test', admin: false });
    await second.stop();
  });

  it.each([
    ['takes the password out of the seed', seedOf([alice, { ...bob, password: undefined }])],
    ['takes the user out of the seed', seedOf([alice])],
  ])('takes a sign-in away when a start %s, sessions included', async (_change, seed) => {
    const start = sharedStore();
    const first = await start(seedOf([alice, bob]));
    const session = await first.session('bob@acme.test', 'bob-pw');
    expect(session).not.toBeNull();
    await first.stop();
    const second = await start(seed);
    expect(second.signIns).toBe(1);
    expect(await second.userOf(session ?? '')).toBeNull();
    expect(await second.session('bob@acme.test', 'bob-pw')).toBeNull();
    expect(await second.session('alice@acme.test', 'alice-pw')).not.toBeNull();
    await second.stop();
  });

  it('ends the sessions of an admin demoted by the seed; the next sign-in is a member’s', async () => {
    const start = sharedStore();
    const first = await start(seedOf([alice, bob]));
    const session = await first.session('alice@acme.test', 'alice-pw');
    expect(await first.userOf(session ?? '')).toMatchObject({ admin: true });
    await first.stop();
    const second = await start(seedOf([{ ...alice, role: 'member' }, bob]));
    expect(await second.userOf(session ?? '')).toBeNull();
    const again = await second.session('alice@acme.test', 'alice-pw');
    expect(await second.userOf(again ?? '')).toMatchObject({ email: 'alice@acme.test', admin: false });
    await second.stop();
  });
});
