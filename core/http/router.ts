import { errorResponse } from './responses.js';
import type { HttpResponse, Route } from './types.js';

/** A route matched by method and path, or the 405 answer for a path served with other methods. */
export type RouteMatch =
  | { route: Route; params: Readonly<Record<string, string>> }
  | { refusal: HttpResponse };

interface CompiledRoute {
  route: Route;
  segments: string[];
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What a route without parameters matches with; never written to. */
const noParams: Readonly<Record<string, string>> = Object.freeze({});

/** The parameters of `actual` under `pattern`, or null when it does not match; built only for a match. */
function matchSegments(
  pattern: readonly string[],
  actual: readonly string[],
): Readonly<Record<string, string>> | null {
  if (pattern.length !== actual.length) return null;
  for (let index = 0; index < pattern.length; index += 1) {
    const segment = pattern[index] ?? '';
    if (!segment.startsWith(':') && segment !== actual[index]) return null;
  }
  let params: Record<string, string> | null = null;
  for (let index = 0; index < pattern.length; index += 1) {
    const segment = pattern[index] ?? '';
    if (!segment.startsWith(':')) continue;
    const decoded = decodeSegment(actual[index] ?? '');
    // A dot segment is a step in the path, which a proxy in front may resolve: never a value.
    if (decoded === '' || decoded === '.' || decoded === '..') return null;
    params ??= {};
    params[segment.slice(1)] = decoded;
  }
  return params ?? noParams;
}

/** The segments of a path that starts with `/`, every one kept: `/a//b/` is `a`, ``, `b`, ``. */
const split = (path: string) => path.slice(1).split('/');

/**
 * Finds the route for a method and path; null when no route has that path (the host passes it on).
 * Literal segments match only themselves, byte for byte (no decoding, no dot segments, no empty
 * segments skipped), and a `:name` segment matches one non-empty segment, percent-decoded.
 */
export function createRouter(routes: readonly Route[]): (method: string, path: string) => RouteMatch | null {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: split(route.path) }));
  return (method, path) => {
    const segments = split(path);
    // Built only for a path served with other methods: most requests find their route first.
    let allowed: Set<string> | null = null;
    for (const { route, segments: pattern } of compiled) {
      const params = matchSegments(pattern, segments);
      if (params === null) continue;
      if (route.method === method) return { route, params };
      allowed ??= new Set<string>();
      allowed.add(route.method);
    }
    if (allowed === null) return null;
    const allow = [...allowed].join(', ');
    return {
      refusal: errorResponse(405, `Method ${method} is not allowed here; use ${allow}`, { allow }),
    };
  };
}
