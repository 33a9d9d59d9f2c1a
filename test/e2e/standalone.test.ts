import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';

interface Running {
  child: ChildProcess;
  base: string;
  lines: Record<string, unknown>[];
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts the standalone host as `npm start` does, on a free port, and waits for its "listening" line. */
async function start(environment: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/standalone/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...environment },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    reader.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry.message === 'listening') resolve(entry);
      if (entry.message === 'could not start') reject(new Error(String(entry.error)));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
  const entry = await listening;
  return { child, base: `http://127.0.0.1:${entry.port}`, lines };
}

const json = { 'content-type': 'application/json' };

describe('the standalone host', () => {
  it('serves the README walk-through with the demo organization and stops cleanly on SIGTERM', async () => {
    const { child, base, lines } = await start();
    const key = String(lines.find((l) => l.message === 'listening')?.demoApiKey);
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
    expect(lines.find((l) => l.message === 'listening')).not.toHaveProperty('demoApiKey');
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
    await expect(start({ NOTIFY_SEED: seedPath })).rejects.toThrow(/Invalid seed/);
  });
});
