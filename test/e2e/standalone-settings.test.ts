import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startStandaloneProcess } from '../support/standalone-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function start(environment: Record<string, string>) {
  const running = await startStandaloneProcess(environment, { timeoutMs: 10_000 });
  children.push(running.child);
  return running;
}

describe('the standalone service started with settings in error (README.md#the-standalone-service)', () => {
  it('refuses a rate limit too large to represent at once, naming it, before the storage answers', async () => {
    // Nothing listens there: a start that got as far as the storage would wait for it.
    await expect(
      start({ NOTIFY_STORAGE: 'redis://127.0.0.1:63001', NOTIFY_RATE_LIMIT_PER_KEY: `${'9'.repeat(400)}/1` }),
    ).rejects.toThrow(/must be a number small enough to represent[\s\S]*NOTIFY_RATE_LIMIT_PER_KEY/);
  });

  it('warns of each variable named like a setting that is none', async () => {
    const running = await start({ NOTIFY_STORGE: 'redis://127.0.0.1:63001', NOTIFY_RETENTON_DAYS: '1' });
    const warned = running.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    // Contained rather than equal: the variables of the test's own environment reach the service too.
    expect(warned).toEqual(
      expect.arrayContaining([
        'NOTIFY_RETENTON_DAYS is no setting of the service: ignoring it (misspelled?)',
        'NOTIFY_STORGE is no setting of the service: ignoring it (misspelled?)',
      ]),
    );
    expect(await running.stop()).toBe(0);
  });
});
