import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import type { Organization, User } from '../../core/domain/directory.js';
import type { MessageView } from '../../core/domain/message-view.js';
import { errorResponse } from '../../core/http/responses.js';
import type { HttpResponse, Route } from '../../core/http/types.js';
import { parseMarkdown } from '../../core/markdown/parse.js';
import type {
  ChatDelivery,
  ChatSink,
  ChatTransport,
  Click,
  ClickOutcome,
} from '../../core/ports/chat-transport.js';
import type { DeliveryRecord, DeliveryRef } from '../../core/ports/delivery-store.js';
import { chromiumArgs, chromiumPath, hasChromium, skipWithoutChromium } from '../support/chromium.js';

const skip = skipWithoutChromium('the inbox page browser test');

/** The hosts may mount the inbox anywhere; a prefix proves the page finds its API from its own path. */
const mount = '/dev/notify';

const organization: Organization = { id: 'acme', name: 'Acme Inc' };
const user = (email: string, name: string): User => ({
  id: `user_${email}`,
  organizationId: organization.id,
  email,
  name,
  role: 'member',
  chatLinks: [],
});
const users = [user('bob@acme.test', 'Bob Builder'), user('alice@acme.test', 'Alice Doe')];

const view = (overrides: Partial<MessageView> & Pick<MessageView, 'text'>): MessageView => ({
  kind: 'interactive',
  sendId: 'req_E2EE2EE2EE2EE2EE2EE2EE2E',
  version: 0,
  document: parseMarkdown(overrides.text),
  buttons: [
    { text: 'Approve', value: 'approve' },
    { text: 'Reject <b>now</b>', value: 'reject' },
  ],
  buttonsEnabled: true,
  selected: null,
  selectedText: null,
  state: 'open',
  expiresAt: Date.UTC(2100, 0, 1),
  footer: 'Valid for 60 minutes · sent by Bob Builder',
  ...overrides,
});

/**
 * Stands in for the core: records each click, answers `accepted`, and updates the clicked copy as
 * the core does in `onUserAction` mode (buttons off, choice shown).
 */
class UpdatingSink implements ChatSink {
  readonly clicks: Click[] = [];
  readonly delivered = new Map<string, { delivery: ChatDelivery; ref: DeliveryRef }>();
  readonly state = memoryStorage().transportState;

  constructor(private readonly transport: ChatTransport) {}

  async click(click: Click): Promise<ClickOutcome> {
    this.clicks.push(click);
    const copy = this.delivered.get(`${click.requestId} ${click.recipient}`);
    if (copy === undefined) return 'not-found';
    const chosen = copy.delivery.message.buttons.find((button) => button.value === click.value);
    if (chosen === undefined) return 'unknown-option';
    const message: MessageView = {
      ...copy.delivery.message,
      buttonsEnabled: false,
      selected: chosen.value,
      selectedText: chosen.text,
      state: 'answered',
      footer: `Answered: ${chosen.text}`,
    };
    await this.transport.update({ ...copy.delivery, message }, copy.ref);
    return 'accepted';
  }

  async listUsers(): Promise<User[]> {
    return users;
  }

  async view(sendId: string, recipient: string): Promise<MessageView | null> {
    return this.delivered.get(`${sendId} ${recipient}`)?.delivery.message ?? null;
  }

  async copies(sendId: string): Promise<DeliveryRecord[]> {
    return [...this.delivered.values()]
      .filter(({ delivery }) => delivery.message.sendId === sendId)
      .map(({ delivery, ref }) => ({
        sendId,
        recipient: delivery.recipient,
        platform: 'inbox',
        ref,
        deliveredAt: 0,
      }));
  }

  async deliver(recipient: string, message: MessageView): Promise<void> {
    const delivery: ChatDelivery = {
      organization,
      recipient,
      address: { installationId: 'local', userRef: recipient },
      message,
    };
    const ref = await this.transport.deliver(delivery);
    if (message.kind === 'interactive')
      this.delivered.set(`${message.sendId} ${recipient}`, { delivery, ref });
  }
}

async function readBody(request: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [index, segment] of want.entries()) {
    const actual = got[index] ?? '';
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(actual);
    else if (segment !== actual) return null;
  }
  return params;
}

/** A host in miniature: turns node's request into the framework-neutral one and back. */
async function dispatch(routes: readonly Route[], request: IncomingMessage): Promise<HttpResponse> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (!url.pathname.startsWith(`${mount}/`)) return errorResponse(404, 'Not found');
  const path = url.pathname.slice(mount.length);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  const method = (request.method ?? 'GET').toUpperCase();
  const body = await readBody(request);
  for (const route of routes) {
    const params = route.method === method ? matchPath(route.path, path) : null;
    if (params === null) continue;
    return route.handle(
      {
        method,
        path,
        query: url.searchParams,
        headers,
        body,
        clientAddress: request.socket.remoteAddress ?? '',
      },
      params,
    );
  }
  return errorResponse(404, 'Not found');
}

function serve(routes: readonly Route[]): Promise<Server> {
  const server = createServer((request, response: ServerResponse) => {
    dispatch(routes, request)
      .catch(() => errorResponse(500, 'Internal error'))
      .then((answer) => {
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
      });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe.skipIf(skip)('inbox page in a real browser', () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let sink: UpdatingSink;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`${chromiumPath} is required in CI (apt-get install -y chromium)`);
    const transport = inboxTransport();
    sink = new UpdatingSink(transport);
    transport.connect(sink);
    await sink.deliver(
      'alice@acme.test',
      view({
        kind: 'plain',
        sendId: 'notif_E2EE2EE2EE2EE2EE2EE2EE2E',
        text: 'Hi <script>window.inboxPwned = true</script><img src=x onerror="window.inboxPwned = true">',
        buttons: [],
        buttonsEnabled: false,
        state: 'plain',
        footer: null,
      }),
    );
    await sink.deliver('alice@acme.test', view({ text: 'Deploy *v2* to production?' }));
    await sink.deliver(
      'bob@acme.test',
      view({ sendId: 'req_BobBobBobBobBobBobBobBob', text: 'For Bob only' }),
    );
    await sink.deliver(
      'bob@acme.test',
      view({
        sendId: 'req_LongLongLongLongLongLong',
        text: 'A label of 75 characters without a space',
        buttons: [
          { text: 'W'.repeat(75), value: 'wide' },
          { text: 'No', value: 'no' },
        ],
      }),
    );
    server = await serve(transport.routes);

    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    page = await browser.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
  });

  /** Delivers `message` to `email` and waits until the page `tab` shows it, its feed redrawn. */
  async function arrives(tab: Page, email: string, message: MessageView): Promise<void> {
    const count = await tab.locator('article.msg').count();
    await sink.deliver(email, message);
    await expect.poll(() => tab.locator('article.msg').count(), { timeout: 10_000 }).toBe(count + 1);
  }

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  it('shows a user’s messages, takes a click through the sink and shows the choice', async () => {
    const { port } = server.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}${mount}/inbox`);

    await page.locator('#user option[value="alice@acme.test"]').waitFor({ state: 'attached' });
    expect(await page.locator('#user option').allTextContents()).toEqual([
      'Choose a user…',
      'Alice Doe <alice@acme.test>',
      'Bob Builder <bob@acme.test>',
    ]);
    await page.selectOption('#user', 'alice@acme.test');

    const messages = page.locator('article.msg');
    await expect.poll(() => messages.count()).toBe(2);
    const question = messages.nth(1);
    expect(await question.locator('.content strong').textContent()).toBe('v2');
    const buttons = question.locator('.actions button');
    expect(await buttons.allTextContents()).toEqual(['Approve', 'Reject <b>now</b>']);
    expect(await question.locator('.footer').textContent()).toBe(
      'Valid for 60 minutes · sent by Bob Builder',
    );

    const greeting = messages.nth(0);
    expect(await greeting.locator('.content').textContent()).toContain(
      '<script>window.inboxPwned = true</script>',
    );
    expect(await page.evaluate(() => 'inboxPwned' in window)).toBe(false);

    await buttons.filter({ hasText: 'Approve' }).click();

    await question.locator('.choice').waitFor();
    expect(await question.locator('.choice').textContent()).toBe('Your answer: Approve');
    expect(await question.locator('.actions button').count()).toBe(0);
    expect(await question.locator('.footer').textContent()).toBe('Answered: Approve');
    expect(sink.clicks).toEqual([
      { requestId: 'req_E2EE2EE2EE2EE2EE2EE2EE2E', recipient: 'alice@acme.test', value: 'approve' },
    ]);

    await page.selectOption('#user', 'bob@acme.test');
    await expect
      .poll(() => page.locator('article.msg .content').allTextContents())
      .toEqual(['For Bob only', 'A label of 75 characters without a space']);

    expect(await page.evaluate(() => 'inboxPwned' in window)).toBe(false);
    expect(problems).toEqual([]);
  });

  it('fits a phone: a 75-character label without a space wraps inside its button', async () => {
    const { port } = server.address() as AddressInfo;
    const phone = await browser.newPage({ viewport: { width: 375, height: 800 } });
    await phone.goto(`http://127.0.0.1:${port}${mount}/inbox`);
    await phone.locator('#user option[value="bob@acme.test"]').waitFor({ state: 'attached' });
    await phone.selectOption('#user', 'bob@acme.test');
    await phone.locator('.actions button', { hasText: 'W'.repeat(75) }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await phone.close();
  });

  it('keeps keyboard focus on its message when the feed is drawn again, and after a click', async () => {
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox`);
    await tab.locator('#user option[value="bob@acme.test"]').waitFor({ state: 'attached' });
    await tab.selectOption('#user', 'bob@acme.test');
    const long = tab.locator('article.msg').filter({ hasText: 'A label of 75 characters' });
    await long.locator('.actions button', { hasText: 'No' }).focus();
    const focused = () =>
      tab.evaluate(() => {
        const active = document.activeElement;
        return {
          tag: active?.tagName,
          text: active?.textContent,
          message: active?.closest('article')?.dataset.id,
        };
      });
    const before = await focused();
    expect(before).toMatchObject({ tag: 'BUTTON', text: 'No' });
    // A new message redraws the whole feed.
    await sink.deliver(
      'bob@acme.test',
      view({ sendId: 'req_NewNewNewNewNewNewNewNew', text: 'Another question' }),
    );
    await expect.poll(() => tab.locator('article.msg').count(), { timeout: 10_000 }).toBe(3);
    expect(await focused()).toEqual(before);
    // Answered with the keyboard: its buttons go, and focus stays with the message.
    await tab.keyboard.press('Enter');
    await long.locator('.choice').waitFor();
    expect(await focused()).toMatchObject({ tag: 'ARTICLE', message: before.message });
    await tab.close();
  });

  it('keeps a long line of code inside its message on a phone, where it scrolls', async () => {
    await sink.deliver(
      'alice@acme.test',
      view({
        kind: 'plain',
        sendId: 'notif_CodeCodeCodeCodeCodeCode',
        text: `Log:\n\n\`\`\`\n${'x'.repeat(200)}\n\`\`\``,
        buttons: [],
        buttonsEnabled: false,
        state: 'plain',
        footer: null,
      }),
    );
    const { port } = server.address() as AddressInfo;
    const phone = await browser.newPage({ viewport: { width: 360, height: 800 } });
    await phone.goto(`http://127.0.0.1:${port}${mount}/inbox#alice%40acme.test`);
    await phone.locator('article.msg pre').waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const code = phone.locator('article.msg pre');
    expect(await code.evaluate((node) => node.scrollWidth > node.clientWidth)).toBe(true);
    await phone.close();
  });

  it('names each group of answers by its message, and says arrivals in the status line rather than redrawing a live feed', async () => {
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox#bob%40acme.test`);
    const question = tab.locator('article.msg').filter({ hasText: 'For Bob only' });
    await question.waitFor();
    expect(await tab.locator('#feed').getAttribute('aria-live')).toBeNull();
    const group = question.getByRole('group', { name: 'Answer' });
    const describedBy = (await group.getAttribute('aria-describedby')) ?? '';
    expect(await tab.locator(`[id="${describedBy}"]`).textContent()).toBe('For Bob only');
    await arrives(tab, 'bob@acme.test', view({ sendId: 'req_ArrivedArrivedArrivedAr', text: 'Arrived' }));
    expect(await tab.getByRole('status').textContent()).toBe('A new message');
    await tab.close();
  });

  it('puts focus back on the same option when two share a label', async () => {
    await sink.deliver(
      'alice@acme.test',
      view({
        sendId: 'req_SameSameSameSameSameSame',
        text: 'Which one?',
        buttons: [
          { text: 'Same', value: 'a' },
          { text: 'Same', value: 'b' },
        ],
      }),
    );
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox#alice%40acme.test`);
    const question = tab.locator('article.msg').filter({ hasText: 'Which one?' });
    await question.locator('.actions button').nth(1).focus();
    await arrives(tab, 'alice@acme.test', view({ sendId: 'req_RedrawRedrawRedrawRedra', text: 'Redraw' }));
    expect(await tab.evaluate(() => (document.activeElement as HTMLButtonElement | null)?.value)).toBe('b');
    await tab.close();
  });

  it('serves the page at /inbox/ too, and shows the user a changed address names', async () => {
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox/#alice%40acme.test`);
    await tab.locator('article.msg').first().waitFor();
    expect(await tab.locator('#user').inputValue()).toBe('alice@acme.test');
    await tab.evaluate(() => {
      location.hash = '#bob%40acme.test';
    });
    await expect.poll(() => tab.locator('#user').inputValue()).toBe('bob@acme.test');
    await expect.poll(() => tab.locator('article.msg .content').allTextContents()).toContain('For Bob only');
    await tab.close();
  });

  it('wraps a footer and a status line that quote a 75-character label on a phone', async () => {
    const label = 'Z'.repeat(75);
    await sink.deliver(
      'alice@acme.test',
      view({
        sendId: 'req_QuoteQuoteQuoteQuoteQuot',
        text: 'Pick the long one',
        buttons: [
          { text: label, value: 'long' },
          { text: 'Short', value: 'short' },
        ],
      }),
    );
    const { port } = server.address() as AddressInfo;
    const phone = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await phone.goto(`http://127.0.0.1:${port}${mount}/inbox#alice%40acme.test`);
    const question = phone.locator('article.msg').filter({ hasText: 'Pick the long one' });
    await question.locator('.actions button', { hasText: label }).click();
    await question.locator('.footer', { hasText: `Answered: ${label}` }).waitFor();
    await phone.locator('#status', { hasText: `Answer sent: ${label}` }).waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const fits = (node: Element) => node.scrollWidth <= node.clientWidth;
    expect(await question.locator('.footer').evaluate(fits)).toBe(true);
    expect(await phone.locator('#status').evaluate(fits)).toBe(true);
    await phone.close();
  });

  it('shows the user an address names in another case, as the API matches it', async () => {
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox#ALICE@Acme.TEST`);
    await expect.poll(() => tab.locator('#user').inputValue()).toBe('alice@acme.test');
    await tab.locator('article.msg').first().waitFor();
    await tab.evaluate(() => {
      location.hash = '#%20Bob%40ACME.test';
    });
    await expect.poll(() => tab.locator('#user').inputValue()).toBe('bob@acme.test');
    await expect.poll(() => tab.locator('article.msg .content').allTextContents()).toContain('For Bob only');
    await tab.close();
  });

  it('gives up on a request the server does not answer within 10 seconds, and polls on', async () => {
    const { port } = server.address() as AddressInfo;
    const tab = await browser.newPage();
    await tab.goto(`http://127.0.0.1:${port}${mount}/inbox#bob%40acme.test`);
    await tab.locator('article.msg').first().waitFor();
    // A server that stalls: the request is held and never answered.
    await tab.route('**/inbox/api/users', () => undefined);
    await expect
      .poll(() => tab.locator('#status').textContent(), { timeout: 15_000 })
      .toBe('Cannot reach the inbox: no answer within 10 seconds');
    await tab.unroute('**/inbox/api/users');
    await expect.poll(() => tab.locator('#status').textContent(), { timeout: 5_000 }).toBe('Connected again');
    await tab.close();
  }, 30_000);
});
