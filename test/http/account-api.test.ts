import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import {
  type AccountBrowser,
  type AccountTestApp,
  appUserCookie,
  signedInBrowser,
  startAccountApp,
} from '../support/account-app.js';
import { manualClock } from '../support/manual-clock.js';
import { testKeys } from '../support/test-seed.js';
import { type Answer, call, expectError } from './client.js';
import { hostKinds } from './harness.js';

interface KeyJson {
  id: string;
  label: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  owner: { name: string; email: string };
}

const post = (app: AccountTestApp, browser: AccountBrowser, path: string, body?: unknown, headers = {}) =>
  call(`${app.pagesUrl}${path}`, {
    method: 'POST',
    headers: {
      cookie: browser.cookie,
      'x-csrf-token': browser.csrfToken,
      'content-type': 'application/json',
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const get = (app: AccountTestApp, browser: AccountBrowser, path: string) =>
  call(`${app.pagesUrl}${path}`, { headers: { cookie: browser.cookie } });

const notify = (app: AccountTestApp, apiKey: string) =>
  call(`${app.origin}/api/notify`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deployed' }),
  });

const keysOf = (answer: Answer) => (answer.json as { keys: KeyJson[] }).keys;

describe.each(hostKinds)('the account JSON API (%s)', (kind) => {
  let app: AccountTestApp;
  afterEach(async () => {
    await app.close();
  });

  it("lets an admin list the organization's failed callbacks and replay one, and no one else", async () => {
    const storage = memoryStorage();
    app = await startAccountApp(kind, { storage });
    const ask = async (apiKey: string, email: string) => {
      const answer = await call(`${app.origin}/api/notify`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          user_emails: [email],
          message: 'Approve?',
          response_request: {
            options: [
              { text: 'Yes', value: 'yes' },
              { text: 'No', value: 'no' },
            ],
            timeout_minutes: 60,
          },
        }),
      });
      if (answer.status !== 200) throw new Error(`send refused: ${answer.status} ${answer.text}`);
      return (answer.json as { request_id: string }).request_id;
    };
    const ours = await ask(testKeys.alice, 'bob@acme.test');
    const theirs = await ask(testKeys.gina, 'gina@globex.test');
    const failure = {
      url: 'https://hooks.example/done',
      attempts: 8,
      lastStatus: 500,
      lastError: 'HTTP 500',
    };
    const failedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    await storage.failedCallbacks.add({ ...failure, requestId: ours, organizationId: 'acme', failedAt });
    await storage.failedCallbacks.add({ ...failure, requestId: theirs, organizationId: 'globex', failedAt });

    const alice = await signedInBrowser(app, 'alice@acme.test');
    const listed = await get(app, alice, '/admin/api/failed-callbacks');
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({
      failed_callbacks: [
        {
          request_id: ours,
          url: 'https://hooks.example/done',
          attempts: 8,
          last_status: 500,
          last_error: 'HTTP 500',
          failed_at: '2026-01-02T03:04:05.000Z',
        },
      ],
    });
    const bob = await signedInBrowser(app, 'bob@acme.test');
    expectError(await get(app, bob, '/admin/api/failed-callbacks'), 403);
    expectError(await post(app, bob, `/admin/api/failed-callbacks/${ours}/replay`), 403);
    expectError(
      await post(app, alice, `/admin/api/failed-callbacks/${ours}/replay`, undefined, {
        'x-csrf-token': 'x',
      }),
      403,
    );
    expectError(
      await post(app, alice, `/admin/api/failed-callbacks/${theirs}/replay`),
      404,
      'No failed callback of this request',
    );
    expect((await post(app, alice, `/admin/api/failed-callbacks/${ours}/replay`)).status).toBe(200);
    expect((await get(app, alice, '/admin/api/failed-callbacks')).json).toEqual({ failed_callbacks: [] });
    expectError(await post(app, alice, `/admin/api/failed-callbacks/${ours}/replay`), 404);
    expect(await storage.failedCallbacks.list('globex')).toHaveLength(1);
  });

  it('answers 401 to a caller who is not signed in, in the error shape', async () => {
    app = await startAccountApp(kind);
    expectError(await call(`${app.pagesUrl}/account/api/keys`), 401, 'Not signed in');
    expectError(await call(`${app.pagesUrl}/admin/api/audit`), 401, 'Not signed in');
  });

  it('refuses every admin operation to a member with 403, the page included', async () => {
    app = await startAccountApp(kind);
    const bob = await signedInBrowser(app, 'bob@acme.test');
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const aliceKey = keysOf(await get(app, alice, '/account/api/keys'))[0];
    const refusal = 'Only organization admins can manage every key of the organization';
    expectError(await get(app, bob, '/admin/api/keys'), 403, refusal);
    expectError(await get(app, bob, '/admin/api/keys?search=alice'), 403, refusal);
    expectError(await get(app, bob, '/admin/api/audit'), 403, refusal);
    expectError(await post(app, bob, `/admin/api/keys/${aliceKey?.id}/revoke`), 403, refusal);
    const page = await get(app, bob, '/admin/keys');
    expect(page.status).toBe(403);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Only organization admins can see every key of the organization.');
    expect((await notify(app, testKeys.alice)).status).toBe(200);
  });

  it('answers 404 for a key of another organization, or of another member, and leaves it valid', async () => {
    app = await startAccountApp(kind);
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const gina = await signedInBrowser(app, 'gina@globex.test');
    const bob = await signedInBrowser(app, 'bob@acme.test');
    const aliceKey = keysOf(await get(app, alice, '/account/api/keys'))[0];
    expect(aliceKey?.owner.email).toBe('alice@acme.test');
    expectError(await post(app, gina, `/admin/api/keys/${aliceKey?.id}/revoke`), 404, 'API key not found');
    expectError(await post(app, gina, `/account/api/keys/${aliceKey?.id}/revoke`), 404, 'API key not found');
    expectError(await post(app, bob, `/account/api/keys/${aliceKey?.id}/revoke`), 404, 'API key not found');
    expect(keysOf(await get(app, gina, '/admin/api/keys')).map((key) => key.owner.email)).toEqual([
      'gina@globex.test',
    ]);
    expect((await notify(app, testKeys.alice)).status).toBe(200);
  });

  it('refuses a post without the CSRF token of its browser and user with 403', async () => {
    app = await startAccountApp(kind);
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const bob = await signedInBrowser(app, 'bob@acme.test');
    const refusal = 'Missing or invalid CSRF token';
    expectError(
      await post(app, alice, '/account/api/keys', { label: 'x' }, { 'x-csrf-token': '' }),
      403,
      refusal,
    );
    // Another user's token, even with that user's anchor cookie.
    expectError(
      await post(app, { ...alice, csrfToken: bob.csrfToken }, '/account/api/keys', { label: 'x' }),
      403,
      refusal,
    );
    const bobAnchor = bob.cookie.split('; ')[1];
    const forged = { cookie: `${appUserCookie}=alice%40acme.test; ${bobAnchor}`, csrfToken: bob.csrfToken };
    expectError(await post(app, forged, '/account/api/keys', { label: 'x' }), 403, refusal);
    // The right token without the anchor cookie it was made for.
    const noAnchor = { cookie: `${appUserCookie}=alice%40acme.test`, csrfToken: alice.csrfToken };
    expectError(await post(app, noAnchor, '/account/api/keys', { label: 'x' }), 403, refusal);
    // The page's form, posted from elsewhere without its hidden field.
    const form = await call(`${app.pagesUrl}/account/keys`, {
      method: 'POST',
      headers: { cookie: alice.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'label=forged',
    });
    expect(form.status).toBe(403);
    expect(form.text).toContain('This form has expired');
    expect(keysOf(await get(app, alice, '/account/api/keys')).map((key) => key.label)).toEqual(['tests']);
    expect((await post(app, alice, '/account/api/keys', { label: 'accepted' })).status).toBe(201);
  });

  it('records who, when, which key and from which address; a revoked key is refused on the next request', async () => {
    const clock = manualClock();
    app = await startAccountApp(kind, { clock, trustProxy: 1 });
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const created = await post(
      app,
      alice,
      '/account/api/keys',
      { label: '  deploy bot  ' },
      {
        'x-forwarded-for': '203.0.113.7',
      },
    );
    expect(created.status).toBe(201);
    const { api_key: apiKey, key } = created.json as { api_key: string; key: KeyJson };
    expect(apiKey).toMatch(/^cnk_[A-Za-z0-9]{40}$/);
    expect(key).toEqual({
      id: expect.any(String),
      label: 'deploy bot',
      prefix: apiKey.slice(0, 12),
      created_at: '2026-01-01T00:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
      owner: { name: 'Alice Doe', email: 'alice@acme.test' },
    });
    // Shown once: no listing ever holds the plaintext.
    expect((await get(app, alice, '/account/api/keys')).text).not.toContain(apiKey);

    expect((await notify(app, apiKey)).status).toBe(200);
    await expect
      .poll(
        async () =>
          keysOf(await get(app, alice, '/account/api/keys')).find((k) => k.id === key.id)?.last_used_at,
      )
      .toBe('2026-01-01T00:00:00.000Z');

    clock.advance(90_000);
    expect(
      (
        await post(app, alice, `/account/api/keys/${key.id}/revoke`, undefined, {
          'x-forwarded-for': '198.51.100.4',
        })
      ).json,
    ).toEqual({
      status: 'ok',
    });
    expectError(await notify(app, apiKey), 401, 'Invalid API key');

    const audit = await get(app, alice, '/admin/api/audit');
    expect(audit.status).toBe(200);
    const actor = { user_id: expect.any(String), name: 'Alice Doe', email: 'alice@acme.test' };
    const which = { id: key.id, prefix: key.prefix, label: 'deploy bot', owner: key.owner };
    expect((audit.json as { entries: unknown[] }).entries).toEqual([
      { at: '2026-01-01T00:01:30.000Z', action: 'revoke', actor, key: which, client_address: '198.51.100.4' },
      { at: '2026-01-01T00:00:00.000Z', action: 'create', actor, key: which, client_address: '203.0.113.7' },
    ]);
  });

  it("lets an admin find a member's key by search and revoke it", async () => {
    app = await startAccountApp(kind);
    const bob = await signedInBrowser(app, 'bob@acme.test');
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const { api_key: bobKey, key } = (await post(app, bob, '/account/api/keys', { label: 'nightly export' }))
      .json as {
      api_key: string;
      key: KeyJson;
    };
    for (const search of ['NIGHTLY', key.prefix, 'Bob Roe', 'bob@acme']) {
      const found = keysOf(await get(app, alice, `/admin/api/keys?search=${encodeURIComponent(search)}`));
      expect(
        found.map((k) => k.id),
        search,
      ).toContain(key.id);
      expect(found.every((k) => k.owner.email === 'bob@acme.test' || search === key.prefix)).toBe(true);
    }
    expect(keysOf(await get(app, alice, '/admin/api/keys?search=no-such-key'))).toEqual([]);
    expect((await post(app, alice, `/admin/api/keys/${key.id}/revoke`)).status).toBe(200);
    expectError(await notify(app, bobKey), 401, 'Invalid API key');
    const revoked = keysOf(await get(app, bob, '/account/api/keys')).find((k) => k.id === key.id);
    expect(revoked?.revoked_at).toEqual(expect.any(String));
    const audit = (await get(app, alice, '/admin/api/audit')).json as { entries: unknown[] };
    expect(audit.entries[0]).toMatchObject({
      action: 'revoke',
      actor: { email: 'alice@acme.test' },
      key: { owner: { email: 'bob@acme.test' } },
    });
  });

  it("sends a signed-out visitor of a page to the application's sign-in page and back, or answers 401", async () => {
    app = await startAccountApp(kind, { signInPath: '/login' });
    const visit = await fetch(`${app.pagesUrl}/admin/keys?search=bob`, { redirect: 'manual' });
    expect(visit.status).toBe(303);
    expect(visit.headers.get('location')).toBe('/login?next=%2Fapp%2Fadmin%2Fkeys%3Fsearch%3Dbob');
    await app.close();

    app = await startAccountApp(kind);
    const page = await call(`${app.pagesUrl}/account`);
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Sign in to manage your API keys.');
  });

  it('serves pages with a nonce-only Content-Security-Policy, no framing, and a CSRF cookie that scripts cannot read', async () => {
    app = await startAccountApp(kind);
    const page = await call(`${app.pagesUrl}/account`, {
      headers: { cookie: `${appUserCookie}=alice%40acme.test` },
    });
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([A-Za-z0-9]+)'/.exec(policy)?.[1];
    expect(nonce).toBeDefined();
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('set-cookie')).toMatch(
      // Kept across browser sessions: the sign-in's slow-down knows a browser that signed in before.
      /^chat_notify_csrf=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=34560000$/,
    );
    expect(page.text).toContain(`<script nonce="${nonce}">`);
    expect(page.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    // A browser that has one keeps it, for another 400 days from each page: it stays the browser
    // its account knows, however long ago it first came.
    const anchor = /^chat_notify_csrf=([A-Za-z0-9]{32});/.exec(page.headers.get('set-cookie') ?? '')?.[1];
    const again = await call(`${app.pagesUrl}/account`, {
      headers: { cookie: `${appUserCookie}=alice%40acme.test; chat_notify_csrf=${anchor}` },
    });
    expect(again.headers.get('set-cookie')).toBe(
      `chat_notify_csrf=${anchor}; Path=/; HttpOnly; SameSite=Lax; Max-Age=34560000`,
    );
    // A client that claims https itself, with no proxy trusted, gets no Secure cookie.
    const claimed = await call(`${app.pagesUrl}/account`, {
      headers: { cookie: `${appUserCookie}=alice%40acme.test`, 'x-forwarded-proto': 'https' },
    });
    expect(claimed.headers.get('set-cookie')).not.toMatch(/Secure/);
  });

  it('makes cookies Secure when a trusted proxy reports https, and only then', async () => {
    app = await startAccountApp(kind, { trustProxy: ['127.0.0.1'] });
    const cookieFor = async (proto: string | undefined) =>
      (
        await call(`${app.pagesUrl}/account`, {
          headers: {
            cookie: `${appUserCookie}=alice%40acme.test`,
            ...(proto === undefined ? {} : { 'x-forwarded-proto': proto }),
          },
        })
      ).headers.get('set-cookie');
    expect(await cookieFor('https')).toMatch(/; Secure$/);
    expect(await cookieFor('http, HTTPS')).toMatch(/; Secure$/);
    // What the client wrote, to the left of what the proxy appended, counts for nothing.
    expect(await cookieFor('https, http')).not.toMatch(/Secure/);
    expect(await cookieFor('http')).not.toMatch(/Secure/);
    expect(await cookieFor(undefined)).not.toMatch(/Secure/);
    await app.close();
    // The peer (127.0.0.1) is no trusted proxy here: its header is a client's claim.
    app = await startAccountApp(kind, { trustProxy: ['10.0.0.0/8'] });
    expect(await cookieFor('https')).not.toMatch(/Secure/);
  });

  it('escapes what people typed wherever the pages show it', async () => {
    app = await startAccountApp(kind);
    const alice = await signedInBrowser(app, 'alice@acme.test');
    const label = '<img src=x onerror=alert(1)> & "quoted"';
    expect((await post(app, alice, '/account/api/keys', { label })).status).toBe(201);
    for (const path of ['/account', '/admin/keys']) {
      const page = await get(app, alice, path);
      expect(page.text, path).not.toContain('<img src=x');
      expect(page.text, path).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;');
    }
  });

  it('refuses creations past the rate with 429 and Retry-After, in the JSON API and beside the form', async () => {
    app = await startAccountApp(kind);
    const alice = await signedInBrowser(app, 'alice@acme.test');
    for (let i = 0; i < 10; i += 1) {
      expect((await post(app, alice, '/account/api/keys', { label: `key ${i}` })).status).toBe(201);
    }
    const refused = await post(app, alice, '/account/api/keys', { label: 'eleventh' });
    expectError(refused, 429, 'Too many API keys created: try again in 6 minutes');
    expect(refused.headers.get('retry-after')).toBe('360');
    const form = await call(`${app.pagesUrl}/account/keys`, {
      method: 'POST',
      headers: { cookie: alice.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ label: 'by the form', csrf: alice.csrfToken }).toString(),
    });
    expect(form.status).toBe(429);
    expect(form.headers.get('retry-after')).toBe('360');
    expect(form.text).toContain('Too many API keys created: try again in 6 minutes');
    expect(form.text).toContain('value="by the form"');
    expect(keysOf(await get(app, alice, '/account/api/keys'))).toHaveLength(11);
  });

  it('refuses malformed creations with 400 in the error shape', async () => {
    app = await startAccountApp(kind);
    const alice = await signedInBrowser(app, 'alice@acme.test');
    expectError(
      await post(app, alice, '/account/api/keys', { label: '   ' }),
      400,
      'label: must be 1 to 100 characters',
    );
    expectError(
      await post(app, alice, '/account/api/keys', { label: '\u200b\u2060' }),
      400,
      'label: must be 1 to 100 characters',
    );
    expectError(
      await post(app, alice, '/account/api/keys', { label: '🔑'.repeat(101) }),
      400,
      'label: must be 1 to 100 characters',
    );
    expectError(
      await post(app, alice, '/account/api/keys', { label: 'key \udc00' }),
      400,
      'label: must be Unicode text: it holds half of a surrogate pair (e.g. "\\udc00") without the other',
    );
    // A hundred characters, however many UTF-16 units they take.
    expect((await post(app, alice, '/account/api/keys', { label: '🔑'.repeat(100) })).status).toBe(201);
    expectError(
      await post(app, alice, '/account/api/keys', { label: 'x', owner: 'bob' }),
      400,
      'owner: is not a known field',
    );
    expectError(await post(app, alice, '/account/api/keys', { label: 7 }), 400, 'label: must be a string');
    expectError(
      await post(app, alice, '/account/api/keys', ['label']),
      400,
      'Request body could not be parsed: it must be a JSON object',
    );
  });
});
