import { describe, expect, it } from 'vitest';
import { NotifyError } from '../../core/errors.js';

describe('NotifyError stacks', () => {
  it.each(['not_found', 'unauthenticated', 'rate_limited', 'invalid_request'] as const)(
    'captures no stack frames for a routine %s answer',
    (code) => {
      const error = new NotifyError(code, 'routine');
      expect(error.stack).not.toMatch(/\n\s+at /);
      expect(error.details).toBe('routine');
    },
  );

  it.each(['internal', 'unavailable', 'delivery_failed'] as const)('keeps the stack of %s', (code) => {
    expect(new NotifyError(code, 'failure').stack).toMatch(/\n\s+at /);
  });

  it('leaves the stack trace limit of other errors as it was', () => {
    const before = Error.stackTraceLimit;
    new NotifyError('not_found', 'x');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('plain').stack).toMatch(/\n\s+at /);
  });
});
