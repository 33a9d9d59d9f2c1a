import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRouter } from '../../core/http/router.js';
import type { Route } from '../../core/http/types.js';

const route = (method: Route['method'], path: string): Route => ({
  method,
  path,
  handle: async () => ({ status: 200, headers: {}, body: `${method} ${path}` }),
});

const routes = [
  route('POST', '/api/notify'),
  route('GET', '/api/notify/status/:requestId'),
  route('GET', '/openapi.json'),
  route('GET', '/inbox'),
  route('GET', '/inbox/api/messages'),
  route('POST', '/inbox/api/messages/:id/click'),
  route('GET', '/'),
  route('GET', '/a/:x/:y'),
];
const router = createRouter(routes);

/**
 * The rules of the router stated plainly, over the path split into its segments: what the router,
 * which walks the path in place, must answer for every path.
 */
function expected(method: string, path: string): string | null {
  const segments = path.slice(1).split('/');
  const allowed: string[] = [];
  for (const candidate of routes) {
    const pattern = candidate.path.slice(1).split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((segment, index) => {
      const actual = segments[index] ?? '';
      if (!segment.startsWith(':')) return segment === actual;
      let decoded = actual;
      try {
        decoded = decodeURIComponent(actual);
      } catch {
        // Kept as received, as the router does.
      }
      params[segment.slice(1)] = decoded;
      return decoded !== '' && decoded !== '.' && decoded !== '..';
    });
    if (!matches) continue;
    if (candidate.method === method || (candidate.method === 'GET' && method === 'HEAD')) {
      return `${candidate.path} ${JSON.stringify(params)}`;
    }
    for (const served of candidate.method === 'GET' ? ['GET', 'HEAD'] : [candidate.method]) {
      if (!allowed.includes(served)) allowed.push(served);
    }
  }
  return allowed.length === 0 ? null : `405 ${allowed.join(', ')}`;
}

function answered(method: string, path: string): string | null {
  const match = router(method, path);
  if (match === null) return null;
  if ('refusal' in match) return `405 ${match.refusal.headers.allow}`;
  return `${match.route.path} ${JSON.stringify(match.params)}`;
}

describe('the router', () => {
  it('matches literals byte for byte and percent-decodes parameters', () => {
    expect(answered('GET', '/api/notify/status/req_1')).toBe(
      '/api/notify/status/:requestId {"requestId":"req_1"}',
    );
    expect(answered('GET', '/api/notify/status/a%2Fb')).toBe(
      '/api/notify/status/:requestId {"requestId":"a/b"}',
    );
    expect(answered('GET', '/api/notify/status/%zz')).toBe(
      '/api/notify/status/:requestId {"requestId":"%zz"}',
    );
    expect(answered('GET', '/API/notify/status/req_1')).toBeNull();
    expect(answered('GET', '/api/%6Eotify/status/req_1')).toBeNull();
    expect(answered('GET', '/')).toBe('/ {}');
    expect(answered('GET', '/inbox/')).toBeNull();
  });

  it('refuses empty and dot segments as parameters', () => {
    expect(answered('GET', '/api/notify/status/')).toBeNull();
    expect(answered('GET', '/api/notify/status/..')).toBeNull();
    expect(answered('GET', '/api/notify/status/%2e')).toBeNull();
    expect(answered('POST', '/inbox/api/messages//click')).toBeNull();
  });

  it('answers 405 with the methods a path is served with', () => {
    expect(answered('GET', '/api/notify')).toBe('405 POST');
    expect(answered('DELETE', '/inbox/api/messages/m1/click')).toBe('405 POST');
    expect(answered('POST', '/api/notify/status/req_1')).toBe('405 GET, HEAD');
  });

  it('routes a HEAD as a GET, and never to a route of another method', () => {
    expect(answered('HEAD', '/api/notify/status/req_1')).toBe(
      '/api/notify/status/:requestId {"requestId":"req_1"}',
    );
    expect(answered('HEAD', '/openapi.json')).toBe('/openapi.json {}');
    expect(answered('HEAD', '/api/notify')).toBe('405 POST');
  });

  it('answers as the plain rules do for any path', () => {
    const segment = fc.oneof(
      fc.constantFrom('api', 'notify', 'status', 'inbox', 'messages', 'click', 'a', 'openapi.json'),
      fc.constantFrom('', '.', '..', '%2e', '%2E%2e', '%', '%zz', 'req_1', 'x%2Fy'),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'),
        fc.array(segment, { minLength: 1, maxLength: 6 }),
        (method, segments) => {
          const path = `/${segments.join('/')}`;
          expect(answered(method, path)).toBe(expected(method, path));
        },
      ),
      { numRuns: 5_000 },
    );
  });
});
