import { describe, expect, it } from 'vitest';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier } from '../../core/notifier.js';
import { idempotencyKeyPattern } from '../../core/schemas/idempotency-key.js';
import { plainBody, post } from '../support/api-requests.js';
import { testSeed } from '../support/test-seed.js';

describe('the Idempotency-Key format', () => {
  it.each(['a', 'deploy 42, retry', `!${'x'.repeat(253)}~`])('admits %j', (key) => {
    expect(idempotencyKeyPattern.test(key)).toBe(true);
  });

  it.each([' ', ' a', 'a ', '', 'x'.repeat(256), 'caf\u00e9', 'a\tb'])('refuses %j', (key) => {
    expect(idempotencyKeyPattern.test(key)).toBe(false);
  });

  it('refuses a key with a space at an end handed to the handler by an embedding host, which HTTP would have dropped', async () => {
    const notifier = createNotifier({ storage: memoryStorage(), transports: [inboxTransport()] });
    await notifier.seed(testSeed);
    const answer = await post(notifier, plainBody(), { 'idempotency-key': 'deploy-42 ' });
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer?.body ?? '{}')).toEqual({
      status: 'error',
      details: 'Idempotency-Key: must be 1 to 255 printable ASCII characters, without spaces at either end',
    });
    await notifier.stop();
  });
});
