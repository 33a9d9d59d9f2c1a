import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { interactiveBody } from '../support/api-requests.js';
import { startReceiver } from '../support/callback-receiver.js';
import { startStandaloneProcess } from '../support/standalone-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function start(environment: Record<string, string> = {}) {
  const running = await startStandaloneProcess(environment);
  children.push(running.child);
  return running;
}

const json = { 'content-type': 'application/json' };

/** A GET of `path` exactly as written (fetch would resolve its dot segments), and its JSON answer. */
async function rawGet(base: string, path: string): Promise<{ status: number; body: unknown }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) =>
    request(`${base}${path}`, { path }, resolve).on('error', reject).end(),
  );
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
}

describe('the standalone host', () => {
  it('serves the README walk-through with the demo organization and stops cleanly on SIGTERM', async () => {
    const { child, base, lines } = await start();
    const key = String(lines.find((l) => l.message === 'ready')?.demoApiKey);
    expect(key).toMatch(/^cnk_/);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });

    const plain = await fetch(`${base}/api/notify`, {
      method: 'POST',
      headers: { ...json, 'x-api-key': key },
      body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deploy of *v2.3* finished' }),
    });
    expect(await plain.json()).toMatchObject({
      status: 'ok',
      notification_id: expect.stringMatching(/^notif_/),
    });

    const interactive = await fetch(`${base}/api/notify`, {
      method: 'POST',
      headers: { ...json, 'x-api-key': key },
      body: JSON.stringify({
        user_emails: ['bob@acme.test'],
        message: 'Approve deploy of *v2.3*?',
        external_reference_id: 'deploy-42',
        response_request: {
          options: [
            { text: 'Approve', value: 'approve' },
            { text: 'Reject', value: 'reject' },
          ],
          timeout_minutes: 30,
        },
      }),
    });
    const { request_id: requestId } = (await interactive.json()) as { request_id: string };
    expect(requestId).toMatch(/^req_[A-Za-z0-9]{24}$/);

    const messages = (await (await fetch(`${base}/inbox/api/messages?email=bob@acme.test`)).json()) as {
      id: string;
      kind: string;
    }[];
    const message = messages.find((m) => m.kind === 'interactive');
    const click = await fetch(`${base}/inbox/api/messages/${message?.id}/click`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ value: 'approve' }),
    });
    expect(click.status).toBe(200);

    const status = await fetch(`${base}/api/notify/status/${requestId}`, { headers: { 'x-api-key': key } });
    expect(await status.json()).toMatchObject({
      status: 'finished',
      external_reference_id: 'deploy-42',
      responses: [{ user_email: 'bob@acme.test', option_value: 'approve', expired: false }],
    });

    const page = await fetch(`${base}/inbox`);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);

    const unknown = await fetch(`${base}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ status: 'error', details: 'No endpoint at /nowhere' });
    // fetch resolves dot segments before sending: node:http sends the path as written.
    for (const path of ['/api/x/../notify?x=1', '//api/notify', '/healthz/.']) {
      const answer = await rawGet(base, path);
      expect({ path, ...answer }).toEqual({
        path,
        status: 404,
        body: { status: 'error', details: `No endpoint at ${path.split('?')[0]}` },
      });
    }

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(lines.map((l) => l.message)).toContain('stopped');
  });

  it('loads organizations, users and hashed keys from NOTIFY_SEED', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const seedPath = join(dir, 'seed.json');
    const seedKey = 'cnk_alice_example_key_0000000000000001';
    await writeFile(
      seedPath,
      JSON.stringify({
        organizations: [
          {
            id: 'acme',
            name: 'Acme Inc',
            users: [
              {
                email: 'alice@acme.test',
                name: 'Alice Doe',
                role: 'admin',
                password: 'correct horse',
                apiKeys: [{ label: 'deploy bot', key: seedKey }],
              },
            ],
          },
        ],
      }),
    );
    const { base, lines } = await start({ NOTIFY_SEED: seedPath });
    expect(lines.find((l) => l.message === 'ready')).not.toHaveProperty('demoApiKey');
    const demo = await fetch(`${base}/api/notify/status/req_000000000000000000000000`, {
      headers: { 'x-api-key': 'cnk_demo_alice_0000000000000000000000001' },
    });
    expect(demo.status).toBe(401);
    const seeded = await fetch(`${base}/api/notify/status/req_000000000000000000000000`, {
      headers: { 'x-api-key': seedKey },
    });
    expect(seeded.status).toBe(404);
  });

  it('refuses to start with an invalid seed, saying why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const seedPath = join(dir, 'seed.json');
    await writeFile(seedPath, JSON.stringify({ organizations: [{ id: 'x' }] }));
    await expect(start({ NOTIFY_SEED: seedPath })).rejects.toThrow(
      `NOTIFY_SEED: ${seedPath} is no valid seed: `,
    );
  });

  it('refuses to start with a seed file it cannot read or parse, naming NOTIFY_SEED and the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const notJson = join(dir, 'seed.json');
    await writeFile(notJson, "{organizations: ['acme']}");
    const missing = join(dir, 'missing.json');
    for (const [path, why] of [
      [notJson, 'is not valid JSON'],
      [dir, 'could not be read'],
      [missing, 'could not be read'],
    ] as const) {
      await expect(start({ NOTIFY_SEED: path })).rejects.toThrow(`NOTIFY_SEED: ${path} ${why}`);
    }
  });

  it('limits failed authentications per forwarded client address with NOTIFY_TRUST_PROXY', async () => {
    const { base } = await start({ NOTIFY_TRUST_PROXY: '1' });
    const guess = (client: string) =>
      fetch(`${base}/api/notify/status/req_000000000000000000000000`, {
        headers: { 'x-api-key': 'cnk_guess', 'x-forwarded-for': client },
      }).then((response) => response.status);
    const clients = Array.from({ length: 25 }, (_, i) => `203.0.113.${i + 1}`);
    const spread: number[] = [];
    for (const client of clients) spread.push(await guess(client));
    expect(new Set(spread)).toEqual(new Set([401]));
    const repeated: number[] = [];
    for (const _ of clients) repeated.push(await guess('198.51.100.7'));
    expect(repeated).toContain(429);
  });

  it('refuses to start with a NOTIFY_TRUST_PROXY that is neither a hop count nor addresses, naming it', async () => {
    const refusal = await start({ NOTIFY_TRUST_PROXY: '10.0.0.0/8,proxy.internal' }).catch(
      (error: Error) => error.message,
    );
    expect(refusal).toMatch(/NOTIFY_TRUST_PROXY/);
    expect(refusal).toMatch(/"proxy\.internal"/);
  });

  it('delivers callbacks to local http targets only with NOTIFY_ALLOW_INSECURE_CALLBACKS=1, and warns at start-up', async () => {
    const receiver = await startReceiver();
    const body = (url: string) => interactiveBody(['carol@acme.test'], 5, 'Shift tonight?', url);
    const headers = { ...json, 'x-api-key': 'cnk_demo_alice_0000000000000000000000001' };

    const strict = await start();
    expect(strict.lines.some((l) => l.level === 'warn')).toBe(false);
    const refused = await fetch(`${strict.base}/api/notify`, {
      method: 'POST',
      headers,
      body: body(receiver.url()),
    });
    expect(refused.status).toBe(400);
    strict.child.kill('SIGTERM');

    const dev = await start({ NOTIFY_ALLOW_INSECURE_CALLBACKS: '1' });
    expect(dev.lines.find((l) => l.level === 'warn')?.message).toMatch(
      /NOTIFY_ALLOW_INSECURE_CALLBACKS is on/,
    );
    const sent = await fetch(`${dev.base}/api/notify`, {
      method: 'POST',
      headers,
      body: body(receiver.url()),
    });
    const { request_id: requestId, callback_secret: secret } = (await sent.json()) as Record<string, string>;
    expect(secret).toMatch(/^whsec_/);
    const [message] = (await (
      await fetch(`${dev.base}/inbox/api/messages?email=carol@acme.test`)
    ).json()) as { id: string }[];
    await fetch(`${dev.base}/inbox/api/messages/${message?.id}/click`, {
      method: 'POST',
      headers: json,
      body: '{"value":"yes"}',
    });
    for (let i = 0; i < 50 && receiver.received.length === 0; i += 1)
      await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]?.body ?? '{}')).toMatchObject({
      request_id: requestId,
      status: 'finished',
    });
    await receiver.close();
  });
});
