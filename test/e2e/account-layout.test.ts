import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AccountTestApp,
  appUserCookie,
  signedInBrowser,
  startAccountApp,
} from '../support/account-app.js';
import { chromiumArgs, chromiumPath, hasChromium, skipWithoutChromium } from '../support/chromium.js';

const skip = skipWithoutChromium('the account pages layout test');

/** Screenshots of the widths measured, for people to look at (git-ignored). */
const screenshots = join('test-output', 'account-layout');

/** A long address, as a company's may be: its name in parts, its domain long. */
const longEmail = 'william.bartholomew.lumbergh@initech-software-solutions.example';

/** An address with no place to break it but its @: it breaks anywhere rather than widen the page. */
const unbrokenEmail = `${'m'.repeat(48)}@initech.example`;

/** Labels as people write them: a few words each. */
const labels = ['nightly backup job', 'deploy pipeline', 'staging smoke tests'];

describe.skipIf(skip)('the admin page’s tables at the widths where they squeeze', () => {
  let app: AccountTestApp;
  let browser: Browser;

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`${chromiumPath} is required in CI (apt-get install -y chromium)`);
    mkdirSync(screenshots, { recursive: true });
    app = await startAccountApp('express');
    await app.notifier.seed({
      organizations: [
        {
          id: 'initech',
          name: 'Initech',
          users: [
            { email: longEmail, name: 'Bill Lumbergh', role: 'admin' },
            { email: unbrokenEmail, name: 'Milton Waddams', role: 'admin' },
          ],
        },
      ],
    });
    for (const email of ['bob@acme.test', longEmail, unbrokenEmail]) {
      const owner = await signedInBrowser(app, email);
      for (const label of labels) {
        const created = await fetch(`${app.pagesUrl}/account/api/keys`, {
          method: 'POST',
          headers: {
            cookie: owner.cookie,
            'x-csrf-token': owner.csrfToken,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ label }),
        });
        if (created.status !== 201) throw new Error(`key "${label}" of ${email}: ${created.status}`);
        if (label !== labels[0]) continue;
        // One revoked key a row: its cell says when, in a badge.
        const { key } = (await created.json()) as { key: { id: string } };
        const revoked = await fetch(`${app.pagesUrl}/account/api/keys/${key.id}/revoke`, {
          method: 'POST',
          headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrfToken },
        });
        if (revoked.status !== 200) throw new Error(`revocation of "${label}": ${revoked.status}`);
      }
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** The admin page as an admin (Alice, by default) sees it in a window `width` pixels wide. */
  async function adminPage(
    width: number,
    options: { isMobile?: boolean } = {},
    admin = 'alice@acme.test',
  ): Promise<Page> {
    const context = await browser.newContext({
      locale: 'en-US',
      viewport: { width, height: 900 },
      ...options,
    });
    await context.addCookies([{ name: appUserCookie, value: encodeURIComponent(admin), url: app.origin }]);
    const page = await context.newPage();
    await page.goto(`${app.pagesUrl}/admin/keys`);
    await page.getByRole('heading', { name: 'All keys of the organization' }).waitFor();
    return page;
  }

  const revokeHeights = (page: Page) =>
    page
      .getByRole('table', { name: 'Keys' })
      .getByRole('button', { name: /^Revoke/ })
      .evaluateAll((buttons) => buttons.map((button) => button.getBoundingClientRect().height));

  /** The lines each element of `locator` takes, as the text on each. */
  const linesOf = (locator: Locator) =>
    locator.evaluateAll((nodes) =>
      nodes.map((node) => {
        const lines = new Map<number, string>();
        const range = document.createRange();
        const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
        for (let text = walker.nextNode(); text !== null; text = walker.nextNode()) {
          const characters = text.textContent ?? '';
          for (let at = 0; at < characters.length; at++) {
            range.setStart(text, at);
            range.setEnd(text, at + 1);
            const top = Math.round(range.getBoundingClientRect().top);
            lines.set(top, (lines.get(top) ?? '') + characters.charAt(at));
          }
        }
        return [...lines.values()];
      }),
    );

  it('keeps each Revoke button on one line in a window 720 pixels wide, and breaks emails only between words', async () => {
    const wide = await adminPage(1200);
    const [oneLine] = await revokeHeights(wide);
    await wide.context().close();

    for (const admin of ['alice@acme.test', longEmail]) {
      const page = await adminPage(720, {}, admin);
      const table = page.getByRole('table', { name: 'Keys' });
      await table.screenshot({ path: join(screenshots, `admin-keys-720-${admin.length}.png`) });
      const heights = await revokeHeights(page);
      expect(heights.length).toBeGreaterThanOrEqual(labels.length - 1);
      for (const height of heights) expect(height).toBe(oneLine);
      // Broken, if at all, before the @ or a dot (or after a hyphen): never inside a word.
      const emails = table.locator('td[data-label="Owner"] .muted');
      expect(await emails.evaluateAll((nodes) => nodes.map((node) => node.textContent))).toContain(
        admin === longEmail ? longEmail : 'bob@acme.test',
      );
      const breakable = (await linesOf(emails)).filter((lines) => lines.join('') !== unbrokenEmail);
      for (const lines of breakable) {
        for (const [index, line] of lines.entries()) {
          if (index > 0) expect(`${lines[index - 1]}|${line}`).toMatch(/-\|[^|]*$|\|[@.]/);
        }
      }
      // Times, "Never" and the badge of a revoked key break between words alone.
      const phrases = await linesOf(table.locator('td time, td > .muted, td .badge'));
      expect(phrases.length).toBeGreaterThan(2 * labels.length);
      for (const lines of phrases) {
        for (const [index, line] of lines.entries()) {
          if (index > 0) expect(`${lines[index - 1]}|${line}`).toMatch(/\s\|/);
        }
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(720);
      await page.context().close();
    }
  });

  it('shows an owner and a key’s record on a phone as one block each, the email on a line of its own', async () => {
    const phoneWidth = 390;
    const page = await adminPage(phoneWidth, { isMobile: true });
    await page.getByRole('table', { name: 'Recent activity' }).getByRole('row').nth(1).waitFor();
    await page.screenshot({ path: join(screenshots, 'admin-keys-phone.png'), fullPage: true });
    const cells = page.locator('td[data-label="Owner"], td[data-label="Key"]');
    expect(await cells.count()).toBeGreaterThanOrEqual(2 * labels.length);
    // Below 700 pixels a cell is a row of flex items: its content must be one, not a column each.
    const flexItems = await cells.evaluateAll((nodes) =>
      nodes.map(
        (node) =>
          Array.from(node.childNodes).filter(
            (child) => child.nodeType === Node.ELEMENT_NODE || (child.textContent ?? '').trim() !== '',
          ).length,
      ),
    );
    expect(new Set(flexItems)).toEqual(new Set([1]));
    const emails = cells.locator('.muted');
    expect(new Set((await linesOf(emails)).map((lines) => lines.length))).toEqual(new Set([1]));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(phoneWidth);
    await page.context().close();

    const unbroken = await adminPage(phoneWidth, { isMobile: true }, unbrokenEmail);
    await unbroken.getByRole('table', { name: 'Recent activity' }).getByRole('row').nth(1).waitFor();
    expect(await unbroken.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      phoneWidth,
    );
    await unbroken.context().close();
  });
});
