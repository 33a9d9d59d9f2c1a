import { describe, expect, it } from 'vitest';
import { safeNextPath } from '../../account/http/next-path.js';

describe('the page to return to after sign-in', () => {
  it('keeps paths of this site', () => {
    expect(safeNextPath('/account')).toBe('/account');
    expect(safeNextPath('/admin/keys?search=bob')).toBe('/admin/keys?search=bob');
    expect(safeNextPath('/settings/account')).toBe('/settings/account');
    expect(safeNextPath('/admin/../account')).toBe('/account');
    expect(safeNextPath('/a/.//b')).toBe('/a//b');
  });

  it('refuses anything that leads to another site', () => {
    for (const next of [
      null,
      '',
      'account',
      'https://evil.test/',
      '//evil.test/account',
      '/\\evil.test',
      '/\t/evil.test',
      '/\n/evil.test',
      'javascript:alert(1)',
      ' /account',
      '/.//evil.test',
      '/..//evil.test',
      '/%2e//evil.test',
      '/%2E%2E//evil.test/account',
      '/a/..//evil.test',
      '/a/b/../..//evil.test?x=1',
    ]) {
      expect(safeNextPath(next), JSON.stringify(next)).toBeNull();
    }
  });
});
