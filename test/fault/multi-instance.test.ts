import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallbackReceiver, startReceiver } from '../support/callback-receiver.js';
import { redisAvailable, redisUrl } from '../support/redis.js';
import { type StandaloneProcess, startStandaloneProcess } from '../support/standalone-process.js';

/**
 * Three standalone hosts on one Redis, a local callback receiver, a few hundred interactive
 * requests with clicks spread over the hosts (some conflicting), a host killed with SIGKILL and
 * started again, and every Redis client connection killed once. Afterwards every request must be
 * finished exactly as its clicks and timeout dictate, with exactly one verified callback event.
 */
const available = await redisAvailable();
if (!available) {
  if (process.env.CI === 'true') throw new Error(`Redis must answer at ${redisUrl} under CI`);
  console.warn(`multi-instance fault test skipped: no Redis at ${redisUrl}`);
}

const apiKey = 'cnk_fault_test_key_0000000000000000000001';
const users = Array.from({ length: 8 }, (_, i) => `user${i}@fault.test`);
const requestCount = 240;
type Kind = 'all-answer' | 'one-answers' | 'silent' | 'conflict';
const kinds: Kind[] = ['all-answer', 'one-answers', 'silent', 'conflict'];

interface Planned {
  index: number;
  kind: Kind;
  mode: 'onUserAction' | 'onTimeout';
  recipients: [string, string];
  requestId: string;
  secret: string;
  /** The value each recipient should end with, from the clicks that were answered 200. */
  expected: Map<string, string>;
}

const json = { 'content-type': 'application/json' };
const outageStatuses: number[] = [];
const outageBodies: unknown[] = [];
let hosts: StandaloneProcess[] = [];
let receiver: CallbackReceiver;
let prefix: string;
let environment: Record<string, string>;

async function call(path: string, init: RequestInit = {}, start = 0): Promise<Response> {
  let lastError: unknown;
  for (let i = 0; i < hosts.length * 2; i += 1) {
    const host = hosts[(start + i) % hosts.length];
    if (!host || host.child.exitCode !== null || host.child.signalCode !== null) continue;
    try {
      const response = await fetch(`${host.base}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
      if (response.status !== 503) return response;
      lastError = new Error('503');
      await new Promise((r) => setTimeout(r, 200));
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function create(index: number): Promise<Planned> {
  const kind = kinds[index % kinds.length] ?? 'silent';
  const mode = index % 2 === 0 ? 'onUserAction' : 'onTimeout';
  const recipients: [string, string] = [
    users[index % users.length] ?? '',
    users[(index + 3) % users.length] ?? '',
  ];
  const response = await call(
    '/api/notify',
    {
      method: 'POST',
      headers: { ...json, 'x-api-key': apiKey, 'idempotency-key': `create-${index}` },
      body: JSON.stringify({
        user_emails: recipients,
        message: `Fault request #${index}`,
        external_reference_id: `ref-${index}`,
        response_request: {
          options: [
            { text: 'Yes', value: 'yes' },
            { text: 'No', value: 'no' },
          ],
          timeout_minutes: 1,
          disable: mode,
          callback_url: receiver.url(`/hook/${index}`),
        },
      }),
    },
    index,
  );
  expect(response.status).toBe(200);
  const body = (await response.json()) as { request_id: string; callback_secret: string };
  return {
    index,
    kind,
    mode,
    recipients,
    requestId: body.request_id,
    secret: body.callback_secret,
    expected: new Map(),
  };
}

async function messageId(recipient: string, index: number): Promise<string> {
  const response = await call(`/inbox/api/messages?email=${encodeURIComponent(recipient)}`);
  const messages = (await response.json()) as { id: string; text: string }[];
  const found = messages.find((m) => m.text === `Fault request #${index}`);
  if (!found) throw new Error(`no message #${index} for ${recipient}`);
  return found.id;
}

async function click(plan: Planned, recipient: string, value: string, hostIndex: number): Promise<number> {
  const id = await messageId(recipient, plan.index);
  const response = await call(
    `/inbox/api/messages/${id}/click`,
    { method: 'POST', headers: json, body: JSON.stringify({ value }) },
    hostIndex,
  );
  if (response.status === 200) plan.expected.set(recipient, value);
  return response.status;
}

async function clickAll(plan: Planned): Promise<void> {
  const [first, second] = plan.recipients;
  if (plan.kind === 'all-answer') {
    await Promise.all([click(plan, first, 'yes', plan.index), click(plan, second, 'no', plan.index + 1)]);
  } else if (plan.kind === 'one-answers') {
    await click(plan, first, 'no', plan.index + 2);
  } else if (plan.kind === 'conflict' && plan.mode === 'onUserAction') {
    // The same person clicks both buttons at once through two hosts: exactly one click may win.
    const statuses = await Promise.all([click(plan, first, 'yes', 0), click(plan, first, 'no', 1)]);
    expect([...statuses].sort()).toEqual([200, 409]);
  } else if (plan.kind === 'conflict') {
    expect(await click(plan, first, 'yes', 0)).toBe(200);
    expect(await click(plan, first, 'no', 2)).toBe(200);
  }
}

async function killRedisClients(): Promise<void> {
  const admin = createClient({ url: redisUrl });
  await admin.connect();
  await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes']);
  await admin.quit();
}

describe.skipIf(!available)('several instances on one Redis, with faults', () => {
  let plans: Planned[] = [];

  beforeAll(async () => {
    prefix = `fault-${randomUUID()}:`;
    receiver = await startReceiver();
    const dir = await mkdtemp(join(tmpdir(), 'fault-'));
    const seed = join(dir, 'seed.json');
    await writeFile(
      seed,
      JSON.stringify({
        organizations: [
          {
            id: 'fault',
            name: 'Fault Inc',
            users: [
              {
                email: 'ops@fault.test',
                name: 'Ops',
                role: 'admin',
                apiKeys: [{ label: 'fault', key: apiKey }],
              },
              ...users.map((email, i) => ({ email, name: `User ${i}` })),
            ],
          },
        ],
      }),
    );
    environment = {
      NOTIFY_STORAGE: redisUrl,
      NOTIFY_REDIS_PREFIX: prefix,
      NOTIFY_SEED: seed,
      NOTIFY_ALLOW_INSECURE_CALLBACKS: '1',
      // The test drives hundreds of requests through one key in seconds; limits are not under test here.
      NOTIFY_RATE_LIMIT_PER_KEY: '100000/100000',
      NOTIFY_RATE_LIMIT_PER_ORGANIZATION: '100000/100000',
      LOG_LEVEL: 'info',
    };
    hosts = await Promise.all([0, 1, 2].map(() => startStandaloneProcess(environment)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(hosts.map((host) => host.stop()));
    await receiver?.close();
    const admin = createClient({ url: redisUrl });
    await admin.connect();
    for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await admin.unlink(keys);
    }
    await admin.quit();
  }, 60_000);

  it('finishes every request as its clicks and timeout dictate, with one verified callback each', async () => {
    const half = requestCount / 2;
    const created: Planned[] = [];
    for (let i = 0; i < half; i += 12) {
      created.push(...(await Promise.all(Array.from({ length: 12 }, (_, j) => create(i + j)))));
    }
    for (let i = 0; i < created.length; i += 12) await Promise.all(created.slice(i, i + 12).map(clickAll));

    const victim = hosts[1];
    victim?.child.kill('SIGKILL');
    for (let i = half; i < requestCount; i += 12) {
      created.push(...(await Promise.all(Array.from({ length: 12 }, (_, j) => create(i + j)))));
    }
    hosts[1] = await startStandaloneProcess(environment);

    const second = created.slice(half);
    await Promise.all(second.slice(0, 40).map(clickAll));
    await killRedisClients();
    const burst = await Promise.all(
      hosts.flatMap((host) =>
        Array.from({ length: 10 }, () =>
          fetch(`${host.base}/api/notify/status/${created[0]?.requestId}`, {
            headers: { 'x-api-key': apiKey },
            signal: AbortSignal.timeout(10_000),
          }),
        ),
      ),
    );
    for (const response of burst) {
      outageStatuses.push(response.status);
      outageBodies.push(response.status === 503 ? await response.json() : null);
      if (response.status === 503) expect(response.headers.get('retry-after')).toBe('1');
    }
    for (let i = 40; i < second.length; i += 12) await Promise.all(second.slice(i, i + 12).map(clickAll));
    plans = created;

    expect(outageStatuses.every((status) => status === 200 || status === 503)).toBe(true);
    for (const body of outageBodies) {
      if (body !== null) expect(body).toEqual({ status: 'error', details: expect.any(String) });
    }

    const deadline = Date.now() + 200_000;
    const finalStatus = new Map<string, { status: string; responses: Record<string, unknown>[] }>();
    while (Date.now() < deadline && finalStatus.size < plans.length) {
      for (const plan of plans) {
        if (finalStatus.has(plan.requestId)) continue;
        const response = await call(`/api/notify/status/${plan.requestId}`, {
          headers: { 'x-api-key': apiKey },
        });
        const body = (await response.json()) as { status: string; responses: Record<string, unknown>[] };
        if (body.status === 'finished') finalStatus.set(plan.requestId, body);
      }
      if (finalStatus.size < plans.length) await new Promise((r) => setTimeout(r, 2_000));
    }
    expect(finalStatus.size).toBe(plans.length);

    for (const plan of plans) {
      const status = finalStatus.get(plan.requestId);
      expect(status?.responses.map((r) => r.user_email)).toEqual(plan.recipients);
      for (const entry of status?.responses ?? []) {
        const expected = plan.expected.get(String(entry.user_email)) ?? null;
        expect({ request: plan.index, value: entry.option_value, expired: entry.expired }).toEqual({
          request: plan.index,
          value: expected,
          expired: expected === null,
        });
      }
    }

    const callbackDeadline = Date.now() + 150_000;
    const distinct = () => new Set(receiver.received.map((r) => r.headers['webhook-id']));
    while (Date.now() < callbackDeadline && distinct().size < plans.length)
      await new Promise((r) => setTimeout(r, 1_000));
    for (const plan of plans) {
      const hits = receiver.received.filter((r) => r.body.includes(`"request_id":"${plan.requestId}"`));
      expect(hits.length, `callbacks of request #${plan.index}`).toBeGreaterThanOrEqual(1);
      expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(1);
      for (const hit of hits) {
        const event = new Webhook(plan.secret).verify(hit.body, hit.headers) as Record<string, unknown>;
        expect(event.responses).toEqual(finalStatus.get(plan.requestId)?.responses);
        expect(event.external_reference_id).toBe(`ref-${plan.index}`);
      }
    }
    expect(distinct().size).toBe(plans.length);
  }, 600_000);
});
