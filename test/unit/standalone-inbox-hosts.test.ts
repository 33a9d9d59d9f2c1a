import { describe, expect, it } from 'vitest';
import type { HttpRequest, Route } from '../../core/http/types.js';
import { chatTransports } from '../../examples/standalone/chat-transports.js';
import { readConfig } from '../../examples/standalone/config.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The status the inbox's users route answers for a `Host` header, before any notifier connects it. */
async function statusFor(environment: NodeJS.ProcessEnv, host: string): Promise<number> {
  const [inbox] = await chatTransports(readConfig(environment), { organizations: [] }, quiet);
  const route = inbox?.routes?.find((candidate: Route) => candidate.path === '/inbox/api/users');
  if (!route) throw new Error('the inbox serves no users route');
  const request: HttpRequest = {
    method: 'GET',
    path: '/inbox/api/users',
    query: new URLSearchParams(),
    headers: { host },
    body: new Uint8Array(),
    clientAddress: '127.0.0.1',
  };
  // 503: answered, the transport not being connected yet; 403: refused for its host.
  return (await route.handle(request, {})).status;
}

describe('NOTIFY_INBOX_HOSTS (README.md#the-local-inbox)', () => {
  it('reads * as any host, and names separated by commas', () => {
    expect(readConfig({ NOTIFY_INBOX_HOSTS: ' * ' }).NOTIFY_INBOX_HOSTS).toBe(true);
    expect(readConfig({ NOTIFY_INBOX_HOSTS: 'inbox.example.com, dev.internal' }).NOTIFY_INBOX_HOSTS).toEqual([
      'inbox.example.com',
      'dev.internal',
    ]);
  });

  it('reads true as any host, as * (README.md#the-local-inbox), not as a host named "true"', async () => {
    expect(readConfig({ NOTIFY_INBOX_HOSTS: 'true' }).NOTIFY_INBOX_HOSTS).toBe(true);
    expect(readConfig({ NOTIFY_INBOX_HOSTS: ' true ' }).NOTIFY_INBOX_HOSTS).toBe(true);
    expect(await statusFor({ NOTIFY_INBOX_HOSTS: 'true' }, 'other.example.com')).toBe(503);
  });

  it.each(['https://inbox.example.com', 'inbox.example.com:3000', 'a,,b', 'in box'])(
    'refuses %s at start, naming the setting',
    async (value) => {
      await expect(statusFor({ NOTIFY_INBOX_HOSTS: value }, 'localhost')).rejects.toThrow(
        /^Invalid environment: NOTIFY_INBOX_HOSTS: inboxTransport: allowedHosts holds ".*", which is no host name/,
      );
    },
  );

  it('takes the names the inbox takes, underscores included', async () => {
    expect(await statusFor({ NOTIFY_INBOX_HOSTS: 'inbox_1.example' }, 'inbox_1.example')).toBe(503);
  });

  it('warns that it is ignored when the inbox is off', async () => {
    const warnings: string[] = [];
    const logger = { ...quiet, warn: (message: string) => void warnings.push(message) };
    const settings = readConfig({
      NOTIFY_INBOX: '0',
      SLACK_SIGNING_SECRET: 's',
      NOTIFY_INBOX_HOSTS: 'a.example',
    });
    await chatTransports(settings, { organizations: [] }, logger);
    expect(warnings).toContain('The local inbox is off (NOTIFY_INBOX=0): ignoring NOTIFY_INBOX_HOSTS');
  });

  it('lets the inbox answer only localhost and IP addresses when unset', async () => {
    expect(await statusFor({}, 'localhost:3000')).toBe(503);
    expect(await statusFor({}, '192.168.1.20:3000')).toBe(503);
    expect(await statusFor({}, 'rebind.attacker.example')).toBe(403);
  });

  it('lets the inbox answer the names it lists, or any with *', async () => {
    expect(await statusFor({ NOTIFY_INBOX_HOSTS: 'inbox.example.com' }, 'inbox.example.com')).toBe(503);
    expect(await statusFor({ NOTIFY_INBOX_HOSTS: 'inbox.example.com' }, 'other.example.com')).toBe(403);
    expect(await statusFor({ NOTIFY_INBOX_HOSTS: '*' }, 'other.example.com')).toBe(503);
  });

  it('lets the inbox answer the name HOST listens on, which its log gives the inbox address with', async () => {
    expect(await statusFor({ HOST: 'devbox.lan' }, 'devbox.lan:3000')).toBe(503);
    expect(await statusFor({ HOST: '0.0.0.0' }, 'devbox.lan:3000')).toBe(403);
    expect(await statusFor({ HOST: '::' }, 'devbox.lan:3000')).toBe(403);
  });

  it('leaves out a HOST the inbox takes for no name, rather than blame NOTIFY_INBOX_HOSTS', async () => {
    expect(await statusFor({ HOST: 'devbox-' }, 'localhost')).toBe(503);
  });
});
