import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, NotifyClientError } from '../../client/index.js';
import { silentLogger } from '../../core/ports/logger.js';
import { type Standalone, startStandalone } from '../../examples/standalone/app.js';
import { readConfig } from '../../examples/standalone/config.js';
import { demoApiKey } from '../../examples/standalone/demo-seed.js';

let service: Standalone;
let base: string;
/** The paths the client asked the service for. */
const asked: string[] = [];
const countingFetch: typeof fetch = (input, init) => {
  asked.push(new URL(String(input)).pathname);
  return fetch(input, init);
};

beforeAll(async () => {
  const config = readConfig({
    PORT: '63541',
    HOST: '127.0.0.1',
    NOTIFY_STORAGE: 'memory',
    LOG_LEVEL: 'error',
  });
  service = await startStandalone(config, silentLogger);
  base = `http://127.0.0.1:${service.port}`;
});
afterAll(async () => {
  await service.close();
});

const client = () => createClient({ baseUrl: base, apiKey: demoApiKey, fetch: countingFetch });

/** What a call settles with: its rejection, or a failure of the test when it resolves. */
async function rejectionOf(pending: Promise<unknown>): Promise<unknown> {
  return pending.then(
    () => expect.unreachable('the call resolved'),
    (error: unknown) => error,
  );
}

describe('the client’s methods given what cannot be sent', () => {
  it('reject, without throwing where they are called, a body that JSON cannot write', async () => {
    asked.length = 0;
    const notify = client();
    let pending: Promise<unknown> | undefined;
    const circular: Record<string, unknown> = { user_emails: ['bob@acme.test'], message: 'x' };
    circular.loop = circular;
    for (const body of [
      { user_emails: ['bob@acme.test'], message: 'x', external_reference_id: 10n },
      circular,
      null,
    ]) {
      expect(() => {
        pending = notify.send(body as never);
      }).not.toThrow();
      expect(await rejectionOf(pending ?? Promise.resolve())).toBeInstanceOf(TypeError);
    }
    expect(asked).toEqual([]);
  });

  it('reject an empty request id, . and .., which name no id but steps in the path, before any call', async () => {
    asked.length = 0;
    const notify = client();
    for (const id of ['', '.', '..', '\uD800']) {
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = notify.status(id);
      }).not.toThrow();
      const error = await rejectionOf(pending ?? Promise.resolve());
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).toMatch(/requestId must be a request id/);
    }
    expect(asked).toEqual([]);
  });

  it('get the service’s 400 for every other malformed id, dots and escapes included', async () => {
    const notify = client();
    for (const id of ['req_123', '...', '%2e%2e', '%2E', './..', 'a/b', '?x', '#x']) {
      const error = await rejectionOf(notify.status(id));
      expect(error).toBeInstanceOf(NotifyClientError);
      expect(error).toMatchObject({ status: 400, details: 'Invalid request_id format' });
    }
  });
});
