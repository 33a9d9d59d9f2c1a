import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { accountPages, passwordSignIn } from '../../account/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { scopedTransportState, type TransportStateStore } from '../../core/adapter-kit.js';
import { createNotifier, type Notifier, NotifyError } from '../../core/index.js';
import { notifyRouter } from '../../hosts/express/index.js';

const people = {
  alice: { email: 'alice@acme.test', name: 'Alice Doe', password: 'alice-pw', admin: true },
  bob: { email: 'bob@acme.test', name: 'Bob Roe', password: 'bob-pw', admin: false },
};
type Person = (typeof people)[keyof typeof people];

/** The account pages with the library's own sign-in, served by Express on an ephemeral port. */
interface SignInApp {
  base: string;
  /** While `on`, every read of a credential fails as a storage outage does; while `deletes`, every delete. */
  outage: { on: boolean; deletes: boolean };
  close(): Promise<void>;
}

/**
 * `state` whose reads of credentials reject with `unavailable` while `outage.on`, and whose deletes
 * (the end of a session) while `outage.deletes`.
 */
function failingCredentials(state: TransportStateStore, outage: SignInApp['outage']): TransportStateStore {
  const unavailable = () =>
    Promise.reject(new NotifyError('unavailable', 'Storage is temporarily unavailable'));
  return {
    ...state,
    get: (key) => (outage.on && key.startsWith('credential:') ? unavailable() : state.get(key)),
    delete: (key) => (outage.deletes ? unavailable() : state.delete(key)),
  };
}

async function startSignInApp(): Promise<SignInApp> {
  const storage = memoryStorage();
  const notifier: Notifier = createNotifier({ storage, transports: [inboxTransport()] });
  await notifier.seed({
    organizations: [
      {
        id: 'acme',
        name: 'Acme',
        users: Object.values(people).map((person) => ({
          email: person.email,
          name: person.name,
          role: person.admin ? ('admin' as const) : ('member' as const),
        })),
      },
    ],
  });
  const outage = { on: false, deletes: false };
  const state = failingCredentials(scopedTransportState(storage.transportState, 'account'), outage);
  const signIn = passwordSignIn({ state });
  for (const user of await storage.directory.listUsers()) {
    const person = Object.values(people).find((candidate) => candidate.email === user.email);
    if (person === undefined) continue;
    await signIn.setPassword(
      {
        userId: user.id,
        organizationId: 'acme',
        admin: person.admin,
        name: person.name,
        email: person.email,
      },
      person.password,
    );
  }
  const app = express();
  app.use(notifyRouter(accountPages({ notifier, state, signIn })));
  const server: Server = createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    outage,
    async close() {
      server.closeAllConnections();
      server.close();
      await notifier.stop();
    },
  };
}

/** A browser's cookies, by name, as it keeps them from the answers it gets. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

/** The sign-in form's CSRF token, as the browser loads the page. */
async function signInForm(app: SignInApp, jar: CookieJar): Promise<string> {
  const response = await fetch(`${app.base}/signin`, { headers: { cookie: jar.header() } });
  jar.keep(response);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await response.text())?.[1];
  if (csrf === undefined) throw new Error('no CSRF token on the sign-in page');
  return csrf;
}

async function postSignIn(app: SignInApp, jar: CookieJar, csrf: string, who: Person): Promise<Response> {
  const response = await fetch(`${app.base}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
    },
    body: new URLSearchParams({ csrf, email: who.email, password: who.password }),
  });
  jar.keep(response);
  return response;
}

const sessionCookie = 'chat_notify_session';

describe('the sign-in pages of the library’s own sign-in', () => {
  let app: SignInApp;
  afterEach(async () => {
    await app.close();
  });

  it('ends the session of the browser’s cookie when someone signs in over it', async () => {
    app = await startSignInApp();
    const jar = new CookieJar();
    // A sign-in form left open in a tab: posted once the browser is signed in as someone else.
    const csrf = await signInForm(app, jar);
    expect((await postSignIn(app, jar, csrf, people.alice)).status).toBe(303);
    const first = jar.get(sessionCookie);
    expect(first).toBeDefined();
    expect((await postSignIn(app, jar, csrf, people.bob)).status).toBe(303);
    expect(jar.get(sessionCookie)).not.toBe(first);

    const sessionOf = (cookie: string) =>
      fetch(`${app.base}/account/api/session`, { headers: { cookie } }).then((response) => response.status);
    expect(await sessionOf(jar.header())).toBe(200);
    expect(await sessionOf(`${sessionCookie}=${first}`)).toBe(401);
    const page = await fetch(`${app.base}/account`, {
      redirect: 'manual',
      headers: { cookie: `${sessionCookie}=${first}` },
    });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/signin?next=%2Faccount');
  });

  it('signs in over a session whose end the storage refuses: the new session stands', async () => {
    app = await startSignInApp();
    const jar = new CookieJar();
    const csrf = await signInForm(app, jar);
    expect((await postSignIn(app, jar, csrf, people.alice)).status).toBe(303);
    const first = jar.get(sessionCookie);
    app.outage.deletes = true;
    expect((await postSignIn(app, jar, csrf, people.bob)).status).toBe(303);
    expect(jar.get(sessionCookie)).not.toBe(first);
    app.outage.deletes = false;
    const session = await fetch(`${app.base}/account/api/session`, { headers: { cookie: jar.header() } });
    expect(session.status).toBe(200);
    expect(await session.text()).toContain(people.bob.email);
  });

  it('answers a storage outage with a page, not the API’s JSON', async () => {
    app = await startSignInApp();
    const jar = new CookieJar();
    const csrf = await signInForm(app, jar);
    app.outage.on = true;
    const expectOutagePage = async (response: Response) => {
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.text()).toContain('Storage is temporarily unavailable');
    };
    await expectOutagePage(await postSignIn(app, jar, csrf, people.alice));

    app.outage.on = false;
    expect((await postSignIn(app, jar, csrf, people.alice)).status).toBe(303);
    app.outage.on = true;
    // The session's user is read with its credential: the pages that need it fail alike.
    await expectOutagePage(await fetch(`${app.base}/signin`, { headers: { cookie: jar.header() } }));
    await expectOutagePage(
      await fetch(`${app.base}/signout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }),
      }),
    );
  });
});
