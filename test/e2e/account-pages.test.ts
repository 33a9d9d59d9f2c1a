import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPasswords } from '../../examples/standalone/demo-seed.js';
import { chromiumArgs, chromiumPath, hasChromium, skipWithoutChromium } from '../support/chromium.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

const skip = skipWithoutChromium('the account pages browser test');

/** Screenshots of every page, for people to look at (git-ignored; docs/screenshots holds copies). */
const screenshots = join('test-output', 'account-pages');

/** The accessible description Chromium computes for the element of `role` named `name`. */
async function accessibleDescription(page: Page, role: string, name: string): Promise<string | undefined> {
  const session = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await session.send('Accessibility.getFullAXTree')) as {
      nodes: { role?: { value?: string }; name?: { value?: string }; description?: { value?: string } }[];
    };
    const node = nodes.find((candidate) => candidate.role?.value === role && candidate.name?.value === name);
    return node?.description?.value;
  } finally {
    await session.detach();
  }
}

const alice = { email: 'alice@acme.test', password: demoPasswords.alice };
const bob = { email: 'bob@acme.test', password: demoPasswords.bob };

describe.skipIf(skip)('the account pages in a real browser (standalone service)', () => {
  let service: StandaloneProcess;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`${chromiumPath} is required in CI (apt-get install -y chromium)`);
    mkdirSync(screenshots, { recursive: true });
    // Some tests create more keys than a person would at once.
    // A trusted proxy, so that a page can come from an IPv6 address (X-Forwarded-For), as the record shows.
    service = await startStandaloneProcess({
      NOTIFY_RATE_LIMIT_KEY_CREATION: '100/1',
      NOTIFY_TRUST_PROXY: '1',
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  async function newPage(
    options: BrowserContextOptions = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      locale: 'en-US',
      viewport: { width: 1100, height: 760 },
      ...options,
    });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
    return { context, page };
  }

  const shoot = (page: Page, name: string) =>
    page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });

  async function signIn(page: Page, who: { email: string; password: string }, start = '/account') {
    await page.goto(`${service.base}${start}`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${service.base}${start}`);
  }

  async function createKey(page: Page, label: string): Promise<string> {
    await page.getByLabel('Label').fill(label);
    await page.getByRole('button', { name: 'Generate key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.waitFor();
    return dialog.getByLabel('New API key').inputValue();
  }

  /** Signs the browser out from a tab of its own, while the pages of the others stay open. */
  async function signOutInAnotherTab(context: BrowserContext): Promise<Page> {
    const elsewhere = await context.newPage();
    await elsewhere.goto(`${service.base}/account`);
    await elsewhere.getByRole('button', { name: 'Sign out' }).click();
    await elsewhere.waitForURL(`${service.base}/signin`);
    return elsewhere;
  }

  const notify = (apiKey: string) =>
    fetch(`${service.base}/api/notify`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ user_emails: ['carol@acme.test'], message: 'Deployed' }),
    });

  it('prints the address of the account pages when ready', async () => {
    const ready = await service.next((line) => line.message === 'ready');
    expect(ready.account).toBe(`http://127.0.0.1:${service.port}/account`);
  });

  it('refuses a wrong password without saying which part was wrong', async () => {
    const { context, page } = await newPage();
    await page.goto(`${service.base}/account`);
    expect(page.url()).toBe(`${service.base}/signin?next=%2Faccount`);
    await shoot(page, 'sign-in');
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill('not her password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('Wrong email or password.');
    expect(new URL(page.url()).pathname).toBe('/signin');
    await shoot(page, 'sign-in-refused');
    await page.goto(`${service.base}/account`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    await context.close();
  });

  it('creates a key shown once, shows its last use, and revokes it so that the API refuses it', async () => {
    const { context, page } = await newPage({ timezoneId: 'Asia/Tokyo' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.base });
    await signIn(page, bob);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    const apiKey = await createKey(page, 'ci pipeline');
    expect(apiKey).toMatch(/^cnk_[A-Za-z0-9]{40}$/);
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => dialog.getByRole('status').textContent()).toBe('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
    await shoot(page, 'account-new-key');
    await dialog.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row').filter({ hasText: 'ci pipeline' });
    await row.waitFor();
    expect(await page.content()).not.toContain(apiKey);
    await page.reload();
    expect(await page.content()).not.toContain(apiKey);
    expect(await row.getByRole('cell').first().textContent()).toBe(`${apiKey.slice(0, 12)}…`);

    // Times in the viewer's zone (Tokyo, UTC+9), from the UTC the server wrote.
    const created = row.locator('time').first();
    const iso = (await created.getAttribute('datetime')) ?? '';
    const tokyo = new Intl.DateTimeFormat('en-US', {
      dateStyle: 'medium',
      timeStyle: 'short',
      timeZone: 'Asia/Tokyo',
    });
    expect(await created.textContent()).toBe(tokyo.format(new Date(iso)));
    const lastUsed = row.getByRole('cell').nth(3);
    expect(await lastUsed.textContent()).toBe('Never');

    expect((await notify(apiKey)).status).toBe(200);
    await expect
      .poll(async () => {
        await page.reload();
        return lastUsed.locator('time').count();
      })
      .toBe(1);
    await shoot(page, 'account');

    await row.getByRole('button', { name: /^Revoke/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('ci pipeline');
    // A screen reader reads the question with the dialog's name: its accessible description.
    expect(await accessibleDescription(page, 'dialog', 'Revoke this key?')).toContain('ci pipeline');
    await shoot(page, 'account-revoke-confirm');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'ci pipeline' }).count()).toBe(0);

    const refused = await notify(apiKey);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ status: 'error', details: 'Invalid API key' });
    await context.close();
  });

  it("lets an admin see a member's key, find it by search and revoke it", async () => {
    const member = await newPage();
    await signIn(member.page, bob);
    const apiKey = await createKey(member.page, 'nightly export');
    await member.page.keyboard.press('Escape');
    await member.page.getByRole('row').filter({ hasText: 'nightly export' }).waitFor();

    const { context, page } = await newPage();
    await signIn(page, alice, '/admin/keys');
    await page.getByRole('heading', { name: 'All keys of the organization' }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: 'nightly export' });
    expect(await rows.first().textContent()).toContain('bob@acme.test');

    await page.getByLabel('Search').fill('nightly');
    await page.getByLabel('Search').press('Enter');
    await page.waitForURL(/\?search=nightly$/);
    const found = page.getByRole('table', { name: 'Keys' }).getByRole('row');
    expect(await found.count()).toBe(2);
    expect(await found.nth(1).textContent()).toContain('Bob Roe');
    await shoot(page, 'admin-keys');

    // With the keyboard: the row's button, then the dialog's.
    await found
      .nth(1)
      .getByRole('button', { name: /^Revoke/ })
      .focus();
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Revoke key' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'nightly export' }).first().textContent()).toContain(
      'Revoked',
    );

    const activity = page.getByRole('table', { name: 'Recent activity' });
    const latest = activity.getByRole('row').nth(1);
    expect(await latest.textContent()).toContain('Alice Doe');
    expect(await latest.textContent()).toContain('Revoked');
    expect(await latest.textContent()).toContain('nightly export');
    await shoot(page, 'admin-keys-revoked');

    expect((await notify(apiKey)).status).toBe(401);
    await context.close();
    await member.context.close();
  });

  it('refuses the admin page to a member', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    expect(await page.getByRole('link', { name: 'All keys of the organization' }).count()).toBe(0);
    const response = await page.goto(`${service.base}/admin/keys`);
    expect(response?.status()).toBe(403);
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await shoot(page, 'admin-keys-refused');
    await context.close();
  });

  it('refuses a post without the CSRF token', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    const forged = await page.request.post(`${service.base}/account/keys`, {
      form: { label: 'forged' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const signOut = await page.request.post(`${service.base}/signout`, { form: {}, maxRedirects: 0 });
    expect(signOut.status()).toBe(403);
    const forgedSignIn = await page.request.post(`${service.base}/signin`, {
      form: { email: alice.email, password: alice.password },
      maxRedirects: 0,
    });
    expect(forgedSignIn.status()).toBe(403);
    await page.reload();
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.getByText('Signed in as Bob Roe').count()).toBe(1);
    expect(await page.getByRole('row').filter({ hasText: 'forged' }).count()).toBe(0);
    await context.close();
  });

  it('sends a person whose session ended while the page was open to the sign-in and back, creating nothing', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    await signOutInAnotherTab(context);
    await page.getByLabel('Label').fill('after sign-out');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await page.waitForURL(`${service.base}/signin?next=%2Faccount`);
    await page.getByLabel('Email').fill(bob.email);
    await page.getByLabel('Password').fill(bob.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${service.base}/account`);
    expect(await page.getByRole('row').filter({ hasText: 'after sign-out' }).count()).toBe(0);
    await context.close();
  });

  it('asks for a reload when the page belongs to a session that changed, creating nothing', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    // Someone signs in as another person in another tab: the open page's token is bob's.
    await signIn(await signOutInAnotherTab(context), alice);
    await page.getByLabel('Label').fill('stale page');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await expect
      .poll(() => page.locator('#create-error').textContent())
      .toBe('This page is out of date (you signed in or out elsewhere). Reload it and try again.');
    await page.reload();
    expect(await page.getByRole('row').filter({ hasText: 'stale page' }).count()).toBe(0);
    await context.close();
  });

  it('takes a page address typed with a slash at its end to the page', async () => {
    const { context, page } = await newPage();
    await page.goto(`${service.base}/account/`);
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/account');
    await page.goto(`${service.base}/signin/?next=%2Faccount`);
    expect(page.url()).toBe(`${service.base}/signin?next=%2Faccount`);
    await context.close();
  });

  it('keeps the session when another site posts to the sign-out', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    // A page of another site that submits a form to the sign-out as soon as it is opened.
    await page.route('http://elsewhere.test/**', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<form method="post" action="${service.base}/signout"></form><script>document.forms[0].submit()</script>`,
      }),
    );
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${service.base}/signout`),
      page.goto('http://elsewhere.test/'),
    ]);
    expect(await answer.headerValue('set-cookie')).toBeNull();
    await page.goto(`${service.base}/account`);
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.getByText('Signed in as Bob Roe').count()).toBe(1);
    await context.close();
  });

  it('ends the session on sign-out, for that cookie everywhere', async () => {
    const { context, page } = await newPage();
    await signIn(page, bob);
    const cookies = await context.cookies();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${service.base}/signin`);
    await page.goto(`${service.base}/account`);
    expect(new URL(page.url()).pathname).toBe('/signin');

    const replay = await newPage();
    await replay.context.addCookies(cookies);
    await replay.page.goto(`${service.base}/account`);
    expect(new URL(replay.page.url()).pathname).toBe('/signin');
    await replay.context.close();
    await context.close();
  });

  it('lets a browser that signed in before through while someone elsewhere holds the sign-in down', async () => {
    const carol = { email: 'carol@acme.test', password: demoPasswords.carol };
    const laptop = await newPage();
    await signIn(laptop.page, carol);
    await laptop.page.getByRole('button', { name: 'Sign out' }).click();
    await laptop.page.waitForURL(`${service.base}/signin`);
    // The browser is closed and opened again: only the cookies meant to outlive it are left.
    const kept = (await laptop.context.cookies()).filter((cookie) => cookie.expires > 0);
    expect(kept.map((cookie) => cookie.name)).toEqual(['chat_notify_csrf']);
    await laptop.context.close();

    const stranger = await newPage();
    await stranger.page.goto(`${service.base}/signin`);
    const attempt = async (password: string) => {
      await stranger.page.getByLabel('Email').fill(carol.email);
      await stranger.page.getByLabel('Password').fill(password);
      const [answer] = await Promise.all([
        stranger.page.waitForResponse((response) => response.request().method() === 'POST'),
        stranger.page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      return answer.status();
    };
    for (let guess = 0; guess < 5; guess++) expect(await attempt(`guess ${guess}`)).toBe(401);
    expect(await attempt(carol.password)).toBe(429);
    expect(await stranger.page.getByRole('alert').first().textContent()).toMatch(/^Too many failed sign-ins/);
    await stranger.context.close();

    const reopened = await newPage();
    await reopened.context.addCookies(kept);
    await signIn(reopened.page, carol);
    expect(await reopened.page.getByText('Signed in as Carol Poe').count()).toBe(1);
    await reopened.context.close();
  });

  it('works on a phone, with the keyboard only', async () => {
    // Measured against the screen, not `innerWidth`: a phone widens its layout to content that overflows.
    const phoneWidth = 390;
    const { context, page } = await newPage({
      viewport: { width: phoneWidth, height: 844 },
      isMobile: true,
      hasTouch: true,
      // The longest client address there is, in the organization's record of keys.
      extraHTTPHeaders: { 'x-forwarded-for': '2001:db8:85a3:1234:5678:8a2e:370:7334' },
    });
    await page.goto(`${service.base}/account`);
    // Chromium applies autofocus at its next rendering step, which may come after the load event.
    await page.waitForFunction(() => document.activeElement?.id === 'email');
    await page.keyboard.type(alice.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(alice.password);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${service.base}/account`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phoneWidth);

    // A label the service refuses: the error is said, and the keyboard is back in the field to mend it.
    await page.getByLabel('Label').focus();
    await page.keyboard.type('   ');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Generate key');
    await page.keyboard.press('Enter');
    await page.locator('#create-error').filter({ hasText: 'label' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-label');
    await page.getByLabel('Label').fill('');
    // The longest label there may be, without a place to break it: it wraps inside its card.
    const label = `phone_test_${'x'.repeat(89)}`;
    await page.keyboard.type(label);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-key-value');
    // The label wraps inside the dialog: none of it is cut off.
    const fits = (node: Element) => node.scrollWidth <= node.clientWidth;
    expect(await dialog.evaluate(fits)).toBe(true);
    await shoot(page, 'account-phone-new-key');
    await page.keyboard.press('Escape');
    await page.getByRole('row').filter({ hasText: label }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phoneWidth);
    await shoot(page, 'account-phone');
    // The question before a revocation shows the whole label, and so does the notice after it.
    await page.getByRole('button', { name: `Revoke ${label}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke this key?' });
    await confirm.waitFor();
    expect(await confirm.evaluate(fits)).toBe(true);
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: label }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phoneWidth);
    await page.getByLabel('Label').fill(label);
    await page.getByLabel('Label').press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    // The list is read again once the dialog closes: the next page is opened after that.
    await page.getByRole('row').filter({ hasText: label }).waitFor();
    // The organization's keys and their record show the label too, with its owner beside it.
    await page.goto(`${service.base}/admin/keys`);
    await page.getByRole('row').filter({ hasText: label }).first().waitFor();
    expect(await page.getByText('2001:db8:85a3:1234:5678:8a2e:370:7334').count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phoneWidth);
    await context.close();
  });

  it('works without JavaScript: the key in an open dialog, revocation confirmed on a page', async () => {
    const { context, page } = await newPage({ javaScriptEnabled: false });
    await signIn(page, bob);
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    // Enough keys for the table to run past the bottom of the window.
    for (let index = 1; index <= 8; index += 1) {
      await page.getByLabel('Label').fill(`earlier ${index}`);
      await page.getByRole('button', { name: 'Generate key' }).click();
      await dialog.getByRole('button', { name: 'Done' }).click();
    }
    await page.getByLabel('Label').fill('no script');
    await page.getByRole('button', { name: 'Generate key' }).click();
    await dialog.waitFor();
    // Where the eye is, and where the keyboard is: on the key, shown only this once.
    expect(await dialog.evaluate((element) => element.getBoundingClientRect().top)).toBeLessThan(200);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-key-value');
    const apiKey = await dialog.getByLabel('New API key').inputValue();
    expect(apiKey).toMatch(/^cnk_/);
    expect(await dialog.getByRole('button', { name: 'Copy' }).count()).toBe(0);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // The address bar shows where the form posted to: opened again, it leads to the page, not a 405.
    expect(new URL(page.url()).pathname).toBe('/account/keys');
    const again = await page.goto(page.url());
    expect(again?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/account');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    const row = page.getByRole('row').filter({ hasText: 'no script' });
    // Without the script, times stay in UTC, and say so.
    expect(await row.locator('time').first().textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('heading', { name: 'Revoke this key?' }).waitFor();
    await shoot(page, 'account-revoke-without-script');
    const confirmPage = page.url();
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.waitForURL(/\/account\?revoked=/);
    expect(await page.getByRole('row').filter({ hasText: 'no script' }).count()).toBe(0);
    expect((await notify(apiKey)).status).toBe(401);
    // The confirmation's address, and the sign-out's, opened in the address bar: the page, still signed in.
    for (const address of [confirmPage, `${service.base}/signout`]) {
      expect((await page.goto(address))?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe('/account');
    }
    await context.close();
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(problems).toEqual([]);
  });
});
