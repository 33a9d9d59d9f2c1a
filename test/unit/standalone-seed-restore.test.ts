import { describe, expect, it } from 'vitest';
import { seedRestore } from '../../examples/standalone/seed-restore.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { until } from '../support/until.js';

describe('the standalone service loading its seed again when the storage is back', () => {
  it('loads nothing when the storage still holds the seed (a connection lost, the data kept)', async () => {
    let loads = 0;
    let checks = 0;
    const restore = seedRestore({
      present: async () => {
        checks += 1;
        return true;
      },
      load: async () => {
        loads += 1;
      },
      logger: capturingLogger(),
    });
    restore.restored();
    await until(() => checks === 1, 1000);
    expect(loads).toBe(0);
  });

  it('loads it when it is gone, trying again until a load succeeds, one restore at a time', async () => {
    const logger = capturingLogger();
    let loads = 0;
    let loaded = false;
    const restore = seedRestore({
      present: async () => loaded,
      load: async () => {
        loads += 1;
        if (loads < 3) throw new Error('OOM command not allowed');
        loaded = true;
      },
      logger,
    });
    restore.restored();
    restore.restored();
    await until(() => loaded, 3000);
    expect(loads).toBe(3);
    expect(logger.entries.map((entry) => entry.message)).toEqual([
      'seed could not be loaded again; retrying',
      'seed could not be loaded again; retrying',
      'seed loaded again: the storage came back without it',
    ]);
  });

  it('tries no more once the service stops', async () => {
    let loads = 0;
    const restore = seedRestore({
      present: async () => false,
      load: async () => {
        loads += 1;
        throw new Error('connection lost');
      },
      logger: capturingLogger(),
    });
    restore.restored();
    await until(() => loads === 1, 1000);
    restore.stop();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(loads).toBe(1);
  });
});
