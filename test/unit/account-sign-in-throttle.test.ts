import { describe, expect, it } from 'vitest';
import { passwordSignIn } from '../../account/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState } from '../../core/transport-state/scoped-state.js';
import { manualClock } from '../support/manual-clock.js';

const user = (name: string) => ({
  userId: `usr_${name}`,
  organizationId: 'acme',
  admin: false,
  name,
  email: `${name}@acme.test`,
});

async function setUp() {
  const clock = manualClock();
  const state = scopedTransportState(memoryStorage({ clock }).transportState, 'account');
  const signIn = passwordSignIn({
    state,
    clock,
    limits: { perAccount: { burst: 3, perSecond: 1 / 30 }, perAddress: { burst: 6, perSecond: 1 / 10 } },
  });
  for (const name of ['alice', 'bob', 'carol', 'dave'])
    await signIn.setPassword(user(name), `${name}-password`);
  return { clock, signIn };
}

describe('the sign-in slow-down', () => {
  it('refuses a wrong password without telling whether the email exists', async () => {
    const { signIn } = await setUp();
    expect(await signIn.signIn('alice@acme.test', 'wrong', '192.0.2.1')).toEqual({ outcome: 'refused' });
    expect(await signIn.signIn('nobody@acme.test', 'wrong', '192.0.2.2')).toEqual({ outcome: 'refused' });
  });

  it('stops checking an account after repeated failures, then lets the right password in after the wait', async () => {
    const { clock, signIn } = await setUp();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await signIn.signIn('alice@acme.test', 'guess', `192.0.2.${attempt}`)).outcome).toBe('refused');
    }
    // Even the right password, from a fresh address, waits: guessing on gains nothing.
    expect(await signIn.signIn('alice@acme.test', 'alice-password', '198.51.100.1')).toEqual({
      outcome: 'throttled',
      retryAfterSeconds: 30,
    });
    clock.advance(29_000);
    expect((await signIn.signIn('Alice@Acme.test', 'alice-password', '198.51.100.1')).outcome).toBe(
      'throttled',
    );
    clock.advance(1_000);
    expect((await signIn.signIn('alice@acme.test', 'alice-password', '198.51.100.1')).outcome).toBe(
      'signed-in',
    );
  });

  it('slows an address that guesses across accounts, not the accounts elsewhere', async () => {
    const { clock, signIn } = await setUp();
    for (const name of ['alice', 'alice', 'bob', 'bob', 'carol', 'carol']) {
      expect((await signIn.signIn(`${name}@acme.test`, 'guess', '203.0.113.9')).outcome).toBe('refused');
    }
    expect(await signIn.signIn('dave@acme.test', 'dave-password', '203.0.113.9')).toEqual({
      outcome: 'throttled',
      retryAfterSeconds: 10,
    });
    expect((await signIn.signIn('dave@acme.test', 'dave-password', '192.0.2.50')).outcome).toBe('signed-in');
    clock.advance(10_000);
    expect((await signIn.signIn('dave@acme.test', 'dave-password', '203.0.113.9')).outcome).toBe('signed-in');
  });

  it('slows the whole /64 of an IPv6 address that guesses, not the /64 beside it', async () => {
    const { signIn } = await setUp();
    const names = ['alice', 'alice', 'bob', 'bob', 'carol', 'carol'];
    for (const [index, name] of names.entries()) {
      expect((await signIn.signIn(`${name}@acme.test`, 'guess', `2001:db8:7:1::${index + 1}`)).outcome).toBe(
        'refused',
      );
    }
    expect((await signIn.signIn('dave@acme.test', 'dave-password', '2001:db8:7:1:abcd::9')).outcome).toBe(
      'throttled',
    );
    expect((await signIn.signIn('dave@acme.test', 'dave-password', '2001:db8:7:2::1')).outcome).toBe(
      'signed-in',
    );
  });

  it('does not count successful sign-ins', async () => {
    const { signIn } = await setUp();
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await signIn.signIn('bob@acme.test', 'bob-password', '192.0.2.1')).outcome).toBe('signed-in');
    }
  });

  it('counts concurrent guesses before checking any of them', async () => {
    const { signIn } = await setUp();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signIn.signIn('carol@acme.test', 'guess', `192.0.2.${i}`)),
    );
    expect(outcomes.filter((result) => result.outcome === 'refused')).toHaveLength(3);
    expect(outcomes.filter((result) => result.outcome === 'throttled')).toHaveLength(5);
  });

  describe('a browser that signed in before', () => {
    const laptop = 'LaptopAnchor0000000000000000000a';

    it('keeps signing in while someone elsewhere holds the account down', async () => {
      const { signIn } = await setUp();
      expect((await signIn.signIn('alice@acme.test', 'alice-password', '192.0.2.1', laptop)).outcome).toBe(
        'signed-in',
      );
      for (let attempt = 0; attempt < 3; attempt++) {
        expect((await signIn.signIn('alice@acme.test', 'guess', `203.0.113.${attempt}`)).outcome).toBe(
          'refused',
        );
      }
      expect((await signIn.signIn('alice@acme.test', 'alice-password', '198.51.100.1')).outcome).toBe(
        'throttled',
      );
      // Another browser that never signed in, even with a secret of its own, waits with the account.
      expect(
        (
          await signIn.signIn(
            'alice@acme.test',
            'alice-password',
            '198.51.100.1',
            'Stranger000000000000000000000000',
          )
        ).outcome,
      ).toBe('throttled');
      expect((await signIn.signIn('Alice@Acme.test', 'alice-password', '192.0.2.1', laptop)).outcome).toBe(
        'signed-in',
      );
    });

    it('is slowed down in a bucket of its own when it fails', async () => {
      const { clock, signIn } = await setUp();
      await signIn.signIn('bob@acme.test', 'bob-password', '192.0.2.1', laptop);
      for (let attempt = 0; attempt < 3; attempt++) {
        expect((await signIn.signIn('bob@acme.test', 'guess', '192.0.2.1', laptop)).outcome).toBe('refused');
      }
      expect(await signIn.signIn('bob@acme.test', 'bob-password', '192.0.2.1', laptop)).toEqual({
        outcome: 'throttled',
        retryAfterSeconds: 30,
      });
      // Its failures were not the account's.
      expect((await signIn.signIn('bob@acme.test', 'bob-password', '198.51.100.1')).outcome).toBe(
        'signed-in',
      );
      clock.advance(30_000);
      expect((await signIn.signIn('bob@acme.test', 'bob-password', '192.0.2.1', laptop)).outcome).toBe(
        'signed-in',
      );
    });

    it('is known only to the account it signed in to, and for 90 days after its last sign-in', async () => {
      const { clock, signIn } = await setUp();
      await signIn.signIn('carol@acme.test', 'carol-password', '192.0.2.1', laptop);
      let guesses = 0;
      const holdDown = async (name: string) => {
        for (let attempt = 0; attempt < 3; attempt++) {
          guesses += 1;
          await signIn.signIn(`${name}@acme.test`, 'guess', `203.0.113.${guesses}`);
        }
      };
      await holdDown('dave');
      expect((await signIn.signIn('dave@acme.test', 'dave-password', '192.0.2.1', laptop)).outcome).toBe(
        'throttled',
      );
      clock.advance(89 * 24 * 3600_000);
      await holdDown('carol');
      expect((await signIn.signIn('carol@acme.test', 'carol-password', '192.0.2.1', laptop)).outcome).toBe(
        'signed-in',
      );
      // That sign-in renewed it for 90 days more; without one, it is forgotten.
      clock.advance(91 * 24 * 3600_000);
      await holdDown('carol');
      expect((await signIn.signIn('carol@acme.test', 'carol-password', '192.0.2.1', laptop)).outcome).toBe(
        'throttled',
      );
    });

    async function heldDown() {
      const { clock, signIn } = await setUp();
      let guesses = 0;
      const holdDown = async () => {
        for (let attempt = 0; attempt < 3; attempt++) {
          guesses += 1;
          await signIn.signIn('alice@acme.test', 'guess', `203.0.113.${guesses}`);
        }
      };
      const fromLaptop = () => signIn.signIn('alice@acme.test', 'alice-password', '192.0.2.1', laptop);
      return { clock, signIn, holdDown, fromLaptop };
    }

    it.each([
      ['a new password', 'set'],
      ['the sign-in taken away and given back', 'remove'],
    ])('is forgotten after %s', async (_change, change) => {
      const { signIn, holdDown, fromLaptop } = await heldDown();
      expect((await fromLaptop()).outcome).toBe('signed-in');
      if (change === 'remove') await signIn.removePassword('alice@acme.test');
      await signIn.setPassword(user('alice'), change === 'set' ? 'new-password' : 'alice-password');
      if (change === 'set') await signIn.setPassword(user('alice'), 'alice-password');
      await holdDown();
      expect((await fromLaptop()).outcome).toBe('throttled');
    });

    it('is one of the 20 an account remembers, the ones that signed in last', async () => {
      const { clock, signIn, holdDown } = await heldDown();
      const browser = (index: number) => `Browser${String(index).padStart(25, '0')}`;
      for (let index = 0; index <= 20; index++) {
        clock.advance(1_000);
        expect(
          (await signIn.signIn('alice@acme.test', 'alice-password', `198.51.100.${index}`, browser(index)))
            .outcome,
        ).toBe('signed-in');
      }
      await holdDown();
      expect(
        (await signIn.signIn('alice@acme.test', 'alice-password', '192.0.2.7', browser(0))).outcome,
      ).toBe('throttled');
      expect(
        (await signIn.signIn('alice@acme.test', 'alice-password', '192.0.2.7', browser(1))).outcome,
      ).toBe('signed-in');
    });
  });
});
