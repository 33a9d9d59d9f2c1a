import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { isNotifyError, NotifyError } from '../../core/errors.js';
import { createNotifier } from '../../core/notifier.js';
import { readStatus } from '../support/api-requests.js';
import { testSeed } from '../support/test-seed.js';

// A second instance of the module, as an application gets when one of its parts requires the
// CommonJS build and another imports the ESM one: a class of its own, with the same name.
const otherCopy = (await import(
  // @ts-expect-error: the query makes Vite load the file as another module; the types are the file's.
  '../../core/errors.js?another-copy'
)) as typeof import('../../core/errors.js');

describe('the errors of another copy of the library', () => {
  it('are a class of their own, yet NotifyErrors to this copy, with their code', () => {
    const theirs = new otherCopy.NotifyError('unavailable', 'Storage is temporarily unavailable');
    expect(otherCopy.NotifyError).not.toBe(NotifyError);
    expect(theirs).toBeInstanceOf(NotifyError);
    expect(isNotifyError(theirs, 'unavailable')).toBe(true);
    expect(isNotifyError(theirs, 'not_found')).toBe(false);
    expect(new NotifyError('conflict', 'x')).toBeInstanceOf(otherCopy.NotifyError);
  });

  it('are not confused with other errors or look-alikes', () => {
    expect(new Error('unavailable')).not.toBeInstanceOf(NotifyError);
    expect(Object.assign(new Error('x'), { name: 'NotifyError', code: 'unavailable' })).not.toBeInstanceOf(
      NotifyError,
    );
    expect(isNotifyError({ code: 'unavailable', details: 'x' })).toBe(false);
    expect(isNotifyError(null)).toBe(false);
  });

  it('leave the subclasses an application derives their usual instanceof, and the prototype out', () => {
    class AppError extends NotifyError {}
    expect(new AppError('conflict', 'x')).toBeInstanceOf(AppError);
    expect(new AppError('conflict', 'x')).toBeInstanceOf(NotifyError);
    expect(new NotifyError('conflict', 'x')).not.toBeInstanceOf(AppError);
    expect(new otherCopy.NotifyError('conflict', 'x')).not.toBeInstanceOf(AppError);
    expect(NotifyError.prototype).not.toBeInstanceOf(NotifyError);
  });

  it('one of a code this copy does not know (a newer copy) is answered 500, not thrown on', async () => {
    const storage = memoryStorage();
    const newer = new otherCopy.NotifyError('payment_required' as 'conflict', 'A code of a later release');
    const requests = {
      ...storage.requests,
      getRequest: async () => {
        throw newer;
      },
    };
    const notifier = createNotifier({ storage: { ...storage, requests }, transports: [] });
    await notifier.seed(testSeed);
    const answer = await readStatus(notifier, 'req_AAAAAAAAAAAAAAAAAAAAAAAA');
    expect(answer?.status).toBe(500);
    expect(JSON.parse(answer?.body ?? '{}')).toEqual({ status: 'error', details: 'Internal server error' });
    await notifier.stop();
  });

  it('an unreachable store of the other copy is answered 503, not 500', async () => {
    const storage = memoryStorage();
    const requests = {
      ...storage.requests,
      getRequest: async () => {
        throw new otherCopy.NotifyError('unavailable', 'Storage is temporarily unavailable', {
          retryAfterSeconds: 1,
        });
      },
    };
    const notifier = createNotifier({ storage: { ...storage, requests }, transports: [] });
    await notifier.seed(testSeed);
    const answer = await readStatus(notifier, 'req_AAAAAAAAAAAAAAAAAAAAAAAA');
    expect(answer?.status).toBe(503);
    expect(answer?.headers['retry-after']).toBe('1');
    expect(JSON.parse(answer?.body ?? '{}')).toEqual({
      status: 'error',
      details: 'Storage is temporarily unavailable',
    });
    await notifier.stop();
  });
});
