import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { redisStorage } from '../../adapters/storage/redis/index.js';
import { signedInBrowser, startAccountApp } from '../support/account-app.js';
import { redisAvailable, redisUrl } from '../support/redis.js';
import { call, expectError } from './client.js';

const withRedis = await redisAvailable();
if (!withRedis) console.warn(`account pages on two instances skipped: no Redis answers at ${redisUrl}`);
const keyPrefix = `chat-notify-test:${randomUUID()}:`;
const clients = withRedis ? [createClient({ url: redisUrl }), createClient({ url: redisUrl })] : [];
for (const client of clients) {
  client.on('error', () => undefined);
  await client.connect();
}

afterAll(async () => {
  const [client] = clients;
  if (client) {
    for await (const keys of client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
  }
  for (const each of clients) each.destroy();
});

describe.skipIf(!withRedis)('the account pages on two instances sharing one Redis', () => {
  it('revokes on one instance and the other refuses the key on its next request; both share the record and tokens', async () => {
    const [clientA, clientB] = clients;
    if (!clientA || !clientB) throw new Error('no Redis clients');
    const first = await startAccountApp('express', { storage: redisStorage({ client: clientA, keyPrefix }) });
    const second = await startAccountApp('koa', { storage: redisStorage({ client: clientB, keyPrefix }) });
    try {
      const alice = await signedInBrowser(first, 'alice@acme.test');
      const post = (base: string, path: string, body?: unknown) =>
        call(`${base}${path}`, {
          method: 'POST',
          headers: {
            cookie: alice.cookie,
            'x-csrf-token': alice.csrfToken,
            'content-type': 'application/json',
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const notify = (origin: string, apiKey: string) =>
        call(`${origin}/api/notify`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ user_emails: ['bob@acme.test'], message: 'Deployed' }),
        });

      const created = await post(first.pagesUrl, '/account/api/keys', { label: 'made on the first' });
      expect(created.status).toBe(201);
      const { api_key: apiKey, key } = created.json as { api_key: string; key: { id: string } };
      expect((await notify(second.origin, apiKey)).status).toBe(200);

      expect((await post(first.pagesUrl, `/account/api/keys/${key.id}/revoke`)).status).toBe(200);
      expectError(await notify(second.origin, apiKey), 401, 'Invalid API key');
      expectError(await notify(first.origin, apiKey), 401, 'Invalid API key');

      // A token handed out by the first instance holds on the second: the CSRF secret is shared.
      const other = await post(second.pagesUrl, '/account/api/keys', { label: 'made on the second' });
      expect(other.status).toBe(201);
      const otherId = (other.json as { key: { id: string } }).key.id;
      expect((await post(second.pagesUrl, `/admin/api/keys/${otherId}/revoke`)).status).toBe(200);

      const audit = await call(`${first.pagesUrl}/admin/api/audit`, { headers: { cookie: alice.cookie } });
      const entries = (audit.json as { entries: { action: string; key: { label: string } }[] }).entries;
      expect(entries.map((entry) => `${entry.action} ${entry.key.label}`)).toEqual([
        'revoke made on the second',
        'create made on the second',
        'revoke made on the first',
        'create made on the first',
      ]);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
